#!/usr/bin/env bash
# Runs a command with the throwaway test cluster up: brings it up
# (scripts/k8s/up.sh; the components are built once and cached), points
# KUBECONFIG and PATH (its kubectl) at it, runs the command, and tears the
# cluster down however the command ends, unless LITTERBOX_K8S_KEEP=1.
# Needs root (a second containerd, a kubelet).
# Usage: scripts/k8s/with-cluster.sh COMMAND [ARG...]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
state=${LITTERBOX_K8S_STATE:-/var/lib/litterbox-k8s}

bin=$("$here/build.sh")
if [ "${LITTERBOX_K8S_KEEP:-0}" != 1 ]; then
  trap '"$here/down.sh" >/dev/null 2>&1 || echo "k8s: down.sh failed; run it by hand" >&2' EXIT
fi
"$here/up.sh" >&2
export KUBECONFIG="$state/kubeconfig"
export PATH="$bin:$PATH"
"$@"
