#!/usr/bin/env bats
# What a committed .litterbox.toml loosens needs the user's word
# (litterbox trust); the local file, the user's own config and create's
# --network need none; network "host" comes only from the command line.

# shellcheck disable=SC2154,SC2030,SC2031 # bats sets status/output/lines/stderr; each test is a subshell
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers mcpcall; }
setup() { common_setup; }
teardown() { common_teardown; }

# refused_create NAME PATTERN: create NAME fails with one line matching
# PATTERN and makes nothing.
refused_create() {
  run --separate-stderr lb create "$1"
  assert_failure 1
  assert_output ""
  [ "${#stderr_lines[@]}" -eq 1 ] || fail "want one line, got: $stderr"
  [[ $stderr =~ $2 ]] || fail "error does not match /$2/: $stderr"
  branch_exists "litterbox/$1" && fail "branch litterbox/$1 was made"
  assert_equal "$("$RUNTIME" ps -aq --filter "label=dev.litterbox.repo=$REPO" --filter "label=dev.litterbox.sandbox=$1")" ""
}

@test "a committed config that loosens the sandbox is refused, allowed by trust, refused again once it changes" {
  printf '[docker]\nnetwork = "bridge"\nuser = "0:0"\n' >.litterbox.toml
  git add .litterbox.toml && git commit -qm "weaken"
  refused_create box '^Error: \.litterbox\.toml sets docker\.network = "bridge", which loosens the sandbox, and this repository.s committed config is not trusted: read it, then allow it with litterbox trust \(or set it in \.litterbox\.local\.toml\)'
  # The agent's way in is refused the same.
  run --separate-stderr mcpcall --repo "$REPO" sandbox-create '{"name":"agent"}'
  assert_success
  assert_equal "$(jsonget .isError <<<"$output")" true
  [[ $(jsonget .text <<<"$output") == *"not trusted"* ]] || fail "mcp: $output"

  run --separate-stderr lb trust
  assert_success
  assert_output --regexp '^Trusted .*/\.litterbox\.toml \(sha256:[0-9a-f]{12}\): it sets docker\.network = "bridge", docker\.user = "0:0"\.$'
  run --separate-stderr lb create box
  assert_success
  assert_line '  weakened:  docker.network = "bridge" (.litterbox.toml, trusted)'
  assert_line '  weakened:  docker.user = "0:0" (.litterbox.toml, trusted)'
  assert_equal "$(inspect "$(container_of box)" '{{.HostConfig.NetworkMode}} {{.Config.User}}')" "bridge 0:0"

  # An agent's change to the file, merged or not, needs the word again.
  printf '[docker]\nnetwork = "bridge"\nuser = "0:0"\nread-only = false\n' >.litterbox.toml
  refused_create box2 'has changed since it was trusted: read it, then allow it with litterbox trust'
  lb_ok trust --revoke >/dev/null
  git checkout -q .litterbox.toml
  refused_create box2 'committed config is not trusted'
}

@test "a committed build is trusted with HEAD's Dockerfile; a merged rewrite of it is named by review and refused until trust" {
  printf 'FROM busybox:latest\n' >Dockerfile
  printf '[docker]\nbuild = "Dockerfile"\n' >.litterbox.toml
  git add Dockerfile .litterbox.toml && git commit -qm build
  run --separate-stderr lb trust
  assert_success
  assert_output --regexp '^Trusted .*/\.litterbox\.toml \(sha256:[0-9a-f]{12}\): it sets docker\.build = "Dockerfile"; and its image build from Dockerfile at commit [0-9a-f]+\.$'
  lb_ok create box >/dev/null
  lb_ok exec box -- sh -c 'printf "FROM busybox:latest\nRUN echo pwned > /pwned\n" > Dockerfile' >/dev/null
  run --separate-stderr lb diff box
  assert_success
  [[ $stderr == *"Dockerfile (builds the sandbox image"* ]] || fail "diff does not name the Dockerfile: $stderr"
  git merge -q --no-edit litterbox/box
  refused_create box2 "^Error: The image build's Dockerfile in commit [0-9a-f]+ has changed since it was trusted: review it \(git log -p -- Dockerfile\), then allow it with litterbox trust\.?$"
  lb_ok trust >/dev/null
  lb_ok create box2 >/dev/null
  run lb exec box2 -- cat /pwned
  assert_output pwned
}

@test "the same settings from .litterbox.local.toml or the user's own config need no trust" {
  printf '[docker]\nnetwork = "bridge"\n' >.litterbox.local.toml
  run --separate-stderr lb create box
  assert_success
  assert_line '  weakened:  docker.network = "bridge" (.litterbox.local.toml)'
  rm .litterbox.local.toml
  mkdir -p "$XDG_CONFIG_HOME/litterbox"
  printf '[docker]\npids = 1024\n' >"$XDG_CONFIG_HOME/litterbox/config.toml"
  run --separate-stderr lb create box2
  assert_success
  assert_line "  weakened:  docker.pids = 1024 ($XDG_CONFIG_HOME/litterbox/config.toml)"
  assert_equal "$(inspect "$(container_of box2)" '{{.HostConfig.PidsLimit}}')" 1024
  # Without a loosening, create says nothing of it.
  rm "$XDG_CONFIG_HOME/litterbox/config.toml"
  run --separate-stderr lb create box3
  assert_success
  refute_output --partial weakened
}

@test "network host: refused from every file, taken from create --network host" {
  printf '[docker]\nnetwork = "host"\n' >.litterbox.local.toml
  refused_create box '^Error: \.litterbox\.local\.toml sets docker\.network = "host", which shares the host.s network with the sandbox; Litterbox takes that only from the command line: litterbox create NAME --network host\.$'
  printf '[docker]\nnetwork = "host"\n' >.litterbox.toml
  lb_ok trust >/dev/null
  rm .litterbox.local.toml
  refused_create box 'takes that only from the command line'
  run --separate-stderr lb create box --network host
  assert_success
  assert_line '  weakened:  docker.network = "host" (--network)'
  assert_equal "$(inspect "$(container_of box)" '{{.HostConfig.NetworkMode}}')" host
}

@test "review: diff, log and apply warn about files that steer sandboxes or the host; merge needs --yes off a terminal" {
  create box
  lb_ok exec box -- sh -c 'printf "[docker]\nnetwork = \"bridge\"\n" > .litterbox.toml && printf "* filter=evil\n" > sub.gitattributes && mkdir -p deep && mv sub.gitattributes deep/.gitattributes && echo ok > plain.txt' </dev/null
  warning="Warning: this branch changes files that steer sandboxes or programs on this machine; review them: .litterbox.toml (sandbox config), deep/.gitattributes (filters and diff drivers your git runs)"
  for cmd in "diff box" "log box"; do
    # shellcheck disable=SC2086
    run --separate-stderr lb $cmd
    assert_success
    assert_equal "$stderr" "$warning"
  done
  head=$(git rev-parse HEAD)
  run --separate-stderr lb merge box </dev/null
  assert_failure 1
  assert_equal "${stderr_lines[0]}" "$warning"
  assert_equal "${stderr_lines[1]}" "Error: Not merged: sandbox 'box' changes .litterbox.toml (sandbox config), deep/.gitattributes (filters and diff drivers your git runs); review them (litterbox diff box), then: litterbox merge box --yes."
  assert_equal "$(git rev-parse HEAD)" "$head"
  assert_equal "$(list_status box)" active
  run --separate-stderr lb merge box --yes </dev/null
  assert_success
  assert_equal "${stderr_lines[0]}" "$warning"
  assert_file_exists .litterbox.toml
  assert_equal "$(litterbox_names)" ""
  # The agent's config is now committed here, and still not trusted.
  run --separate-stderr lb create next
  assert_failure 1
  assert_stderr --partial "committed config is not trusted"
  git rm -q .litterbox.toml deep/.gitattributes && git commit -qm "not that"
  # apply warns too; a branch of ordinary files merges without a word.
  create applied
  lb_ok exec applied -- sh -c 'echo x > .envrc' </dev/null
  run --separate-stderr lb apply applied
  assert_success
  assert_equal "$stderr" "Warning: this branch changes files that steer sandboxes or programs on this machine; review them: .envrc (run by direnv)"
  create plain
  lb_ok exec plain -- sh -c 'echo more > plain.txt' </dev/null
  run --separate-stderr lb merge plain </dev/null
  assert_success
  assert_equal "$stderr" ""
}

@test "a file over max-file-size stays in the sandbox, the rest of the call is committed, and the result says why" {
  lb create box >/dev/null
  run --separate-stderr lb exec box -- sh -c 'head -c 60000000 /dev/zero > big.bin && echo a > a.txt'
  assert_success
  [[ $stderr == *"litterbox: not committed: big.bin (57.2 MiB) is over max-file-size (50m); it stays in the sandbox. Add it to .gitignore, or raise [snapshot] max-file-size in .litterbox.local.toml"* ]] || fail "stderr: $stderr"
  assert_equal "$(git diff --name-only HEAD litterbox/box)" "a.txt"
  assert_equal "$(lb exec box -- wc -c big.bin)" "60000000 big.bin"
  printf '[snapshot]\nmax-file-size = "100m"\n' >.litterbox.local.toml
  run --separate-stderr lb exec box -- true
  assert_success
  git ls-tree -r --name-only litterbox/box | grep -qx big.bin || fail "a raised bound did not commit big.bin"
}

@test "write over MCP enforces the limit its description states: over max-file-size it is refused with the way out, and nothing is committed" {
  lb create box >/dev/null
  tip=$(git rev-parse litterbox/box)
  printf '[snapshot]\nmax-file-size = "1k"\n' >.litterbox.local.toml
  content=$(head -c 2000 /dev/zero | tr '\0' x)
  run --separate-stderr mcpcall --repo "$REPO" --scope all write "{\"sandbox\":\"box\",\"path\":\"w.txt\",\"content\":\"$content\"}"
  assert_success
  assert_equal "$(jsonget .isError <<<"$output")" true
  assert_equal "$(jsonget .text <<<"$output")" "content is 2.0 KiB, over max-file-size (1k): the file could not be committed; a person may raise [snapshot] max-file-size in .litterbox.local.toml (write takes at most 64.0 MiB), or make the file with bash and add it to .gitignore"
  assert_equal "$(git rev-parse litterbox/box)" "$tip"
}
