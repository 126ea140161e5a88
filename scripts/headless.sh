#!/usr/bin/env bash
# Runs a command inside a headless desktop session: a private D-Bus session bus
# (dbus-run-session), an Xvfb display, and — unless --no-watcher — status-notifier-watcher, the
# StatusNotifier registry tray apps register with. Everything it starts ends with it.
#   scripts/headless.sh [--no-watcher] COMMAND [ARG...]
set -euo pipefail

if [ "${1:-}" != "--inner" ]; then
  # dbus-daemon's own chatter (fd limits, service activation) is dropped; all else passes.
  set +e
  { dbus-run-session -- "$0" --inner "$@" 2>&1 1>&3 3>&- |
    grep -v --line-buffered '^dbus-daemon\[' >&2; } 3>&1
  exit "${PIPESTATUS[0]}"
fi
# No accessibility bus: GTK would start one per app, and the tests do not need it.
export NO_AT_BRIDGE=1
shift
watcher=1
if [ "${1:-}" = "--no-watcher" ]; then
  watcher=0
  shift
fi

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

. "$(dirname "$0")/lib.sh" # wait_until

n=90
while [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ]; do n=$((n + 1)); done
Xvfb ":$n" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
pids+=($!)
export DISPLAY=":$n"
wait_until "Xvfb on $DISPLAY" xdpyinfo -display "$DISPLAY"

if [ "$watcher" = 1 ]; then
  status-notifier-watcher >/dev/null 2>&1 &
  pids+=($!)
  has_watcher() {
    gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus \
      -m org.freedesktop.DBus.NameHasOwner org.kde.StatusNotifierWatcher | grep true >/dev/null
  }
  wait_until "status-notifier-watcher" has_watcher
fi

set +e
"$@"
rc=$?
set -e
exit "$rc"
