#!/usr/bin/env bash
# The scan benchmark, run as root and as a normal user (created here, removed at exit), as Pier's
# users run it. Idle processes up to TOTAL processes on the machine, all root's (bench/
# idle_procs.py: root's own in the root run, another user's in the user's run). Then, for each
# of the two, N orphaned fixture dev servers and K held connections to them, started as that
# one, and for R rounds `pier scan --json --sample-ms 0` against `ss -tanp` and `lsof -iTCP -nP`,
# all three run by that one, in a rotating order (paired). Every round checks that Pier found all
# N servers and K connections. Prints medians, the median of the per-round ratios, Pier's peak
# memory, what one refresh of the tray app costs (crates/core/examples/app_refresh.rs: the
# same scan plus the history, in one long-lived process), and what reading the members' memory
# costs a scan (crates/core/examples/memory_cost.rs: paired scans with and without it, unsampled
# and sampled over 100 ms; the medians of their ratios).
# Then the stop path at the same scale: STOPS (default 10) more servers with no connection, and
# one `pier stop --all-green` over them all, checked to stop exactly those.
# Targets (reported PASS/MISS, not asserted; SCAN_STRICT=1 makes a MISS fail the run): pier/ss
# <= 0.6 as root, <= 0.8 as the user; peak memory < 20 MB.
# Everything it starts is ended by identity.
#   bench/scan.sh [TOTAL] [N] [K] [R]     (defaults: 2000 60 200 15)
# SCAN_AS="root user" (the default) picks the runs; run as another user than root, there is
# one run, as that user. IDLE_KIND=python makes the idle processes python3 interpreters
# instead, whose argv a scan may have to read.
# PIER_BASE=BIN (an earlier pier) scans beside pier every round, checked alike: new/base <= 1.05.
set -Eeuo pipefail
cd "$(dirname "$0")/.."
total=${1:-2000}
servers=${2:-60}
conns=${3:-200}
rounds=${4:-15}
case "$total$servers$conns$rounds" in *[!0-9]*) echo "usage: bench/scan.sh [TOTAL] [N] [K] [R]" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] && [ "$servers" -ge 1 ] || { echo "scan.sh: N and R must be at least 1" >&2; exit 2; }
base=${PIER_BASE:-}
[ -z "$base" ] || [ -x "$base" ] || { echo "scan.sh: PIER_BASE=$base is not an executable file" >&2; exit 2; }
cargo build --release --quiet --locked --bin pier &&
  cargo build --release --quiet --locked -p pier-core --example app_refresh --example memory_cost

work=$(mktemp -d)
chmod 755 "$work"
. scripts/lib.sh
user=
trap 'trap - ERR; end_all; drop_user' EXIT
trap 'echo "scan.sh: line $LINENO failed (exit $?)" >&2' ERR

runs=${SCAN_AS:-root user}
if [ "$(id -u)" != 0 ]; then
  runs=self
else
  user=pierscan$$
  useradd --no-create-home --user-group --shell /usr/sbin/nologin "$user"
fi
# What runs as whom: `as_user` prefixes a command with the user (env by its full path and a PATH
# without /root in it: no lookup that user cannot make); run by a normal user, nothing.
as_user=()
[ -z "$user" ] || as_user=(setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")"
  --init-groups "$(PATH=/usr/bin:/bin command -v env)" HOME="$work" PATH=/usr/local/bin:/usr/bin:/bin)
# A python3 everyone here can run (a pyenv shim under /root is not one).
py=
for cand in "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null)" \
  /usr/bin/python3 /usr/local/bin/python3; do
  if [ -n "$cand" ] && ${as_user[@]+"${as_user[@]}"} "$cand" -c '' 2>/dev/null; then py=$cand; break; fi
done
[ -n "$py" ] || { echo "scan.sh: no python3 that ${user:-this user} can run" >&2; exit 1; }

mkdir -p "$work/bin"
cp target/release/pier target/release/examples/app_refresh target/release/examples/memory_cost \
  bench/clients.py "$work/bin/"
{ echo "#!$py"; cat tests/fixtures/devserver.py; } >"$work/bin/vite"
chmod 755 "$work/bin/"*
if [ -n "$base" ]; then
  mkdir -p "$work/base"
  cp "$base" "$work/base/pier"
  chmod 755 "$work/base" "$work/base/pier"
fi

start_sleepers "$py" bench/idle_procs.py "$total" "$work/idle.ready"

now_us() { echo $(($(date +%s%N) / 1000)); }

# launch TAG N (inside `bench`): N fixture servers $dir/TAG1 … $dir/TAGN, each its own project,
# started as orphans (setsid -f) as `bench`'s WHO; waits for each report and remembers each
# fixture for the clean-up by identity.
launch() {
  local tag=$1 n=$2 i
  for i in $(seq "$n"); do
    mkdir -p "$dir/$tag$i/node_modules/.bin"
    echo '{}' >"$dir/$tag$i/package.json"
    cp "$work/bin/vite" "$dir/$tag$i/node_modules/.bin/vite"
  done
  [ "$who" != user ] || chown -R "$user:" "$dir"
  for i in $(seq "$n"); do
    (cd "$dir/$tag$i" && ${as[@]+"${as[@]}"} setsid -f ./node_modules/.bin/vite \
      --report "$dir/reports/$tag$i.json" </dev/null >/dev/null 2>&1)
  done
  await_servers "$dir" "$tag" "$n"
}

# bench WHO: one run, everything started and measured as WHO (root, user or self), in its own
# folder $work/WHO; its fixtures and clients are ended after it.
bench() {
  local who=$1 dir=$work/$1 as=() i r start end tool ports=() clients
  [ "$who" = user ] && as=("${as_user[@]}")
  mkdir -p "$dir/reports"
  # servers: N fixture dev servers, each its own project, started as orphans (setsid -f).
  launch s "$servers"
  for i in $(seq "$servers"); do
    ports+=("$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$dir/reports/s$i.json")")
  done
  "${as[@]}" "$py" "$work/bin/clients.py" "$conns" "$dir/clients.ready" "${ports[@]}" &
  clients=$!
  kids+=("$clients")
  wait_until "$conns client connections" test -s "$dir/clients.ready"

  local procs socks
  procs=$(ls -d /proc/[0-9]* | wc -l)
  socks=$(($(wc -l </proc/net/tcp) + $(wc -l </proc/net/tcp6) - 2))
  local scan out
  local -a tp=() ts=() tl=() tb=() tools=(pier ss lsof)
  # The baseline opposite pier in the rotation: in four rounds each goes first once, and
  # before the other twice.
  [ -z "$base" ] || tools=(pier ss base lsof)
  for ((r = 0; r < rounds; r++)); do
    for tool in "${tools[@]:r % ${#tools[@]}}" "${tools[@]:0:r % ${#tools[@]}}"; do
      start=$(now_us)
      case $tool in
        pier) "${as[@]}" "$work/bin/pier" scan --json --sample-ms 0 >"$dir/scan.json" ;;
        base) "${as[@]}" "$work/base/pier" scan --json --sample-ms 0 >"$dir/scan-base.json" ;;
        ss) "${as[@]}" ss -tanp >/dev/null ;;
        lsof) "${as[@]}" lsof -iTCP -nP >/dev/null 2>&1 || true ;;
      esac
      end=$(now_us)
      case $tool in
        pier) tp+=($((end - start))) ;;
        ss) ts+=($((end - start))) ;;
        lsof) tl+=($((end - start))) ;;
        base) tb+=($((end - start))) ;;
      esac
    done
    # Pier's answer (and the baseline's) must hold every server and every connection, every round.
    for scan in pier ${base:+base}; do
      out=$dir/scan.json
      [ "$scan" = pier ] || out=$dir/scan-base.json
      "$py" - "$out" "$dir" "$servers" "$conns" "$scan" <<'PY'
import json, sys
doc, dir, n, k = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
ours = [r for p in doc["projects"] if p["path"].startswith(dir + "/") for r in p["resources"]]
live = sum(1 for r in ours for c in r["connections"] if not c["internal"])
if len(ours) != n or live != k:
    who = "pier" if sys.argv[5] == "pier" else "the baseline pier (PIER_BASE)"
    sys.exit(f"{who} found {len(ours)} of {n} servers and {live} of {k} connections")
PY
    done
  done
  local peak_kb app_ms mem_cost base_kb=
  peak_kb=$("${as[@]}" /usr/bin/time -f %M "$work/bin/pier" scan --json --sample-ms 0 2>&1 >/dev/null | tail -1)
  [ -z "$base" ] ||
    base_kb=$("${as[@]}" /usr/bin/time -f %M "$work/base/pier" scan --json --sample-ms 0 2>&1 >/dev/null | tail -1)
  mem_cost=$("${as[@]}" "$work/bin/memory_cost" "$rounds")
  mkdir -p "$dir/state"
  [ "$who" != user ] || chown "$user:" "$dir/state"
  app_ms=$("${as[@]}" env PIER_STATE_DIR="$dir/state" "$work/bin/app_refresh" "$rounds")

  # The stop path at the same scale: STOPS more servers with no connection (green), then one
  # `pier stop --all-green --under $dir`, as "Clean up safely" runs it. It must stop exactly
  # those, and leave every server with a connection (red) running.
  local stops=${STOPS:-10}
  launch g "$stops"
  "${as[@]}" env PIER_STATE_DIR="$dir/state" /usr/bin/time -f "%e %M" "$work/bin/pier" stop --json \
    --all-green --under "$dir" 2>"$dir/stop.time" >"$dir/stop.json" || true
  "$py" - "$dir" "$servers" "$stops" <<'PY'
import json, os, sys
dir, n, g = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
results = json.load(open(f"{dir}/stop.json"))["results"]
def runs(name):
    r = json.load(open(f"{dir}/reports/{name}.json"))
    try:
        stat = open(f"/proc/{r['pid']}/stat", "rb").read()
    except OSError:
        return False
    fields = stat[stat.rindex(b")") + 2:].split()
    return int(fields[19]) == r["start_time"] and fields[0] not in (b"Z", b"X")
stopped = [r for r in results if r["result"] == "stopped"]
red_gone = [i for i in range(1, n + 1) if not runs(f"s{i}")]
green_left = [i for i in range(1, g + 1) if runs(f"g{i}")]
if len(results) != g or len(stopped) != g or red_gone or green_left:
    sys.exit(f"stop at scale: {len(stopped)} of {g} stopped ({len(results)} results), "
             f"servers with a connection gone: {red_gone}, green left running: {green_left}")
PY

  local name=$who runner=$who
  [ "$who" != user ] || { name="a normal user ($user)"; runner=$user; }
  [ "$who" != self ] || { name="$(id -un) (not root)"; runner=$(id -un); }
  target=0.8
  [ "$who" != root ] || target=0.6
  "$py" - "${tp[*]}" "${ts[*]}" "${tl[*]}" "$procs" "$socks" "$servers" "$conns" "$rounds" "$peak_kb" \
    "$(nproc)" "$app_ms" "${IDLE_KIND:-sleep}" "$dir" "$stops" "$name" "$target" "${SCAN_STRICT:-0}" "$runner" \
    "$mem_cost" "${tb[*]}" "$base_kb" <<'PY'
import json, statistics as st, sys
p, s, l, b = ([int(x) / 1000 for x in a.split()] for a in sys.argv[1:4] + sys.argv[20:21])
base_peak = sys.argv[21]
procs, socks, n, k, rounds, peak, cores, app, idle, dir, stops, who, target, strict, runner = sys.argv[4:19]
members, mem_with, mem_without, mem_ratio, sam_with, sam_without, sam_ratio = sys.argv[19].split()
med = st.median
ratio = med(a / b for a, b in zip(p, s))
ok = ratio <= float(target) and int(peak) < 20 * 1024
base_ratio = med(a / c for a, c in zip(p, b)) if b else None
ok_base = base_ratio is None or base_ratio <= 1.05
print(f"as {who}: {cores} cores, {procs} processes ({idle} idle, root's), {socks} TCP sockets; "
      f"{n} servers, {k} connections, started as {runner}; {rounds} paired rounds, all checked")
print(f"  pier scan --json --sample-ms 0 : median {med(p):7.1f} ms   peak RSS {int(peak) / 1024:.1f} MB")
if b:
    print(f"  the same by PIER_BASE (before) : median {med(b):7.1f} ms   peak RSS {int(base_peak) / 1024:.1f} MB"
          f"   new/base  = {base_ratio:.2f} (target <= 1.05) {'PASS' if ok_base else 'MISS'}")
print(f"  ss -tanp                       : median {med(s):7.1f} ms   pier/ss   = {ratio:.2f} "
      f"(target <= {target}, peak < 20 MB) {'PASS' if ok else 'MISS'}")
print(f"  lsof -iTCP -nP                 : median {med(l):7.1f} ms   pier/lsof = {med(a / b for a, b in zip(p, l)):.2f}")
print(f"  app refresh (scan + history)   : median {float(app):7.1f} ms   app/cli   = {float(app) / med(p):.2f}")
print(f"  scan with / without memory read : median {float(mem_with):7.1f} / {float(mem_without):.1f} ms   "
      f"with/without = {float(mem_ratio):.2f} unsampled; sampled over 100 ms {float(sam_with):.1f} / "
      f"{float(sam_without):.1f} ms = {float(sam_ratio):.2f} ({members} members read, {rounds} paired rounds each)")
wall, rss = open(f"{dir}/stop.time").read().split()[-2:]
timings = [r["timings"] for r in json.load(open(f"{dir}/stop.json"))["results"]]
first = [t["a_to_first_signal_ms"] for t in timings]
print(f"  pier stop --all-green ({stops} green, {n} red untouched, checked): {float(wall):.2f} s in all, "
      f"{float(wall) * 1000 / int(stops):.0f} ms per resource; check (a) -> first SIGTERM median "
      f"{med(first):.0f} ms, max {max(first):.0f} ms (window {timings[0]['sample_ms']} ms); "
      f"peak RSS {int(rss) / 1024:.1f} MB")
if strict == "1" and not (ok and ok_base):
    sys.exit(f"scan.sh: the target as {who} was missed (SCAN_STRICT=1)")
PY
  kill "$clients" 2>/dev/null || true
  kill_fixtures
  fixture_pids=()
}

for who in $runs; do
  case $who in
    root | user | self) bench "$who" ;;
    *) echo "scan.sh: SCAN_AS takes root and user, not $who" >&2; exit 2 ;;
  esac
done
