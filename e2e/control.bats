#!/usr/bin/env bats
# Commands under control (issue 11): exec streams its output as it comes;
# Ctrl-C (SIGINT/SIGTERM) on exec, and an MCP client's notifications/cancelled
# on a running bash, kill the command's whole process tree in the sandbox,
# commit what it changed and return; a long bash sends progress notifications
# to a client that asks for them.

# shellcheck disable=SC2154,SC2016 # bats sets status/output/lines/stderr; shell code in single quotes runs in the sandbox
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers mcpcall jsonget; }
setup() {
  common_setup
  create box
}
teardown() { common_teardown; }

# no_sleeper: nothing of the command is left running in the sandbox.
no_sleeper() { ! in_box box ps -o args | grep -q '^[s]leep 300'; }

@test "exec streams stdout and stderr as they come, before the command ends" {
  out=$BATS_TEST_TMPDIR/out
  lb exec box -- sh -c 'echo first; echo err-first >&2; sleep 3; echo last' >"$out" 2>&1 &
  pid=$!
  # Both streams arrive while the command still sleeps.
  eventually grep -q err-first "$out"
  grep -q first "$out"
  run ! grep -q last "$out"
  wait "$pid"
  grep -q last "$out"
}

@test "Ctrl-C on exec kills the command's process tree, commits what it changed, and exits 130" {
  out=$BATS_TEST_TMPDIR/out
  # Not through lb's timeout guard: the signal must reach litterbox itself.
  "$LITTERBOX" exec box -- sh -c 'echo done-before > before.txt; sleep 300 & sleep 300; echo never > after.txt' >"$out" 2>&1 &
  pid=$!
  eventually in_box box test -f before.txt
  eventually in_box box sh -c 'ps -o args | grep -q "^[s]leep 300"'
  kill -INT "$pid"
  code=0
  wait "$pid" || code=$?
  assert_equal "$code" 130
  grep -q 'interrupted; every process the command started was killed' "$out"
  grep -q "committed [0-9a-f]\{12\} on litterbox/box" "$out"
  assert_equal "$(git show litterbox/box:before.txt)" done-before
  run git cat-file -e litterbox/box:after.txt
  assert_failure
  no_sleeper
  # The sandbox takes the next call as usual.
  lb_ok exec box -- true
}

@test "SIGTERM on exec does the same" {
  "$LITTERBOX" exec box -- sh -c 'echo x > t.txt; sleep 300' >/dev/null 2>&1 &
  pid=$!
  eventually in_box box sh -c 'ps -o args | grep -q "^[s]leep 300"'
  kill -TERM "$pid"
  code=0
  wait "$pid" || code=$?
  assert_equal "$code" 130
  assert_equal "$(git show litterbox/box:t.txt)" x
  no_sleeper
}

@test "MCP: a cancelled bash is killed with every process it started, its changes are committed, and the server goes on" {
  run --separate-stderr mcpcall --cancel-after 3s \
    bash '{"sandbox":"box","command":"echo kept > kept.txt; sleep 300 & sleep 300; echo never > never.txt"}'
  assert_success
  assert_equal "$(jsonget .cancelled <<<"$output")" true
  eventually git cat-file -e litterbox/box:kept.txt
  assert_equal "$(git show litterbox/box:kept.txt)" kept
  run git cat-file -e litterbox/box:never.txt
  assert_failure
  eventually no_sleeper
  [[ $(git log -1 --format=%s litterbox/box) == "bash: echo kept > kept.txt; sleep 300 & sleep 300; "* ]] || fail "subject: $(git log -1 --format=%s litterbox/box)"
  # The same server process answers the next call after a cancelled one.
  run --separate-stderr mcpcall --cancel-after 2s \
    bash '{"sandbox":"box","command":"sleep 300"}' \
    bash '{"sandbox":"box","command":"echo next > next.txt"}'
  assert_success
  assert_equal "$(jsonget .cancelled <<<"${lines[0]}")" true
  assert_equal "$(jsonget .structuredContent.exit_code <<<"${lines[1]}")" 0
  assert_equal "$(git show litterbox/box:next.txt)" next
}

@test "MCP: a long bash sends progress notifications with its latest output when the client sends a progressToken" {
  run --separate-stderr mcpcall --progress \
    bash '{"sandbox":"box","command":"for i in 1 2 3 4; do echo tick $i; sleep 1; done"}'
  assert_success
  # At least two progress lines before the result, the later with more output.
  progress=$(grep '"progress"' <<<"$output")
  [ "$(grep -c . <<<"$progress")" -ge 2 ] || fail "progress notifications: $output"
  grep -q 'tick 1' <<<"$progress"
  grep -q 'tick 3' <<<"$progress"
  result=$(grep '"tool"' <<<"$output")
  assert_equal "$(jsonget .structuredContent.stdout <<<"$result")" "$(printf 'tick 1\ntick 2\ntick 3\ntick 4')"
  # Without a token, no notification.
  run --separate-stderr mcpcall bash '{"sandbox":"box","command":"echo one; sleep 2"}'
  assert_success
  refute_output --partial '"progress"'
}

@test "exec that waits for an agent's call says which call and for how long, then runs" {
  mcpcall bash '{"sandbox":"box","command":"sleep 3; echo agent > agent.txt"}' >/dev/null &
  pid=$!
  eventually in_box box sh -c 'ps -o args | grep -q "^[s]leep 3"'
  run --separate-stderr lb exec box -- cat agent.txt
  wait "$pid"
  assert_success
  assert_output agent
  assert_equal "$(grep -c 'waiting for' <<<"$stderr")" 1
  [[ $stderr =~ "litterbox: waiting for bash: sleep 3; echo agent > agent.txt (running "[0-9]+"s)" ]] || fail "no wait notice: $stderr"
}

@test "SIGTERM on shell stops every process the session started, commits what it changed, and exits 130" {
  fifo=$BATS_TEST_TMPDIR/in
  mkfifo "$fifo"
  "$LITTERBOX" shell box <"$fifo" >/dev/null 2>&1 &
  pid=$!
  exec 8>"$fifo"
  printf 'echo from-shell > s.txt\nsleep 300 &\nsleep 300\n' >&8
  eventually in_box box sh -c 'ps -o args | grep -q "^[s]leep 300"'
  kill -TERM "$pid"
  code=0
  wait "$pid" || code=$?
  exec 8>&-
  assert_equal "$code" 130
  assert_equal "$(git show litterbox/box:s.txt)" from-shell
  eventually no_sleeper
}
