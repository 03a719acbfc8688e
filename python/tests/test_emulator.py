"""kinesis-mock as the package starts it: in-process for the demo and the tests, and as the command the repository's
scripts run (integration-tests/scripts/kinesis-mock.sh runs this module's file with the standard library only)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Dict, Iterator, List

import pytest

from pyspark_kinesis import _emulator
from pyspark_kinesis._emulator import KinesisMock


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def listening_port() -> Iterator[int]:
    """A loopback port some other process listens on, as a JVM or another emulator would."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        yield int(taken.getsockname()[1])


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as status:
            return "zombie" not in status.read().lower()
    except OSError:
        return False


def command(args: List[str], env: Dict[str, str]) -> "subprocess.CompletedProcess[str]":
    # The file itself, as kinesis-mock.sh runs it, from a folder where the package cannot be imported.
    return subprocess.run(
        [sys.executable, _emulator.__file__, *args], capture_output=True, text=True, timeout=300, env=env, cwd="/"
    )


def test_given_the_module_run_as_a_command_when_started_then_it_serves_after_the_command_until_stop() -> None:
    # Given ports of this test's own
    port, tls_port = free_port(), free_port()
    env = dict(os.environ, KINESIS_MOCK_PORT=str(port), KINESIS_MOCK_TLS_PORT=str(tls_port))
    # When the command starts the emulator
    started = command(["start"], env)
    try:
        # Then it printed the endpoint, and the emulator outlived the command on both ports
        assert started.returncode == 0, started.stderr
        assert started.stdout == f"http://127.0.0.1:{port}\n"
        mock = KinesisMock(port=port, tls_port=tls_port)
        assert mock.answers() and mock.answers(tls=True)
        assert command(["status"], env).returncode == 0
        # And starting again reuses it
        again = command(["start"], env)
        assert (again.returncode, again.stdout) == (0, started.stdout) and "already running" in again.stderr
    finally:
        stopped = command(["stop"], env)
    # And stop ends it: status says not running (exit 3)
    assert stopped.returncode == 0, stopped.stderr
    status = command(["status"], env)
    assert status.returncode == 3 and f"not running on port {port}" in status.stderr


def test_given_a_port_in_use_when_the_command_starts_then_it_fails_naming_the_port() -> None:
    # Given something listening on the TLS port
    with listening_port() as tls_port:
        env = dict(os.environ, KINESIS_MOCK_PORT=str(free_port()), KINESIS_MOCK_TLS_PORT=str(tls_port))
        # When the command starts the emulator
        done = command(["start"], env)
    # Then it fails and says which port to change
    assert done.returncode == 1 and done.stdout == ""
    assert f"port {tls_port} on 127.0.0.1 is already in use; choose another port" in done.stderr


def test_given_a_started_emulator_when_stopped_then_sigterm_ends_it_without_a_kill() -> None:
    # Given an emulator that was probed on both ports until it answered
    mock = KinesisMock()
    mock.start()
    process = mock.process
    assert process is not None
    # When it is stopped
    began = time.monotonic()
    mock.stop()
    # Then SIGTERM ended it at once: no probe connection was left open to hold it up until the SIGKILL
    assert process.returncode in (-signal.SIGTERM, 128 + signal.SIGTERM), process.returncode  # not -SIGKILL
    assert time.monotonic() - began < 5
    assert not alive(process.pid)


def test_given_a_picked_port_taken_before_the_emulator_binds_it_when_started_then_it_starts_on_other_ports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given another process that binds the first free port the emulator picks, after the emulator checked it (the
    # race with a JVM or another emulator that bin/test's parallel lanes run into)
    with listening_port() as busy:
        picks = iter([busy])
        monkeypatch.setattr(_emulator, "_free_port", lambda: next(picks, None) or free_port())
        monkeypatch.setattr(_emulator, "_port_taken", lambda port: False)
        mock = KinesisMock()
        # When it starts
        try:
            endpoint = mock.start()
            # Then it answers on ports other than the taken one
            assert busy not in (mock.port, mock.tls_port)
            assert endpoint == f"http://127.0.0.1:{mock.port}"
            assert mock.answers() and mock.answers(tls=True)
        finally:
            mock.stop()


def test_given_a_port_of_its_own_taken_when_started_then_it_fails_without_trying_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a port the caller chose, bound by another process after the emulator checked it
    with listening_port() as busy:
        monkeypatch.setattr(_emulator, "_port_taken", lambda port: False)
        mock = KinesisMock(port=busy, tls_port=free_port())
        # When it starts, then it fails on that port and says why
        with pytest.raises(RuntimeError, match="EADDRINUSE"):
            mock.start()
        assert mock.port == busy
