#!/usr/bin/env bats
# The agent tools over MCP (README: "Tools"): bash, read, write, patch,
# edit, ls, glob, grep and sandbox-milestone, driven through `litterbox mcp` by
# two real MCP clients (e2e/mcpcall: mcp-go and the official go-sdk). Every
# flow runs through mcp-go; through go-sdk, make test runs the change loop
# and what only it covers, and make test-extended (tag extended) the rest,
# since the second client tests the client, not the sandbox. Effects are checked on the host with git: one
# snapshot commit per changing call on litterbox/<name>, none for a call that
# changed nothing or failed, and the user's work tree, index and HEAD untouched.

# shellcheck disable=SC2154,SC2030,SC2031 # bats sets status/output/lines/stderr; each test is a subshell
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers mcpcall; }

# Every test has sandbox $BOX of a repository whose base commit ($BASE) holds
# hidden files (.env, .hidden/, src/.cache/) and ignores node_modules/.
setup() {
  common_setup
  printf 'node_modules/\n' >>.gitignore
  mkdir -p .hidden src/.cache
  printf 'secret needle\n' >.hidden/secret.txt
  printf 'TOKEN=needle\n' >.env
  printf '// needle\npackage cache\n' >src/.cache/hidden.go
  printf 'alpha\nbeta needle\ngamma\ndelta needle\nepsilon: a:b\n' >notes.txt
  git add -A
  git commit -qm "fixture"
  BASE=$(git rev-parse HEAD)
  BOX=box
  BRANCH=litterbox/$BOX
  create "$BOX"
  TIP=$BASE
  COUNT=0
  SUBJECTS=()
}
teardown() { common_teardown; }

# ---------------------------------------------------------------------------
# Calling tools

# jstr S prints S as a JSON string.
jstr() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\t'/\\t}
  s=${s//$'\r'/\\r}
  printf '"%s"' "$s"
}

# obj KEY VALUE... prints a JSON object of string values; a key written KEY:=
# takes its value as raw JSON (numbers, booleans).
obj() {
  local out="" k v
  while [ $# -gt 0 ]; do
    k=$1 v=$2
    shift 2
    if [[ $k == *:= ]]; then k=${k%:=}; else v=$(jstr "$v"); fi
    out+="${out:+,}$(jstr "$k"):$v"
  done
  printf '{%s}' "$out"
}

# tool NAME KEY VALUE...: one call with client $CLIENT in a fresh session on
# sandbox $BOX (unless a sandbox key is given); sets RESULT to the result line
# ({tool, isError, structuredContent, text}).
tool() {
  local name=$1
  shift
  local args=("$@") i
  for ((i = 0; i < ${#args[@]}; i += 2)); do
    [ "${args[$i]}" = sandbox ] && break
  done
  [ "$i" -lt "${#args[@]}" ] || args=(sandbox "$BOX" "${args[@]}")
  run --separate-stderr mcpcall --client "$CLIENT" --repo "$REPO" "$name" "$(obj "${args[@]}")"
  [ "$status" -eq 0 ] || fail "mcpcall --client $CLIENT $name exited $status; stderr: $stderr"
  assert_equal "${#lines[@]}" 1
  RESULT=$output
}

r() { jsonget "$@" <<<"$RESULT"; }

# ---------------------------------------------------------------------------
# Checking effects on the host

commits() { git rev-list --count "$BASE..$BRANCH"; }

# committed SUBJECT: the last call succeeded and made exactly one commit on the
# branch, the one its result names as snapshot, with subject SUBJECT, on top of
# the previous tip.
committed() {
  assert_equal "$(r .isError)" false
  assert_equal "$(commits)" $((COUNT + 1))
  local tip
  tip=$(git rev-parse "$BRANCH")
  assert_equal "$(r .structuredContent.snapshot)" "$tip"
  assert_equal "$(git rev-parse "$tip^")" "$TIP"
  assert_equal "$(git log -1 --format=%s "$tip")" "$1"
  TIP=$tip
  COUNT=$((COUNT + 1))
  SUBJECTS+=("$1")
}

# committed_long MESSAGE: like committed, for a message too long (or of too
# many lines) for a subject: the subject is a prefix of MESSAGE's first line,
# under 72 characters, and the body holds the whole of MESSAGE after "bash: ".
committed_long() {
  local subject body first=${1%%$'\n'*}
  subject=$(git log -1 --format=%s "$BRANCH")
  body=$(git log -1 --format=%b "$BRANCH")
  [ "${#subject}" -lt 72 ] || fail "subject of ${#subject} characters: $subject"
  [[ $first == "${subject%...}"* || $first == "${subject% ...}"* ]] || fail "subject '$subject' is not a prefix of '$first'"
  [ "${#subject}" -ge 20 ] || fail "subject too short: $subject"
  [[ $body == *"${1#*: }"* ]] || fail "body does not hold the whole command: $body"
  committed "$subject"
}

# no_commit: the last call succeeded, changed nothing git tracks and says so
# (snapshot null); the branch did not move.
no_commit() {
  assert_equal "$(r .isError)" false
  assert_equal "$(r .structuredContent.snapshot)" null
  assert_equal "$(git rev-parse "$BRANCH")" "$TIP"
}

# refused GLOB: the last call failed (isError) with a one-line reason
# matching GLOB, and the branch did not move.
refused() {
  assert_equal "$(r .isError)" true
  local text
  text=$(r .text)
  [[ $text != *$'\n'* ]] || fail "the reason is not one line: $text"
  # shellcheck disable=SC2053 # GLOB is a pattern
  [[ $text == $1 ]] || fail "reason '$text' does not match '$1'"
  assert_equal "$(git rev-parse "$BRANCH")" "$TIP"
}

# mode_of PATH / blob_of PATH: the file's mode and content on the branch.
mode_of() { git ls-tree "$BRANCH" -- "$1" | cut -d' ' -f1; }
blob_of() { git cat-file blob "$BRANCH:$1"; }
tree_files() { git ls-tree -r --name-only "$BRANCH"; }

# host_state prints what the user owns in $REPO: HEAD, branches, index, work
# tree (names, modes, link targets, contents), status and diffs.
host_state() {
  git rev-parse HEAD
  git symbolic-ref HEAD
  git for-each-ref --format='%(refname) %(objectname)' refs/heads/ refs/tags/ | grep -v '^refs/heads/litterbox/'
  git ls-files -s
  git status --porcelain=v1 --untracked-files=all
  git diff
  git diff --cached
  git stash list
  find . -path ./.git -prune -o -printf '%y %m %p -> %l\n' | sort
  find . -path ./.git -prune -o -type f -exec sha256sum {} + | sort -k2
}

# ---------------------------------------------------------------------------
# The change loop: write, bash, patch and edit

change_loop() {
  # The user has a staged and an unstaged edit and an untracked file.
  printf 'staged line\n' >>README.md
  git add README.md
  printf '// unstaged\n' >>src/main.go
  printf 'mine\n' >host-only.txt
  host_state >"$BATS_TEST_TMPDIR/host.before"
  assert_equal "$(git status --porcelain=v1)" "$(printf 'M  README.md\n M src/main.go\n?? host-only.txt')"

  # write: a file in new directories.
  tool write path docs/new/guide.md content $'# Guide\n\nStep one.\n'
  committed "write: docs/new/guide.md"
  assert_equal "$(r .structuredContent.bytes)" 19
  assert_equal "$(blob_of docs/new/guide.md)" $'# Guide\n\nStep one.'
  assert_equal "$(mode_of docs/new/guide.md)" 100644
  # The same content again changes nothing: no commit.
  tool write path docs/new/guide.md content $'# Guide\n\nStep one.\n'
  no_commit
  assert_equal "$(r .structuredContent.bytes)" 19

  # bash: new file, executable file, mode changes, symlink, delete, rename.
  tool bash command 'echo hello > hello.txt'
  committed "bash: echo hello > hello.txt"
  assert_equal "$(r .structuredContent.exit_code)" 0
  assert_equal "$(r .structuredContent.timed_out)" false
  assert_equal "$(r .structuredContent.truncated)" false
  assert_equal "$(blob_of hello.txt)" hello

  cmd='printf '\''#!/bin/sh\necho tool\n'\'' > tool.sh && chmod +x tool.sh'
  tool bash command "$cmd"
  committed "bash: $cmd"
  assert_equal "$(mode_of tool.sh)" 100755
  assert_equal "$(blob_of tool.sh)" $'#!/bin/sh\necho tool'

  tool bash command 'chmod +x notes.txt'
  committed "bash: chmod +x notes.txt"
  assert_equal "$(mode_of notes.txt)" 100755
  assert_equal "$(git rev-parse "$BRANCH:notes.txt")" "$(git rev-parse "$BASE:notes.txt")"

  tool bash command 'chmod -x run.sh'
  committed "bash: chmod -x run.sh"
  assert_equal "$(mode_of run.sh)" 100644

  tool bash command 'ln -s docs/new/guide.md guide-link'
  committed "bash: ln -s docs/new/guide.md guide-link"
  assert_equal "$(mode_of guide-link)" 120000
  assert_equal "$(blob_of guide-link)" docs/new/guide.md

  tool bash command 'rm src/deep/er/file.txt'
  committed "bash: rm src/deep/er/file.txt"
  run git ls-tree -r --name-only "$BRANCH" -- src/deep
  assert_output ""

  tool bash command "mv 'name with space.txt' renamed.txt"
  committed "bash: mv 'name with space.txt' renamed.txt"
  assert_equal "$(blob_of renamed.txt)" "with space"
  run git ls-tree --name-only "$BRANCH" -- 'name with space.txt'
  assert_output ""
  # git sees the commit as a rename.
  assert_equal "$(git diff --name-status -M "$TIP^" "$TIP")" "$(printf 'R100\tname with space.txt\trenamed.txt')"

  # Ignored files (node_modules/, *.log) stay in the container only.
  tool bash command 'mkdir -p node_modules/left-pad && echo 1 >node_modules/left-pad/index.js && echo x >debug.log'
  no_commit
  in_box "$BOX" test -f node_modules/left-pad/index.js
  in_box "$BOX" test -f debug.log
  # (A command too long for a subject line: shortened subject, whole command
  # in the body.)
  cmd='mkdir -p lib/a/b && echo deep >lib/a/b/c.txt && echo 2 >node_modules/left-pad/x.js'
  tool bash command "$cmd"
  committed_long "bash: $cmd"
  assert_equal "$(git diff --name-status "$TIP^" "$TIP")" "$(printf 'A\tlib/a/b/c.txt')"
  assert_equal "$(blob_of lib/a/b/c.txt)" deep

  # A failing command is a result with its exit code, not an error; it
  # changed nothing.
  tool bash command 'echo out; echo err >&2; exit 3'
  no_commit
  assert_equal "$(r .structuredContent.exit_code)" 3
  assert_equal "$(r .structuredContent.stdout)" out
  assert_equal "$(r .structuredContent.stderr)" err

  # workdir is relative to /src.
  tool bash command 'pwd > where.txt; pwd' workdir src
  committed "bash: pwd > where.txt; pwd"
  assert_equal "$(r .structuredContent.stdout)" /src/src
  assert_equal "$(blob_of src/where.txt)" /src/src

  # A multi-line command: a short first line as subject, the whole command in
  # the body.
  tool bash command $'echo one > multi.txt\necho two >> multi.txt'
  committed_long $'bash: echo one > multi.txt\necho two >> multi.txt'
  assert_equal "$(blob_of multi.txt)" $'one\ntwo'

  # patch: change, create and delete a file.
  tool patch path README.md diff $'--- a/README.md\n+++ b/README.md\n@@ -1 +1,3 @@\n # demo\n+\n+patched line\n'
  committed "patch: README.md"
  assert_equal "$(r .structuredContent.created)" false
  assert_equal "$(r .structuredContent.deleted)" false
  assert_equal "$(blob_of README.md)" $'# demo\n\npatched line'
  tool patch path created.txt diff $'--- /dev/null\n+++ b/created.txt\n@@ -0,0 +1,2 @@\n+first\n+second\n'
  committed "patch: created.txt"
  assert_equal "$(r .structuredContent.created)" true
  assert_equal "$(blob_of created.txt)" $'first\nsecond'
  tool patch path hello.txt diff $'--- a/hello.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-hello\n'
  committed "patch: hello.txt"
  assert_equal "$(r .structuredContent.deleted)" true
  run git ls-tree --name-only "$BRANCH" -- hello.txt
  assert_output ""
  run in_box "$BOX" test -e hello.txt
  assert_failure

  # edit: one occurrence, then every occurrence; the executable bit stays.
  tool edit path notes.txt old_string gamma new_string GAMMA
  committed "edit: notes.txt"
  assert_equal "$(r .structuredContent.replacements)" 1
  tool edit path notes.txt old_string needle new_string pin replace_all:= true
  committed "edit: notes.txt"
  assert_equal "$(r .structuredContent.replacements)" 2
  # Several edits in one call: in order, one snapshot.
  tool edit path notes.txt edits:= '[{"old_string":"alpha","new_string":"ALPHA"},{"old_string":"ALPHA","new_string":"alpha"},{"old_string":"epsilon","new_string":"epsilon","replace_all":true}]'
  refused "edit 3 of 3: old_string and new_string are the same"
  tool edit path notes.txt edits:= '[{"old_string":"alpha","new_string":"ALPHA"},{"old_string":"ALPHA","new_string":"alpha one"}]'
  committed "edit: notes.txt"
  assert_equal "$(r .structuredContent.replacements) $(r .structuredContent.edits)" "2 2"
  assert_equal "$(blob_of notes.txt | head -1)" "alpha one"
  tool edit path notes.txt edits:= '[{"old_string":"alpha one","new_string":"alpha"}]'
  committed "edit: notes.txt"
  assert_equal "$(blob_of notes.txt)" $'alpha\nbeta pin\nGAMMA\ndelta pin\nepsilon: a:b'
  assert_equal "$(mode_of notes.txt)" 100755
  tool read path notes.txt
  assert_equal "$(r .structuredContent.content)" $'alpha\nbeta pin\nGAMMA\ndelta pin\nepsilon: a:b'

  # The branch: one commit per changing call, in order, linear, authored by
  # the agent and committed by the user's identity.
  assert_equal "$(git log --reverse --format=%s "$BASE..$BRANCH")" "$(printf '%s\n' "${SUBJECTS[@]}")"
  assert_equal "$(commits)" 18
  assert_equal "$(git rev-list --min-parents=2 "$BASE..$BRANCH")" ""
  assert_equal "$(git log --format='%an <%ae>' "$BASE..$BRANCH" | sort -u)" "box (litterbox) <litterbox@localhost>"
  assert_equal "$(git log --format='%cn <%ce>' "$BASE..$BRANCH" | sort -u)" "Litterbox E2E <e2e@litterbox.invalid>"
  assert_equal "$(tree_files)" "$(printf '%s\n' .env .gitignore .hidden/secret.txt README.md created.txt \
    docs/new/guide.md guide-link lib/a/b/c.txt link-to-main multi.txt notes.txt renamed.txt run.sh \
    src/.cache/hidden.go src/main.go src/where.txt tool.sh)"
  # Tracked content on the branch is the container's.
  for f in README.md created.txt docs/new/guide.md notes.txt src/main.go tool.sh; do
    assert_equal "$(blob_of "$f")" "$(in_box "$BOX" cat "$f")"
  done

  # The user's side: HEAD, index, work tree and uncommitted edits as they were.
  host_state >"$BATS_TEST_TMPDIR/host.after"
  run diff -u "$BATS_TEST_TMPDIR/host.before" "$BATS_TEST_TMPDIR/host.after"
  assert_success
  assert_equal "$(git diff --cached --name-only)" README.md
  [[ $(git diff --cached) == *$'\n # demo\n+staged line'* ]] || fail "staged diff: $(git diff --cached)"
  assert_equal "$(git diff --name-only)" src/main.go
  [[ $(git diff) == *"+// unstaged"* ]] || fail "unstaged diff: $(git diff)"
  assert_equal "$(cat host-only.txt)" mine
  assert_equal "$(git rev-parse HEAD)" "$BASE"
}

@test "mcp-go: write, bash, patch and edit each commit exactly one snapshot (message, mode, symlink, delete, rename, ignored files) and leave the host untouched" {
  CLIENT=mcp-go change_loop
}

# bats test_tags=extended
@test "go-sdk: write, bash, patch and edit each commit exactly one snapshot (message, mode, symlink, delete, rename, ignored files) and leave the host untouched" {
  CLIENT=sdk change_loop
}

@test "go-sdk: a .gitignore change made by bash applies in the same call: newly ignored files stay out, un-ignored ones are committed" {
  CLIENT=sdk
  cmd='echo dist/ >>.gitignore; mkdir dist; echo o >dist/o.js; :>k.js'
  tool bash command "$cmd"
  committed "bash: $cmd"
  assert_equal "$(git diff --name-only "$TIP^" "$TIP")" "$(printf '.gitignore\nk.js')"
  # Ignoring a tracked file does not untrack it: its changes are committed.
  tool bash command 'echo "*.md" >>.gitignore; echo more >>README.md'
  committed "bash: echo \"*.md\" >>.gitignore; echo more >>README.md"
  assert_equal "$(git diff --name-only "$TIP^" "$TIP")" "$(printf '.gitignore\nREADME.md')"
  # Invariant 2: once dist/ is no longer ignored, dist/o.js is a new file git
  # would track, so the call that un-ignored it commits it.
  tool bash command "sed -i '/^dist/d' .gitignore"
  committed "bash: sed -i '/^dist/d' .gitignore"
  assert_equal "$(git diff --name-only "$TIP^" "$TIP")" "$(printf '.gitignore\ndist/o.js')"
  assert_equal "$(blob_of dist/o.js)" o
}

# ---------------------------------------------------------------------------
# Looking: read, ls, glob, grep

# sorted PATH: the values at PATH of RESULT, sorted, one a line.
sorted() { r "$1" | LC_ALL=C sort; }

# sorted_args ARG...: the arguments, sorted, one a line.
sorted_args() { printf '%s\n' "$@" | LC_ALL=C sort; }

# entries: the entries of an ls result as "path|type|size" lines, sorted
# (directories without their size, which depends on the file system).
entries() {
  paste -d'|' <(r '.structuredContent.entries.*.path') <(r '.structuredContent.entries.*.type') <(r '.structuredContent.entries.*.size') |
    sed 's/|dir|.*/|dir/' | LC_ALL=C sort
}

# matches: the matches of a grep result as "path|line|text" lines, sorted.
matches() {
  paste -d'|' <(r '.structuredContent.matches.*.path') <(r '.structuredContent.matches.*.line') <(r '.structuredContent.matches.*.text') | LC_ALL=C sort
}

# shows_nothing KEY: the last result is an error, or its list KEY is empty;
# either way no hidden file shows.
shows_nothing() {
  if [ "$(r .isError)" = false ]; then
    assert_equal "$(r ".structuredContent.$1.#")" 0
  fi
  [[ $(r .text) != *needle* && $(r .text) != *secret* && $(r .text) != *hidden.go* ]] || fail "hidden files shown: $(r .text)"
}

looking() {
  # read: the whole file, a slice, past the end, an absolute path.
  tool read path notes.txt
  assert_equal "$(r .isError)" false
  assert_equal "$(r .structuredContent.content)" $'alpha\nbeta needle\ngamma\ndelta needle\nepsilon: a:b'
  assert_equal "$(r .structuredContent.offset) $(r .structuredContent.lines) $(r .structuredContent.total_lines) $(r .structuredContent.truncated)" "0 5 5 false"
  tool read path /src/notes.txt offset:= 1 limit:= 2
  assert_equal "$(r .structuredContent.content)" $'beta needle\ngamma'
  assert_equal "$(r .structuredContent.offset) $(r .structuredContent.lines) $(r .structuredContent.total_lines) $(r .structuredContent.truncated)" "1 2 5 true"
  # The text numbers lines from 1 as cat -n does, whatever the offset.
  assert_equal "$(r .text)" $'     2\tbeta needle\n     3\tgamma\n[lines 2-3 of 5 shown; read on with offset 3]'
  assert_equal "$(r .structuredContent.first_line)" 2
  tool read path notes.txt offset:= 4
  assert_equal "$(r .structuredContent.content)" "epsilon: a:b"
  assert_equal "$(r .structuredContent.lines) $(r .structuredContent.truncated)" "1 false"
  tool read path "name with space.txt"
  assert_equal "$(r .structuredContent.content)" "with space"
  tool read path /etc/passwd
  [[ $(r .structuredContent.content) == *root:* ]]

  # A PNG a command made comes back as an image; other binary files are
  # refused with their size and type.
  tool bash command 'printf "\211PNG\r\n\032\n\0\0\0\rIHDR\0\0\0\1\0\0\0\1\10\6\0\0\0\37\25\304\211" > /tmp/shot.png; printf "a\0b" > /tmp/nul.bin'
  tool read path /tmp/shot.png
  assert_equal "$(r .isError) $(r .images.0.mime) $(r .images.0.bytes)" "false image/png 33"
  assert_equal "$(r .structuredContent.image.mime) $(r .structuredContent.image.size)" "image/png 33"
  tool read path /tmp/nul.bin
  refused "/tmp/nul.bin is a binary file (3 B, application/octet-stream)*"

  # read refuses hidden paths, however they are spelled.
  for p in .gitignore .hidden/secret.txt .env src/.cache/hidden.go /src/.env src/../.env; do
    tool read path "$p"
    refused "*hidden*"
    [[ $(r .text) != *needle* ]] || fail "read $p leaked content: $(r .text)"
  done

  # ls: the top level, a subdirectory, recursively; hidden entries left out.
  tool ls
  assert_equal "$(r .isError)" false
  assert_equal "$(entries)" "$(sorted_args 'README.md|file|7' 'link-to-main|symlink|11' 'name with space.txt|file|11' \
    'notes.txt|file|50' 'run.sh|file|19' 'src|dir')"
  tool ls path src
  assert_equal "$(entries)" "$(sorted_args 'src/deep|dir' 'src/main.go|file|29')"
  tool ls path /src recursive:= true
  assert_equal "$(entries)" "$(sorted_args 'README.md|file|7' 'link-to-main|symlink|11' 'name with space.txt|file|11' \
    'notes.txt|file|50' 'run.sh|file|19' 'src|dir' 'src/deep|dir' 'src/deep/er|dir' 'src/deep/er/file.txt|file|7' 'src/main.go|file|29')"
  [[ $(r .text) != *.hidden* && $(r .text) != *.env* && $(r .text) != *.cache* ]] || fail "ls text shows hidden entries: $(r .text)"

  # glob: ** spans directories, * does not; hidden files left out.
  tool glob pattern '**/*.go'
  assert_equal "$(r .isError)" false
  assert_equal "$(sorted '.structuredContent.paths.*')" src/main.go
  tool glob pattern '*.txt'
  assert_equal "$(sorted '.structuredContent.paths.*')" "$(printf '%s\n' 'name with space.txt' notes.txt)"
  tool glob pattern '**/*.txt' path src
  assert_equal "$(sorted '.structuredContent.paths.*')" src/deep/er/file.txt
  tool glob pattern '**/*'
  assert_equal "$(sorted '.structuredContent.paths.*')" "$(printf '%s\n' README.md link-to-main 'name with space.txt' \
    notes.txt run.sh src/deep/er/file.txt src/main.go)"
  tool glob pattern '**/*.md' path /src
  assert_equal "$(sorted '.structuredContent.paths.*')" README.md

  # grep: path, line and text of each match; hidden files left out.
  tool grep pattern needle
  assert_equal "$(r .isError)" false
  assert_equal "$(r '.structuredContent.matches.#')" 2
  assert_equal "$(matches)" "$(printf '%s\n' 'notes.txt|2|beta needle' 'notes.txt|4|delta needle')"
  tool grep pattern '^(eps|alp)[a-z]+'
  assert_equal "$(matches)" "$(printf '%s\n' 'notes.txt|1|alpha' 'notes.txt|5|epsilon: a:b')"
  tool grep pattern 'with space'
  assert_equal "$(matches)" "name with space.txt|1|with space"
  tool grep pattern func include '*.go'
  assert_equal "$(matches)" "src/main.go|3|func main() {}"
  tool grep pattern 'e' path src include '*.txt'
  assert_equal "$(matches)" "src/deep/er/file.txt|1|nested"
  tool grep pattern 'no such text anywhere'
  assert_equal "$(r .isError) $(r '.structuredContent.matches.#')" "false 0"

  # Asking for a hidden directory by name does not show it either: an error
  # or nothing, never its content.
  tool ls path .hidden
  shows_nothing entries
  tool ls path src/.cache recursive:= true
  shows_nothing entries
  tool glob pattern '*' path .hidden
  shows_nothing paths
  tool grep pattern needle path .hidden
  shows_nothing matches
  tool grep pattern needle path .env
  shows_nothing matches

  # Looking commits nothing.
  assert_equal "$(commits)" 0
}

@test "mcp-go: read, ls, glob and grep see the sandbox's files; read refuses hidden paths and ls, glob and grep leave them out" {
  CLIENT=mcp-go looking
}

# bats test_tags=extended
@test "go-sdk: read, ls, glob and grep see the sandbox's files; read refuses hidden paths and ls, glob and grep leave them out" {
  CLIENT=sdk looking
}

# ---------------------------------------------------------------------------
# Failures

failures() {
  # Every tool on an unknown sandbox, in one session.
  diff=$'--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-# demo\n+# x\n'
  run --separate-stderr mcpcall --client "$CLIENT" --repo "$REPO" \
    bash "$(obj sandbox nope command 'touch x')" \
    read "$(obj sandbox nope path README.md)" \
    write "$(obj sandbox nope path x content y)" \
    patch "$(obj sandbox nope path README.md diff "$diff")" \
    edit "$(obj sandbox nope path README.md old_string demo new_string x)" \
    ls "$(obj sandbox nope)" \
    glob "$(obj sandbox nope pattern '*')" \
    grep "$(obj sandbox nope pattern x)" \
    sandbox-milestone "$(obj sandbox nope message m)"
  [ "$status" -eq 0 ] || fail "mcpcall exited $status: $stderr"
  assert_equal "${#lines[@]}" 9
  for line in "${lines[@]}"; do
    RESULT=$line
    refused "sandbox 'nope' not found: this repository has box"
  done

  # read of a missing file.
  tool read path missing.txt
  refused "*missing.txt*"
  tool read path src/nowhere/missing.txt
  refused "*missing.txt*"

  # A diff that does not apply changes nothing.
  tool patch path README.md diff $'--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-# not the content\n+# replaced\n'
  refused "*README.md*"
  assert_equal "$(in_box "$BOX" cat README.md)" "# demo"
  tool patch path notes.txt diff $'--- a/notes.txt\n+++ b/notes.txt\n@@ -2,2 +2,2 @@\n beta needle\n-gamma\n+GAMMA\n@@ -4,1 +4,1 @@\n-no such line\n+x\n'
  refused "*notes.txt*"
  assert_equal "$(in_box "$BOX" cat notes.txt)" $'alpha\nbeta needle\ngamma\ndelta needle\nepsilon: a:b'
  # A diff creating a file that is there, and deleting one that is not.
  tool patch path README.md diff $'--- /dev/null\n+++ b/README.md\n@@ -0,0 +1 @@\n+new\n'
  refused "*README.md*"
  assert_equal "$(in_box "$BOX" cat README.md)" "# demo"
  tool patch path gone.txt diff $'--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n'
  refused "*gone.txt*"

  # edit: old_string missing (the error shows the closest lines, numbered
  # as read shows them), or found twice without replace_all (it names the
  # lines); a list of edits fails whole when one cannot apply.
  tool edit path notes.txt old_string 'gamma needle' new_string x
  assert_equal "$(r .isError)" true
  assert_equal "$(r .text)" $'notes.txt: old_string not found; the closest lines are:\n     1\talpha\n     2\tbeta needle\n     3\tgamma'
  tool edit path notes.txt old_string 'not in the file at all' new_string x
  assert_equal "$(r .isError)" true
  assert_equal "$(r .text)" $'notes.txt: old_string not found, and no lines are much like it; the nearest are:\n     4\tdelta needle\n     5\tepsilon: a:b'
  tool edit path notes.txt old_string needle new_string pin
  refused "notes.txt: old_string occurs 2 times (at lines 2, 4); give more context to make it unique, or set replace_all"
  tool edit path notes.txt edits:= '[{"old_string":"alpha","new_string":"ALPHA"},{"old_string":"nowhere","new_string":"x"}]'
  assert_equal "$(r .isError)" true
  [[ $(r .text) == "notes.txt: edit 2 of 2: old_string not found, and no lines are much like it; the nearest are:"$'\n'* ]] || fail "$(r .text)"
  tool edit path missing.txt old_string a new_string b
  refused "*missing.txt*"
  assert_equal "$(in_box "$BOX" cat notes.txt)" $'alpha\nbeta needle\ngamma\ndelta needle\nepsilon: a:b'

  # Nothing was committed and the sandbox's files are as they were.
  assert_equal "$(commits)" 0
  assert_equal "$(git rev-parse "$BRANCH")" "$BASE"
  run in_box "$BOX" test -e x
  assert_failure

  # A bad regular expression is an error, not "no matches".
  tool grep pattern '('
  refused "*"
  tool grep pattern 'needle[a'
  refused "*"
}

@test "mcp-go: failures (unknown sandbox, missing or hidden file, diff that does not apply, edit not found or ambiguous, bad regex) are isError with one line and commit nothing" {
  CLIENT=mcp-go failures
}

# bats test_tags=extended
@test "go-sdk: failures (unknown sandbox, missing or hidden file, diff that does not apply, edit not found or ambiguous, bad regex) are isError with one line and commit nothing" {
  CLIENT=sdk failures
}

# ---------------------------------------------------------------------------
# Milestones

milestones() {
  tool write path a.txt content $'a\n'
  committed "write: a.txt"
  tool bash command 'echo b > b.txt'
  committed "bash: echo b > b.txt"
  tool edit path a.txt old_string a new_string A
  committed "edit: a.txt"
  tree=$(git rev-parse "$BRANCH^{tree}")

  tool sandbox-milestone message "Add a and b"
  assert_equal "$(r .isError)" false
  first=$(git rev-parse "$BRANCH")
  assert_equal "$(r .structuredContent.commit)" "$first"
  assert_equal "$(r .structuredContent.squashed)" 3
  assert_equal "$(commits)" 1
  assert_equal "$(git rev-parse "$first^")" "$BASE"
  assert_equal "$(git rev-parse "$first^{tree}")" "$tree"
  assert_equal "$(git log -1 --format=%s "$first")" "Add a and b"
  assert_equal "$(git log -1 --format='%an <%ae>' "$first")" "box (litterbox) <litterbox@localhost>"
  assert_equal "$(in_box "$BOX" cat a.txt)" A

  # The next milestone squashes only what came after the last one.
  TIP=$first COUNT=1
  tool write path c.txt content $'c\n'
  committed "write: c.txt"
  tool bash command 'rm b.txt'
  committed "bash: rm b.txt"

  # sandbox-diff: since the base by default, or since the last milestone.
  tool sandbox-diff
  assert_equal "$(r .isError) $(r .structuredContent.since) $(r .structuredContent.from)" "false base $BASE"
  assert_equal "$(r '.structuredContent.files.*.path' | sort | tr '\n' ' ')" "a.txt c.txt "
  [[ $(r .text) == *" a.txt | +1 -0"*" 2 file(s) changed, 2 insertion(s)(+), 0 deletion(s)(-)"*"+++ b/c.txt"* ]] || fail "$(r .text)"
  tool sandbox-diff since milestone
  assert_equal "$(r .structuredContent.since) $(r .structuredContent.from)" "milestone $first"
  assert_equal "$(r '.structuredContent.files.*.path' | sort | tr '\n' ' ')" "b.txt c.txt "
  [[ $(r .text) == *"-b"* ]] || fail "$(r .text)"
  assert_equal "$(git rev-parse "$BRANCH")" "$TIP"
  tree=$(git rev-parse "$BRANCH^{tree}")
  tool sandbox-milestone message "Add c, drop b"
  second=$(git rev-parse "$BRANCH")
  assert_equal "$(r .structuredContent.commit)" "$second"
  assert_equal "$(r .structuredContent.squashed)" 2
  assert_equal "$(git rev-parse "$second^")" "$first"
  assert_equal "$(git rev-parse "$second^{tree}")" "$tree"
  assert_equal "$(git log --format=%s "$BASE..$BRANCH")" "$(printf 'Add c, drop b\nAdd a and b')"

  # Nothing new: no empty commit.
  tool sandbox-milestone message "Nothing"
  assert_equal "$(git rev-parse "$BRANCH")" "$second"
  assert_equal "$(commits)" 2
}

@test "mcp-go: sandbox-milestone squashes the snapshots since the base, then since the last milestone, keeping the tree" {
  CLIENT=mcp-go milestones
}

# bats test_tags=extended
@test "go-sdk: sandbox-milestone squashes the snapshots since the base, then since the last milestone, keeping the tree" {
  CLIENT=sdk milestones
}

# ---------------------------------------------------------------------------
# bash limits: timeout and output cap

# sleepers prints the processes of a sleep 30x still running in the sandbox.
# A failing ps fails the test rather than reading as "none left".
sleepers() {
  local ps
  ps=$(engine_exec "$(container_of "$BOX")" ps -o args) || fail "ps in the sandbox failed"
  grep 'sleep 30' <<<"$ps" || true
}

timeouts() {
  # shellcheck disable=SC2034 # read by mcpcall (helpers.bash)
  local LB_TIMEOUT=30
  t0=$(date +%s%N)
  tool bash command 'sleep 300 & sleep 301 & wait' timeout:= 2
  ms=$((($(date +%s%N) - t0) / 1000000))
  [ "$ms" -lt 15000 ] || fail "bash with timeout 2 returned after ${ms} ms"
  [ "$ms" -ge 1500 ] || fail "bash with timeout 2 returned after only ${ms} ms"
  assert_equal "$(r .structuredContent.timed_out)" true
  no_commit
  assert_equal "$(sleepers)" ""

  # What the command wrote before it was killed is committed.
  tool bash command 'echo partial > partial.txt; sleep 302' timeout:= 1
  assert_equal "$(r .structuredContent.timed_out)" true
  committed "bash: echo partial > partial.txt; sleep 302"
  assert_equal "$(blob_of partial.txt)" partial
  assert_equal "$(sleepers)" ""

  # A process left in the background does not outlive its call either.
  tool bash command 'sleep 303 >/dev/null 2>&1 &'
  assert_equal "$(r .structuredContent.timed_out) $(r .structuredContent.exit_code)" "false 0"
  assert_equal "$(sleepers)" ""

  # The sandbox works on.
  tool bash command 'echo still here'
  assert_equal "$(r .structuredContent.stdout)" "still here"
}

@test "mcp-go: bash with timeout 2 running 'sleep 300 & sleep 301 & wait' returns timed_out within 15 s and leaves no process behind" {
  CLIENT=mcp-go timeouts
}

# bats test_tags=extended
@test "go-sdk: bash with timeout 2 running 'sleep 300 & sleep 301 & wait' returns timed_out within 15 s and leaves no process behind" {
  CLIENT=sdk timeouts
}

output_cap() {
  tool bash command "seq 1 100000; echo done >&2"
  assert_equal "$(r .isError)" false
  assert_equal "$(r .structuredContent.truncated)" true
  assert_equal "$(r .structuredContent.exit_code)" 0
  assert_equal "$(r .structuredContent.stderr)" "done"
  local out log
  out=$(r .structuredContent.stdout)
  log=$(r .structuredContent.stdout_log)
  [[ $out == "1"$'\n'"2"$'\n'* ]] || fail "the head is gone: ${out:0:40}"
  [[ $out == *$'\n'"100000" ]] || fail "the tail is gone: ${out: -40}"
  [[ $out == *"[... 556,127 bytes elided; all of stdout is in $log ...]"* ]] || fail "no elision marker naming $log"
  (( ${#out} < 33 * 1024 )) || fail "kept ${#out} bytes"
  [[ $(r .text) == *"bytes elided; all of stdout is in /tmp/litterbox/out/"* ]] || fail "the text has no marker"
  tool bash command "wc -c < $log; tail -n 1 $log"
  assert_equal "$(r .structuredContent.stdout)" "588895"$'\n'"100000"
  tool bash command "head -c 300000 /dev/zero | tr '\\0' y >&2" output_limit:= 4096
  assert_equal "$(r .structuredContent.truncated)" true
  [[ $(r .structuredContent.stderr) == *"[... 295,904 bytes elided; all of stderr is in /tmp/litterbox/out/"*".stderr ...]"* ]] || fail "no stderr marker"
  tool bash command 'echo small'
  assert_equal "$(r .structuredContent.truncated)" false
  no_commit
}

@test "mcp-go: bash output beyond the cap keeps its head and tail and names the file holding all of it" {
  CLIENT=mcp-go output_cap
}

# bats test_tags=extended
@test "go-sdk: bash output beyond the cap keeps its head and tail and names the file holding all of it" {
  CLIENT=sdk output_cap
}

# ---------------------------------------------------------------------------
# The CLI's side of the change loop

@test "litterbox exec commits what the command changed ('exec: ...'); litterbox milestone squashes onto the base" {
  run --separate-stderr lb exec "$BOX" -- sh -c 'echo x > f' </dev/null
  assert_success
  assert_equal "$(commits)" 1
  assert_equal "$(git log -1 --format=%s "$BRANCH")" "exec: sh -c 'echo x > f'"
  assert_equal "$(blob_of f)" x
  assert_equal "$(git log -1 --format='%an <%ae>' "$BRANCH")" "box (litterbox) <litterbox@localhost>"
  run --separate-stderr lb exec "$BOX" -- cat f </dev/null
  assert_success
  assert_output x
  assert_equal "$(commits)" 1
  run --separate-stderr lb exec "$BOX" -- mkdir -p d/e </dev/null
  assert_success
  assert_equal "$(commits)" 1
  run --separate-stderr lb exec "$BOX" -- sh -c 'echo y > d/e/g; rm f' </dev/null
  assert_success
  assert_equal "$(commits)" 2
  assert_equal "$(tree_files | grep -c -e '^f$' -e '^d/e/g$')" 1
  tree=$(git rev-parse "$BRANCH^{tree}")

  run --separate-stderr lb milestone "$BOX" -m "CLI milestone"
  assert_success
  tip=$(git rev-parse "$BRANCH")
  [[ $output == *"$tip"* ]] || fail "milestone output does not name the commit: $output"
  assert_equal "$(commits)" 1
  assert_equal "$(git rev-parse "$tip^")" "$BASE"
  assert_equal "$(git rev-parse "$tip^{tree}")" "$tree"
  assert_equal "$(git log -1 --format=%s "$tip")" "CLI milestone"
  assert_equal "$(in_box "$BOX" cat d/e/g)" y
}

@test "go-sdk: snapshots work on a machine with no git identity at all" {
  printf '[user]\n\tuseConfigOnly = true\n[init]\n\tdefaultBranch = main\n' >"$BATS_TEST_TMPDIR/gitconfig"
  unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL EMAIL
  run git var GIT_COMMITTER_IDENT
  assert_failure
  CLIENT=sdk
  tool write path anon.txt content $'anon\n'
  committed "write: anon.txt"
  assert_equal "$(git log -1 --format='%an <%ae>|%cn <%ce>' "$BRANCH")" "box (litterbox) <litterbox@localhost>|box (litterbox) <litterbox@localhost>"
  CLIENT=mcp-go
  tool bash command 'echo more >> anon.txt'
  committed "bash: echo more >> anon.txt"
}
