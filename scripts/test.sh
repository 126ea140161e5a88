#!/usr/bin/env bash
# The test command: installs what the tests need (Linux), then runs every test.
# The tests start real processes in temporary folders and only ever signal those.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(uname -s)" = Linux ]; then
  scripts/setup-linux.sh
fi
exec cargo test --all-targets --locked "$@"
