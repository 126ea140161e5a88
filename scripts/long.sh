#!/usr/bin/env bash
# The long versions of the reliability checks that .ci/run runs short (issue 8): 200,000 cases
# of each parser property, 20,000 of the diagnosis properties, 1,000 rounds of the stop
# soak, 20,000 SIGKILLs of a writing store, 400 real stops interrupted by SIGINT or SIGKILL at
# random points, and the scan and stop at scale (5,000 processes,
# 500 listeners, 2,000 connections). About 15 minutes on 2 cores; run as root (pid steering, the
# mount-based store tests). Prints each part's summary; the whole output of each part is kept in
# target/long/<part>.log.
#   scripts/long.sh
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p target/long
failed=()

# part NAME PATTERN COMMAND...: runs COMMAND, keeps its whole output in target/long/NAME.log,
# prints the lines matching PATTERN (its summary), and on failure the log's end.
part() {
  local name=$1 pattern=$2
  shift 2
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

part parsers "^test |test result" \
  env PROPTEST_CASES=200000 cargo test --release --locked --test parsers_prop
# The stop property's space is 24 cases, all run by the test suite.
part diagnosis "test result" env PROPTEST_CASES=20000 cargo test --release --locked -p pier-core --lib -- props::
part soak "stop soak|test result" env PIER_SOAK_ROUNDS=1000 PIER_SOAK_SECS=3600 \
  cargo test --release --locked --test stop_soak_linux -- --nocapture
part store "SIGKILLs|test result" env PIER_CRASH_KILLS=20000 \
  cargo test --release --locked --test store_crash_linux -- --nocapture
part interrupt "interrupted stops|test result" env PIER_INTERRUPT_ROUNDS=400 \
  cargo test --release --locked --test interrupt_linux -- --nocapture
part scale "." bench/scan.sh 5000 500 2000 5

if [ ${#failed[@]} -gt 0 ]; then
  echo "long.sh: failed: ${failed[*]}"
  exit 1
fi
echo "long.sh: every part passed"
