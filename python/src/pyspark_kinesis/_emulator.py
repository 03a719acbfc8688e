"""kinesis-mock, the Kinesis emulator, run on 127.0.0.1 for the demo and the tests.

It is the npm package ``kinesis-local`` (the Scala.js build of kinesis-mock, the engine LocalStack runs for
Kinesis), installed with npm into a cache folder and started with Node, listening on loopback only.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Dict, Optional, Type

#: The emulator release; the repository's integration-tests/scripts/kinesis-mock.sh pins the same one.
KINESIS_LOCAL_VERSION = "0.6.2"

#: Credentials and region the emulator accepts (it checks that requests are signed, not by whom).
ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
REGION = "us-east-1"

_PRELOAD = Path(__file__).resolve().parent / "resources" / "bind-loopback.js"


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


def _accepts_connections(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def default_home() -> Path:
    """Where kinesis-local is installed: ``$PYSPARK_KINESIS_HOME`` or ``~/.cache/pyspark-kinesis``."""
    return Path(os.environ.get("PYSPARK_KINESIS_HOME", Path.home() / ".cache" / "pyspark-kinesis"))


class KinesisMock:
    """A kinesis-mock process on free loopback ports; a context manager that stops it on exit.

    It serves the same streams on two ports: plain HTTP at :attr:`endpoint` (for boto3 and the source) and HTTPS
    with a self-signed certificate at :attr:`tls_endpoint` (for the sink, whose Kinesis Producer Library speaks
    HTTPS only; give it ``kinesis.verifyCertificate=false``).

    >>> with KinesisMock() as endpoint:  # doctest: +SKIP
    ...     boto3.client("kinesis", endpoint_url=endpoint, region_name=REGION, ...)
    """

    def __init__(self, home: Optional[Path] = None, start_timeout: float = 60.0) -> None:
        self.home = (home or default_home()) / "kinesis-mock"
        self.start_timeout = start_timeout
        self.process: Optional[subprocess.Popen[bytes]] = None
        self.endpoint = ""
        self.tls_endpoint = ""
        self.log = self.home / "kinesis-mock.log"

    def install(self) -> Path:
        """Installs kinesis-local with npm unless that version is already there; returns its main.js."""
        _require("node", "Node.js runs the local Kinesis emulator (kinesis-mock)")
        package = self.home / "node_modules" / "kinesis-local"
        self.home.mkdir(parents=True, exist_ok=True)
        with open(self.home / "install.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be installing into the same folder
            manifest = package / "package.json"
            if manifest.is_file() and json.loads(manifest.read_text())["version"] == KINESIS_LOCAL_VERSION:
                return package / "main.js"
            npm = _require("npm", "npm installs the local Kinesis emulator (kinesis-mock)")
            print(f"Installing the Kinesis emulator (npm kinesis-local@{KINESIS_LOCAL_VERSION}) into {self.home} ...")
            done = subprocess.run(
                [npm, "install", "--prefix", str(self.home), "--no-audit", "--no-fund", "--no-save",
                 f"kinesis-local@{KINESIS_LOCAL_VERSION}"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
            )
            if done.returncode != 0 or not manifest.is_file():
                raise RuntimeError(
                    f"npm could not install kinesis-local@{KINESIS_LOCAL_VERSION} (it needs the npm registry):\n"
                    + done.stdout.decode(errors="replace")[-2000:]
                )
        return package / "main.js"

    def start(self) -> str:
        """Starts the emulator and waits until it answers on both ports; returns its plain endpoint,
        ``http://127.0.0.1:<port>`` (the TLS one, ``https://127.0.0.1:<port>``, is then in :attr:`tls_endpoint`)."""
        main_js = self.install()
        plain, tls = _free_port(), _free_port()
        env: Dict[str, str] = dict(
            os.environ,
            KINESIS_MOCK_CERT_PATH=str(main_js.parent / "server.json"),
            KINESIS_MOCK_PLAIN_PORT=str(plain),
            KINESIS_MOCK_TLS_PORT=str(tls),
            CREATE_STREAM_DURATION="50ms",
            DELETE_STREAM_DURATION="50ms",
            LOG_LEVEL="WARN",
        )
        with open(self.log, "wb") as log:
            # A session of its own: Ctrl-C in the terminal reaches the demo, which then stops the emulator itself.
            self.process = subprocess.Popen(
                [_require("node", "Node.js runs the emulator"), "-r", str(_PRELOAD), str(main_js)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
            )
        self.endpoint, self.tls_endpoint = f"http://127.0.0.1:{plain}", f"https://127.0.0.1:{tls}"
        deadline = time.monotonic() + self.start_timeout
        while not (self.answers() and _accepts_connections(tls)):
            if self.process.poll() is not None:
                raise RuntimeError(f"kinesis-mock exited during start-up; see {self.log}:\n{self._log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"kinesis-mock did not answer on {self.endpoint} within {self.start_timeout} s")
            time.sleep(0.2)
        return self.endpoint

    def answers(self) -> bool:
        """True when the emulator answers a ListStreams call (it checks for a signature, not its validity)."""
        request = urllib.request.Request(
            self.endpoint, data=b"{}", method="POST",
            headers={
                "Content-Type": "application/x-amz-json-1.1",
                "X-Amz-Target": "Kinesis_20131202.ListStreams",
                "X-Amz-Date": time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()),
                "Authorization": f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY_ID}/20260101/{REGION}/kinesis/"
                "aws4_request, SignedHeaders=host, Signature=0",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
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
