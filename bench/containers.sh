#!/usr/bin/env bash
# The containers benchmark, beside a private Docker daemon (run it as root through
# scripts/docker.sh, which starts one and names it in PIER_DOCKER_HOST):
#   scripts/docker.sh bench/containers.sh [N] [R]     (defaults: 3 containers, 9 rounds)
# N idle containers (busybox sh trapping SIGTERM, httpd beside it) published on loopback ports,
# as Compose services of a project in a temporary folder. For R rounds, each paired with its
# reference, run in a rotating order:
# - `pier scan --json --sample-ms 0` against `docker ps` (the engine's own list);
# - `pier scan --json` (sampled: the containers' CPU by their engine's statistics) against
#   `docker stats --no-stream` (the engine's own reading of the same containers);
# then one container stopped by `pier stop` against one stopped by `docker stop` (the same
# image and command), R times each, every `pier stop` checked to have stopped it. Prints the
# medians and the median of the per-round ratios; asserts nothing.
set -Eeuo pipefail
cd "$(dirname "$0")/.."
n=${1:-3}
rounds=${2:-9}
case "$n$rounds" in *[!0-9]*) echo "usage: bench/containers.sh [N] [R]" >&2; exit 2 ;; esac
host=${PIER_DOCKER_HOST:?run through scripts/docker.sh, as root}
cargo build --release --quiet --locked --bin pier
pier=$PWD/target/release/pier
work=$(mktemp -d)
names=()
cleanup() {
  set +e
  for c in "${names[@]}"; do docker -H "$host" rm -f "$c" >/dev/null 2>&1; done
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/shop" "$work/state"
echo '{}' >"$work/shop/package.json"
export DOCKER_HOST=$host PIER_STATE_DIR=$work/state NO_COLOR=1

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
polite() { # polite NAME: an idle container that ends on SIGTERM
  names+=("$1")
  docker run -d --name "$1" --label com.docker.compose.project=bench \
    --label "com.docker.compose.project.working_dir=$work/shop" \
    -p "127.0.0.1:$(free_port):8080" pier-busybox:test busybox sh -c \
    "trap 'exit 0' TERM; busybox httpd -f -p 8080 & wait" >/dev/null 2>&1
}
ms() { # ms COMMAND...: wall time in ms, output discarded
  local t0 t1
  t0=$(date +%s%N)
  "$@" >/dev/null 2>&1
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000))
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}'; }

for i in $(seq "$n"); do polite "bench-c$i"; done
# Each run sees every container before anything is measured.
for _ in $(seq 100); do
  found=$("$pier" scan --json --sample-ms 0 --under "$work" | python3 -c 'import json,sys; print(sum(len(p["containers"]) for p in json.load(sys.stdin)["projects"]))')
  [ "$found" = "$n" ] && break
  sleep 0.1
done
[ "$found" = "$n" ] || { echo "containers.sh: pier saw $found of $n containers" >&2; exit 1; }

compare() { # compare LABEL "PIER COMMAND" "REFERENCE COMMAND"
  local label=$1 a b ours=() refs=() ratios=()
  for r in $(seq "$rounds"); do
    if [ $((r % 2)) = 0 ]; then
      a=$(ms bash -c "$2"); b=$(ms bash -c "$3")
    else
      b=$(ms bash -c "$3"); a=$(ms bash -c "$2")
    fi
    ours+=("$a"); refs+=("$b"); ratios+=("$(ratio "$a" "$b")")
  done
  printf '%-44s pier %6s ms   reference %6s ms   ratio %s\n' "$label" \
    "$(printf '%s\n' "${ours[@]}" | median)" "$(printf '%s\n' "${refs[@]}" | median)" \
    "$(printf '%s\n' "${ratios[@]}" | median)"
}

echo "$n idle published containers, $rounds rounds each (medians)"
compare "scan --sample-ms 0 vs docker ps" \
  "$pier scan --json --sample-ms 0 --under $work" "docker ps"
compare "scan (sampled) vs docker stats --no-stream" \
  "$pier scan --json --under $work" "docker stats --no-stream ${names[*]}"

stops=() refs=() ratios=() firsts=()
for r in $(seq "$rounds"); do
  polite "bench-p$r"; polite "bench-d$r"
  id=""
  for _ in $(seq 100); do
    id=$("$pier" scan --json --sample-ms 0 --under "$work" | python3 -c "
import json,sys
for p in json.load(sys.stdin)['projects']:
    for c in p['containers']:
        if c['name'] == 'bench-p$r' and c['level'] == 'green': print(c['id'])")
    [ -n "$id" ] && break
    sleep 0.1
  done
  [ -n "$id" ] || { echo "containers.sh: no green card for bench-p$r" >&2; exit 1; }
  t0=$(date +%s%N)
  "$pier" stop --json "$id" >"$work/stop.json" || true
  t1=$(date +%s%N)
  python3 -c "
import json,sys
r = json.load(open('$work/stop.json'))['results'][0]
assert r['result'] == 'stopped', r
print(round(r['timings']['a_to_first_signal_ms']))" >"$work/first" ||
    { echo "containers.sh: pier stop did not stop bench-p$r" >&2; exit 1; }
  a=$(((t1 - t0) / 1000000))
  b=$(ms docker stop "bench-d$r")
  stops+=("$a"); refs+=("$b"); ratios+=("$(ratio "$a" "$b")"); firsts+=("$(cat "$work/first")")
done
printf '%-44s pier %6s ms   reference %6s ms   ratio %s\n' "stop one container vs docker stop" \
  "$(printf '%s\n' "${stops[@]}" | median)" "$(printf '%s\n' "${refs[@]}" | median)" \
  "$(printf '%s\n' "${ratios[@]}" | median)"
echo "pier stop: first check to the signal, median $(printf '%s\n' "${firsts[@]}" | median) ms (at most 2000)"
