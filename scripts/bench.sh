#!/usr/bin/env bash
# Runs the Go benchmarks that pair each Litterbox operation with the raw docker
# commands it is made of, several times, and writes the medians, the ratios
# and the targets into BENCHMARKS.md.
# Usage: scripts/bench.sh [benchtime] [count]   (default 3x, 3 runs; about 8 minutes)
#        scripts/bench.sh --smoke               (the everyday calls' benchmarks once; no file written)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = --smoke ]; then
  # The everyday calls on a small repository, each beside its raw floor.
  exec go test -tags integration -run '^$' -bench '^Benchmark(Raw)?(Create|CreatePooled|BashNoop|BashNoopKept|Write|WriteKept|Read|Delete|PauseResume|List50|RunEcho|InjectedHTTPS)$' \
    -benchtime 1x -count 1 ./internal/sandbox ./cmd/litterbox
fi
benchtime=${1:-3x}
count=${2:-3}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test -tags integration -run '^$' -bench . -benchtime "$benchtime" -count "$count" -timeout 60m ./internal/sandbox ./cmd/litterbox | tee "$out"

table=$(awk '
  function median(name,   n, i, j, t, v) {
    n = cnt[name]
    for (i = 1; i <= n; i++) v[i] = val[name, i]
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  /^Benchmark/ {
    name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
    val[name, ++cnt[name]] = $3
    if (!(name in seen)) { seen[name] = 1; if (name !~ /^Raw/) order[++n] = name }
    for (i = 4; i < NF; i++) if ($(i + 1) == "idle-RSS-MiB") rss[name] = $i
    for (i = 4; i < NF; i++) if ($(i + 1) == "kept-bytes") kept[name] = $i
  }
  END {
    target["BashNoop"] = 1.5; target["Write"] = 2; target["List50"] = 2; target["PauseResume"] = 2
    target["BashNoopGoSrc"] = 1.5; target["WriteGoSrc"] = 2; target["Download10MB"] = 1.2
    target["Grep38k"] = 1.5; target["GrepRegex38k"] = 1.5; target["Glob38k"] = 1.5
    target["Create"] = 1.3; target["Create10k"] = 1.3; target["CreatePooled10k"] = 1.3
    print "| operation | litterbox median (ms) | raw docker median (ms) | ratio | target |"
    print "| --- | ---: | ---: | ---: | --- |"
    for (i = 1; i <= n; i++) {
      op = order[i]
      ms = median(op) / 1e6
      if (("Raw" op) in cnt) {
        raw = median("Raw" op) / 1e6
        r = ms / raw
        t = op in target ? sprintf("<= %.1fx: %s", target[op], r <= target[op] ? "met" : "MISSED") : ""
        printf "| %s | %.1f | %.1f | %.2fx | %s |\n", op, ms, raw, r, t
      } else if (op == "Create10k" || op == "MCPStartup" || op == "BashLongTestRun") {
        continue
      }
      if (op == "SetupCached") {
        first = median("SetupFirst") / 1e6
        printf "| SetupCached (absolute; over SetupFirst) | %.0f | | %.2fx | <= 2000 ms and <= 0.2x: %s |\n", ms, ms / first, ms <= 2000 && ms / first <= 0.2 ? "met" : "MISSED"
      }
      if (op == "Fork") {
        printf "| Fork (absolute) | %.0f | | | <= 2000 ms: %s |\n", ms, ms <= 2000 ? "met" : "MISSED"
      }
      if (op == "Fork500" || op == "Fork50k") {
        printf "| %s (absolute) | %.0f | | | <= 500 ms: %s |\n", op, ms, ms <= 500 ? "met" : "MISSED"
      }
      if (op ~ /Kept/) {
        base = op; sub(/Kept/, "", base)
        raw = median("Raw" base) / 1e6
        t = op ~ /^BashNoop/ ? 0.5 : 0.8
        printf "| %s (over a kept channel; floor: Raw%s) | %.1f | %.1f | %.2fx | <= %.1fx: %s |\n", op, base, ms, raw, ms / raw, t, ms / raw <= t ? "met" : "MISSED"
      }
      if (op == "CreateAllow") {
        d = ms - median("Create") / 1e6
        printf "| CreateAllow (over Create, network none) | +%.0f | | | <= +300 ms: %s |\n", d, d <= 300 ? "met" : "MISSED"
      }
      if (op ~ /^CreateSecond/) {
        sz = substr(op, length("CreateSecond") + 1)
        raw = median("RawCreate" sz) / 1e6
        t = ""
        if (sz == "GoSrc") t = sprintf("<= 1500 ms: %s", ms <= 1500 ? "met" : "MISSED")
        if (sz == "100k") t = sprintf("<= 3000 ms: %s", ms <= 3000 ? "met" : "MISSED")
        printf "| %s (a sandbox of the commit running; floor: RawCreate%s) | %.1f | %.1f | %.2fx | %s |\n", op, sz, ms, raw, ms / raw, t
      }
      if (op == "CreatePooled" || op == "CreatePooledBeside8") {
        printf "| %s (absolute) | %.0f | | | <= 300 ms: %s |\n", op, ms, ms <= 300 ? "met" : "MISSED"
      }
      if (op == "SetupCachedPooled") {
        printf "| SetupCachedPooled (absolute) | %.0f | | | <= 500 ms: %s |\n", ms, ms <= 500 ? "met" : "MISSED"
      }
      if (op == "Change1000GoSrc") {
        printf "| Change1000GoSrc (over the raw command) | +%.0f | | | <= +300 ms: %s |\n", ms - raw, ms - raw <= 300 ? "met" : "MISSED"
      }
      if (op == "MoveDirGoSrc") {
        printf "| MoveDirGoSrc (over the raw command) | +%.0f | | | <= +500 ms: %s |\n", ms - raw, ms - raw <= 500 ? "met" : "MISSED"
      }
      if (op == "FirstCallAfterRestartGoSrc") {
        printf "| FirstCallAfterRestartGoSrc (absolute) | %.0f | | | <= 2000 ms: %s |\n", ms, ms <= 2000 ? "met" : "MISSED"
      }
    }
    c = median("Create10k") / 1e6
    printf "| Create10k (absolute) | %.0f | | | < 3000 ms: %s |\n", c, c < 3000 ? "met" : "MISSED"
    printf "| MCPStartup (start to initialize + tools/list) | %.1f | | | |\n", median("MCPStartup") / 1e6
    printf "| MCP server idle RSS | %.1f MiB | | | < 30 MiB: %s |\n", rss["MCPStartup"], rss["MCPStartup"] < 30 ? "met" : "MISSED"
    printf "| BashLongTestRun: what the result keeps of 2,217,809 bytes | %d bytes | | | 32 KiB and the marker, the summary line kept |\n", kept["BashLongTestRun"]
  }' "$out")

cpu=$(awk -F': ' '/^cpu:/ {print $2; exit}' "$out")
engine=$(docker version --format '{{.Server.Version}}')
{
  echo "# Benchmarks"
  echo
  echo "Each operation next to the raw docker (and git) commands it is made of, run"
  echo "side by side in one \`make bench\` run: \`go test -bench\`, benchtime $benchtime,"
  echo "$count runs; the table shows the median of the runs' means."
  echo
  echo "Machine: $(nproc) cores ($cpu), $(free -g | awk '/^Mem:/ {print $2}') GiB, Docker engine $engine, $(go version | cut -d' ' -f3)."
  echo "Measured $(date -u +%Y-%m-%d)."
  echo
  echo "$table"
  echo
  cat scripts/bench-notes.md
} > BENCHMARKS.md
echo
cat BENCHMARKS.md
