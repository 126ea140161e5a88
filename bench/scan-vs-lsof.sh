#!/usr/bin/env bash
# Times one full `pier scan` (no activity sample) against `lsof` and `ss`, which answer less
# (sockets and owners only, no diagnosis), on this machine as it is. Prints the median of N runs
# for each, and the ratios. Usage: bench/scan-vs-lsof.sh [N]   (default 15)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-15}
cargo build --release --quiet
pier=target/release/pier

median_ms() { # command...
  local times=() i start end
  for ((i = 0; i < n; i++)); do
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1 || true
    end=$(date +%s%N)
    times+=($(((end - start) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'
}

procs=$(ls -d /proc/[0-9]* | wc -l)
socks=$(($(wc -l </proc/net/tcp) + $(wc -l </proc/net/tcp6) - 2))
p=$(median_ms "$pier" scan --json --sample-ms 0)
l=$(median_ms lsof -nP -iTCP)
s=$(median_ms ss -tanp)
echo "machine: $(nproc) cores, $procs processes, $socks TCP sockets; median of $n runs"
echo "pier scan --sample-ms 0 --json : ${p} ms"
echo "lsof -nP -iTCP                 : ${l} ms   (pier/lsof = $(awk "BEGIN {printf \"%.2f\", $p/$l}"))"
echo "ss -tanp                       : ${s} ms   (pier/ss   = $(awk "BEGIN {printf \"%.2f\", $p/$s}"))"
