#!/usr/bin/env bash
# Runs go test -v with the given arguments and prints what a CI log needs:
# on success, each test and two levels of subtests with their times (so
# the log says where the minutes went); on failure, what each failed test
# printed (its last 60 lines: where a log's excerpt finds them), then
# everything, then the failed tests again at the end, where a log's tail
# shows them. Tests still running when go test's -timeout ended it count
# as failed.
# Usage: scripts/gotest.sh GO-TEST-ARG...
set -uo pipefail
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test -v "$@" >"$out" 2>&1
rc=$?
if [ $rc = 0 ]; then
  grep -E '^( {0,8}--- |ok |FAIL|PASS$)' "$out"
  exit 0
fi
# A line belongs to the test named by the last === RUN, CONT or NAME
# line; a failed test is a leaf when no failed subtest is under it.
awk '
  /^=== (RUN|CONT|NAME) / { cur = $3; next }
  /^=== PAUSE / { next }
  # After a timeout go test names the tests still running: failed too.
  /^\trunning tests:/ { running = 1; next }
  running && /^\t\t/ {
    if (!($1 in failed)) { failed[$1] = 1; order[++nf] = $1 }
    next
  }
  { running = 0 }
  /^ *--- (PASS|FAIL|SKIP): / {
    if ($2 == "FAIL:" && !($3 in failed)) { failed[$3] = 1; order[++nf] = $3 }
    next
  }
  cur != "" { lines[cur, ++n[cur]] = $0 }
  END {
    for (i = 1; i <= nf; i++) {
      t = order[i]; leaf = 1
      for (j = 1; j <= nf; j++) if (index(order[j], t "/") == 1) leaf = 0
      if (!leaf) continue
      print "== what " t " printed:"
      first = n[t] - 59
      if (first < 1) first = 1
      for (k = first; k <= n[t]; k++) print lines[t, k]
      print "--- FAIL: " t
    }
  }' "$out"
echo "== everything:"
cat "$out"
echo "== failed:"
grep -E '^ *--- FAIL|^FAIL|^panic:' "$out"
# A test that timed out has no FAIL line: go test names those still running.
awk '/^\trunning tests:/ { p = 1; print; next } p && !/^\t\t/ { exit } p' "$out"
exit $rc
