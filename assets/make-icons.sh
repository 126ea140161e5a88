#!/usr/bin/env bash
# Draws Pier's icons with ImageMagick. The PNGs are committed; run this only to change them.
# Tray (64 px): idle = grey ring (nothing safe to stop), safe = green disc (something is),
# error = red ring with a dot (the scan failed). template = black ring for the macOS menu bar,
# which tints it. Dots (16 px): the card levels, beside each card where the host draws icons.
set -euo pipefail
cd "$(dirname "$0")"
convert=/usr/bin/convert   # /usr/local/bin/convert may be a stand-in on some machines

ring() { # colour out
  "$convert" -size 64x64 xc:none -fill none -stroke "$1" -strokewidth 8 \
    -draw "circle 32,32 32,8" "PNG32:$2"
}
ring '#8a8a8a' tray-idle.png
"$convert" -size 64x64 xc:none -fill '#2e9e44' -stroke '#1f6e2f' -strokewidth 3 \
  -draw "circle 32,32 32,5" PNG32:tray-safe.png
"$convert" -size 64x64 xc:none -fill none -stroke '#c62828' -strokewidth 8 \
  -draw "circle 32,32 32,8" -fill '#c62828' -stroke none -draw "circle 32,32 32,22" PNG32:tray-error.png
ring black tray-template.png
for level in green:'#2e9e44' yellow:'#e0a800' red:'#c62828'; do
  "$convert" -size 16x16 xc:none -fill "${level#*:}" -draw "circle 8,8 8,2" "PNG32:dot-${level%%:*}.png"
done
