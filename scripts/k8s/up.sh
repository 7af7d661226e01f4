#!/usr/bin/env bash
# Brings up a throwaway single-node Kubernetes cluster on this machine for
# Litterbox's integration tests, and returns once the node is Ready and the
# default service account exists. No registry is reachable here, so every image
# comes from the local Docker engine and pods use imagePullPolicy: Never.
#
# Usage:   eval "$(scripts/k8s/up.sh)"      (needs root and a running Docker)
# Prints:  export KUBECONFIG=...; export PATH=<built kubectl dir>:$PATH
#
# Pieces: etcd (Debian's etcd-server), kube-apiserver, kube-controller-manager,
# kube-scheduler and kubelet built by build.sh, and a second containerd beside
# Docker's (own config, root, state and socket; Docker's is untouched) with the
# bridge CNI plugin (bridge lbk8s0, pods 10.244.0.0/24, services 10.96.0.0/16).
# No kube-proxy, no CoreDNS. Everything listens on 127.0.0.1 only:
# etcd 12379/12380, apiserver 16443, kubelet 10250 (healthz 10248),
# controller-manager 10257, scheduler 10259. Node name: localhost.
# Storage: default StorageClass litterbox-local backed by a pool of hostPath
# PersistentVolumes under /tmp/litterbox-k8s-pv, each used once (reclaim
# policy Retain): Recycle, under the churn of two claims a sandbox, was seen
# to mark a volume Available with an earlier claim's files still in it.
# RuntimeClass gvisor runs pods under gVisor (Debian's runsc, through runc's shim).
# Images imported into the cluster: the pause image (internal/k8spause),
# busybox:latest, litterbox-test/{debian,python}:bookworm,
# litterbox-test/noshell:latest when Docker has them, and LITTERBOX_K8S_IMAGES.
# load-image.sh adds more later; down.sh removes everything.
# If the cluster is already up and healthy, says so and exits 0; a broken one
# is torn down (down.sh) and started afresh.
#
# Environment:
#   LITTERBOX_K8S_STATE    state directory (default /var/lib/litterbox-k8s):
#                          certs, etcd data, containerd, kubelet, logs/, pids/
#   LITTERBOX_K8S_IMAGES   extra Docker images to import (space-separated)
#   LITTERBOX_K8S_PVS      number of PersistentVolumes in the pool (default 400: each
#                          is used once, and a sandbox claims two, /src and its home)
#   LITTERBOX_K8S_PV_SIZE  capacity of each (default 20Gi: hostPath enforces no size, and a sandbox claims 10Gi)
#   K8S_VERSION, LITTERBOX_K8S_CACHE: passed on to build.sh
set -euo pipefail

start_time=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
STATE=${LITTERBOX_K8S_STATE:-/var/lib/litterbox-k8s}
export LITTERBOX_K8S_STATE=$STATE
pv_root=/tmp/litterbox-k8s-pv
pv_count=${LITTERBOX_K8S_PVS:-400}
pv_size=${LITTERBOX_K8S_PV_SIZE:-20Gi}
pause_image=litterbox.local/pause:1
sock=$STATE/run/containerd.sock
kc=$STATE/kubeconfig
admin_kc=$STATE/pki/admin.kubeconfig
etcd_port=12379
etcd_peer_port=12380
api_port=16443

log() { echo "k8s: $*" >&2; }
die() { log "$*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root"
case $STATE in /*) ;; *) die "LITTERBOX_K8S_STATE must be an absolute path" ;; esac

# Debian packages that may be missing on a fresh machine.
need=()
command -v etcd >/dev/null || need+=(etcd-server)
command -v containerd >/dev/null && command -v ctr >/dev/null || need+=(containerd)
command -v runc >/dev/null || need+=(runc)
command -v runsc >/dev/null || need+=(runsc)
[ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
command -v openssl >/dev/null || need+=(openssl)
command -v ip >/dev/null || need+=(iproute2)
command -v iptables >/dev/null || need+=(iptables)
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

bin=$("$here/build.sh")
kubectl=$bin/kubectl

print_env() {
  echo "export KUBECONFIG=$kc"
  echo "export PATH=$bin:\$PATH"
}

alive() { # name: its recorded process is running
  local pid
  pid=$(cat "$STATE/pids/$1.pid" 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

node_status() { # Ready condition/taints of the node
  "$kubectl" --kubeconfig "$admin_kc" --request-timeout=5s get node localhost \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}/{.spec.taints}' 2>/dev/null
}
# Ready, and the controller-manager took the not-ready taint off.
node_ready() { [ "$(node_status)" = "True/" ]; }

components=(etcd containerd kube-apiserver kube-controller-manager kube-scheduler kubelet)

if [ -e "$STATE" ]; then
  healthy=1
  for c in "${components[@]}"; do alive "$c" || healthy=0; done
  if [ $healthy = 1 ] && [ "$(node_status | cut -d/ -f1)" = True ]; then
    log "already up and healthy (state in $STATE)"
    if [ -n "${LITTERBOX_K8S_IMAGES:-}" ]; then
      # shellcheck disable=SC2086 # a list of names
      "$here/load-image.sh" $LITTERBOX_K8S_IMAGES >"$STATE/logs/images.log" 2>&1 ||
        { tail -n 20 "$STATE/logs/images.log" >&2; die "importing $LITTERBOX_K8S_IMAGES failed"; }
    fi
    print_env
    exit 0
  fi
  log "a previous cluster in $STATE is not healthy: tearing it down"
  "$here/down.sh" >&2
fi

# --- The pause image: a static Go program made into an image. ------------------
# Rebuilt each time (cheap with a warm Go cache; the build is reproducible), and
# imported into Docker only when the binary changed.
mkdir -p "$STATE"/{pki,run,logs,pids,etcd,cni/net.d,cni/ipam,containerd,kubelet,kubelet-plugins,pod-logs,bin,pause}
chmod 700 "$STATE/pki"
ln -sf "$kubectl" "$STATE/bin/kubectl"
(cd "$repo" && CGO_ENABLED=0 GOWORK=off go build -trimpath -ldflags '-s -w' -o "$STATE/pause/pause" ./internal/k8spause)
pause_sum=$(sha256sum "$STATE/pause/pause" | cut -c1-64)
if [ "$(docker image inspect -f '{{index .Config.Labels "litterbox.pause.sha256"}}' "$pause_image" 2>/dev/null)" != "$pause_sum" ]; then
  log "importing $pause_image into docker"
  tar -C "$STATE/pause" --owner=0 --group=0 -c pause |
    docker import -c 'ENTRYPOINT ["/pause"]' -c "LABEL litterbox.pause.sha256=$pause_sum" - "$pause_image" >/dev/null
fi

# --- Certificates. -----------------------------------------------------------
pki=$STATE/pki
newkey=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${newkey[@]}" -keyout "$pki/ca.key" -out "$pki/ca.crt" -days 3650 \
  -subj /CN=litterbox-k8s-ca -addext basicConstraints=critical,CA:TRUE \
  -addext keyUsage=critical,keyCertSign,cRLSign,digitalSignature 2>/dev/null
cert() { # name subject extendedKeyUsage [subjectAltName]
  local ext="basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=$3"
  [ -z "${4:-}" ] || ext+="
subjectAltName=$4"
  openssl req -new "${newkey[@]}" -keyout "$pki/$1.key" -out "$pki/$1.csr" -subj "$2" 2>/dev/null
  openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
    -set_serial "0x$(openssl rand -hex 16)" -days 3650 -out "$pki/$1.crt" -extfile <(echo "$ext") 2>/dev/null
  rm -f "$pki/$1.csr"
}
cert apiserver /CN=kube-apiserver serverAuth DNS:localhost,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.96.0.1
cert admin /O=system:masters/CN=litterbox-admin clientAuth
cert apiserver-kubelet-client /O=system:masters/CN=kube-apiserver-kubelet-client clientAuth
cert kubelet-server /CN=localhost serverAuth DNS:localhost,IP:127.0.0.1
cert kubelet-client /O=system:nodes/CN=system:node:localhost clientAuth
openssl ecparam -genkey -name prime256v1 -noout -out "$pki/sa.key"
openssl ec -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null

b64() { base64 -w0 <"$1"; }
kubeconfig() { # file user cert-name context-name
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: litterbox-test
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority-data: $(b64 "$pki/ca.crt")
users:
- name: $2
  user:
    client-certificate-data: $(b64 "$pki/$3.crt")
    client-key-data: $(b64 "$pki/$3.key")
contexts:
- name: $4
  context:
    cluster: litterbox-test
    user: $2
    namespace: default
current-context: $4
EOF
  chmod 600 "$1"
}
kubeconfig "$admin_kc" litterbox-admin admin litterbox-test
kubeconfig "$pki/kubelet.kubeconfig" system:node:localhost kubelet-client default
kubeconfig "$kc" litterbox-admin admin litterbox-test

# --- Configuration files. ------------------------------------------------------
cat >"$STATE/cni/net.d/10-litterbox.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "litterbox-k8s",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "lbk8s0",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$STATE/cni/ipam",
        "ranges": [[{"subnet": "10.244.0.0/24"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "firewall"}
  ]
}
EOF

# Network namespaces live under the state dir (netns_mounts_under_state_dir),
# never in /var/run/netns. The loopback plugin is run by containerd itself.
cat >"$STATE/containerd/config.toml" <<EOF
version = 2
root = "$STATE/containerd/root"
state = "$STATE/containerd/state"
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = "$sock"

[plugins."io.containerd.internal.v1.opt"]
  path = "$STATE/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause_image"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$STATE/containerd/runc"
    # gVisor, for RuntimeClass gvisor: runc's shim driving runsc, as Docker
    # runs it (Debian's runsc has no containerd shim of its own), through a
    # wrapper that gives it Docker's flags (scripts/gvisor.sh).
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.gvisor]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.gvisor.options]
        SystemdCgroup = false
        BinaryName = "$STATE/bin/runsc"
        Root = "$STATE/containerd/runsc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
    max_conf_num = 1
EOF

# Each container of a pod becomes a gVisor sandbox of its own, as on
# Docker: told a container joins its pod's sandbox (CRI's annotations),
# runsc runs it in there, where runc's shim cannot see it end, and a pod
# never stopped. Sandboxes of network "none" need no shared network. And
# runc's shim takes a kill of an ended container for done only in runc's
# words: runsc's are put in them.
cat >"$STATE/bin/runsc" <<EOF
#!/bin/sh
runsc=$(command -v runsc)
prev=
for a; do
  if [ "\$prev" = --bundle ] && [ -f "\$a/config.json" ]; then
    sed -i 's/"io.kubernetes.cri.container-type"/"litterbox.dev\/cri-container-type"/' "\$a/config.json"
  fi
  prev=\$a
done
set -- --network=none --host-uds=open "\$@"
case " \$* " in
*" kill "*)
  out=\$("\$runsc" "\$@" 2>&1) && exit 0
  rc=\$?
  case \$out in *"is not running"*) echo "container not running" >&2 ;; *) echo "\$out" >&2 ;; esac
  exit \$rc ;;
esac
exec "\$runsc" "\$@"
EOF
chmod +x "$STATE/bin/runsc"

cat >"$STATE/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
containerRuntimeEndpoint: unix://$sock
cgroupDriver: cgroupfs
failSwapOn: false
tlsCertFile: $pki/kubelet-server.crt
tlsPrivateKeyFile: $pki/kubelet-server.key
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: $pki/ca.crt
authorization:
  mode: Webhook
# The disk may be fairly full: evict late, and never garbage-collect images
# (they cannot be pulled again).
evictionHard:
  memory.available: 50Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
  imagefs.inodesFree: 1%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
podLogsDir: $STATE/pod-logs
volumePluginDir: $STATE/kubelet-plugins
serializeImagePulls: false
maxPods: 110
nodeStatusUpdateFrequency: 4s
EOF

# The recycler pod (scrubs a released hostPath volume). The default one pulls
# an image from a registry; busybox's find has no -delete, hence rm.
cat >"$STATE/recycler-pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  generateName: pv-recycler-
  namespace: default
spec:
  activeDeadlineSeconds: 60
  restartPolicy: Never
  automountServiceAccountToken: false
  volumes:
  - name: vol
  containers:
  - name: pv-recycler
    image: busybox:latest
    imagePullPolicy: Never
    command: ["/bin/sh", "-c", "test -e /scrub && rm -rf /scrub/..?* /scrub/.[!.]* /scrub/* && test -z \"$(ls -A /scrub)\" || exit 1"]
    volumeMounts:
    - name: vol
      mountPath: /scrub
EOF

# --- Processes. --------------------------------------------------------------
start() { # name command...: detached (own session), logs and pid recorded
  local name=$1; shift
  setsid "$@" >"$STATE/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$STATE/pids/$name.pid"
}

wait_for() { # seconds description log command...
  local deadline=$(($(date +%s) + $1)) what=$2 logf=$3; shift 3
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "timed out waiting for $what; last lines of $logf:"
      tail -n 20 "$logf" >&2 || true
      exit 1
    fi
    sleep 0.2
  done
}

running() { # name: fail loudly if it died
  alive "$1" || { log "$1 exited; last lines of $STATE/logs/$1.log:"; tail -n 20 "$STATE/logs/$1.log" >&2; exit 1; }
}

start etcd etcd --name litterbox-k8s --data-dir "$STATE/etcd" \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
  --initial-cluster "litterbox-k8s=http://127.0.0.1:$etcd_peer_port" --initial-cluster-state new \
  --unsafe-no-fsync --snapshot-count 10000 --log-level warn

start containerd containerd --config "$STATE/containerd/config.toml"

start kube-apiserver "$bin/kube-apiserver" \
  --bind-address=127.0.0.1 --secure-port=$api_port --advertise-address=127.0.0.1 \
  --endpoint-reconciler-type=none \
  --etcd-servers="http://127.0.0.1:$etcd_port" \
  --service-cluster-ip-range=10.96.0.0/16 \
  --client-ca-file="$pki/ca.crt" \
  --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
  --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" \
  --kubelet-client-key="$pki/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority="$pki/ca.crt" \
  --kubelet-preferred-address-types=Hostname \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$pki/sa.pub" \
  --service-account-signing-key-file="$pki/sa.key" \
  --authorization-mode=Node,RBAC \
  --allow-privileged=true \
  --profiling=false

# Images, while the control plane starts.
wait_for 30 containerd "$STATE/logs/containerd.log" ctr -a "$sock" version
images=("$pause_image")
for i in busybox:latest litterbox-test/debian:bookworm litterbox-test/python:bookworm litterbox-test/noshell:latest ${LITTERBOX_K8S_IMAGES:-}; do
  if docker image inspect "$i" >/dev/null 2>&1; then images+=("$i")
  else log "docker has no $i: not imported"; fi
done
docker image inspect busybox:latest >/dev/null 2>&1 ||
  log "warning: without busybox:latest released volumes cannot be recycled (make image builds it)"
"$here/load-image.sh" "${images[@]}" >"$STATE/logs/images.log" 2>&1 &
images_pid=$!

wait_for 60 kube-apiserver "$STATE/logs/kube-apiserver.log" \
  "$kubectl" --kubeconfig "$admin_kc" --request-timeout=2s get --raw /readyz
running etcd

start kube-controller-manager "$bin/kube-controller-manager" \
  --kubeconfig="$admin_kc" \
  --authentication-kubeconfig="$admin_kc" --authorization-kubeconfig="$admin_kc" \
  --bind-address=127.0.0.1 --leader-elect=false \
  --service-cluster-ip-range=10.96.0.0/16 \
  --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key" \
  --root-ca-file="$pki/ca.crt" \
  --service-account-private-key-file="$pki/sa.key" \
  --pv-recycler-pod-template-filepath-hostpath="$STATE/recycler-pod.yaml" \
  --flex-volume-plugin-dir="$STATE/kubelet-plugins" \
  --profiling=false

start kube-scheduler "$bin/kube-scheduler" \
  --kubeconfig="$admin_kc" \
  --authentication-kubeconfig="$admin_kc" --authorization-kubeconfig="$admin_kc" \
  --bind-address=127.0.0.1 --leader-elect=false --profiling=false

start kubelet "$bin/kubelet" \
  --config="$STATE/kubelet/config.yaml" \
  --kubeconfig="$pki/kubelet.kubeconfig" \
  --root-dir="$STATE/kubelet" \
  --hostname-override=localhost

# --- RuntimeClass gvisor (containerd's handler gvisor: runsc with its network
# off, as on Docker), and storage: a default class and a pool of hostPath
# volumes, each used once. --
rm -rf "$pv_root"
mkdir -p "$pv_root"
{
  cat <<EOF
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: gvisor
handler: gvisor
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: litterbox-local
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
reclaimPolicy: Delete
EOF
  for n in $(seq -w 1 "$pv_count"); do
    mkdir -m 0777 "$pv_root/$n"
    chmod 0777 "$pv_root/$n"
    cat <<EOF
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: litterbox-pv-$n
  labels:
    litterbox.dev/pool: litterbox-local
spec:
  storageClassName: litterbox-local
  capacity:
    storage: $pv_size
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  hostPath:
    path: $pv_root/$n
    type: Directory
EOF
  done
} >"$STATE/storage.yaml"
# Keep what the API says of the objects in a log.
"$kubectl" --kubeconfig "$admin_kc" create -f "$STATE/storage.yaml" >"$STATE/logs/storage.log" 2>&1 ||
  { tail -n 20 "$STATE/logs/storage.log" >&2; die "creating the storage objects failed"; }

default_sa() { "$kubectl" --kubeconfig "$admin_kc" --request-timeout=5s -n default get serviceaccount default; }
wait_for 60 "the default service account" "$STATE/logs/kube-controller-manager.log" default_sa
wait_for 90 "node localhost Ready" "$STATE/logs/kubelet.log" node_ready
for c in "${components[@]}"; do running "$c"; done
wait "$images_pid" || { tail -n 20 "$STATE/logs/images.log" >&2; die "importing images failed"; }

log "up in $(($(date +%s) - start_time)) s; state in $STATE"
print_env
