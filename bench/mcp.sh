#!/usr/bin/env bash
# What an agent waits for its cards (issue 44: "the cards tool's answer time is <= 1.1x the CLI
# scan's in the same run"). As a normal user (created here, removed at exit) who owns IDLE
# sleepers (bench/idle_procs.py) and N orphaned fixture dev servers (each a real listener, its
# own project), in one run and against the same processes, for each sample window W in WINDOWS:
# R paired rounds (bench/mcp_client.py, the order alternating) of
#  - `pier scan --json --sample-ms W`: wall time from the process's start to its exit;
#  - the `cards` tool of one warm `pier mcp --sample-ms W` (started once per window, its
#    handshake done, one answer given before the rounds): from writing the tools/call request to
#    reading its response, by a raw JSON-RPC client over the pipes (no SDK overhead timed).
# Both answers are checked to hold the N servers every round. Prints the medians, the median of
# the per-round ratios cards/scan, and PASS/MISS against the target <= 1.1 (never asserted;
# MCP_STRICT=1 makes a MISS fail the run). PIER_BENCH_PROFILE=dev measures a debug build.
# Run as root. Everything it starts is ended by identity.
#   sudo bench/mcp.sh [IDLE] [N] [R]     (defaults: 300 5 15; WINDOWS="0 500" by default)
set -Eeuo pipefail
cd "$(dirname "$0")/.."
idle=${1:-300}
servers=${2:-5}
rounds=${3:-15}
windows=${WINDOWS:-0 500}
case "$idle$servers$rounds${windows// /}" in *[!0-9]*) echo "usage: [WINDOWS=\"MS...\"] bench/mcp.sh [IDLE] [N] [R]" >&2; exit 2 ;; esac
[ "$servers" -ge 1 ] && [ "$rounds" -ge 1 ] && [ -n "${windows// /}" ] ||
  { echo "mcp.sh: N and R at least 1, and at least one window" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "mcp.sh: run as root (it creates the benchmark's user)" >&2; exit 2; }
profile=${PIER_BENCH_PROFILE:-release}
case "$profile" in release) built=release; flag=(--release) ;; dev) built=debug; flag=() ;;
  *) echo "mcp.sh: PIER_BENCH_PROFILE is release or dev" >&2; exit 2 ;; esac
cargo build "${flag[@]}" --quiet --locked --bin pier
out=${CARGO_TARGET_DIR:-target}/$built
"$out/pier" mcp --help 2>/dev/null | grep -e --sample-ms >/dev/null ||
  { echo "mcp.sh: this pier has no \`pier mcp --sample-ms\`: the cards tool's window cannot be the scan's" >&2; exit 1; }

work=$(mktemp -d)
chmod 755 "$work"
. scripts/lib.sh
user=piermcp$$
useradd --no-create-home --user-group --shell /usr/sbin/nologin "$user"
trap 'trap - ERR; end_all; drop_user' EXIT
trap 'echo "mcp.sh: line $LINENO failed (exit $?)" >&2' ERR
# env by its full path and a PATH without /root in it: no lookup that user cannot make.
as=(setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups
  "$(PATH=/usr/bin:/bin command -v env)" HOME="$work/home" PATH=/usr/local/bin:/usr/bin:/bin
  PIER_STATE_DIR="$work/state" PIER_CONFIG_DIR="$work/config")
py=
for cand in "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null)" \
  /usr/bin/python3 /usr/local/bin/python3; do
  if [ -n "$cand" ] && "${as[@]}" "$cand" -c '' 2>/dev/null; then py=$cand; break; fi
done
[ -n "$py" ] || { echo "mcp.sh: no python3 that $user can run" >&2; exit 1; }

mkdir -p "$work/bin" "$work/home" "$work/state" "$work/config" "$work/run/reports" "$work/out"
cp "$out/pier" bench/idle_procs.py bench/mcp_client.py "$work/bin/"
{ echo "#!$py"; cat tests/fixtures/devserver.py; } >"$work/bin/vite"
chmod 755 "$work/bin/"*
chmod 700 "$work/state"
dir=$work/run
for i in $(seq "$servers"); do
  mkdir -p "$dir/s$i/node_modules/.bin"
  echo '{}' >"$dir/s$i/package.json"
  cp "$work/bin/vite" "$dir/s$i/node_modules/.bin/vite"
done
chown -R "$user:" "$work"/{home,state,config,run,out}

# The user's sleepers: the machine's count now plus IDLE (each ends with its parent).
target=$(($(ls -d /proc/[0-9]* | wc -l) + idle))
start_sleepers "${as[@]}" "$py" "$work/bin/idle_procs.py" "$target" "$work/out/idle.ready"
for i in $(seq "$servers"); do
  (cd "$dir/s$i" && "${as[@]}" setsid -f ./node_modules/.bin/vite \
    --report "$dir/reports/s$i.json" </dev/null >/dev/null 2>&1)
done
await_servers "$dir" s "$servers"
owned=$(ps -u "$user" --no-headers | wc -l)
procs=$(ls -d /proc/[0-9]* | wc -l)

for w in $windows; do
  "${as[@]}" "$py" "$work/bin/mcp_client.py" "$work/bin/pier" "$w" "$rounds" "$dir" "$servers" \
    "$work/out/w$w.json"
done

"$py" - "$work/out" "$windows" "$servers" "$rounds" "$owned" "$procs" "$(nproc)" "$user" "$profile" \
  "${MCP_STRICT:-0}" <<'PY'
import json, statistics as st, sys
out, windows, n, rounds, owned, procs, cores, who, profile, strict = sys.argv[1:11]
print(f"as {who} ({profile} build): {cores} cores, {procs} processes, {owned} of them {who}'s "
      f"({n} fixture servers, the rest sleepers); {rounds} paired rounds a window, every answer "
      f"checked to hold the {n} servers")
ok = True
for w in windows.split():
    doc = json.load(open(f"{out}/w{w}.json"))
    scan, cards = doc["scan_ms"], doc["cards_ms"]
    ratio = st.median(c / s for c, s in zip(cards, scan))
    passed = ratio <= 1.1
    ok = ok and passed
    print(f"  window {w} ms: pier scan --json (start to exit) median {st.median(scan):7.1f} ms, "
          f"cards on a warm pier mcp (request to response) median {st.median(cards):7.1f} ms; "
          f"cards/scan = {ratio:.2f} (target <= 1.1) {'PASS' if passed else 'MISS'}")
if strict == "1" and not ok:
    sys.exit("mcp.sh: a target was missed (MCP_STRICT=1)")
PY
