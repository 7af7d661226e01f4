#!/usr/bin/env bats
# Many agents, one main (issue 48): what list foresees of several
# sandboxes' work before any of it is merged: how far the host's branch
# moved since each one's base, whether each merges cleanly onto it, and
# which sandboxes change the same files or would conflict with each other.

# shellcheck disable=SC2154,SC2016 # bats sets status/output/lines/stderr; scripts in single quotes run in the container
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers; }
setup() { common_setup; }
teardown() { common_teardown; }

@test "list foresees conflicts: two sandboxes on one file, one against the branch, one alone; the host untouched" {
  for n in a b c d; do lb_ok create "$n" >/dev/null; done
  lb_ok exec a -- sh -c 'echo a > shared.txt' >/dev/null
  lb_ok exec b -- sh -c 'echo b > shared.txt' >/dev/null
  lb_ok exec c -- sh -c 'echo c > host.txt' >/dev/null
  lb_ok exec d -- sh -c 'echo d > alone.txt' >/dev/null
  echo main > host.txt
  git add host.txt
  git commit -qm "the host moves"
  head=$(git rev-parse HEAD)
  before=$(git status --porcelain)

  run --separate-stderr lb list
  assert_success
  assert_line 'a: 1 commit(s) behind main, merges cleanly; conflicts with b'
  assert_line 'b: 1 commit(s) behind main, merges cleanly; conflicts with a'
  assert_line 'c: would conflict with main (1 commit(s) since its base) in host.txt'
  assert_line 'd: 1 commit(s) behind main, merges cleanly'

  run --separate-stderr lb list --json
  assert_success
  assert_equal "$(jsonget '.[name=a].forecast.conflicts_with.0' <<<"$output")" b
  assert_equal "$(jsonget '.[name=c].forecast.clean' <<<"$output")" false
  assert_equal "$(jsonget '.[name=c].forecast.conflicts.0' <<<"$output")" host.txt
  assert_equal "$(jsonget '.[name=d].forecast.behind' <<<"$output")" 1
  assert_equal "$(jsonget '.[name=d].forecast.onto' <<<"$output")" main

  # Asked again, the merges come from the cache; nothing of the host's moved.
  run --separate-stderr lb -v list
  assert_success
  [[ $stderr != *merge-tree* ]] || fail "merged again with the same tips: $stderr"
  assert_equal "$(git rev-parse HEAD)" "$head"
  assert_equal "$(git status --porcelain)" "$before"
}

@test "list in a repository with no commit yet says only that it has no sandboxes: no forecast is asked" {
  dir=$BATS_TEST_TMPDIR/unborn
  mkdir "$dir"
  git -C "$dir" init -q
  cd "$dir"
  run --separate-stderr lb list
  assert_success
  assert_output "No sandboxes."
  assert_equal "$stderr" ""
}
