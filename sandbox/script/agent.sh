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
# mode: bash | setup | write | rm | upload | scan. old/new: manifest generations. arg: workdir
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
  t0=$(date +%s)
  (cd /src && find . -xdev -exec stat -c '%f %s %Y %n' {} + 2>/dev/null) >"$S/m.$old"
  grep " $t0 \./" "$S/m.$old" >"$S/r.$old" || rm -f "$S/r.$old"
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
    # shellcheck disable=SC2013 # /proc paths have no spaces
    for p in $(grep -l "LBX_CALL=$W" /proc/[0-9]*/environ 2>/dev/null); do
      p=${p#/proc/}
      kill -KILL "${p%/environ}" 2>/dev/null
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
upload)
  # A tar whose top entry is named after $arg, extracted next to it; mtimes
  # are not restored, so every uploaded file reads as changed.
  # The payload is read whole first: tar may stop before its padding, and
  # whatever it left would be taken for the host's selection.
  IFS= read -r len
  d=$(dirname "$arg")
  t=/src/.litterbox-upload.$$
  if head -c "$len" >"$t" && mkdir -p "$d" 2>"$W/e" && tar -x -m -f "$t" -C "$d" 2>"$W/e"; then :; else rc=1; fi
  rm -f "$t"
  ;;
scan) ;;
*) echo "unknown mode $mode" >&2; exit 98 ;;
esac

# Manifest: "hexmode size mtime ./path" for every entry under /src except
# pruned (ignored) directories. The walk runs inside /src on relative paths:
# resolving absolute ones from / costs the sandbox user ten times more per
# lookup on some kernels. r.<gen> keeps the racy entries: modified in the
# second of the scan, so a same-size rewrite later in that second would not
# show; the next call checks them whatever their stat says.
now=$(date +%s)
n=$#
for d in "$@"; do set -- "$@" -path "./$d" -o; done
shift "$n"
(cd /src && find . -xdev \( "$@" -path ./.litterbox-never \) -prune -o -exec stat -c '%f %s %Y %n' {} + 2>/dev/null) >"$S/m.$new"
grep " $now \./" "$S/m.$new" >"$S/r.$new" || rm -f "$S/r.$new"

# Candidates: "+ hexmode size path" for new, changed or racy files and
# symlinks, "d path" for new directories, "- path" for vanished files, and
# "? path" for every other file when a .gitignore changed. diff narrows the
# manifests down to the lines that differ; without the old manifest (a
# restarted container) everything is a candidate.
full=0
if [ -f "$S/m.$old" ]; then
  { diff "$S/m.$old" "$S/m.$new" | grep '^[-+][0-9a-f]'; [ -f "$S/r.$old" ] && sed 's/^/=/' "$S/r.$old"; } >"$W/d"
else
  full=1
  sed 's/^/+/' "$S/m.$new" >"$W/d"
fi
awk '
  function kind(m) { m = substr(m, 1, length(m) - 3); return m == "8" ? "f" : m == "a" ? "l" : m == "4" ? "d" : "" }
  function ign(p) { return p == ".gitignore" || p ~ /\/\.gitignore$/ }
  {
    sign = substr($1, 1, 1); mode = substr($1, 2)
    p = substr($0, length($1) + length($2) + length($3) + 4 + 2)
    if (p == "" || kind(mode) == "") next
    info = mode " " $2 " " $3
    if (sign == "-") old[p] = info
    else if (sign == "+") cur[p] = info
    else racy[p] = info
  }
  END {
    for (p in cur) {
      k = kind(substr(cur[p], 1, index(cur[p], " ") - 1))
      if (p in old) { ok = kind(substr(old[p], 1, index(old[p], " ") - 1)); if (old[p] == cur[p] && !(p in racy)) continue } else ok = ""
      if (k == "d") { if (ok != "d") { if (ok != "") print "- " p; print "d " p } ; continue }
      split(cur[p], f, " "); print "+ " f[1] " " f[2] " " p; gi = gi || ign(p)
    }
    for (p in old) if (!(p in cur)) { ok = kind(substr(old[p], 1, index(old[p], " ") - 1)); if (ok == "f" || ok == "l") { print "- " p; gi = gi || ign(p) } }
    for (p in racy) if (!(p in cur) && !(p in old)) { split(racy[p], f, " "); if (kind(f[1]) != "d") print "+ " f[1] " " f[2] " " p }
    if (gi) print "" > "/dev/stderr"
  }
' "$W/d" >"$W/c" 2>"$W/gi"
# Changed ignore rules may un-ignore files that did not change: list them.
if [ -s "$W/gi" ]; then
  awk 'FILENAME == ARGV[1] {
      if ($1 == "+") seen[substr($0, length($1) + length($2) + length($3) + 4)] = 1
      else if ($1 == "-") seen[substr($0, 3)] = 1
      next
    }
    { m = substr($1, 1, length($1) - 3); if (m != "8" && m != "a") next
      p = substr($0, length($1) + length($2) + length($3) + 4 + 2); if (!(p in seen)) print "? " p }' "$W/c" "$S/m.$new" >"$W/q"
  cat "$W/q" >>"$W/c"
fi

# Send the result; changed .gitignore files go along at once, because the
# host needs them to tell which other candidates are ignored.
read -r oc <"$W/oc"
read -r ec <"$W/ec"
# shellcheck disable=SC2046 # three numbers
set -- $(stat -c %s "$W/o" "$W/e" "$W/c")
printf 'LBX %s %s %s %s %s %s %s %s\n' "$rc" "$to" "$1" "$oc" "$2" "$ec" "$3" "$full"
cat "$W/o" "$W/e" "$W/c"
cd /src || exit 96
# An empty cpio archive is just its trailer; printing it saves a process.
trailer() { printf '07070100000000000000000000000000000000000000010000000000000000000000000000000000000000000000000000000b00000000TRAILER!!!\0\0\0\0'; }
if grep -q '^+ .* \(.*/\)\{0,1\}\.gitignore$' "$W/c"; then
  awk '$1 == "+" && ($4 == ".gitignore" || $4 ~ /\/\.gitignore$/) { print substr($0, length($1) + length($2) + length($3) + 4) }' "$W/c" |
    cpio -o -H newc 2>/dev/null
else
  trailer
fi

# The host's selection: the files it wants, then an empty line. "dir/" asks
# for every file under a directory the previous scan skipped.
while IFS= read -r l && [ -n "$l" ]; do
  case $l in
  */) find "${l%/}" \( -type f -o -type l \) 2>/dev/null ;;
  *) printf '%s\n' "$l" ;;
  esac
done >"$W/sel"
if [ -s "$W/sel" ]; then cpio -o -H newc <"$W/sel" 2>/dev/null; else trailer; fi

# Keep the manifest (and racy mark) the host last committed and the new
# one; drop older ones.
for f in "$S"/m.* "$S"/r.*; do
  case $f in "$S/m.$old" | "$S/m.$new" | "$S/r.$old" | "$S/r.$new") ;; *) rm -f "$f" ;; esac
done
exit 0
