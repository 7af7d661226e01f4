#!/usr/bin/env bats
# The sandbox lifecycle through the CLI: create, list, pause, resume, delete.
# Seed 000 acceptance criteria AC1.2-AC1.7, AC2.x, AC3.x and the edge cases of
# its section 6 that apply to these commands.

# shellcheck disable=SC2154,SC2030,SC2031,SC2016 # bats sets status/output/lines/stderr; each test is a subshell; scripts in single quotes run in the container
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers mcpcall; }
setup() { common_setup; }
teardown() {
  # The terminal test's session, however it ended.
  tmux kill-session -t "lbdel$$" 2>/dev/null || true
  thaw_foreign
  common_teardown
}

# MANIFEST (a script; $1 = DIR) prints one line per entry below DIR: type,
# executable bit, path, and the md5 of a file or the target of a symlink. It
# runs the same on the host (GNU) and in the container (busybox).
MANIFEST='cd "$1" && find . -mindepth 1 | LC_ALL=C sort | while IFS= read -r p; do
  if [ -L "$p" ]; then echo "l $p -> $(readlink "$p")"
  elif [ -d "$p" ]; then echo "d $p"
  else x=-; [ -x "$p" ] && x=x; echo "f $x $p $(md5sum <"$p" | cut -d" " -f1)"; fi
done'

# ---------------------------------------------------------------------------
# AC1: creation

@test "AC1.2: create makes branch litterbox/my-new-feature descending from HEAD" {
  commit_file src/second.txt "second commit"
  head=$(git rev-parse HEAD)
  current=$(git symbolic-ref HEAD)

  run --separate-stderr lb create my-new-feature
  assert_success
  assert_line "Created sandbox 'my-new-feature'"
  assert_line --regexp '^  branch: +litterbox/my-new-feature$'
  assert_line --regexp "^  container: +$(container_of my-new-feature)\$"
  assert_line --regexp "^  base: +$head\$"
  # A clean work tree gives no warning.
  refute_stderr --partial "Warning"

  run git branch --list
  assert_line "  litterbox/my-new-feature"
  assert_line "* main"
  git merge-base --is-ancestor HEAD litterbox/my-new-feature
  assert_equal "$(git rev-parse litterbox/my-new-feature)" "$head"
  assert_equal "$(inspect "$(container_of my-new-feature)" '{{index .Config.Labels "dev.litterbox.base"}}')" "$head"
  # The user stays on their branch.
  assert_equal "$(git symbolic-ref HEAD)" "$current"
  assert_equal "$(git rev-parse HEAD)" "$head"
}

@test "AC1.3: the container's /src is an exact copy of HEAD at creation time, owned by the sandbox user" {
  commit_file docs/guide.md "a guide"
  expected_dir=$BATS_TEST_TMPDIR/expected
  mkdir -p "$expected_dir"
  git archive HEAD | tar -x -C "$expected_dir"
  expected=$(sh -c "$MANIFEST" sh "$expected_dir")
  # Sanity: the fixture has a symlink, an executable, a nested file, a space.
  assert_equal "$(grep -c . <<<"$expected")" "$(find "$expected_dir" -mindepth 1 | wc -l)"
  [[ $expected == *"l ./link-to-main -> src/main.go"* ]]
  [[ $expected == *"f x ./run.sh "* ]]
  [[ $expected == *"./name with space.txt"* ]]

  create box
  # A commit made after creation does not reach the sandbox.
  commit_file later.txt "after creation"

  run lb exec box -- sh -c "$MANIFEST" sh /src </dev/null
  assert_success
  assert_equal "$output" "$expected"

  # No .git, everything owned by the sandbox user.
  run lb exec box -- sh -c 'test ! -e /src/.git && find /src -mindepth 1 \( ! -user 1000 -o ! -group 1000 \) -print' </dev/null
  assert_success
  assert_output ""
}

@test "AC1.4: create runs the startup command echo hello world once and reports its output" {
  run --separate-stderr lb -v create box
  assert_success
  assert_line --regexp '^  setup: +echo hello world \(exit 0; the default, not your project.s: set setup-command under \[docker\] in \.litterbox\.toml\)$'
  assert_line "    hello world"
  # It ran once, in the container, through docker exec as the sandbox user:
  # the container runs as 1000:1000, which docker exec uses unless told
  # otherwise, so the exec carries no --user or that same one.
  printf '%s\n' "$stderr" >"$BATS_TEST_TMPDIR/log"
  run log_commands "$BATS_TEST_TMPDIR/log"
  assert_success
  c=$(container_of box)
  run_lines=$(grep '^docker create ' <<<"$output" | grep -F -- "--name $c ")
  assert_equal "$(grep -c . <<<"$run_lines")" 1
  [[ $run_lines == *" --user 1000:1000 "* && $run_lines == *" --name $c "* ]] ||
    fail "the container is not run as 1000:1000: $run_lines"
  # The setup command travels to the sandbox helper on stdin: one act exec,
  # logged as the exec it amounts to (pasteable), the act named in a note.
  setup_lines=$(grep -xF "docker exec --workdir /src $c /bin/sh -c 'echo hello world'" <<<"$output")
  grep -qE "^\\$ docker exec --workdir /src $c .*  # exit 0, [0-9]+ ms; ran as: docker exec -i $c /.litterbox/[0-9a-f]+/litterbox-helper act; the snapshot left out\$" "$BATS_TEST_TMPDIR/log" ||
    fail "the setup exec's note: $(grep -F 'litterbox-helper act' "$BATS_TEST_TMPDIR/log")"
  assert_equal "$(grep -c . <<<"$setup_lines")" 1
  users=$(grep -oE -- '--user[= ][^ ]+' <<<"${setup_lines%% "$c" *}" || true)
  [[ -z $users || $users =~ ^--user[=\ ]1000:1000$ ]] ||
    fail "setup command run as another user: $setup_lines"
  assert_equal "$("$RUNTIME" exec "$c" id -u)" 1000

  run --separate-stderr lb create --json box2
  assert_success
  assert_equal "$(jsonget .setup.command <<<"$output")" "echo hello world"
  assert_equal "$(jsonget .setup.exit_code <<<"$output")" 0
  assert_equal "$(jsonget .setup.stdout <<<"$output")" "hello world"
  assert_equal "$(jsonget .status <<<"$output")" active
}

@test "AC1.5: creating my-new-feature again fails with 'already exists' and creates no sandbox or branch" {
  create my-new-feature
  c=$(container_of my-new-feature)
  id=$(inspect "$c" '{{.Id}}')
  tip=$(git rev-parse litterbox/my-new-feature)
  commit_file moved.txt "HEAD moves on"

  for name in my-new-feature "My New Feature"; do
    run --separate-stderr lb create "$name"
    assert_failure 1
    assert_output ""
    assert_stderr --partial "Error: Sandbox 'my-new-feature' already exists"
  done

  # Nothing was replaced or added.
  assert_equal "$(inspect "$c" '{{.Id}}')" "$id"
  assert_equal "$(state_of "$c")" running
  assert_equal "$(git rev-parse litterbox/my-new-feature)" "$tip"
  assert_equal "$(git for-each-ref --format='%(refname)' refs/heads/litterbox/)" "refs/heads/litterbox/my-new-feature"
  assert_equal "$("$RUNTIME" ps -aq --filter "label=dev.litterbox.repo=$REPO" | wc -l)" 1
  assert_equal "$(litterbox_names)" my-new-feature
}

@test "AC1.6: 'My Feature Name!@#' is slugified to my-feature-name for branch, container and list" {
  run --separate-stderr lb create "My Feature Name!@#"
  assert_success
  assert_line "Created sandbox 'my-feature-name'"
  branch_exists litterbox/my-feature-name
  assert_equal "$(git for-each-ref --format='%(refname:short)' refs/heads/litterbox/)" litterbox/my-feature-name
  assert_equal "$(state_of "$(container_of my-feature-name)")" running
  assert_equal "$(list_status my-feature-name)" active
  # The unslugified name keeps addressing the same sandbox.
  run lb pause "My Feature Name!@#"
  assert_success
  assert_output "Paused sandbox 'my-feature-name'."
  run lb delete "My Feature Name!@#"
  assert_success
  assert_line "Deleted sandbox 'my-feature-name'."
}

@test "AC1.7: the container is named litterbox-<repo slug>-<repo id>-<sandbox slug>" {
  hex=$(rand_hex)
  make_repo "Lbe2e_${hex}_My.Repo"
  cd "$MADE_REPO"
  create my-feature
  [[ $(repo_id "$MADE_REPO") =~ ^[0-9a-f]{8}$ ]] || fail "repository id: $(repo_id "$MADE_REPO")"
  c=litterbox-lbe2e-${hex}-my-repo-$(repo_id "$MADE_REPO")-my-feature
  assert_equal "$(state_of "$c")" running
  assert_equal "$(inspect "$c" '{{index .Config.Labels "dev.litterbox.managed"}}')" true
  assert_equal "$(inspect "$c" '{{index .Config.Labels "dev.litterbox.repo"}}')" "$MADE_REPO"
  assert_equal "$(inspect "$c" '{{index .Config.Labels "dev.litterbox.repo-slug"}}')" "lbe2e-${hex}-my-repo"
  assert_equal "$(inspect "$c" '{{index .Config.Labels "dev.litterbox.sandbox"}}')" my-feature
  assert_equal "$(inspect "$c" '{{index .Config.Labels "dev.litterbox.base"}}')" "$(git rev-parse HEAD)"
  volume_exists "$c-src"
  volume_exists "$c-home"
  assert_equal "$(lb_ok list --json | jsonget .0.container)" "$c"
}

# ---------------------------------------------------------------------------
# Invalid names (package slug)

# assert_invalid_name NAME: create NAME is refused and leaves nothing behind.
assert_invalid_name() {
  run --separate-stderr lb create "$1"
  assert_failure 1
  assert_output ""
  assert_stderr --partial "Error: Invalid sandbox name"
  [[ $stderr == *"1-63 characters"*"[a-z0-9-]"* || $stderr == *"it is a path, not a name"* ]] || fail "$stderr"
  assert_equal "$(git for-each-ref refs/heads/litterbox/ refs/litterbox/)" ""
  assert_equal "$("$RUNTIME" ps -aq --filter "label=dev.litterbox.repo=$REPO")" ""
  assert_equal "$("$RUNTIME" volume ls -q | grep -c "^litterbox-$REPO_SLUG-")" 0
  assert_equal "$(lb_ok list)" "No sandboxes."
}

@test "edge: create with an empty name is refused as invalid" {
  assert_invalid_name ""
}

@test "edge: create with a name of only symbols is refused as invalid" {
  assert_invalid_name '!@#$%^&*()'
  assert_invalid_name ' - _ . '
}

@test "edge: create with a name that is a path is refused, naming what it would have become; over MCP too" {
  assert_invalid_name ../../etc
  assert_stderr "Error: Invalid sandbox name \"../../etc\": it is a path, not a name (it would become 'etc'); name the sandbox with letters, digits and dashes."
  assert_invalid_name /tmp/x
  assert_invalid_name ./fix
  run --separate-stderr mcpcall --scope own sandbox-create '{"name":"../../etc"}'
  assert_equal "$(jsonget .isError <<<"$output")" true
  assert_equal "$(git for-each-ref refs/heads/litterbox/)" ""
  # A slash inside a name is no path.
  lb_ok create feature/login >/dev/null
  assert_equal "$(git for-each-ref --format='%(refname:short)' refs/heads/litterbox/)" litterbox/feature-login
}

@test "edge: create with a name of 64 characters after slugify is refused; 63 is accepted" {
  a63=$(printf 'a%.0s' {1..63})
  assert_invalid_name "${a63}B"
  assert_invalid_name "${a63:0:32}--${a63:0:31}"
  # Symbols at the ends are trimmed: this slugifies to exactly 63 characters.
  run --separate-stderr lb create -- "--${a63}!!"
  assert_success
  assert_line "Created sandbox '$a63'"
  assert_equal "$(state_of "$(container_of "$a63")")" running
}

# ---------------------------------------------------------------------------
# Uncommitted host changes

@test "create warns that uncommitted host changes are NOT in the sandbox and leaves work tree, index and HEAD untouched" {
  head=$(git rev-parse HEAD)
  printf 'edited, not staged\n' >>README.md
  printf 'staged change\n' >>src/main.go
  git add src/main.go
  printf 'untracked\n' >new-untracked.txt
  rm run.sh
  snapshot() {
    git rev-parse HEAD
    git symbolic-ref HEAD
    git status --porcelain=v1 --untracked-files=all
    git diff
    git diff --cached
    git ls-files -s
    git stash list
    git for-each-ref --format='%(refname) %(objectname)' refs/heads/main refs/tags refs/stash
    find . -path ./.git -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum
  }
  before=$(snapshot)

  run --separate-stderr lb create box
  assert_success
  assert_stderr --partial "Warning: "
  assert_stderr --partial "NOT in the sandbox"

  assert_equal "$(snapshot)" "$before"
  # The sandbox holds the commit only.
  assert_equal "$(in_box box cat README.md)" "$(git show "$head:README.md")"
  assert_equal "$(in_box box cat src/main.go)" "$(git show "$head:src/main.go")"
  assert_equal "$(in_box box cat run.sh)" "$(git show "$head:run.sh")"
  run in_box box test -e new-untracked.txt
  assert_failure
}

# ---------------------------------------------------------------------------
# AC2: pause and resume

@test "AC2.1: pause freezes my-sandbox and list shows paused; resume restarts it with its state preserved" {
  create my-sandbox
  c=$(container_of my-sandbox)
  lb_ok exec my-sandbox -- sh -c 'echo kept >/tmp/state.txt; echo in-src >/src/work.txt' </dev/null
  # A long-running process (started directly: exec may end what a command leaves behind).
  "$RUNTIME" exec -d --user 1000:1000 "$c" sh -c 'echo $$ >/tmp/sleeper; exec sleep 600'
  eventually in_box my-sandbox sh -c 'kill -0 "$(cat /tmp/sleeper)"'
  id=$(inspect "$c" '{{.Id}}')
  started=$(inspect "$c" '{{.State.StartedAt}}')

  run lb pause my-sandbox
  assert_success
  assert_output "Paused sandbox 'my-sandbox'."
  assert_equal "$(state_of "$c")" paused
  assert_equal "$(list_status my-sandbox)" paused
  run lb list
  assert_line --regexp '^my-sandbox +paused +- +[0-9]+[smhd] +[0-9]+[smhd] +litterbox/my-sandbox +1 +-$'
  assert_equal "$(lb_ok list --json | jsonget '.[name=my-sandbox].container')" "$c"

  run lb resume my-sandbox
  assert_success
  assert_output "Resumed sandbox 'my-sandbox'."
  assert_equal "$(state_of "$c")" running
  assert_equal "$(list_status my-sandbox)" active
  # Same container, never restarted: memory, tmpfs and processes survive.
  assert_equal "$(inspect "$c" '{{.Id}}')" "$id"
  assert_equal "$(inspect "$c" '{{.State.StartedAt}}')" "$started"
  assert_equal "$(in_box my-sandbox cat /tmp/state.txt)" kept
  assert_equal "$(in_box my-sandbox cat /src/work.txt)" in-src
  in_box my-sandbox sh -c 'kill -0 "$(cat /tmp/sleeper)"'
}

@test "AC2.2: pause --all-envs pauses every sandbox of this repository and only those" {
  create one
  create two
  make_repo
  repo_b=$MADE_REPO
  slug_b=$MADE_SLUG
  (cd "$repo_b" && create other)

  run lb pause --all-envs
  assert_success
  assert_line "Paused sandbox 'one'."
  assert_line "Paused sandbox 'two'."
  refute_output --partial other
  assert_equal "$(state_of "$(container_of one)")" paused
  assert_equal "$(state_of "$(container_of two)")" paused
  assert_equal "$(list_status one)" paused
  assert_equal "$(list_status two)" paused
  assert_equal "$(state_of "$(container_of other "$slug_b" "$repo_b")")" running
  assert_equal "$(list_status other --repo "$repo_b")" active

  # Again: nothing left to pause is still success.
  run lb pause --all-envs
  assert_success
  assert_equal "$(state_of "$(container_of one)")" paused

  run lb resume --all-envs
  assert_success
  assert_line "Resumed sandbox 'one'."
  assert_line "Resumed sandbox 'two'."
  assert_equal "$(list_status one)" active
  assert_equal "$(list_status two)" active
  assert_equal "$(state_of "$(container_of other "$slug_b" "$repo_b")")" running
}

# Containers of other users or concurrent runs that pause --all-repos freezes
# are thawed again right after it (and in teardown if the test fails).
FOREIGN=()
thaw_foreign() {
  local id
  for id in "${FOREIGN[@]}"; do
    if [ "$("$RUNTIME" inspect --format '{{.State.Status}}' "$id" 2>/dev/null)" = paused ]; then
      "$RUNTIME" unpause "$id" >/dev/null 2>&1 || true
    fi
  done
  FOREIGN=()
}

# It pauses every sandbox on the engine: make test runs it alone, after the
# suites that run side by side (--filter-tags engine-wide).
# bats test_tags=engine-wide
@test "AC2.3: pause --all-repos pauses the sandboxes of every repository and list --all-repos shows them paused" {
  create box-a
  make_repo
  repo_b=$MADE_REPO
  slug_b=$MADE_SLUG
  (cd "$repo_b" && create box-b)
  mine=" $(inspect "$(container_of box-a)" '{{.Id}}') $(inspect "$(container_of box-b "$slug_b" "$repo_b")" '{{.Id}}') "
  for id in $("$RUNTIME" ps -q --no-trunc --filter label=dev.litterbox.managed=true --filter status=running); do
    [[ $mine == *" $id "* ]] || FOREIGN+=("$id")
  done

  run lb pause --all-repos
  thaw_foreign
  assert_success
  assert_line "Paused sandbox 'box-a'. ($REPO)"
  assert_line "Paused sandbox 'box-b'. ($repo_b)"
  assert_equal "$(state_of "$(container_of box-a)")" paused
  assert_equal "$(state_of "$(container_of box-b "$slug_b" "$repo_b")")" paused

  json=$(lb_ok list --all-repos --json)
  assert_equal "$(jsonget ".[container=$(container_of box-a)].status" <<<"$json")" paused
  assert_equal "$(jsonget ".[container=$(container_of box-b "$slug_b" "$repo_b")].status" <<<"$json")" paused
  assert_equal "$(jsonget ".[container=$(container_of box-b "$slug_b" "$repo_b")].repo" <<<"$json")" "$repo_b"
  run lb list --all-repos
  assert_line --regexp '^NAME +STATUS +OWNER +AGE +IDLE +BRANCH +AHEAD +PORTS +REPO$'
  # AHEAD is known for this repository's sandboxes only.
  assert_line --regexp "^box-a +paused +- +[0-9]+[smhd] +[0-9]+[smhd] +litterbox/box-a +0 +- +$REPO\$"
  assert_line --regexp "^box-b +paused +- +[0-9]+[smhd] +- +litterbox/box-b +- +- +$repo_b\$"
  # Plain list stays scoped to this repository.
  assert_equal "$(litterbox_names)" box-a
}

@test "exec in a paused sandbox fails at once, saying it is paused" {
  create box
  lb_ok pause box >/dev/null
  LB_TIMEOUT=10 run --separate-stderr lb exec box -- true </dev/null
  LB_TIMEOUT=10 refute_hang
  assert_failure 1
  assert_stderr --partial "paused"
  assert_equal "$(state_of "$(container_of box)")" paused
}

@test "AC2.4: resume of a paused my-sandbox returns it to active in list" {
  create my-sandbox
  lb_ok pause my-sandbox >/dev/null
  run lb list
  assert_line --regexp '^my-sandbox +paused '

  run lb resume my-sandbox
  assert_success
  assert_output "Resumed sandbox 'my-sandbox'."
  run lb list
  assert_line --regexp '^my-sandbox +active '
  assert_equal "$(state_of "$(container_of my-sandbox)")" running
}

@test "edge: pause of an already paused sandbox succeeds and says it is already paused" {
  create box
  lb_ok pause box >/dev/null
  run --separate-stderr lb pause box
  assert_success
  assert_output "Sandbox 'box' is already paused."
  assert_equal "$(state_of "$(container_of box)")" paused
}

@test "edge: resume of an already active sandbox succeeds and says it is already active" {
  create box
  run --separate-stderr lb resume box
  assert_success
  assert_output "Sandbox 'box' is already active."
  assert_equal "$(state_of "$(container_of box)")" running
}

@test "edge: pause of a non-existent sandbox fails with 'Sandbox ... not found.'" {
  run --separate-stderr lb pause non-existent-sandbox
  assert_failure 1
  assert_output ""
  assert_equal "$stderr" "$(not_found non-existent-sandbox)"
}

@test "edge: resume of a non-existent sandbox fails with 'Sandbox ... not found.'" {
  run --separate-stderr lb resume non-existent-sandbox
  assert_failure 1
  assert_output ""
  assert_equal "$stderr" "$(not_found non-existent-sandbox)"
}

@test "edge: delete of a non-existent sandbox fails with 'Sandbox ... not found.'" {
  run --separate-stderr lb delete non-existent-sandbox
  assert_failure 1
  assert_output ""
  assert_equal "$stderr" "$(not_found non-existent-sandbox)"
  run --separate-stderr lb delete --force non-existent-sandbox
  assert_failure 1
  assert_equal "$stderr" "$(not_found non-existent-sandbox)"
}

@test "a sandbox of another repository is not found from this one" {
  make_repo
  repo_b=$MADE_REPO
  slug_b=$MADE_SLUG
  (cd "$repo_b" && create shared-name)
  for cmd in pause resume delete; do
    run --separate-stderr lb "$cmd" shared-name
    assert_failure 1
    assert_equal "$stderr" "$(not_found shared-name)"
  done
  run --separate-stderr lb delete --force shared-name
  assert_failure 1
  assert_equal "$(state_of "$(container_of shared-name "$slug_b" "$repo_b")")" running
  branch_exists litterbox/shared-name "$repo_b"
}

@test "resume starts a sandbox whose container was stopped behind Litterbox's back" {
  create box
  c=$(container_of box)
  "$RUNTIME" stop -t 1 "$c" >/dev/null
  assert_equal "$(list_status box)" stopped

  run lb resume box
  assert_success
  assert_output --partial "box"
  assert_equal "$(state_of "$c")" running
  assert_equal "$(list_status box)" active
  # The volume kept the copy.
  assert_equal "$(in_box box cat README.md)" "# demo"
}

# ---------------------------------------------------------------------------
# AC3: delete

@test "edge: delete of an active sandbox is refused without --force and works with --force" {
  create box
  c=$(container_of box)
  run --separate-stderr lb delete box
  assert_failure 1
  assert_output ""
  assert_stderr --partial "Error: Sandbox 'box' is active"
  assert_stderr --partial "--force"
  assert_equal "$(state_of "$c")" running
  volume_exists "$(volume_of box)"
  branch_exists litterbox/box
  assert_equal "$(list_status box)" active

  run --separate-stderr lb delete --force box
  assert_success
  assert_line "Deleted sandbox 'box'."
  run container_exists "$c"
  assert_failure
  run volume_exists "$(volume_of box)"
  assert_failure
  run volume_exists "$c-home"
  assert_failure
  run branch_exists litterbox/box
  assert_failure
  assert_equal "$(lb_ok list)" "No sandboxes."
}

@test "delete of a paused sandbox needs no --force" {
  create box
  lb_ok pause box >/dev/null
  run lb delete box
  assert_success
  assert_line "Deleted sandbox 'box'."
  run container_exists "$(container_of box)"
  assert_failure
}

@test "AC3.1: delete my-sandbox removes the container and list no longer shows it" {
  create my-sandbox
  create keep-me
  tip=$(git rev-parse litterbox/my-sandbox)
  lb_ok pause my-sandbox >/dev/null
  run lb delete my-sandbox
  assert_success
  assert_line --partial "container $(container_of my-sandbox)"
  assert_line --partial "$tip"
  assert_line "Deleted sandbox 'my-sandbox'."
  run container_exists "$(container_of my-sandbox)"
  assert_failure
  assert_equal "$(litterbox_names)" keep-me
  run lb list
  refute_output --partial my-sandbox
  assert_equal "$(state_of "$(container_of keep-me)")" running
}

@test "AC3.2: after delete my-sandbox, git branch no longer lists litterbox/my-sandbox" {
  create my-sandbox
  create keep-me
  head=$(git rev-parse HEAD)
  lb_ok delete --force my-sandbox >/dev/null
  run git branch --list
  refute_line --partial litterbox/my-sandbox
  assert_line "  litterbox/keep-me"
  assert_line "* main"
  assert_equal "$(git rev-parse HEAD)" "$head"
}

@test "AC3.3: after delete no container, volume, network, ref, state or temp file of my-sandbox remains" {
  export TMPDIR=$BATS_TEST_TMPDIR/lbtmp
  mkdir -p "$TMPDIR"
  gitdir=$(git rev-parse --absolute-git-dir)
  create my-sandbox
  lb_ok exec my-sandbox -- sh -c 'echo x >/src/new.txt' </dev/null
  lb_ok delete --force my-sandbox >/dev/null

  assert_equal "$("$RUNTIME" ps -aq --filter "label=dev.litterbox.repo=$REPO")" ""
  assert_equal "$("$RUNTIME" ps -aq --filter "name=$(container_of my-sandbox)")" ""
  assert_equal "$("$RUNTIME" volume ls -q --filter "name=$(container_of my-sandbox)")" ""
  assert_equal "$("$RUNTIME" volume ls -q --filter label=dev.litterbox.sandbox=my-sandbox --filter "label=dev.litterbox.repo-slug=$REPO_SLUG")" ""
  assert_equal "$("$RUNTIME" network ls -q --filter "name=$REPO_SLUG")" ""
  assert_equal "$(git for-each-ref refs/heads/litterbox/ refs/litterbox/)" ""
  assert_equal "$(find "$gitdir" -path '*my-sandbox*')" ""
  # The commit's base tree is the repository's, kept for its next sandbox.
  if [ -d "$gitdir/litterbox" ]; then
    assert_equal "$(find "$gitdir/litterbox" -type f ! -name 'repo-id.json*' ! -path '*/litterbox/bases/*' ! -name bases.lock)" ""
  fi
  assert_equal "$(find "$TMPDIR" -mindepth 1)" ""
  assert_equal "$(git status --porcelain)" ""
}

@test "a sandbox whose container was removed behind Litterbox's back shows as missing and delete cleans up its branch" {
  create box
  c=$(container_of box)
  "$RUNTIME" rm -f -v "$c" >/dev/null
  assert_equal "$(list_status box)" missing
  run lb list
  assert_line --regexp '^box +missing +- +[0-9]+[smhd] +[0-9]+[smhd] +litterbox/box +0 +-$'
  assert_equal "$(lb_ok list --json | jsonget '.[name=box].container')" "$c"

  run --separate-stderr lb pause box
  assert_failure 1
  assert_stderr --partial "missing"

  run lb delete box
  assert_success
  assert_line "Deleted sandbox 'box'."
  run branch_exists litterbox/box
  assert_failure
  run volume_exists "$(volume_of box)"
  assert_failure
  assert_equal "$(lb_ok list)" "No sandboxes."
}

@test "delete --all-envs: refused without --yes off a terminal, nothing deleted; with --yes every sandbox of this repository goes, an active one only with --force" {
  create one
  create two
  lb_ok pause one >/dev/null
  run --separate-stderr lb delete --all-envs </dev/null
  assert_failure 1
  assert_equal "$stderr" "Error: Nothing deleted: --all-envs deletes 2 sandbox(es) (one, two) with their branches; run again with --yes to go ahead."
  assert_equal "$(git for-each-ref --format='%(refname:short)' refs/heads/litterbox/)" "$(printf 'litterbox/one\nlitterbox/two')"
  # two is active: without --force it stays, one goes, and the exit says so.
  run --separate-stderr lb delete --all-envs --yes
  assert_failure 1
  assert_line "Deleted sandbox 'one'."
  [[ $stderr == *"Sandbox 'two' is active"*"1 of 2 sandbox(es) not deleted: two"* ]] || fail "stderr: $stderr"
  assert_equal "$(git for-each-ref --format='%(refname:short)' refs/heads/litterbox/)" "litterbox/two"
  lb_ok delete --all-envs --yes --force >/dev/null
  assert_equal "$(git for-each-ref refs/heads/litterbox/)" ""
  assert_equal "$("$RUNTIME" ps -aq --filter "label=dev.litterbox.repo=$REPO")" ""
  run --separate-stderr lb delete --all-envs --yes
  assert_success
  assert_output "No sandboxes to delete."
}

@test "delete A B C deletes each once all are found; a typo among them deletes nothing; an active one stays without --force" {
  create one
  create two
  create three
  lb_ok pause one >/dev/null
  lb_ok pause three >/dev/null
  run --separate-stderr lb delete one tow three
  assert_failure 1
  assert_equal "$stderr" "Error: No sandbox named tow in this repository (litterbox list shows them); nothing deleted."
  assert_equal "$(git for-each-ref --format='%(refname:short)' refs/heads/litterbox/ | tr '\n' ' ')" "litterbox/one litterbox/three litterbox/two "
  run --separate-stderr lb delete one two three
  assert_failure 1
  assert_line "Deleted sandbox 'one'."
  assert_line "Deleted sandbox 'three'."
  [[ $stderr == *"Sandbox 'two' is active"*"1 of 3 sandbox(es) not deleted: two"* ]] || fail "stderr: $stderr"
  assert_equal "$(git for-each-ref --format='%(refname:short)' refs/heads/litterbox/)" "litterbox/two"
}

@test "delete --all-envs asks at a terminal: N keeps everything, y deletes (tmux, 80x24)" {
  create one
  create two
  session="lbdel$$"
  tmux new-session -d -s "$session" -x 80 -y 24 -c "$REPO" \
    "env LITTERBOX_HELPER='${LITTERBOX_HELPER:-}' XDG_CONFIG_HOME='$XDG_CONFIG_HOME' '$LITTERBOX' delete --all-envs --force; echo EXIT=\$?; sleep 60"
  wait_pane() { for _ in $(seq 100); do tmux capture-pane -p -t "$session" | grep -q "$1" && return 0; sleep 0.1; done; fail "no '$1' in: $(tmux capture-pane -p -t "$session")"; }
  wait_pane 'Delete 2 sandbox(es) (one, two) with their branches? \[y/N\]'
  tmux send-keys -t "$session" n Enter
  wait_pane 'EXIT=1'
  wait_pane 'Nothing deleted'
  tmux kill-session -t "$session"
  assert_equal "$(git for-each-ref refs/heads/litterbox/ | wc -l)" 2
  tmux new-session -d -s "$session" -x 80 -y 24 -c "$REPO" \
    "env LITTERBOX_HELPER='${LITTERBOX_HELPER:-}' XDG_CONFIG_HOME='$XDG_CONFIG_HOME' '$LITTERBOX' delete --all-envs --force; echo EXIT=\$?; sleep 60"
  wait_pane '\[y/N\]'
  tmux send-keys -t "$session" y Enter
  wait_pane 'EXIT=0'
  tmux kill-session -t "$session"
  assert_equal "$(git for-each-ref refs/heads/litterbox/)" ""
  assert_equal "$("$RUNTIME" ps -aq --filter "label=dev.litterbox.repo=$REPO")" ""
}
