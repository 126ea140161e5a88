#!/usr/bin/env bash
# What the automatic-stop scheduler costs when nothing is due (issue 43: "with 20 servers among
# 2,000 processes and nothing due, under 0.2 % of a core on average and no more memory than the
# idle app"). As a normal user (created here, removed at exit) who owns TOTAL processes: N
# orphaned fixture dev servers and TOTAL - N sleepers (bench/idle_procs.py). A rules.toml names
# the servers with idle times no run reaches (nothing is due; every rescan is checked: N cards,
# each `waiting`, no event). In one run, against the same processes:
#  1. crates/core/examples/clock_cost.rs, R paired rounds, with the rules file and without: one
#     `pier watch` rescan (rules read and judged) against one app refresh (SystemEngine::refresh,
#     its sample window, memory, engines, clock, rules, history), in CPU time — the rules' share
#     in one process, to the microsecond;
#  2. two real `pier watch --json --every 5`, with the rules and without, side by side for SECS:
#     CPU per rescan (/proc/PID/stat, whole rescans only) — the rules' share in real processes;
#  3. a real `pier watch --json` at its default `--every 30` for SECS beside the idle tray app
#     (pier-app under scripts/headless.sh: Xvfb, D-Bus, a tray watcher, as the same user, with
#     the same rules; measured once its tray item is registered and its first refresh is done):
#     the watch's % of a core, and both processes' RSS and PSS (averages of 1 s samples) and
#     peak RSS (VmHWM).
# Targets (reported PASS/MISS, never asserted; AUTO_STRICT=1 makes a MISS fail the run): the
# watch at --every 30 under 0.2 % of a core; its average PSS and RSS at most the idle app's.
# PIER_BENCH_PROFILE=dev measures a debug build (quicker to build, slower to run).
# Run as root. Everything it starts is ended by identity.
#   sudo bench/auto.sh [TOTAL] [N] [SECS] [R]     (defaults: 2000 20 180 15)
set -Eeuo pipefail
cd "$(dirname "$0")/.."
total=${1:-2000}
servers=${2:-20}
secs=${3:-180}
rounds=${4:-15}
case "$total$servers$secs$rounds" in *[!0-9]*) echo "usage: bench/auto.sh [TOTAL] [N] [SECS] [R]" >&2; exit 2 ;; esac
[ "$servers" -ge 1 ] && [ "$rounds" -ge 1 ] && [ "$secs" -ge 70 ] && [ "$total" -gt "$servers" ] ||
  { echo "auto.sh: N and R at least 1, SECS at least 70 (two rescans at 30 s), TOTAL above N" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "auto.sh: run as root (it creates the benchmark's user)" >&2; exit 2; }
profile=${PIER_BENCH_PROFILE:-release}
case "$profile" in release) built=release; flag=(--release) ;; dev) built=debug; flag=() ;;
  *) echo "auto.sh: PIER_BENCH_PROFILE is release or dev" >&2; exit 2 ;; esac
cargo build "${flag[@]}" --quiet --locked --workspace --bins
cargo build "${flag[@]}" --quiet --locked -p pier-core --features cli --example clock_cost
out=${CARGO_TARGET_DIR:-target}/$built

work=$(mktemp -d)
chmod 755 "$work"
. scripts/lib.sh
user=pierauto$$
useradd --no-create-home --user-group --shell /usr/sbin/nologin "$user"
trap 'trap - ERR; end_all; drop_user' EXIT
trap 'echo "auto.sh: line $LINENO failed (exit $?)" >&2' ERR
# env by its full path and a PATH without /root in it: no lookup that user cannot make.
as=(setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups
  "$(PATH=/usr/bin:/bin command -v env)" HOME="$work/home" XDG_RUNTIME_DIR="$work/home/run"
  PATH=/usr/local/bin:/usr/bin:/bin)
py=
for cand in "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null)" \
  /usr/bin/python3 /usr/local/bin/python3; do
  if [ -n "$cand" ] && "${as[@]}" "$cand" -c '' 2>/dev/null; then py=$cand; break; fi
done
[ -n "$py" ] || { echo "auto.sh: no python3 that $user can run" >&2; exit 1; }

mkdir -p "$work/bin" "$work/home/run" "$work/run/reports" "$work/rules" "$work/none" "$work/out"
cp "$out/pier" "$out/pier-app" "$out/examples/clock_cost" bench/idle_procs.py scripts/headless.sh \
  scripts/lib.sh "$work/bin/"
{ echo "#!$py"; cat tests/fixtures/devserver.py; } >"$work/bin/vite"
chmod 755 "$work/bin/"*
dir=$work/run
# Two rules the servers match, neither reachable in a run: nothing is due, all is judged.
cat >"$work/rules/rules.toml" <<EOF
[[rule]]
name = "idle a day"
idle = "24 h"
under = ["$dir"]

[[rule]]
name = "idle 2 h under pressure"
idle = "2 h"
pressure = true
under = ["$dir"]
EOF
for i in $(seq "$servers"); do
  mkdir -p "$dir/s$i/node_modules/.bin"
  echo '{}' >"$dir/s$i/package.json"
  cp "$work/bin/vite" "$dir/s$i/node_modules/.bin/vite"
done
for s in state-rules state-none state-watch5 state-plain5 state-watch30 state-app; do mkdir -p "$work/$s"; done
chmod 700 "$work/home/run" # the user's runtime folder (the tray icon's files)
chown -R "$user:" "$work"/{home,run,rules,none,out} "$work"/state-*

# The user's sleepers: the machine's count now plus TOTAL - N (each ends with its parent).
target=$(($(ls -d /proc/[0-9]* | wc -l) + total - servers))
start_sleepers "${as[@]}" "$py" "$work/bin/idle_procs.py" "$target" "$work/out/idle.ready"
for i in $(seq "$servers"); do
  (cd "$dir/s$i" && "${as[@]}" setsid -f ./node_modules/.bin/vite \
    --report "$dir/reports/s$i.json" </dev/null >/dev/null 2>&1)
done
await_servers "$dir" s "$servers"
owned=$(ps -u "$user" --no-headers | wc -l)
procs=$(ls -d /proc/[0-9]* | wc -l)

# 1. In one process each: the rescan and the refresh, with the rules and without.
for c in rules none; do
  "${as[@]}" PIER_STATE_DIR="$work/state-$c" PIER_CONFIG_DIR="$work/$c" \
    "$work/bin/clock_cost" "$rounds" >"$work/out/cost-$c"
done

# watch NAME CONFIG EVERY: a `pier watch --json` as the user, in the background; its pid in $!.
# Each in a runtime folder of its own: one scheduler per folder acts (the scheduler lock).
watch() {
  "${as[@]}" install -d -m 700 "$work/home/run-$1"
  "${as[@]}" PIER_STATE_DIR="$work/state-$1" PIER_CONFIG_DIR="$work/$2" \
    XDG_RUNTIME_DIR="$work/home/run-$1" "$work/bin/pier" watch --json --every "$3" >"$work/out/$1.jsonl" 2>"$work/out/$1.err" &
  kids+=($!)
}
# 2. With the rules and without, side by side, at --every 5.
watch watch5 rules 5
w5=$!
watch plain5 none 5
p5=$!
"$py" bench/proc_window.py "$secs" "watch5=$w5:$work/out/watch5.jsonl" \
  "plain5=$p5:$work/out/plain5.jsonl" >"$work/out/every5.json"
kill "$w5" "$p5"

# 3. The idle app (settled: its tray item registered, its first refresh's CPU spent), then
# pier watch at its default period beside it.
"${as[@]}" PIER_STATE_DIR="$work/state-app" PIER_CONFIG_DIR="$work/rules" \
  "$work/bin/headless.sh" sh -c 'echo $$ >"$1"; exec "$2"' sh "$work/out/app.pid" \
  "$work/bin/pier-app" >"$work/out/app.log" 2>&1 &
kids+=($!)
wait_until "the app's start" test -s "$work/out/app.pid"
app=$(cat "$work/out/app.pid")
kids=("$app" "${kids[@]}") # ended first: headless.sh then ends its Xvfb and bus
# Settled: two 2 s spans in a row without one CPU tick of the app (its start and first
# refresh done; the refresh's sample window is 500 ms).
quiet() {
  local a
  [ -e "/proc/$app/stat" ] || { cat "$work/out/app.log" >&2; echo "auto.sh: the app ended" >&2; exit 1; }
  a=$(awk '{print $14 + $15}' "/proc/$app/stat")
  sleep 2 # a span measured, not a wait for an event
  [ "$a" = "$(awk '{print $14 + $15}' "/proc/$app/stat")" ]
}
calm=0
for _ in $(seq 30); do
  if quiet; then calm=$((calm + 1)); else calm=0; fi
  [ "$calm" -lt 2 ] || break
done
[ "$calm" -ge 2 ] || { echo "auto.sh: the app did not settle within 60 s" >&2; exit 1; }
watch watch30 rules 30
w30=$!
"$py" bench/proc_window.py "$secs" "watch30=$w30:$work/out/watch30.jsonl" "app=$app" \
  >"$work/out/every30.json"
kill "$w30"

"$py" - "$work/out" "$servers" "$rounds" "$owned" "$procs" "$(nproc)" "$user" "$profile" \
  "${AUTO_STRICT:-0}" <<'PY'
import json, sys
out, n, rounds, owned, procs, cores, who, profile, strict = sys.argv[1:10]
n = int(n)

def cost(name):
    f = {l.split()[0]: l.split()[1:] for l in open(f"{out}/cost-{name}") if l.strip()}
    if f["resources"][:2] != [str(n)] * 2:
        sys.exit(f"auto.sh: clock_cost ({name}) found {f['resources']}, not {n}")
    return [float(x) for x in f["cpu_ms"]]

def checked(name, rules):
    """Every rescan saw the N servers, each judged `waiting` (rules) or not judged; no event."""
    lines = [json.loads(l) for l in open(f"{out}/{name}.jsonl")]
    for l in lines:
        if l["event"] != "rescan":
            sys.exit(f"auto.sh: {name}: an event while nothing is due: {l}")
        mine = l["resources"]  # the user's only projects are the servers'
        states = {(r["auto"] or {}).get("state") for r in mine}
        if len(mine) != n or states != ({"waiting"} if rules else {None}):
            sys.exit(f"auto.sh: {name}: a rescan saw {len(mine)} servers, judged {states}")
    return len(lines)

with_rules, without = cost("rules"), cost("none")
e5 = json.load(open(f"{out}/every5.json"))
e30 = json.load(open(f"{out}/every30.json"))
for name, rules in (("watch5", True), ("plain5", False), ("watch30", True)):
    checked(name, rules)
per = lambda w: 1e3 * w["cpu_s"] / w["rescans"]
core = lambda w: 100 * w["cpu_s"] / w["wall_s"]
w5, p5, w30, app = e5["watch5"], e5["plain5"], e30["watch30"], e30["app"]
mb = lambda kb: kb / 1024
print(f"as {who} ({profile} build): {cores} cores, {procs} processes, {owned} of them {who}'s "
      f"({n} fixture servers, the rest sleepers); rules.toml: 2 rules, nothing due (checked)")
print(f"1. in one process, CPU median of {rounds} rounds:")
print(f"   watch rescan with rules {with_rules[0]:7.2f} ms, without {without[0]:7.2f} ms "
      f"(the rules: {with_rules[0] - without[0]:+.2f} ms, "
      f"{100 * (with_rules[0] - without[0]) / with_rules[0]:+.1f} %)")
print(f"   app refresh (with rules)  {with_rules[1]:7.2f} ms; rescan/refresh = "
      f"{with_rules[0] / with_rules[1]:.2f}")
print(f"2. pier watch --every 5 over {w5['wall_s']:.0f} s, side by side:")
print(f"   with rules    {per(w5):6.1f} ms CPU per rescan ({w5['rescans']} rescans), "
      f"{core(w5):.3f} % of a core -> at 30 s {per(w5) / 300:.3f} %")
print(f"   without rules {per(p5):6.1f} ms CPU per rescan ({p5['rescans']} rescans), "
      f"{core(p5):.3f} % of a core -> at 30 s {per(p5) / 300:.3f} %")
print(f"   the rules' share: {per(w5) - per(p5):+.1f} ms per rescan "
      f"({100 * (per(w5) - per(p5)) / per(w5):+.1f} %)")
print(f"   watch rescan / app refresh (CPU): {per(w5) / with_rules[1]:.2f}")
ok_cpu = core(w30) < 0.2
print(f"3. pier watch --every 30 (default) over {w30['wall_s']:.0f} s ({w30['rescans']} rescans), "
      f"beside the idle app over {app['wall_s']:.0f} s:")
print(f"   watch CPU {core(w30):.3f} % of a core ({per(w30):.1f} ms per rescan) "
      f"(target < 0.2) {'PASS' if ok_cpu else 'MISS'}; the idle app {core(app):.3f} %")
ratios = {k: w30[k] / app[k] for k in ("pss_kb", "rss_kb")}
ok_mem = max(ratios.values()) <= 1.0
for k, label in (("pss_kb", "PSS avg"), ("rss_kb", "RSS avg"), ("hwm_kb", "RSS peak")):
    print(f"   {label:<8}: watch {mb(w30[k]):6.1f} MB, idle app {mb(app[k]):6.1f} MB, "
          f"watch/app {w30[k] / app[k]:.2f}")
print(f"   watch memory / idle app (PSS, RSS averages) = {ratios['pss_kb']:.2f}, "
      f"{ratios['rss_kb']:.2f} (target <= 1.0) {'PASS' if ok_mem else 'MISS'}")
if strict == "1" and not (ok_cpu and ok_mem):
    sys.exit("auto.sh: a target was missed (AUTO_STRICT=1)")
PY
