#!/usr/bin/env bash
# Saves a picture of the tray app's open menu: three fixture dev servers (green, yellow, red)
# in a temporary folder, `pier app` scoped to it, the icon docked in trayer through the XEmbed
# fallback (no StatusNotifier watcher on the bus), a click on the icon, a hover on the first
# card, and a capture of the screen around the menu.
#   scripts/screenshot.sh OUT.png
# Runs itself inside scripts/headless.sh --no-watcher. Needs: python3, trayer, xdotool,
# x11-utils, imagemagick (scripts/setup-linux.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/screenshot.sh OUT.png}
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
if [ "${PIER_SHOT_INNER:-}" != 1 ]; then
  PIER_SHOT_INNER=1 exec scripts/headless.sh --no-watcher "$0" "$out"
fi
export NO_AT_BRIDGE=1
pier=${PIER_BIN:-target/debug/pier}
[ -x "$pier" ] && [ -x "$(dirname "$pier")/pier-app" ] || cargo build --quiet --locked --workspace --bins
convert=/usr/bin/convert

work=$(mktemp -d)
. scripts/lib.sh
trap end_all EXIT

py=$(command -v python3)
# The usual ports where they are free (the picture reads as a developer's), else free ones: a
# developer's own server on 5173 never breaks the test command.
shop_port=$(port_near 5173)
fixture shop package.json node_modules/.bin/vite --port "$shop_port"
docs_port=$(port_near 3000)
fixture docs package.json node_modules/.bin/next dev --port "$docs_port"
api_port=$(port_near 8000)
fixture api pyproject.toml .venv/bin/uvicorn --port "$api_port" --busy
admin_port=$(port_near 3001)
fixture admin pyproject.toml manage.py runserver --port "$admin_port"
# A client holding a connection to admin turns its card red. It is this script's own child.
"$py" tests/fixtures/devserver.py --hold --host 127.0.0.1 --port "$admin_port" &
kids+=($!)
accepted() { "$py" -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["accepted"] < 1)' "$work/admin.json"; }
wait_until "the client's connection" accepted

# The tray must be up before the app starts, or its icon does not dock. Now and then trayer
# cannot open a display that xdpyinfo just opened: start it again when it dies.
panel() { xwininfo -root -tree | grep '("panel" "trayer")' >/dev/null; }
for _ in 1 2 3; do
  trayer --edge top --align right --widthtype request --height 32 --SetDockType true \
    >/dev/null 2>&1 &
  tray=$!
  for _ in $(seq 100); do
    if panel || ! kill -0 "$tray" 2>/dev/null; then break; fi
    sleep 0.05
  done
  panel && break
done
kids+=("$tray")
wait_until "trayer" panel
PIER_STATE_DIR="$work/state" PIER_CONFIG_DIR="$work/config" PIER_LOG=debug "$pier" app --under "$work" --refresh 0 \
  >"$work/app.out" 2>&1 &
kids+=($!)

# Docked: the icon's window hangs below trayer's panel.
icon_window() { xwininfo -root -tree | grep -A6 '("panel" "trayer")' | grep '"tray-icon tray app pier"' >/dev/null; }
wait_until "the docked icon" icon_window || { cat "$work/app.out" >&2; exit 1; }
geometry=$(xwininfo -root -tree | grep '"tray-icon tray app pier"' | grep -o '+[0-9]*+[0-9]*$' | head -1)
x=$(echo "$geometry" | cut -d+ -f2)
y=$(echo "$geometry" | cut -d+ -f3)
# The first scan must be shown before the menu opens (showing it rebuilds the menu).
wait_until "the first scan" grep -q "showing the scan of generation 1" "$work/state/app.log"

# The app's menu windows that are on screen (GTK keeps closed ones, unmapped), one line each.
menus() {
  local id found=1
  for id in $(xwininfo -root -children | grep '("pier" "Pier")' | grep -v ' 10x10+' | awk '{print $1}'); do
    if xwininfo -id "$id" | grep 'Map State: IsViewable' >/dev/null; then
      xwininfo -root -children | grep "^ *$id "
      found=0
    fi
  done
  return $found
}
# The docked icon may take a moment to answer clicks: click again until the menu is up.
for _ in $(seq 10); do
  xdotool mousemove $((x + 16)) $((y + 15)) click 1
  for _ in $(seq 40); do menus >/dev/null && break 2; sleep 0.05; done
done
wait_until "the open menu" menus || { xwininfo -root -tree >&2; cat "$work/state/app.log" >&2; exit 1; }
read -r mw mh mx my < <(menus | head -1 | sed -E 's/.* ([0-9]+)x([0-9]+)\+([0-9]+)\+([0-9]+) .*/\1 \2 \3 \4/')
# Hover the first card (below the header and a separator) to open its submenu.
opened() { [ "$(menus | wc -l)" -ge 2 ]; }
for _ in $(seq 10); do
  xdotool mousemove $((mx + 60)) $((my + 75)) sleep 0.1 mousemove $((mx + 60)) $((my + 52))
  for _ in $(seq 40); do opened && break 2; sleep 0.05; done
done
wait_until "the card's submenu" opened
sleep 0.3 # let GTK finish drawing the submenu
# The capture: every menu window, with a margin, and the icon.
read -r left top right bottom < <(menus | sed -E 's/.* ([0-9]+)x([0-9]+)\+([0-9]+)\+([0-9]+) .*/\1 \2 \3 \4/' |
  awk -v ix="$x" '{ l=$3; t=$4; r=$3+$1; b=$4+$2;
    if (NR==1 || l<L) L=l; if (NR==1 || t<T) T=t; if (NR==1 || r>R) R=r; if (NR==1 || b>B) B=b }
    END { if (ix+34>R) R=ix+34; print L-10, 0, R, B+10 }')
import -window root "$work/root.png"
"$convert" "$work/root.png" -crop "$((right - left))x$((bottom - top))+$left+$top" +repage \
  -background '#2e3440' -flatten "$out"
echo "screenshot: $out"
