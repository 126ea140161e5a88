#!/usr/bin/env bash
# Idle cost of the tray app: RSS and average CPU over a window (default 60 s) with N fixture dev
# servers (default 20) running, at the default refresh period, beside the bare tao + tray-icon
# app (crates/app/examples/bare_tray.rs) measured the same way over the same window.
#   bench/app-idle.sh [SECONDS] [SERVERS]
# Runs inside scripts/headless.sh (Xvfb, D-Bus, status-notifier-watcher). Release builds.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
servers=${2:-20}
if [ "${PIER_BENCH_INNER:-}" != 1 ]; then
  cargo build --release --quiet --locked --workspace --bins && cargo build --release --quiet --locked -p pier-app --example bare_tray
  PIER_BENCH_INNER=1 exec scripts/headless.sh "$0" "$secs" "$servers"
fi

work=$(mktemp -d)
. scripts/lib.sh
trap end_all EXIT

for i in $(seq "$servers"); do
  fixture "p$i" package.json node_modules/.bin/vite
done

PIER_STATE_DIR="$work/state" target/release/pier app --under "$work" >/dev/null 2>&1 &
pier=$!
kids+=("$pier")
target/release/examples/bare_tray >/dev/null 2>&1 &
bare=$!
kids+=("$bare")
registered() {
  gdbus call --session -d org.kde.StatusNotifierWatcher -o /StatusNotifierWatcher \
    -m org.freedesktop.DBus.Properties.Get org.kde.StatusNotifierWatcher \
    RegisteredStatusNotifierItems | grep -o "':[0-9.]*" | wc -l | grep -x 2 >/dev/null
}
wait_until "both tray items" registered
sleep 2 # past start-up and the first scan: the window measures the idle state only

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
hz=$(getconf CLK_TCK)
p0=$(ticks "$pier"); b0=$(ticks "$bare"); t0=$(date +%s.%N)
sleep "$secs" # the measured window itself
p1=$(ticks "$pier"); b1=$(ticks "$bare"); t1=$(date +%s.%N)

awk -v p=$((p1 - p0)) -v b=$((b1 - b0)) -v hz="$hz" -v t0="$t0" -v t1="$t1" \
  -v prss="$(rss_kb "$pier")" -v brss="$(rss_kb "$bare")" -v n="$servers" '
  BEGIN {
    wall = t1 - t0
    pc = 100 * p / hz / wall; bc = 100 * b / hz / wall
    printf "window %.1f s, %d fixture servers, default refresh (30 s)\n", wall, n
    printf "%-10s %10s %14s\n", "", "RSS (MB)", "CPU (% core)"
    printf "%-10s %10.1f %14.3f\n", "pier app", prss / 1024, pc
    printf "%-10s %10.1f %14.3f\n", "bare tray", brss / 1024, bc
    printf "pier - bare: %+.1f MB RSS, %+.3f %% of one core\n", (prss - brss) / 1024, pc - bc
  }'
