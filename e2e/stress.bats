#!/usr/bin/env bats
# Concurrency (ARCHITECTURE.md, "One agent call": calls on one sandbox that change files are
# serialized, also across several `litterbox mcp` processes on one repo):
# 4 sandboxes x 25 concurrent write/bash calls, issued at once from two
# `litterbox mcp` processes (one driven by mcp-go, one by the go-sdk), must
# leave every file on its branch and exactly one snapshot commit per call.

# shellcheck disable=SC2154,SC2030,SC2031 # bats sets status/output/lines/stderr; each test is a subshell
bats_require_minimum_version 1.5.0
load helpers

setup_file() { build_helpers mcpcall; }
setup() { common_setup; }
teardown() { common_teardown; }

@test "stress: 4 sandboxes x 25 concurrent write/bash calls from two litterbox mcp processes: all 100 files committed, 25 snapshots per branch" {
  boxes=(s1 s2 s3 s4)
  for b in "${boxes[@]}"; do create "$b"; done
  base=$(git rev-parse HEAD)

  # Call i on sandbox b creates stress/b/f<i>.txt holding "b i": odd i with
  # write, even i with bash. Process A gets i = 0 or 1 mod 4, process B the
  # rest, so each process sends both kinds to every sandbox, interleaved.
  a=() bb=()
  for ((i = 1; i <= 25; i++)); do
    for b in "${boxes[@]}"; do
      f=stress/$b/f$i.txt
      if ((i % 2)); then
        c=(write "{\"sandbox\":\"$b\",\"path\":\"$f\",\"content\":\"$b $i\\n\"}")
      else
        c=(bash "{\"sandbox\":\"$b\",\"command\":\"mkdir -p stress/$b && echo $b $i > $f\"}")
      fi
      if ((i % 4 < 2)); then a+=("${c[@]}"); else bb+=("${c[@]}"); fi
    done
  done
  assert_equal $((${#a[@]} / 2 + ${#bb[@]} / 2)) 100

  t0=$SECONDS
  mcpcall --client mcp-go --parallel --timeout 110s --repo "$REPO" "${a[@]}" >"$BATS_TEST_TMPDIR/a.out" 2>"$BATS_TEST_TMPDIR/a.err" &
  pa=$!
  mcpcall --client sdk --parallel --timeout 110s --repo "$REPO" "${bb[@]}" >"$BATS_TEST_TMPDIR/b.out" 2>"$BATS_TEST_TMPDIR/b.err" &
  pb=$!
  rca=0 rcb=0
  wait "$pa" || rca=$?
  wait "$pb" || rcb=$?
  elapsed=$((SECONDS - t0))
  [ "$rca" -eq 0 ] || fail "mcpcall (mcp-go) exited $rca: $(cat "$BATS_TEST_TMPDIR/a.err")"
  [ "$rcb" -eq 0 ] || fail "mcpcall (sdk) exited $rcb: $(cat "$BATS_TEST_TMPDIR/b.err")"
  [ "$elapsed" -lt 120 ] || fail "the 100 calls took ${elapsed}s"

  # Every call succeeded with a snapshot of its own.
  cat "$BATS_TEST_TMPDIR/a.out" "$BATS_TEST_TMPDIR/b.out" >"$BATS_TEST_TMPDIR/all.out"
  assert_equal "$(grep -c . "$BATS_TEST_TMPDIR/all.out")" 100
  assert_equal "$(jsonget -l .isError <"$BATS_TEST_TMPDIR/all.out" | sort | uniq -c | awk '{print $1, $2}')" "100 false"
  jsonget -l .structuredContent.snapshot <"$BATS_TEST_TMPDIR/all.out" | sort >"$BATS_TEST_TMPDIR/snapshots"
  run grep -c -v '^[0-9a-f]\{40\}$' "$BATS_TEST_TMPDIR/snapshots"
  assert_output 0
  assert_equal "$(sort -u "$BATS_TEST_TMPDIR/snapshots" | wc -l)" 100

  for b in "${boxes[@]}"; do
    br=litterbox/$b
    # Exactly 25 snapshot commits beyond the base, in a line.
    assert_equal "$(git rev-list --count "$base..$br")" 25
    assert_equal "$(git rev-list --min-parents=2 "$base..$br")" ""
    assert_equal "$(git merge-base "$base" "$br")" "$base"
    # Every one of its 25 files, with its content, and no other sandbox's.
    expected=$(for ((i = 1; i <= 25; i++)); do echo "stress/$b/f$i.txt"; done | LC_ALL=C sort)
    assert_equal "$(git ls-tree -r --name-only "$br" -- stress/)" "$expected"
    for ((i = 1; i <= 25; i++)); do
      assert_equal "$(git cat-file blob "$br:stress/$b/f$i.txt")" "$b $i"
    done
    # One commit per call: 13 writes and 12 bash calls, each naming its file.
    assert_equal "$(git log --format=%s "$base..$br" | grep -c "^write: stress/$b/f[0-9]*\.txt$")" 13
    assert_equal "$(git log --format=%s "$base..$br" | grep -c "^bash: mkdir -p stress/$b && echo $b [0-9]* > stress/$b/f[0-9]*\.txt$")" 12
    # Each commit adds exactly one file.
    assert_equal "$(git log --format= --name-status "$base..$br" | grep -c '^A')" 25
    assert_equal "$(git log --format= --name-status "$base..$br" | grep -c -v -e '^A' -e '^$')" 0
  done

  # The results' snapshots are exactly the branches' commits.
  assert_equal "$(git rev-list "$base..litterbox/s1" "$base..litterbox/s2" "$base..litterbox/s3" "$base..litterbox/s4" | sort)" \
    "$(cat "$BATS_TEST_TMPDIR/snapshots")"
  # The user's side is untouched.
  assert_equal "$(git rev-parse HEAD)" "$base"
  assert_equal "$(git status --porcelain)" ""
}
