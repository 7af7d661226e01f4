#!/usr/bin/env bats
# The warm pool through the CLI: [pool] size, litterbox pool (show, fill,
# drain), a create that claims an entry and refills the pool in the
# background, stale entries, and creates racing for one entry.

# shellcheck disable=SC2154,SC2030,SC2031,SC2016 # bats sets status/output/lines/stderr; each test is a subshell; scripts in single quotes run in the container
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers mcpcall; }
setup() {
  common_setup
  printf '[pool]\nsize = 1\n' >"$REPO/.litterbox.local.toml"
}
teardown() { common_teardown; }

# pool_ready prints the names of the entries ready for the config of now.
pool_ready() { lb_ok pool --json | jsonget '.ready.*'; }

# pool_full waits until the pool has its one entry ready: the background
# refill a create started has ended.
pool_full() {
  local i
  for ((i = 0; i < 100; i++)); do
    [ "$(pool_ready | wc -l)" -eq 1 ] && return 0
    sleep 0.1
  done
  fail "the pool was not refilled: $(lb pool 2>&1)"
}

# pooled NAME says whether sandbox NAME's container came from the pool.
pooled() { [ -n "$(inspect "$(container_of "$1")" '{{index .Config.Labels "dev.litterbox.pool"}}')" ]; }

@test "pool: a create claims a warm sandbox, the pool refills in the background, delete and drain leave nothing" {
  run --separate-stderr lb pool
  assert_success
  assert_output --regexp '^Pool: 0 of 1 ready \(config [0-9a-f]{16}\)\.$'

  run --separate-stderr lb pool fill
  assert_success
  assert_line --regexp "^Made litterbox-$REPO_SLUG-[0-9a-f]{8}\.pool-[0-9a-f]{8}\.\$"
  entry=$(pool_ready)
  assert_equal "$(state_of "$entry")" running
  # No sandbox yet: an entry is not listed.
  run lb list --json
  assert_output '[]'

  run --separate-stderr lb create warm
  assert_success
  assert_line "Created sandbox 'warm'"
  assert_line --regexp "^  container: +$(container_of warm)\$"
  assert_line --regexp "^  pool: +made ahead \($entry\)\$"
  pooled warm
  refute container_exists "$entry"
  # The entry took the sandbox's name; its name reaches every command.
  run lb exec warm -- sh -c 'echo $LITTERBOX_SANDBOX; id -u; cat README.md'
  assert_success
  assert_output "$(printf 'warm\n1000\n# demo')"
  run lb list --json
  assert_equal "$(jsonget .0.name .0.status .0.base <<<"$output")" "$(printf 'warm\nactive\n%s' "$(git rev-parse HEAD)")"

  # The create started a refill, which made a new entry.
  pool_full
  refill=$(pool_ready)
  [ "$refill" != "$entry" ]

  # A change through the pooled sandbox is a commit, as any.
  lb_ok exec warm -- sh -c 'echo hi > hi.txt' >/dev/null
  assert_equal "$(git show litterbox/warm:hi.txt)" hi

  run --separate-stderr lb delete warm --force
  assert_success
  assert_output --partial "volume ${entry}-src"
  refute container_exists "$(container_of warm)"
  refute volume_exists "${entry}-src"
  # The pool is as it was.
  assert_equal "$(pool_ready)" "$refill"

  run --separate-stderr lb pool drain
  assert_success
  assert_output "Removed $refill."
  assert_equal "$("$RUNTIME" ps -aq --filter "label=dev.litterbox.repo=$REPO")" ""
  refute volume_exists "${refill}-src"
  run lb pool drain
  assert_output "The pool was empty."
}

@test "pool: a create through MCP claims the entry and the pool refills too" {
  lb_ok pool fill >/dev/null
  entry=$(pool_ready)
  run --separate-stderr mcpcall --repo "$REPO" sandbox-create '{"name":"agent"}'
  assert_success
  pooled agent
  refute container_exists "$entry"
  # The server started the refill apart from the call, as the CLI does.
  pool_full
  [ "$(pool_ready)" != "$entry" ]
}

@test "pool: an entry made for another config is stale, never claimed, and removed by the next fill" {
  lb_ok pool fill >/dev/null
  entry=$(pool_ready)
  printf '[pool]\nsize = 1\n[docker]\nenv = { CHANGED = "yes" }\n' >"$REPO/.litterbox.local.toml"

  run --separate-stderr lb pool
  assert_success
  assert_line --regexp '^Pool: 0 of 1 ready'
  assert_line "  stale  $entry (litterbox pool fill removes it)"

  create changed
  refute pooled changed
  assert_equal "$(lb_ok exec changed -- sh -c 'echo $CHANGED')" yes
  # Its background refill removes the stale entry and makes one of the new
  # config.
  pool_full
  refute container_exists "$entry"
  refute volume_exists "${entry}-src"
  [ "$(lb_ok pool --json | jsonget '.stale.#')" = 0 ]
}

@test "pool: two creates racing for one entry never share it" {
  lb_ok pool fill >/dev/null
  lb create -q one >"$BATS_TEST_TMPDIR/one.out" 2>&1 &
  a=$!
  lb create -q two >"$BATS_TEST_TMPDIR/two.out" 2>&1 &
  b=$!
  wait "$a" || fail "create one: $(cat "$BATS_TEST_TMPDIR/one.out")"
  wait "$b" || fail "create two: $(cat "$BATS_TEST_TMPDIR/two.out")"
  n=0
  pooled one && n=$((n + 1))
  pooled two && n=$((n + 1))
  assert_equal "$n" 1
  assert_equal "$(lb_ok exec one -- sh -c 'echo $LITTERBOX_SANDBOX')" one
  assert_equal "$(lb_ok exec two -- sh -c 'echo $LITTERBOX_SANDBOX')" two
  lb_ok exec one -- sh -c 'echo 1 > mine' >/dev/null
  run lb exec two -- cat mine
  assert_failure
  pool_full
}

@test "pool: what the pool cannot serve, and bad input, each say so" {
  printf '[pool]\nsize = 1\n[docker]\nnetwork = "bridge"\n[[ports]]\nname = "www"\ntarget = 8080\n' >"$REPO/.litterbox.local.toml"
  run --separate-stderr lb pool fill
  assert_success
  assert_output 'Pool: size 1, not used for this config: a sandbox with [[ports]] gets its host ports when it is made.'
  assert_equal "$("$RUNTIME" ps -aq --filter "label=dev.litterbox.repo=$REPO")" ""

  run --separate-stderr lb pool refill
  assert_equal "$status" 2
  assert_stderr --partial 'pool: unknown action "refill": use fill or drain, or nothing to show the pool'

  printf '[pool]\nsize = 100\n' >"$REPO/.litterbox.local.toml"
  run --separate-stderr lb pool fill
  assert_failure
  assert_stderr --partial 'pool.size'
  assert_stderr --partial 'want from 0 to 32'
}

@test "pool: entries of a repository that is gone are listed and drained with --all-repos" {
  here=$REPO
  make_repo
  gone=$MADE_REPO
  printf '[pool]\nsize = 1\n' >"$gone/.litterbox.local.toml"
  cd "$gone" || fail
  lb_ok pool fill >/dev/null
  entry=$(pool_ready)
  cd "$here" || fail
  rm -rf "$gone"

  run --separate-stderr lb pool --all-repos
  assert_success
  assert_line --regexp "^REPO +ENTRY +STATE\$"
  assert_line --regexp "^$gone \(gone\) +$entry +running\$"
  run --separate-stderr lb pool fill --all-repos
  assert_equal "$status" 2
  assert_stderr --partial 'ool fill takes no --all-repos: a pool is filled for its repository'

  run --separate-stderr lb pool drain --all-repos
  assert_success
  assert_line "Removed $entry of $gone (gone)."
  refute container_exists "$entry"
  refute volume_exists "${entry}-src"
}

@test "budget: another repository's sandboxes and a filled pool do not refuse a create; this repository's own do, named alone" {
  # Each limit alone fits a budget of 1 GiB; two do not.
  limits=$'[docker]\nmemory = "700m"\n[limits]\nmemory-budget = "1g"\n'
  mine=$REPO
  make_repo
  other=$MADE_REPO
  printf '%s' "$limits" >"$other/.litterbox.local.toml"
  (cd "$other" && lb_ok create theirs >/dev/null)
  printf '%s[pool]\nsize = 1\n' "$limits" >"$mine/.litterbox.local.toml"
  lb_ok pool fill >/dev/null
  pool_full
  run --separate-stderr lb create mine
  assert_success
  run --separate-stderr lb create second
  assert_failure 1
  [[ $stderr == *"this repository's running sandboxes to 1.4 GiB"*"they are: mine (700.0 MiB);"* && $stderr != *theirs* ]] || fail "$stderr"
}
