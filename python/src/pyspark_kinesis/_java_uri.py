"""What ``java.net.URI``'s parser says about an endpoint URL, so that ``kinesis.endpointUrl`` fails in Python
with the connector's words.

The connector accepts a URL when ``new java.net.URI(text)`` parses it (RFC 2396, with Java's deviations), its
scheme is http or https and it has a server-based host. This module follows the same grammar and reports the
same reasons (``URISyntaxException.getReason``).
"""

from __future__ import annotations

import string
import unicodedata
from typing import FrozenSet, Optional, Tuple

_ALPHA = frozenset(string.ascii_letters)
_DIGIT = frozenset(string.digits)
_ALPHANUM = _ALPHA | _DIGIT
_HEX = frozenset(string.hexdigits)
_UNRESERVED = _ALPHANUM | frozenset("-_.!~*'()")
_RESERVED = frozenset(";/?:@&=+$,[]")

#: A character class: the characters it admits, and whether %XX escapes and visible non-ASCII text may appear.
_Class = Tuple[FrozenSet[str], bool]
_URIC: _Class = (_RESERVED | _UNRESERVED, True)
_PATH: _Class = (_UNRESERVED | frozenset(":@&=+$,;/"), True)
_USERINFO: _Class = (_UNRESERVED | frozenset(";:&=+$,"), True)
_REG_NAME: _Class = (_UNRESERVED | frozenset("$,;:@&=+"), True)
_SERVER_PERCENT: _Class = (_USERINFO[0] | frozenset("-.:@[]%"), True)
_SCHEME: _Class = (_ALPHANUM | frozenset("+-."), False)
_DIGITS: _Class = (_DIGIT, False)


class _Invalid(Exception):
    """A ``URISyntaxException``; its argument is the reason."""


class _Parser:
    def __init__(self, text: str) -> None:
        self.s = text
        self.host: Optional[str] = None
        self.path: Optional[str] = None  # getRawPath: "" when a hierarchical URI has none, None when opaque
        self.query: Optional[str] = None  # getRawQuery: None without a '?'
        self.ipv6_bytes = 0

    def at(self, p: int, end: int, c: str) -> bool:
        return p < end and self.s[p] == c

    def find(self, p: int, end: int, stops: str) -> int:
        while p < end and self.s[p] not in stops:
            p += 1
        return p

    def scan(self, p: int, end: int, cls: _Class) -> int:
        chars, escapes = cls
        while p < end:
            c = self.s[p]
            if c in chars:
                p += 1
            elif escapes and c == "%":
                if p + 3 <= end and self.s[p + 1] in _HEX and self.s[p + 2] in _HEX:
                    p += 3
                else:
                    raise _Invalid("Malformed escape pair")
            elif escapes and ord(c) > 128 and unicodedata.category(c) not in ("Zs", "Zl", "Zp", "Cc"):
                p += 1
            else:
                break
        return p

    def check(self, p: int, end: int, cls: _Class, what: str) -> None:
        if self.scan(p, end, cls) < end:
            raise _Invalid(f"Illegal character in {what}")

    def parse(self) -> Optional[str]:
        """Parses the text; returns its scheme (None for a relative URI) and sets ``host``."""
        s, n = self.s, len(self.s)
        colon = self.find(0, n, ":/?#")
        scheme = None
        p = 0
        if self.at(colon, n, ":"):
            if colon == 0:
                raise _Invalid("Expected scheme name")
            self.check(0, 1, (_ALPHA, False), "scheme name")
            self.check(1, colon, _SCHEME, "scheme name")
            scheme, p = s[:colon], colon + 1
            if not self.at(p, n, "/"):
                q = self.find(p, n, "#")
                if q <= p:
                    raise _Invalid("Expected scheme-specific part")
                self.check(p, q, _URIC, "opaque part")
                p = q
            else:
                p = self.hierarchical(p, n)
        else:
            p = self.hierarchical(0, n)
        if self.at(p, n, "#"):
            self.check(p + 1, n, _URIC, "fragment")
        return scheme

    def hierarchical(self, p: int, n: int) -> int:
        if self.at(p, n, "/") and self.at(p + 1, n, "/"):
            p += 2
            q = self.find(p, n, "/?#")
            if q > p:
                p = self.authority(p, q)
            elif q >= n:
                raise _Invalid("Expected authority")
        q = self.find(p, n, "?#")
        self.check(p, q, _PATH, "path")
        self.path, p = self.s[p:q], q
        if self.at(p, n, "?"):
            q = self.find(p + 1, n, "#")
            self.check(p + 1, q, _URIC, "query")
            self.query, p = self.s[p + 1 : q], q
        return p

    def authority(self, p: int, n: int) -> int:
        server_chars = self.scan(p, n, _SERVER_PERCENT) == n
        reg_chars = self.scan(p, n, _REG_NAME) == n
        if reg_chars and not server_chars:
            return n
        failure = None
        q = p
        if server_chars:
            try:
                q = self.server(p, n)
            except _Invalid as e:
                self.host, failure, q = None, e, p
        if q < n:
            if reg_chars:
                return n
            raise failure or _Invalid("Illegal character in authority")
        return n

    def server(self, p: int, n: int) -> int:
        q = self.find(p, n, "@/?#")
        if self.at(q, n, "@"):
            self.check(p, q, _USERINFO, "user info")
            p = q + 1
        if self.at(p, n, "["):
            q = self.find(p + 1, n, "]/?#")
            if not (q > p + 1 and self.at(q, n, "]")):
                raise _Invalid("Expected closing bracket for IPv6 address")
            r = self.find(p + 1, q, "%")
            self.ipv6(p + 1, r)
            if r + 1 == q:
                raise _Invalid("scope id expected")
            if r < q:
                self.check(r + 1, q, (_ALPHANUM | frozenset("_."), False), "scope id")
            self.host, p = self.s[p : q + 1], q + 1
        else:
            q = self.ipv4(p, n)
            p = q if q > p else self.hostname(p, n)
        if self.at(p, n, ":"):
            p += 1
            q = self.find(p, n, "/")
            if q > p:
                self.check(p, q, _DIGITS, "port number")
                if int(self.s[p:q]) >= 2**31:
                    raise _Invalid("Malformed port number")
                p = q
        if p < n:
            raise _Invalid("Expected port number")
        return p

    def ipv6(self, start: int, n: int) -> None:
        """An IPv6 address filling [start, n): hex groups, at most one '::', optionally a dotted IPv4 tail."""
        self.ipv6_bytes = 0
        p, compressed = start, False
        q = self.hex_groups(p, n)
        if q > p:
            p = q
            if self.s.startswith("::", p) and p + 1 < n:
                compressed, p = True, self.hex_tail(p + 2, n)
            elif self.at(p, n, ":"):
                p = self.ipv4_exactly(p + 1, n, "IPv4 address")
                self.ipv6_bytes += 4
        elif self.s.startswith("::", p) and p + 1 < n:
            compressed, p = True, self.hex_tail(p + 2, n)
        if p < n or (compressed and self.ipv6_bytes == 16):
            raise _Invalid("Malformed IPv6 address")
        if self.ipv6_bytes > 16:
            raise _Invalid("IPv6 address too long")
        if not compressed and self.ipv6_bytes < 16:
            raise _Invalid("IPv6 address too short")

    def hex_groups(self, p: int, n: int) -> int:
        """The end of 'h:h:...' groups of 1 to 4 hex digits at p (stopping before '::' or an IPv4 tail), else -1."""
        q = self.scan(p, n, (_HEX, False))
        if q <= p or self.at(q, n, "."):
            return -1
        if q > p + 4:
            raise _Invalid("IPv6 hexadecimal digit sequence too long")
        self.ipv6_bytes += 2
        p = q
        while self.at(p, n, ":") and not self.at(p + 1, n, ":"):
            q = self.scan(p + 1, n, (_HEX, False))
            if q <= p + 1:
                raise _Invalid("Expected digits for an IPv6 address")
            if self.at(q, n, "."):
                break
            if q > p + 5:
                raise _Invalid("IPv6 hexadecimal digit sequence too long")
            self.ipv6_bytes += 2
            p = q
        return p

    def hex_tail(self, p: int, n: int) -> int:
        if p == n:
            return p
        q = self.hex_groups(p, n)
        if q > p:
            if not self.at(q, n, ":"):
                return q
            p = q + 1
        p = self.ipv4_exactly(p, n, "hex digits or IPv4 address")
        self.ipv6_bytes += 4
        return p

    def ipv4_exactly(self, start: int, n: int, expected: str) -> int:
        m = self.scan(start, n, (_DIGIT | frozenset("."), False))
        if m <= start or m != n:
            raise _Invalid(f"Expected {expected}")
        parts = self.s[start:m].split(".")
        if len(parts) != 4 or not all(x and int(x) <= 255 for x in parts):
            raise _Invalid("Malformed IPv4 address")
        return m

    def ipv4(self, start: int, n: int) -> int:
        """The end of a dotted IPv4 address at ``start`` followed by the end or ':', else -1."""
        m = self.scan(start, n, (_DIGIT | frozenset("."), False))
        parts = self.s[start:m].split(".")
        if m <= start or len(parts) != 4 or not all(x and int(x) <= 255 for x in parts):
            return -1
        if m < n and self.s[m] != ":":
            return -1
        self.host = self.s[start:m]
        return m

    def hostname(self, start: int, n: int) -> int:
        p, last = start, -1
        while True:
            q = self.scan(p, n, (_ALPHANUM, False))
            if q <= p:
                break
            last, p = p, q
            q = self.scan(p, n, (_ALPHANUM | frozenset("-"), False))
            if q > p:
                if self.s[q - 1] == "-":
                    raise _Invalid("Illegal character in hostname")
                p = q
            if not self.at(p, n, "."):
                break
            p += 1
            if p >= n:
                break
        if p < n and not self.at(p, n, ":"):
            raise _Invalid("Illegal character in hostname")
        if last < 0:
            raise _Invalid("Expected hostname")
        if last > start and self.s[last] not in _ALPHA:
            raise _Invalid("Illegal character in hostname")
        self.host = self.s[start:p]
        return p


def java_uri_problem(text: str) -> Optional[str]:
    """None when the connector accepts ``text`` as an endpoint URL, else the reason it does not."""
    parser = _Parser(text)
    try:
        scheme = parser.parse()
    except _Invalid as e:
        return f"it is not a URL ({e.args[0]})"
    if scheme is None or scheme.lower() not in ("http", "https"):
        return "it does not start with http:// or https://"
    if parser.host is None:
        return "it names no host"
    return None


def java_uri_parts(text: str) -> Tuple[str, Optional[str], Optional[str]]:
    """An accepted endpoint URL's scheme, ``getRawPath()`` and ``getRawQuery()``."""
    parser = _Parser(text)
    scheme = parser.parse()
    assert scheme is not None, f"{text!r} was accepted as an endpoint URL, so it has a scheme"
    return scheme, parser.path, parser.query
