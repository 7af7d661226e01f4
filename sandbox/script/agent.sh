# Litterbox's in-container side of one agent tool call, run by `docker exec -i`
# as the sandbox user with busybox sh. It performs the action, then compares a
# fresh manifest of /src (mode, size, mtime, path) with the one the host last
# committed, and sends the host what changed. Protocol on stdout:
#   LBX <rc> <timed_out> <out_len> <out_cut> <err_len> <err_cut> <cand_len> <full>\n
#   <stdout bytes><stderr bytes><candidate lines>
#   <cpio (newc) of changed .gitignore files>
# then reads the host's selection (paths, one a line, ended by an empty line)
# from stdin and writes a cpio of those files. Arguments:
#   mode old new cap timeout arg cmd [prune-dir...]
# mode: bash | setup | write | rm | scan. old/new: manifest generations. arg: workdir
# (bash) or path (write). cmd: the command (bash). prune-dirs: ignored
# directories under /src not to scan.
set -u
mode=$1 old=$2 new=$3 cap=$4 tmo=$5 arg=$6 cmd=$7
shift 7
S=/tmp/.litterbox
mkdir -p "$S" && chmod 700 "$S"
W=$(mktemp -d "$S/run.XXXXXX") || exit 97
trap 'rm -rf "$W"' EXIT
rc=0 to=0
: >"$W/o"; : >"$W/e"; echo 0 >"$W/oc"; echo 0 >"$W/ec"

capped() { # capped FIFO OUT CUTCOUNT: keep the first $cap bytes, count the rest
  { dd bs="$cap" count=1 iflag=fullblock of="$2" 2>/dev/null; wc -c >"$3"; } <"$1"
}

if [ "$mode" = setup ]; then
  # The baseline the setup command's changes are measured against.
  { echo "T $(date +%s)"; find /src -xdev -exec stat -c '%f %s %Y %n' {} + 2>/dev/null; } >"$S/m.$old"
  mode=bash
fi
case $mode in
bash)
  mkfifo "$W/of" "$W/ef"
  capped "$W/of" "$W/o" "$W/oc" & c1=$!
  capped "$W/ef" "$W/e" "$W/ec" & c2=$!
  if cd "$arg" 2>/dev/null; then
    # A session of its own, so a timeout can kill every process it started;
    # LBX_CALL marks them all, also those that start sessions of their own.
    LBX_CALL=$W setsid sh -c "$cmd" </dev/null >"$W/of" 2>"$W/ef" &
    pid=$!
    # shellcheck disable=SC2016 # expanded by the inner sh
    setsid sh -c 'i=0
      while [ "$i" -lt "$1" ] && kill -0 "$2" 2>/dev/null; do sleep 1; i=$((i + 1)); done
      if kill -0 "$2" 2>/dev/null; then echo 1 >"$3"; kill -KILL -"$2"; fi' \
      watch "$tmo" "$pid" "$W/to" </dev/null >/dev/null 2>&1 &
    w=$!
    wait "$pid"
    rc=$?
    # Nothing the command started outlives it (servers are services).
    kill -KILL -"$pid" "-$w" 2>/dev/null
    for _ in 1 2; do
      # shellcheck disable=SC2013 # /proc paths have no spaces
      for p in $(grep -l "LBX_CALL=$W" /proc/[0-9]*/environ 2>/dev/null); do
        p=${p#/proc/}
        kill -KILL "${p%/environ}" 2>/dev/null
      done
    done
    [ -f "$W/to" ] && to=1
  else
    rc=2
    # Each capper waits for a writer to open its FIFO.
    : >"$W/of" &
    echo "workdir $arg: no such directory" >"$W/ef" &
  fi
  wait "$c1" "$c2"
  cd /
  ;;
write)
  IFS= read -r len
  d=$(dirname "$arg")
  if mkdir -p "$d" 2>"$W/e" && head -c "$len" >"$arg" 2>"$W/e"; then :; else rc=1; fi
  ;;
rm)
  rm -f -- "$arg" 2>"$W/e" || rc=1
  ;;
scan) ;;
*) echo "unknown mode $mode" >&2; exit 98 ;;
esac

# Manifest: first line the scan time; then "hexmode size mtime path" for
# every entry under /src except pruned (ignored) directories.
now=$(date +%s)
n=$#
for d in "$@"; do set -- "$@" -path "/src/$d" -o; done
shift "$n"
{
  echo "T $now"
  find /src -xdev \( "$@" -path /src/.litterbox-never \) -prune -o -exec stat -c '%f %s %Y %n' {} + 2>/dev/null
} >"$S/m.$new"

# Candidates: "+ hexmode size path" for new or changed files and symlinks
# (and racy ones: modified in or after the second of the previous scan), "d
# path" for new directories, "- path" for vanished files, and "? path" for
# every other file when a .gitignore changed. Without the old manifest
# everything is a candidate.
oldm=$S/m.$old full=0
[ -f "$oldm" ] || { oldm=/dev/null; full=1; }
awk '
  function path(l) { return substr(l, length($1) + length($2) + length($3) + 4) }
  function kind(m) { m = substr(m, 1, length(m) - 3); return m == "8" ? "f" : m == "a" ? "l" : m == "4" ? "d" : "" }
  function ign(p) { return p == ".gitignore" || p ~ /\/\.gitignore$/ }
  FILENAME == ARGV[1] {
    if (FNR == 1) { t = $2; next }
    p = substr(path($0), 6); old[p] = $1 " " $2 " " $3; was[p] = kind($1); next
  }
  FNR == 1 { next }
  {
    p = substr(path($0), 6); k = kind($1)
    if (p == "" || k == "") next
    seen[p] = 1
    if (!(p in old)) { if (k == "d") print "d " p; else { print "+ " $1 " " $2 " " p; gi = gi || ign(p) }; next }
    if (k == "d") { if (was[p] != "d") { print "- " p; print "d " p }; next }
    if (old[p] != $1 " " $2 " " $3 || $3 >= t) { print "+ " $1 " " $2 " " p; gi = gi || ign(p) } else rest[p] = 1
  }
  END {
    for (p in old) if (!(p in seen) && (was[p] == "f" || was[p] == "l")) { print "- " p; gi = gi || ign(p) }
    # Changed ignore rules may un-ignore files that did not change: list them.
    if (gi) for (p in rest) print "? " p
  }
' "$oldm" "$S/m.$new" >"$W/c"

# Send the result; changed .gitignore files go along at once, because the
# host needs them to tell which other candidates are ignored.
printf 'LBX %s %s %s %s %s %s %s %s\n' "$rc" "$to" "$(wc -c <"$W/o")" "$(cat "$W/oc")" \
  "$(wc -c <"$W/e")" "$(cat "$W/ec")" "$(wc -c <"$W/c")" "$full"
cat "$W/o" "$W/e" "$W/c"
cd /src || exit 96
awk '$1 == "+" && ($4 == ".gitignore" || $4 ~ /\/\.gitignore$/) { print substr($0, length($1) + length($2) + length($3) + 4) }' "$W/c" |
  cpio -o -H newc 2>/dev/null

# The host's selection: the files it wants, then an empty line. "dir/" asks
# for every file under a directory the previous scan skipped.
while IFS= read -r l && [ -n "$l" ]; do
  case $l in
  */) find "${l%/}" \( -type f -o -type l \) 2>/dev/null ;;
  *) printf '%s\n' "$l" ;;
  esac
done >"$W/sel"
cpio -o -H newc <"$W/sel" 2>/dev/null

# Keep the manifest the host last committed and the new one; drop older ones.
for f in "$S"/m.*; do
  case $f in "$S/m.$old" | "$S/m.$new") ;; *) rm -f "$f" ;; esac
done
exit 0
