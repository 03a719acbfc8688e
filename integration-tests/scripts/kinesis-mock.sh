#!/usr/bin/env bash
# kinesis-mock for the integration tests: the npm package kinesis-local (the Scala.js build of kinesis-mock),
# pinned, installed under <repo>/.emulators/kinesis-mock, listening on 127.0.0.1 only.
#
#   kinesis-mock.sh install   install kinesis-local@0.6.2 (reused when already there)
#   kinesis-mock.sh start     install if needed, start, wait until it answers (prints the endpoint)
#   kinesis-mock.sh stop      SIGTERM, bounded wait, then SIGKILL
#   kinesis-mock.sh status    exit 0 when running, 3 when not
#
# Environment: KINESIS_MOCK_PORT (plain HTTP, default 4568), KINESIS_MOCK_TLS_PORT (default 4567),
# KINESIS_MOCK_START_TIMEOUT / KINESIS_MOCK_STOP_TIMEOUT (seconds, default 30 / 10). The pid file and the log
# are named after the plain port, so several emulators (one per test JVM) can run side by side.
set -euo pipefail

readonly version="0.6.2"
script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$script_dir/../.." && pwd)"
readonly emu_dir="$root/.emulators/kinesis-mock"
readonly package_dir="$emu_dir/node_modules/kinesis-local"
readonly plain_port="${KINESIS_MOCK_PORT:-4568}"
readonly tls_port="${KINESIS_MOCK_TLS_PORT:-4567}"
readonly start_timeout="${KINESIS_MOCK_START_TIMEOUT:-30}"
readonly stop_timeout="${KINESIS_MOCK_STOP_TIMEOUT:-10}"
readonly pid_file="$emu_dir/kinesis-mock-$plain_port.pid"
readonly log_file="$emu_dir/kinesis-mock-$plain_port.log"

say() { echo "kinesis-mock: $*" >&2; }
die() { say "$*"; exit 1; }

require_node() {
  command -v node >/dev/null && command -v npm >/dev/null ||
    die "node and npm are needed to run kinesis-mock; install them (for example 'apt-get install nodejs npm') and run again"
}

installed_version() {
  [ -f "$package_dir/package.json" ] || return 0
  node -e 'process.stdout.write(require(process.argv[1]).version)' "$package_dir/package.json"
}

install() {
  require_node
  mkdir -p "$emu_dir"
  # Test JVMs of both Scala lines may install at the same moment: one installs, the other waits and reuses.
  exec 9>"$emu_dir/install.lock"
  flock -w 120 9 || die "timed out after 120 s waiting for another install to finish (lock $emu_dir/install.lock)"
  if [ "$(installed_version)" = "$version" ] && [ -f "$package_dir/main.js" ]; then
    exec 9>&-
    return 0
  fi
  say "installing kinesis-local@$version into $emu_dir"
  npm install --prefix "$emu_dir" --no-audit --no-fund --no-save "kinesis-local@$version" >&2 ||
    die "npm install kinesis-local@$version failed (see the npm output above); it needs access to the npm registry"
  [ "$(installed_version)" = "$version" ] || die "npm installed kinesis-local $(installed_version), expected $version"
  exec 9>&-
}

# The pid in the pid file, if that process is alive and is kinesis-local (pids get reused).
running_pid() {
  [ -f "$pid_file" ] || return 0
  local pid
  pid="$(cat "$pid_file")"
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q kinesis-local "/proc/$pid/cmdline" 2>/dev/null; then
    echo "$pid"
  fi
}

# True when kinesis-mock answers a ListStreams call on the plain port with 200. The emulator checks only that
# an Authorization header and X-Amz-Date are present (without them it logs a warning per call), not the signature.
answers() {
  local code
  code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -X POST \
    -H 'Content-Type: application/x-amz-json-1.1' -H 'X-Amz-Target: Kinesis_20131202.ListStreams' \
    -H "X-Amz-Date: $(date -u +%Y%m%dT%H%M%SZ)" \
    -H 'Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/kinesis/aws4_request, SignedHeaders=host, Signature=0' \
    -d '{}' "http://127.0.0.1:$plain_port/" 2>/dev/null)" || true
  [ "$code" = "200" ]
}

port_taken() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start() {
  command -v curl >/dev/null || die "curl is needed to check that kinesis-mock answers ('apt-get install curl')"
  install
  local pid
  pid="$(running_pid)"
  if [ -n "$pid" ]; then
    answers || die "kinesis-mock (pid $pid) is running but does not answer on port $plain_port; see $log_file"
    say "already running (pid $pid) on http://127.0.0.1:$plain_port"
    echo "http://127.0.0.1:$plain_port"
    return 0
  fi
  for port in "$plain_port" "$tls_port"; do
    port_taken "$port" && die "port $port on 127.0.0.1 is already in use; set KINESIS_MOCK_PORT / KINESIS_MOCK_TLS_PORT to free ports"
  done

  # Durations of 50-100 ms instead of the default 500 ms keep stream creation and resharding tests fast.
  KINESIS_MOCK_CERT_PATH="$package_dir/server.json" \
  KINESIS_MOCK_PLAIN_PORT="$plain_port" \
  KINESIS_MOCK_TLS_PORT="$tls_port" \
  CREATE_STREAM_DURATION="${CREATE_STREAM_DURATION:-50ms}" \
  DELETE_STREAM_DURATION="${DELETE_STREAM_DURATION:-50ms}" \
  SPLIT_SHARD_DURATION="${SPLIT_SHARD_DURATION:-100ms}" \
  MERGE_SHARDS_DURATION="${MERGE_SHARDS_DURATION:-100ms}" \
  UPDATE_SHARD_COUNT_DURATION="${UPDATE_SHARD_COUNT_DURATION:-100ms}" \
  REGISTER_STREAM_CONSUMER_DURATION="${REGISTER_STREAM_CONSUMER_DURATION:-100ms}" \
  SHARD_LIMIT="${SHARD_LIMIT:-10000}" \
  LOG_LEVEL="${LOG_LEVEL:-WARN}" \
    nohup node -r "$script_dir/bind-loopback.js" "$package_dir/main.js" </dev/null >"$log_file" 2>&1 &
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
      die "did not answer on http://127.0.0.1:$plain_port within $start_timeout s (killed pid $pid); see $log_file"
    fi
    sleep 0.2
  done
  say "running (pid $pid) on http://127.0.0.1:$plain_port (TLS $tls_port), log $log_file"
  echo "http://127.0.0.1:$plain_port"
}

stop() {
  local pid
  pid="$(running_pid)"
  if [ -z "$pid" ]; then
    rm -f "$pid_file"
    say "not running on port $plain_port"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + stop_timeout))
  while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    # An open SubscribeToShard connection can keep it from exiting on SIGTERM.
    say "pid $pid still running $stop_timeout s after SIGTERM; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pid_file"
  # An empty log is just clutter; one with warnings or errors stays for whoever investigates.
  [ -s "$log_file" ] || rm -f "$log_file"
  say "stopped (pid $pid)"
}

status() {
  local pid
  pid="$(running_pid)"
  if [ -z "$pid" ]; then
    say "not running on port $plain_port"
    exit 3
  fi
  if answers; then
    say "running (pid $pid) on http://127.0.0.1:$plain_port"
  else
    say "pid $pid is alive but does not answer on http://127.0.0.1:$plain_port; see $log_file"
    exit 1
  fi
}

case "${1:-}" in
  install) install; say "kinesis-local@$version installed in $emu_dir" ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) die "usage: ${0##*/} {install|start|stop|status}" ;;
esac
