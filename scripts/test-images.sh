#!/usr/bin/env bash
# Makes the local images of the integration and e2e "image matrix", where no
# registry answers: Debian bookworm minbase, the same with python3 and pytest
# (a toolchain image), the same with this machine's Go, and an image with no
# shell at all. The Debian ones come
# from debootstrap against the Debian mirror, in parallel; downloaded packages
# are kept under ${XDG_CACHE_HOME:-~/.cache}/litterbox-debootstrap for rebuilds.
# Never replaces an image that is already there.
# Usage: scripts/test-images.sh [runtime]   (runtime: docker (default) or podman)
set -euo pipefail

runtime=${1:-${LITTERBOX_RUNTIME:-docker}}
mirror=${LITTERBOX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm
path_env='ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

present() {
  if "$runtime" image inspect "$1" >/dev/null 2>&1; then
    echo "$1 already present in $runtime; leaving it alone"
    return 0
  fi
  return 1
}

as_root=()
pids=()
work=$(mktemp -d)
cleanup() {
  # Let running debootstraps end (and unmount) first; never cross into a mount.
  wait "${pids[@]}" 2>/dev/null || true
  "${as_root[@]}" rm -rf --one-file-system "$work"
}
trap cleanup EXIT

# No shell, no binaries: only the files a container user lookup needs.
image=litterbox-test/noshell:latest
if ! present "$image"; then
  root=$work/noshell
  mkdir -p "$root/etc" "$root/tmp"
  chmod 1777 "$root/tmp"
  cat >"$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/nonexistent
nobody:x:65534:65534:nobody:/nonexistent:/nonexistent
PASSWD
  cat >"$root/etc/group" <<'GROUP'
root:x:0:
nogroup:x:65534:
GROUP
  tar -C "$root" --numeric-owner --owner=0 --group=0 -c . |
    "$runtime" import -c 'CMD ["/nonexistent"]' -c "$path_env" - "$image" >/dev/null
  echo "built local $image (no shell)"
fi

# name, then debootstrap --include packages (none for plain minbase).
debian=()
present litterbox-test/debian:$suite || debian+=("litterbox-test/debian:$suite|")
present litterbox-test/python:$suite || debian+=("litterbox-test/python:$suite|python3,python3-pytest,python3-pip,curl,wget")  # as the official python images have

# go_image: the Debian image with this machine's Go toolchain in /usr/local/go,
# as the official golang images have it (no registry serves those here).
go_image() {
  local image=litterbox-test/go:$suite goroot ctx
  present "$image" && return 0
  if [ "$runtime" != docker ]; then
    echo "skipping $image: it is built with docker build only" >&2
    return 0
  fi
  goroot=$(go env GOROOT)
  ctx=$work/go-image
  mkdir -p "$ctx"
  printf '%s\n' "FROM litterbox-test/debian:$suite" 'COPY go /usr/local/go' \
    'ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    'ENV GOTOOLCHAIN=local' >"$ctx/Dockerfile"
  # The toolchain without its tests and docs: what go build and go mod need.
  tar -c -C "$ctx" Dockerfile -C "$(dirname "$goroot")" --exclude="$(basename "$goroot")/test" \
    --exclude="$(basename "$goroot")/doc" --transform="s,^$(basename "$goroot"),go," "$(basename "$goroot")" |
    docker build -q -t "$image" - >/dev/null
  echo "built local $image ($(go env GOVERSION))"
}

if [ ${#debian[@]} -eq 0 ]; then
  go_image
  exit 0
fi

if ! command -v debootstrap >/dev/null && [ ! -x /usr/sbin/debootstrap ]; then
  echo "debootstrap not found: install Debian's debootstrap (apt-get install debootstrap)" >&2
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "debootstrap needs root: run $0 as root" >&2; exit 1; }
  echo "debootstrap needs root; using sudo"
  as_root=(sudo)
  sudo -v # ask for a password once, not from two parallel builds
fi
debootstrap=$(command -v debootstrap || echo /usr/sbin/debootstrap)

cache=
cache_home=${XDG_CACHE_HOME:-${HOME:+$HOME/.cache}}
if [ -n "$cache_home" ]; then
  cache=$cache_home/litterbox-debootstrap
  mkdir -p "$cache" 2>/dev/null || cache=
  case $cache in /*) ;; *) cache= ;; esac # debootstrap wants an absolute path
fi

# build NAME INCLUDE: debootstrap into $work, then import. Logs to $work/NAME.log.
build() {
  local name=$1 include=$2 slug=${1//[\/:]/_}
  local root=$work/$slug args=(--variant=minbase)
  [ -z "$include" ] || args+=("--include=$include")
  if [ -n "$cache" ]; then
    # One cache per image: two debootstraps must not write the same file at once.
    mkdir -p "$cache/$slug" && args+=("--cache-dir=$cache/$slug")
  fi
  "${as_root[@]}" "$debootstrap" "${args[@]}" "$suite" "$root" "$mirror"
  # Nothing from the build machine or the download in the image.
  "${as_root[@]}" rm -rf --one-file-system "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
  "${as_root[@]}" find "$root/var/cache/apt/archives" -name '*.deb' -delete
  "${as_root[@]}" rm -f "$root/etc/resolv.conf" "$root/etc/hostname"
  : | "${as_root[@]}" tee "$root/etc/resolv.conf" >/dev/null
  echo localhost | "${as_root[@]}" tee "$root/etc/hostname" >/dev/null
  "${as_root[@]}" tar -C "$root" --numeric-owner --exclude='./dev/*' -c . |
    "$runtime" import -c 'CMD ["bash"]' -c "$path_env" - "$name" >/dev/null
}

start=$SECONDS
names=()
for spec in "${debian[@]}"; do
  name=${spec%%|*}
  names+=("$name")
  echo "building $name with debootstrap $suite from $mirror${cache:+ (cache $cache)}"
  build "$name" "${spec#*|}" >"$work/${name//[\/:]/_}.log" 2>&1 &
  pids+=($!)
done

failed=0
for i in "${!pids[@]}"; do
  name=${names[$i]}
  if wait "${pids[$i]}"; then
    echo "built local $name"
  else
    echo "building $name failed; the end of its log:" >&2
    tail -n 20 "$work/${name//[\/:]/_}.log" >&2
    failed=1
  fi
done
pids=()
[ "$failed" = 0 ] || exit 1
echo "debootstrap images done in $((SECONDS - start))s"
go_image
