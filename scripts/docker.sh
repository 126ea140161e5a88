#!/usr/bin/env bash
# Runs a command beside a private Docker daemon, for the container tests (tests/containers_linux.rs):
#   scripts/docker.sh COMMAND [ARG...]
# Debian's dockerd, as root, on a socket of its own in a temporary folder, with the vfs storage
# driver and a bridge of its own, leaving the machine's network as it is: no iptables rules, no
# IP forwarding, no masquerading (a plain dockerd creates docker0, rewrites iptables and sets
# the FORWARD policy to DROP). The image `pier-busybox:test` is imported from the
# busybox-static Debian package's binary (there is no registry). COMMAND runs with
# PIER_DOCKER_HOST=unix://…/docker.sock. At exit: the test containers are removed, dockerd is
# stopped by its pid, its bridge and folder are removed.
# Without root or without dockerd, COMMAND runs alone and the container tests say they skip.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh # wait_until

if [ "$(id -u)" -ne 0 ] || ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then
  exec "$@"
fi

# A bridge of this run's own, named for its pid, so two runs side by side keep apart; one left
# by a run that was killed (its pid gone) is removed.
bridge=pier-br$$
for stale in $(ip -o link show type bridge 2>/dev/null | awk -F': ' '{print $2}' | grep '^pier-br[0-9]*$'); do
  kill -0 "${stale#pier-br}" 2>/dev/null || ip link del "$stale" 2>/dev/null || true
done
# A private /24 no network of the machine's holds (a route to it that needs no gateway means
# one does: another run's bridge, or the machine's own), from 172.29.0.0/16 unless
# PIER_DOCKER_SUBNET names one.
taken() {
  local route
  route=$(ip route get "$1.1" 2>/dev/null) && ! grep " via " <<<"$route" >/dev/null
}
subnet=
for candidate in ${PIER_DOCKER_SUBNET:-$(seq -f "172.29.%g" $(($$ % 200 + 20)) 254) $(seq -f "172.29.%g" 20 254)}; do
  if ! taken "$candidate"; then
    subnet=$candidate
    break
  fi
done
if [ -z "$subnet" ]; then
  echo "docker.sh: no free /24 for the test bridge; set PIER_DOCKER_SUBNET (e.g. 10.231.7)" >&2
  exit 1
fi
dir=$(mktemp -d /tmp/pier-docker.XXXXXX)
# Others may reach the socket (root:docker, 0660), as a user in the docker group does.
chmod 755 "$dir"
host="unix://$dir/docker.sock"
dockerd_pid=
finish() {
  set +e
  if [ -n "$dockerd_pid" ]; then
    # The tests' containers first: busybox ignores SIGTERM as PID 1, and dockerd would wait
    # out each one's stop timeout.
    docker -H "$host" ps -aq | xargs -r docker -H "$host" rm -f >/dev/null 2>&1
    # Its own children (containerd, the shims), by parent, for the case it must be killed.
    local children
    children=$(cat "/proc/$dockerd_pid/task/"*/children 2>/dev/null)
    kill "$dockerd_pid" 2>/dev/null
    for _ in $(seq 300); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.05; done
    if kill -0 "$dockerd_pid" 2>/dev/null; then
      kill -9 "$dockerd_pid" $children 2>/dev/null
    fi
  fi
  # What a daemon stopped mid-way leaves mounted (a host-network container's netns file).
  awk -v d="$dir/" 'index($2, d) == 1 {print $2}' /proc/self/mounts | sort -r |
    xargs -r -n1 umount -l 2>/dev/null
  ip link del "$bridge" 2>/dev/null
  rm -rf "$dir"
}
trap finish EXIT

ip link add "$bridge" type bridge
ip addr add "$subnet.1/24" dev "$bridge"
ip link set "$bridge" up
# From / : docker-proxy works in dockerd's folder, which must not be a project of anyone's.
# Its own empty configuration: the machine's /etc/docker/daemon.json is the machine's.
echo '{}' >"$dir/daemon.json"
(cd / && exec dockerd --config-file "$dir/daemon.json" --data-root "$dir/data" \
  --exec-root "$dir/exec" -H "$host" \
  --pidfile "$dir/dockerd.pid" --storage-driver vfs --bridge "$bridge" \
  --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false \
  --containerd-namespace pier-tests --containerd-plugins-namespace pier-tests-plugins \
  </dev/null >"$dir/dockerd.log" 2>&1) &
dockerd_pid=$!
if ! wait_until "dockerd on $host" docker -H "$host" version; then
  tail -20 "$dir/dockerd.log" >&2
  exit 1
fi

# The image: busybox-static's one binary, as /bin/busybox.
busybox=$(dpkg -L busybox-static | grep '/busybox$' | head -1)
mkdir -p "$dir/rootfs/bin"
cp "$busybox" "$dir/rootfs/bin/busybox"
tar -C "$dir/rootfs" -c . | docker -H "$host" import - pier-busybox:test >/dev/null

set +e
PIER_DOCKER_HOST=$host "$@"
status=$?
exit "$status"
