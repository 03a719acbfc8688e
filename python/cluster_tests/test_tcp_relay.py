"""The TCP relay fan-out runs read through (no Spark): bytes pass both ways untouched, drop_all resets every relayed
connection, hold also refuses new ones until release, and stop leaves nothing running."""

from __future__ import annotations

import socket
import socketserver
import threading
from typing import Iterator

import pytest
from harness import TcpRelay


class Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while chunk := self.request.recv(65536):
            self.request.sendall(chunk)


@pytest.fixture
def upstream() -> Iterator[int]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Echo)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def echoed(relay: TcpRelay, data: bytes) -> socket.socket:
    """A connection through ``relay`` that has sent ``data`` and had it echoed back."""
    client = socket.create_connection(("127.0.0.1", relay.port), timeout=10)
    client.sendall(data)
    assert client.recv(len(data)) == data
    return client


def assert_reset(client: socket.socket) -> None:
    with pytest.raises(ConnectionResetError):
        client.sendall(b"x")
        client.recv(1)
    client.close()


def test_given_a_relayed_connection_when_dropped_then_the_client_sees_a_reset_and_a_new_one_works(
    upstream: int,
) -> None:
    # Given a relay in front of an echo server, and a client that has exchanged bytes through it
    relay = TcpRelay(upstream).start()
    client = echoed(relay, b"ping")
    # When the relay drops every connection
    assert relay.drop_all() == 2  # the client's side and the upstream side
    # Then the client's connection is reset, and a new connection through the relay works
    assert_reset(client)
    with echoed(relay, b"pong") as again:
        # And stopping the relay with a connection still open closes it, and the loop closes with no task left
        relay.stop()
        assert again.recv(1) == b""
    assert relay._loop.is_closed()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", relay.port), timeout=10)


def test_given_a_held_relay_then_no_connection_gets_through_until_it_is_released(upstream: int) -> None:
    # Given a relay in front of an echo server, and a client that has exchanged bytes through it
    relay = TcpRelay(upstream).start()
    try:
        client = echoed(relay, b"ping")
        # When the relay is held
        relay.hold()
        # Then the open connection is reset, and a new one is reset before any byte comes back
        assert_reset(client)
        assert_reset(socket.create_connection(("127.0.0.1", relay.port), timeout=10))
        # And once released, a new connection works again
        relay.release()
        echoed(relay, b"pong").close()
    finally:
        relay.stop()
