#!/usr/bin/env bash
# The test command: installs what the tests need (Linux), then runs every test. On Linux the
# tests run inside a headless desktop session (scripts/headless.sh: Xvfb, a D-Bus session,
# status-notifier-watcher) so the tray app's end-to-end test reads its real menu; then the
# menu's picture is saved to target/screenshots/menu.png (scripts/screenshot.sh).
# The tests start real processes in temporary folders and only ever signal those. The
# real-tools suite (docs/real-tools.md) runs against the real dev tools that
# scripts/real-tools.sh installs, pinned, into the cache named by PIER_REAL_TOOLS. The container
# tests run against a private Docker daemon that scripts/docker.sh starts (as root) and stops.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(uname -s)" != Linux ]; then
  exec cargo test --workspace --all-targets --locked "$@"
fi
scripts/setup-linux.sh
export PIER_REAL_TOOLS=${PIER_REAL_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/pier-real-tools}
scripts/real-tools.sh
scripts/headless.sh scripts/docker.sh cargo test --workspace --all-targets --locked "$@"
mkdir -p target/screenshots
# A desktop under Xvfb has its moods (a tray that docks late); one more try before failing.
scripts/screenshot.sh target/screenshots/menu.png >/dev/null 2>&1 ||
  scripts/screenshot.sh target/screenshots/menu.png >/dev/null
