#!/usr/bin/env bash
# Runs go test -v with the given arguments and prints what a CI log needs:
# on success, each test and two levels of subtests with their times (so
# the log says where the minutes went); on failure, everything, then the
# failed tests again at the end, where a log's tail shows them.
# Usage: scripts/gotest.sh GO-TEST-ARG...
set -uo pipefail
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test -v "$@" >"$out" 2>&1
rc=$?
if [ $rc = 0 ]; then
  grep -E '^( {0,8}--- |ok |FAIL|PASS$)' "$out"
else
  cat "$out"
  echo "== failed:"
  grep -E '^ *--- FAIL|^FAIL|^panic:' "$out"
fi
exit $rc
