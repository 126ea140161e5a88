#!/usr/bin/env bash
# The idle clock's cost (issue 42): with N servers among TOTAL processes, a rescan of the clock
# as `pier watch` makes it (no sample window, no memory, the clock measured, the arms listed)
# against one refresh of the tray app as it runs (its default sample window, memory, the
# engines asked, the clock inside, the history), and that refresh without the clock (what the
# clock adds to it). crates/core/examples/clock_cost.rs times R paired rounds of the three in
# one long-lived process, in a rotating order, in CPU time (user + system) and wall time.
# Idle processes up to TOTAL processes on the machine (bench/idle_procs.py, root's), then N
# orphaned fixture dev servers, and the benchmark, both as a normal user (created here, removed
# at exit); run as another user than root, as that user. Every round checks that each of the
# three found the N servers (the clock: measured them).
# Target (reported PASS/MISS, not asserted; CLOCK_STRICT=1 makes a MISS fail the run): the
# median of the per-round CPU ratios clock/refresh <= 1.0, as `pier watch --every 30` against
# the app's 30 s refresh.
# Everything it starts is ended by identity.
#   bench/clock.sh [TOTAL] [N] [R]     (defaults: 2000 20 15)
set -Eeuo pipefail
cd "$(dirname "$0")/.."
total=${1:-2000}
servers=${2:-20}
rounds=${3:-15}
case "$total$servers$rounds" in *[!0-9]*) echo "usage: bench/clock.sh [TOTAL] [N] [R]" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] && [ "$servers" -ge 1 ] || { echo "clock.sh: N and R must be at least 1" >&2; exit 2; }
cargo build --release --quiet --locked -p pier-core --features cli --example clock_cost

work=$(mktemp -d)
chmod 755 "$work"
. scripts/lib.sh
user=
trap 'trap - ERR; end_all; drop_user' EXIT
trap 'echo "clock.sh: line $LINENO failed (exit $?)" >&2' ERR

as=()
if [ "$(id -u)" = 0 ]; then
  user=pierclock$$
  useradd --no-create-home --user-group --shell /usr/sbin/nologin "$user"
  # env by its full path and a PATH without /root in it: no lookup that user cannot make.
  as=(setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups
    "$(PATH=/usr/bin:/bin command -v env)" HOME="$work" PATH=/usr/local/bin:/usr/bin:/bin)
fi
# A python3 everyone here can run (a pyenv shim under /root is not one).
py=
for cand in "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null)" \
  /usr/bin/python3 /usr/local/bin/python3; do
  if [ -n "$cand" ] && ${as[@]+"${as[@]}"} "$cand" -c '' 2>/dev/null; then py=$cand; break; fi
done
[ -n "$py" ] || { echo "clock.sh: no python3 that ${user:-this user} can run" >&2; exit 1; }

mkdir -p "$work/bin" "$work/state" "$work/run/reports"
cp "${CARGO_TARGET_DIR:-target}/release/examples/clock_cost" "$work/bin/"
{ echo "#!$py"; cat tests/fixtures/devserver.py; } >"$work/bin/vite"
chmod 755 "$work/bin/"*

start_sleepers "$py" bench/idle_procs.py "$total" "$work/idle.ready"

# N fixture servers $dir/s1 … $dir/sN, each its own project, started as orphans (setsid -f)
# by the benchmark's user; each remembered for the clean-up by identity.
dir=$work/run
for i in $(seq "$servers"); do
  mkdir -p "$dir/s$i/node_modules/.bin"
  echo '{}' >"$dir/s$i/package.json"
  cp "$work/bin/vite" "$dir/s$i/node_modules/.bin/vite"
done
[ -z "$user" ] || chown -R "$user:" "$dir" "$work/state"
for i in $(seq "$servers"); do
  (cd "$dir/s$i" && ${as[@]+"${as[@]}"} setsid -f ./node_modules/.bin/vite \
    --report "$dir/reports/s$i.json" </dev/null >/dev/null 2>&1)
done
await_servers "$dir" s "$servers"

# As the created user, who owns nothing but the servers, everything of the user's is scanned,
# as the app scans by default; as a user of this machine, only the servers' folder.
under=()
[ -n "$user" ] || under=("$dir")
procs=$(ls -d /proc/[0-9]* | wc -l)
${as[@]+"${as[@]}"} env PIER_STATE_DIR="$work/state" "$work/bin/clock_cost" "$rounds" \
  ${under[@]+"${under[@]}"} >"$work/figures"

"$py" - "$work/figures" "$servers" "$rounds" "$procs" "$(nproc)" "${user:-$(id -un)}" \
  "${CLOCK_STRICT:-0}" <<'PY'
import sys
path, n, rounds, procs, cores, who, strict = sys.argv[1:8]
f = {line.split()[0]: line.split()[1:] for line in open(path) if line.strip()}
found = f["resources"]
if found != [n] * 3:
    sys.exit(f"clock.sh: clock, refresh and scan+history found {' '.join(found)} servers, not {n} each")
cpu, wall = ([float(x) for x in f[k]] for k in ("cpu_ms", "wall_ms"))
ratio = float(f["clock/refresh"][0])
ok = ratio <= 1.0
print(f"as {who}: {cores} cores, {procs} processes (idle ones root's), {n} servers started as {who}; "
      f"{rounds} paired rounds in one process, all checked")
rows = [("clock rescan (pier watch: no sample, no memory)", 0),
        (f"app refresh (sample {f['sample_ms'][0]} ms, memory, engines, clock)", 1),
        ("the same refresh without the clock", 2)]
for label, i in rows:
    print(f"  {label:<56}: CPU median {cpu[i]:7.1f} ms   wall {wall[i]:7.1f} ms")
print(f"  clock/refresh (CPU, median of per-round ratios) = {ratio:.2f} (target <= 1.0) "
      f"{'PASS' if ok else 'MISS'}")
print(f"  clock/refresh-without-clock = {float(f['clock/scan+history'][0]):.2f}; "
      f"refresh with/without the clock = {float(f['refresh/scan+history'][0]):.2f} (CPU)")
print(f"  an hour at one every 30 s: the clock {cpu[0] * 120 / 1000:.1f} s CPU, "
      f"the app's refresh {cpu[1] * 120 / 1000:.1f} s CPU")
if strict == "1" and not ok:
    sys.exit("clock.sh: the target was missed (CLOCK_STRICT=1)")
PY
