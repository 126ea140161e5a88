# Shell helpers sourced by scripts/headless.sh, scripts/screenshot.sh and the bench/ scripts:
# a bounded poll, and fixture dev servers started as orphans in a temporary folder ($work) with
# their clean-up by identity (python3).

fixture_pids=() # "pid start_time" of every fixture started here
kids=()         # the script's own background children (not yet reaped: their pids are theirs)

# At exit: the script's children, its fixtures (by identity), and $work. Every step runs,
# whatever the one before it answered. Scripts say `trap end_all EXIT`.
end_all() {
  set +e
  local pid
  for pid in "${kids[@]}"; do kill "$pid" 2>/dev/null; done
  kill_fixtures
  rm -rf "$work"
}

# At exit of a script that made a temporary user (its name in $user, empty for none): removes
# it. The fixtures' and helpers' last exits (PR_SET_PDEATHSIG children) take a moment.
drop_user() {
  [ -n "${user:-}" ] || return 0
  for _ in $(seq 50); do userdel "$user" 2>/dev/null && return 0; sleep 0.1; done
  userdel -f "$user" 2>/dev/null || echo "$(basename "$0"): could not remove the user $user" >&2
}

# Polls a command every 50 ms for up to 15 s: wait_until WHAT COMMAND...
# (Under pipefail, `… | grep -q` fails at random: grep leaves early and the writer dies of
# SIGPIPE. The checks here let grep read everything: `grep … >/dev/null`.)
wait_until() {
  local what=$1
  shift
  for _ in $(seq 300); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.05
  done
  echo "$(basename "$0"): $what did not happen within 15 s" >&2
  return 1
}

# Starts COMMAND (bench/idle_procs.py and its arguments, the last one its ready file) in the
# background and waits up to 120 s for it to write that file: start_sleepers COMMAND...
start_sleepers() {
  local ready=${!#}
  "$@" &
  kids+=($!)
  for _ in $(seq 1200); do [ -s "$ready" ] && break; sleep 0.1; done
  test -s "$ready" || { echo "$(basename "$0"): the idle processes did not start" >&2; exit 1; }
}

# Waits for each fixture server DIR/reports/TAG1.json … TAGN.json to report, and remembers it
# for the clean-up by identity (python3 in $py): await_servers DIR TAG N
await_servers() {
  local dir=$1 tag=$2 n=$3 i
  for i in $(seq "$n"); do
    wait_until "server $tag$i" test -s "$dir/reports/$tag$i.json"
    fixture_pids+=("$("$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["pid"], r["start_time"])' "$dir/reports/$tag$i.json")")
  done
}

# port_near P: P when nothing listens on 127.0.0.1:P now, else a free port the kernel picks —
# the conventional port in a picture where it can be had, never a fight with a developer's
# own server on it.
port_near() {
  python3 - "$1" <<'PY'
import socket, sys
def free(port):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        return s.getsockname()[1]
    except OSError:
        return None
    finally:
        s.close()
print(free(int(sys.argv[1])) or free(0))
PY
}

# fixture PROJECT MARKER TOOL [ARG...]: tests/fixtures/devserver.py installed as TOOL inside
# $work/PROJECT (with MARKER to make it a project), started as an orphan (setsid -f) with ARGs,
# waited for until it reports.
fixture() {
  local project=$1 marker=$2 tool=$3 py
  shift 3
  py=$(command -v python3)
  mkdir -p "$work/$project/$(dirname "$tool")"
  touch "$work/$project/$marker"
  { echo "#!$py"; cat tests/fixtures/devserver.py; } >"$work/$project/$tool"
  chmod +x "$work/$project/$tool"
  (cd "$work/$project" && setsid -f "./$tool" "$@" --report "$work/$project.json" \
    </dev/null >/dev/null 2>&1)
  wait_until "$project's fixture" test -s "$work/$project.json"
  fixture_pids+=("$("$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["pid"], r["start_time"])' "$work/$project.json")")
}

# Ends every fixture started here: only a process with the same pid *and* kernel start time.
kill_fixtures() {
  local entry
  set +e
  for entry in "${fixture_pids[@]}"; do
    set -- $entry
    if [ "$(awk '{print $22}' "/proc/$1/stat" 2>/dev/null)" = "$2" ]; then kill "$1" 2>/dev/null; fi
  done
}
