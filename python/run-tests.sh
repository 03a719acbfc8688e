#!/usr/bin/env bash
# The Python package's tests: builds the wheel, then for each pyspark line (3.5 and the newest 4.x) creates a
# fresh virtual environment, installs the built wheel (not the source tree) with pyspark and the test
# dependencies, and runs pytest there. Exits non-zero when a suite fails or runs no test.
#
# Environment: PYSPARK_VERSIONS (default: those python/pyspark-versions lists), PYTHON (default python3), WHEEL (a
# built wheel to test instead of building one), PYTEST_ARGS (what pytest runs, default tests; e.g.
# "tests/test_demo.py -k ctrl_c"), KINESIS_MOCK_ENDPOINT (an emulator to use; otherwise the tests start one) with its
# TLS endpoint for the sink in KINESIS_MOCK_TLS_ENDPOINT (default https://127.0.0.1:$KINESIS_MOCK_TLS_PORT, 4567).
set -euo pipefail
python_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$python_dir/.." && pwd)"
python="${PYTHON:-python3}"
read -r -a versions <<< "${PYSPARK_VERSIONS:-$(grep -v '^#' "$python_dir/pyspark-versions" | xargs)}"

command -v "$python" >/dev/null || { echo "run-tests.sh: $python not found; install Python 3.9 or newer" >&2; exit 1; }
"$python" -c 'import venv, ensurepip' 2>/dev/null ||
  { echo "run-tests.sh: $python cannot create virtual environments; install python3-venv" >&2; exit 1; }

started=$(date +%s)
wheel="${WHEEL:-$("$python_dir/build-wheel.sh" | tail -n 1)}"
echo "run-tests.sh: testing $wheel (built in $(( $(date +%s) - started )) s)"

# The emulator is installed where integration-tests/scripts/kinesis-mock.sh installs it (both run the package's
# _emulator.py), so it is fetched once.
export PYSPARK_KINESIS_HOME="${PYSPARK_KINESIS_HOME:-$root/.emulators}"
export SPARK_LOCAL_IP=127.0.0.1
failed=()
for version in "${versions[@]}"; do
  venv="$python_dir/.venv-pyspark-$version"
  step=$(date +%s)
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "pyspark==$version" "$wheel[test]"
  echo "run-tests.sh: pyspark $version installed in $venv in $(( $(date +%s) - step )) s; running pytest"
  set +e
  # shellcheck disable=SC2086 # PYTEST_ARGS: arguments split on spaces
  (cd "$python_dir" && "$venv/bin/python" -m pytest -p no:cacheprovider --durations=5 ${PYTEST_ARGS:-tests})
  status=$?
  set -e
  # pytest exits 5 when it collected no test: that is a failure here, not a pass.
  if [ "$status" -ne 0 ]; then
    failed+=("pyspark $version (pytest exit $status)")
  fi
  echo "run-tests.sh: pyspark $version done in $(( $(date +%s) - step )) s (pytest exit $status)"
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "run-tests.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "run-tests.sh: all Python suites passed (${versions[*]}) in $(( $(date +%s) - started )) s"
