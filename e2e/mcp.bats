#!/usr/bin/env bats
# The MCP server (litterbox mcp, stdio): sandbox-create and sandbox-list driven
# by a real MCP client (e2e/mcpcall, mcp-go), and the raw protocol on stdout.

# shellcheck disable=SC2154,SC2030,SC2031,SC2094 # bats sets status/output/lines/stderr; each test is a subshell; the raw tests poll the server's output file on purpose
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers mcpcall; }
setup() { common_setup; }
teardown() { common_teardown; }

# call TOOL ARGS_JSON: one call in a fresh session; sets RESULT to the result
# line ({tool, isError, structuredContent, text}).
call() {
  run --separate-stderr mcpcall --repo "$REPO" "$@"
  assert_success
  assert_equal "${#lines[@]}" $(($# / 2))
  RESULT=$output
}

r() { jsonget "$@" <<<"$RESULT"; }

@test "AC1.1: sandbox-create my-new-feature over MCP provisions a sandbox that litterbox list shows active" {
  head=$(git rev-parse HEAD)
  call sandbox-create '{"name":"my-new-feature"}'
  assert_equal "$(r .isError)" false
  assert_equal "$(r .structuredContent.name)" my-new-feature
  assert_equal "$(r .structuredContent.status)" active
  assert_equal "$(r .structuredContent.branch)" litterbox/my-new-feature
  assert_equal "$(r .structuredContent.container)" "$(container_of my-new-feature)"
  assert_equal "$(r .structuredContent.base)" "$head"
  assert_equal "$(r .structuredContent.workdir)" /src
  assert_equal "$(r .structuredContent.ports.#)" 0
  # AC1.4: the startup command ran.
  assert_equal "$(r .structuredContent.setup.command)" "echo hello world"
  assert_equal "$(r .structuredContent.setup.exit_code)" 0
  assert_equal "$(r .structuredContent.setup.stdout)" "hello world"
  [[ $(r .text) == *"my-new-feature"* ]]

  run lb list
  assert_success
  assert_line --regexp '^my-new-feature +active +- +[0-9]+[smhd] +[0-9]+[smhd] +litterbox/my-new-feature +0 +-$'
  assert_equal "$(lb_ok list --json | jsonget .0.container)" "$(container_of my-new-feature)"
  assert_equal "$(state_of "$(container_of my-new-feature)")" running
  # AC1.2 through MCP: the branch is at HEAD.
  assert_equal "$(git rev-parse litterbox/my-new-feature)" "$head"
  assert_equal "$(in_box my-new-feature cat README.md)" "# demo"
}

@test "sandbox-create with a devcontainer.json whose setup fails returns the usable sandbox, not an error, and a retry says to use it" {
  mkdir -p .devcontainer
  printf '{"image": "litterbox-test/debian:bookworm", "onCreateCommand": "npm install && pip install -r requirements.txt"}\n' >.devcontainer/devcontainer.json
  git add .devcontainer && git commit -qm devcontainer
  call sandbox-create '{"name":"dev"}' sandbox-create '{"name":"dev"}'
  first=${lines[0]} again=${lines[1]}
  assert_equal "$(jsonget .isError .structuredContent.status .structuredContent.setup.exit_code .structuredContent.setup_from <<<"$first")" \
    "$(printf 'false\nfailed-setup\n127\n.devcontainer/devcontainer.json')"
  text=$(jsonget .text <<<"$first")
  [[ $text == "Sandbox 'dev' was created and is usable, but its setup command failed: the setup command from .devcontainer/devcontainer.json (npm install && pip install -r requirements.txt) exited with code 127; it had no network."* ]] || fail "text: $text"
  [[ $text == *'setup-command = "" under [docker] in .litterbox.local.toml'* ]] || fail "no way to turn it off: $text"
  assert_equal "$(jsonget .isError <<<"$again")" true
  [[ $(jsonget .text <<<"$again") == *"already exists"*"its setup command failed; it is usable as it is: use it by this name"* ]] || fail "retry: $again"
  call bash '{"sandbox":"dev","command":"echo still-usable"}'
  assert_equal "$(r .structuredContent.stdout)" still-usable
  # The CLI says the same, and fails.
  run --separate-stderr lb create dev2
  assert_failure 1
  assert_stderr --partial "Error: Sandbox 'dev2': the setup command from .devcontainer/devcontainer.json (npm install && pip install -r requirements.txt) exited with code 127; it had no network."
}

@test "AC1.5: sandbox-create of an existing name returns isError 'already exists' and creates nothing" {
  call sandbox-create '{"name":"my-new-feature"}' sandbox-create '{"name":"my-new-feature"}' sandbox-create '{"name":"My New Feature"}'
  assert_equal "$(jsonget .isError <<<"${lines[0]}")" false
  tip=$(git rev-parse litterbox/my-new-feature)
  id=$(inspect "$(container_of my-new-feature)" '{{.Id}}')
  for i in 1 2; do
    assert_equal "$(jsonget .isError <<<"${lines[$i]}")" true
    text=$(jsonget .text <<<"${lines[$i]}")
    [[ $text == *"my-new-feature"*"already exists"* ]] || fail "result text: $text"
    [[ $text != *$'\n'* ]] || fail "the reason is one line: $text"
  done

  commit_file moved.txt "HEAD moves on"
  call sandbox-create '{"name":"my-new-feature"}'
  assert_equal "$(r .isError)" true
  [[ $(r .text) == *"already exists"* ]]
  assert_equal "$(git rev-parse litterbox/my-new-feature)" "$tip"
  assert_equal "$(inspect "$(container_of my-new-feature)" '{{.Id}}')" "$id"
  assert_equal "$(git for-each-ref --format='%(refname)' refs/heads/litterbox/)" refs/heads/litterbox/my-new-feature
  assert_equal "$("$RUNTIME" ps -aq --filter "label=dev.litterbox.repo=$REPO" | wc -l)" 1
}

@test "AC1.5: concurrent sandbox-create calls with one name: exactly one succeeds" {
  # Three calls at once in one session...
  call --parallel sandbox-create '{"name":"race"}' sandbox-create '{"name":"race"}' sandbox-create '{"name":"Race"}'
  assert_equal "$(jsonget -l .isError <<<"$RESULT" | sort | tr '\n' ' ')" "false true true "
  assert_equal "$(jsonget -l '.[isError=true]' <<<"[$(paste -sd, <<<"$RESULT")]" | grep -c 'already exists')" 2
  # ...and two server processes at once.
  mcpcall --repo "$REPO" sandbox-create '{"name":"race2"}' >"$BATS_TEST_TMPDIR/o1" 2>"$BATS_TEST_TMPDIR/e1" &
  p1=$!
  mcpcall --repo "$REPO" sandbox-create '{"name":"race2"}' >"$BATS_TEST_TMPDIR/o2" 2>"$BATS_TEST_TMPDIR/e2" &
  p2=$!
  wait "$p1"
  wait "$p2"
  assert_equal "$(cat "$BATS_TEST_TMPDIR/o1" "$BATS_TEST_TMPDIR/o2" | jsonget -l .isError | sort | tr '\n' ' ')" "false true "
  grep -q "already exists" "$BATS_TEST_TMPDIR/o1" "$BATS_TEST_TMPDIR/o2"

  assert_equal "$(git for-each-ref --format='%(refname)' refs/heads/litterbox/)" "$(printf 'refs/heads/litterbox/race\nrefs/heads/litterbox/race2')"
  assert_equal "$("$RUNTIME" ps -aq --filter "label=dev.litterbox.repo=$REPO" | wc -l)" 2
  assert_equal "$(list_status race)" active
  assert_equal "$(list_status race2)" active
}

@test "edge: sandbox-create with an invalid name (empty, 64 characters, only symbols, missing) returns isError and creates nothing" {
  a64=$(printf 'a%.0s' {1..64})
  call sandbox-create '{"name":""}' sandbox-create "{\"name\":\"$a64\"}" sandbox-create '{"name":"!@#$%^&*()"}' sandbox-create '{}'
  for i in 0 1 2; do
    assert_equal "$(jsonget .isError <<<"${lines[$i]}")" true
    text=$(jsonget .text <<<"${lines[$i]}")
    [[ $text == *"nvalid sandbox name"*"1-63 characters"*"[a-z0-9-]"* ]] || fail "result $i: $text"
  done
  assert_equal "$(jsonget .isError <<<"${lines[3]}")" true
  [[ $(jsonget .text <<<"${lines[3]}") == *name* ]]
  assert_equal "$(git for-each-ref refs/heads/litterbox/ refs/litterbox/)" ""
  assert_equal "$("$RUNTIME" ps -aq --filter "label=dev.litterbox.repo=$REPO")" ""
  assert_equal "$(lb_ok list)" "No sandboxes."
}

@test "an argument of the wrong JSON type is named with the type it needs, in the client's words, and nothing runs" {
  call read '{"sandbox":"x","path":"a","offset":"10"}' bash '{"sandbox":"x","command":"true","timeout":"60"}'
  assert_equal "$(jsonget .isError <<<"${lines[0]}")" true
  assert_equal "$(jsonget .text <<<"${lines[0]}")" "invalid arguments: argument 'offset' must be an integer, not a string"
  assert_equal "$(jsonget .text <<<"${lines[1]}")" "invalid arguments: argument 'timeout' must be a number, not a string"
  assert_equal "$("$RUNTIME" ps -aq --filter "label=dev.litterbox.repo=$REPO")" ""
}

@test "AC1.6: sandbox-create 'My Feature Name!@#' makes my-feature-name" {
  call sandbox-create '{"name":"My Feature Name!@#"}'
  assert_equal "$(r .isError)" false
  assert_equal "$(r .structuredContent.name)" my-feature-name
  assert_equal "$(r .structuredContent.branch)" litterbox/my-feature-name
  assert_equal "$(r .structuredContent.container)" "$(container_of my-feature-name)"
  branch_exists litterbox/my-feature-name
}

@test "sandbox-create base_ref starts from that commit; an unknown base_ref is an error that creates nothing" {
  first=$(git rev-parse HEAD)
  commit_file second.txt "second"
  call sandbox-create "{\"name\":\"old\",\"base_ref\":\"$first\"}"
  assert_equal "$(r .isError)" false
  assert_equal "$(r .structuredContent.base)" "$first"
  assert_equal "$(git rev-parse litterbox/old)" "$first"
  run in_box old test -e second.txt
  assert_failure

  call sandbox-create '{"name":"bad","base_ref":"no-such-ref"}'
  assert_equal "$(r .isError)" true
  [[ $(r .text) == *no-such-ref* ]]
  run branch_exists litterbox/bad
  assert_failure

  # The user's stashed untracked files are no base.
  echo private > stashed.txt
  git stash push -u -q
  call sandbox-create '{"name":"bad","base_ref":"stash@{0}^3"}'
  assert_equal "$(r .isError)" true
  [[ $(r .text) == *'base ref "stash@{0}^3" is refused'* ]] || fail "$(r .text)"
  run branch_exists litterbox/bad
  assert_failure
  run container_exists "$(container_of bad)"
  assert_failure
}

@test "sandbox-create says uncommitted host changes are NOT in the sandbox" {
  printf 'dirty\n' >>README.md
  call sandbox-create '{"name":"box"}'
  assert_equal "$(r .isError)" false
  [[ $(r .structuredContent.warnings.0) == *"NOT in the sandbox"* ]]
  [[ $(r .text) == *"NOT in the sandbox"* ]]
  assert_equal "$(in_box box cat README.md)" "# demo"
  assert_equal "$(git status --porcelain)" " M README.md"
}

@test "sandbox-list returns this repository's sandboxes with status and branch" {
  call sandbox-list '{}'
  assert_equal "$(r .isError)" false
  assert_equal "$(r .structuredContent.sandboxes.#)" 0

  create alpha
  create beta
  lb_ok pause beta >/dev/null
  make_repo
  (cd "$MADE_REPO" && create elsewhere)

  call sandbox-list '{}'
  assert_equal "$(r .isError)" false
  assert_equal "$(r '.structuredContent.sandboxes.*.name')" "$(printf 'alpha\nbeta')"
  assert_equal "$(r '.structuredContent.sandboxes.*.status')" "$(printf 'active\npaused')"
  assert_equal "$(r '.structuredContent.sandboxes.*.branch')" "$(printf 'litterbox/alpha\nlitterbox/beta')"
  assert_equal "$(r '.structuredContent.sandboxes.0.ports.@type')" array
  [[ $(r .text) == *alpha*active* ]]
  [[ $(r .text) == *beta*paused* ]]
}

# wait_for FILE PATTERN waits (up to 60 s) until FILE has a line matching PATTERN.
wait_for() {
  local i
  for ((i = 0; i < 600; i++)); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "timed out waiting for $2 in $1" >&2
  return 1
}

INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-e2e","version":"1"}}}'
INITIALIZED='{"jsonrpc":"2.0","method":"notifications/initialized"}'

@test "litterbox -v mcp writes only JSON-RPC on stdout; its logs go to stderr" {
  out=$BATS_TEST_TMPDIR/mcp.out
  err=$BATS_TEST_TMPDIR/mcp.err
  : >"$out"
  {
    printf '%s\n' "$INIT" "$INITIALIZED" \
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sandbox-create","arguments":{"name":"raw-box"}}}'
    wait_for "$out" '"id":2'
    printf '%s\n' \
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sandbox-create","arguments":{"name":"raw-box"}}}' \
      '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"sandbox-list","arguments":{}}}' \
      '{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}}'
    wait_for "$out" '"id":3'
    wait_for "$out" '"id":4'
    wait_for "$out" '"id":5'
  } | lb -v mcp --repo "$REPO" >"$out" 2>"$err"

  # Every stdout line is a JSON-RPC 2.0 message.
  run jsonget -l .jsonrpc <"$out"
  assert_success
  assert_equal "$(sort -u <<<"$output")" "2.0"
  assert_equal "${#lines[@]}" "$(grep -c . "$out")"
  assert_equal "$(jsonget -l .id <"$out" | sort -n | tr '\n' ' ')" "1 2 3 4 5 "
  run grep -c '# exit' "$out"
  assert_output 0
  # The logs went to stderr.
  grep -q '^\$ docker create ' "$err"
  grep -q '^\$ git ' "$err"

  res() { grep "\"id\":$1[,}]" "$out" | jsonget "$2"; }
  assert_equal "$(res 2 .result.structuredContent.name)" raw-box
  [[ $(res 2 .result.isError 2>/dev/null || echo false) == false ]]
  # A failure is a tool result with isError, not a protocol error.
  assert_equal "$(res 3 .result.isError)" true
  [[ $(res 3 '.result.content.0.text') == *"already exists"* ]]
  assert_equal "$(res 4 '.result.structuredContent.sandboxes.*.name')" raw-box
  tools=$(res 5 '.result.tools.*.name')
  grep -qx sandbox-create <<<"$tools"
  grep -qx sandbox-list <<<"$tools"
  # There is no delete tool and no git tool for agents.
  run grep -E 'delete|git' <<<"$tools"
  assert_failure
}

@test "litterbox stdio is an alias of litterbox mcp" {
  out=$BATS_TEST_TMPDIR/stdio.out
  : >"$out"
  {
    printf '%s\n' "$INIT" "$INITIALIZED" '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}'
    wait_for "$out" '"id":2'
  } | lb stdio --repo "$REPO" >"$out" 2>"$BATS_TEST_TMPDIR/stdio.err"
  assert_equal "$(grep '"id":1' "$out" | jsonget .result.serverInfo.name)" litterbox
  grep '"id":2' "$out" | jsonget '.result.tools.*.name' | grep -qx sandbox-create
}

@test "sandbox-ports and sandbox-service: an agent reads its port map and controls a service over MCP" {
  cat >.litterbox.toml <<'EOF'
[[ports]]
name = "www"
target = 8080
[container.services.web]
command = ["busybox", "httpd", "-f", "-p", "8080", "-h", "/src"]
EOF
  git add .litterbox.toml
  git commit -qm "config"
  lb_ok trust >/dev/null
  call sandbox-create '{"name":"svc-box"}' \
    sandbox-ports '{"sandbox":"svc-box"}' \
    sandbox-service '{"sandbox":"svc-box","action":"status"}' \
    sandbox-service '{"sandbox":"svc-box","action":"stop","service":"web"}' \
    sandbox-service '{"sandbox":"svc-box","action":"start","service":"web"}' \
    sandbox-service '{"sandbox":"svc-box","action":"logs","service":"web"}' \
    sandbox-service '{"sandbox":"svc-box","action":"stop","service":"nope"}' \
    sandbox-service '{"sandbox":"svc-box","action":"stop"}'
  l() { jsonget "$2" <<<"${lines[$1]}"; }
  assert_equal "$(l 0 .isError)" false
  assert_equal "$(l 0 .structuredContent.network)" bridge
  assert_equal "$(l 0 .structuredContent.config_files.0)" .litterbox.toml
  assert_equal "$(l 0 .structuredContent.services.0.state)" running
  port=$(l 0 .structuredContent.ports.0.host_port)
  assert_equal "$(l 1 .structuredContent.ports.0.host_port)" "$port"
  assert_equal "$(l 1 .structuredContent.ports.0.container_port)" 8080
  assert_equal "$(l 1 .structuredContent.ports.0.address)" "127.0.0.1:$port"
  assert_equal "$(l 1 '.structuredContent.ports.0.env.*' | tr '\n' ' ')" "LITTERBOX_FWD_PORT_WWW PORT_WWW "
  assert_equal "$(l 2 .structuredContent.services.0.name)" web
  assert_equal "$(l 2 .structuredContent.services.0.state)" running
  assert_equal "$(l 3 .structuredContent.services.0.state)" stopped
  assert_equal "$(l 3 .structuredContent.services.0.exit_code)" 143
  assert_equal "$(l 4 .structuredContent.services.0.state)" running
  [[ $(l 5 .structuredContent.log) == *"starting web"* ]]
  assert_equal "$(l 6 .isError)" true
  [[ $(l 6 .text) == *'no service "nope"'* ]]
  assert_equal "$(l 7 .isError)" true
  [[ $(l 7 .text) == *"name the service to stop"* ]]
  # The started service serves /src on the published port.
  eventually curl -fsS --max-time 2 "http://127.0.0.1:$port/README.md"
  run curl -fsS --max-time 2 "http://127.0.0.1:$port/README.md"
  assert_output "# demo"
}

@test "bash background: a server the agent starts outlives the call, is reached through a configured port, and sandbox-service controls it" {
  printf '[[ports]]\nname = "www"\ntarget = 8080\n' >.litterbox.local.toml
  call sandbox-create '{"name":"bg-box"}' \
    bash '{"sandbox":"bg-box","command":"busybox httpd -f -p 8080 -h /src","background":true}' \
    bash '{"sandbox":"bg-box","command":"true"}' \
    sandbox-service '{"sandbox":"bg-box","action":"status","service":"busybox"}' \
    bash '{"sandbox":"bg-box","command":"true","name":"x"}'
  l() { jsonget "$2" <<<"${lines[$1]}"; }
  assert_equal "$(l 0 .isError)" false
  port=$(l 0 .structuredContent.ports.0.host_port)
  assert_equal "$(l 1 .isError) $(l 1 .structuredContent.service) $(l 1 .structuredContent.state)" "false busybox running"
  [[ $(l 1 .text) == "started in the background: busybox: running (pid "* ]] || fail "$(l 1 .text)"
  assert_equal "$(l 3 .structuredContent.services.0.state)" running
  assert_equal "$(l 4 .isError)" true
  [[ $(l 4 .text) == "name is for background commands"* ]] || fail "$(l 4 .text)"
  eventually curl -fsS --max-time 2 "http://127.0.0.1:$port/README.md"
  run curl -fsS --max-time 2 "http://127.0.0.1:$port/README.md"
  assert_output "# demo"
  # The official go-sdk client too, with a name of the agent's choosing.
  run --separate-stderr mcpcall --client sdk --repo "$REPO" bash '{"sandbox":"bg-box","command":"busybox httpd -f -p 8081 -h /src","background":true,"name":"second"}' \
    sandbox-service '{"sandbox":"bg-box","action":"stop","service":"second"}'
  assert_success
  assert_equal "$(jsonget .structuredContent.service <<<"${lines[0]}") $(jsonget .structuredContent.state <<<"${lines[0]}")" "second running"
  assert_equal "$(jsonget .structuredContent.services.0.state <<<"${lines[1]}")" stopped
  run --separate-stderr lb list
  assert_line "bg-box: background commands busybox, second (litterbox service bg-box status)"
}

@test "scope: a server acts only on the sandboxes it created or was named with --sandbox; --all-sandboxes on every one" {
  run --separate-stderr mcpcall --scope own --repo "$REPO" sandbox-create '{"name":"mine"}' bash '{"sandbox":"mine","command":"echo one > one.txt"}'
  assert_success
  assert_equal "$(jsonget -l .isError <<<"$output" | tr '\n' ' ')" "false false "
  # A second server, as another agent's (through the official go-sdk
  # client): refused, and its list is empty.
  run --separate-stderr mcpcall --client sdk --scope own --repo "$REPO" bash '{"sandbox":"mine","command":"echo two > two.txt"}' sandbox-list '{}' sandbox-diff '{"sandbox":"mine"}'
  assert_success
  assert_equal "$(jsonget .isError <<<"${lines[0]}")" true
  [[ $(jsonget .text <<<"${lines[0]}") == "sandbox 'mine' is not this server's: it acts on the sandboxes its client (litterbox-e2e-sdk) made and those named with litterbox mcp --sandbox NAME (it has: none yet); --all-sandboxes lifts this for an agent that runs several" ]] || fail "${lines[0]}"
  assert_equal "$(jsonget '.structuredContent.sandboxes.#' <<<"${lines[1]}")" 0
  # Its list says the repository has others, not that it has none.
  assert_equal "$(jsonget .text <<<"${lines[1]}")" "None that this server may act on: the repository's 1 other sandbox(es) belong to other servers or people; sandbox-create makes one of yours."
  assert_equal "$(jsonget .isError <<<"${lines[2]}")" true
  run in_box mine test -e two.txt
  assert_failure
  # A name no sandbox has is not found, whatever the scope, naming the
  # server's own sandboxes only (a third client's).
  run --separate-stderr mcpcall --as third --scope own --repo "$REPO" bash '{"sandbox":"mnie","command":"true"}' sandbox-create '{"name":"theirs"}' read '{"sandbox":"mnie","path":"one.txt"}'
  assert_success
  assert_equal "$(jsonget .text <<<"${lines[0]}")" "sandbox 'mnie' not found: this server has no sandboxes yet (sandbox-create makes one)"
  assert_equal "$(jsonget .text <<<"${lines[2]}")" "sandbox 'mnie' not found: this server's sandboxes are theirs"
  # Named with --sandbox (how a person hands a sandbox to another client),
  # or all of them.
  for scope in mine all; do
    run --separate-stderr mcpcall --as fourth --scope "$scope" --repo "$REPO" bash '{"sandbox":"mine","command":"cat one.txt"}' sandbox-list '{}'
    assert_success
    assert_equal "$(jsonget .isError <<<"${lines[0]}")" false
    want=mine
    [ "$scope" = all ] && want=$'mine\ntheirs'
    assert_equal "$(jsonget '.structuredContent.sandboxes.*.name' <<<"${lines[1]}")" "$want"
  done
  run --separate-stderr lb mcp --sandbox 'Not a name!' --all-sandboxes </dev/null
  assert_failure 2
}

@test "a restarted server of the same client acts on its sandboxes and lists them; another client, --client apart, is refused" {
  run --separate-stderr mcpcall --client sdk --as claude-code --scope own --repo "$REPO" sandbox-create '{"name":"s1"}' bash '{"sandbox":"s1","command":"echo one > one.txt"}'
  assert_success
  assert_equal "$(jsonget -l .isError <<<"$output" | tr '\n' ' ')" "false false "
  # The client's server, started again (through the other library, with
  # the same client name): s1 is its own.
  run --separate-stderr mcpcall --as claude-code --scope own --repo "$REPO" sandbox-list '{}' bash '{"sandbox":"s1","command":"cat one.txt && echo two > two.txt"}'
  assert_success
  assert_equal "$(jsonget '.structuredContent.sandboxes.*.name' <<<"${lines[0]}")" s1
  assert_equal "$(jsonget .isError <<<"${lines[1]}")" false
  assert_equal "$(jsonget .structuredContent.stdout <<<"${lines[1]}")" one
  # Another client, and the same client named apart with --client: refused.
  for who in "--as codex" "--as claude-code --client-id reviewer"; do
    # shellcheck disable=SC2086
    run --separate-stderr mcpcall $who --scope own --repo "$REPO" bash '{"sandbox":"s1","command":"echo three > three.txt"}' sandbox-list '{}'
    assert_success
    assert_equal "$(jsonget .isError <<<"${lines[0]}")" true
    [[ $(jsonget .text <<<"${lines[0]}") == "sandbox 's1' is not this server's: "* ]] || fail "$who: ${lines[0]}"
    assert_equal "$(jsonget '.structuredContent.sandboxes.#' <<<"${lines[1]}")" 0
  done
  run in_box s1 test -e three.txt
  assert_failure
  # A person's sandbox is no client's.
  lb create person
  run --separate-stderr mcpcall --as claude-code --scope own --repo "$REPO" bash '{"sandbox":"person","command":"true"}'
  assert_equal "$(jsonget .isError <<<"$output")" true
}

@test "sandbox-fork: an agent forks its own sandbox, files and ignored build output included, and may act on the fork; another server's sandbox it may not fork" {
  run --separate-stderr mcpcall --scope own --repo "$REPO" sandbox-create '{"name":"mine"}' \
    bash '{"sandbox":"mine","command":"echo work > work.txt && mkdir -p ignored && echo built > ignored/out"}' \
    sandbox-fork '{"sandbox":"mine","name":"mine-b"}' \
    bash '{"sandbox":"mine-b","command":"cat work.txt ignored/out && echo b > b.txt"}'
  assert_success
  assert_equal "$(jsonget -l .isError <<<"$output" | tr '\n' ' ')" "false false false false "
  assert_equal "$(jsonget .structuredContent.forked_from <<<"${lines[2]}")" mine
  [[ $(jsonget .text <<<"${lines[2]}") == *"forked from: mine"* ]] || fail "${lines[2]}"
  assert_equal "$(jsonget .structuredContent.stdout <<<"${lines[3]}")" "work
built"
  assert_equal "$(git show litterbox/mine-b:work.txt)" work
  assert_equal "$(git show litterbox/mine-b:b.txt)" b
  run git show litterbox/mine:b.txt
  assert_failure
  # Another agent's server (another client) may not fork a sandbox that is not its own.
  run --separate-stderr mcpcall --as another-agent --scope own --repo "$REPO" sandbox-fork '{"sandbox":"mine","name":"stolen"}'
  assert_success
  assert_equal "$(jsonget .isError <<<"$output")" true
  run branch_exists litterbox/stolen
  assert_failure
  # Nor start a sandbox of its own from that sandbox's branch.
  run --separate-stderr mcpcall --as another-agent --scope own --repo "$REPO" sandbox-create '{"name":"stolen","base_ref":"litterbox/mine"}'
  assert_success
  assert_equal "$(jsonget .isError <<<"$output")" true
  [[ $(jsonget .text <<<"$output") == *"branch of sandbox 'mine', which this server may not act on"* ]] || fail "$output"
  run branch_exists litterbox/stolen
  assert_failure
}

@test "a server given a bad --repo answers the handshake, and every call says why" {
  run --separate-stderr mcpcall --scope own --repo "$BATS_TEST_TMPDIR/not-a-repo" sandbox-list '{}' sandbox-create '{"name":"x"}'
  assert_success
  for i in 0 1; do
    assert_equal "$(jsonget .isError <<<"${lines[$i]}")" true
    [[ $(jsonget .text <<<"${lines[$i]}") == "litterbox mcp cannot serve: "*"; give the server the repository with --repo DIR in the client's entry, or start the client in the repository" ]] || fail "${lines[$i]}"
  done
  [[ $stderr == *"litterbox mcp: litterbox mcp cannot serve: "* ]] || fail "$stderr"
  mkdir "$BATS_TEST_TMPDIR/plain"
  cd "$BATS_TEST_TMPDIR/plain"
  run --separate-stderr mcpcall --scope own sandbox-list '{}'
  assert_success
  [[ $(jsonget .text <<<"$output") == "litterbox mcp cannot serve: "*"not a git repository"* ]] || fail "$output"
}

@test "review loop: the agent's sandbox-ready, a person's reject, the reason at the head of the agent's next result once, list and the audit log" {
  call sandbox-create '{"name":"loop"}'
  call bash '{"sandbox":"loop","command":"echo a > a.txt"}'
  call sandbox-ready '{"sandbox":"loop","summary":"adds a.txt\nchecked by hand"}'
  assert_equal "$(r .isError)" false
  assert_equal "$(r .structuredContent.state)" ready
  run --separate-stderr lb list
  assert_success
  assert_line 'loop: ready (agent): adds a.txt'
  run --separate-stderr lb list --json
  assert_equal "$(jsonget .0.review.state <<<"$output")" ready
  assert_equal "$(jsonget .0.review.message <<<"$output")" $'adds a.txt\nchecked by hand'

  run --separate-stderr lb reject loop
  assert_failure 2
  [[ $stderr == *"-m REASON is required"* ]] || fail "reject without a reason: $stderr"
  run --separate-stderr lb reject loop -m "move a.txt under docs/"
  assert_success
  assert_output "Rejected sandbox 'loop': its agent reads the reason with its next tool call."
  run --separate-stderr lb list
  assert_line 'loop: rejected (person): move a.txt under docs/'

  call read '{"sandbox":"loop","path":"a.txt"}'
  assert_equal "$(r .isError)" false
  [[ $(r .text) == "A person rejected the work of sandbox 'loop': move a.txt under docs/"* ]] || fail "the next result: $(r .text)"
  call read '{"sandbox":"loop","path":"a.txt"}'
  [[ $(r .text) != *rejected* ]] || fail "told twice: $(r .text)"
  call sandbox-list '{}'
  [[ $(r .text) == *"working (rejected: move a.txt under docs/)"* ]] || fail "sandbox-list: $(r .text)"
  run --separate-stderr lb list
  assert_line 'loop: working since it was rejected (person): move a.txt under docs/'
  assert_equal "$(grep -c '"tool":"review-state"' .git/litterbox/audit.jsonl)" 2
}

@test "litterbox mcp --review: a reviewer reads the diff and files, every changing tool is refused and changes nothing, its verdict reaches list and the agent" {
  call sandbox-create '{"name":"rev"}'
  call bash '{"sandbox":"rev","command":"echo a > a.txt"}'
  tip=$(git rev-parse litterbox/rev)
  run --separate-stderr mcpcall --repo "$REPO" --scope review:rev sandbox-diff '{"sandbox":"rev"}' read '{"sandbox":"rev","path":"a.txt"}' \
    bash '{"sandbox":"rev","command":"echo b > a.txt"}' write '{"sandbox":"rev","path":"b.txt","content":"b"}' \
    edit '{"sandbox":"rev","path":"a.txt","old_string":"a","new_string":"b"}' sandbox-create '{"name":"more"}' \
    sandbox-review '{"sandbox":"rev","verdict":"reject","notes":"a.txt needs a heading"}'
  assert_success
  assert_equal "${#lines[@]}" 7
  [[ $(jsonget .text <<<"${lines[0]}") == *"a.txt"* ]] || fail "diff: ${lines[0]}"
  [[ $(jsonget .text <<<"${lines[1]}") == *"1"$'\t'"a"* ]] || fail "read: ${lines[1]}"
  for i in 2 3 4 5; do
    assert_equal "$(jsonget .isError <<<"${lines[$i]}")" true
    [[ $(jsonget .text <<<"${lines[$i]}") == *"is refused: this server reviews"* ]] || fail "call $i: ${lines[$i]}"
  done
  assert_equal "$(jsonget .structuredContent.state <<<"${lines[6]}")" rejected
  assert_equal "$(git rev-parse litterbox/rev)" "$tip"
  run --separate-stderr lb list
  assert_line 'rev: rejected (reviewer): a.txt needs a heading'
  refute_line --partial more
  call read '{"sandbox":"rev","path":"a.txt"}'
  [[ $(r .text) == "Its reviewer rejected the work of sandbox 'rev': a.txt needs a heading"* ]] || fail "the agent's next result: $(r .text)"
  run --separate-stderr lb mcp --review rev --all-sandboxes </dev/null
  assert_failure 2
}
