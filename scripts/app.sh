#!/usr/bin/env bash
# Builds and starts the tray app (`pier`, which execs `pier-app` beside it), with the same
# arguments (`scripts/app.sh --under ~/src`). The app links GTK 3 on Linux: without it, one
# sentence says what to install, instead of the screen of pkg-config output a build prints.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(uname -s)" = Linux ] && ! pkg-config --exists gtk+-3.0 2>/dev/null; then
  echo "app: the tray app needs GTK 3 to build: install libgtk-3-dev (and libayatana-appindicator3-1 to run it), or run scripts/setup-linux.sh, which installs both; the CLI needs neither: cargo run --release -- scan" >&2
  exit 1
fi
cargo build --release --quiet --locked --workspace --bins
exec target/release/pier app "$@"
