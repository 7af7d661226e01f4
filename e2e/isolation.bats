#!/usr/bin/env bats
# Isolation and the security defaults (README: "Security").

# shellcheck disable=SC2154,SC2030,SC2031 # bats sets status/output/lines/stderr; each test is a subshell
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers; }
setup() {
  common_setup
  create box
  C=$(container_of box)
}
teardown() { common_teardown; }

@test "AC4.1: ls /host/root fails inside the sandbox and the container has no host mounts" {
  run lb exec box -- ls /host/root </dev/null
  assert_failure
  assert_output --partial "No such file or directory"
  # The host repository is not visible under its own path either.
  run lb exec box -- ls "$REPO" </dev/null
  assert_failure

  # A file only the host has is nowhere in the container.
  canary=canary-$(rand_hex)
  printf 'secret\n' >"$REPO/$canary"
  run lb exec box -- find / -path /proc -prune -o -path /sys -prune -o -name "$canary" -print </dev/null
  assert_output ""

  # docker inspect: three volumes and nothing else: the named source volume
  # at /src, the named home volume, and the container's own helper volume at
  # /.litterbox.
  assert_equal "$(inspect "$C" '{{len .Mounts}}')" 3
  assert_equal "$(inspect "$C" '{{range .Mounts}}{{if eq .Destination "/home/litterbox"}}{{.Type}} {{.Name}} {{.RW}}{{end}}{{end}}')" \
    "volume $C-home true"
  assert_equal "$(inspect "$C" '{{range .Mounts}}{{if eq .Destination "/src"}}{{.Type}} {{.Name}} {{.RW}}{{end}}{{end}}')" \
    "volume $(volume_of box) true"
  assert_equal "$(inspect "$C" '{{range .Mounts}}{{if eq .Destination "/.litterbox"}}{{.Type}}{{end}}{{end}}')" volume
  # The sandbox user can run the helper but not replace it.
  run lb exec box -- touch /.litterbox/x </dev/null
  assert_failure
  # shellcheck disable=SC2016 # expanded in the sandbox
  run lb exec box -- sh -c 'for f in /.litterbox/*/litterbox-helper; do : >"$f" || exit 1; done' </dev/null
  assert_failure
  assert_equal "$(inspect "$C" '{{range .Mounts}}{{if eq .Type "bind"}}{{.Source}}{{end}}{{end}}')" ""
  binds=$(inspect "$C" '{{json .HostConfig.Binds}}')
  [[ $binds == null || $binds == "[]" ]] || fail "HostConfig.Binds: $binds"
  # The Docker socket is never reachable from inside.
  run lb exec box -- sh -c 'test -e /var/run/docker.sock || test -e /run/docker.sock' </dev/null
  assert_failure
}

@test "AC4.2: writing /etc/passwd inside the sandbox fails and nothing changes on the host" {
  host_passwd=$(md5sum </etc/passwd)
  host_readme=$(md5sum <"$REPO/README.md")
  box_passwd=$(in_box box md5sum /etc/passwd)

  run lb exec box -- sh -c 'echo "evil::0:0::/:/bin/sh" >>/etc/passwd' </dev/null
  assert_failure
  # Even root in the container cannot write: the root filesystem is read-only.
  run "$RUNTIME" exec --user 0:0 "$C" sh -c 'echo "evil::0:0::/:/bin/sh" >>/etc/passwd'
  assert_failure
  assert_output --partial "Read-only file system"
  run lb exec box -- touch /etc/new-file </dev/null
  assert_failure
  run lb exec box -- mkdir /opt-new </dev/null
  assert_failure
  assert_equal "$(in_box box md5sum /etc/passwd)" "$box_passwd"

  # /src and /tmp are writable, and writes there stay in the container.
  lb_ok exec box -- sh -c 'echo changed >README.md && echo x >/tmp/x && echo new >/src/new.txt' </dev/null
  assert_equal "$(in_box box cat README.md)" changed

  assert_equal "$(md5sum </etc/passwd)" "$host_passwd"
  assert_equal "$(md5sum <"$REPO/README.md")" "$host_readme"
  assert_file_not_exist "$REPO/new.txt"
  assert_equal "$(git status --porcelain)" ""
}

@test "security defaults: cap-drop ALL, no-new-privileges, read-only root, user 1000:1000, network none, pids/memory/cpu limits" {
  assert_equal "$(inspect "$C" '{{json .HostConfig.CapDrop}}')" '["ALL"]'
  capadd=$(inspect "$C" '{{json .HostConfig.CapAdd}}')
  [[ $capadd == null || $capadd == "[]" ]] || fail "CapAdd: $capadd"
  secopt=$(inspect "$C" '{{json .HostConfig.SecurityOpt}}')
  [[ $secopt == *'"no-new-privileges'* ]] || fail "SecurityOpt: $secopt"
  assert_equal "$(inspect "$C" '{{.HostConfig.Privileged}}')" false
  assert_equal "$(inspect "$C" '{{.HostConfig.ReadonlyRootfs}}')" true
  assert_equal "$(inspect "$C" '{{.Config.User}}')" 1000:1000
  assert_equal "$(inspect "$C" '{{.HostConfig.NetworkMode}}')" none
  assert_equal "$(inspect "$C" '{{json .HostConfig.PortBindings}}')" '{}'
  assert_equal "$(inspect "$C" '{{.Config.Image}}')" busybox:latest
  tmpfs=$(inspect "$C" '{{json .HostConfig.Tmpfs}}')
  [[ $tmpfs == *'"/tmp"'* ]] || fail "Tmpfs: $tmpfs"
  for field in PidsLimit Memory NanoCpus; do
    v=$(inspect "$C" "{{.HostConfig.$field}}")
    [[ $v =~ ^[0-9]+$ && $v -gt 0 ]] || fail "HostConfig.$field is '$v', want a limit"
  done

  # As seen from inside: non-root, no capabilities, no_new_privs, no network.
  run lb exec box -- sh -c 'id -u; id -g; grep -E "^(CapEff|CapPrm|NoNewPrivs):" /proc/self/status | tr -s "\t" " "; grep "^Uid:" /proc/1/status | tr -s "\t" " "; ls /sys/class/net' </dev/null
  assert_success
  assert_output "$(printf '%s\n' 1000 1000 'CapPrm: 0000000000000000' 'CapEff: 0000000000000000' 'NoNewPrivs: 1' 'Uid: 1000 1000 1000 1000' lo)"
}

@test "sandboxes are isolated from each other" {
  create other
  lb_ok exec box -- sh -c 'echo mine >/src/only-box.txt; echo mine >/tmp/only-box' </dev/null
  "$RUNTIME" exec -d --user 1000:1000 "$C" sleep 600
  eventually in_box box sh -c 'ps -o args | grep -q "^[s]leep 600"'
  run lb exec other -- sh -c 'ls /src/only-box.txt /tmp/only-box' </dev/null
  assert_failure
  run lb exec other -- sh -c 'ps -o args | grep -c "[s]leep 600"' </dev/null
  assert_output 0
  assert_equal "$(inspect "$(container_of other)" '{{range .Mounts}}{{if eq .Destination "/src"}}{{.Name}}{{end}}{{end}}')" "$(volume_of other)"
}

@test "isolation gvisor: create --isolation gvisor runs the sandbox on gVisor's kernel, says so, and a bad level is one line" {
  run --separate-stderr lb create --isolation gvisor gv
  assert_success
  assert_line "  isolation: gvisor (its own kernel in user space, not the host's)"
  assert_equal "$(inspect "$(container_of gv)" '{{.HostConfig.Runtime}}')" runsc
  run lb exec gv -- uname -r </dev/null
  assert_success
  assert_output "4.4.0"
  run lb exec box -- uname -r </dev/null
  refute_output "4.4.0"
  assert_equal "$(lb_ok list --json | jsonget '.[name=gv].isolation')" gvisor

  run --separate-stderr lb create --isolation vm other
  assert_failure
  assert_stderr 'Error: --isolation "vm": use "container" or "gvisor".'
  run branch_exists litterbox/other
  assert_failure
}

@test "gVisor on Podman, where runsc needs its flags: create and doctor name gvisor-flags, and nothing is left made" {
  command -v podman >/dev/null || fail "podman is not installed (.ci/run installs it)"
  # The setup's sandbox is on Docker, which the teardown no longer looks
  # at once RUNTIME names podman: it goes first, and the teardown removes
  # what is left on podman.
  lb_ok delete --force box >/dev/null
  lb_ok cache prune >/dev/null # box's base tree, on Docker too
  RUNTIME=podman
  rm -f "$XDG_CONFIG_HOME/litterbox/config.toml"
  printf '[docker]\nisolation = "gvisor"\n' >.litterbox.local.toml
  fix='runsc needs its flags on this host: set gvisor-flags = ["network=none", "host-uds=open"] under [docker] in your own config'
  run --separate-stderr lb --runtime podman create gv
  assert_failure
  [[ $stderr == *"$fix"* && $stderr != *$'\n'?* ]] || fail "$stderr"
  assert_equal "$(podman ps -aq --filter "label=dev.litterbox.repo=$REPO")" ""
  run --separate-stderr lb --runtime podman doctor
  assert_line --regexp "^ +fix: $(printf '%s' "$fix" | sed 's/[][\.*^$]/\\&/g')"
  refute_line --partial "use an image for linux/"
  # With them, it runs on gVisor's kernel.
  mkdir -p "$XDG_CONFIG_HOME/litterbox"
  printf '[docker]\ngvisor-flags = ["network=none", "host-uds=open"]\n' >"$XDG_CONFIG_HOME/litterbox/config.toml"
  lb_ok --runtime podman create gv >/dev/null
  run lb --runtime podman exec gv -- uname -r </dev/null
  assert_output "4.4.0"
  lb_ok --runtime podman delete --force gv >/dev/null
}
