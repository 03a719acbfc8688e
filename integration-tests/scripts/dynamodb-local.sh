#!/usr/bin/env bash
# DynamoDB Local (AWS's own emulator, from Maven Central) for the DynamoDB metadata store's integration tests: the
# pinned release with its dependencies and sqlite4java's native libraries, fetched by Maven into
# <repo>/.emulators/dynamodb-local, run in memory as a plain java process.
#
#   dynamodb-local.sh install   fetch DynamoDB Local (reused when already there)
#   dynamodb-local.sh start     install if needed, start, wait until it answers (prints the endpoint)
#   dynamodb-local.sh stop      SIGTERM, bounded wait, then SIGKILL
#   dynamodb-local.sh status    exit 0 when running, 3 when not
#
# Environment: DYNAMODB_LOCAL_PORT (default 4569), DYNAMODB_LOCAL_START_TIMEOUT / DYNAMODB_LOCAL_STOP_TIMEOUT
# (seconds, default 60 / 10). DynamoDB Local has no setting for its listening address; the tests reach it on
# 127.0.0.1. sqlite4java ships natives for Linux x86/x86_64, macOS and Windows (no Linux aarch64).
# Start, stop and status come from emulator-lib.sh.
set -euo pipefail

readonly name="dynamodb-local" marker="dynamodbv2.local.main.ServerRunner"
readonly version="2.6.1"
script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$script_dir/../.." && pwd)"
readonly emu_dir="$root/.emulators/dynamodb-local"
readonly lib_dir="$emu_dir/lib-$version"
readonly port="${DYNAMODB_LOCAL_PORT:-4569}"
readonly start_timeout="${DYNAMODB_LOCAL_START_TIMEOUT:-60}"
readonly stop_timeout="${DYNAMODB_LOCAL_STOP_TIMEOUT:-10}"
readonly pid_file="$emu_dir/dynamodb-local-$port.pid"
readonly log_file="$emu_dir/dynamodb-local-$port.log"


install() {
  mkdir -p "$emu_dir"
  exec 9>"$emu_dir/install.lock"
  flock -w 300 9 || die "timed out after 300 s waiting for another install to finish (lock $emu_dir/install.lock)"
  if [ -f "$lib_dir/DynamoDBLocal-$version.jar" ]; then
    exec 9>&-
    return 0
  fi
  command -v mvn >/dev/null || die "Maven (mvn) is needed to fetch DynamoDB Local; run build/prerequisites.sh"
  command -v java >/dev/null || die "java is needed to run DynamoDB Local; run build/prerequisites.sh"
  say "fetching com.amazonaws:DynamoDBLocal:$version and its dependencies from Maven Central into $lib_dir"
  cat >"$emu_dir/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.github.spark-kinesis</groupId>
  <artifactId>dynamodb-local-fetch</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>com.amazonaws</groupId>
      <artifactId>DynamoDBLocal</artifactId>
      <version>$version</version>
    </dependency>
  </dependencies>
</project>
POM
  rm -rf "$lib_dir.tmp"
  mvn -q -B -f "$emu_dir/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$lib_dir.tmp" >&2 || die "Maven could not fetch DynamoDB Local $version (see above)"
  mv "$lib_dir.tmp" "$lib_dir"
  exec 9>&-
}

# True when DynamoDB Local answers a ListTables call (it wants a signed-looking request, not a valid signature).
answers() {
  local code
  code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -X POST \
    -H 'Content-Type: application/x-amz-json-1.0' -H 'X-Amz-Target: DynamoDB_20120810.ListTables' \
    -H "X-Amz-Date: $(date -u +%Y%m%dT%H%M%SZ)" \
    -H 'Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0' \
    -d '{}' "http://127.0.0.1:$port/" 2>/dev/null)" || true
  [ "$code" = "200" ]
}

# Telemetry off; and started in a folder of its own, because DynamoDB Local writes dynamodb-local-metadata.json into
# its working directory (with telemetry on, whichever directory the caller was in).
launch() {
  mkdir -p "$emu_dir/work"
  (cd "$emu_dir/work" && exec nohup java -Xmx256m -Djava.library.path="$lib_dir" -cp "$lib_dir/*" \
    com.amazonaws.services.dynamodbv2.local.main.ServerRunner -inMemory -disableTelemetry -port "$port" \
    </dev/null >"$log_file" 2>&1) &
}

source "$script_dir/emulator-lib.sh"
dispatch "$@"
