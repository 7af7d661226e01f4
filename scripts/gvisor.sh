#!/usr/bin/env bash
# Makes gVisor (runsc) available to the local Docker engine for the tests of
# isolation "gvisor": registers /usr/bin/runsc as the runtime "runsc" in
# /etc/docker/daemon.json and reloads the engine (SIGHUP; running containers
# are untouched). Podman needs no registration: it takes runsc by name.
#
# The runtime's flags are those these machines need (NOTES-docker.md):
# network=none, since runsc refuses to set up its own network in the
# namespace it finds here (a sandbox of network "none" has loopback either
# way), and host-uds=open, so a sandbox of network "allow" reaches its
# egress proxy's socket.
# Needs root. Usage: scripts/gvisor.sh
set -euo pipefail

runsc=${RUNSC:-/usr/bin/runsc}
conf=/etc/docker/daemon.json

if [ ! -x "$runsc" ]; then
  echo "installing runsc (gVisor) from Debian's packages"
  apt-get install -y -qq --no-install-recommends runsc >/dev/null
fi

want='["--network=none","--host-uds=open"]'
have=$(docker info --format '{{json .Runtimes.runsc}}' 2>/dev/null || true)
if [[ $have == *'"'"$runsc"'"'* && $have == *'--host-uds=open'* ]]; then
  echo "gvisor: runsc is registered with docker already"
  exit 0
fi

[ -f "$conf" ] || echo '{}' >"$conf"
tmp=$(mktemp)
python3 - "$conf" "$runsc" "$want" >"$tmp" <<'PY'
import json, sys
conf, runsc, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
with open(conf) as f:
    d = json.load(f)
d.setdefault("runtimes", {})["runsc"] = {"path": runsc, "runtimeArgs": args}
json.dump(d, sys.stdout, indent=2)
PY
cat "$tmp" >"$conf"
rm -f "$tmp"
pid=$(pidof dockerd)
kill -HUP "$pid"
for _ in $(seq 50); do
  if docker info --format '{{json .Runtimes.runsc}}' 2>/dev/null | grep -q -- '--host-uds=open'; then
    echo "gvisor: registered $runsc with docker as runtime runsc"
    exit 0
  fi
  sleep 0.2
done
echo "gvisor: dockerd did not take the runtime from $conf" >&2
exit 1
