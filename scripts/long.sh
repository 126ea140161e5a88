#!/usr/bin/env bash
# The long versions of the reliability checks that .ci/run runs short (issue 8): 200,000 cases
# of each parser property, 20,000 of the diagnosis properties, 10,000 rounds of the stop soak
# (single stops and batches; four runs side by side, added up), 20,000 SIGKILLs of a writing
# store, 400 real stops interrupted by SIGINT or SIGKILL at random points, 40,000 decisions of
# the automatic-stop rules against real servers used at random (about 25 min), and the scan and stop
# at scale (5,000 processes, 500 listeners, 2,000 connections; batches of 1, 10 and 50; the idle
# clock's rescan against the app's refresh). About 2 hours on 2 cores, most of it the soak;
# run as root (pid steering, the mount-based store tests). Prints each part's summary; the whole
# output of each part is kept in target/long/<part>.log.
#   scripts/long.sh [PART...]      (parts: parsers diagnosis soak store interrupt rules scale; all by default)
# PIER_SOAK_ROUNDS (default 10000) and PIER_SOAK_JOBS (default 4) size the soak;
# PIER_SOAK_SECS (default 14400) bounds each of its runs.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p target/long
failed=()
wanted=("$@")

# part NAME PATTERN COMMAND...: runs COMMAND (when NAME is wanted), keeps its whole output in
# target/long/NAME.log, prints the lines matching PATTERN (its summary), and on failure the
# log's end.
part() {
  local name=$1 pattern=$2
  shift 2
  if [ ${#wanted[@]} -gt 0 ] && [[ " ${wanted[*]} " != *" $name "* ]]; then
    return
  fi
  echo "== $name"
  if "$@" >"target/long/$name.log" 2>&1; then
    grep -E "$pattern" "target/long/$name.log"
  else
    grep -E "$pattern" "target/long/$name.log"
    tail -n 40 "target/long/$name.log"
    echo "long.sh: $name FAILED (whole output: target/long/$name.log)"
    failed+=("$name")
  fi
}

# soak ROUNDS JOBS: the stop soak as JOBS runs side by side (each its own sandbox, state folder
# and seed; a batch's calls are serial within a run, not across runs), ROUNDS in all, then
# their figures added up. Runs side by side also race each other for pids and CPU: pid steering
# fails more often, and a loaded machine refuses more stops for the 2 s deadline — both are
# counted, never excused as wrong signals or disagreements — and one run's processes end while
# another run's stop reads them, as a user's short-lived processes do. Each run has a network namespace of its own: sharing one, a
# run's client reached another run's server on a port that had changed hands, or a server took
# a port another run's resource had held, and the oracle of the one run cannot know of either.
soak() {
  local rounds=$1 jobs=$2 i rc=0 pids=() own_net=()
  cargo test --release --locked --test stop_soak_linux --no-run || return 1
  if unshare --net true 2>/dev/null; then
    own_net=(unshare --net sh -c 'ip link set lo up && exec "$@"' own-net)
  else
    echo "soak: cannot make network namespaces (not root?): the runs share one"
  fi
  for ((i = 0; i < jobs; i++)); do
    PIER_SOAK_ROUNDS=$(((rounds + jobs - 1 - i) / jobs)) PIER_SOAK_SECS=${PIER_SOAK_SECS:-14400} \
      PIER_SOAK_REPORT="target/long/soak-$i.json" \
      "${own_net[@]}" cargo test --release --locked --test stop_soak_linux -- --nocapture \
      >"target/long/soak-$i.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    if ! wait "${pids[$i]}"; then
      rc=1
      echo "soak run $i failed:"
      grep -A 30 "wrong signals:" "target/long/soak-$i.log" | head -n 60
    fi
  done
  python3 - "$jobs" <<'PY'
import json, statistics, sys
from collections import Counter
runs = [json.load(open(f"target/long/soak-{i}.json")) for i in range(int(sys.argv[1]))]
add = lambda key: sum(r[key] for r in runs)
results, sizes, events = Counter(), Counter(), Counter()
for r in runs:
    results.update(r["results"])
    sizes.update({int(k): v for k, v in r["sizes"].items()})
    for kind, done, n in r["events"]:
        events[(kind, "happened" if done else "did not happen")] += n
stop = sorted(ms for r in runs for ms in r["stop_ms"])
print(f"stop soak: {add('rounds')} rounds ({add('resources')} resources) in {len(runs)} runs side by side, "
      f"{max(r['secs'] for r in runs):.0f} s; seeds {[r['seed'] for r in runs]}")
print(f"stop soak: rounds by batch size {dict(sorted(sizes.items()))}")
print(f"stop soak: results {dict(sorted(results.items()))}")
print("stop soak: events " + ", ".join(f"{k} {d}: {n}" for (k, d), n in sorted(events.items())))
print(f"stop soak: pids taken by a newcomer {add('recycled')}; untouched resources of a batch "
      f"{add('untouched')}, of which stopped {add('untouched_stopped')}; refusals for the 2 s deadline {add('deadline')}")
print(f"stop soak: stop time median {statistics.median(stop):.0f} ms, max {stop[-1]:.0f} ms")
print(f"stop soak: wrong signals {add('wrong_signals')}, outcomes that disagree with the ground truth "
      f"{add('disagreements')}, fixture errors {add('fixture_errors')}")
PY
  return $rc
}

part parsers "^test |test result" \
  env PROPTEST_CASES=200000 cargo test --release --locked --test parsers_prop
# The stop property's space is 24 cases, all run by the test suite.
part diagnosis "test result" env PROPTEST_CASES=20000 cargo test --release --locked -p pier-core --lib -- props::
part soak "^stop soak|failed" soak "${PIER_SOAK_ROUNDS:-10000}" "${PIER_SOAK_JOBS:-4}"
part store "SIGKILLs|test result" env PIER_CRASH_KILLS=20000 \
  cargo test --release --locked --test store_crash_linux -- --nocapture
part interrupt "interrupted stops|test result" env PIER_INTERRUPT_ROUNDS=400 \
  cargo test --release --locked --test interrupt_linux -- --nocapture
part rules "^rules soak|test result" env PIER_RULES_SOAK_DECISIONS=40000 PIER_RULES_SOAK_SECS=3600 \
  PIER_RULES_SOAK_SERVERS=30 cargo test --release --locked --test auto_soak_linux -- --nocapture
part scale "." bash -c 'bench/scan.sh 5000 500 2000 5 && bench/batch.sh 3 5000 && bench/clock.sh 5000 500 5'

if [ ${#failed[@]} -gt 0 ]; then
  echo "long.sh: failed: ${failed[*]}"
  exit 1
fi
echo "long.sh: every part passed"
