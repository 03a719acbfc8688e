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
# Start, stop and status come from emulator-lib.sh.
set -euo pipefail

readonly name="moto" marker="moto_server"
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

# True when moto's own API answers on the port.
answers() {
  [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/moto-api/data.json" 2>/dev/null)" = 200 ]
}

launch() {
  nohup "$venv/bin/moto_server" -H 127.0.0.1 -p "$port" </dev/null >"$log_file" 2>&1 &
}

source "$script_dir/emulator-lib.sh"
dispatch "$@"
