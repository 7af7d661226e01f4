#!/usr/bin/env bats
# Load: two `litterbox mcp` servers on one repository, eight sandboxes, and
# three workers per server issuing mixed tool calls (write, edit, bash, read,
# ls, grep, glob) on random sandboxes at once for $SOAK_DURATION (default 60s).
# e2e/soak checks afterwards that every changing call made exactly one commit
# and the branches hold exactly what was written, that no process or
# container leaked, and that each server's memory stayed flat.

# shellcheck disable=SC2154 # bats sets status and output
bats_require_minimum_version 1.5.0
load helpers

setup() { common_setup; }
teardown() { common_teardown; }

# bats test_tags=extended
@test "soak: 2 servers, 8 sandboxes, mixed concurrent calls: nothing lost, duplicated or leaked, memory flat" {
  (cd "$BATS_TEST_DIRNAME/.." && go build -o "$BATS_TEST_TMPDIR/soak" ./e2e/soak)
  run "$BATS_TEST_TMPDIR/soak" --bin "$LITTERBOX" --repo "$REPO" \
    --servers 2 --sandboxes 8 --workers 3 --duration "${SOAK_DURATION:-60s}"
  printf '%s\n' "$output" >&3
  assert_success
  assert_output --partial "ok: no commit lost or duplicated, no leak, memory flat"
}
