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
} > BENCHMARKS.md
echo
cat BENCHMARKS.md
