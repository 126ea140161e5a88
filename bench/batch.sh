#!/usr/bin/env bash
# The batch-stop benchmark. A batch of 1, of 10 and of 50 green fixture servers (orphaned
# tests/fixtures/devserver.py as node_modules/.bin/vite, each its own project), each batch in
# its own folder, each stopped by one `pier stop --json --all-green --under <its folder>`; R
# rounds, fresh servers every round, the three stops in a rotating order (paired). Prints the
# median wall time per batch size and the median of the per-round ratios 10/1 and 50/1.
# Then at scale: idle processes up to TOTAL processes on the machine (bench/idle_procs.py),
# BATCH_RED red servers (default 20), each held by two client connections (bench/clients.py),
# and, for R rounds, 10 fresh green servers beside them, stopped by one `pier stop --all-green`
# over the folder that holds them all (the reds must be left alone, and run on).
# Targets: batch of 10 <= 1.6 x batch of 1; batch of 50 <= 3 x batch of 1; at scale, 10 green
# stopped in < 2.5 s. They are reported (PASS/MISS), not asserted; BATCH_STRICT=1 makes a MISS
# fail the run.
# Every stop is checked against the fixtures' own reports (pid and kernel start time): exactly
# that batch's servers are gone, every other fixture still runs, and every result is "stopped",
# one per server. A mismatch says what differed and exits 1.
# Run as root, it creates a temporary user (removed at exit) and runs Pier, the fixtures and the
# helpers as that user, as Pier's users run it: the idle processes are that user's own too, as
# in bench/scan.sh, so every scan reads each of them in full. Everything it starts is ended by
# identity.
#   bench/batch.sh [ROUNDS] [TOTAL]     (defaults: 5 5000)
# PIER_BASE=BIN (an earlier pier) stops the same batches, fresh, checked alike: new/base <= 1.05.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
total=${2:-5000}
reds=${BATCH_RED:-20}
case "$rounds$total$reds" in *[!0-9]*) echo "usage: bench/batch.sh [ROUNDS] [TOTAL]" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] || { echo "batch.sh: ROUNDS must be at least 1" >&2; exit 2; }
base=${PIER_BASE:-}
[ -z "$base" ] || [ -x "$base" ] || { echo "batch.sh: PIER_BASE=$base is not an executable file" >&2; exit 2; }
cargo build --release --quiet --locked --bin pier

work=$(mktemp -d)
. scripts/lib.sh
user=
trap 'trap - ERR; end_all; drop_user' EXIT
# Any other step that fails says where (a ground-truth check says what differed, and exits).
trap 'echo "batch.sh: line $LINENO failed (exit $?)" >&2' ERR

# Who runs the fixtures, the helpers and Pier: a temporary normal user when run as root.
as=()
if [ "$(id -u)" = 0 ]; then
  user=pierbench$$
  useradd --no-create-home --user-group --shell /usr/sbin/nologin "$user"
  chown "$user:" "$work"
  # env by its full path and a PATH without /root in it: no lookup that user cannot make.
  as=(setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups
    "$(PATH=/usr/bin:/bin command -v env)" HOME="$work" PATH=/usr/local/bin:/usr/bin:/bin)
fi
# A python3 that user can run (a pyenv shim under /root is not one).
py=
for cand in "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null)" \
  /usr/bin/python3 /usr/local/bin/python3; do
  if [ -n "$cand" ] && "${as[@]}" "$cand" -c '' 2>/dev/null; then py=$cand; break; fi
done
[ -n "$py" ] || { echo "batch.sh: no python3 that ${user:-this user} can run" >&2; exit 1; }

mkdir -p "$work/bin" "$work/reports" "$work/out"
cp target/release/pier bench/clients.py bench/idle_procs.py "$work/bin/"
{ echo "#!$py"; cat tests/fixtures/devserver.py; } >"$work/bin/vite"
chmod 755 "$work/bin/pier" "$work/bin/vite"
# The kinds of stop: n by this tree's pier; with PIER_BASE, b by that one too (its own state).
kinds=(n)
if [ -n "$base" ]; then
  kinds=(n b)
  mkdir -p "$work/base"
  cp "$base" "$work/base/pier"
  chmod 755 "$work/base/pier"
fi
[ -z "$user" ] || chown -R "$user:" "$work"
pier=$work/bin/pier
export PIER_STATE_DIR=$work/state

# launch DIR N: N fixture servers, DIR/s1 … DIR/sN, each its own project (a package.json), all
# started as orphans (setsid -f) at once; each reports to $work/reports/<DIR's name>-s<i>.json.
# await DIR N: waits for each of them to report.
launch() {
  local dir=$1 n=$2 i tag
  tag=$(basename "$dir")
  for ((i = 1; i <= n; i++)); do
    mkdir -p "$dir/s$i/node_modules/.bin"
    echo '{}' >"$dir/s$i/package.json"
    cp "$work/bin/vite" "$dir/s$i/node_modules/.bin/vite"
  done
  [ -z "$user" ] || chown -R "$user:" "$dir"
  for ((i = 1; i <= n; i++)); do
    (cd "$dir/s$i" && "${as[@]}" setsid -f ./node_modules/.bin/vite \
      --report "$work/reports/$tag-s$i.json" </dev/null >/dev/null 2>&1)
  done
}
await() {
  local f
  for f in $(reports "$1" "$2"); do wait_until "the fixture of $f" test -s "$f"; done
  remember $(reports "$1" "$2")
}
# reports DIR N: the report files of launch DIR N.
reports() { local i; for ((i = 1; i <= $2; i++)); do echo "$work/reports/$(basename "$1")-s$i.json"; done; }
# remember REPORT...: adds each fixture's "pid start_time" for the clean-up by identity.
remember() {
  local line
  while read -r line; do fixture_pids+=("$line"); done < <("$py" -c '
import json, sys
for f in sys.argv[1:]:
    r = json.load(open(f))
    print(r["pid"], r["start_time"])' "$@")
}

# The ground truth after a stop: check.py STOP_JSON EXIT_CODE STDERR --gone REPORT... --running
# REPORT... --left REPORT... (--left: the servers `left_alone` must name, exactly).
cat >"$work/check.py" <<'PY'
import json, sys
out, rc, err = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lists, key = {"--gone": [], "--running": [], "--left": []}, None
for a in sys.argv[4:]:
    if a in lists:
        key = a
    else:
        lists[key].append(json.load(open(a)))
gone, running, left = lists["--gone"], lists["--running"], lists["--left"]
def runs(r):
    try:
        stat = open(f"/proc/{r['pid']}/stat", "rb").read()
    except OSError:
        return False
    fields = stat[stat.rindex(b")") + 2:].split()
    return int(fields[19]) == r["start_time"] and fields[0] not in (b"Z", b"X")
wrong = []
try:
    doc = json.load(open(out))
    results, left_alone = doc["results"], doc["left_alone"]
except (OSError, ValueError, KeyError, TypeError) as e:
    doc, results, left_alone = None, [], []
    wrong.append(f"no stop document ({e}); stderr: {open(err).read().strip()!r}")
if doc is not None and rc != 0:
    wrong.append(f"pier stop exited with {rc}")
want = {f"{r['pid']}-{r['start_time']}" for r in gone}
got = [r["id"] for r in results]
if len(got) != len(gone) or set(got) != want:
    wrong.append(f"{len(got)} results for {len(gone)} servers; unasked: {sorted(set(got) - want)}, "
                 f"missing: {sorted(want - set(got))}")
for r in results:
    if r["result"] != "stopped":
        wrong.append(f"{r['id']}: {r['result']} at checkpoint {r.get('checkpoint')}: {r['reason']}")
    members = {(m["pid"], m["start_time"]) for m in r.get("members", [])}
    mine = {(g["pid"], g["start_time"]) for g in gone if r["id"] == f"{g['pid']}-{g['start_time']}"}
    if mine and members != mine:
        wrong.append(f"{r['id']}: members {sorted(members)}, the fixture is {sorted(mine)}")
alive = [f"{r['pid']} ({r['cwd']})" for r in gone if runs(r)]
dead = [f"{r['pid']} ({r['cwd']})" for r in running if not runs(r)]
if alive:
    wrong.append(f"still running after the stop: {', '.join(alive)}")
if dead:
    wrong.append(f"gone though not in the batch: {', '.join(dead)}")
named = sorted(a["pid"] for a in left_alone)
if named != sorted(r["pid"] for r in left):
    wrong.append(f"left alone: {[(a['pid'], a['level']) for a in left_alone]}, "
                 f"expected the red servers {sorted(r['pid'] for r in left)}")
wrong += [f"left alone {a['pid']} as {a['level']}, not red" for a in left_alone if a["level"] != "red"]
if wrong:
    sys.exit(f"batch.sh: ground truth, {out}:\n  " + "\n  ".join(wrong))
PY

now_us() { echo $(($(date +%s%N) / 1000)); }
# stop OUT DIR KIND: one `pier stop --json --all-green --under DIR` as the user, by this tree's
# pier (KIND n) or PIER_BASE's (b), its document in OUT, its wall time in µs in $lap, its exit
# code in $rc.
stop() {
  local start end bin=$pier state=$PIER_STATE_DIR
  [ "$3" = n ] || { bin=$work/base/pier; state=$work/state-base; }
  rc=0
  start=$(now_us)
  PIER_STATE_DIR=$state "${as[@]}" "$bin" stop --json --all-green --under "$2" >"$1" 2>"$1.err" || rc=$?
  end=$(now_us)
  lap=$((end - start))
}

# 1. Batches of 1, 10 and 50, each in its own folder (n01, n10, n50, and b01, b10, b50 for
# PIER_BASE: no name is another's prefix), fresh every round, stopped in a rotating order, each
# size's pair side by side, who goes first alternating by round; after each stop, that batch is
# gone and the batches still to come run.
# batch R KIND N: the folder of round R's batch of N for KIND.
batch() { printf '%s/r%d-%s%02d' "$work" "$1" "$2" "$3"; }
procs1=$(ls -d /proc/[0-9]* | wc -l)
declare -A times
sizes=(1 10 50)
for ((r = 0; r < rounds; r++)); do
  for k in "${kinds[@]}"; do for n in 1 10 50; do launch "$(batch "$r" "$k" "$n")" "$n"; done; done
  for k in "${kinds[@]}"; do for n in 1 10 50; do await "$(batch "$r" "$k" "$n")" "$n"; done; done
  pair=("${kinds[@]:r % 2}" "${kinds[@]:0:r % 2}")
  order=()
  for n in "${sizes[@]:r % 3}" "${sizes[@]:0:r % 3}"; do for k in "${pair[@]}"; do order+=("$k$n"); done; done
  for ((j = 0; j < ${#order[@]}; j++)); do
    k=${order[j]:0:1} n=${order[j]:1}
    dir=$(batch "$r" "$k" "$n")
    stop "$work/out/r$r-$k$n.json" "$dir" "$k"
    times[$k$n]+=" $lap"
    running=()
    for m in "${order[@]:j + 1}"; do
      mapfile -t -O "${#running[@]}" running < <(reports "$(batch "$r" "${m:0:1}" "${m:1}")" "${m:1}")
    done
    "$py" "$work/check.py" "$work/out/r$r-$k$n.json" "$rc" "$work/out/r$r-$k$n.json.err" \
      --gone $(reports "$dir" "$n") --running "${running[@]}" --left || exit 1
  done
done

# 2. At scale: RED servers, each held by two client connections, idle processes up to TOTAL,
# then R rounds of 10 fresh green servers beside them, all in one folder, one
# `pier stop --all-green --under` it each round: the greens gone, the reds left alone, running.
# With PIER_BASE, 10 more fresh ones after (or, every other round, before) them, for its stop.
scale=$work/scale
mkdir -p "$scale"
[ -z "$user" ] || chown "$user:" "$scale"
greens=10
red_reports=()
if [ "$reds" -gt 0 ]; then
  launch "$scale/red" "$reds"
  await "$scale/red" "$reds"
  mapfile -t red_reports < <(reports "$scale/red" "$reds")
  ports=$("$py" -c 'import json, sys; print(*(json.load(open(f))["port"] for f in sys.argv[1:]))' "${red_reports[@]}")
  "${as[@]}" env -C "$work" "$py" "$work/bin/clients.py" $((2 * reds)) "$work/clients.ready" $ports &
  kids+=($!)
  wait_until "$((2 * reds)) client connections" test -s "$work/clients.ready"
fi
start_sleepers "${as[@]}" env -C "$work" "$py" "$work/bin/idle_procs.py" "$total" "$work/idle.ready"
procs2=$(ls -d /proc/[0-9]* | wc -l)
for ((r = 0; r < rounds; r++)); do
  for k in "${kinds[@]:r % 2}" "${kinds[@]:0:r % 2}"; do
    green=$scale/g$r name=scale$r
    [ "$k" = n ] || green=$scale/b$r name=bscale$r
    launch "$green" "$greens"
    await "$green" "$greens"
    stop "$work/out/$name.json" "$scale" "$k"
    times[${k}scale]+=" $lap"
    "$py" "$work/check.py" "$work/out/$name.json" "$rc" "$work/out/$name.json.err" \
      --gone $(reports "$green" "$greens") --running "${red_reports[@]}" --left "${red_reports[@]}" || exit 1
  done
done

"$py" - "$work/out" "$rounds" "$(nproc)" "$procs1" "$procs2" "$reds" "$greens" "${user:-$(id -un)}" \
  "${times[n1]}" "${times[n10]}" "${times[n50]}" "${times[nscale]}" "${BATCH_STRICT:-0}" \
  "${times[b1]:-}" "${times[b10]:-}" "${times[b50]:-}" "${times[bscale]:-}" <<'PY'
import json, statistics as st, sys
out, rounds, cores, procs1, procs2, reds, greens, user = sys.argv[1:9]
t1, t10, t50, ts = ([int(x) / 1000 for x in a.split()] for a in sys.argv[9:13])
strict = sys.argv[13] == "1"
b1, b10, b50, bs = ([int(x) / 1000 for x in a.split()] for a in sys.argv[14:18])
med = st.median
def first(name):  # check (a) -> first SIGTERM, every resource of those stops
    return [r["timings"]["a_to_first_signal_ms"] for f in name
            for r in json.load(open(f"{out}/{f}.json"))["results"]]
misses = 0
def verdict(ok):
    global misses
    misses += not ok
    return "PASS" if ok else "MISS"
def against(t, b):  # with PIER_BASE: its stops, and the median of the per-round ratios new/base
    if b:
        ratio = med(x / y for x, y in zip(t, b))
        print(f"{'  the same by PIER_BASE (before)':34}: median {med(b):7.1f} ms   new/base = {ratio:.2f} "
              f"(target <= 1.05) {verdict(ratio <= 1.05)}")
print(f"machine: {cores} cores, {procs1} processes; pier and its fixtures run as {user}; "
      f"batches of 1, 10, 50 green servers, {rounds} rotating rounds, every stop checked")
a1 = first([f"r{r}-n1" for r in range(int(rounds))])
print(f"pier stop --all-green, batch of  1: median {med(t1):7.1f} ms   "
      f"(a) -> first SIGTERM median {med(a1):.0f} ms")
against(t1, b1)
for n, t, target, base in (("10", t10, 1.6, b10), ("50", t50, 3.0, b50)):
    ratio = med(a / b for a, b in zip(t, t1))
    a = first([f"r{r}-n{n}" for r in range(int(rounds))])
    print(f"pier stop --all-green, batch of {n}: median {med(t):7.1f} ms   {n}/1 = {ratio:.2f} "
          f"(target <= {target}) {verdict(ratio <= target)}   (a) -> first SIGTERM median {med(a):.0f} ms")
    against(t, base)
a = first([f"scale{r}" for r in range(int(rounds))])
print(f"at scale: {procs2} processes (the idle ones {user}'s own), {reds} red servers with "
      f"{2 * int(reds)} connections left alone and running; {greens} green stopped in "
      f"median {med(ts) / 1000:.2f} s, max {max(ts) / 1000:.2f} s (target < 2.5 s) "
      f"{verdict(med(ts) < 2500)}   (a) -> first SIGTERM median {med(a):.0f} ms, max {max(a):.0f} ms")
against(ts, bs)
if strict and misses:
    sys.exit(f"batch.sh: {misses} target(s) missed (BATCH_STRICT=1)")
PY
