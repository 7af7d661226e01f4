#!/usr/bin/env bats
# Adoption: litterbox doctor and the create preflight, failing fast (one
# Error: line) when the engine is unreachable, mcp-config for the agent
# clients, the audit log of MCP tool calls, and the polish: colors only on a
# terminal, create's progress, shell completion of sandbox names, examples in
# every --help, and list's AGE and AHEAD columns.

# shellcheck disable=SC2154,SC2030,SC2031,SC2016,SC2094 # bats sets status/output/lines/stderr; each test is a subshell; single-quoted scripts run in the sandbox; the raw MCP test polls the server's output file on purpose
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers mcpcall; }
setup() { common_setup; }
teardown() {
  # A test that failed while log --follow ran leaves it running.
  [ -z "${FOLLOW_PID:-}" ] || kill "$FOLLOW_PID" 2>/dev/null || true
  common_teardown
}

# An engine that is not there: the docker CLI fails at once.
BAD_HOST=unix:///nonexistent.sock
# An image that is not present and cannot be pulled (no registry here).
MISSING_IMAGE=litterbox-e2e-missing:nope

ESC=$'\x1b'

# missing_image_config writes and commits a config naming $MISSING_IMAGE.
missing_image_config() {
  printf '[docker]\nimage = "%s"\n' "$MISSING_IMAGE" >.litterbox.toml
  git add .litterbox.toml
  git commit -qm "config: missing image"
}

# nothing_created NAME: no branch, container, volume or state for NAME.
nothing_created() {
  assert_equal "$(git for-each-ref refs/heads/litterbox/ refs/litterbox/)" ""
  run container_exists "$(container_of "$1")"
  assert_failure
  assert_equal "$("$RUNTIME" ps -aq --filter "label=dev.litterbox.repo=$REPO")" ""
  assert_equal "$("$RUNTIME" volume ls -q | grep -F "litterbox-$REPO_SLUG-" || true)" ""
  assert_file_not_exist "$(git rev-parse --path-format=absolute --git-common-dir)/litterbox/sandboxes/$1.json"
  assert_equal "$(litterbox_names)" ""
}

# fix_after NAME: the line after check NAME's line (in $lines) is its
# indented fix; prints the fix text.
fix_after() {
  local i
  for i in "${!lines[@]}"; do
    if [[ ${lines[$i]} =~ ^[a-z]+\ +$1\  ]]; then
      [[ ${lines[$((i + 1))]:-} =~ ^\ +fix:\ (.+)$ ]] || {
        echo "no fix line under $1: ${lines[$((i + 1))]:-<none>}" >&2
        return 1
      }
      printf '%s\n' "${BASH_REMATCH[1]}"
      return 0
    fi
  done
  echo "no check line $1 in: $output" >&2
  return 1
}

strip_ansi() { sed "s/$ESC\\[[0-9;]*m//g"; }

# ---------------------------------------------------------------------------
# doctor

@test "doctor: a healthy repository passes every check; [[ports]] adds a ports check; a dirty tree is only a warning with a fix" {
  run --separate-stderr lb doctor
  assert_success
  assert_equal "$stderr" ""
  for check in runtime engine helper image sandbox isolation git repository config; do
    assert_line --regexp "^ok +$check +[^ ]"
  done
  assert_equal "${#lines[@]}" 9
  # The engine offers gVisor (scripts/gvisor.sh registered it): a probe ran on it.
  assert_line --regexp '^ok +isolation +container, gvisor \(runtime runsc: a probe ran on its kernel 4\.4\.0\)$'
  assert_line --regexp '^ok +sandbox +busybox:latest runs sandboxes: helper on linux/[a-z0-9]+ as uid 1000'
  # The throwaway container doctor started is gone.
  assert_equal "$("$RUNTIME" ps -aq --filter label=dev.litterbox.probe)" ""
  refute_line --partial "fix:"
  assert_line --regexp '^ok +image +busybox:latest '

  run --separate-stderr lb doctor --json
  assert_success
  json=$output
  assert_equal "$(jsonget '.@type' '.#' <<<"$json")" "$(printf 'array\n9')"
  assert_equal "$(jsonget '.*.name' <<<"$json" | tr '\n' ' ')" "runtime engine helper image sandbox isolation git repository config "
  assert_equal "$(jsonget '.*.status' <<<"$json" | sort -u)" ok
  for i in 0 1 2 3 4 5 6 7 8; do
    assert_equal "$(jsonget ".$i.@keys" <<<"$json")" "detail name status"
  done

  # Configured ports get a check of their own.
  printf '[[ports]]\nname = "www"\ntarget = 8080\n' >.litterbox.toml
  git add .litterbox.toml
  git commit -qm "config: ports"
  # Ports loosen the sandbox: the committed config needs the user's word.
  run --separate-stderr lb doctor
  assert_failure 1
  assert_line --regexp '^fail +config +\.litterbox\.toml sets docker\.network = "bridge", which loosens the sandbox'
  assert_line --regexp '^ +fix: read \.litterbox\.toml, then: litterbox trust$'
  lb_ok trust >/dev/null
  run --separate-stderr lb doctor
  assert_success
  assert_equal "${#lines[@]}" 10
  assert_line --index 9 --regexp '^ok +ports +.*www'
  assert_line --regexp '^ok +config +\.litterbox\.toml'

  # Uncommitted changes are a warning, with a fix, and doctor still passes.
  printf 'dirty\n' >>README.md
  run --separate-stderr lb doctor
  assert_success
  assert_equal "$stderr" ""
  assert_line --regexp '^warn +repository +.*1 uncommitted change\(s\)'
  fix=$(fix_after repository)
  [ -n "$fix" ] || fail "empty fix"
  assert_equal "$(grep -c 'fix:' <<<"$output")" 1
  run --separate-stderr lb doctor --json
  assert_success
  assert_equal "$(jsonget '.[name=repository].status' <<<"$output")" warn
  assert_equal "$(jsonget '.[name=repository].fix' <<<"$output")" "$fix"
  [[ $(jsonget '.[name=repository].detail' <<<"$output") == *"1 uncommitted change(s)"* ]]
}

@test "doctor and calls: litterbox delivers the litterbox-helper of its build beside it, else itself, and says why" {
  [ -x "$(dirname "$LITTERBOX")/litterbox-helper" ] || fail "make build puts litterbox-helper beside litterbox"
  bin=$BATS_TEST_TMPDIR/bin
  mkdir -p "$bin"
  cp "$LITTERBOX" "$bin/litterbox"
  alone() { env -u LITTERBOX_HELPER "$bin/litterbox" "$@"; }

  # Alone, litterbox is its own helper: sandboxes work, doctor says what it costs.
  run --separate-stderr alone doctor
  assert_success
  assert_line --regexp "^ok +helper +$bin/litterbox \(linux/[a-z0-9]+, static\); litterbox itself: no litterbox-helper beside it, so each call starts about 10 ms slower"
  run --separate-stderr alone create alone --quiet
  assert_success
  run --separate-stderr alone exec alone -- sh -c 'echo self > self.txt; ls /.litterbox/*/'
  assert_success
  assert_output litterbox-helper
  assert_equal "$(git show litterbox/alone:self.txt)" self

  # Beside the helper program of its build, that is what goes in: a new
  # sandbox's helper is the small program (another build id), and calls work.
  cp "$(dirname "$LITTERBOX")/litterbox-helper" "$bin/"
  run --separate-stderr alone doctor
  assert_success
  assert_line --regexp "^ok +helper +$bin/litterbox-helper \(linux/[a-z0-9]+, static\)$"
  run --separate-stderr alone exec alone -- sh -c 'echo own > own.txt; ls /.litterbox/ | wc -l'
  assert_success
  assert_output 2
  assert_equal "$(git show litterbox/alone:own.txt)" own

  # A helper of another build (here another program altogether) is passed over, with a warning.
  cp "$(command -v git)" "$bin/litterbox-helper"
  run --separate-stderr alone doctor
  assert_success
  assert_line --regexp "^warn +helper +$bin/litterbox \(linux/[a-z0-9]+, static\); litterbox itself: $bin/litterbox-helper is not of this litterbox's build \(it has no Go build record: .*\), so each call starts about 10 ms slower$"
  assert_line --partial "fix: reinstall both from one build: make install, or go install github.com/litterbox-dev/litterbox/cmd/...@VERSION"
  run --separate-stderr alone exec alone -- sh -c 'echo again > again.txt'
  assert_success
  assert_equal "$(git show litterbox/alone:again.txt)" again
  alone delete alone --force >/dev/null
}

@test "Litterbox's own files (mcp-config's client files, .litterbox.local.toml) are never uncommitted changes to warn about; a file of the project still is" {
  lb_ok mcp-config claude --write >/dev/null
  lb_ok mcp-config cursor --write >/dev/null
  printf '[docker]\nimage = "busybox:latest"\n' >.litterbox.local.toml
  [ -n "$(git status --porcelain)" ] || fail "the fixture left the work tree clean"
  run --separate-stderr lb doctor
  assert_success
  assert_line --regexp '^ok +repository '
  run --separate-stderr lb create box
  assert_success
  refute_output --partial "uncommitted"
  [[ $stderr != *uncommitted* ]] || fail "stderr: $stderr"
  printf 'work\n' >notes.txt
  run --separate-stderr lb doctor
  assert_line --regexp '^warn +repository +.*1 uncommitted change\(s\)'
}

@test "doctor: an image with no shell runs sandboxes, with a warning that bash is unavailable; debian passes" {
  printf '[docker]\nimage = "litterbox-test/noshell:latest"\n' >.litterbox.toml
  run --separate-stderr lb doctor
  assert_success
  assert_line --regexp '^warn +sandbox +litterbox-test/noshell:latest runs sandboxes .*no /bin/sh: bash'
  printf '[docker]\nimage = "litterbox-test/debian:bookworm"\n' >.litterbox.toml
  run --separate-stderr lb doctor
  assert_success
  assert_line --regexp '^ok +sandbox +litterbox-test/debian:bookworm runs sandboxes'
  assert_equal "$("$RUNTIME" ps -aq --filter label=dev.litterbox.probe)" ""
}

@test "a Go repository with no config is told golang, by create, sandbox-create and doctor; the default setup says it is the default" {
  printf 'module example.com/x\n\ngo 1.26.7\n' >go.mod
  git add go.mod
  git commit -qm "go.mod"
  hint='this is a Go project (go.mod) and busybox has no go: set image = "golang:1.26" under [docker] in .litterbox.toml'
  run --separate-stderr lb create one
  assert_success
  assert_line "  image:     busybox:latest (the default; $hint)"
  assert_line "  setup:     echo hello world (exit 0; the default, not your project's: set setup-command under [docker] in .litterbox.toml)"
  run --separate-stderr mcpcall --scope own sandbox-create '{"name":"two"}'
  assert_success
  text=$(jsonget .text <<<"$output")
  [[ $text == *$'\n'"image: busybox:latest (the default; $hint)"$'\n'* ]] || fail "$text"
  assert_equal "$(jsonget .structuredContent.image_hint <<<"$output")" "$hint"
  run --separate-stderr lb doctor
  assert_line --regexp '^warn +config +sandboxes run the default image, busybox:latest, and this is a Go project \(go\.mod\): busybox has no go$'
  assert_line --regexp '^ +fix: set image = "golang:1\.26" under \[docker\] in \.litterbox\.toml$'
  # Chosen in the config: said where from, and no hint.
  printf '[docker]\nimage = "litterbox-test/debian:bookworm"\nsetup-command = "true"\n' >.litterbox.toml
  git add .litterbox.toml
  git commit -qm config
  run --separate-stderr lb create three
  assert_success
  assert_line "  image:     litterbox-test/debian:bookworm (from .litterbox.toml)"
  assert_line "  setup:     true (exit 0)"
  run --separate-stderr lb doctor
  assert_line --regexp '^ok +config +\.litterbox\.toml: image litterbox-test/debian:bookworm'
}

@test "image refusals name the file that set the image, and a near miss or a name in the wrong case as what was meant; list names an engine that is down" {
  printf '[docker]\nimage = "busybx:latest"\n' >.litterbox.local.toml
  run --separate-stderr lb create box
  assert_failure 1
  [[ $stderr == "Error: image: busybx:latest is not present and could not be pulled: "*' (did you mean busybox:latest, which this engine has? set image = "busybox:latest" under [docker] in .litterbox.local.toml)' ]] || fail "$stderr"
  run --separate-stderr lb doctor
  assert_line '                  fix: did you mean busybox:latest, which this engine has? set image = "busybox:latest" under [docker] in .litterbox.local.toml'
  printf '[docker]\nimage = "Busybox:Latest"\n' >.litterbox.local.toml
  run --separate-stderr lb create box
  assert_failure 1
  assert_stderr "Error: image: \"Busybox:Latest\" is not an image name: a repository's name is in lower case (set image = \"busybox:latest\" under [docker] in .litterbox.local.toml)"
  # Nowhere near any image here: pull or build it, in the file that named it.
  printf '[docker]\nimage = "%s"\n' "$MISSING_IMAGE" >.litterbox.local.toml
  run --separate-stderr lb create box
  assert_failure 1
  [[ $stderr == *"(pull or build it ($RUNTIME pull $MISSING_IMAGE), or set another image under [docker] in .litterbox.local.toml)" ]] || fail "$stderr"
  nothing_created box
  rm .litterbox.local.toml

  DOCKER_HOST=$BAD_HOST run --separate-stderr lb list
  assert_failure 1
  assert_output ""
  [[ $stderr == "Error: The engine is not reachable ("*"); start the engine (e.g. systemctl start docker), or point DOCKER_HOST / --context at a running one; litterbox doctor checks it." && $stderr != *$'\n'* ]] || fail "$stderr"
}

@test "doctor: an unreachable engine fails with a fix naming DOCKER_HOST, and the image is not checked" {
  DOCKER_HOST=$BAD_HOST LB_TIMEOUT=20 run --separate-stderr lb doctor
  refute_hang
  assert_failure 1
  assert_line --regexp '^ok +runtime '
  assert_line --regexp '^fail +engine +.*nonexistent\.sock'
  fix=$(fix_after engine)
  [[ $fix == *DOCKER_HOST* ]] || fail "engine fix does not mention DOCKER_HOST: $fix"
  assert_line --regexp '^fail +image +not checked'
  refute_line --regexp '^ok +image'
  assert_line --regexp '^ok +git '
  assert_line --regexp '^ok +repository '
  assert_stderr "Error: Some checks failed; see the fixes above."

  DOCKER_HOST=$BAD_HOST run --separate-stderr lb doctor --json
  assert_failure 1
  assert_equal "$(jsonget '.[name=engine].status' '.[name=image].status' <<<"$output")" "$(printf 'fail\nfail')"
  [[ $(jsonget '.[name=engine].fix' <<<"$output") == *DOCKER_HOST* ]]
  [[ $(jsonget '.[name=image].detail' <<<"$output") == "not checked"* ]]
  assert_equal "$(jsonget '.[name=git].status' <<<"$output")" ok
}

@test "doctor: an image that is neither present nor pullable fails with a fix" {
  missing_image_config
  LB_TIMEOUT=30 run --separate-stderr lb doctor
  refute_hang
  assert_failure 1
  assert_line --regexp "^fail +image +litterbox-e2e-missing:nope .*could not be pulled"
  fix=$(fix_after image)
  [[ $fix == *"$MISSING_IMAGE"* ]] || fail "image fix: $fix"
  for check in runtime engine git repository config; do
    assert_line --regexp "^ok +$check "
  done
  assert_stderr "Error: Some checks failed; see the fixes above."

  run --separate-stderr lb doctor --json
  assert_failure 1
  assert_equal "$(jsonget '.[name=image].status' <<<"$output")" fail
  assert_equal "$(jsonget '.[name=image].fix' <<<"$output")" "$fix"
  # Only the failing check has a fix.
  assert_equal "$(jsonget '.*.@keys' <<<"$output" | grep -c fix)" 1
}

@test "doctor: a runtime that is not installed fails the runtime check; --runtime takes only docker, podman or kubernetes" {
  # A PATH with git but no docker.
  bin=$BATS_TEST_TMPDIR/gitonly
  mkdir -p "$bin"
  ln -s "$(command -v git)" "$bin/git"
  run --separate-stderr timeout -k 5 30 env PATH="$bin" "$LITTERBOX" doctor
  assert_failure 1
  assert_line --regexp '^fail +runtime +docker not found'
  fix=$(fix_after runtime)
  [[ $fix == *install* ]] || fail "runtime fix: $fix"
  assert_line --regexp '^fail +engine +not checked'
  assert_line --regexp '^fail +image +not checked'
  assert_line --regexp '^ok +git '
  assert_stderr "Error: Some checks failed; see the fixes above."

  run --separate-stderr lb --runtime nosuchbin doctor
  assert_failure 2
  assert_output ""
  assert_stderr --regexp '^Error: .*nosuchbin.*docker, podman or kubernetes'
}

# ---------------------------------------------------------------------------
# create's preflight

@test "create runs the preflight: a missing image or an unreachable engine fails with one Error line and creates nothing" {
  missing_image_config
  LB_TIMEOUT=30 run --separate-stderr lb create x
  refute_hang
  assert_failure 1
  assert_output ""
  assert_equal "$(grep -c '' <<<"$stderr")" 1
  assert_stderr --regexp "^Error: .*litterbox-e2e-missing:nope"
  nothing_created x

  git rm -q .litterbox.toml
  git commit -qm "no config"
  DOCKER_HOST=$BAD_HOST LB_TIMEOUT=20 run --separate-stderr lb create x
  refute_hang
  assert_failure 1
  assert_output ""
  assert_equal "$(grep -c '' <<<"$stderr")" 1
  assert_stderr --regexp '^Error: .*engine.*not reachable'
  nothing_created x
}

# ---------------------------------------------------------------------------
# An unreachable engine

# offline_fails CMD...: with the engine unreachable, `litterbox CMD...` exits 1
# within 2 s with one stderr line, starting Error:, nothing on stdout (unless
# FAIL_STDOUT_OK=1), no panic. What is wrong is added to OFFLINE_BAD, so one
# run reports every command.
OFFLINE_BAD=()
offline_fails() {
  local t0 ms bad=()
  t0=$(date +%s%N)
  DOCKER_HOST=$BAD_HOST LB_TIMEOUT=10 run --separate-stderr lb "$@" </dev/null
  ms=$((($(date +%s%N) - t0) / 1000000))
  [ "$status" -eq 1 ] || bad+=("exited $status, want 1")
  [ "$ms" -lt 2000 ] || bad+=("took ${ms}ms")
  [[ $stderr == Error:* && $stderr != *$'\n'* ]] || bad+=("stderr is not one Error: line")
  [[ $output$stderr != *panic* && $output$stderr != *goroutine* ]] || bad+=("panicked")
  [[ ${FAIL_STDOUT_OK:-} == 1 || -z $output ]] || bad+=("printed on stdout")
  if [ "${#bad[@]}" -gt 0 ]; then
    OFFLINE_BAD+=("litterbox $*: $(printf '%s; ' "${bad[@]}")stdout: ${output:0:300}"$'\n'"  stderr: $stderr")
  fi
}


@test "with the engine unreachable every engine command fails in under 2 s with one Error line; git-only commands still work" {
  create box
  printf 'up\n' >"$BATS_TEST_TMPDIR/up.txt"
  c=$(container_of box)

  offline_fails list
  offline_fails list --all-repos
  offline_fails list --json
  offline_fails create other
  offline_fails pause box
  offline_fails pause --all-envs
  offline_fails resume box
  offline_fails resume --all-envs
  offline_fails delete box
  offline_fails delete --force box
  offline_fails exec box -- true
  offline_fails shell box
  offline_fails service box status
  offline_fails upload box "$BATS_TEST_TMPDIR/up.txt" up.txt
  offline_fails download box README.md "$BATS_TEST_TMPDIR/down.md"
  # doctor prints its checks, then the one Error line.
  FAIL_STDOUT_OK=1 offline_fails doctor
  assert_equal "$(grep -cE '^(ok|warn|fail) ' <<<"$output")" 7
  assert_line --regexp '^fail +engine '

  # Nothing was half done: the sandbox, its branch and its container are intact.
  branch_exists litterbox/box || fail "the branch is gone"
  assert_equal "$(state_of "$c")" running
  assert_equal "$(list_status box)" active
  assert_file_not_exist "$BATS_TEST_TMPDIR/down.md"

  # Commands that need only git (or the sandbox's record) still succeed.
  lb_ok exec box -- sh -c 'echo change >>README.md' </dev/null >/dev/null
  DOCKER_HOST=$BAD_HOST run --separate-stderr lb diff box
  assert_success
  assert_output --partial "+change"
  DOCKER_HOST=$BAD_HOST run --separate-stderr lb log box
  assert_success
  assert_output --partial "exec: sh -c"
  DOCKER_HOST=$BAD_HOST run --separate-stderr lb ports box
  assert_success
  DOCKER_HOST=$BAD_HOST run --separate-stderr lb mcp-config claude --allow-builtin
  assert_success
  [[ $(jsonget .mcpServers.litterbox.args.0 <<<"$output") == mcp ]]

  [ "${#OFFLINE_BAD[@]}" -eq 0 ] || fail "$(printf '%s\n' "${OFFLINE_BAD[@]}")"
}

# ---------------------------------------------------------------------------
# mcp-config (the server entry alone, --allow-builtin: containment.bats tests
# the rules written beside it by default)

CLIENTS=(claude codex opencode cursor zed)

# client_file CLIENT prints the client's project file, relative to the
# repository root.
client_file() {
  case $1 in
  claude) echo .mcp.json ;;
  codex) echo .codex/config.toml ;;
  opencode) echo opencode.json ;;
  cursor) echo .cursor/mcp.json ;;
  zed) echo .zed/settings.json ;;
  esac
}

# entry_of CLIENT FILE [NAME] prints server NAME's (default litterbox) command
# and arguments from FILE, one per line.
entry_of() {
  local n=${3:-litterbox}
  case $1 in
  claude | cursor) jsonget ".mcpServers.$n.command" ".mcpServers.$n.args.*" <"$2" ;;
  zed) jsonget ".context_servers.$n.command" ".context_servers.$n.args.*" <"$2" ;;
  opencode) jsonget ".mcp.$n.command.*" <"$2" ;;
  codex)
    # The table [mcp_servers.NAME]: its command and args lines.
    awk -v t="[mcp_servers.$n]" '
      /^\[/ { in_t = ($0 == t) }
      in_t && /^command = / { sub(/^command = /, ""); print }
      in_t && /^args = / { sub(/^args = /, ""); print }
    ' "$2"
    ;;
  esac
}

# want_entry CLIENT prints what entry_of should print: litterbox by name,
# and no path of this machine (Cursor's own variable for the project).
want_entry() {
  case $1 in
  codex) printf '"litterbox"\n["mcp"]\n' ;;
  cursor) printf '%s\n' litterbox mcp --repo '${workspaceFolder}' ;;
  *) printf '%s\n' litterbox mcp ;;
  esac
}

@test "mcp-config CLIENT prints the entry and where to merge it; unknown clients are usage errors" {
  for client in "${CLIENTS[@]}"; do
    run --separate-stderr lb mcp-config "$client" --allow-builtin
    assert_success
    [[ $stderr == "# "*"merge into $REPO/$(client_file "$client"),"* && $stderr != *$'\n'* ]] ||
      fail "$client hint: $stderr"
    printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/$client.out"
    [ "$client" = codex ] || assert_equal "$(jsonget .@type <"$BATS_TEST_TMPDIR/$client.out")" object
    assert_equal "$(entry_of "$client" "$BATS_TEST_TMPDIR/$client.out")" "$(want_entry "$client")"
    # Printing writes nothing.
    assert_file_not_exist "$REPO/$(client_file "$client")"
  done
  assert_equal "$(jsonget .mcpServers.litterbox.type <"$BATS_TEST_TMPDIR/claude.out")" stdio
  assert_equal "$(jsonget .mcp.litterbox.type <"$BATS_TEST_TMPDIR/opencode.out")" local
  assert_equal "$(head -n1 "$BATS_TEST_TMPDIR/codex.out")" "[mcp_servers.litterbox]"

  # (Client names are case-insensitive: Claude is claude.)
  for bad in vscode "" claude-code; do
    run --separate-stderr lb mcp-config "$bad"
    assert_failure 2
    assert_output ""
    [[ $stderr == Error:* && $stderr != *$'\n'* ]] || fail "mcp-config '$bad': $stderr"
  done
  run --separate-stderr lb mcp-config
  assert_failure 2
  [[ $stderr == Error:* ]]
  assert_equal "$(git status --porcelain)" ""
}

@test "mcp-config CLIENT --write writes the project file at the repository root once; the written claude entry serves" {
  cd "$REPO/src/deep"
  for client in "${CLIENTS[@]}"; do
    f=$REPO/$(client_file "$client")
    run --separate-stderr lb mcp-config "$client" --write --allow-builtin
    assert_success
    assert_output "Wrote MCP server 'litterbox' to $f."
    assert_file_exist "$f"
    assert_equal "$(entry_of "$client" "$f")" "$(want_entry "$client")"
    cp "$f" "$BATS_TEST_TMPDIR/before"
    run --separate-stderr lb mcp-config "$client" --write --allow-builtin
    assert_success
    assert_output "$f already has MCP server 'litterbox'; nothing changed."
    cmp "$f" "$BATS_TEST_TMPDIR/before" || fail "second --write changed $f"
  done

  # The entry Claude Code would run works, started in the project.
  assert_equal "$(jsonget .mcpServers.litterbox.command .mcpServers.litterbox.args.* <"$REPO/.mcp.json")" "$(printf 'litterbox\nmcp')"
  run --separate-stderr mcpcall --bin litterbox --scope own sandbox-list '{}'
  assert_success
  assert_equal "$(jsonget .isError .structuredContent.sandboxes.# <<<"$output")" "$(printf 'false\n0')"
}

@test "a committed .mcp.json works from a second clone at another path; doctor flags an entry with machine paths or another repository" {
  lb_ok mcp-config claude --write >/dev/null
  git add .mcp.json .claude/settings.json
  git commit -qm "litterbox for claude"
  run --separate-stderr lb doctor
  assert_line --regexp '^ok +entry claude +\.mcp\.json runs litterbox from PATH'
  # A teammate's clone, elsewhere: the committed entry serves that clone.
  clone=$BATS_TEST_TMPDIR/teammate/project
  git clone -q "$REPO" "$clone"
  cd "$clone"
  run --separate-stderr mcpcall --bin "$(jsonget .mcpServers.litterbox.command <.mcp.json)" --scope own sandbox-create '{"name":"t1"}'
  assert_success
  assert_equal "$(jsonget .isError <<<"$output")" false
  assert_equal "$(git rev-parse --verify -q refs/heads/litterbox/t1)" "$(git rev-parse HEAD)"
  assert_equal "$(git -C "$REPO" rev-parse --verify -q refs/heads/litterbox/t1 || true)" ""
  lb_ok delete --force t1 >/dev/null
  # The entry as an older mcp-config wrote it, committed in the first
  # clone: it serves the first clone from here.
  printf '{"mcpServers": {"litterbox": {"type": "stdio", "command": "%s", "args": ["mcp", "--repo", "%s"]}}}\n' "$(readlink -f "$LITTERBOX")" "$REPO" >.mcp.json
  run --separate-stderr lb doctor
  assert_line --regexp "^fail +entry claude +\.mcp\.json serves the repository at $REPO, not this one \($clone\)"
  assert_line --regexp '^ +fix: litterbox mcp-config claude --write$'
  cd "$REPO"
  cp "$clone/.mcp.json" .mcp.json
  run --separate-stderr lb doctor
  assert_line --regexp "^warn +entry claude +\.mcp\.json runs $(readlink -f "$LITTERBOX") and names this clone's path with --repo: "
}

@test "mcp-config --write --file merges into an existing file, keeping other servers and settings; --name names the entry" {
  d=$BATS_TEST_TMPDIR/cfg
  mkdir -p "$d"
  printf '{\n  "keep": true,\n  "mcpServers": {"other": {"command": "other-bin", "args": ["x"]}}\n}\n' >"$d/claude.json"
  cp "$d/claude.json" "$d/cursor.json"
  printf '{"theme": "One Dark", "context_servers": {"other": {"command": "other-bin", "args": ["x"]}}}\n' >"$d/zed.json"
  printf '{"$schema": "https://opencode.ai/config.json", "model": "m", "mcp": {"other": {"type": "local", "command": ["other-bin", "x"]}}}\n' >"$d/opencode.json"
  printf 'model = "o3"\n\n[mcp_servers.other]\ncommand = "other-bin"\nargs = ["x"]\n' >"$d/codex.toml"

  for client in "${CLIENTS[@]}"; do
    f=$d/$client.json
    [ "$client" != codex ] || f=$d/codex.toml
    run --separate-stderr lb mcp-config "$client" --write --allow-builtin --file "$f" --name sandboxes
    assert_success
    assert_output "Wrote MCP server 'sandboxes' to $f."
    assert_equal "$(entry_of "$client" "$f" sandboxes)" "$(want_entry "$client")"
    # The other server is kept, whole.
    if [ "$client" = codex ]; then
      assert_equal "$(entry_of codex "$f" other)" "$(printf '"other-bin"\n["x"]')"
      grep -qx 'model = "o3"' "$f" || fail "codex lost its model setting: $(cat "$f")"
    else
      assert_equal "$(entry_of "$client" "$f" other)" "$(printf 'other-bin\nx')"
    fi
    # No entry named litterbox appears.
    assert_equal "$(entry_of "$client" "$f" litterbox)" ""
    cp "$f" "$BATS_TEST_TMPDIR/before"
    run --separate-stderr lb mcp-config "$client" --write --allow-builtin --file "$f" --name sandboxes
    assert_success
    assert_output "$f already has MCP server 'sandboxes'; nothing changed."
    cmp "$f" "$BATS_TEST_TMPDIR/before" || fail "second --write changed $f"
  done
  assert_equal "$(jsonget .keep <"$d/claude.json")" true
  assert_equal "$(jsonget .keep <"$d/cursor.json")" true
  assert_equal "$(jsonget .theme <"$d/zed.json")" "One Dark"
  assert_equal "$(jsonget .model '.$schema' <"$d/opencode.json")" "$(printf 'm\nhttps://opencode.ai/config.json')"

  # A new file, in a directory that does not exist yet.
  run --separate-stderr lb mcp-config cursor --write --allow-builtin --file "$d/new/dir/mcp.json"
  assert_success
  assert_equal "$(entry_of cursor "$d/new/dir/mcp.json")" "$(want_entry cursor)"
}

@test "mcp-config --write edits a JSON file with comments in place; a broken one is refused, unchanged, the entry printed" {
  for client in zed claude; do
    f=$BATS_TEST_TMPDIR/$client-comments.json
    printf '{\n  // my settings\n  "theme": "One Dark", /* dark */\n}\n' >"$f"
    run --separate-stderr lb mcp-config "$client" --write --file "$f"
    assert_success
    grep -qx '  // my settings' "$f" || fail "the comment line is gone: $(cat "$f")"
    grep -qF '"theme": "One Dark", /* dark */' "$f" || fail "the theme line changed: $(cat "$f")"
    grep -qF '"command": "litterbox"' "$f" || fail "no entry: $(cat "$f")"
    cp "$f" "$BATS_TEST_TMPDIR/before"
    run --separate-stderr lb mcp-config "$client" --write --file "$f"
    assert_success
    cmp "$f" "$BATS_TEST_TMPDIR/before" || fail "a second --write changed $f"

    printf '{\n  // my settings\n  "theme": "One Dark"\n' >"$f"
    cp "$f" "$BATS_TEST_TMPDIR/before"
    run --separate-stderr lb mcp-config "$client" --write --file "$f"
    assert_failure 1
    cmp "$f" "$BATS_TEST_TMPDIR/before" || fail "a refused $f was changed"
    last=$(tail -n1 <<<"$stderr")
    [[ $last == "Error: "*"$f"* ]] || fail "last stderr line: $last"
    [[ $output$stderr == *'"command": "litterbox"'* ]] || fail "the entry is not printed: $output $stderr"
  done
}

@test "mcp-config codex --write over an entry written as an inline table leaves a valid file" {
  # Both are valid TOML for Codex: the entry as an inline table, under
  # [mcp_servers] or as the value of mcp_servers itself.
  printf '[mcp_servers]\nlitterbox = { command = "/old/litterbox", args = ["mcp"] }\n' >"$BATS_TEST_TMPDIR/under.toml"
  printf 'mcp_servers = { other = { command = "other-bin" } }\n' >"$BATS_TEST_TMPDIR/value.toml"
  bad=()
  for f in "$BATS_TEST_TMPDIR/under.toml" "$BATS_TEST_TMPDIR/value.toml"; do
    cp "$f" "$BATS_TEST_TMPDIR/before"
    run --separate-stderr lb mcp-config codex --write --file "$f"
    if [ "$status" -ne 0 ]; then
      # Refusing is fine, if the file is left alone.
      assert_failure 1
      cmp "$f" "$BATS_TEST_TMPDIR/before" || fail "a refused $f was changed"
      continue
    fi
    # Written: the entry is defined once, and the file is one litterbox (and
    # so Codex) can read: a second --write finds the entry and changes nothing.
    defs=$(grep -cE '^\[mcp_servers\.litterbox\]|^litterbox *=|^mcp_servers *=.*[{ ]litterbox *=' "$f" || true)
    [ "$defs" -eq 1 ] || bad+=("$(basename "$f"): MCP server 'litterbox' is defined $defs times:"$'\n'"$(cat "$f")")
    run --separate-stderr lb mcp-config codex --write --file "$f"
    [ "$status" -eq 0 ] || bad+=("$(basename "$f"): the written file cannot be read back (exit $status): $stderr")
    # A strict TOML 1.0 reader (Codex's is) when there is one at hand: keys
    # cannot be added to an inline table from outside its braces.
    if python3 -c 'import tomllib' 2>/dev/null; then
      err=$(python3 -c 'import sys, tomllib; tomllib.load(open(sys.argv[1], "rb"))' "$f" 2>&1) ||
        bad+=("$(basename "$f"): not valid TOML ($(tail -n1 <<<"$err")):"$'\n'"$(cat "$f")")
    fi
  done
  [ "${#bad[@]}" -eq 0 ] || fail "$(printf '%s\n' "${bad[@]}")"
}

# ---------------------------------------------------------------------------
# The audit log

@test "audit: every MCP tool call is logged with its commands; write content is only a hash; log --audit shows and filters it" {
  run --separate-stderr mcpcall --repo "$REPO" \
    sandbox-create '{"name":"aud"}' \
    write '{"sandbox":"aud","path":"notes.txt","content":"secret text"}' \
    bash '{"sandbox":"aud","command":"cat notes.txt"}' \
    read '{"sandbox":"aud","path":"notes.txt"}' \
    read '{"sandbox":"aud","path":"missing.txt"}' \
    edit '{"sandbox":"aud","path":"notes.txt","old_string":"secret text","new_string":"other words"}'
  assert_success
  c=$(container_of aud)
  assert_equal "$(jsonget -l .isError <<<"$output" | tr '\n' ' ')" "false false false false true false "
  assert_equal "$(jsonget .text <<<"${lines[3]}")" "$(printf '     1\tsecret text')"

  audit=$(git rev-parse --path-format=absolute --git-common-dir)/litterbox/audit.jsonl
  assert_file_exist "$audit"
  # File contents (write's content, edit's strings) are kept as size and
  # digest only.
  run grep -E "secret text|other words" "$audit"
  assert_failure 1
  sha=$(printf 'secret text' | sha256sum | cut -d' ' -f1)
  sha2=$(printf 'other words' | sha256sum | cut -d' ' -f1)

  run --separate-stderr lb log --audit --json
  assert_success
  json=$output
  assert_equal "${#lines[@]}" 6
  assert_equal "$(jsonget -l .tool <<<"$json" | tr '\n' ' ')" "sandbox-create write bash read read edit "
  assert_equal "$(jsonget -l .status <<<"$json" | tr '\n' ' ')" "ok ok ok ok error ok "
  assert_equal "$(jsonget -l .sandbox <<<"$json" | sort -u)" aud
  assert_equal "$(jsonget -l .pid <<<"$json" | sort -u | grep -c .)" 1
  for i in 0 1 2 3 4 5; do
    e=${lines[$i]}
    keys=" $(jsonget .@keys <<<"$e") "
    for k in time tool sandbox arguments status duration_ms pid commands; do
      [[ $keys == *" $k "* ]] || fail "entry $i has no $k: $keys"
    done
    [[ $(jsonget .time <<<"$e") =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9:]+)$ ]] || fail "time: $e"
    [[ $(jsonget .duration_ms <<<"$e") =~ ^[0-9]+$ ]] || fail "duration_ms: $e"
    [ "$(jsonget .commands.# <<<"$e")" -ge 1 ] || fail "entry $i has no commands"
  done
  write=${lines[1]}
  assert_equal "$(jsonget .arguments.content <<<"$write")" "{\"bytes\":11,\"sha256\":\"$sha\"}"
  assert_equal "$(jsonget .arguments.path .arguments.sandbox <<<"$write")" "$(printf 'notes.txt\naud')"
  assert_equal "$(jsonget .arguments.command <<<"${lines[2]}")" "cat notes.txt"
  failed=${lines[4]}
  [[ " $(jsonget .@keys <<<"$failed") " == *" error "* ]] || fail "the failed call has no error: $failed"
  [[ $(jsonget .error <<<"$failed") == *"missing.txt"*"no such file"* ]] || fail "error: $failed"
  assert_equal "$(jsonget .arguments.path <<<"$failed")" missing.txt
  assert_equal "$(jsonget .arguments.old_string .arguments.new_string <<<"${lines[5]}")" \
    "$(printf '{"bytes":11,"sha256":"%s"}\n{"bytes":11,"sha256":"%s"}' "$sha" "$sha2")"

  # Every recorded command is one pasteable sh command line of docker or git.
  total=0
  docker_ps="" git_ref=""
  for i in 0 1 2 3 4 5; do
    n=$(jsonget .commands.# <<<"${lines[$i]}")
    for ((j = 0; j < n; j++)); do
      cmd=$(jsonget ".commands.$j.command" <<<"${lines[$i]}")
      [[ $(jsonget ".commands.$j.exit_code" ".commands.$j.duration_ms" <<<"${lines[$i]}" | tr '\n' ' ') =~ ^-?[0-9]+\ [0-9]+\ $ ]] ||
        fail "entry $i command $j: no exit_code/duration_ms"
      [[ $cmd =~ ^([A-Z_]+=(\'[^\']*\'|[^\ \']*)\ )*(docker|git)\  ]] || fail "not a docker/git command: $cmd"
      sh -n -c "$cmd" || fail "not valid sh: $cmd"
      [[ -n $docker_ps || $cmd != "docker ps "* ]] || docker_ps=$cmd
      [[ -n $git_ref || $cmd != "git -C "*" rev-parse --verify "*"refs/heads/litterbox/aud" ]] || git_ref=$cmd
      total=$((total + 1))
    done
  done
  [[ $(jsonget '.commands.*.command' <<<"${lines[0]}") == *"docker create --name $c "* ]] ||
    fail "create has no docker create --name $c"
  # Pasted, a recorded read-only command does what it did.
  if [ -n "$docker_ps" ]; then
    run sh -c "$docker_ps"
    assert_success
    assert_output --partial "\"$c\""
  fi
  if [ -n "$git_ref" ]; then
    run sh -c "cd / && $git_ref"
    assert_success
    assert_output "$(git rev-parse litterbox/aud)"
  fi

  # The text form: a header, then one line per call.
  run --separate-stderr lb log --audit
  assert_success
  assert_line --index 0 --regexp '^TIME +SANDBOX +TOOL +TOOK +RESULT +COMMIT +CALL$'
  assert_equal "${#lines[@]}" 7
  tools=(sandbox-create write bash read read edit)
  results=(ok ok "exit 0" ok error ok)
  for i in 0 1 2 3 4 5; do
    line=${lines[$((i + 1))]}
    [[ $line =~ ^[0-9]{2}-[0-9]{2}\ [0-9:]{8}\ +aud\ +${tools[$i]}\ +[0-9.]+m?s\ ${results[$i]}\ + ]] ||
      fail "audit line $i: $line"
  done
  # The write's commit, and what each call was about; the failed read's error.
  snap=$(jsonget .snapshot <<<"$write")
  [[ ${lines[2]} =~ \ ${snap:0:8}\ +notes\.txt$ ]] || fail "write line (commit $snap): ${lines[2]}"
  [[ ${lines[5]} == *"error: "*"no such file"* ]] || fail "failed read line: ${lines[5]}"
  run grep -E "secret text|other words" <<<"$output"
  assert_failure 1

  # -v: each call's arguments (file contents as size and digest), then its
  # commands, as pasteable lines.
  run --separate-stderr lb log --audit -v
  assert_success
  text=$output
  assert_equal "$(grep -cF "    arguments: {\"content\":{\"bytes\":11,\"sha256\":\"$sha\"}" <<<"$text")" 1
  assert_equal "$(grep -c '^    \$ ' <<<"$text")" "$total"
  assert_equal "$(grep -cE '  # exit -?[0-9]+, [0-9]+ ms(; .*)?$' <<<"$text")" "$total"
  grep -qE '^    \$ docker create --name '"$c"' ' <<<"$text" || fail "no docker create line in: $text"
  run grep -E "secret text|other words" <<<"$text"
  assert_failure 1

  # log --audit NAME keeps that sandbox's calls.
  run --separate-stderr mcpcall --repo "$REPO" read '{"sandbox":"ghost","path":"x"}'
  assert_success
  run --separate-stderr lb log --audit --json
  assert_equal "${#lines[@]}" 7
  run --separate-stderr lb log --audit --json aud
  assert_success
  assert_equal "$(jsonget -l .sandbox <<<"$output" | tr '\n' ' ')" "aud aud aud aud aud aud "
  run --separate-stderr lb log --audit --json ghost
  assert_success
  assert_equal "$(jsonget -l .tool .sandbox .status <<<"$output" | tr '\n' ' ')" "read ghost error "
  run --separate-stderr lb log --audit ghost
  assert_success
  assert_equal "$(grep -cE '^[0-9]{2}-[0-9]{2} ' <<<"$output")" 1
}

# wait_for FILE PATTERN waits (up to 30 s) until FILE has a line matching PATTERN.
wait_for() {
  local i
  for ((i = 0; i < 300; i++)); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "timed out waiting for $2 in $1" >&2
  return 1
}

@test "audit: log --audit --follow shows the calls of two MCP servers as they start and as they end, one line each" {
  run --separate-stderr mcpcall --repo "$REPO" sandbox-create '{"name":"fa"}' sandbox-create '{"name":"fb"}'
  assert_success
  follow=$BATS_TEST_TMPDIR/follow
  # Not through lb: timeout would take the Ctrl-C (SIGINT) meant for it.
  "$LITTERBOX" log --audit --follow >"$follow" 2>&1 &
  FOLLOW_PID=$!
  wait_for "$follow" ' fb  *sandbox-create '
  # Two servers, a call each, at once.
  mcpcall --repo "$REPO" bash '{"sandbox":"fa","command":"sleep 3; echo a > a.txt"}' >/dev/null 2>&1 &
  p1=$!
  mcpcall --repo "$REPO" bash '{"sandbox":"fb","command":"sleep 3; echo b > b.txt"}' >/dev/null 2>&1 &
  p2=$!
  wait_for "$follow" ' fa  *bash  *running .* sleep 3; echo a > a\.txt$'
  wait_for "$follow" ' fb  *bash  *running .* sleep 3; echo b > b\.txt$'
  # Running, not ended, while the calls sleep.
  run grep -c ' exit 0 ' "$follow"
  assert_output 0
  wait "$p1" "$p2"
  wait_for "$follow" " fa  *bash  *[0-9.]*s exit 0   $(git rev-parse --short=8 litterbox/fa) sleep 3; echo a > a\\.txt$"
  wait_for "$follow" " fb  *bash  *[0-9.]*s exit 0   $(git rev-parse --short=8 litterbox/fb) sleep 3; echo b > b\\.txt$"
  kill -INT "$FOLLOW_PID"
  wait "$FOLLOW_PID" || fail "log --audit --follow ended badly: $(cat "$follow")"
  FOLLOW_PID=
  # A header, then one line per call start and per call end.
  run cat "$follow"
  assert_line --index 0 --regexp '^TIME +SANDBOX +TOOL +TOOK +RESULT +COMMIT +CALL$'
  assert_equal "${#lines[@]}" 7
}

@test "audit: litterbox mcp writes only JSON-RPC on stdout and nothing on stderr; entries of concurrent calls and servers never mix" {
  out=$BATS_TEST_TMPDIR/mcp.out
  err=$BATS_TEST_TMPDIR/mcp.err
  : >"$out"
  {
    printf '%s\n' \
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-e2e","version":"1"}}}' \
      '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sandbox-list","arguments":{}}}' \
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"sandbox":"ghost","path":"x"}}}'
    wait_for "$out" '"id":2'
    wait_for "$out" '"id":3'
  } | lb mcp --repo "$REPO" >"$out" 2>"$err"
  run jsonget -l .jsonrpc <"$out"
  assert_success
  assert_equal "$(sort -u <<<"$output")" "2.0"
  assert_equal "$(grep -c . "$out")" 3
  assert_equal "$(jsonget -l .id <"$out" | sort -n | tr '\n' ' ')" "1 2 3 "
  run grep -E 'sandbox-list +ok|\$ (docker|git) ' "$out"
  assert_failure 1
  assert_equal "$(cat "$err")" ""

  run --separate-stderr lb log --audit --json
  assert_success
  # The two calls ran concurrently: either may be logged first.
  assert_equal "$(jsonget -l .tool .status <<<"$output" | paste -d' ' - - | sort | tr '\n' ';')" "read error;sandbox-list ok;"

  # Entries of concurrent calls and servers never mix, even long ones (each
  # command is 70 KB, kept as its first 4 KiB, size and SHA-256: each line is
  # past an atomic pipe write).
  big=$(head -c 70000 /dev/zero | tr '\0' x)
  calls=()
  for i in 1 2 3 4 5; do
    calls+=(bash "{\"sandbox\":\"ghost\",\"command\":\"echo $i $big\"}")
  done
  mcpcall --parallel --repo "$REPO" "${calls[@]}" >"$BATS_TEST_TMPDIR/p1" 2>&1 &
  p1=$!
  mcpcall --parallel --repo "$REPO" "${calls[@]}" >"$BATS_TEST_TMPDIR/p2" 2>&1 &
  p2=$!
  wait "$p1" || fail "mcpcall 1: $(head -c 500 "$BATS_TEST_TMPDIR/p1")"
  wait "$p2" || fail "mcpcall 2: $(head -c 500 "$BATS_TEST_TMPDIR/p2")"
  audit=$(git rev-parse --path-format=absolute --git-common-dir)/litterbox/audit.jsonl
  assert_equal "$(wc -l <"$audit")" 12
  run jsonget -l .tool <"$audit"
  assert_success
  assert_equal "$(sort <<<"$output" | uniq -c | awk '{ print $1 $2 }' | tr '\n' ' ')" "10bash 1read 1sandbox-list "
  run jsonget -l .arguments.command.sha256 < <(tail -n 10 "$audit")
  assert_success
  want=$(for i in 1 2 3 4 5; do printf 'echo %s %s' "$i" "$big" | sha256sum | cut -d' ' -f1; done | sort)
  got=$(printf '%s\n' "${lines[@]}" | sort -u)
  assert_equal "$got" "$want"
  run jsonget -l .arguments.command.bytes < <(tail -n 10 "$audit")
  assert_equal "$(sort -u <<<"$output")" 70007
  assert [ "$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$audit")" -gt 4096 ]
  assert_equal "$(jsonget -l .pid <"$audit" | sort -u | wc -l)" 3
}

# ---------------------------------------------------------------------------
# Polish

@test "colors: only on a terminal and without NO_COLOR; columns stay aligned when colored" {
  create box
  # Piped and NO_COLOR: no escapes.
  for cmd in list doctor; do
    run --separate-stderr lb "$cmd"
    assert_success
    [[ $output$stderr != *"${ESC}["* ]] || fail "litterbox $cmd piped has escapes: $output"
    NO_COLOR=1 run --separate-stderr lb "$cmd"
    [[ $output$stderr != *"${ESC}["* ]] || fail "NO_COLOR litterbox $cmd has escapes: $output"
  done

  # On a terminal the statuses are colored...
  run on_tty "$LITTERBOX" list
  assert_success
  # ...and nothing asks the terminal anything (its answer would be typed
  # into the person's shell, or the command would wait for it).
  [[ $output != *"${ESC}]11;"* && $output != *"${ESC}[6n"* ]] || fail "list queries the terminal: $(od -c <<<"$output" | head -3)"
  assert_line --index 0 --regexp '^NAME '
  assert_line --index 1 --regexp "^box +$ESC\\[[0-9;]+mactive$ESC\\[0m +"
  run on_tty "$LITTERBOX" doctor
  assert_success
  assert_line --regexp "^$ESC\\[[0-9;]+mok$ESC\\[0m +runtime "
  # ...unless NO_COLOR is set.
  NO_COLOR=1 run on_tty "$LITTERBOX" list
  assert_success
  [[ $output != *"${ESC}["* ]] || fail "NO_COLOR list on a terminal has escapes: $output"
  assert_line --index 1 --regexp '^box +active +- +[0-9]+[smhd] +[0-9]+[smhd] +litterbox/box +0 +-$'
  NO_COLOR=1 run on_tty "$LITTERBOX" doctor
  [[ $output != *"${ESC}["* ]] || fail "NO_COLOR doctor on a terminal has escapes: $output"

  # Colored, the columns line up as they do uncolored: AGE heads the ages,
  # and doctor's fix lines sit under the detail column.
  misaligned=()
  run on_tty "$LITTERBOX" list
  plain=$(strip_ansi <<<"$output")
  header=$(sed -n 1p <<<"$plain")
  row=$(sed -n 2p <<<"$plain")
  pre=${header%%AGE*}
  [[ $row =~ ^([^\ ]+\ +[^\ ]+\ +-\ +)[0-9]+[smhd]\  ]] || fail "list row: $row"
  [ "${#pre}" -eq "${#BASH_REMATCH[1]}" ] ||
    misaligned+=("list: AGE is at column ${#pre} of the header but at ${#BASH_REMATCH[1]} in the row:"$'\n'"$plain")
  printf 'dirty\n' >>README.md
  run on_tty "$LITTERBOX" doctor
  plain=$(strip_ansi <<<"$output")
  [[ $(grep -E '^warn +repository ' <<<"$plain") =~ ^(warn\ +repository\ +) ]] || fail "doctor: $plain"
  want=${#BASH_REMATCH[1]}
  [[ $(grep -A1 -E '^warn +repository ' <<<"$plain" | sed -n 2p) =~ ^(\ +)fix: ]] || fail "no fix line: $plain"
  [ "${#BASH_REMATCH[1]}" -eq "$want" ] ||
    misaligned+=("doctor: fix: is indented ${#BASH_REMATCH[1]} columns, the details start at column $want:"$'\n'"$plain")
  [ "${#misaligned[@]}" -eq 0 ] || fail "$(printf '%s\n' "${misaligned[@]}")"
}

@test "create shows progress with timings on a terminal only, on stderr, and not with --quiet" {
  # On a terminal, with stdout thrown away: the progress is on stderr.
  run on_tty sh -c '"$0" create tty-box >/dev/null' "$LITTERBOX"
  assert_success
  progress=$(grep -E '^  .*[0-9.]+(ms|s)$' <<<"$output" || true)
  [ "$(grep -c . <<<"$progress")" -ge 3 ] || fail "no progress lines: $output"
  assert_line --regexp '^  branch litterbox/tty-box +[0-9.]+(ms|s)$'
  assert_line --regexp "^  container $(container_of tty-box) +[0-9.]+(ms|s)\$"
  refute_line --partial "Created sandbox"
  # With stderr thrown away there is no progress on the terminal.
  run on_tty sh -c '"$0" create tty-box2 2>/dev/null' "$LITTERBOX"
  assert_success
  assert_line "Created sandbox 'tty-box2'"
  refute_line --regexp '^  .*[0-9.]+(ms|s)$'
  # --quiet: none.
  run on_tty "$LITTERBOX" create --quiet tty-quiet
  assert_success
  refute_line --regexp '^  .*[0-9.]+(ms|s)$'
  # Not a terminal: none.
  run --separate-stderr lb create piped
  assert_success
  assert_equal "$stderr" ""
  refute_line --regexp '^  .*[0-9.]+(ms|s)$'
  assert_equal "$(litterbox_names | tr '\n' ' ')" "piped tty-box tty-box2 tty-quiet "
}

@test "completion completes sandbox names; every command's --help has examples" {
  create alpha
  create beta
  for cmd in pause resume delete exec shell diff log apply merge milestone ports service upload download; do
    run --separate-stderr lb __complete "$cmd" ""
    assert_success
    assert_equal "${lines[-1]}" ":4"
    assert_equal "$(sed '$d' <<<"$output" | cut -f1 | tr '\n' ' ')" "alpha beta " ||
      fail "completion of '$cmd': $output"
  done
  # Each name comes with its status as the description.
  run --separate-stderr lb __complete pause ""
  assert_line --index 0 "$(printf 'alpha\tactive')"
  # The shell filters by what was typed; alpha is among the candidates.
  run --separate-stderr lb __complete pause "al"
  assert_success
  assert_line "$(printf 'alpha\tactive')"
  assert_equal "${lines[-1]}" ":4"

  # Every command in litterbox --help, and at least these.
  mapfile -t cmds < <(lb_ok --help | sed -n '/^Available Commands:/,/^$/p' | awk 'NF && !/:$/ { print $1 }')
  for want in create list pause resume delete shell exec milestone diff log apply merge upload download ports service mcp doctor mcp-config; do
    [[ " ${cmds[*]} " == *" $want "* ]] || fail "litterbox --help does not list $want: ${cmds[*]}"
  done
  for cmd in "${cmds[@]}"; do
    case $cmd in completion | help) continue ;; esac
    run --separate-stderr lb "$cmd" --help
    assert_success
    [[ $output == *$'\nExamples:\n'* ]] || fail "litterbox $cmd --help has no Examples: section"
  done
}

@test "completion: after the sandbox name, upload's SRC and download's DEST complete host files" {
  create box
  # The sandbox name is the first argument only.
  run --separate-stderr lb __complete pause box ""
  assert_success
  assert_output ":4"
  # upload NAME SRC DEST: SRC is a host path; download NAME SRC DEST: DEST is.
  # The shell completes files unless the directive has NoFileComp (4).
  run --separate-stderr lb __complete upload box ""
  assert_success
  [[ ${lines[-1]} =~ ^:([0-9]+)$ ]] || fail "no directive: $output"
  (((BASH_REMATCH[1] & 4) == 0)) || fail "upload box <TAB> does not complete host files: $output"
  run --separate-stderr lb __complete download box README.md ""
  assert_success
  [[ ${lines[-1]} =~ ^:([0-9]+)$ ]] || fail "no directive: $output"
  (((BASH_REMATCH[1] & 4) == 0)) || fail "download box README.md <TAB> does not complete host files: $output"
}

@test "list shows AGE and AHEAD: commits over the base, '-' when the branch is gone" {
  create box
  run lb list
  assert_success
  assert_line --index 0 --regexp '^NAME +STATUS +OWNER +AGE +IDLE +BRANCH +AHEAD +PORTS$'
  assert_line --index 1 --regexp '^box +active +- +[0-9]+s +[0-9]+s +litterbox/box +0 +-$'
  lb_ok exec box -- sh -c 'echo x > f' </dev/null >/dev/null
  lb_ok exec box -- sh -c 'echo y > f' </dev/null >/dev/null
  run lb list
  assert_line --index 1 --regexp '^box +active +- +[0-9]+s +[0-9]+s +litterbox/box +2 +-$'
  assert_equal "$(lb_ok list --json | jsonget .0.commits_ahead)" 2
  # A host commit does not count: AHEAD is over the sandbox's base.
  commit_file host.txt "host"
  assert_equal "$(lb_ok list --json | jsonget .0.commits_ahead)" 2

  git branch -D -q litterbox/box
  run lb list
  assert_success
  assert_line --index 1 --regexp '^box +[a-z-]+ +- +[0-9]+s +[0-9]+s +litterbox/box +- +-$'
  assert_equal "$(lb_ok list --json | jsonget .0.commits_ahead)" null
}
