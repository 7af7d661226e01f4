#!/usr/bin/env bats
# The CLI around the lifecycle: list output, exec and shell, --repo, exit codes
# and -v logging (README: "CLI reference", "Debugging with -v").

# shellcheck disable=SC2154,SC2030,SC2031 # bats sets status/output/lines/stderr; each test is a subshell
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers mcpcall; }
setup() { common_setup; }
teardown() { common_teardown; }

@test "list --json is an array of {name, status, branch, container, base, repo, created, ports, commits_ahead}" {
  run --separate-stderr lb list --json
  assert_success
  assert_equal "$(jsonget '.@type' '.#' <<<"$output")" "$(printf 'array\n0')"
  run lb list
  assert_success
  assert_output "No sandboxes."

  create beta
  create alpha
  head=$(git rev-parse HEAD)
  run --separate-stderr lb list --json
  assert_success
  json=$output
  assert_equal "$(jsonget '.#' <<<"$json")" 2
  # Sorted by name.
  assert_equal "$(jsonget '.*.name' <<<"$json")" "$(printf 'alpha\nbeta')"
  for i in 0 1; do
    keys=$(jsonget ".$i.@keys" <<<"$json")
    for k in name status branch container base repo created ports commits_ahead; do
      [[ " $keys " == *" $k "* ]] || fail "list --json entry $i has no '$k': $keys"
    done
    assert_equal "$(jsonget ".$i.ports.@type" ".$i.ports.#" <<<"$json")" "$(printf 'array\n0')"
  done
  assert_equal "$(jsonget '.0.status' '.0.branch' '.0.container' '.0.base' '.0.repo' '.0.commits_ahead' <<<"$json")" \
    "$(printf '%s\n' active litterbox/alpha "$(container_of alpha)" "$head" "$REPO" 0)"

  run lb list
  assert_success
  assert_line --index 0 --regexp '^NAME +STATUS +OWNER +AGE +IDLE +BRANCH +AHEAD +PORTS$'
  assert_line --index 1 --regexp '^alpha +active +- +[0-9]+[smhd] +[0-9]+[smhd] +litterbox/alpha +0 +-$'
  assert_line --index 2 --regexp '^beta +active +- +[0-9]+[smhd] +[0-9]+[smhd] +litterbox/beta +0 +-$'
  assert_equal "${#lines[@]}" 3
}

@test "list asks the engine once, however many sandboxes there are" {
  create one
  create two
  create three
  run --separate-stderr lb -v list
  assert_success
  assert_equal "${#lines[@]}" 4
  printf '%s\n' "$stderr" >"$BATS_TEST_TMPDIR/log"
  run log_commands "$BATS_TEST_TMPDIR/log"
  assert_equal "$(grep -c '^docker ' <<<"$output")" 1
  assert_line --regexp '^docker ps '
}

@test "-v prints each docker/git command and pasting one reproduces it" {
  # A repository path with a space and a quote makes the quoting matter.
  make_repo "lbe2e-$(rand_hex)" "it's a dir"
  cd "$MADE_REPO"
  REPO=$MADE_REPO
  REPO_SLUG=$MADE_SLUG
  create box
  c=$(container_of box)

  run --separate-stderr lb -v list
  assert_success
  refute_output --partial '# exit' 
  assert_line --regexp "^box +active "
  printf '%s\n' "$stderr" >"$BATS_TEST_TMPDIR/list.log"
  # Every stderr line is a debug line for one docker or git command.
  while IFS= read -r l; do
    [[ $l =~ ^\$\ ([A-Z_]+=[^\ ]*\ )*(docker|git)\ .*\ \ \#\ exit\ [0-9]+,\ [0-9]+\ ms(\;\ .*)?$ ]] ||
      fail "not a command log line: $l"
  done <"$BATS_TEST_TMPDIR/list.log"
  mapfile -t cmds < <(log_commands "$BATS_TEST_TMPDIR/list.log")
  [ "${#cmds[@]}" -ge 2 ] || fail "expected docker and git lines, got: $stderr"

  docker_line=$(printf '%s\n' "${cmds[@]}" | grep '^docker ps ')
  git_line=$(printf '%s\n' "${cmds[@]}" | grep '^git .*for-each-ref')

  # The pasted docker ps finds our sandbox, as list showed it (among every
  # managed container: list decides ownership by label).
  run sh -c "$docker_line"
  assert_success
  mine=$(grep -F "\"name\":\"$c\"" <<<"$output")
  assert_equal "$(jsonget -l .name .state <<<"$mine")" "$(printf '%s\nrunning' "$c")"
  # Labels, sorted by key: base, limits, ports (none), repo, repo-id,
  # repo-slug, sandbox.
  limits=$(inspect "$c" '{{index .Config.Labels "dev.litterbox.limits"}}')
  [[ $limits == '{"cpus":"'*'","memory":"2g","pids":512}' ]] || fail "limits label: $limits"
  assert_equal "$(jsonget -l '.labels.*' <<<"$mine")" \
    "$(printf '%s\n' "$(git rev-parse HEAD)" "$limits" "" "$REPO" "$(repo_id)" "$REPO_SLUG" box)"

  # The pasted git line prints what git itself prints, from any directory.
  expected=$(git -C "$REPO" for-each-ref '--format=%(objectname) %(refname)' refs/heads/litterbox/)
  assert_equal "$expected" "$(git rev-parse HEAD) refs/heads/litterbox/box"
  run sh -c "cd / && $git_line"
  assert_success
  assert_output "$expected"

  # A command that changes something: paste the logged docker pause.
  run --separate-stderr lb -v pause box
  assert_success
  printf '%s\n' "$stderr" >"$BATS_TEST_TMPDIR/pause.log"
  pause_line=$(log_commands "$BATS_TEST_TMPDIR/pause.log" | grep '^docker pause ')
  assert_equal "$pause_line" "docker pause $c"
  lb_ok resume box >/dev/null
  assert_equal "$(state_of "$c")" running
  run sh -c "$pause_line"
  assert_success
  assert_equal "$(state_of "$c")" paused

  # And the create lines: the logged docker create is the one that made the
  # box (its PID 1, the helper, is copied in by the next logged command).
  run --separate-stderr lb -v create box2
  assert_success
  printf '%s\n' "$stderr" >"$BATS_TEST_TMPDIR/create.log"
  run_line=$(log_commands "$BATS_TEST_TMPDIR/create.log" | grep '^docker create ')
  c2=$(container_of box2)
  "$RUNTIME" rm -f -v "$c2" >/dev/null
  run sh -c "$run_line"
  assert_success
  assert_equal "$(state_of "$c2")" created
  assert_equal "$(inspect "$c2" '{{index .Config.Labels "dev.litterbox.repo"}}')" "$REPO"
}

@test "-v: an agent's write and bash are logged as lines that, pasted, write the file and run the command" {
  create box
  c=$(container_of box)
  body=$'first line\nit\'s "quoted" $HOME `x`\n'
  # shellcheck disable=SC2016 # $HOME, `x` and $((..)) are the agent's, kept literal
  write_args='{"sandbox":"box","path":"notes/w.txt","content":"first line\nit'"'"'s \"quoted\" $HOME `x`\n"}'
  # shellcheck disable=SC2016
  bash_args='{"sandbox":"box","command":"printf '"'"'%s\\n'"'"' \"it'"'"'s\" > ran.txt; echo $((1+2)) >> ran.txt"}'
  run --separate-stderr mcpcall -v --repo "$REPO" write "$write_args" bash "$bash_args"
  assert_success
  printf '%s\n' "$stderr" >"$BATS_TEST_TMPDIR/log"
  # Take the two agent calls' entries out of the log (an entry is a "$ "
  # line and its "> " continuations), strip the prompts as the README's
  # one-liner does, point them at new files, and run them.
  awk -v want='litterbox-helper put |/bin/sh -c ' '
    function flush() { if (e != "" && e ~ want) print e; e = "" }
    /^\$ / { flush(); e = substr($0, 3); next }
    /^> / && e != "" { e = e "\n" substr($0, 3); next }
    { flush() }
    END { flush() }' "$BATS_TEST_TMPDIR/log" |
    sed 's#/src/notes/w.txt#/src/notes/pasted.txt#; s#> ran.txt#> pasted-ran.txt#g' >"$BATS_TEST_TMPDIR/script"
  [ "$(grep -c 'litterbox-helper put' "$BATS_TEST_TMPDIR/script")" -eq 1 ] || fail "no write line: $(cat "$BATS_TEST_TMPDIR/script")"
  [ "$(grep -c '/bin/sh -c' "$BATS_TEST_TMPDIR/script")" -eq 1 ] || fail "no bash line: $(cat "$BATS_TEST_TMPDIR/script")"
  run sh "$BATS_TEST_TMPDIR/script"
  assert_success
  assert_equal "$("$RUNTIME" exec "$c" cat /src/notes/pasted.txt)" "$("$RUNTIME" exec "$c" cat /src/notes/w.txt)"
  assert_equal "$("$RUNTIME" exec "$c" cat /src/notes/pasted.txt; echo .)" "$body."
  assert_equal "$("$RUNTIME" exec "$c" cat /src/pasted-ran.txt)" "$("$RUNTIME" exec "$c" cat /src/ran.txt)"
  # The logged line names what really ran: the helper's act, with its
  # request on stdin, in the container the sandbox's create made (its id),
  # carried over the exec the MCP server keeps open, which is logged too.
  id=$("$RUNTIME" inspect --format '{{.Id}}' "$c")
  [ "$(grep -c "; ran as: $RUNTIME exec -i $id /.litterbox/[0-9a-f]*/litterbox-helper act; the snapshot left out; carried over the sandbox's kept channel\$" "$BATS_TEST_TMPDIR/log")" -eq 2 ] ||
    fail "no note naming the act exec: $(cat "$BATS_TEST_TMPDIR/log")"
  grep -q "^\\$ $RUNTIME exec -i $id /.litterbox/[0-9a-f]*/litterbox-helper serve  # exit 0, " "$BATS_TEST_TMPDIR/log" ||
    fail "no line of the kept exec: $(cat "$BATS_TEST_TMPDIR/log")"
}

@test "-v logs every docker/git command on a line of its own" {
  run --separate-stderr lb -v create box
  assert_success
  assert_equal "$(lb_ok list --json | jsonget .0.status)" active
  n=0
  while IFS= read -r l; do
    n=$((n + 1))
    [[ $l =~ ^\$\ ([A-Z_]+=[^\ ]*\ )*(docker|git)\ .*\ \ \#\ exit\ [0-9]+,\ [0-9]+\ ms(\;\ .*)?$ ]] ||
      fail "stderr line $n is not one whole command log line: ${l:0:200}"
  done <<<"$stderr"
  [ "$n" -ge 5 ] || fail "expected the create's commands, got: $stderr"
}

@test "without -v nothing is logged; results go to stdout and errors to stderr" {
  run --separate-stderr lb create box
  assert_success
  assert_equal "$stderr" ""
  run --separate-stderr lb list
  assert_success
  assert_equal "$stderr" ""
  run --separate-stderr lb pause nope
  assert_failure 1
  assert_output ""
  assert_equal "$stderr" "$(not_found nope box)"
}

@test "usage errors exit 2" {
  check_usage() {
    run --separate-stderr lb "$@"
    [ "$status" -eq 2 ] || fail "litterbox $* exited $status, want 2 (stderr: $stderr)"
    [[ $stderr == Error:* ]] || fail "litterbox $*: stderr does not start with Error: $stderr"
    assert_output ""
  }
  check_usage pause
  check_usage resume
  check_usage pause box --all-envs
  check_usage pause --all-envs --all-repos
  check_usage resume box --all-repos
  check_usage pause a b
  check_usage list --bogus
  check_usage --bogus list
  check_usage list extra-arg
  check_usage create
  check_usage create a b
  check_usage delete
  check_usage exec box
  check_usage exec box ls
  check_usage shell
  check_usage --log-level loud list
  check_usage --runtime rkt list
  check_usage create --base
}

@test "exec runs a command as the sandbox user in /src and exits with its status" {
  create box
  run --separate-stderr lb exec box -- sh -c 'id -u; id -g; pwd; echo to-stderr >&2; exit 7' </dev/null
  assert_failure 7
  assert_output "$(printf '1000\n1000\n/src')"
  assert_equal "$stderr" "to-stderr"
  run lb exec box -- cat README.md </dev/null
  assert_success
  assert_output "# demo"
}

@test "exec of an unknown sandbox fails with only 'Error: Sandbox ... not found.'" {
  LB_TIMEOUT=10 run --separate-stderr lb exec nope -- true </dev/null
  LB_TIMEOUT=10 refute_hang
  assert_failure 1
  assert_output ""
  assert_equal "$stderr" "$(not_found nope)"
}

@test "shell opens sh in /src as the sandbox user" {
  create box
  run lb shell box <<<"$(printf 'id -u\npwd\nexit 3\n')"
  assert_failure 3
  assert_output "$(printf '1000\n/src')"
}

@test "--repo and the working directory both find the repository root" {
  create box
  mkdir -p "$REPO/src/deep/er"
  cd "$REPO/src/deep/er"
  assert_equal "$(litterbox_names)" box
  cd /
  assert_equal "$(litterbox_names --repo "$REPO/src")" box
  run lb_ok pause box --repo "$REPO"
  assert_success
  assert_equal "$(state_of "$(container_of box)")" paused

  run --separate-stderr lb list --repo "$BATS_TEST_TMPDIR/does-not-exist"
  assert_failure
  [[ $stderr == Error:* ]]
  mkdir -p "$BATS_TEST_TMPDIR/not-a-repo"
  run --separate-stderr lb list --repo "$BATS_TEST_TMPDIR/not-a-repo"
  assert_failure
  [[ $stderr == Error:* ]]
}

@test "diff, log, apply and merge with no name say which sandboxes there are" {
  run --separate-stderr lb diff
  assert_failure 2
  assert_equal "$stderr" "Error: diff: name the sandbox; this repository has no sandboxes (litterbox create NAME makes one)"
  lb_ok create fix-login >/dev/null
  lb_ok create try-b >/dev/null
  for verb in diff apply merge; do
    run --separate-stderr lb "$verb"
    assert_failure 2
    assert_equal "$stderr" "Error: $verb: name the sandbox; this repository's: fix-login, try-b."
  done
  run --separate-stderr lb log
  assert_failure 2
  assert_equal "$stderr" "Error: log: name the sandbox (or use --audit); this repository's: fix-login, try-b."
}
