#!/usr/bin/env python3
"""An HTTPS front for kinesis-mock's plain port that answers ``Expect: 100-continue`` as AWS endpoints do.

Usage: continue-front.py PLAIN_PORT [--pass-expect]

kinesis-mock never answers ``Expect: 100-continue``; the KPL's native HTTP client (libcurl under the AWS SDK for
C++) asks for it on every request and, unanswered, waits its one-second timeout before it sends the body. This front
terminates TLS with a throw-away self-signed certificate (so the KPL needs ``kinesis.verifyCertificate=false``, as
for the emulator itself), answers ``100 Continue`` at once, drops the ``Expect`` header and forwards each request to
the emulator's plain port on 127.0.0.1. With ``--pass-expect`` it forwards the header and answers nothing, as the
emulator does. It prints the port it listens on (a free one), then one line per distinct (operation, Expect) pair it
sees. For bench/README.md's KPL part (``bench/run --only kpl RECORDS INTERVAL_MS PORT``); not for production.
"""

from __future__ import annotations

import socket
import ssl
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Dict, Set, Tuple


def _certificate(folder: Path) -> ssl.SSLContext:
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert)]
        + ["-days", "1", "-subj", "/CN=127.0.0.1"],
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    context.set_alpn_protocols(["http/1.1"])
    return context


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        try:
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class Front:
    def __init__(self, plain_port: int, answer_continue: bool) -> None:
        self.upstream = ("127.0.0.1", plain_port)
        self.answer_continue = answer_continue
        self.seen: Set[Tuple[str, str]] = set()
        self.lock = threading.Lock()

    def serve(self, client: socket.socket) -> None:
        upstream = socket.create_connection(self.upstream)
        threading.Thread(target=_pump, args=(upstream, client), daemon=True).start()
        buffered = b""
        try:
            while data := client.recv(65536):
                buffered += data
                while b"\r\n\r\n" in buffered:
                    buffered = self._forward(client, upstream, buffered)
        except OSError:
            pass
        finally:
            upstream.close()

    def _forward(self, client: socket.socket, upstream: socket.socket, buffered: bytes) -> bytes:
        """Forwards the request at the start of `buffered` once its body is in; returns what follows it."""
        head, rest = buffered.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers: Dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        expect = headers.get("expect", "")
        self._note(headers.get("x-amz-target", "?"), expect or "-")
        if self.answer_continue and expect.lower() == "100-continue":
            client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            head = "\r\n".join(line for line in lines if not line.lower().startswith("expect:")).encode("latin-1")
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            data = client.recv(65536)
            if not data:
                break
            rest += data
        upstream.sendall(head + b"\r\n\r\n" + rest[:length])
        return rest[length:]

    def _note(self, operation: str, expect: str) -> None:
        with self.lock:
            if (operation, expect) not in self.seen:
                self.seen.add((operation, expect))
                print(f"{operation} Expect: {expect}", flush=True)


def main() -> None:
    plain_port = int(sys.argv[1])
    front = Front(plain_port, answer_continue="--pass-expect" not in sys.argv[2:])
    with tempfile.TemporaryDirectory() as folder:
        context = _certificate(Path(folder))
    listener = socket.create_server(("127.0.0.1", 0))
    print(f"port {listener.getsockname()[1]}", flush=True)
    while True:
        connection, _ = listener.accept()
        try:
            secured = context.wrap_socket(connection, server_side=True)
        except (OSError, ssl.SSLError):
            connection.close()
            continue
        threading.Thread(target=front.serve, args=(secured,), daemon=True).start()


if __name__ == "__main__":
    main()
