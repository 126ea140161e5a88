#!/usr/bin/env bash
# Builds Pier.app on a Mac (not run on this team's Linux machines; the code it bundles is
# type-checked there with `cargo check --target aarch64-apple-darwin`).
#   scripts/bundle-macos.sh [TARGET]   e.g. aarch64-apple-darwin (default: the host)
# Output: target/Pier.app, whose executable is `pier-app` (the menu-bar app), with the `pier`
# CLI beside it (the app runs restarts through it). Info.plist sets LSUIElement (no Dock icon); the app also
# sets the accessory activation policy itself, so `pier app` from a terminal has none either.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-}
if [ -n "$target" ]; then
  cargo build --release --locked --workspace --bins --target "$target"
  bin="target/$target/release"
else
  cargo build --release --locked --workspace --bins
  bin=target/release
fi
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
app=target/Pier.app
rm -rf "$app"
mkdir -p "$app/Contents/MacOS" "$app/Contents/Resources"
cp "$bin/pier-app" "$bin/pier" "$app/Contents/MacOS/"
sed "s/@VERSION@/$version/g" assets/macos/Info.plist >"$app/Contents/Info.plist"
if command -v plutil >/dev/null 2>&1; then
  plutil -lint "$app/Contents/Info.plist" >/dev/null
fi
# Ad-hoc signature so Gatekeeper runs the local build; distribution needs a real identity.
if command -v codesign >/dev/null 2>&1; then
  codesign --force --sign - "$app" >/dev/null
fi
echo "built $app"
