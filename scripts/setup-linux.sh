#!/usr/bin/env bash
# Installs what Pier's tests need on a Debian/Ubuntu machine, idempotently and quietly:
# python3 (the fixture dev servers) and util-linux (setsid, setpriv), plus the Rust
# components the lint step uses. Pier itself needs none of these to run.
set -euo pipefail

missing=()
command -v python3 >/dev/null 2>&1 || missing+=(python3)
{ command -v setsid && command -v setpriv; } >/dev/null 2>&1 || missing+=(util-linux)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup-linux: please install: ${missing[*]} (or run this script as root)" >&2
    exit 1
  fi
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if command -v rustup >/dev/null 2>&1; then
  rustup component add rustfmt clippy >/dev/null 2>&1 || true
fi
