#!/usr/bin/env bats
# The image matrix (issue 11): what users run is not busybox. The core
# change loop, the review commands and services run on plain Debian (GNU
# userland, no cpio) and on Debian with python3 and pytest; the file tools run
# on an image with no shell at all. The images come from
# scripts/test-images.sh (make image).

# shellcheck disable=SC2154,SC2016 # bats sets status/output/lines/stderr; shell code in single quotes runs in the sandbox
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers mcpcall jsonget; }
setup() { common_setup; }
teardown() { common_teardown; }

use_image() {
  printf '[docker]\nimage = "%s"\n' "$1" >.litterbox.toml
  git add .litterbox.toml
  git commit -qm "image $1"
}

change_loop_on() {
  use_image "$1"
  create box
  # The reproduction from the issue: GNU diff made this no commit.
  lb_ok exec box -- sh -c 'echo change >> README.md; sleep 2'
  assert_equal "$(git show litterbox/box:README.md | tail -n 1)" change
  # Over MCP: write, read, edit; a newline in a name; a no-op commits nothing.
  run --separate-stderr mcpcall \
    write '{"sandbox":"box","path":"notes/a.txt","content":"one\ntwo\n"}' \
    read '{"sandbox":"box","path":"notes/a.txt","offset":1}' \
    edit '{"sandbox":"box","path":"notes/a.txt","old_string":"two","new_string":"three"}' \
    bash '{"sandbox":"box","command":"printf x > \"$(printf '"'"'new\\nline'"'"')\""}' \
    bash '{"sandbox":"box","command":"ls > /dev/null"}'
  assert_success
  assert_equal "$(jsonget .structuredContent.content <<<"${lines[1]}")" two
  [ "$(jsonget .structuredContent.snapshot <<<"${lines[3]}")" != null ] || fail "newline name not committed: ${lines[3]}"
  assert_equal "$(jsonget .structuredContent.snapshot <<<"${lines[4]}")" null
  assert_equal "$(git show litterbox/box:notes/a.txt)" "$(printf 'one\nthree')"
  assert_equal "$(git show "litterbox/box:new
line")" x
  # Review: diff and apply bring the work home.
  run lb diff box -- --stat
  assert_success
  assert_output --partial 'notes/a.txt'
  lb_ok apply box >/dev/null
  assert_equal "$(cat notes/a.txt)" "$(printf 'one\nthree')"
}

@test "debian (GNU userland, no cpio): exec, the MCP tools and review" {
  change_loop_on litterbox-test/debian:bookworm
}

@test "python (Debian with python3 and pytest): exec, the MCP tools and review; pytest's caches stay out" {
  change_loop_on litterbox-test/python:bookworm
  printf 'def test_ok():\n    assert True\n' >test_ok.py
  printf '__pycache__/\n' >>.gitignore
  git add -A && git commit -qm tests
  create tests
  run lb exec tests -- python3 -m pytest -q
  assert_success
  assert_output --partial '1 passed'
  refute_output --partial 'committed'
  lb_ok exec tests -- true
  assert_equal "$(git rev-list --count main..litterbox/tests)" 0
}

@test "debian: a service starts, reports and stops" {
  use_image litterbox-test/debian:bookworm
  cat >>.litterbox.toml <<'TOML'
[container.services.ticker]
command = ["sh", "-c", "while :; do date >> /tmp/ticks; sleep 1; done"]
TOML
  git add -A && git commit -qm service
  create box
  run lb service box status ticker
  assert_success
  assert_output --partial 'ticker: running'
  run lb service box stop ticker
  assert_success
  assert_output --partial 'ticker: stopped'
}

@test "no shell at all: read, write, edit, patch, ls, glob and grep work; bash says in one line why not" {
  use_image litterbox-test/noshell:latest
  run lb create box
  assert_success
  assert_output --partial 'no /bin/sh'
  run --separate-stderr mcpcall \
    write '{"sandbox":"box","path":"a.txt","content":"one\n"}' \
    edit '{"sandbox":"box","path":"a.txt","old_string":"one","new_string":"two"}' \
    patch '{"sandbox":"box","path":"README.md","diff":"@@ -1 +1 @@\n-# demo\n+# patched\n"}' \
    read '{"sandbox":"box","path":"a.txt"}' \
    ls '{"sandbox":"box","path":"."}' \
    glob '{"sandbox":"box","pattern":"*.txt"}' \
    grep '{"sandbox":"box","pattern":"two","path":"."}' \
    bash '{"sandbox":"box","command":"true"}'
  assert_success
  for i in 0 1 3 4 5 6; do
    assert_equal "$(jsonget .isError <<<"${lines[$i]}")" false
  done
  assert_equal "$(jsonget .structuredContent.content <<<"${lines[3]}")" two
  assert_equal "$(jsonget .isError <<<"${lines[7]}")" true
  [[ $(jsonget .text <<<"${lines[7]}") == *"no /bin/sh"* ]] || fail "bash: ${lines[7]}"
  assert_equal "$(git show litterbox/box:a.txt)" two
}

@test "debian: Ctrl-C on exec and an MCP cancel stop every process the command started and commit what it changed" {
  use_image litterbox-test/debian:bookworm
  create box
  # No ps in Debian minbase: /proc tells what runs.
  sleepers() { in_box box sh -c 'for p in /proc/[0-9]*; do tr "\0" " " < $p/cmdline 2>/dev/null; echo; done | grep -c "^sleep 300" || true'; }
  "$LITTERBOX" exec box -- sh -c 'echo before > before.txt; sleep 300 & sleep 300' >/dev/null 2>&1 &
  pid=$!
  eventually in_box box test -f before.txt
  kill -INT "$pid"
  code=0
  wait "$pid" || code=$?
  assert_equal "$code" 130
  assert_equal "$(git show litterbox/box:before.txt)" before
  assert_equal "$(sleepers)" 0
  run --separate-stderr mcpcall --cancel-after 3s \
    bash '{"sandbox":"box","command":"echo kept > kept.txt; sleep 300 & sleep 300"}'
  assert_success
  assert_equal "$(jsonget .cancelled <<<"$output")" true
  eventually git cat-file -e litterbox/box:kept.txt
  assert_equal "$(sleepers)" 0
}
