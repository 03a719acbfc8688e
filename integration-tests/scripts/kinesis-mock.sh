#!/usr/bin/env bash
# kinesis-mock for bin/test, the integration tests and bench/run: the Python package's emulator module
# (python/src/pyspark_kinesis/_emulator.py, which the demo uses too) run as a command. It pins the npm package
# kinesis-local, installs it under <repo>/.emulators/kinesis-mock and runs it on 127.0.0.1 only.
#
#   kinesis-mock.sh install   install kinesis-local (reused when already there)
#   kinesis-mock.sh start     install if needed, start, wait until it answers (prints the endpoint)
#   kinesis-mock.sh stop      SIGTERM, bounded wait, then SIGKILL
#   kinesis-mock.sh status    exit 0 when running, 3 when not
#
# Environment: KINESIS_MOCK_PORT (plain HTTP, default 4568), KINESIS_MOCK_TLS_PORT (default 4567),
# KINESIS_MOCK_START_TIMEOUT / KINESIS_MOCK_STOP_TIMEOUT (seconds, default 60 / 10), PYTHON (default python3),
# PYSPARK_KINESIS_HOME (default <repo>/.emulators). The pid file and the log are named after the plain port, so
# several emulators (one per test JVM) can run side by side; a log with warnings outlives stop.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
python="${PYTHON:-python3}"
command -v "$python" >/dev/null ||
  { echo "kinesis-mock: $python is needed to start kinesis-mock; install Python 3.9 or newer" >&2; exit 1; }
export PYSPARK_KINESIS_HOME="${PYSPARK_KINESIS_HOME:-$root/.emulators}"
# Run as a file, not imported from the package: it needs only the standard library, not a built wheel.
exec "$python" "$root/python/src/pyspark_kinesis/_emulator.py" "$@"
