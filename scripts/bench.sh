#!/usr/bin/env bash
# Runs the Go benchmarks that pair each Litterbox operation with the raw docker
# commands it is made of, and writes the ratios into BENCHMARKS.md.
# Usage: scripts/bench.sh [benchtime]   (default 10x)
set -euo pipefail
cd "$(dirname "$0")/.."

benchtime=${1:-10x}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test -tags integration -run '^$' -bench . -benchtime "$benchtime" -count 1 ./sandbox | tee "$out"

table=$(awk '
  /^Benchmark/ {
    name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
    ns[name] = $3
    if (name !~ /^Raw/) order[++n] = name
  }
  END {
    print "| operation | litterbox (ms) | raw docker floor (ms) | ratio |"
    print "| --- | ---: | ---: | ---: |"
    for (i = 1; i <= n; i++) {
      op = order[i]; raw = ns["Raw" op]
      if (raw == "") continue
      printf "| %s | %.1f | %.1f | %.2fx |\n", op, ns[op] / 1e6, raw / 1e6, ns[op] / raw
    }
  }' "$out")

cpu=$(awk -F': ' '/^cpu:/ {print $2}' "$out")
engine=$(docker version --format '{{.Server.Version}}')
{
  echo "# Benchmarks"
  echo
  echo "Each operation next to the raw docker (and git) commands it is made of, run"
  echo "side by side in one \`make bench\` run (\`go test -bench\`, benchtime $benchtime, mean per op)."
  echo
  echo "Machine: $(nproc) cores ($cpu), $(free -g | awk '/^Mem:/ {print $2}') GiB, Docker engine $engine, $(go version | cut -d' ' -f3)."
  echo "Measured $(date -u +%Y-%m-%d)."
  echo
  echo "$table"
  echo
  echo "- Create: branch (git update-ref), docker run -d, docker exec (open /src to the"
  echo "  sandbox user), git archive | chown | docker cp -, docker exec of the setup command."
  echo "  The raw floor runs the same four docker commands without Litterbox's git and state work."
  echo "- PauseResume: one docker pause plus one docker unpause."
  echo "- List20: one docker ps for 20 sandboxes, plus git for-each-ref and the state files."
  echo "- Delete: docker inspect (refuse a running sandbox without --force), docker rm -f,"
  echo "  docker volume rm, git update-ref -d; the floor is rm -f plus volume rm."
  echo "- BashNoop: the bash tool running \`true\` (one docker exec that runs the command and"
  echo "  scans /src for changes; no git call when nothing changed); the floor is a raw"
  echo "  \`docker exec --user 1000:1000 C sh -c true\`."
  echo "- Write: the write tool (one docker exec that writes, scans and returns the file, then"
  echo "  git hash-object, update-index, write-tree, commit-tree, update-ref); the floor is a"
  echo "  raw \`docker exec -i C sh -c 'cat > /src/written.txt'\`."
  echo "- ...10k: the same on a generated repository of 10,000 files in 100 directories."
  echo
  echo "## Why the 10,000-file figures miss their target here"
  echo
  echo "A call's cost above the raw exec is the scan of /src (one lstat per entry). On these"
  echo "machines lstat is ten times slower for a non-root uid than for root: \`find\` over the"
  echo "same 10,105-entry volume takes 10 ms on the host, 20 ms in a container as uid 0 (all"
  echo "capabilities dropped) and 200 ms as uid 1000 (strace: newfstatat ~20 us a call), so the"
  echo "scan as the sandbox user, which also runs stat(1) over every entry, costs ~0.6 s."
  echo "What would reach <= 2.5x: scanning as uid 0 in a second exec after the command (root"
  echo "needs no capability to lstat, but cannot read 0700 directories of the sandbox user),"
  echo "or a static scanner binary that walks with getdents/fstatat once per entry instead of"
  echo "busybox find plus stat."
} > BENCHMARKS.md
echo
cat BENCHMARKS.md
