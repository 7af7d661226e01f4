#!/usr/bin/env bats
# A sandbox belongs to exactly one repository: two repositories with one
# basename and one committed slug, a copy of a repository, linked worktrees,
# and every repository shape a user may run litterbox in.

# shellcheck disable=SC2154,SC2030,SC2031,SC2153 # bats sets status/output/lines/stderr; each test is a subshell; REPO comes from common_setup
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers mcpcall; }
setup() { common_setup; }
teardown() { common_teardown; }

# make_twin BASENAME SLUG: a repository named BASENAME that commits
# [project] slug = SLUG; sets MADE_REPO.
make_twin() {
  make_repo "$1"
  REPO_SLUGS+=("$2")
  printf '[project]\nslug = "%s"\n' "$2" >"$MADE_REPO/.litterbox.toml"
  git -C "$MADE_REPO" add .litterbox.toml
  git -C "$MADE_REPO" commit -qm "project slug"
}

# print_state REPO: what must not change in REPO while another repository
# works: its sandbox x's container (by id) and state, its volume, its branch.
print_state() {
  local c
  c=$(cd "$1" && lb_ok list --json | jsonget '.[name=x].container')
  printf '%s %s %s %s\n' "$c" \
    "$("$RUNTIME" inspect --format '{{.Id}} {{.State.Status}}' "$c" 2>&1)" \
    "$("$RUNTIME" volume inspect --format '{{.Name}}' "$c-src" 2>&1)" \
    "$(git -C "$1" rev-parse litterbox/x)"
}

@test "two repositories with one basename and one committed slug: every command in either touches only its own sandbox" {
  slug=lbid-$(rand_hex)
  make_twin app "$slug"
  a=$MADE_REPO
  make_twin app "$slug"
  b=$MADE_REPO
  (cd "$a" && create x)
  (cd "$b" && create x)
  ca=$(cd "$a" && lb_ok list --json | jsonget .0.container)
  cb=$(cd "$b" && lb_ok list --json | jsonget .0.container)
  [ "$ca" != "$cb" ] || fail "both repositories use container $ca"
  assert_equal "$ca" "$(container_of x "$slug" "$a")"
  assert_equal "$(inspect "$ca" '{{index .Config.Labels "dev.litterbox.repo"}}')" "$a"
  assert_equal "$(inspect "$cb" '{{index .Config.Labels "dev.litterbox.repo"}}')" "$b"

  for pair in "$a $b" "$b $a"; do
    read -r me other <<<"$pair"
    cd "$me"
    before=$(print_state "$other")
    assert_equal "$(lb_ok list --json | jsonget '.#' '.0.container' .0.repo)" "$(printf '1\n%s\n%s' "$(container_of x "$slug" "$me")" "$me")"
    lb_ok pause x >/dev/null
    lb_ok resume x >/dev/null
    lb_ok exec x -- sh -c "echo exec > exec-$(repo_id "$me")" </dev/null
    lb_ok shell x <<<"echo shell > shell-$(repo_id "$me")" >/dev/null
    mcpcall --repo "$me" bash "{\"sandbox\":\"x\",\"command\":\"echo mcp > mcp-$(repo_id "$me")\"}" \
      write "{\"sandbox\":\"x\",\"path\":\"written\",\"content\":\"$(repo_id "$me")\"}" >/dev/null
    run lb diff x -- --stat
    assert_success
    assert_output --partial "exec-$(repo_id "$me")"
    refute_output --partial "$(repo_id "$other")"
    lb_ok apply x >/dev/null
    assert_equal "$(cat written)" "$(repo_id "$me")"
    assert_equal "$(print_state "$other")" "$before"
  done

  # Errors in b, and their advice followed literally, leave a alone.
  cd "$b"
  before=$(print_state "$a")
  : >"$BATS_TEST_TMPDIR/advice"
  for cmd in "create x" "delete x" "pause x" "exec x -- true" "shell x" "service x status nope" "pause nope" "diff nope"; do
    # shellcheck disable=SC2086 # words on purpose
    run --separate-stderr lb $cmd </dev/null
    printf '%s\n' "$stderr" >"$BATS_TEST_TMPDIR/err"
    advice "$BATS_TEST_TMPDIR/err" >>"$BATS_TEST_TMPDIR/advice"
  done
  grep -qx 'resume x' "$BATS_TEST_TMPDIR/advice" || fail "no advice to follow: $(cat "$BATS_TEST_TMPDIR/advice")"
  while read -r line; do
    # shellcheck disable=SC2086
    lb $line </dev/null || true
  done <"$BATS_TEST_TMPDIR/advice"
  assert_equal "$(print_state "$a")" "$before"

  # delete without --force (paused), delete --force and merge, in b.
  lb_ok pause x >/dev/null
  lb_ok delete x >/dev/null
  create x
  lb_ok delete --force x >/dev/null
  create x
  lb_ok exec x -- sh -c 'echo again > again' </dev/null
  lb_ok merge x >/dev/null
  assert_equal "$(print_state "$a")" "$before"
  assert_equal "$(cd "$b" && litterbox_names)" ""
  assert_equal "$(cd "$a" && litterbox_names)" x
}

# advice FILE prints each litterbox command an error message in FILE tells
# the user to run, without the word litterbox, one a line; NAME placeholders
# and list are left out.
advice() {
  grep -oE 'litterbox [a-z-]+( [A-Za-z0-9_./-]+| --?[a-z-]+)*' "$1" | sed 's/^litterbox //' | grep -vE 'NAME|^list' || true
}

@test "a copy of a repository: every error's advice, followed literally, never touches the original's sandbox" {
  create x
  lb_ok exec x -- sh -c 'echo work > work' </dev/null
  copy=$BATS_TEST_TMPDIR/copy/$(basename "$REPO")
  mkdir -p "$(dirname "$copy")"
  cp -a "$REPO" "$copy"
  before=$(print_state "$REPO")
  cd "$copy"
  # The copy's record names the original's container: to the copy, it is
  # missing, never its own.
  assert_equal "$(list_status x)" missing
  [ "$(repo_id "$copy")" != "$(repo_id "$REPO")" ] || fail "the copy kept the original's id"

  : >"$BATS_TEST_TMPDIR/advice"
  for cmd in "pause x" "resume x" "exec x -- true" "shell x" "create x" "service x status" "delete x"; do
    # shellcheck disable=SC2086 # words on purpose
    run --separate-stderr lb $cmd </dev/null
    printf '%s\n' "$stderr" >"$BATS_TEST_TMPDIR/err"
    advice "$BATS_TEST_TMPDIR/err" >>"$BATS_TEST_TMPDIR/advice"
    [[ $cmd == "delete x" ]] || assert_failure
    assert_equal "$(print_state "$REPO")" "$before"
  done
  # create x said to delete x first.
  grep -qx 'delete x' "$BATS_TEST_TMPDIR/advice" || fail "no advice to follow: $(cat "$BATS_TEST_TMPDIR/advice")"
  while read -r line; do
    # shellcheck disable=SC2086
    lb $line </dev/null || true
    assert_equal "$(print_state "$REPO")" "$before"
  done <"$BATS_TEST_TMPDIR/advice"
  # The copy's own sandbox of that name gets its own names.
  create x
  [ "$(lb_ok list --json | jsonget .0.container)" != "$(container_of x)" ] || fail "the copy reused the original's container"
  assert_equal "$(print_state "$REPO")" "$before"
  cd "$REPO"
  assert_equal "$(list_status x)" active
  assert_equal "$(lb_ok exec x -- cat work </dev/null)" work
}

@test "delete in a copy removes only the copy's branch and state and names what it left alone" {
  create x
  copy=$BATS_TEST_TMPDIR/copy2/$(basename "$REPO")
  mkdir -p "$(dirname "$copy")"
  cp -a "$REPO" "$copy"
  cd "$copy"
  run --separate-stderr lb delete --force x
  assert_success
  assert_line "Removed branch litterbox/x, state."
  assert_line "Left alone: container $(container_of x) belongs to $REPO, not to this repository; nothing was done to it."
  cd "$REPO"
  assert_equal "$(list_status x)" active
  branch_exists litterbox/x
}

@test "worktrees: a sandbox made in a linked worktree is used from the main one, and the other way round" {
  wt=$BATS_TEST_TMPDIR/wt
  git worktree add -q "$wt"
  (cd "$wt" && create from-wt)
  create from-main
  assert_equal "$(litterbox_names)" "$(printf 'from-main\nfrom-wt')"
  assert_equal "$(cd "$wt" && litterbox_names)" "$(printf 'from-main\nfrom-wt')"
  assert_equal "$(list_status from-wt)" active
  lb_ok exec from-wt -- sh -c 'echo from main > m' </dev/null
  (cd "$wt" && lb_ok exec from-main -- sh -c 'echo from wt > w' </dev/null)
  lb_ok pause from-wt >/dev/null
  assert_equal "$(cd "$wt" && list_status from-wt)" paused
  (cd "$wt" && lb_ok resume from-wt >/dev/null && lb_ok delete --force from-main >/dev/null)
  assert_equal "$(litterbox_names)" from-wt
  assert_equal "$(inspect "$(container_of from-wt)" '{{index .Config.Labels "dev.litterbox.repo"}}')" "$REPO"
  # A detached HEAD: create from it, apply onto it.
  git -C "$wt" checkout -q --detach
  (cd "$wt" && create detached && lb_ok exec detached -- sh -c 'echo d > d' </dev/null && lb_ok apply detached >/dev/null)
  assert_equal "$(cat "$wt/d")" d
}

@test "a bare repository, a git dir and no repository are refused with their fix, by every command and by doctor" {
  git clone -q --bare "$REPO" "$BATS_TEST_TMPDIR/bare.git"
  for cmd in "list" "create x" "pause x" "delete x"; do
    # shellcheck disable=SC2086
    run --separate-stderr lb --repo "$BATS_TEST_TMPDIR/bare.git" $cmd
    assert_failure 1
    assert_output ""
    assert_equal "$stderr" "Error: $BATS_TEST_TMPDIR/bare.git is a bare repository: a sandbox is copied from a work tree and a bare repository has none; run litterbox in a clone of it, or in a worktree (git worktree add ../NAME)"
  done
  run --separate-stderr lb --repo "$BATS_TEST_TMPDIR/bare.git" doctor
  assert_failure 1
  assert_line --regexp "^fail +repository +$BATS_TEST_TMPDIR/bare.git is a bare repository\$"
  assert_line --regexp "^ +fix: a sandbox is copied from a work tree"
  run --separate-stderr lb --repo "$REPO/.git" list
  assert_failure 1
  assert_equal "$stderr" "Error: $REPO/.git: inside a git directory, not a work tree: run litterbox in the work tree."
  mkdir "$BATS_TEST_TMPDIR/plain"
  run --separate-stderr lb --repo "$BATS_TEST_TMPDIR/plain" doctor
  assert_line --regexp "^ +fix: run litterbox inside a git repository \(or git init one\), or name one with --repo DIR\$"
}

@test "GIT_DIR and GIT_WORK_TREE, core.worktree, and a path with spaces and non-ASCII characters" {
  # GIT_DIR/GIT_WORK_TREE from anywhere.
  cd /
  GIT_DIR=$REPO/.git GIT_WORK_TREE=$REPO lb_ok create env-box >/dev/null
  cd "$REPO"
  assert_equal "$(list_status env-box)" active

  # core.worktree: the git dir in one place, the files in another.
  make_repo
  gitside=$MADE_REPO
  files=$BATS_TEST_TMPDIR/files-$(rand_hex)
  REPOS+=("$files")
  REPO_SLUGS+=("$(basename "$files")")
  cp -a "$gitside" "$files" && rm -rf "$files/.git"
  git -C "$gitside" config core.worktree "$files"
  cd "$gitside"
  create cw
  lb_ok exec cw -- sh -c 'echo cw > cw.txt' </dev/null
  lb_ok apply cw >/dev/null
  assert_equal "$(cat "$files/cw.txt")" cw

  # Spaces and non-ASCII characters in the path.
  make_repo "my répo ü" "dir with space"
  cd "$MADE_REPO"
  create odd
  assert_equal "$(list_status odd)" active
  assert_equal "$(inspect "$(container_of odd "$MADE_SLUG" "$MADE_REPO")" '{{index .Config.Labels "dev.litterbox.repo"}}')" "$MADE_REPO"
  lb_ok exec odd -- sh -c 'echo odd > odd.txt' </dev/null
  lb_ok delete --force odd >/dev/null
  assert_equal "$(litterbox_names)" ""
}
