#!/usr/bin/env bash
# Imports Docker images into the running test cluster's containerd (see up.sh),
# where pods can use them with imagePullPolicy: Never (there is no registry).
# A name without a registry lands as docker.io/library/NAME (or docker.io/NAME),
# which is what the kubelet asks for when a pod says just "busybox:latest".
#
# Usage:   scripts/k8s/load-image.sh IMAGE...
# Environment:
#   LITTERBOX_K8S_STATE  state directory of the cluster (default /var/lib/litterbox-k8s)
set -euo pipefail

STATE=${LITTERBOX_K8S_STATE:-/var/lib/litterbox-k8s}
sock=$STATE/run/containerd.sock

[ $# -gt 0 ] || { echo "usage: $0 IMAGE..." >&2; exit 2; }
[ -S "$sock" ] || { echo "k8s: no cluster containerd at $sock (run up.sh)" >&2; exit 1; }
for i in "$@"; do
  docker image inspect "$i" >/dev/null 2>&1 || { echo "k8s: docker has no image $i" >&2; exit 1; }
done
# One archive, so layers the images share are read once.
docker save "$@" | ctr -a "$sock" -n k8s.io images import -
