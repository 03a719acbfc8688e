"""kinesis-mock, the Kinesis emulator, run on 127.0.0.1 for the demo and the tests.

It is the npm package ``kinesis-local`` (the Scala.js build of kinesis-mock, the engine LocalStack runs for
Kinesis), installed with npm into a cache folder and started with Node, listening on loopback only.

This module is the one place that pins, installs, starts and stops it: the demo and the Python tests use
:class:`KinesisMock`; the repository's ``integration-tests/scripts/kinesis-mock.sh`` (bin/test, the Scala integration
tests, bench/run) runs this file as a command, ``python _emulator.py {install|start|stop|status}`` (see
:func:`main`). Run as a file it imports nothing but the standard library, so it needs no built package.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Dict, List, Optional, Type

#: The emulator release (npm kinesis-local), for the demo, the Python tests and the repository's scripts alike.
KINESIS_LOCAL_VERSION = "0.6.2"

#: Credentials and region the emulator accepts (it checks that requests are signed, not by whom).
ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
REGION = "us-east-1"

#: kinesis-mock's settings, each overridable from the environment: durations of 50-100 ms instead of the default
#: 500 ms keep stream creation and resharding fast; the shard limit leaves room for many tests' streams at once.
SETTINGS: Dict[str, str] = {
    "CREATE_STREAM_DURATION": "50ms",
    "DELETE_STREAM_DURATION": "50ms",
    "SPLIT_SHARD_DURATION": "100ms",
    "MERGE_SHARDS_DURATION": "100ms",
    "UPDATE_SHARD_COUNT_DURATION": "100ms",
    "REGISTER_STREAM_CONSUMER_DURATION": "100ms",
    "SHARD_LIMIT": "10000",
    "LOG_LEVEL": "WARN",
}

#: Node preload that makes the emulator listen on 127.0.0.1 (kinesis-mock hard-codes 0.0.0.0).
_PRELOAD = Path(__file__).resolve().parent / "resources" / "bind-loopback.js"
_PACKAGE = "kinesis-local"  # also how a process is recognised as the emulator (its main.js path holds it)
_INSTALL_LOCK_TIMEOUT = 300.0
_NPM_TIMEOUT = 600.0
#: Starts tried on fresh free ports when another process took a chosen port before the emulator bound it.
_PORT_ATTEMPTS = 3


class _PortLost(RuntimeError):
    """The emulator exited because another process bound one of its ports first."""


class PrerequisiteMissing(RuntimeError):
    """A program the emulator needs (Node.js, npm) is not installed; the message says how to install it."""


def _require(program: str, why: str) -> str:
    path = shutil.which(program)
    if path is None:
        raise PrerequisiteMissing(
            f"'{program}' was not found: {why}. Install Node.js and npm (Debian/Ubuntu: 'apt-get install nodejs "
            "npm'; macOS: 'brew install node'; or see https://nodejs.org), then run again."
        )
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port_taken(port: int) -> bool:
    """True when something listens on the loopback port. Tried by binding, as the emulator will (a connection
    left without a TLS handshake would keep another kinesis-mock listening there from exiting on SIGTERM)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return False
        except OSError:
            return True


def _unverified_tls() -> ssl.SSLContext:
    """For the emulator's TLS port, whose certificate is self-signed."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def _log(message: str) -> None:
    print(f"kinesis-mock: {message}", file=sys.stderr, flush=True)


def default_home() -> Path:
    """Where kinesis-local is installed: ``$PYSPARK_KINESIS_HOME`` or ``~/.cache/pyspark-kinesis``."""
    return Path(os.environ.get("PYSPARK_KINESIS_HOME", Path.home() / ".cache" / "pyspark-kinesis"))


class KinesisMock:
    """A kinesis-mock process on loopback ports (free ones unless given); a context manager that stops it on exit.

    It serves the same streams on two ports: plain HTTP at :attr:`endpoint` (for boto3 and the source) and HTTPS
    with a self-signed certificate at :attr:`tls_endpoint` (for the sink, whose Kinesis Producer Library speaks
    HTTPS only; give it ``kinesis.verifyCertificate=false``).

    >>> with KinesisMock() as endpoint:  # doctest: +SKIP
    ...     boto3.client("kinesis", endpoint_url=endpoint, region_name=REGION, ...)
    """

    def __init__(
        self, home: Optional[Path] = None, start_timeout: float = 60.0, port: int = 0, tls_port: int = 0
    ) -> None:
        self.home = (home or default_home()) / "kinesis-mock"
        self.start_timeout = start_timeout
        #: Ports picked here (none given) may be taken by another process before the emulator binds them; then
        #: :meth:`start` picks others.
        self.picks_ports = not port and not tls_port
        self.process: Optional[subprocess.Popen[bytes]] = None
        self._use_ports(port or _free_port(), tls_port or _free_port())

    def _use_ports(self, port: int, tls_port: int) -> None:
        self.port = port
        self.tls_port = tls_port
        self.endpoint = f"http://127.0.0.1:{port}"
        self.tls_endpoint = f"https://127.0.0.1:{tls_port}"
        #: Named after the plain port, so that emulators side by side keep logs of their own.
        self.log = self.home / f"kinesis-mock-{port}.log"

    def install(self) -> Path:
        """Installs kinesis-local with npm unless that version is already there; returns its main.js."""
        _require("node", "Node.js runs the local Kinesis emulator (kinesis-mock)")
        package = self.home / "node_modules" / _PACKAGE
        self.home.mkdir(parents=True, exist_ok=True)
        with open(self.home / "install.lock", "w") as lock:
            # Another process (a test JVM of the other Scala line, a demo) may be installing into the same folder.
            deadline = time.monotonic() + _INSTALL_LOCK_TIMEOUT
            while True:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise RuntimeError(
                            f"timed out after {_INSTALL_LOCK_TIMEOUT:.0f} s waiting for another "
                            f"install of kinesis-local to finish (lock {lock.name})"
                        ) from None
                    time.sleep(0.2)
            manifest = package / "package.json"
            if manifest.is_file() and json.loads(manifest.read_text())["version"] == KINESIS_LOCAL_VERSION:
                return package / "main.js"
            npm = _require("npm", "npm installs the local Kinesis emulator (kinesis-mock)")
            _log(f"installing the Kinesis emulator (npm {_PACKAGE}@{KINESIS_LOCAL_VERSION}) into {self.home} ...")
            try:
                done = subprocess.run(
                    [
                        npm,
                        "install",
                        "--prefix",
                        str(self.home),
                        "--no-audit",
                        "--no-fund",
                        "--no-save",
                        f"{_PACKAGE}@{KINESIS_LOCAL_VERSION}",
                    ],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    check=False,
                    timeout=_NPM_TIMEOUT,
                )
            except subprocess.TimeoutExpired as e:
                raise RuntimeError(
                    f"npm did not install {_PACKAGE}@{KINESIS_LOCAL_VERSION} within "
                    f"{_NPM_TIMEOUT:.0f} s (it needs the npm registry)"
                ) from e
            if done.returncode != 0 or not manifest.is_file():
                raise RuntimeError(
                    f"npm could not install {_PACKAGE}@{KINESIS_LOCAL_VERSION} (it needs the npm registry):\n"
                    + done.stdout.decode(errors="replace")[-2000:]
                )
        return package / "main.js"

    def start(self) -> str:
        """Starts the emulator and waits until it answers on both ports; returns its plain endpoint,
        ``http://127.0.0.1:<port>`` (the TLS one, ``https://127.0.0.1:<port>``, is then in :attr:`tls_endpoint`).

        With ports it picked itself, a port another process bound in the meantime (a free port is only free until
        somebody binds it) means another try on fresh ports, up to three starts."""
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            try:
                self.launch()
                self.await_ready()
                return self.endpoint
            except _PortLost:
                if not self.picks_ports or attempt == _PORT_ATTEMPTS:
                    raise
                _log(f"port {self.port} or {self.tls_port} was taken before the emulator bound it; trying others")
                self._use_ports(_free_port(), _free_port())
        raise AssertionError("unreachable")

    def launch(self) -> int:
        """Installs if needed and starts the process without waiting for it; returns its pid."""
        main_js = self.install()
        for port in (self.port, self.tls_port):
            if _port_taken(port):
                raise _PortLost(f"port {port} on 127.0.0.1 is already in use; choose another port")
        env = dict(os.environ)
        for name, value in SETTINGS.items():
            env.setdefault(name, value)
        env.update(
            KINESIS_MOCK_CERT_PATH=str(main_js.parent / "server.json"),
            KINESIS_MOCK_PLAIN_PORT=str(self.port),
            KINESIS_MOCK_TLS_PORT=str(self.tls_port),
        )
        with open(self.log, "wb") as log:
            # A session of its own: Ctrl-C in the terminal reaches the demo, which then stops the emulator itself,
            # and the emulator outlives the command that started it for kinesis-mock.sh.
            self.process = subprocess.Popen(
                [_require("node", "Node.js runs the emulator"), "-r", str(_PRELOAD), str(main_js)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        return self.process.pid

    def await_ready(self) -> None:
        """Waits until the launched emulator answers on both ports; stops it when it does not in time."""
        deadline = time.monotonic() + self.start_timeout
        while not (self.answers() and self.answers(tls=True)):
            if self.process is None or self.process.poll() is not None:
                tail = self._log_tail()
                lost = _PortLost if "EADDRINUSE" in tail else RuntimeError
                raise lost(f"kinesis-mock exited during start-up; see {self.log}:\n{tail}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"kinesis-mock did not answer on {self.endpoint} within {self.start_timeout} s "
                    f"(stopped it); see {self.log}:\n{self._log_tail()}"
                )
            time.sleep(0.2)

    def answers(self, tls: bool = False) -> bool:
        """True when the emulator answers a ListStreams call (it checks for a signature, not its validity) on the
        plain port, or with ``tls`` on the TLS port (its certificate is self-signed, so not checked)."""
        # A whole request, not a bare connection: a connection left without a TLS handshake keeps the emulator from
        # exiting on SIGTERM until it is killed.
        context = _unverified_tls() if tls else None
        request = urllib.request.Request(
            self.tls_endpoint if tls else self.endpoint,
            data=b"{}",
            method="POST",
            headers={
                "Content-Type": "application/x-amz-json-1.1",
                "X-Amz-Target": "Kinesis_20131202.ListStreams",
                "X-Amz-Date": time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()),
                "Authorization": f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY_ID}/20260101/{REGION}/kinesis/"
                "aws4_request, SignedHeaders=host, Signature=0",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=2, context=context) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, a bounded wait, then SIGKILL (an open connection can keep it from exiting)."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout)
        _drop_if_empty(self.log)

    def _log_tail(self) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-20:])
        except OSError:
            return ""

    def __enter__(self) -> str:
        return self.start()

    def __exit__(
        self, kind: Optional[Type[BaseException]], error: Optional[BaseException], trace: Optional[TracebackType]
    ) -> None:
        self.stop()


def _drop_if_empty(log: Path) -> None:
    """A log with warnings in it outlives the emulator, for whoever investigates them; an empty one goes."""
    try:
        if log.stat().st_size == 0:
            log.unlink()
    except OSError:
        pass


def _is_emulator(pid: int) -> bool:
    """True when the process is alive and is kinesis-mock (pids get reused)."""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:  # no /proc (macOS)
        command = subprocess.run(
            ["ps", "-o", "command=", "-p", str(pid)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False
        ).stdout.decode(errors="replace")
    return _PACKAGE in command


def _signal(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except ProcessLookupError:  # it exited meanwhile
        pass


class _Background:
    """The emulator that outlives the command that started it (``main``): its pid in a file named after the port."""

    def __init__(self, mock: KinesisMock, stop_timeout: float) -> None:
        self.mock = mock
        self.stop_timeout = stop_timeout
        self.pid_file = mock.home / f"kinesis-mock-{mock.port}.pid"

    def running_pid(self) -> Optional[int]:
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if _is_emulator(pid) else None

    def start(self) -> int:
        pid = self.running_pid()
        if pid is not None:
            if not self.mock.answers():
                _log(
                    f"kinesis-mock (pid {pid}) is running but does not answer on port {self.mock.port}; "
                    f"see {self.mock.log}"
                )
                return 1
            _log(f"already running (pid {pid}) on {self.mock.endpoint}")
            print(self.mock.endpoint)
            return 0
        self.mock.home.mkdir(parents=True, exist_ok=True)
        try:
            self.pid_file.write_text(str(self.mock.launch()))
            self.mock.await_ready()
        except BaseException:
            self.mock.stop()
            self.pid_file.unlink(missing_ok=True)
            raise
        _log(
            f"running (pid {self.mock.process.pid if self.mock.process else '?'}) on {self.mock.endpoint} "
            f"(and {self.mock.tls_endpoint}), log {self.mock.log}"
        )
        print(self.mock.endpoint)
        return 0

    def stop(self) -> int:
        pid = self.running_pid()
        self.pid_file.unlink(missing_ok=True)
        if pid is None:
            _log(f"not running on port {self.mock.port}")
            return 0
        _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + self.stop_timeout
        while _is_emulator(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if _is_emulator(pid):
            _log(f"pid {pid} still running {self.stop_timeout:.0f} s after SIGTERM; sending SIGKILL")
            _signal(pid, signal.SIGKILL)
        _drop_if_empty(self.mock.log)
        _log(f"stopped (pid {pid})")
        return 0

    def status(self) -> int:
        pid = self.running_pid()
        if pid is None:
            _log(f"not running on port {self.mock.port}")
            return 3
        if not self.mock.answers():
            _log(f"pid {pid} is alive but does not answer on {self.mock.endpoint}; see {self.mock.log}")
            return 1
        _log(f"running (pid {pid}) on {self.mock.endpoint}")
        return 0


def main(argv: Optional[List[str]] = None) -> int:
    """``python _emulator.py {install|start|stop|status}``: one kinesis-mock that outlives the command, for the
    repository's scripts. ``start`` installs if needed, starts, waits until it answers and prints the endpoint;
    ``stop`` sends SIGTERM, waits, then SIGKILL; ``status`` exits 0 when it runs, 3 when not.

    Environment: KINESIS_MOCK_PORT (plain HTTP, default 4568), KINESIS_MOCK_TLS_PORT (default 4567),
    KINESIS_MOCK_START_TIMEOUT / KINESIS_MOCK_STOP_TIMEOUT (seconds, default 60 / 10), PYSPARK_KINESIS_HOME (see
    :func:`default_home`), and kinesis-mock's own settings (:data:`SETTINGS`). The pid file and the log are named
    after the plain port, so several emulators can run side by side."""
    parser = argparse.ArgumentParser(prog="kinesis-mock", description=main.__doc__)
    parser.add_argument("command", choices=["install", "start", "stop", "status"])
    command = parser.parse_args(argv).command
    env = os.environ
    try:
        mock = KinesisMock(
            port=int(env.get("KINESIS_MOCK_PORT", "4568")),
            tls_port=int(env.get("KINESIS_MOCK_TLS_PORT", "4567")),
            start_timeout=float(env.get("KINESIS_MOCK_START_TIMEOUT", "60")),
        )
        background = _Background(mock, float(env.get("KINESIS_MOCK_STOP_TIMEOUT", "10")))
        if command == "install":
            mock.install()
            _log(f"{_PACKAGE}@{KINESIS_LOCAL_VERSION} installed in {mock.home}")
            return 0
        return {"start": background.start, "stop": background.stop, "status": background.status}[command]()
    except ValueError as e:
        _log(f"KINESIS_MOCK_PORT, KINESIS_MOCK_TLS_PORT and the timeouts must be numbers: {e}")
        return 2
    except RuntimeError as e:  # PrerequisiteMissing included
        _log(str(e))
        return 1


if __name__ == "__main__":
    sys.exit(main())
