#!/usr/bin/env bats
# litterbox run: an agent inside the sandbox on a real terminal (tmux,
# 80x24), its changes committed while it works (docs/run.md). The agent is
# e2e/standin, which behaves like one: a prompt, files written over
# seconds, a process of its own in the background, output, an exit.

# shellcheck disable=SC2154,SC2030,SC2031 # bats sets status/output/lines/stderr; each test is a subshell
bats_require_minimum_version 1.5.0
load helpers

setup_file() {
  build_helpers
  local root ctx
  root=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  ctx="$BATS_FILE_TMPDIR/standin-image"
  mkdir -p "$ctx"
  (cd "$root" && CGO_ENABLED=0 go build -o "$ctx/standin" ./e2e/standin) || return 1
  printf 'FROM busybox:latest\nCOPY standin /usr/local/bin/standin\nENV PATH=/usr/local/bin:/usr/bin:/bin\n' >"$ctx/Dockerfile"
  STANDIN_IMAGE="litterbox-test/standin-$(rand_hex):latest"
  export STANDIN_IMAGE
  if [ "$RUNTIME" = kubernetes ]; then
    # The cluster has no registry: the image goes into its containerd.
    docker build -q -t "$STANDIN_IMAGE" "$ctx" >/dev/null
    "$root/scripts/k8s/load-image.sh" "$STANDIN_IMAGE" >/dev/null
  else
    "$RUNTIME" build -q -t "$STANDIN_IMAGE" "$ctx" >/dev/null
  fi
}
teardown_file() {
  if [ "$RUNTIME" = kubernetes ]; then
    ctr -a "${LITTERBOX_K8S_STATE:-/var/lib/litterbox-k8s}/run/containerd.sock" -n k8s.io images rm "docker.io/$STANDIN_IMAGE" >/dev/null 2>&1 || true
    docker rmi -f "$STANDIN_IMAGE" >/dev/null 2>&1 || true
  else
    "$RUNTIME" rmi -f "$STANDIN_IMAGE" >/dev/null 2>&1 || true
  fi
}

setup() {
  common_setup
  printf '[docker]\nimage = "%s"\n' "$STANDIN_IMAGE" >.litterbox.toml
  git add .litterbox.toml
  git commit -qm "the stand-in agent's image"
  SESSION="lbrun$$-$(rand_hex)"
}
teardown() {
  tmux kill-session -t "$SESSION" 2>/dev/null || true
  common_teardown
}

# in_tmux CMD starts CMD in a fresh 80x24 terminal in the repository; the
# pane keeps its output, then EXIT=<status>, for a minute.
in_tmux() {
  tmux new-session -d -s "$SESSION" -x 80 -y 24 -c "$REPO" \
    "env LITTERBOX_HELPER='${LITTERBOX_HELPER:-}' XDG_CONFIG_HOME='$XDG_CONFIG_HOME' GIT_CONFIG_GLOBAL='$GIT_CONFIG_GLOBAL' $1; echo EXIT=\$?; sleep 60"
}
pane() { tmux capture-pane -p -J -S -200 -t "$SESSION"; }
wait_pane() {
  for _ in $(seq 300); do pane | grep -q -- "$1" && return 0; sleep 0.1; done
  fail "no '$1' in: $(pane)"
}
run_commits() { git log --format=%s litterbox/"$1" | grep -c '^run: ' || true; }

@test "run on a terminal: the prompt answered, commits while it works, its exit status, list and the audit log (tmux, 80x24)" {
  create w
  in_tmux "'$LITTERBOX' run w -- standin -exit 3"
  wait_pane 'standin> what shall I do?'
  tmux send-keys -t "$SESSION" 'tidy the notes' Enter
  wait_pane 'standin: working on: tidy the notes'
  # While it works: list says so, and its first steps are on the branch.
  run lb_ok list
  assert_output --partial "w: an agent runs: standin -exit 3 (since "
  for _ in $(seq 150); do git show litterbox/w:standin/step-2.txt >/dev/null 2>&1 && break; sleep 0.1; done
  git show litterbox/w:standin/step-2.txt >/dev/null || fail "step 2 not committed 15 s on: $(pane)"
  pane | grep -q 'standin: done' && fail "step 2 was committed only once the agent was done: $(pane)"
  wait_pane 'EXIT=3'
  pane | grep -q "litterbox: run: [0-9]* commits on litterbox/w" || fail "no summary in: $(pane)"
  # At least one while it worked (step 2, above) and the final one.
  [ "$(run_commits w)" -ge 2 ] || fail "run: commits: $(git log --format=%s litterbox/w)"
  assert_equal "$(git show litterbox/w:standin/step-4.txt)" "step 4 of 4: tidy the notes"
  # Each commit's subject says what changed; its body, the command.
  git log -1 --format=%s litterbox/w | grep -q '^run: standin/step-[0-9]\.txt\(, standin/step-[0-9]\.txt\)* ([0-9] files\?)$' || fail "subject: $(git log -1 --format=%s litterbox/w)"
  assert_equal "$(git log -1 --format=%b litterbox/w)" "standin -exit 3"
  # The agent's background process ended with it; list no longer says it runs.
  assert_equal "$(engine_exec "$(container_of w)" sh -c "grep -l '[s]leep.600' /proc/[0-9]*/cmdline 2>/dev/null | wc -l" | tr -d ' ')" 0
  run lb_ok list
  refute_output --partial "an agent runs"
  # The audit log: the session's start, and its end with the exit status
  # and the commits.
  run lb_ok log --audit w
  assert_line --regexp '^[0-9-]+ [0-9:]+ +w +run +0ms started +- +standin -exit 3$'
  assert_line --regexp '^[0-9-]+ [0-9:]+ +w +run +[0-9.]+m?s exit 3 +[0-9a-f]{8} +standin -exit 3$'
  run lb_ok log --audit -v w
  assert_line --regexp '^    exit status 3, [0-9]+ commits: '
}

@test "run: Ctrl-C reaches the agent, which stops with its processes; what it wrote is committed (tmux)" {
  create w
  in_tmux "'$LITTERBOX' run w -- standin -steps 100 -pause 300ms"
  wait_pane 'standin> '
  tmux send-keys -t "$SESSION" 'go' Enter
  wait_pane 'wrote standin/step-5.txt'
  tmux send-keys -t "$SESSION" C-c
  wait_pane 'standin: interrupted'
  wait_pane 'EXIT=130'
  # The branch holds what the sandbox holds, no more, no less.
  assert_equal "$(git ls-tree -r --name-only litterbox/w standin)" \
    "$(engine_exec "$(container_of w)" sh -c 'cd /src && ls standin/* | sort')"
  assert_equal "$(engine_exec "$(container_of w)" sh -c "grep -l '[s]tandin\|[s]leep.600' /proc/[0-9]*/cmdline 2>/dev/null | wc -l" | tr -d ' ')" 0
}

@test "run: the window size passes through, and a resize reaches the agent (tmux)" {
  create w
  in_tmux "'$LITTERBOX' run w -- sh -c 'stty size; read x; stty size'"
  wait_pane '^24 80$'
  tmux resize-window -t "$SESSION" -x 100 -y 30
  sleep 0.5
  tmux send-keys -t "$SESSION" Enter
  wait_pane '^30 100$'
  wait_pane 'EXIT=0'
}

@test "run without a terminal: stdin and the exit status pass; the changes are committed" {
  create w
  run --separate-stderr lb run w -- sh -c 'cat > from-stdin.txt; exit 7' <<<"piped"
  assert_equal "$status" 7
  assert_equal "$(git show litterbox/w:from-stdin.txt)" piped
  assert_equal "$stderr" "litterbox: run: 1 commit on litterbox/w ($(git rev-parse --short=12 litterbox/w)); litterbox diff w shows them"
  # create --run: made, then run, in one step.
  run --separate-stderr lb create made -q --run -- sh -c 'echo made > made.txt; exit 4' </dev/null
  assert_equal "$status" 4
  assert_output --partial "Created sandbox 'made'"
  assert_equal "$(git show litterbox/made:made.txt)" made
}

@test "run: [agent] command is the default, and doctor finds it in the image; without one, one line says what to do" {
  create w
  run --separate-stderr lb run w
  assert_equal "$status" 2
  assert_equal "$stderr" "Error: run: no command: give one after -- (litterbox run w -- claude), or name the project's agent with [agent] command in .litterbox.local.toml."
  printf '[agent]\ncommand = ["sh", "-c", "echo from the config > agent.txt"]\n' >.litterbox.local.toml
  run --separate-stderr lb run w </dev/null
  assert_success
  assert_equal "$(git show litterbox/w:agent.txt)" "from the config"
  run -127 --separate-stderr lb run w -- no-such-agent </dev/null
  assert_equal "${stderr_lines[0]}" "litterbox: no-such-agent is not in the sandbox (not found in its PATH, /usr/local/bin:/usr/bin:/bin): install it in the sandbox's image"
  # doctor looks for the agent in the image.
  run lb doctor
  assert_line --regexp "^warn +agent +sh \(\[agent\] command\) is /bin/sh in $STANDIN_IMAGE, in a sandbox that reaches no host: an agent that calls its API cannot\$"
  printf '[agent]\ncommand = ["claude"]\n' >.litterbox.local.toml
  run lb doctor
  assert_failure
  assert_line --regexp "^fail +agent +claude \(\[agent\] command\) is not in $STANDIN_IMAGE \(not found in its PATH, /usr/local/bin:/usr/bin:/bin\): litterbox run would fail\$"
  run --separate-stderr lb run w extra
  assert_equal "$status" 2
  assert_equal "$stderr" "Error: run: put -- between the sandbox name and the command (litterbox run NAME -- CMD...)"
}
