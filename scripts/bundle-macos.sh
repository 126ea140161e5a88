#!/usr/bin/env bash
# Builds Pier.app on a Mac, signs it and zips it: the zip is what a release and the Homebrew cask
# (packaging/homebrew/pier-app.rb) download. NOT RUN: this team has no Mac; the code it bundles is
# type-checked on Linux for aarch64-apple-darwin. docs/macos.md is the first run's guide.
#   scripts/bundle-macos.sh [TARGET]   e.g. x86_64-apple-darwin (default: the host)
# Output: target/Pier.app, whose executable is `pier-app` (the menu-bar app), with the `pier`
# CLI beside it (the app runs restarts through it), and target/Pier-VERSION-ARCH.zip of it.
# Info.plist sets LSUIElement (no Dock icon); the app also sets the accessory activation policy
# itself, so `pier app` from a terminal has none either.
# Environment:
#   SDKROOT              the macOS SDK (default: `xcrun --sdk macosx --show-sdk-path`)
#   PIER_SIGN_IDENTITY   a "Developer ID Application: NAME (TEAM)" identity in the keychain:
#                        signs with the hardened runtime and a secure timestamp (default: ad hoc)
#   PIER_NOTARY_PROFILE  a keychain profile saved by `xcrun notarytool store-credentials`:
#                        notarises the zip, staples the ticket to the app and zips it again
set -euo pipefail
cd "$(dirname "$0")/.."

die() {
  echo "bundle-macos: $*" >&2
  exit 1
}

# Runs a command, showing what it printed only when it fails.
quiet() {
  local out
  if ! out=$("$@" 2>&1); then
    printf '%s\n' "$out" >&2
    die "this step failed: $*"
  fi
}

[ "$(uname -s)" = Darwin ] || die "Pier.app is built on a Mac; this machine runs $(uname -s)."
[ -z "${PIER_NOTARY_PROFILE:-}" ] || [ -n "${PIER_SIGN_IDENTITY:-}" ] ||
  die "notarisation needs a Developer ID signature: set PIER_SIGN_IDENTITY as well."

# NOT RUN. libproc's build script (libproc 0.15) runs bindgen on <libproc.h> from
# $SDKROOT/usr/include, and without SDKROOT from the Command Line Tools' SDK
# (/Library/Developer/CommandLineTools/SDKs/MacOSX.sdk): with Xcode alone, or no tools at all,
# the first build stops at "'libproc.h' file not found". xcrun knows the SDK either way.
if [ -z "${SDKROOT:-}" ]; then
  SDKROOT=$(xcrun --sdk macosx --show-sdk-path 2>/dev/null) || SDKROOT=
  [ -n "$SDKROOT" ] || die "no macOS SDK was found (\`xcrun --sdk macosx --show-sdk-path\` \
failed): install Apple's command line tools with \`xcode-select --install\`, then run this again."
  export SDKROOT
fi
[ -f "$SDKROOT/usr/include/libproc.h" ] || die "the SDK at $SDKROOT has no usr/include/libproc.h, \
which the build needs: point SDKROOT at a macOS SDK, or run \`xcode-select --install\`."

target=${1:-}
if [ -n "$target" ]; then
  cargo build --quiet --release --locked --workspace --bins --target "$target"
  bin="target/$target/release"
else
  cargo build --quiet --release --locked --workspace --bins
  bin=target/release
fi
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
arch=$(lipo -archs "$bin/pier-app" | tr ' ' -) # NOT RUN: arm64 or x86_64
app=target/Pier.app
zip=target/Pier-$version-$arch.zip
rm -rf "$app" "$zip"
mkdir -p "$app/Contents/MacOS" "$app/Contents/Resources"
cp "$bin/pier-app" "$bin/pier" "$app/Contents/MacOS/"
sed "s/@VERSION@/$version/g" assets/macos/Info.plist >"$app/Contents/Info.plist"
quiet plutil -lint "$app/Contents/Info.plist" # NOT RUN

# NOT RUN. Signed inside out, each piece before what holds it, and never with --deep (it would
# sign nested code with the outer options). The bundle's signature covers its main executable,
# pier-app, and seals the signed pier beside it.
if [ -n "${PIER_SIGN_IDENTITY:-}" ]; then
  # The hardened runtime and a secure timestamp, which notarisation requires. No entitlements:
  # Pier runs no JIT, loads no unsigned library, sets no DYLD_ variable and asks for no
  # protected resource (camera, contacts, …); reading other processes (proc_pidinfo, sysctl),
  # signalling its user's own and connecting to unix sockets need none.
  sign=(codesign --force --sign "$PIER_SIGN_IDENTITY" --options runtime --timestamp)
else
  # Ad hoc: runs on the Mac that built it; another Mac's Gatekeeper refuses it once downloaded.
  sign=(codesign --force --sign -)
fi
quiet "${sign[@]}" --identifier dev.pier.cli "$app/Contents/MacOS/pier"
quiet "${sign[@]}" "$app/Contents/MacOS/pier-app"
quiet "${sign[@]}" "$app"
quiet codesign --verify --deep --strict "$app"

# NOT RUN. ditto keeps what a signed bundle needs in a zip (the signature's extended attributes).
ditto -c -k --keepParent "$app" "$zip"
if [ -n "${PIER_NOTARY_PROFILE:-}" ]; then
  echo "notarising $zip (this waits for Apple's answer, usually a few minutes)"
  # notarytool exits 0 when Apple answers, even to reject the app: its status is read instead.
  result=$(xcrun notarytool submit "$zip" --keychain-profile "$PIER_NOTARY_PROFILE" --wait \
    --output-format json 2>&1) || {
    printf '%s\n' "$result" >&2
    die "the notary service could not be asked (its answer is above)."
  }
  if ! grep -q '"status" *: *"Accepted"' <<<"$result"; then
    printf '%s\n' "$result" >&2
    die "Apple did not accept the app (its answer is above); \`xcrun notarytool log ID \
--keychain-profile $PIER_NOTARY_PROFILE\`, with the id above, says why."
  fi
  quiet xcrun stapler staple "$app"
  quiet spctl --assess --type execute -vv "$app"
  quiet codesign --verify --deep --strict "$app"
  # The zip sent to Apple has no ticket; the one released carries it.
  rm -f "$zip"
  ditto -c -k --keepParent "$app" "$zip"
fi
echo "built $app and $zip (sha256 $(shasum -a 256 "$zip" | cut -d ' ' -f 1))"
