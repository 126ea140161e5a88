#!/usr/bin/env bash
# The long versions of the reliability checks that .ci/run runs short (issue 8): 200,000 cases
# of each parser property, 20,000 of the diagnosis properties, 1,000 rounds of the stop
# soak, 20,000 SIGKILLs of a writing store, and the scan and stop at scale (5,000 processes,
# 500 listeners, 2,000 connections). About an hour on 2 cores; run as root (pid steering, the
# mount-based store tests). Prints each part's own summary.
#   scripts/long.sh
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== parser properties, 200,000 cases each"
PROPTEST_CASES=200000 cargo test --release --locked --test parsers_prop 2>&1 | grep -E "^test |test result"
echo "== diagnosis properties, 20,000 cases each (the stop property's 24 cases are all run by the suite)"
PROPTEST_CASES=20000 cargo test --release --locked --lib -- props:: 2>&1 | grep -E "test result"
echo "== the stop soak, 1,000 rounds"
PIER_SOAK_ROUNDS=1000 PIER_SOAK_SECS=3600 cargo test --release --locked --test stop_soak_linux \
  -- --nocapture 2>&1 | grep -E "stop soak|test result"
echo "== the store under 20,000 SIGKILLs"
PIER_CRASH_KILLS=20000 cargo test --release --locked --test store_crash_linux -- --nocapture 2>&1 \
  | grep -E "SIGKILLs|test result"
echo "== the scan at scale"
bench/scan.sh 5000 500 2000 5
