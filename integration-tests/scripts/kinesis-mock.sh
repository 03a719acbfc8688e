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
# are named after the plain port, so several emulators (one per test JVM) can run side by side. Start, stop and
# status come from emulator-lib.sh; an open SubscribeToShard connection can keep the emulator from exiting on
# SIGTERM, which is why stop ends with SIGKILL after the bounded wait. A log with warnings outlives stop.
set -euo pipefail

readonly name="kinesis-mock" marker="kinesis-local" keep_log=1
readonly version="0.6.2"
script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$script_dir/../.." && pwd)"
readonly emu_dir="$root/.emulators/kinesis-mock"
readonly package_dir="$emu_dir/node_modules/kinesis-local"
readonly port="${KINESIS_MOCK_PORT:-4568}"
readonly tls_port="${KINESIS_MOCK_TLS_PORT:-4567}"
readonly other_ports="$tls_port"
readonly start_timeout="${KINESIS_MOCK_START_TIMEOUT:-30}"
readonly stop_timeout="${KINESIS_MOCK_STOP_TIMEOUT:-10}"
readonly pid_file="$emu_dir/kinesis-mock-$port.pid"
readonly log_file="$emu_dir/kinesis-mock-$port.log"

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

# True when kinesis-mock answers a ListStreams call on the plain port with 200. The emulator checks only that
# an Authorization header and X-Amz-Date are present (without them it logs a warning per call), not the signature.
answers() {
  local code
  code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -X POST \
    -H 'Content-Type: application/x-amz-json-1.1' -H 'X-Amz-Target: Kinesis_20131202.ListStreams' \
    -H "X-Amz-Date: $(date -u +%Y%m%dT%H%M%SZ)" \
    -H 'Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/kinesis/aws4_request, SignedHeaders=host, Signature=0' \
    -d '{}' "http://127.0.0.1:$port/" 2>/dev/null)" || true
  [ "$code" = "200" ]
}

# Durations of 50-100 ms instead of the default 500 ms keep stream creation and resharding tests fast.
launch() {
  KINESIS_MOCK_CERT_PATH="$package_dir/server.json" \
  KINESIS_MOCK_PLAIN_PORT="$port" \
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
}

source "$script_dir/emulator-lib.sh"
dispatch "$@"
