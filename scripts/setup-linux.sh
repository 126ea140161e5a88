#!/usr/bin/env bash
# Installs what Pier's build and tests need on a Debian/Ubuntu machine, idempotently and quietly:
# - build: libgtk-3-dev (gtk, and libdbus through it) for the tray app;
# - run: libayatana-appindicator3-1 (loaded by the tray icon at start-up);
# - tests: python3 (the fixture dev servers), util-linux (setsid, setpriv), and for the tray
#   app's headless tests xvfb, xauth, dbus-x11, status-notifier-watcher, dunst (a real
#   notification daemon, for an automatic stop's Restart button), and for its screenshot
#   trayer, xdotool, x11-utils and imagemagick; for the container tests Debian's
#   docker.io (dockerd, docker-proxy, the docker CLI), busybox-static (the test image's one
#   binary) and iproute2 (the test daemon's bridge), started by scripts/docker.sh;
# plus the Rust components the lint step uses.
set -euo pipefail

packages=(
  libgtk-3-dev libayatana-appindicator3-1
  python3 util-linux
  xvfb xauth dbus-x11 haskell-status-notifier-item-utils dunst
  trayer xdotool x11-utils imagemagick
  docker.io busybox-static iproute2
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup-linux: please install: ${missing[*]} (or run this script as root)" >&2
    exit 1
  fi
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if command -v rustup >/dev/null 2>&1; then
  rustup component add rustfmt clippy >/dev/null 2>&1 || true
fi
