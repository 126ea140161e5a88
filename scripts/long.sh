#!/usr/bin/env bash
# The long versions of the reliability checks that .ci/run runs short (issue 8): a million-case
# run of the parser property tests, 20,000 SIGKILLs of a writing store, and the scan at scale
# (5,000 processes, 500 listeners, 2,000 connections). Minutes, not seconds; run as root for
# the mount-based store tests. Prints each part's own summary.
#   scripts/long.sh
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== parser properties, 200,000 cases each"
PROPTEST_CASES=200000 cargo test --release --locked --test parsers_prop 2>&1 | grep -E "^test |test result"
echo "== diagnosis and stop properties, 20,000 cases each"
PROPTEST_CASES=20000 cargo test --release --locked --lib -- props:: 2>&1 | grep -E "test result"
PROPTEST_CASES=20000 cargo test --release --locked --lib -- a_member_whose_identity 2>&1 | grep -E "test result"
echo "== the store under 20,000 SIGKILLs"
PIER_CRASH_KILLS=20000 cargo test --release --locked --test store_crash_linux -- --nocapture 2>&1 \
  | grep -E "SIGKILLs|test result"
echo "== the scan at scale"
bench/scan.sh 5000 500 2000 5
