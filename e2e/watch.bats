#!/usr/bin/env bats
# litterbox watch: the live view of the sandboxes, in a real terminal (tmux,
# 80x24), while an MCP client works in another process.

# shellcheck disable=SC2154,SC2030,SC2031 # bats sets status/output/lines/stderr; each test is a subshell
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers mcpcall; }
setup() {
  common_setup
  SESSION="lbwatch$$-$(rand_hex)"
}
teardown() {
  tmux kill-session -t "$SESSION" 2>/dev/null || true
  common_teardown
}

pane() { tmux capture-pane -p -t "$SESSION"; }
wait_pane() {
  for _ in $(seq 300); do pane | grep -qE -- "$1" && return 0; sleep 0.1; done
  fail "no '$1' in: $(pane)"
}

@test "watch --once prints the table once: each sandbox, its status, commits ahead" {
  create busy
  create idle
  lb_ok pause idle >/dev/null
  run --separate-stderr mcpcall --repo "$REPO" write '{"sandbox":"busy","path":"a.txt","content":"a\n"}'
  assert_success
  run --separate-stderr lb watch --once
  assert_success
  assert_line --index 0 "litterbox watch $REPO"
  assert_line --index 1 --regexp '^NAME +STATUS +OWNER +CALL +LAST +AHEAD +CPU +MEM +NET$'
  # --once reads the engine's stats before it prints.
  assert_line --regexp '^busy +active +- +- +[0-9]+s +1 +[0-9.]+% +[0-9.]+[KMG]i?B +-$'
  # A sandbox with nothing on its base has no LAST: its branch is the
  # base commit, which may be years old.
  assert_line --regexp '^idle +paused +- +- +- +0 +[0-9.]+% +[0-9.]+[KMG]i?B +-$'
  assert_equal "${#lines[@]}" 4
  run --separate-stderr lb watch --every 10ms
  assert_failure 2
  assert_equal "$stderr" "Error: watch: --every 10ms is too often: give 500ms or more."
}

@test "watch in a terminal (tmux, 80x24): a call of another process appears while it runs, then its commit; d shows the diff; s opens a shell; p asks, y pauses; q quits" {
  create w
  tmux new-session -d -s "$SESSION" -x 80 -y 24 -c "$REPO" \
    "env XDG_CONFIG_HOME='$XDG_CONFIG_HOME' GIT_CONFIG_GLOBAL='$GIT_CONFIG_GLOBAL' '$LITTERBOX' watch --every 500ms; echo EXIT=\$?; sleep 60"
  wait_pane '^w +active +- +- '
  # An agent's call, from an MCP server of its own.
  mcpcall --repo "$REPO" bash '{"sandbox":"w","command":"sleep 10; echo x > x.txt"}' >/dev/null 2>&1 &
  call=$!
  # Its client and server, the call and how long it has run.
  wait_pane '^w +active +litterbo[^ ]* +[0-9]+s bash: sleep 10'
  # list tells the same: the MCP client and its server's process own it,
  # busy with the call.
  run --separate-stderr lb list
  assert_line --index 1 --regexp '^w +active +litterbox-e2e \([0-9]+\) +[0-9]+s +busy +litterbox/w +0 +-$'
  json=$(lb_ok list --json)
  assert_equal "$(jsonget .0.owner.kind <<<"$json")" mcp
  assert_equal "$(jsonget .0.owner.client <<<"$json")" litterbox-e2e
  assert_equal "$(jsonget .0.call.call <<<"$json")" "bash: sleep 10; echo x > x.txt"
  wait "$call"
  # After it, nobody owns it (the server has exited) and it has been idle
  # since the call ended.
  run --separate-stderr lb list
  assert_line --index 1 --regexp '^w +active +- +[0-9]+s +[0-9]+s +litterbox/w +1 +-$'
  json=$(lb_ok list --json)
  [[ " $(jsonget .0.@keys <<<"$json") " != *" owner "* ]] || fail "an owner after the server's end: $json"
  [[ $(jsonget .0.last_activity <<<"$json") =~ ^20[0-9-]+T[0-9:.]+ ]] || fail "last_activity: $json"
  # Ended: no call, the commit a moment ago, one commit ahead; the server
  # has exited, so nobody drives it.
  wait_pane '^w +active +- +- +[0-9]+s +1 '
  # Every line fits the 80 columns: none wraps onto the next row, so the
  # title, the heading, the row and the keys are where they belong.
  mapfile -t screen < <(pane)
  assert_equal "${#screen[@]}" 24
  [[ ${screen[0]} =~ ^[0-9:]{8}\ \ 1\ sandbox\(es\)\ \ litterbox\ watch\ / ]] || fail "title: ${screen[0]}"
  [[ ${screen[1]} =~ ^NAME\ +STATUS\ +OWNER\ +CALL\ +LAST\ +AHEAD\ +CPU\ +MEM\ +NET$ ]] || fail "heading: ${screen[1]}"
  [[ ${screen[2]} =~ ^w\ +active\  ]] || fail "row: ${screen[2]}"
  assert_equal "${screen[23]}" "↑↓ select  enter details  p pause  r resume  a apply  d diff  s shell  q quit"
  # d shows the diff (git's pager quits at once on a short one) and holds
  # it until Enter.
  tmux send-keys -t "$SESSION" d
  wait_pane '^\+x$'
  wait_pane '^\[Enter: back to litterbox watch\]'
  tmux send-keys -t "$SESSION" Enter
  wait_pane '^w +active +- '
  # s opens a shell in the sandbox; the view comes back when it exits.
  tmux send-keys -t "$SESSION" s
  wait_pane '^/src \$'
  # shellcheck disable=SC2016 # the sandbox's shell expands it
  tmux send-keys -t "$SESSION" 'echo inside-$((6*7))' Enter
  wait_pane '^inside-42$'
  tmux send-keys -t "$SESSION" exit Enter
  wait_pane '^w +active +- '
  tmux send-keys -t "$SESSION" p
  wait_pane "Pause sandbox 'w'\\? y to pause"
  assert_equal "$(state_of "$(container_of w)")" running
  tmux send-keys -t "$SESSION" y
  wait_pane 'pause w: done'
  assert_equal "$(state_of "$(container_of w)")" paused
  wait_pane '^w +paused '
  tmux send-keys -t "$SESSION" q
  wait_pane '^EXIT=0$'
}

@test "watch in a terminal (tmux, 120x30): the MERGE column and a sandbox's details say where its work stands: rejected, and conflicting with another's" {
  create a
  create b
  lb_ok exec a -- sh -c 'echo a > shared.txt' >/dev/null
  lb_ok exec b -- sh -c 'echo b > shared.txt' >/dev/null
  lb_ok reject a -m "keep shared.txt out" >/dev/null
  tmux new-session -d -s "$SESSION" -x 120 -y 30 -c "$REPO" \
    "env XDG_CONFIG_HOME='$XDG_CONFIG_HOME' GIT_CONFIG_GLOBAL='$GIT_CONFIG_GLOBAL' '$LITTERBOX' watch --every 500ms; echo EXIT=\$?; sleep 60"
  wait_pane '^b +active '
  wait_pane ' NET MERGE$'
  wait_pane '^b +active .* clash$'
  tmux send-keys -t "$SESSION" Enter
  wait_pane '^a: rejected \(person\): keep shared.txt out$'
  wait_pane '^a: conflicts with b$'
  wait_pane '^Sandbox a: recent calls'
  tmux send-keys -t "$SESSION" q
  wait_pane '^EXIT=0$'
}
