#!/usr/bin/env bash
# Installs the real dev tools of the real-tools suite (docs/real-tools.md), pinned, into a cache
# outside the repository: ${PIER_REAL_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/pier-real-tools}.
# Idempotent and quiet: prints nothing on success (with -v, what it did); on failure, one
# sentence naming the tool, and the installer's log. For every group file it finds:
#   tests/real_tools/apt/<group>.txt        Debian packages, one a line (# comments)
#   tests/real_tools/npm/<tool>/            package.json + package-lock.json: npm ci into
#                                           $CACHE/npm/<tool>/node_modules
#   tests/real_tools/python/<group>.txt     pip requirements with == pins: a venv $CACHE/venv/<group>
#   tests/real_tools/cargo/<tool>.txt       one line "crate version": cargo install --locked
#                                           --debug --root $CACHE/cargo/<tool>
# npm, python and cargo installs are skipped when the stamp of their pin files' hash matches.
#   scripts/real-tools.sh [-v]
set -euo pipefail
cd "$(dirname "$0")/.."
verbose=0
[ "${1:-}" = -v ] && verbose=1
repo=$PWD
cache=${PIER_REAL_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/pier-real-tools}
mkdir -p "$cache/log"
cache=$(cd "$cache" && pwd)

say() { if [ "$verbose" = 1 ]; then echo "real-tools: $*"; fi; }
fail() {
  echo "real-tools: $1" >&2
  if [ -n "${2:-}" ] && [ -s "$2" ]; then tail -n 20 "$2" >&2; fi
  exit 1
}
# Pins of one install, as a hash: the stamp a finished install leaves behind.
hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }
fresh() { [ -f "$1/.pier-stamp" ] && [ "$(cat "$1/.pier-stamp")" = "$2" ]; }
# Lines of a list file without comments and blanks.
entries() { sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^[[:space:]]*$/d' "$1"; }

# One installer at a time per cache (the helpers and CI may share one).
exec 9>"$cache/.lock"
flock 9

# --- apt ---------------------------------------------------------------------------------------
missing=()
for list in tests/real_tools/apt/*.txt; do
  [ -e "$list" ] || continue
  while read -r p; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null ||
      missing+=("$p")
  done < <(entries "$list")
done
if [ "${#missing[@]}" -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] ||
    fail "the real tools need the Debian packages ${missing[*]}: install them (or run this as root)"
  say "apt-get install ${missing[*]}"
  log=$cache/log/apt.log
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"; } >"$log" 2>&1 ||
    fail "could not install the Debian packages ${missing[*]}" "$log"
fi

# --- npm ---------------------------------------------------------------------------------------
for dir in tests/real_tools/npm/*/; do
  [ -f "$dir/package-lock.json" ] || continue
  tool=$(basename "$dir")
  dest=$cache/npm/$tool
  stamp=$(hash_of "$dir/package.json" "$dir/package-lock.json" <(node --version 2>/dev/null))
  fresh "$dest" "$stamp" && continue
  command -v npm >/dev/null || fail "$tool needs npm (and node): install them first"
  say "npm ci $tool"
  rm -rf "$dest" && mkdir -p "$dest"
  cp "$dir/package.json" "$dir/package-lock.json" "$dest/"
  log=$cache/log/npm-$tool.log
  (cd "$dest" && npm ci --no-audit --no-fund) >"$log" 2>&1 ||
    fail "could not install $tool from npm (npm ci in $dest)" "$log"
  echo "$stamp" >"$dest/.pier-stamp"
done

# --- python ------------------------------------------------------------------------------------
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3 || true)
for req in tests/real_tools/python/*.txt; do
  [ -e "$req" ] || continue
  group=$(basename "$req" .txt)
  dest=$cache/venv/$group
  [ -n "$py" ] || fail "the python tools ($group) need python3: install it first"
  while read -r line; do
    case $line in *==*) ;; *) fail "$req: every requirement must be pinned with ==, not '$line'" ;; esac
  done < <(entries "$req")
  stamp=$(hash_of "$req" <("$py" --version 2>&1))
  fresh "$dest" "$stamp" && continue
  say "venv $group: pip install -r $req"
  rm -rf "$dest"
  log=$cache/log/python-$group.log
  { "$py" -m venv "$dest" && "$dest/bin/pip" install --disable-pip-version-check -q \
    -r "$repo/$req"; } >"$log" 2>&1 ||
    fail "could not install the python tools of $group (pip install -r $req)" "$log"
  echo "$stamp" >"$dest/.pier-stamp"
done

# --- cargo -------------------------------------------------------------------------------------
for pin in tests/real_tools/cargo/*.txt; do
  [ -e "$pin" ] || continue
  tool=$(basename "$pin" .txt)
  dest=$cache/cargo/$tool
  read -r crate version < <(entries "$pin") || true
  [ -n "${crate:-}" ] && [ -n "${version:-}" ] || fail "$pin: expected one line 'crate version'"
  # A debug build: a quarter of the release build's time (about 1 min against 4 on 2 cores),
  # and the tool only watches files.
  stamp=$(hash_of "$pin" <(echo debug))
  fresh "$dest" "$stamp" && continue
  say "cargo install $crate $version"
  rm -rf "$dest"
  log=$cache/log/cargo-$tool.log
  cargo install --quiet --locked --debug --root "$dest" "$crate" --version "$version" >"$log" 2>&1 ||
    fail "could not install $tool (cargo install $crate $version)" "$log"
  echo "$stamp" >"$dest/.pier-stamp"
done
say "cache $cache is ready"
