# Litterbox's service control, run by `docker exec -i` as the sandbox user with
# busybox sh (anything with sh, setsid, kill and sleep will do). Each service
# runs in a session of its own under a small monitor shell (started by a
# detached exec, see services.go), which records the service's pid and, when
# it ends, its exit code; the files live in $D so an agent can read the logs
# with bash. No daemon: the monitors are the state.
#   await TOKEN NAME...        (wait for monitors started with TOKEN)
#   stop SIGNAL GRACE NAME
#   signal SIGNAL NAME         (send SIGNAL to the service's main process)
#   status NAME...
#   logs LINES NAME            (LINES 0: the whole log)
# Each action but logs ends by printing one line per service it touched:
#   SVC <name> <state> <pid|-> <exit code|->
# state: running | stopped (by us) | exited (on its own) | not-started
set -u
D=/tmp/litterbox/services
mkdir -p "$D" || exit 97
act=$1
shift

pid_of() { p=; [ -f "$D/$1.pid" ] && read -r p _ <"$D/$1.pid"; }
running() { pid_of "$1"; [ -n "$p" ] && [ ! -f "$D/$1.rc" ] && kill -0 "$p" 2>/dev/null; }
# killpg SIG PGID signals a process group: dash's kill takes "-PGID" for an
# option unless "--" comes first, and busybox's refuses "--", so both.
killpg() { kill -s "$1" -- "-$2" 2>/dev/null || kill -s "$1" "-$2" 2>/dev/null; }

report() {
  rc=-
  [ -f "$D/$1.rc" ] && read -r rc <"$D/$1.rc"
  # The monitor renames a complete file into place; an empty one is a
  # monitor from before that, still writing.
  [ -n "$rc" ] || rc=-
  if running "$1"; then echo "SVC $1 running $p -"
  elif [ -f "$D/$1.stopped" ]; then echo "SVC $1 stopped - $rc"
  elif [ "$rc" != - ]; then echo "SVC $1 exited - $rc"
  else echo "SVC $1 not-started - -"; fi
}

# wait_for CONDITION TENTHS: poll until the condition holds.
wait_for() {
  i=0
  while ! eval "$1" && [ "$i" -lt "$2" ]; do sleep 0.1; i=$((i + 1)); done
}

case $act in
await)
  # The monitors were started by detached execs (see services.go); each
  # writes "pid token" once its service runs. One that ran already keeps
  # its own token.
  tok=$1
  shift
  for n; do wait_for "grep -q ' $tok\$' '$D/$n.pid' 2>/dev/null || running '$n'" 50; done
  # A service that dies at once (a typo, a port taken) shows as exited.
  sleep 0.3
  for n; do report "$n"; done
  ;;
stop)
  sig=$1 grace=$2 n=$3
  if running "$n"; then
    : >"$D/$n.stopped"
    killpg "$sig" "$p" || kill -s "$sig" "$p" 2>/dev/null
    wait_for "! killpg 0 $p" $((grace * 10))
    killpg KILL "$p"
    wait_for "[ -f '$D/$n.rc' ]" 20
  elif [ -f "$D/$n.pid" ]; then
    : >"$D/$n.stopped"
  fi
  report "$n"
  ;;
signal)
  sig=$1 n=$2
  running "$n" && kill -s "$sig" "$p"
  report "$n"
  ;;
status)
  for n; do report "$n"; done
  ;;
logs)
  if [ ! -f "$D/$2.log" ]; then exit 0; fi
  if [ "$1" -gt 0 ]; then tail -n "$1" "$D/$2.log"; else cat "$D/$2.log"; fi
  ;;
*)
  echo "unknown action $act" >&2
  exit 98
  ;;
esac
