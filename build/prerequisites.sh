#!/usr/bin/env bash
# Installs what bin/demo, bin/test and .ci/run need and a fresh machine lacks: a JDK 17, Maven (it fetches the
# sbt launcher), Node.js and npm (they run the kinesis-mock emulator), curl (it checks that the emulator answers),
# Python 3 with venv, and a strip tool for the KPL's aarch64 daemon (project/KplNatives.scala). Everything else
# (sbt, Spark, pyspark, the emulator) the scripts fetch themselves.
#   build/prerequisites.sh CALLER     CALLER names the script in messages (bin/demo, bin/test, .ci/run)
# Does nothing when all is there. On Debian/Ubuntu it says what it installs and runs apt-get, through sudo when
# not root (the only time it asks for root); elsewhere it prints the one command to run and fails.
set -euo pipefail
caller="${1:-build/prerequisites.sh}"
python="${PYTHON:-python3}"

missing=()
command -v java >/dev/null || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || missing+=(maven)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
command -v curl >/dev/null || missing+=(curl)
if ! command -v "$python" >/dev/null; then
  missing+=(python3 python3-venv)
elif ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
  missing+=(python3-venv)
fi
command -v aarch64-linux-gnu-strip >/dev/null || command -v llvm-strip >/dev/null ||
  missing+=(binutils-aarch64-linux-gnu)
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null; then
  echo "$caller: missing: ${missing[*]} (Debian package names). Install them, then run $caller again:" >&2
  if [ "$(uname -s)" = Darwin ]; then
    echo "  brew install openjdk@17 maven node curl python llvm" >&2
  else
    echo "  a JDK 17, Maven, Node.js with npm, curl, Python 3.9+ with venv, and binutils for aarch64 (or llvm)" >&2
  fi
  exit 1
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || {
    echo "$caller: missing ${missing[*]}; as root run: apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
  }
  as_root=(sudo)
fi
echo "$caller: installing ${missing[*]} with apt-get${as_root:+ (through sudo: it may ask for your password)}" >&2
"${as_root[@]}" apt-get update -q >&2
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
