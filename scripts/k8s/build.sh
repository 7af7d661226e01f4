#!/usr/bin/env bash
# Builds the Kubernetes components the test cluster runs (kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet, kubectl) from source through
# the Go module proxy: no registry or release download is reachable here.
# k8s.io/kubernetes points its staging modules at ./staging with replace lines
# that a downloaded module cannot follow, so a copy of the module has them
# replaced by the published versions of the same release.
# Binaries are cached by version; a warm run only checks they are there.
set -euo pipefail

version=${K8S_VERSION:-v1.31.4}
cache=${LITTERBOX_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/litterbox/k8s}/$version
bins=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)

built() {
  local b
  for b in "${bins[@]}"; do [ -x "$cache/bin/$b" ] || return 1; done
}
if built; then echo "$cache/bin"; exit 0; fi
# One build at a time: .ci/run starts one early, in the background, and the
# cluster's start waits here for it rather than building again.
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if built; then echo "$cache/bin"; exit 0; fi

staging=v0.${version#v1.}
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

echo "k8s: downloading k8s.io/kubernetes@$version" >&2
dir=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$dir" ] || { echo "k8s: go mod download k8s.io/kubernetes@$version gave no directory" >&2; exit 1; }
cp -r "$dir" "$work/src"
chmod -R u+w "$work/src"
cd "$work/src"
# Drop "k8s.io/x => ./staging/src/k8s.io/x" and pin k8s.io/x v0.0.0 to the release.
sed -i -e '/=> \.\/staging\/src\//d' go.mod
sed -i -E "s#^(\s*k8s\.io/[a-z0-9-]+) v0\.0\.0\$#\1 $staging#" go.mod
rm -f go.work go.work.sum

ld="-s -w -X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$version" | cut -d. -f2) -X k8s.io/client-go/pkg/version.gitVersion=$version"
mkdir -p "$cache/bin.new"
for b in "${bins[@]}"; do
  echo "k8s: building $b" >&2
  GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "$ld" -o "$cache/bin.new/$b" "./cmd/$b"
done
rm -rf "${cache:?}/bin"
mv "$cache/bin.new" "$cache/bin"
echo "$cache/bin"
