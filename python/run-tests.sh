#!/usr/bin/env bash
# The Python package's tests: builds the wheel, then for each pyspark line creates a fresh virtual environment,
# installs the built wheel (not the source tree) with pyspark and the test dependencies, and runs pytest there.
# The whole suite runs on the newest pyspark; the older lines run a smoke subset (attaching the JAR, reading,
# writing, payloads), since the options and the demo are the same Python code on every line and the JVM side of
# each line is tested in full by the Scala suites. Exits non-zero when a suite fails or runs no test.
#   python/run-tests.sh            build the wheel, prepare the environments, run the suites
#   python/run-tests.sh prepare    only create the environments with pyspark installed (network-bound: bin/test
#                                  runs it in the background while sbt compiles)
#
# Environment: PYSPARK_VERSIONS (full suite, default: the last release python/pyspark-versions lists),
# PYSPARK_SMOKE_VERSIONS (smoke subset, default: the others it lists), PYTEST_ARGS (what the full run runs, default
# tests; e.g. "tests/test_demo.py -k ctrl_c"), PYTEST_BESIDE (what a second pytest runs beside the full run, in the same
# environment once the wheel is installed: bin/test's cluster fault runs, "cluster_tests"; its output follows the full
# run's), PYTHON (default python3), WHEEL (a built wheel to test instead of
# building one), SPARK_KINESIS_SKIP_SBT (passed to build-wheel.sh: the JARs and options JSON were built already),
# KINESIS_MOCK_ENDPOINT (an emulator to use; otherwise the tests start one) with its TLS endpoint for the sink in
# KINESIS_MOCK_TLS_ENDPOINT (default https://127.0.0.1:$KINESIS_MOCK_TLS_PORT, 4567), MOTO_ENDPOINT (moto's server, S3
# for the JAR-from-S3 test; otherwise it starts one through integration-tests/scripts/moto.sh). The Maven tests resolve
# the folder repository build-wheel.sh (or bin/test) publishes to, python/build/maven-repo.
set -euo pipefail
python_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$python_dir/.." && pwd)"
python="${PYTHON:-python3}"
listed="$(grep -v '^#' "$python_dir/pyspark-versions" | xargs)"
read -r -a full_versions <<< "${PYSPARK_VERSIONS-${listed##* }}"
others=""; [[ "$listed" != *" "* ]] || others="${listed% *}"
read -r -a smoke_versions <<< "${PYSPARK_SMOKE_VERSIONS-$others}"
# The install paths differ by Spark line too: the JAR from S3 beside Hadoop's AWS SDK, the Maven coordinates. The Glue
# Schema Registry's end-to-end test (every format written, put into kinesis-mock, read and decoded) is the Spark 3.5
# line's, whose integration suites run a smoke subset without it.
smoke_tests=(tests/test_attach.py tests/test_read_emulator.py tests/test_write_emulator.py
  tests/test_streams_and_batch_reads.py tests/test_payloads.py tests/test_glue_schema_registry.py
  tests/test_jar_from_s3.py
  "tests/test_maven_coordinates.py::test_given_the_published_pom_then_it_has_what_maven_central_asks_and_no_transitive_dependencies"
  "tests/test_maven_coordinates.py::test_given_the_coordinates_when_spark_submit_resolves_them_with_packages_then_a_stream_is_read")

command -v "$python" >/dev/null || { echo "run-tests.sh: $python not found; install Python 3.9 or newer" >&2; exit 1; }
"$python" -c 'import venv, ensurepip' 2>/dev/null ||
  { echo "run-tests.sh: $python cannot create virtual environments; install python3-venv" >&2; exit 1; }

venv_of() { echo "$python_dir/.venv-pyspark-$1"; }
# A fresh environment with pyspark installed; the marker says it was made for this version by this step.
prepare() {
  local version="$1" venv step
  venv="$(venv_of "$version")"
  step=$(date +%s)
  rm -rf "$venv"
  "$python" -m venv "$venv"
  # With Spark Connect's client dependencies: the Connect tests run clients of their own (tests/connect_client.py).
  "$venv/bin/pip" install --quiet --disable-pip-version-check "pyspark[connect]==$version"
  echo "$version connect" > "$venv/.prepared"
  echo "run-tests.sh: pyspark $version installed in $venv in $(( $(date +%s) - step )) s"
}

if [ "${1:-}" = prepare ]; then
  for version in "${full_versions[@]}" "${smoke_versions[@]}"; do prepare "$version"; done
  exit 0
fi

started=$(date +%s)
wheel="${WHEEL:-$("$python_dir/build-wheel.sh" | tail -n 1)}"
echo "run-tests.sh: testing $wheel (built in $(( $(date +%s) - started )) s)"

# Every JVM the tests start (pyspark's, spark-submit's, the cluster's) compiles with C1 only and collects with the serial
# collector, as build.sbt's test JVMs do: they mostly wait, and on two cores that takes a third less CPU.
export JAVA_TOOL_OPTIONS="${JAVA_TOOL_OPTIONS--XX:TieredStopAtLevel=1 -XX:+UseSerialGC}"
# The emulator is installed where integration-tests/scripts/kinesis-mock.sh installs it, so it is fetched once.
export PYSPARK_KINESIS_HOME="${PYSPARK_KINESIS_HOME:-$root/.emulators}"
export SPARK_LOCAL_IP=127.0.0.1
failed=()
run_suite() {
  local version="$1" kind="$2" venv step status
  shift 2
  venv="$(venv_of "$version")"
  step=$(date +%s)
  [ "$(cat "$venv/.prepared" 2>/dev/null)" = "$version connect" ] || prepare "$version"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$wheel[test]"
  # A wheel of the same version as one installed before (a re-run on this machine) is otherwise taken as installed.
  "$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
  if [ "$kind" = full ] && [ -n "${PYTEST_BESIDE:-}" ] && [ -z "$beside_pid" ]; then
    echo "run-tests.sh: pyspark $version: running $PYTEST_BESIDE beside the suites (its output follows them)"
    mkdir -p "$python_dir/build"
    # shellcheck disable=SC2086 # PYTEST_BESIDE: arguments split on spaces
    (
      set +e
      started_beside=$(date +%s)
      cd "$python_dir" && "$venv/bin/python" -m pytest -p no:cacheprovider --durations=5 $PYTEST_BESIDE
      status=$?
      echo "run-tests.sh: pyspark $version $PYTEST_BESIDE done in $(( $(date +%s) - started_beside )) s (pytest exit $status)"
      exit $status
    ) > "$beside_log" 2>&1 &
    beside_pid=$!
  fi
  echo "run-tests.sh: pyspark $version: running the $kind suite"
  set +e
  (cd "$python_dir" && "$venv/bin/python" -m pytest -p no:cacheprovider --durations=5 "$@")
  status=$?
  set -e
  # pytest exits 5 when it collected no test: that is a failure here, not a pass.
  [ "$status" -eq 0 ] || failed+=("pyspark $version $kind (pytest exit $status)")
  echo "run-tests.sh: pyspark $version $kind suite done in $(( $(date +%s) - step )) s (pytest exit $status)"
}
# The run beside the first full suite: started by run_suite, waited for once every suite has run.
beside_pid=""
beside_log="$python_dir/build/pytest-beside.log"
# shellcheck disable=SC2086 # PYTEST_ARGS: arguments split on spaces
for version in "${full_versions[@]}"; do run_suite "$version" full ${PYTEST_ARGS:-tests}; done
for version in "${smoke_versions[@]}"; do run_suite "$version" smoke "${smoke_tests[@]}"; done
if [ -n "$beside_pid" ]; then
  set +e
  wait "$beside_pid"
  status=$?
  set -e
  cat "$beside_log"
  [ "$status" -eq 0 ] || failed+=("$PYTEST_BESIDE (pytest exit $status)")
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "run-tests.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "run-tests.sh: all Python suites passed (full: ${full_versions[*]}; smoke: ${smoke_versions[*]})" \
  "in $(( $(date +%s) - started )) s"
