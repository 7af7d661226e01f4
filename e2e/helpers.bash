# Shared helpers for Litterbox's end-to-end tests. They drive the built binary
# ($LITTERBOX) against the real Docker engine and real git repositories.
#
# Every test makes its own repositories (make_repo) with a random, lowercase
# basename (lbe2e-<hex>), so names never collide with a concurrent run, and
# teardown removes everything those repositories own: containers (by label and
# by name prefix), volumes (by name prefix) and the temporary directories.
#
# shellcheck shell=bash
# shellcheck disable=SC2154 # status, output, lines and BATS_* come from bats

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load '/usr/lib/bats/bats-file/load'

LITTERBOX=${LITTERBOX:-"$BATS_TEST_DIRNAME/../bin/litterbox"}
RUNTIME=${LITTERBOX_RUNTIME:-docker}
# LITTERBOX_E2E_ISOLATION=gvisor runs every sandbox of the suite under gVisor
# (make e2e-gvisor): the user's config asks for it, as a user's would.
ISOLATION=${LITTERBOX_E2E_ISOLATION:-}
export LITTERBOX

# Repositories made by this test; teardown cleans up after each.
REPOS=()
REPO_SLUGS=()
TEST_DIRS=()

# tmux runs tmux on a server of this test's own, its socket in the test's
# temp dir (which bats removes), so that the server starts with this
# test's environment. On the shared default server a new session gets the
# environment of whoever started that server, another suite beside this
# one perhaps (another runtime, another PATH), and litterbox in the pane
# then looks for its sandbox on the wrong engine.
tmux() { command tmux -S "$BATS_TEST_TMPDIR/tmux.sock" "$@"; }

# ---------------------------------------------------------------------------
# Setup and teardown

# common_setup isolates git from the user's configuration and makes $REPO, the
# test's first repository, the working directory.
common_setup() {
  [ -x "$LITTERBOX" ] || {
    echo "litterbox binary not found at $LITTERBOX: run make build (or set LITTERBOX)" >&2
    return 1
  }
  # litterbox is on PATH by that name, as make install leaves it: the
  # entries mcp-config writes run it so.
  mkdir -p "$BATS_TEST_TMPDIR/on-path"
  ln -sf "$(readlink -f "$LITTERBOX")" "$BATS_TEST_TMPDIR/on-path/litterbox"
  export PATH="$BATS_TEST_TMPDIR/on-path:$PATH"
  # Nobody's own litterbox config reaches a test.
  export XDG_CONFIG_HOME="$BATS_TEST_TMPDIR/xdg"
  export GIT_CONFIG_NOSYSTEM=1
  export GIT_CONFIG_GLOBAL="$BATS_TEST_TMPDIR/gitconfig"
  printf '[user]\n\tname = Litterbox E2E\n\temail = e2e@litterbox.invalid\n[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n' >"$GIT_CONFIG_GLOBAL"
  if [ -n "$ISOLATION" ]; then
    mkdir -p "$XDG_CONFIG_HOME/litterbox"
    printf '[docker]\nisolation = "%s"\n' "$ISOLATION" >"$XDG_CONFIG_HOME/litterbox/config.toml"
    # Podman passes runsc its flags itself (docs/security.md).
    if [ "$RUNTIME" = podman ]; then
      printf 'gvisor-flags = ["network=none", "host-uds=open"]\n' >>"$XDG_CONFIG_HOME/litterbox/config.toml"
    fi
  fi
  # shellcheck disable=SC2119 # no arguments: the default basename
  make_repo
  REPO=$MADE_REPO
  REPO_SLUG=$MADE_SLUG
  cd "$REPO" || return 1
}

common_teardown() {
  cd / || true
  local i slug repo
  for i in "${!REPOS[@]}"; do
    repo=${REPOS[$i]}
    slug=${REPO_SLUGS[$i]}
    # A warm pool's refill a create started ends before its repository's
    # boxes are removed, or it would make one after.
    if [ -e "$repo/.git/litterbox/pool/fill.lock" ]; then
      timeout 60 flock "$repo/.git/litterbox/pool/fill.lock" true || true
    fi
    remove_containers "$repo" "$slug"
    remove_volumes "$slug" "$repo"
    remove_images "$slug"
  done
  # What a repository made in a subshell, or one a test removed, left:
  # every volume labelled with a repository under this test's directory
  # (base trees outlive their sandboxes on purpose).
  remove_volumes "-no-slug-" "$(cd "$BATS_TEST_TMPDIR" && pwd -P)/"
  for i in "${TEST_DIRS[@]}"; do
    rm -rf "$i"
  done
}

# remove_k8s_objects PREFIX deletes the cluster objects (pods, records,
# policies, claims) whose names start with PREFIX.
remove_k8s_objects() {
  local objs
  objs=$(kubectl get pods,configmaps,networkpolicies,persistentvolumeclaims --output name 2>/dev/null |
    awk -v p="$1" '{ n = $0; sub(/^[^\/]*\//, "", n) } index(n, p) == 1')
  if [ -n "$objs" ]; then
    # shellcheck disable=SC2086 # one object per word
    kubectl delete --ignore-not-found --wait=true $objs >/dev/null 2>&1 || true
  fi
}

# label_format KEY is the --format of a listing's label KEY on this
# engine: Docker has .Label, Podman's labels are a map.
label_format() {
  if [ "$RUNTIME" = podman ]; then
    printf '{{index .Labels "%s"}}' "$1"
  else
    printf '{{.Label "%s"}}' "$1"
  fi
}

# remove_containers REPO SLUG removes the containers labelled with REPO or
# named for SLUG, from one listing of the engine's.
remove_containers() {
  local repo=$1 slug=$2 ids
  if [ "$RUNTIME" = kubernetes ]; then
    remove_k8s_objects "litterbox-$slug-"
    return
  fi
  ids=$("$RUNTIME" ps -a --format "{{.ID}}	{{.Names}}	$(label_format dev.litterbox.repo)" |
    P="litterbox-$slug-" R=$repo awk -F '\t' 'index($2, ENVIRON["P"]) == 1 || $3 == ENVIRON["R"] { print $1 }')
  if [ -n "$ids" ]; then
    # shellcheck disable=SC2086 # one id per word
    "$RUNTIME" rm -f -v $ids >/dev/null 2>&1 || true
  fi
}

# remove_images SLUG removes the project images built for the repository.
remove_images() {
  local imgs
  [ "$RUNTIME" != kubernetes ] || return 0
  imgs=$("$RUNTIME" images --format '{{.Repository}}:{{.Tag}}' --filter "reference=litterbox/$1-*" 2>/dev/null)
  if [ -n "$imgs" ]; then
    # shellcheck disable=SC2086
    "$RUNTIME" rmi -f $imgs >/dev/null 2>&1 || true
  fi
}

# remove_volumes SLUG REPO removes the volumes labelled with REPO or named
# for SLUG, from one listing of the engine's; a REPO ending in / is a
# directory, and every repository under it counts.
remove_volumes() {
  local slug=$1 repo=$2 vols
  [ "$RUNTIME" != kubernetes ] || return 0 # claims go with remove_containers
  vols=$("$RUNTIME" volume ls --format "{{.Name}}	$(label_format dev.litterbox.repo)" |
    P="litterbox-$slug-" R=$repo awk -F '\t' 'index($1, ENVIRON["P"]) == 1 || $2 == ENVIRON["R"] || (substr(ENVIRON["R"], length(ENVIRON["R"])) == "/" && index($2, ENVIRON["R"]) == 1) { print $1 }')
  if [ -n "$vols" ]; then
    # shellcheck disable=SC2086
    "$RUNTIME" volume rm -f $vols >/dev/null 2>&1 || true
  fi
}

# ---------------------------------------------------------------------------
# Repositories

rand_hex() { od -An -N5 -tx1 /dev/urandom | tr -d ' \n'; }

# slugify mirrors the product's rule (package slug): lowercase, every run of
# characters outside [a-z0-9] becomes one "-", trimmed at both ends.
slugify() {
  printf '%s' "$1" | tr '[:upper:]' '[:lower:]' | sed -E 's/[^a-z0-9]+/-/g; s/^-+//; s/-+$//'
}

# make_repo [BASENAME [SUBDIR]] creates a git repository with one commit and
# sets MADE_REPO (its physical absolute path) and MADE_SLUG (its repo slug).
# The basename defaults to lbe2e-<random hex>; one given must be unique too.
# SUBDIR is an extra directory level above the repository.
# shellcheck disable=SC2120 # the arguments are optional
make_repo() {
  local base=${1:-lbe2e-$(rand_hex)}
  local parent
  parent=$(mktemp -d "$BATS_TEST_TMPDIR/r.XXXXXX")
  TEST_DIRS+=("$parent")
  mkdir -p "$parent/${2:-.}/$base"
  MADE_REPO=$(cd "$parent/${2:-.}/$base" && pwd -P)
  MADE_SLUG=$(slugify "$base")
  REPOS+=("$MADE_REPO")
  REPO_SLUGS+=("$MADE_SLUG")
  (
    cd "$MADE_REPO" || exit 1
    git init -q
    printf '# demo\n' >README.md
    mkdir -p src/deep/er
    printf 'package main\n\nfunc main() {}\n' >src/main.go
    printf 'nested\n' >src/deep/er/file.txt
    printf '#!/bin/sh\necho run\n' >run.sh
    chmod +x run.sh
    printf 'with space\n' >'name with space.txt'
    ln -s src/main.go link-to-main
    printf 'ignored/\n*.log\n' >.gitignore
    git add -A
    git commit -qm "initial commit"
  ) || return 1
}

# commit_file PATH CONTENT commits a change in the current repository.
commit_file() {
  mkdir -p "$(dirname "$1")"
  printf '%s\n' "$2" >"$1"
  git add -- "$1"
  git commit -qm "change $1"
}

# ---------------------------------------------------------------------------
# Running litterbox and friends

# Every litterbox run is bounded, so a hang fails its test instead of the
# suite: SIGTERM after $LB_TIMEOUT seconds, SIGKILL 5 s later (exit 124/137).
LB_TIMEOUT=${LB_TIMEOUT:-120}

# lb ARGS... runs the binary; use as `run lb ...` or `run --separate-stderr lb ...`.
lb() { timeout -k 5 "$LB_TIMEOUT" "$LITTERBOX" "$@"; }

# lb_ok ARGS... runs the binary and fails the test, with its output, unless it
# succeeds. Its stdout is printed.
lb_ok() {
  local out err rc=0
  out=$(mktemp "$BATS_TEST_TMPDIR/out.XXXXXX")
  err=$(mktemp "$BATS_TEST_TMPDIR/err.XXXXXX")
  lb "$@" >"$out" 2>"$err" || rc=$?
  if [ "$rc" -ne 0 ]; then
    {
      echo "litterbox $* exited with $rc"
      echo "--- stdout"; cat "$out"
      echo "--- stderr"; cat "$err"
    } >&2
    return 1
  fi
  cat "$out"
}

# on_tty CMD... runs CMD on a pseudo-terminal (script) and prints what the
# terminal showed, without the carriage returns; it exits with CMD's status.
on_tty() {
  local cmd
  cmd=$(printf '%q ' "$@")
  # Without CI, as on a person's terminal: libraries that query the
  # terminal skip it when CI is set, which would hide their queries here.
  env -u CI timeout -k 5 60 script -qec "$cmd" /dev/null | tr -d '\r'
  return "${PIPESTATUS[0]}"
}

# create NAME [ARGS...] creates a sandbox in the current repository (quietly).
create() { lb_ok create -q "$@" >/dev/null; }

# not_found NAME [EXISTING...] prints the error for an unknown sandbox NAME
# in a repository with the sandboxes EXISTING (sorted).
not_found() {
  local name=$1
  shift
  if [ $# -eq 0 ]; then
    echo "Error: Sandbox '$name' not found: this repository has no sandboxes (create one with litterbox create NAME, or sandbox-create over MCP)"
  else
    local IFS=, list
    list="$*"
    echo "Error: Sandbox '$name' not found: this repository has ${list//,/, }."
  fi
}

# repo_id [REPO] prints the id litterbox gave the repository (made by the
# first litterbox command run in it).
repo_id() { jsonget .id <"${1:-$REPO}/.git/litterbox/repo-id.json" 2>/dev/null || echo no-id; }

# container_of NAME [REPO_SLUG [REPO]] prints the container name for sandbox
# slug NAME of REPO (default $REPO, whose slug is $REPO_SLUG).
container_of() { printf 'litterbox-%s-%s-%s' "${2:-$REPO_SLUG}" "$(repo_id "${3:-$REPO}")" "$1"; }
volume_of() { printf '%s-src' "$(container_of "$@")"; }

# state_of CONTAINER prints the engine's state: running, paused, exited, ...
# On Kubernetes a sandbox's container is its record (a ConfigMap) and its pod:
# running with a running pod, exited with none.
state_of() {
  if [ "$RUNTIME" = kubernetes ]; then
    local phase
    kubectl get configmap "$1" >/dev/null || return 1
    phase=$(kubectl get pod "$1" --ignore-not-found --output 'jsonpath={.status.phase}')
    case $phase in
      Running) echo running ;;
      Pending) echo created ;;
      *) echo exited ;;
    esac
    return
  fi
  "$RUNTIME" inspect --type container --format '{{.State.Status}}' "$1"
}

# inspect CONTAINER FORMAT
inspect() { "$RUNTIME" inspect --type container --format "$2" "$1"; }

container_exists() {
  if [ "$RUNTIME" = kubernetes ]; then
    kubectl get configmap "$1" >/dev/null 2>&1
    return
  fi
  "$RUNTIME" inspect --type container "$1" >/dev/null 2>&1
}
volume_exists() {
  if [ "$RUNTIME" = kubernetes ]; then
    kubectl get persistentvolumeclaim "$1" >/dev/null 2>&1
    return
  fi
  "$RUNTIME" volume inspect "$1" >/dev/null 2>&1
}

# engine_exec CONTAINER CMD... runs CMD in a sandbox's container straight
# through the engine (docker exec; kubectl exec, as the pod's user, on a
# cluster), for checks.
engine_exec() {
  local c=$1
  shift
  if [ "$RUNTIME" = kubernetes ]; then
    kubectl exec "$c" --container sandbox -- "$@"
    return
  fi
  "$RUNTIME" exec "$c" "$@"
}
branch_exists() { git -C "${2:-$REPO}" show-ref --verify --quiet "refs/heads/$1"; }

# in_box NAME CMD... runs CMD in the sandbox as root-less sandbox user, through
# docker exec directly (not through litterbox), for checks.
in_box() {
  local c
  c=$(container_of "$1")
  shift
  if [ "$RUNTIME" = kubernetes ]; then
    # kubectl exec has no --workdir; the pod runs as 1000:1000.
    # shellcheck disable=SC2016 # expanded by the sandbox's sh
    kubectl exec "$c" --container sandbox -- sh -c 'cd /src && exec "$@"' sh "$@"
    return
  fi
  "$RUNTIME" exec --user 1000:1000 --workdir /src "$c" "$@"
}

# refute_hang: the last `run lb ...` ended by itself, not killed by the
# LB_TIMEOUT guard (timeout exits 124, or 137 after SIGKILL).
refute_hang() {
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    fail "litterbox hung: killed after ${LB_TIMEOUT}s (exit $status)"
  fi
}

# eventually CMD... retries CMD for up to 5 seconds until it succeeds.
eventually() {
  local i
  for ((i = 0; i < 50; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  "$@"
}

# list_status NAME [ARGS...] prints NAME's status from `litterbox list --json`
# (nothing when it is not listed).
list_status() {
  local name=$1 json
  shift
  json=$(lb_ok list --json "$@") || return 1
  printf '%s' "$json" | jsonget ".[name=$name].status"
}

# litterbox_names prints the names from `litterbox list --json` (this repo).
litterbox_names() { lb_ok list --json "$@" | jsonget '.*.name'; }

# ---------------------------------------------------------------------------
# Helper programs (Go, built once per file into $BATS_FILE_TMPDIR)

# build_helpers builds jsonget (and mcpcall when asked) from e2e/.
build_helpers() {
  local root
  root=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
  (cd "$root" && go build -o "$BATS_FILE_TMPDIR/jsonget" ./e2e/jsonget) || return 1
  if [ "${1:-}" = mcpcall ]; then
    (cd "$root" && go build -o "$BATS_FILE_TMPDIR/mcpcall" ./e2e/mcpcall) || return 1
  fi
}

jsonget() { "$BATS_FILE_TMPDIR/jsonget" "$@"; }
# mcpcall [--client mcp-go|sdk] [--repo DIR] [--parallel] TOOL ARGS_JSON...: see e2e/mcpcall.
mcpcall() { timeout -k 5 "$LB_TIMEOUT" "$BATS_FILE_TMPDIR/mcpcall" "$@"; }

# log_commands FILE prints the commands logged by -v in FILE: each entry
# `$ LINE  # exit N, D ms[; note]`, continued on lines that start with "> "
# when the command spans lines, without its prompt and comment. An entry
# that spans lines is printed with its newlines escaped as "\n", so there
# is one command per output line. (README: sed -n 's/^[$>] //p' is the
# one-liner that turns a log into a script.)
log_commands() {
  local line entry="" open=0
  while IFS= read -r line; do
    if [[ $line == '$ '* ]]; then
      entry=${line#'$ '}
      open=1
    elif ((open)) && [[ $line == '> '* ]]; then
      entry+=$'\n'${line#'> '}
    else
      open=0
      continue
    fi
    if [[ $entry =~ \ \ \#\ exit\ -?[0-9]+,\ [0-9]+\ ms(\;\ .*)?$ ]]; then
      entry=${entry%"${BASH_REMATCH[0]}"}
      printf '%s\n' "${entry//$'\n'/\\n}"
      open=0
    fi
  done <"$1"
}

# assert_stderr ARGS... is assert_output for the stderr of `run --separate-stderr`.
assert_stderr() { output=$stderr assert_output "$@"; }
refute_stderr() { output=$stderr refute_output "$@"; }
