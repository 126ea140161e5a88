#!/usr/bin/env bash
# The scan benchmark: N orphaned fixture dev servers, K held connections to them, and idle
# processes up to TOTAL processes on the machine; then, for R rounds, `pier scan --json
# --sample-ms 0` against `ss -tanp` and `lsof -iTCP -nP`, in a rotating order (paired). Every
# round checks that Pier found all N servers and K connections. Prints medians, the median of
# the per-round ratios, Pier's peak memory, and what one refresh of the tray app costs
# (crates/core/examples/app_refresh.rs: the same scan plus the history, in one long-lived process).
# Then the stop path at the same scale: STOPS (default 10) more servers with no connection, and
# one `pier stop --all-green` over them all, checked to stop exactly those.
# Everything it starts is ended by identity.
#   bench/scan.sh [TOTAL] [N] [K] [R]     (defaults: 2000 60 200 15)
# The idle processes run `sleep` in / (see bench/idle_procs.py); IDLE_KIND=python makes them
# python3 interpreters instead, whose argv every scan must read.
set -euo pipefail
cd "$(dirname "$0")/.."
total=${1:-2000}
servers=${2:-60}
conns=${3:-200}
rounds=${4:-15}
cargo build --release --quiet --locked --bin pier && cargo build --release --quiet --locked -p pier-core --example app_refresh
pier=target/release/pier
py=$(command -v python3)

work=$(mktemp -d)
. scripts/lib.sh
trap end_all EXIT

ports=()
for i in $(seq "$servers"); do
  fixture "s$i" package.json node_modules/.bin/vite
  ports+=("$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$work/s$i.json")")
done
"$py" bench/clients.py "$conns" "$work/clients.ready" "${ports[@]}" &
kids+=($!)
wait_until "$conns client connections" test -s "$work/clients.ready"
"$py" bench/idle_procs.py "$total" "$work/idle.ready" &
kids+=($!)
for _ in $(seq 600); do [ -s "$work/idle.ready" ] && break; sleep 0.1; done
test -s "$work/idle.ready" || { echo "scan.sh: the idle processes did not start" >&2; exit 1; }

procs=$(ls -d /proc/[0-9]* | wc -l)
socks=$(($(wc -l </proc/net/tcp) + $(wc -l </proc/net/tcp6) - 2))

# Pier's answer must hold every server and every connection, every round.
check() { # json file
  "$py" - "$1" "$work" "$servers" "$conns" <<'PY'
import json, sys
doc, work, n, k = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
ours = [r for p in doc["projects"] if p["path"].startswith(work) for r in p["resources"]]
live = sum(1 for r in ours for c in r["connections"] if not c["internal"])
if len(ours) != n or live != k:
    sys.exit(f"pier found {len(ours)} of {n} servers and {live} of {k} connections")
PY
}

now_us() { echo $(($(date +%s%N) / 1000)); }
declare -a tp ts tl
for ((r = 0; r < rounds; r++)); do
  for tool in $(printf 'pier\nss\nlsof\n' | tail -n +$((r % 3 + 1)); printf 'pier\nss\nlsof\n' | head -n $((r % 3))); do
    start=$(now_us)
    case $tool in
      pier) "$pier" scan --json --sample-ms 0 >"$work/scan.json" ;;
      ss) ss -tanp >/dev/null ;;
      lsof) lsof -iTCP -nP >/dev/null 2>&1 || true ;;
    esac
    end=$(now_us)
    case $tool in
      pier) tp+=($((end - start))) ;;
      ss) ts+=($((end - start))) ;;
      lsof) tl+=($((end - start))) ;;
    esac
  done
  check "$work/scan.json"
done
peak_kb=$(/usr/bin/time -f %M "$pier" scan --json --sample-ms 0 2>&1 >/dev/null | tail -1)
app_ms=$(PIER_STATE_DIR="$work/state" target/release/examples/app_refresh "$rounds")

# The stop path at the same scale: STOPS more servers with no connection (green), then one
# `pier stop --all-green --under $work`, as "Clean up safely" runs it. It must stop exactly
# those, and leave every server with a connection (red) running.
stops=${STOPS:-10}
for i in $(seq "$stops"); do fixture "g$i" package.json node_modules/.bin/vite; done
PIER_STATE_DIR="$work/state" /usr/bin/time -f "%e %M" "$pier" stop --json --all-green \
  --under "$work" 2>"$work/stop.time" >"$work/stop.json" || true
"$py" - "$work" "$servers" "$stops" <<'PY'
import json, os, sys
work, n, g = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
results = json.load(open(f"{work}/stop.json"))["results"]
def runs(name):
    r = json.load(open(f"{work}/{name}.json"))
    try:
        stat = open(f"/proc/{r['pid']}/stat", "rb").read()
    except OSError:
        return False
    fields = stat[stat.rindex(b")") + 2:].split()
    return int(fields[19]) == r["start_time"] and fields[0] != b"Z"
stopped = [r for r in results if r["result"] == "stopped"]
red_gone = [i for i in range(1, n + 1) if not runs(f"s{i}")]
green_left = [i for i in range(1, g + 1) if runs(f"g{i}")]
if len(results) != g or len(stopped) != g or red_gone or green_left:
    sys.exit(f"stop at scale: {len(stopped)} of {g} stopped ({len(results)} results), "
             f"servers with a connection gone: {red_gone}, green left running: {green_left}")
PY

"$py" - "${tp[*]}" "${ts[*]}" "${tl[*]}" "$procs" "$socks" "$servers" "$conns" "$rounds" "$peak_kb" "$(nproc)" "$app_ms" "${IDLE_KIND:-sleep}" "$work" "$stops" <<'PY'
import json, statistics as st, sys
p, s, l = ([int(x) / 1000 for x in a.split()] for a in sys.argv[1:4])
procs, socks, n, k, rounds, peak, cores, app, idle, work, stops = sys.argv[4:15]
med = st.median
print(f"machine: {cores} cores, {procs} processes ({idle} idle), {socks} TCP sockets; "
      f"{n} servers, {k} connections; {rounds} paired rounds, all checked")
print(f"pier scan --json --sample-ms 0 : median {med(p):7.1f} ms   peak RSS {int(peak) / 1024:.1f} MB")
print(f"ss -tanp                       : median {med(s):7.1f} ms   pier/ss   = {med(a / b for a, b in zip(p, s)):.2f}")
print(f"lsof -iTCP -nP                 : median {med(l):7.1f} ms   pier/lsof = {med(a / b for a, b in zip(p, l)):.2f}")
print(f"app refresh (scan + history)   : median {float(app):7.1f} ms   app/cli   = {float(app) / med(p):.2f}")
wall, rss = open(f"{work}/stop.time").read().split()[-2:]
timings = [r["timings"] for r in json.load(open(f"{work}/stop.json"))["results"]]
first = [t["a_to_first_signal_ms"] for t in timings]
print(f"pier stop --all-green ({stops} green, {n} red untouched, checked): {float(wall):.2f} s in all, "
      f"{float(wall) * 1000 / int(stops):.0f} ms per resource; check (a) -> first SIGTERM median "
      f"{med(first):.0f} ms, max {max(first):.0f} ms (window {timings[0]['sample_ms']} ms); "
      f"peak RSS {int(rss) / 1024:.1f} MB")
PY
