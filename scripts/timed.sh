#!/usr/bin/env bash
# Runs a command and prints, when it ends, how long it took and its exit
# status, under a name: so that a CI log says where its minutes went.
# Usage: scripts/timed.sh NAME COMMAND [ARG...]
set -uo pipefail
name=$1
shift
start=$(date +%s)
"$@"
rc=$?
echo "== $name: $(($(date +%s) - start)) s, exit $rc"
exit $rc
