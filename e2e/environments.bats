#!/usr/bin/env bats
# From a project to a ready sandbox: an image built from the project's
# Dockerfile, devcontainer.json, the setup cache and fork, through the CLI.

# shellcheck disable=SC2154,SC2030,SC2031 # bats sets status/output/lines/stderr; each test is a subshell
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers; }
setup() { common_setup; }
teardown() { common_teardown; }

@test "build: create builds the project's Dockerfile once, says so in one line off a terminal, and a failed build makes nothing and shows the build's tail" {
  mkdir -p docker
  printf 'FROM busybox:latest\nCOPY hello.txt /opt/hello\n' >docker/Dockerfile
  printf 'from the image\n' >docker/hello.txt
  git add docker && git commit -qm docker
  printf '[docker]\nbuild = "docker/Dockerfile"\ncontext = "docker"\n' >.litterbox.local.toml
  run --separate-stderr lb create one
  assert_success
  assert_line --regexp "^  image:     litterbox/$REPO_SLUG-[0-9a-f]+:[0-9a-f]{16} \(built from docker/Dockerfile\)$"
  [[ $stderr != *Step* && $stderr != *COPY* ]] || fail "build output reached a non-terminal stderr: $stderr"
  run lb exec one -- cat /opt/hello
  assert_output "from the image"
  # doctor checks the project image, not the default one.
  run lb doctor
  assert_success
  assert_line --regexp "^ok +image +litterbox/$REPO_SLUG-[0-9a-f]+:[0-9a-f]{16} \(linux/[a-z0-9]+\), built from docker/Dockerfile$"
  run lb create two
  assert_line --regexp "^  image:     .* \(unchanged, not rebuilt from docker/Dockerfile\)$"
  # On a terminal the build's own output shows, then the step's timing.
  # The build reads the commit: an uncommitted change is not built.
  printf 'rebuilt\n' >docker/hello.txt
  run lb create uncommitted
  assert_line --regexp "^  image:     .* \(unchanged, not rebuilt from docker/Dockerfile\)$"
  git commit -qam rebuilt
  # shellcheck disable=SC2016 # $0 is for the inner sh
  run on_tty sh -c '"$0" create tty >/dev/null' "$LITTERBOX"
  assert_success
  assert_line --partial "COPY hello.txt /opt/hello"
  assert_line --regexp "^  build docker/Dockerfile of [0-9a-f]+ as litterbox/$REPO_SLUG-[0-9a-f]+:[0-9a-f]{16} +[0-9.]+(ms|s)$"

  printf 'FROM busybox:latest\nRUN echo step-that-fails && exit 7\n' >docker/Dockerfile
  git commit -qam fails
  run --separate-stderr lb create three
  assert_failure 1
  assert_output ""
  [[ ${stderr_lines[0]} == "Error: Building docker/Dockerfile failed: the build exited with code 7; the end of its log:" ]] || fail "first line: ${stderr_lines[0]}"
  [[ $stderr == *step-that-fails* ]] || fail "the build's tail is missing: $stderr"
  branch_exists litterbox/three && fail "a failed build made a branch"
  printf '[docker]\nbuild = "nope/Dockerfile"\n' >.litterbox.local.toml
  run --separate-stderr lb create four
  assert_failure 1
  assert_stderr --regexp "^Error: \[docker\] build: no Dockerfile at nope/Dockerfile in commit [0-9a-f]+; the build reads only committed files: commit it first\.?$"
}

@test "cache: the second create takes the setup's result from the cache; ls, rm and prune show and remove entries, but not one a sandbox lies over; bad usage exits 2" {
  printf '[docker]\nsetup-command = "mkdir -p ignored && date +%%s%%N > ignored/stamp"\n[setup]\ninputs = ["README.md"]\n' >.litterbox.toml
  git add .litterbox.toml && git commit -qm setup
  run lb create first
  assert_success
  assert_line --regexp '^  cache:     kept as [0-9a-f]{12} \(1 files, [0-9]+ B\): the next create with this key skips the setup$'
  key=$(printf '%s\n' "$output" | sed -n 's/^  cache:     kept as \([0-9a-f]*\).*/\1/p')
  run lb create second
  assert_success
  assert_line --regexp "^  setup:     .* \(from the setup cache $key: 1 files, [0-9]+ B, made by 'first'; not run\)$"
  assert_equal "$(lb exec second -- cat ignored/stamp)" "$(lb exec first -- cat ignored/stamp)"

  run lb cache ls
  assert_success
  assert_line --index 0 --regexp '^KEY +SIZE +FILES +HITS +AGE +FROM +UNDER +SETUP$'
  # second's /src lies over the entry first made.
  assert_line --index 1 --regexp "^$key +[0-9]+ B +1 +1 +[0-9]+s +first +second +mkdir -p ignored"
  assert_equal "$(lb cache ls --json | jsonget '.0.key' | cut -c1-12)" "$key"
  assert_equal "$(lb cache ls --json | jsonget '.0.lies_under.0')" second

  # delete never takes a cache entry with it.
  lb_ok delete --force first >/dev/null
  assert_equal "$(lb cache ls --json | jsonget '.#')" 1
  # A changed input: a new entry; prune then drops the one HEAD no longer uses.
  commit_file README.md "changed"
  create third
  assert_equal "$(lb cache ls --json | jsonget '.#')" 2
  # second's /src lies over the first entry: prune passes it by, rm
  # refuses it, until second is deleted.
  run lb cache prune
  assert_success
  assert_output "Kept setup cache $key: the /src of sandbox 'second' lies over it."
  run --separate-stderr lb cache rm "$key"
  assert_failure 1
  assert_stderr "Error: Setup cache entry $key lies under the /src of sandbox 'second': remove it once they are deleted (litterbox delete)"
  lb_ok delete --force second >/dev/null
  run lb cache prune
  assert_success
  assert_line --index 0 --regexp "^Removed setup cache $key \(litterbox-$REPO_SLUG-[0-9a-f]+\.cache-[0-9a-f]{16}, [0-9]+ B\)\.$"
  run lb cache rm "$(lb cache ls --json | jsonget '.0.key' | cut -c1-6)"
  assert_success
  assert_output --partial "Removed setup cache"
  # The sandboxes' base trees are listed after it.
  assert_equal "$(lb cache ls | head -n 1)" "No setup cache entries."

  run --separate-stderr lb cache rm abcdef
  assert_failure 1
  assert_stderr "Error: No setup cache entry has a key starting with \"abcdef\"; \`litterbox cache ls\` lists them."
  for args in "cache" "cache rm" "cache ls extra" "cache frob"; do
    # shellcheck disable=SC2086
    run lb $args
    assert_failure 2
  done
}

@test "cache --all-repos: ls finds every repository's entries, list --all-repos totals them, prune --all-repos removes those of a removed repository only" {
  printf '[docker]\nsetup-command = "mkdir -p ignored && echo mine > ignored/f"\n' >.litterbox.local.toml
  create mine
  make_repo
  other=$MADE_REPO
  (cd "$other" && printf '[docker]\nsetup-command = "mkdir -p ignored && echo theirs > ignored/f"\n' >.litterbox.local.toml && create theirs && lb_ok delete --force theirs >/dev/null)
  vol=$(cd "$other" && lb_ok cache ls --json | jsonget '.0.volume')
  run lb cache ls --all-repos
  assert_success
  assert_line --regexp '^REPO +KEY +SIZE +FILES +HITS +AGE$'
  assert_line --regexp "^$REPO +[0-9a-f]{12} +[0-9]+ B +1 +0 +[0-9]+s$"
  assert_line --regexp "^$other +[0-9a-f]{12} +[0-9]+ B +1 +0 +[0-9]+s$"

  rm -rf "$other"
  run lb cache ls --all-repos
  assert_line --regexp "^$other \(gone\) +[0-9a-f]{12} +- +- +- +-$"
  json=$(lb_ok cache ls --all-repos --json)
  i=$(jsonget '.*.volume' <<<"$json" | grep -nxF "$vol" | cut -d: -f1)
  assert_equal "$(jsonget ".$((i - 1)).repo_gone" ".$((i - 1)).known" <<<"$json")" "$(printf 'true\nfalse')"
  run lb list --all-repos
  assert_success
  assert_line --regexp '^Setup cache: [0-9]+ entr(y|ies), [0-9.]+ [KMG]?i?B and [0-9]+ of unknown size; [0-9]+ of repositories that are gone \(litterbox cache prune --all-repos removes them\)\.$'
  run lb cache prune --all-repos
  assert_success
  assert_line "Removed setup cache $vol of $other (gone)."
  # theirs's base tree, kept for a next sandbox that will never come.
  assert_line --regexp "^Removed base tree litterbox-[a-z0-9-]+\.base-[0-9a-f]{16} \(its repository is gone\)\.$"
  run "$RUNTIME" volume inspect "$vol"
  assert_failure
  # This repository's entry stays, and the tree mine lies over.
  assert_equal "$(lb cache ls --json | jsonget '.#')" 1
  run "$RUNTIME" volume ls -q --filter label=dev.litterbox.managed=base --filter "label=dev.litterbox.repo=$REPO"
  assert_output --regexp "^litterbox-[a-z0-9-]+\.base-[0-9a-f]{16}$"
  run --separate-stderr lb cache rm abcd --all-repos
  assert_failure 2
}

@test "fork: NEW starts at SRC's tip with SRC's files, ignored ones included; SRC keeps running; bad usage exits 2" {
  create src
  lb_ok exec src -- sh -c 'echo work > work.txt && mkdir -p ignored && echo built > ignored/out' >/dev/null
  run lb fork src copy
  assert_success
  assert_line "  forked:    from 'src' (its files and image busybox:latest; no setup)"
  assert_equal "$(git rev-parse litterbox/copy)" "$(git rev-parse litterbox/src)"
  run lb exec copy -- cat work.txt ignored/out
  assert_output "work
built"
  assert_equal "$(state_of "$(container_of src)")" running
  run --separate-stderr lb fork src copy
  assert_failure 1
  [[ $stderr == "Error: "*"copy"*"exists"* ]] || fail "fork onto an existing name: $stderr"
  run lb fork src
  assert_failure 2
}

@test "devcontainer.json: read without .litterbox.toml; what Litterbox does not do is named; invalid JSONC fails in one line" {
  mkdir -p .devcontainer
  cat >.devcontainer/devcontainer.json <<'JSON'
{
  // comments and trailing commas, as VS Code writes it
  "image": "busybox:latest",
  "containerEnv": {"GREETING": "hello"},
  "postCreateCommand": "mkdir -p ignored && echo $GREETING > ignored/made",
  "mounts": ["source=/,target=/host,type=bind"],
  "initializeCommand": "rm -rf ~",
}
JSON
  git add .devcontainer && git commit -qm devcontainer
  run lb create dev
  assert_success
  assert_line "  config:    .devcontainer/devcontainer.json"
  assert_line "  ignored:   .devcontainer/devcontainer.json: initializeCommand: never run (it would run on the host)"
  assert_line "  ignored:   .devcontainer/devcontainer.json: mounts: not supported"
  run lb exec dev -- cat ignored/made
  assert_output hello

  printf '{\n  "image": "busybox:latest",\n  nope\n}\n' >.devcontainer/devcontainer.json
  run --separate-stderr lb create bad
  assert_failure 1
  [ "${#stderr_lines[@]}" -eq 1 ] || fail "want one line: $stderr"
  [[ $stderr == "Error: .devcontainer/devcontainer.json: line 3"* ]] || fail "got: $stderr"
}

@test "base trees: sandboxes of one commit share one tree, create says so, cache ls shows who uses it, and prune removes it once unused" {
  run lb create one
  assert_success
  assert_line --regexp "^  storage:   its own layer over the files of [0-9a-f]{12}, shared with its other sandboxes \(litterbox-$REPO_SLUG-[0-9a-f]+\.base-[0-9a-f]{16}\)$"
  run lb create two
  assert_success
  run lb exec one -- sh -c 'echo mine > README.md'
  assert_success
  run lb exec two -- cat README.md
  refute_output "mine"
  run lb cache ls
  assert_success
  assert_line "Base trees (shared by the sandboxes of a commit, copy on write):"
  assert_line --regexp "^[0-9a-f]{12} +[0-9]+s +one, two +litterbox-$REPO_SLUG-[0-9a-f]+\.base-[0-9a-f]{16}$"
  lb delete -f one >/dev/null
  lb delete -f two >/dev/null
  # Kept for the next sandbox of the commit, and used by none.
  run lb cache ls
  assert_line --regexp "^[0-9a-f]{12} +[0-9]+s +- +litterbox-$REPO_SLUG-[0-9a-f]+\.base-[0-9a-f]{16}$"
  run lb cache prune
  assert_success
  assert_line --regexp "^Removed base tree litterbox-$REPO_SLUG-[0-9a-f]+\.base-[0-9a-f]{16}\.$"
  run "$RUNTIME" volume ls -q --filter "name=^litterbox-$REPO_SLUG-"
  assert_output ""
  run lb cache ls
  assert_output "No setup cache entries."
}
