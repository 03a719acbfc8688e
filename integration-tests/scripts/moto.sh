#!/usr/bin/env bash
# moto's server for the integration tests: its STS (AssumeRole, AssumeRoleWithWebIdentity) stands in for AWS's.
# The PyPI package moto[server], pinned, installed into a virtual environment under <repo>/.emulators/moto,
# listening on 127.0.0.1 only.
#
#   moto.sh install   install moto[server] (reused when already there)
#   moto.sh start     install if needed, start, wait until it answers (prints the endpoint)
#   moto.sh stop      SIGTERM, bounded wait, then SIGKILL
#   moto.sh status    exit 0 when running, 3 when not
#
# Environment: MOTO_PORT (default 4570), PYTHON (default python3), MOTO_START_TIMEOUT / MOTO_STOP_TIMEOUT (seconds,
# default 30 / 10). The pid file and the log are named after the port, so several can run side by side.
set -euo pipefail

readonly version="5.2.5"
script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$script_dir/../.." && pwd)"
readonly emu_dir="$root/.emulators/moto"
readonly venv="$emu_dir/venv"
readonly port="${MOTO_PORT:-4570}"
readonly python="${PYTHON:-python3}"
readonly start_timeout="${MOTO_START_TIMEOUT:-30}"
readonly stop_timeout="${MOTO_STOP_TIMEOUT:-10}"
readonly pid_file="$emu_dir/moto-$port.pid"
readonly log_file="$emu_dir/moto-$port.log"

say() { echo "moto: $*" >&2; }
die() { say "$*"; exit 1; }

installed_version() {
  [ -x "$venv/bin/python" ] || return 0
  "$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("moto"), end="")' 2>/dev/null || true
}

install() {
  mkdir -p "$emu_dir"
  # Test JVMs of both Scala lines may install at the same moment: one installs, the other waits and reuses.
  exec 9>"$emu_dir/install.lock"
  flock -w 300 9 || die "timed out after 300 s waiting for another install to finish (lock $emu_dir/install.lock)"
  if [ "$(installed_version)" = "$version" ] && [ -x "$venv/bin/moto_server" ]; then
    exec 9>&-
    return 0
  fi
  command -v "$python" >/dev/null || die "$python is needed to run moto; install Python 3.9 or newer with venv"
  say "installing moto[server]==$version into $venv"
  rm -rf "$venv"
  "$python" -m venv "$venv" >&2 || die "$python cannot create a virtual environment; install python3-venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$version" >&2 ||
    die "pip install moto[server]==$version failed (see above); it needs access to PyPI"
  [ "$(installed_version)" = "$version" ] || die "pip installed moto $(installed_version), expected $version"
  exec 9>&-
}

# The pid in the pid file, if that process is alive and is moto's server (pids get reused).
running_pid() {
  [ -f "$pid_file" ] || return 0
  local pid
  pid="$(cat "$pid_file")"
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q moto_server "/proc/$pid/cmdline" 2>/dev/null; then
    echo "$pid"
  fi
}

# True when moto's own API answers on the port.
answers() {
  [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/moto-api/data.json" 2>/dev/null)" = 200 ]
}

port_taken() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start() {
  command -v curl >/dev/null || die "curl is needed to check that moto answers ('apt-get install curl')"
  install
  local pid
  pid="$(running_pid)"
  if [ -n "$pid" ]; then
    answers || die "moto (pid $pid) is running but does not answer on port $port; see $log_file"
    say "already running (pid $pid) on http://127.0.0.1:$port"
    echo "http://127.0.0.1:$port"
    return 0
  fi
  port_taken "$port" && die "port $port on 127.0.0.1 is already in use; set MOTO_PORT to a free port"

  nohup "$venv/bin/moto_server" -H 127.0.0.1 -p "$port" </dev/null >"$log_file" 2>&1 &
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

case "${1:-}" in
  install) install; say "moto[server]==$version installed in $venv" ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) die "usage: ${0##*/} {install|start|stop|status}" ;;
esac
