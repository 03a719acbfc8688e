"""An HTTP/1.1 proxy on 127.0.0.1 in front of kinesis-mock that injects the faults AWS shows, seeded and replayable.

Every request is forwarded to the emulator unless the injector decides otherwise. What it decides for the n-th
request depends only on the seed, n and the faults switched on at that moment (a storm, an outage), so a run with
the same seed and the same schedule of switches injects the same faults into the same requests. Faults answer as
Kinesis does: a throttle is HTTP 400 with ``x-amzn-ErrorType`` and an error body in the protocol the client spoke
(CBOR for the Java SDK's default ``application/x-amz-cbor-1.1``, JSON otherwise), naming
``ProvisionedThroughputExceededException`` for GetRecords and ``LimitExceededException`` for the control calls.
"""

from __future__ import annotations

import asyncio
import collections
import json
import random
import socket
import struct
import threading
import time
from typing import Dict, Optional, Set, Tuple

#: The kinds of fault counted in :attr:`FaultInjector.counts`.
KINDS = ("throttle", "http500", "http503", "dropped", "slow", "outage", "reset")

_CBOR = "application/x-amz-cbor-1.1"


def cbor_text_map(fields: Dict[str, str]) -> bytes:
    """The CBOR encoding (RFC 8949) of a map from text to text: all an AWS error body holds."""

    def head(major: int, length: int) -> bytes:
        if length < 24:
            return bytes([major << 5 | length])
        if length < 256:
            return bytes([major << 5 | 24, length])
        return bytes([major << 5 | 25]) + struct.pack(">H", length)

    out = bytearray(head(5, len(fields)))
    for key, value in fields.items():
        for text in (key, value):
            raw = text.encode()
            out += head(3, len(raw)) + raw
    return bytes(out)


def error_response(status: int, error_type: str, message: str, content_type: str) -> bytes:
    """A whole HTTP/1.1 response as Kinesis sends an error: the type in the header and in the body's ``__type``."""
    fields = {"__type": error_type, "message": message}
    cbor = content_type.startswith(_CBOR)
    body = cbor_text_map(fields) if cbor else json.dumps(fields).encode()
    reason = {400: "Bad Request", 500: "Internal Server Error", 503: "Service Unavailable"}[status]
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        f"Content-Type: {_CBOR if cbor else 'application/x-amz-json-1.1'}\r\n"
        f"x-amzn-ErrorType: {error_type}\r\n"
        f"x-amzn-RequestId: injected-{random.getrandbits(32):08x}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def _read_message(reader: asyncio.StreamReader, response: bool) -> Optional[Tuple[bytes, bytes]]:
    """One HTTP/1.1 message (head, body) from the stream, or None at a clean end of stream before it starts."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if not e.partial:
            return None
        raise ConnectionError("the connection closed inside a message head") from e
    headers = _headers(head)
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = bytearray()
        while True:
            size_line = await reader.readuntil(b"\r\n")
            body += size_line
            size = int(size_line.split(b";")[0].strip(), 16)
            body += await reader.readexactly(size + 2)
            if size == 0:
                return head, bytes(body)
    if "content-length" in headers:
        return head, await reader.readexactly(int(headers["content-length"]))
    if response and not head.split(b" ", 2)[1].startswith((b"1", b"204", b"304")):
        return head, await reader.read()  # framed by the end of the connection
    return head, b""


def _headers(head: bytes) -> Dict[str, str]:
    lines = head.decode("latin-1").split("\r\n")[1:]
    return {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines if ":" in line)}


class FaultInjector:
    """The proxy, run on an event loop in a daemon thread; its switches may be flipped from any thread.

    Background faults, each with its own probability per request while no storm or outage is on: a burst of HTTP
    500 or 503 answers (``burst`` requests in a row), a connection dropped after the request was read, an answer
    delayed by ``slow_seconds``. :meth:`storm` throttles a fraction of the requests for a while; :meth:`outage`
    refuses every connection and resets the open ones for a while.
    """

    def __init__(
        self,
        upstream_port: int,
        seed: int,
        p_burst: float = 0.0,
        p_drop: float = 0.0,
        p_slow: float = 0.0,
        burst: int = 3,
        slow_seconds: float = 1.5,
        port: int = 0,
    ) -> None:
        self.upstream_port = upstream_port
        self.seed = seed
        self.p_burst, self.p_drop, self.p_slow = p_burst, p_drop, p_slow
        self.burst, self.slow_seconds = burst, slow_seconds
        self.counts: Dict[str, int] = collections.Counter({kind: 0 for kind in KINDS})
        #: Requests forwarded or answered, per Kinesis operation (X-Amz-Target), faults included.
        self.calls: Dict[str, int] = collections.Counter()
        self._requests = 0
        self._burst_left = 0
        self._burst_status = 500
        self._storm_fraction = 0.0
        self._storm_until = 0.0
        self._outage_until = 0.0
        self._writers: Set[asyncio.StreamWriter] = set()
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._server: Optional[asyncio.AbstractServer] = None
        probe = socket.socket()
        probe.bind(("127.0.0.1", port))
        self.port = probe.getsockname()[1]
        probe.close()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"fault-injector-{self.port}", daemon=True)

    # -- life cycle --------------------------------------------------------------------------------------------

    def start(self) -> "FaultInjector":
        self._thread.start()
        self._call(self._listen())
        return self

    def stop(self) -> None:
        self._call(self._close_all())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def __enter__(self) -> "FaultInjector":
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    # -- switches ----------------------------------------------------------------------------------------------

    def storm(self, fraction: float, seconds: float) -> None:
        """Throttles about ``fraction`` of the requests (which ones: the seed decides) for ``seconds``."""
        with self._lock:
            self._storm_fraction, self._storm_until = fraction, time.monotonic() + seconds

    def outage(self, seconds: float) -> None:
        """Refuses every new connection and resets every open one for ``seconds``, then listens again."""
        with self._lock:
            self._outage_until = time.monotonic() + seconds
            self.counts["outage"] += 1
        self._call(self._close_all())
        self._loop.call_soon_threadsafe(self._loop.call_later, seconds, lambda: self._loop.create_task(self._reopen()))

    def summary(self) -> str:
        """The fault counts, one line, for logs and reports."""
        faults = ", ".join(f"{kind} {self.counts[kind]}" for kind in KINDS)
        return f"fault injector (seed {self.seed}): {self._requests} requests; {faults}"

    # -- the proxy ---------------------------------------------------------------------------------------------

    def _call(self, coroutine: "asyncio.Future[None] | object") -> None:
        asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(10)  # type: ignore[arg-type]

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port, reuse_address=True)

    async def _reopen(self) -> None:
        if self._server is None:
            await self._listen()

    async def _close_all(self) -> None:
        """Closes the listening socket (new connections are refused) and resets every open connection."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._writers):
            self._reset(writer)
            self.counts["reset"] += 1

    @staticmethod
    def _reset(writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            # Linger 0: the peer sees a reset, as when a load balancer drops a connection, not an orderly close.
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass  # the peer reset it first: the connection is already gone
        writer.transport.abort()

    def _decide(self, operation: str) -> str:
        """What happens to the next request: 'forward', 'throttle', 'http500', 'http503', 'dropped' or 'slow'."""
        with self._lock:
            n = self._requests
            self._requests += 1
            rng = random.Random(self.seed * 1_000_003 + n)
            draw = rng.random()
            if time.monotonic() < self._storm_until:
                return "throttle" if draw < self._storm_fraction else "forward"
            if self._burst_left > 0:
                self._burst_left -= 1
                return f"http{self._burst_status}"
            if draw < self.p_burst:
                self._burst_status = rng.choice((500, 503))
                self._burst_left = self.burst - 1
                return f"http{self._burst_status}"
            if draw < self.p_burst + self.p_drop:
                return "dropped"
            if draw < self.p_burst + self.p_drop + self.p_slow:
                return "slow"
            return "forward"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if time.monotonic() < self._outage_until:  # accepted just before the listening socket closed
            self._reset(writer)
            return
        self._writers.add(writer)
        upstream: Optional[Tuple[asyncio.StreamReader, asyncio.StreamWriter]] = None
        try:
            while True:
                request = await _read_message(reader, response=False)
                if request is None:
                    return
                head, body = request
                headers = _headers(head)
                operation = headers.get("x-amz-target", "?").rpartition(".")[2]
                self.calls[operation] += 1
                action = self._decide(operation)
                if action == "dropped":
                    self.counts["dropped"] += 1
                    self._reset(writer)
                    return
                if action != "forward" and action != "slow":
                    self.counts[action] += 1
                    writer.write(self._fault_answer(action, operation, headers))
                    await writer.drain()
                    continue
                if action == "slow":
                    self.counts["slow"] += 1
                    await asyncio.sleep(self.slow_seconds)
                if upstream is None:
                    upstream = await asyncio.open_connection("127.0.0.1", self.upstream_port)
                upstream[1].write(head + body)
                await upstream[1].drain()
                response = await _read_message(upstream[0], response=True)
                if response is None:
                    raise ConnectionError("the emulator closed the connection without answering")
                writer.write(response[0] + response[1])
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
            self._reset(writer)
        finally:
            self._writers.discard(writer)
            if upstream is not None:
                upstream[1].close()
            if not writer.is_closing():
                writer.close()

    @staticmethod
    def _fault_answer(action: str, operation: str, headers: Dict[str, str]) -> bytes:
        content_type = headers.get("content-type", "application/x-amz-json-1.1")
        if action == "throttle":
            if operation == "GetRecords":
                error, message = "ProvisionedThroughputExceededException", "Rate exceeded for shard (injected)."
            else:
                error, message = "LimitExceededException", f"Rate exceeded for {operation} (injected)."
            return error_response(400, error, message, content_type)
        if action == "http500":
            return error_response(500, "InternalFailure", "Internal service failure (injected).", content_type)
        return error_response(503, "ServiceUnavailable", "Service unavailable (injected).", content_type)


def main() -> None:
    """``python3 fault_injector.py --upstream-port P [--seed S] [--storm-fraction F]``: runs the injector (a
    permanent storm of fraction F), prints ``port <n>`` once it listens and serves until its standard input closes.
    It imports only the standard library, so that a JVM test can run it with any Python 3."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--upstream-port", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--storm-fraction", type=float, default=0.0)
    args = parser.parse_args()
    injector = FaultInjector(args.upstream_port, args.seed).start()
    if args.storm_fraction > 0:
        injector.storm(args.storm_fraction, 365 * 24 * 3600.0)
    print(f"port {injector.port}", flush=True)
    sys.stdin.read()
    print(injector.summary(), file=sys.stderr, flush=True)
    injector.stop()


if __name__ == "__main__":
    main()
