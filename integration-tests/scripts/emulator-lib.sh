# Shared by the emulator scripts that run one local process (moto.sh, dynamodb-local.sh; kinesis-mock.sh runs the
# Python package's emulator module instead, which the demo needs without this repository): sourced after they set
# name (for messages), marker (a word of the process's command line), port, pid_file, log_file, start_timeout,
# stop_timeout, and define install, answers (true once the emulator serves requests) and launch (starts the process
# in the background, output to $log_file).
# Provides say, die, start, stop, status and dispatch "$@" (install|start|stop|status).

say() { echo "$name: $*" >&2; }
die() { say "$*"; exit 1; }

# The pid in the pid file, if that process is alive and is the emulator (pids get reused).
running_pid() {
  [ -f "$pid_file" ] || return 0
  local pid
  pid="$(cat "$pid_file")"
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q "$marker" "/proc/$pid/cmdline" 2>/dev/null; then
    echo "$pid"
  fi
}

port_taken() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start() {
  command -v curl >/dev/null || die "curl is needed to check that $name answers ('apt-get install curl')"
  install
  local pid
  pid="$(running_pid)"
  if [ -n "$pid" ]; then
    answers || die "$name (pid $pid) is running but does not answer on port $port; see $log_file"
    say "already running (pid $pid) on http://127.0.0.1:$port"
    echo "http://127.0.0.1:$port"
    return 0
  fi
  port_taken "$port" && die "port $port on 127.0.0.1 is already in use; choose another port (see the script's header)"
  launch
  pid=$!
  echo "$pid" >"$pid_file"
  local deadline=$((SECONDS + start_timeout))
  until answers; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$pid_file"
      say "exited during start-up; last lines of $log_file:"
      tail -n 20 "$log_file" >&2 || true
      exit 1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      kill -KILL "$pid" 2>/dev/null || true
      rm -f "$pid_file"
      die "did not answer on http://127.0.0.1:$port within $start_timeout s (killed pid $pid); see $log_file"
    fi
    sleep 0.2
  done
  say "running (pid $pid) on http://127.0.0.1:$port, log $log_file"
  echo "http://127.0.0.1:$port"
}

stop() {
  local pid
  pid="$(running_pid)"
  if [ -z "$pid" ]; then
    rm -f "$pid_file"
    say "not running on port $port"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + stop_timeout))
  while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    say "pid $pid still running $stop_timeout s after SIGTERM; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pid_file" "$log_file"
  say "stopped (pid $pid)"
}

status() {
  local pid
  pid="$(running_pid)"
  [ -n "$pid" ] || { say "not running on port $port"; exit 3; }
  answers || { say "pid $pid is alive but does not answer on http://127.0.0.1:$port; see $log_file"; exit 1; }
  say "running (pid $pid) on http://127.0.0.1:$port"
}

dispatch() {
  case "${1:-}" in
    install) install; say "installed" ;;
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) die "usage: ${0##*/} {install|start|stop|status}" ;;
  esac
}
