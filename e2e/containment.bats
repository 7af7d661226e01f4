#!/usr/bin/env bats
# mcp-config keeps the agent inside: beside the server entry it writes the
# client's own rules, in the client's project files, denying its built-in
# shell and file writes and allowing Litterbox's tools; --allow-builtin
# writes the entry only.

# shellcheck disable=SC2154,SC2016 # bats sets status/output/lines/stderr; $schema is a JSON key, not a variable
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers; }
setup() { common_setup; }
teardown() { common_teardown; }

# has_line WANT < LINES: WANT is one of the lines.
has_line() { grep -qxF -- "$1"; }

# second_write_changes_nothing CLIENT FILE...: a second --write says so for
# every file and leaves them as they were.
second_write_changes_nothing() {
  local client=$1 f
  shift
  for f in "$@"; do cp "$f" "$BATS_TEST_TMPDIR/$(basename "$f").before"; done
  run --separate-stderr lb mcp-config "$client" --write
  assert_success
  [ "${#lines[@]}" -eq "$#" ] || fail "want one line per file: $output"
  for f in "${lines[@]}"; do
    [[ $f == *"; nothing changed." ]] || fail "second --write: $f"
  done
  for f in "$@"; do
    cmp "$f" "$BATS_TEST_TMPDIR/$(basename "$f").before" || fail "second --write changed $f"
  done
}

@test "mcp-config claude --write denies Claude Code's Bash, Edit and Write and allows the litterbox tools, once" {
  run --separate-stderr lb mcp-config claude --write
  assert_success
  assert_line "Wrote MCP server 'litterbox' to $REPO/.mcp.json."
  assert_line --regexp "^Wrote Claude Code permissions \(.*\) to $REPO/\.claude/settings\.json\.$"
  f=$REPO/.claude/settings.json
  deny=$(jsonget '.permissions.deny.*' <"$f")
  for tool in Bash Edit Write 'Read(.*)'; do
    has_line "$tool" <<<"$deny" || fail "$tool not denied: $(cat "$f")"
  done
  assert_equal "$(jsonget '.permissions.allow.*' <"$f")" mcp__litterbox
  assert_equal "$(jsonget '.enabledMcpjsonServers.*' <"$f")" litterbox
  assert_equal "$(jsonget .mcpServers.litterbox.args.0 <"$REPO/.mcp.json")" mcp
  second_write_changes_nothing claude "$REPO/.mcp.json" "$f"
}

@test "the user's own Claude Code permissions and settings are kept, the rules after them" {
  mkdir -p .claude
  printf '{\n  "model": "opus",\n  "permissions": {\n    "allow": ["Bash(npm test)"],\n    "deny": ["Read(./secrets/**)"]\n  }\n}\n' >.claude/settings.json
  lb_ok mcp-config claude --write >/dev/null
  f=.claude/settings.json
  assert_equal "$(jsonget .model <"$f")" opus
  assert_equal "$(jsonget .permissions.allow.0 .permissions.allow.1 <"$f")" "$(printf 'Bash(npm test)\nmcp__litterbox')"
  assert_equal "$(jsonget .permissions.deny.0 .permissions.deny.1 <"$f")" "$(printf 'Read(./secrets/**)\nBash')"
  second_write_changes_nothing claude "$REPO/.mcp.json" "$REPO/$f"
}

@test "mcp-config opencode --write denies OpenCode's bash and edit and allows the litterbox tools, keeping its other settings" {
  printf '{"$schema": "https://opencode.ai/config.json", "model": "m", "permission": {"webfetch": "ask"}}\n' >opencode.json
  run --separate-stderr lb mcp-config opencode --write
  assert_success
  assert_output --regexp "^Wrote MCP server 'litterbox' and OpenCode permissions \(.*\) to $REPO/opencode\.json\.$"
  f=$REPO/opencode.json
  assert_equal "$(jsonget .permission.bash .permission.edit '.permission.litterbox_*' <"$f")" "$(printf 'deny\ndeny\nallow')"
  assert_equal "$(jsonget .permission.read.@keys .permission.read.* <"$f")" "$(printf '**/.* **/.*/**\ndeny\ndeny')"
  assert_equal "$(jsonget .permission.webfetch .model .mcp.litterbox.type <"$f")" "$(printf 'ask\nm\nlocal')"
  # The user's rule stays first: OpenCode's last matching rule wins.
  assert_equal "$(jsonget .permission.@keys <"$f")" "bash edit grep litterbox_* read webfetch"
  [ "$(grep -n '"webfetch"' "$f" | cut -d: -f1)" -lt "$(grep -n '"bash"' "$f" | cut -d: -f1)" ] ||
    fail "rules not after the user's: $(cat "$f")"
  second_write_changes_nothing opencode "$f"
}

@test "a rule the user set otherwise is kept and reported on a note line" {
  printf '{"permission": {"bash": "allow"}}\n' >opencode.json
  run --separate-stderr lb mcp-config opencode --write
  assert_success
  assert_equal "$(jsonget .permission.bash .permission.edit <opencode.json)" "$(printf 'allow\ndeny')"
  [[ $stderr == *'note: opencode.json: permission.bash is "allow", not "deny"; left as it is, so OpenCode'"'"'s shell stays allowed'* ]] ||
    fail "no note: $stderr"
}

@test "--allow-builtin writes the server entry only" {
  run --separate-stderr lb mcp-config claude --write --allow-builtin
  assert_success
  assert_output "Wrote MCP server 'litterbox' to $REPO/.mcp.json."
  assert_stderr ""
  assert_not_exist .claude
  lb_ok mcp-config opencode --write --allow-builtin >/dev/null
  assert_equal "$(jsonget .@keys <opencode.json)" '$schema mcp'
}

@test "without --write every file is printed, each named, with notes for what a client cannot enforce; nothing is written" {
  run --separate-stderr lb mcp-config cursor
  assert_success
  heads=$(grep -c '^# .*: merge into ' <<<"$stderr")
  notes=$(grep -c '^note: ' <<<"$stderr")
  [ "$heads" -eq 3 ] && [ "$notes" -ge 1 ] || fail "stderr: $stderr"
  [[ $stderr == *"# Cursor agent CLI project permissions: merge into $REPO/.cursor/cli.json, or run again with --write; on stderr, below"* ]] || fail "stderr: $stderr"
  [[ $stderr == *'"Shell(*)"'* ]] || fail "stderr: $stderr"
  # stdout is the server entry's file alone.
  assert_equal "$(jsonget .mcpServers.litterbox.args.0 <<<"$output")" mcp
  # So redirecting it writes the file a client reads, one valid document
  # (jsonget refuses trailing data).
  lb mcp-config claude >.mcp.json 2>/dev/null
  assert_equal "$(jsonget .mcpServers.litterbox.type <.mcp.json)" stdio
  rm .mcp.json
  # One document when the entry and the rules share a file.
  run --separate-stderr lb mcp-config opencode
  assert_success
  assert_equal "$(jsonget .permission.bash .mcp.litterbox.type <<<"$output")" "$(printf 'deny\nlocal')"
  assert_equal "$(git status --porcelain)" ""
}

@test "doctor: a client set up without its rules is a warning with the fix; once written, ok" {
  lb_ok mcp-config claude --write --allow-builtin >/dev/null
  run lb doctor
  assert_success
  assert_line --regexp '^warn +containment claude +'
  assert_line --regexp '^ +fix: litterbox mcp-config claude --write$'
  lb_ok mcp-config claude --write >/dev/null
  run lb doctor
  assert_success
  assert_line --regexp '^ok +containment claude +'
  refute_line --partial "fix: litterbox mcp-config claude"
}
