#!/usr/bin/env bats
# [secrets] and [network] from the command line: a secret reaches commands
# and nothing else; an allowlist's refusals are counted where a human looks.

# shellcheck disable=SC2154,SC2030,SC2031,SC2016 # bats sets status/output/lines/stderr; each test is a subshell; $TOKEN expands in the sandbox
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers mcpcall jsonget; }
setup() { common_setup; }
teardown() { common_teardown; }

@test "a secret: needs trust when committed; commands see it, output masks it, -v, inspect, audit, state and the branch never hold it" {
  LB_E2E_TOKEN="s3cr3t-$(rand_hex)"
  export LB_E2E_TOKEN
  printf '[secrets]\nTOKEN = { env = "LB_E2E_TOKEN" }\n' >.litterbox.toml
  git add .litterbox.toml && git commit -qm "secrets"
  run --separate-stderr lb create box
  assert_failure 1
  [[ $stderr == *'sets secrets.TOKEN = { env = "LB_E2E_TOKEN" }, which loosens the sandbox'* ]] || fail "$stderr"

  git rm -q .litterbox.toml && git commit -qm "no secrets"
  printf '[secrets]\nTOKEN = { env = "LB_E2E_TOKEN" }\n' >.litterbox.local.toml
  run --separate-stderr lb create box
  assert_success
  assert_line '  weakened:  secrets.TOKEN = { env = "LB_E2E_TOKEN" } (.litterbox.local.toml)'

  run --separate-stderr lb -v exec box -- sh -c 'echo "token=$TOKEN"; test "$TOKEN" = "$0" && echo same' "$LB_E2E_TOKEN" </dev/null
  assert_success
  assert_output $'token=***\nsame'
  [[ $stderr == *"--env TOKEN "* ]] || fail "the debug log does not name the secret: $stderr"
  [[ $stderr != *"$LB_E2E_TOKEN"* ]] || fail "the debug log holds the secret"

  run --separate-stderr lb exec box -- sh -c 'echo "t=$TOKEN" > leak.txt; echo ok > fine.txt' </dev/null
  assert_success
  [[ $stderr == *"not committed: leak.txt holds the value of secret TOKEN; it stays in the sandbox"* ]] || fail "$stderr"
  git show litterbox/box:fine.txt >/dev/null
  run git show litterbox/box:leak.txt
  assert_failure
  assert_equal "$(lb_ok exec box -- cat leak.txt </dev/null)" "t=***"

  run --separate-stderr mcpcall --repo "$REPO" bash "{\"sandbox\":\"box\",\"command\":\"echo $LB_E2E_TOKEN\"}"
  assert_success
  [[ $(jsonget .text <<<"$output") == *$'stdout:\n***\n'* ]] || fail "$output"

  inspect "$(container_of box)" '{{json .}}' | grep -qF "$LB_E2E_TOKEN" && fail "docker inspect holds the secret"
  grep -rqF "$LB_E2E_TOKEN" "$REPO/.git/litterbox" && fail "a state file or the audit log holds the secret"
  git log -p --format=%B litterbox/box | grep -qF "$LB_E2E_TOKEN" && fail "the branch holds the secret"
  true
}

@test "a secret that cannot be read stops create with one line, and makes nothing" {
  printf '[secrets]\nTOKEN = { env = "LB_E2E_SURELY_UNSET" }\n' >.litterbox.local.toml
  run --separate-stderr lb create box
  assert_failure 1
  assert_equal "$stderr" "Error: Secret TOKEN: LB_E2E_SURELY_UNSET is not set in the environment litterbox runs in."
  branch_exists litterbox/box && fail "branch made"
  true
}

@test "an allowlist: the proxy's refusals show in list --json, list and the audit log" {
  printf '[network]\nmode = "allow"\nallow = ["allowed.test"]\n' >.litterbox.local.toml
  run --separate-stderr lb create box
  assert_success
  assert_line '  weakened:  network.allow = ["allowed.test"] (.litterbox.local.toml)'
  run --separate-stderr mcpcall --repo "$REPO" bash '{"sandbox":"box","command":"printf '"'"'GET http://denied.test/ HTTP/1.0\\r\\n\\r\\n'"'"' | nc -w 5 127.0.0.1 3128 | tail -1"}'
  assert_success
  [[ $(jsonget .text <<<"$output") == *"litterbox: denied.test:80 is not in this sandbox's network allowlist"* ]] || fail "$output"

  run --separate-stderr lb list --json
  assert_success
  assert_equal "$(jsonget '.0.refused.@keys' <<<"$output")" "denied.test:80"
  assert_equal "$(jsonget '.0.refused.*' <<<"$output")" "1"
  run --separate-stderr lb list
  assert_line "box: its egress proxy refused denied.test:80 (1x)"
  run --separate-stderr lb log --audit box
  assert_success
  assert_line --regexp ' 1 refused by the egress proxy \(denied\.test:80\)$'
  run --separate-stderr lb log --audit -v box
  assert_success
  assert_line "    refused by the egress proxy: denied.test:80 (1x)"
}
