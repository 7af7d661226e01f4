#!/usr/bin/env bash
# Makes a local busybox:latest for tests and CI, where no registry answers.
# Never replaces an image that is already there (a real one on a user's machine).
# Usage: scripts/busybox-image.sh [runtime]   (runtime: docker (default) or podman)
set -euo pipefail

runtime=${1:-${LITTERBOX_RUNTIME:-docker}}
image=busybox:latest

if "$runtime" image inspect "$image" >/dev/null 2>&1; then
  echo "$image already present in $runtime; leaving it alone"
  exit 0
fi
if "$runtime" pull -q "$image" >/dev/null 2>&1; then
  echo "pulled $image"
  exit 0
fi

bb=$(command -v busybox || true)
if [ -z "$bb" ] || ! "$bb" --list >/dev/null 2>&1; then
  echo "busybox binary not found: install Debian's busybox-static (apt-get install busybox-static)" >&2
  exit 1
fi
if ! { LC_ALL=C ldd "$bb" 2>&1 || true; } | grep -q 'not a dynamic executable\|statically linked'; then
  echo "$bb is not statically linked: install Debian's busybox-static" >&2
  exit 1
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/etc" "$root/tmp" "$root/root" "$root/home"
chmod 1777 "$root/tmp"
cp "$bb" "$root/bin/busybox"
for applet in $("$bb" --list); do
  [ "$applet" = busybox ] || ln -s busybox "$root/bin/$applet"
done
cat >"$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/home:/bin/false
PASSWD
cat >"$root/etc/group" <<'GROUP'
root:x:0:
nogroup:x:65534:
GROUP
tar -C "$root" --numeric-owner --owner=0 --group=0 -c . |
  "$runtime" import -c 'CMD ["sh"]' -c 'ENV PATH=/bin' - "$image" >/dev/null
echo "built local $image from $bb"
