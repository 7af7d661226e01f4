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

@test "many agents into one main: a merge, a sync keeping ignored files, a conflict foreseen then brought into its sandbox, a queue with a passing and a failing check" {
  printf 'one\ntwo\nthree\n' >shared.txt
  printf 'for f in *.txt; do if grep -q BROKEN "$f"; then echo "$f: BROKEN"; exit 1; fi; done\necho all good\n' >check.sh
  git add shared.txt check.sh
  git commit -qm "shared.txt and a check"
  for n in first keeper clash; do lb_ok create "$n" >/dev/null; done
  lb_ok exec first -- sh -c 'echo first > first.txt' >/dev/null
  lb_ok exec keeper -- sh -c 'mkdir -p ignored && echo kept > ignored/cache && echo keeper > keeper.txt' >/dev/null
  lb_ok exec clash -- sh -c 'sed -i s/one/CLASH/ shared.txt' >/dev/null
  sed -i s/one/MAIN/ shared.txt
  git commit -qam "main changes line one"

  # list flags the conflict before anything is merged or synced.
  run --separate-stderr lb list
  assert_success
  assert_line 'clash: would conflict with main (1 commit(s) since its base) in shared.txt'

  run --separate-stderr lb merge first
  assert_success

  # keeper moves onto main (with first's work), its ignored files kept.
  run --separate-stderr lb sync keeper
  assert_success
  assert_output --partial "Synced sandbox 'keeper' onto main"
  run --separate-stderr lb exec keeper -- sh -c 'cat ignored/cache first.txt keeper.txt shared.txt'
  assert_output $'kept\nfirst\nkeeper\nMAIN\ntwo\nthree'

  # clash's conflict comes into its sandbox; the host is untouched.
  before=$(git status --porcelain --ignored; git rev-parse HEAD; git ls-files -s)
  run --separate-stderr lb sync clash
  assert_failure 1
  assert_output --partial "Conflicts in shared.txt: committed with their markers, and so in /src."
  [[ $stderr == *"left conflicts in 1 file(s)"* ]] || fail "stderr: $stderr"
  run --separate-stderr lb exec clash -- cat shared.txt
  assert_output --partial '<<<<<<<'
  assert_output --partial 'CLASH'
  assert_equal "$(git status --porcelain --ignored; git rev-parse HEAD; git ls-files -s)" "$before"
  [ "$(git log -1 --format=%s litterbox/clash)" = "sync onto main: conflicts in 1 file" ]

  # The queue: keeper passes the check and is taken; broken fails it and stays.
  lb_ok create broken >/dev/null
  lb_ok exec broken -- sh -c 'echo BROKEN > notes.txt' >/dev/null
  mkdir -p "$XDG_CONFIG_HOME/litterbox"
  printf '[review]\ncheck = "sh check.sh"\n' >>"$XDG_CONFIG_HOME/litterbox/config.toml"
  run --separate-stderr lb merge keeper broken
  assert_failure 1
  assert_line 'Merge queue of 2 sandbox(es) onto main, check: sh check.sh.'
  assert_line --regexp '^keeper: taken: already on main; check passed in [0-9.]+m?s; applied 1 commit\(s\); deleted \(its branch was at [0-9a-f]{12}\)$'
  assert_line 'broken: synced (1 commit(s) replayed); left: check failed (exit 1): notes.txt: BROKEN'
  assert_line 'Taken: keeper. Left: broken.'
  [[ $stderr == *"Merge queue left 1 of 2 sandbox(es): broken."* ]] || fail "stderr: $stderr"
  [ -f keeper.txt ] && [ ! -e notes.txt ] && [ ! -e ignored/cache ]
  run --separate-stderr lb list --json
  assert_equal "$(jsonget '.*.name' <<<"$output" | sort | tr '\n' ' ')" "broken clash "
}
