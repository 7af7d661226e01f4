# Litterbox's service control, run by `docker exec -i` as the sandbox user with
# busybox sh (anything with sh, setsid, kill and sleep will do). Each service
# runs in a session of its own under a small monitor shell, which records the
# service's pid and, when it ends, its exit code; the files live in $D so an
# agent can read the logs with bash. No daemon: the monitors are the state.
#   start NAME ARGC ARG... [NAME ARGC ARG...]...
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

pid_of() { p=; [ -f "$D/$1.pid" ] && read -r p <"$D/$1.pid"; }
running() { pid_of "$1"; [ -n "$p" ] && [ ! -f "$D/$1.rc" ] && kill -0 "$p" 2>/dev/null; }

report() {
  rc=-
  [ -f "$D/$1.rc" ] && read -r rc <"$D/$1.rc"
  if running "$1"; then echo "SVC $1 running $p -"
  elif [ -f "$D/$1.stopped" ]; then echo "SVC $1 stopped - $rc"
  elif [ "$rc" != - ]; then echo "SVC $1 exited - $rc"
  else echo "SVC $1 not-started - -"; fi
}

# launch NAME ARG...: start the service unless it runs. Its own session makes
# it a process group that stop can signal as a whole.
launch() {
  n=$1
  shift
  running "$n" && return 0
  rm -f "$D/$n.pid" "$D/$n.rc" "$D/$n.stopped"
  echo "--- litterbox: starting $n at $(date '+%Y-%m-%d %H:%M:%S')" >>"$D/$n.log"
  # shellcheck disable=SC2016 # expanded by the monitor
  setsid sh -c 'f=$1; shift
    cd /src 2>/dev/null || cd /
    setsid "$@" </dev/null >>"$f.log" 2>&1 &
    echo $! >"$f.pid"
    wait $!
    echo $? >"$f.rc"' monitor "$D/$n" "$@" </dev/null >/dev/null 2>&1 &
}

# launch_first NAME ARGC ARG... MORE...: launch NAME with its ARGC arguments.
launch_first() {
  n=$1 c=$2
  shift 2
  t=$# i=0
  for a; do
    i=$((i + 1))
    [ "$i" -le "$c" ] && set -- "$@" "$a"
  done
  shift "$t"
  launch "$n" "$@"
}

# wait_for CONDITION TENTHS: poll until the condition holds.
wait_for() {
  i=0
  while ! eval "$1" && [ "$i" -lt "$2" ]; do sleep 0.1; i=$((i + 1)); done
}

case $act in
start)
  names=
  while [ $# -gt 0 ]; do
    launch_first "$@"
    names="$names $1"
    shift $((2 + $2))
  done
  for n in $names; do wait_for "[ -f '$D/$n.pid' ]" 50; done
  # A service that dies at once (a typo, a port taken) shows as exited.
  sleep 0.3
  for n in $names; do report "$n"; done
  ;;
stop)
  sig=$1 grace=$2 n=$3
  if running "$n"; then
    : >"$D/$n.stopped"
    kill -s "$sig" "-$p" 2>/dev/null || kill -s "$sig" "$p" 2>/dev/null
    wait_for "! kill -0 -$p 2>/dev/null" $((grace * 10))
    kill -s KILL "-$p" 2>/dev/null
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
