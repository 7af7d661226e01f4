#!/usr/bin/env bats
# Failures of git and of the container runtime (README: "Troubleshooting"): create
# leaves nothing half-made, pause/resume report the error and the state they
# left, a partly failed delete says what is left. Runtime failures are injected
# with --runtime pointing at a wrapper around the real runtime that fails the
# subcommand named in $FAIL_ON.

# shellcheck disable=SC2154,SC2030,SC2031 # bats sets status/output/lines/stderr; each test is a subshell
bats_require_minimum_version 1.5.0
load helpers

setup_file() {
  build_helpers
  cat >"$BATS_FILE_TMPDIR/faildocker" <<EOF
#!/bin/sh
# Fails "\$FAIL_ON" (a subcommand, or two words such as "volume rm"); runs
# everything else with the real runtime.
if [ -n "\$FAIL_ON" ] && { [ "\$1" = "\$FAIL_ON" ] || [ "\$1 \$2" = "\$FAIL_ON" ]; }; then
  echo "Error response from daemon: injected failure" >&2
  exit 1
fi
exec $(command -v "$RUNTIME") "\$@"
EOF
  chmod +x "$BATS_FILE_TMPDIR/faildocker"
}
setup() {
  common_setup
  FAILING=$BATS_FILE_TMPDIR/faildocker
}
teardown() { common_teardown; }

# assert_nothing_left NAME: no branch, ref, container, volume or state file
# (the commit's base tree, the repository's, may stay for the next create).
assert_nothing_left() {
  assert_equal "$(git for-each-ref refs/heads/litterbox/ refs/litterbox/)" ""
  assert_equal "$("$RUNTIME" ps -aq --filter "label=dev.litterbox.repo=$REPO")" ""
  run container_exists "$(container_of "$1")"
  assert_failure
  run volume_exists "$(volume_of "$1")"
  assert_failure
  gitdir=$(git rev-parse --absolute-git-dir)
  if [ -d "$gitdir/litterbox" ]; then
    assert_equal "$(find "$gitdir/litterbox" -type f ! -name 'repo-id.json*' ! -path '*/litterbox/bases/*' ! -name bases.lock)" ""
  fi
  assert_equal "$(lb_ok list)" "No sandboxes."
}

@test "edge: create reports a container provisioning failure and leaves no branch, container, volume or state" {
  FAIL_ON="create" run --separate-stderr lb --runtime "$FAILING" create box
  assert_failure 1
  assert_output ""
  [[ $stderr == Error:* ]]
  assert_stderr --partial "injected failure"
  assert_nothing_left box
}

@test "edge: create that fails copying the tree into the container rolls everything back" {
  FAIL_ON="cp" run --separate-stderr lb --runtime "$FAILING" create box
  assert_failure 1
  assert_output ""
  assert_stderr --partial "injected failure"
  assert_nothing_left box
}

@test "edge: create reports a git branch creation failure (a branch named litterbox exists) and leaves nothing" {
  git branch litterbox
  run --separate-stderr lb create box
  assert_failure 1
  assert_output ""
  [[ $stderr == Error:* ]]
  assert_stderr --partial "litterbox/box"
  assert_equal "$("$RUNTIME" ps -aq --filter "label=dev.litterbox.repo=$REPO")" ""
  run volume_exists "$(volume_of box)"
  assert_failure
  assert_equal "$(git for-each-ref --format='%(refname)' refs/heads/)" "$(printf 'refs/heads/litterbox\nrefs/heads/main')"
}

@test "edge: pause reports a runtime failure and the sandbox stays active" {
  create box
  FAIL_ON=pause run --separate-stderr lb --runtime "$FAILING" pause box
  assert_failure 1
  assert_stderr --partial "injected failure"
  assert_stderr --partial "box"
  assert_equal "$(state_of "$(container_of box)")" running
  assert_equal "$(list_status box)" active
}

@test "edge: resume reports a runtime failure and says the sandbox is still paused" {
  create box
  lb_ok pause box >/dev/null
  FAIL_ON=unpause run --separate-stderr lb --runtime "$FAILING" resume box
  assert_failure 1
  assert_stderr --partial "injected failure"
  assert_stderr --partial "still paused"
  assert_equal "$(state_of "$(container_of box)")" paused
  assert_equal "$(list_status box)" paused
}

@test "edge: a partly failed delete says which resources are left, and the retry it suggests removes them" {
  create box
  vol=$(volume_of box)
  FAIL_ON="volume rm" run --separate-stderr lb --runtime "$FAILING" delete --force box
  assert_failure 1
  assert_line --partial "container $(container_of box)"
  assert_stderr --partial "still present: volume $vol"
  volume_exists "$vol"

  # The error names the command to run once the cause is fixed; it must work.
  retry=$(grep -o 'retry with: litterbox [^.]*' <<<"$stderr" | sed 's/^retry with: litterbox //')
  [ -n "$retry" ] || fail "no retry command in: $stderr"
  read -ra retry_args <<<"$retry"
  run --separate-stderr lb "${retry_args[@]}"
  [ "$status" -eq 0 ] || fail "litterbox $retry (suggested by delete) exited $status: $stderr"
  run volume_exists "$vol"
  assert_failure
}
