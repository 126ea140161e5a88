#!/usr/bin/env bash
# The scan benchmark: N orphaned fixture dev servers, K held connections to them, and idle
# processes up to TOTAL processes on the machine; then, for R rounds, `pier scan --json
# --sample-ms 0` against `ss -tanp` and `lsof -iTCP -nP`, in a rotating order (paired). Every
# round checks that Pier found all N servers and K connections. Prints medians, the median of
# the per-round ratios, Pier's peak memory, and what one refresh of the tray app costs
# (examples/app_refresh.rs: the same scan plus the history, in one long-lived process).
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
cargo build --release --quiet --locked --bin pier --example app_refresh
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

"$py" - "${tp[*]}" "${ts[*]}" "${tl[*]}" "$procs" "$socks" "$servers" "$conns" "$rounds" "$peak_kb" "$(nproc)" "$app_ms" "${IDLE_KIND:-sleep}" <<'PY'
import statistics as st, sys
p, s, l = ([int(x) / 1000 for x in a.split()] for a in sys.argv[1:4])
procs, socks, n, k, rounds, peak, cores, app, idle = sys.argv[4:13]
med = st.median
print(f"machine: {cores} cores, {procs} processes ({idle} idle), {socks} TCP sockets; "
      f"{n} servers, {k} connections; {rounds} paired rounds, all checked")
print(f"pier scan --json --sample-ms 0 : median {med(p):7.1f} ms   peak RSS {int(peak) / 1024:.1f} MB")
print(f"ss -tanp                       : median {med(s):7.1f} ms   pier/ss   = {med(a / b for a, b in zip(p, s)):.2f}")
print(f"lsof -iTCP -nP                 : median {med(l):7.1f} ms   pier/lsof = {med(a / b for a, b in zip(p, l)):.2f}")
print(f"app refresh (scan + history)   : median {float(app):7.1f} ms   app/cli   = {float(app) / med(p):.2f}")
PY
