#!/usr/bin/env bash
# The stop benchmark: N stops (default 20) of a three-member fixture tree (sh -c → server →
# child), each by its own id, with the default 500 ms activity window. Prints the median and
# max time from check (a) to the first and to the last SIGTERM, as `pier stop --json` reports
# them on its monotonic clock. Target: (a) → first signal median ≤ window + 50 ms, max < 2 s.
# Usage: bench/stop.sh [N] [SAMPLE_MS]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20}
sample=${2:-500}
cargo build --release --quiet --workspace
pier=$PWD/target/release/pier
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PIER_STATE_DIR=$work/state
project=$work/app
mkdir -p "$project/node_modules/.bin"
echo '{}' >"$project/package.json"
{ echo "#!$(command -v python3)"; cat tests/fixtures/devserver.py; } >"$project/node_modules/.bin/vite"
chmod +x "$project/node_modules/.bin/vite"

for ((i = 0; i < n; i++)); do
  report=$work/r$i.json
  (cd "$project" && setsid -f sh -c "./node_modules/.bin/vite --report '$report' --child; true" </dev/null >/dev/null 2>&1)
  for ((t = 0; t < 500; t++)); do [ -s "$report" ] && break; sleep 0.02; done
  id=$("$pier" scan --json --sample-ms 0 --under "$work" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["projects"][0]["resources"][0]["id"])')
  "$pier" stop --json --sample-ms "$sample" "$id" >"$work/stop$i.json" || true
  # A tree the stop left running is ended here, by identity (pid and start time), so the next
  # round measures a fresh tree.
  python3 - "$report" <<'PY'
import json, os, signal, sys
r = json.load(open(sys.argv[1]))
pairs = [(r["pid"], r["start_time"]), (r["ppid"], r["ppid_start_time"])]
pairs += list(zip(r["children"], r.get("children_start_times", [])))
for pid, start in pairs:
    try:
        stat = open(f"/proc/{pid}/stat", "rb").read()
    except OSError:
        continue
    if start is not None and int(stat[stat.rindex(b")") + 2:].split()[19]) == start:
        os.kill(pid, signal.SIGKILL)
PY
done

python3 - "$work" "$n" "$sample" <<'PY'
import json, statistics, sys
work, n, sample = sys.argv[1], int(sys.argv[2]), sys.argv[3]
first, last, results = [], [], []
for i in range(n):
    r = json.load(open(f"{work}/stop{i}.json"))["results"][0]
    results.append(r["result"])
    if r.get("timings"):
        first.append(r["timings"]["a_to_first_signal_ms"])
        last.append(r["timings"]["a_to_last_signal_ms"])
print(f"{n} stops of a 3-member tree, activity window {sample} ms; results: "
      + ", ".join(f"{results.count(x)} {x}" for x in sorted(set(results))))
if first:
    print(f"check (a) -> first SIGTERM: median {statistics.median(first):.1f} ms, max {max(first):.1f} ms")
    print(f"check (a) -> last SIGTERM:  median {statistics.median(last):.1f} ms, max {max(last):.1f} ms")
PY
