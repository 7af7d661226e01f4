#!/usr/bin/env bash
# Tears down the test cluster that up.sh started, completely: its pods, its
# processes (by recorded pid), the containerd shims of its own containerd, the
# mounts under its state directory, the state directory itself, the volume pool
# /tmp/litterbox-k8s-pv, the CNI bridge lbk8s0 and any iptables chains the CNI
# plugins added for the pod network 10.244.0.0/24. Docker, its containerd and
# its containers are never touched. Safe to run when nothing is up (exits 0).
#
# Usage:   scripts/k8s/down.sh            (as root)
# Environment:
#   LITTERBOX_K8S_STATE  state directory (default /var/lib/litterbox-k8s)
set -euo pipefail

STATE=${LITTERBOX_K8S_STATE:-/var/lib/litterbox-k8s}
pv_root=/tmp/litterbox-k8s-pv
bridge=lbk8s0
pod_net='10\.244\.'

log() { echo "k8s: $*" >&2; }
die() { log "$*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root"
case $STATE in /*) ;; *) die "LITTERBOX_K8S_STATE must be an absolute path" ;; esac
STATE=$(realpath -m "$STATE")
# Everything below removes things under $STATE: refuse shallow directories.
case $STATE in /*/*) ;; *) die "refusing state directory $STATE" ;; esac
case $STATE in /usr | /usr/* | /etc | /etc/* | /bin/* | /sbin/* | /lib/* | /boot/* | /proc/* | /sys/* | /dev/*)
  die "refusing state directory $STATE" ;;
esac

sock=$STATE/run/containerd.sock
kubectl=$STATE/bin/kubectl
kc=$STATE/pki/admin.kubeconfig

pid_of() { # name: recorded pid of a live process started for this state dir
  local pid
  pid=$(cat "$STATE/pids/$1.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  # Only a process whose command line names the state dir (a recycled pid won't).
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$STATE" || return 1
  is_live "$pid" && echo "$pid"
}

is_live() { # pid: exists and is not a zombie
  local s
  s=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$s" ] && [ "$s" != Z ]
}

stop() { # names...: SIGTERM, up to 5 s, then SIGKILL
  local n pid pids=()
  for n in "$@"; do
    if pid=$(pid_of "$n"); then kill -TERM "$pid" 2>/dev/null || true; pids+=("$pid"); fi
    rm -f "$STATE/pids/$n.pid"
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  local i
  for i in $(seq 25); do
    local left=()
    for pid in "${pids[@]}"; do is_live "$pid" && left+=("$pid"); done
    [ ${#left[@]} -gt 0 ] || return 0
    pids=("${left[@]}")
    [ "$i" -lt 25 ] && sleep 0.2
  done
  log "killing $* (pids ${pids[*]})"
  kill -KILL "${pids[@]}" 2>/dev/null || true
}

kctl() { "$kubectl" --kubeconfig "$kc" "$@"; }

# Nothing recreates or schedules pods any more; the kubelet still stops them.
stop kube-controller-manager kube-scheduler
if [ -x "$kubectl" ] && [ -f "$kc" ] && kctl --request-timeout=3s get --raw /readyz >/dev/null 2>&1; then
  if pid_of kubelet >/dev/null; then
    log "deleting all pods"
    kctl delete pods --all --all-namespaces --grace-period=1 --timeout=30s >/dev/null 2>&1 ||
      log "some pods did not go away in 30 s: killing their containers"
  fi
fi
stop kubelet kube-apiserver

# What is left of the containers, through our own containerd.
if [ -S "$sock" ] && ctr -a "$sock" version >/dev/null 2>&1; then
  for ns in $(ctr -a "$sock" namespaces ls -q); do
    for t in $(ctr -a "$sock" -n "$ns" tasks ls -q); do
      ctr -a "$sock" -n "$ns" tasks rm -f "$t" >/dev/null 2>&1 || true
    done
  done
fi
stop containerd etcd

# Shims of our containerd (their command line names its socket) that outlived
# it, and their sockets: /run/containerd/s/SHA256(containerd socket/namespace/id).
for p in /proc/[0-9]*; do
  cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
  case $cmd in
    *containerd-shim*"-address $sock "*)
      log "killing shim ${p#/proc/}"
      kill -KILL "${p#/proc/}" 2>/dev/null || true
      if [[ $cmd =~ \ -namespace\ ([^ ]+)\  ]] && ns=${BASH_REMATCH[1]} && [[ $cmd =~ \ -id\ ([^ ]+)\  ]]; then
        rm -f "/run/containerd/s/$(printf '%s' "$sock/$ns/${BASH_REMATCH[1]}" | sha256sum | cut -c1-64)"
      fi
      ;;
  esac
done
# Anything still running in the kubelet's pod cgroups (Docker's are elsewhere),
# then the cgroups themselves.
for cg in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
  [ -d "$cg" ] || continue
  find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null | while read -r pid; do
    kill -KILL "$pid" 2>/dev/null || true
  done
done
for cg in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
  [ -d "$cg" ] || continue
  for _ in 1 2 3 4 5; do
    find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
    [ -d "$cg" ] || break
    sleep 0.2
  done
done

# Mounts under the state dir and the volume pool (netns, rootfs, volumes), deepest first.
mounts() {
  awk '{print $5}' /proc/self/mountinfo | while read -r m; do
    m=$(printf '%b' "$m")
    case $m in "$STATE"/* | "$STATE" | "$pv_root"/* | "$pv_root") echo "$m" ;; esac
  done | sort -r
}
for _ in 1 2 3; do
  mounted=$(mounts)
  [ -n "$mounted" ] || break
  while read -r m; do
    umount -R "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done <<<"$mounted"
done
[ -z "$(mounts)" ] || log "still mounted: $(mounts | tr '\n' ' ')"

# Our containerd keeps network namespaces under the state dir
# (netns_mounts_under_state_dir), so /var/run/netns is never ours to clean.
if [ -f "$STATE/containerd/config.toml" ] && ! grep -q '^ *netns_mounts_under_state_dir = true' "$STATE/containerd/config.toml"; then
  log "this state dir's containerd kept netns files in /var/run/netns: left alone"
fi

if [ -e "$STATE" ]; then
  log "removing $STATE"
  rm -rf --one-file-system "$STATE"
fi
rm -rf --one-file-system "$pv_root"
if ip link show "$bridge" >/dev/null 2>&1; then ip link del "$bridge"; fi
# Files libcni and the kubelet leave outside the state dir (the kubelet's
# device-plugin socket and /var/log/containers links have fixed places; libcni
# caches results in /var/lib/cni, as NETWORK-CONTAINERID-IFNAME).
for f in /var/lib/cni/results/litterbox-k8s-*-eth0; do
  [ -e "$f" ] || continue
  id=${f#/var/lib/cni/results/litterbox-k8s-}
  rm -f "$f" "/var/lib/cni/results/cni-loopback-${id%-eth0}-lo"
done
if [ -d /var/log/containers ]; then
  find /var/log/containers -maxdepth 1 -type l -lname "$STATE/*" -delete 2>/dev/null || true
fi
rm -f /var/lib/kubelet/device-plugins/kubelet.sock
# Those directories too, when nothing else uses them.
rmdir /var/lib/cni/results /var/lib/cni /var/log/containers \
  /var/lib/kubelet/device-plugins /var/lib/kubelet 2>/dev/null || true

# iptables rules the CNI plugins added for our network (they name the pod
# network 10.244. or, in comments, the network litterbox-k8s), then CNI-*
# chains left empty (or holding only the firewall plugin's jump to CNI-ADMIN):
# the plugins recreate those when anything needs them again.
ipt() { iptables -t "$table" "$@" 2>/dev/null; }
ipt_delete() { # rules as printed by -S
  local r
  sed 's/^-A /-D /' | while read -r r; do eval "ipt $r" || true; done
}
if command -v iptables >/dev/null; then
  for table in nat filter; do
    rules=$(ipt -S) || continue
    grep -E -- '^-A ' <<<"$rules" | grep -E -- "$pod_net|litterbox-k8s" | ipt_delete || true
    for _ in 1 2 3; do
      rules=$(ipt -S)
      gone=()
      while read -r c; do
        own=$(grep -E -- "^-A $c " <<<"$rules" | grep -vE -- '-j CNI-ADMIN$' || true)
        [ -n "$own" ] || gone+=("$c")
      done < <(awk '$1 == "-N" && $2 ~ /^CNI-/ && $2 != "CNI-ADMIN" {print $2}' <<<"$rules")
      [ ${#gone[@]} -gt 0 ] || break
      log "removing iptables chains ${gone[*]} (table $table)"
      for c in "${gone[@]}"; do
        grep -E -- "^-A .* -j $c( |\$)" <<<"$rules" | ipt_delete || true
        ipt -F "$c" || true
        ipt -X "$c" || true
      done
    done
    rules=$(ipt -S)
    if grep -q -- '^-N CNI-ADMIN$' <<<"$rules" && ! grep -qE -- '^-A CNI-ADMIN |-j CNI-ADMIN( |$)' <<<"$rules"; then
      ipt -X CNI-ADMIN || true
    fi
  done
fi
log "down"
