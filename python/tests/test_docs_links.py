"""Every link of the documentation leads somewhere: a relative link to a file or folder of the repository, an
``#anchor`` to a heading of its page (by GitHub's rules for heading ids), an absolute link to a well-formed URL. The
pages link to each other's sections, so a section moved or renamed breaks links no reader would report. Needs
neither pyspark nor the wheel, and no network: external URLs are only parsed.

python/README.md is the wheel's description on PyPI, which resolves no relative link: its links must be absolute,
and those into this repository on GitHub must name a file that exists here (and one of its headings, for an
anchor)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import List, NamedTuple, Set
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(
    [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "bench" / "README.md", ROOT / "python" / "README.md"]
    + list((ROOT / "docs").glob("*.md"))
)
PYPI_PAGE = ROOT / "python" / "README.md"
GITHUB_FILES = "https://github.com/spark-kinesis/spark-kinesis/blob/main/"

FENCE = re.compile(r"^ *(```|~~~).*?^ *\1 *$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
# [text](target) or [text](target "title"), images too; the text may wrap onto the next line.
INLINE_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.M)
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$", re.M)


class Link(NamedTuple):
    page: Path
    line: int
    target: str

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}: {self.target}"


def blank(match: "re.Match[str]") -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def without_code_blocks(text: str) -> str:
    """The text with fenced code blanked out, keeping every line where it was: a Python comment there is no
    heading."""
    return FENCE.sub(blank, text)


def without_code(text: str) -> str:
    """Also without code spans: what looks like a link in code (a JSON array, say) is none."""
    return CODE_SPAN.sub(blank, without_code_blocks(text))


def links_of(page: Path) -> List[Link]:
    text = without_code(page.read_text(encoding="utf-8"))
    found = [(m.start(1), m.group(1)) for m in INLINE_LINK.finditer(text)]
    found += [(m.start(1), m.group(1)) for m in REFERENCE_DEFINITION.finditer(text)]
    return [Link(page, text.count("\n", 0, at) + 1, target) for at, target in sorted(found)]


def slug(heading: str) -> str:
    """GitHub's id for a heading: its text without markup, lowercased, punctuation other than ``-`` and ``_``
    dropped, each space a ``-``."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading counts by its text
    text = re.sub(r"<[^>]+>", "", text)
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


@lru_cache(maxsize=None)
def anchors_of(page: Path) -> Set[str]:
    """The ids of a page's headings; a repeated heading gets ``-1``, ``-2``, ... as on GitHub."""
    seen: Set[str] = set()
    for match in HEADING.finditer(without_code_blocks(page.read_text(encoding="utf-8"))):
        base = slug(match.group(2))
        anchor, n = base, 0
        while anchor in seen:
            n += 1
            anchor = f"{base}-{n}"
        seen.add(anchor)
    return seen


ALL_LINKS = [link for page in PAGES for link in links_of(page)]


def test_given_the_pages_then_each_exists_and_links_somewhere() -> None:
    assert (ROOT / "docs").is_dir() and len(PAGES) > 5, PAGES
    assert ALL_LINKS, "no link found: the link pattern no longer matches the pages"


@pytest.mark.parametrize("link", ALL_LINKS, ids=str)
def test_given_a_link_then_its_target_exists(link: Link) -> None:
    parts = urlsplit(link.target)
    if parts.scheme:
        assert parts.scheme in ("http", "https", "mailto"), f"{link}: unexpected scheme"
        if parts.scheme != "mailto":
            assert "." in parts.netloc and " " not in link.target, f"{link}: not a well-formed URL"
        if link.target.startswith(GITHUB_FILES):
            path = unquote(parts.path[len(urlsplit(GITHUB_FILES).path) :])
            assert (ROOT / path).exists(), f"{link}: {path} is not a file of this repository"
            if parts.fragment:
                assert unquote(parts.fragment) in anchors_of((ROOT / path).resolve()), f"{link}: no such heading"
        return
    assert link.page != PYPI_PAGE, f"{link}: PyPI shows this page and resolves no relative link; use {GITHUB_FILES}..."
    path, _, anchor = link.target.partition("#")
    target = (link.page.parent / unquote(path)).resolve() if path else link.page
    assert target.exists(), f"{link}: no file {target.relative_to(ROOT) if ROOT in target.parents else target}"
    assert ROOT in target.parents, f"{link}: points outside the repository"
    if anchor:
        assert target.suffix == ".md", f"{link}: an anchor into {target.name}, which has no headings to check"
        assert unquote(anchor) in anchors_of(target), (
            f"{link}: {target.relative_to(ROOT)} has no heading '#{anchor}'; "
            f"its anchors: {', '.join(sorted(anchors_of(target)))}"
        )


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Monitoring: lag and metrics", "monitoring-lag-and-metrics"),
        ("Migrating from awslabs (format `aws-kinesis`)", "migrating-from-awslabs-format-aws-kinesis"),
        (
            "The query was stopped for longer than the stream's retention period",
            "the-query-was-stopped-for-longer-than-the-streams-retention-period",
        ),
        ("Enhanced fan-out (SubscribeToShard)", "enhanced-fan-out-subscribetoshard"),
        ("spark-submit / spark-shell", "spark-submit--spark-shell"),
        ("Cluster faults, long variant (`bench/cluster-faults`)", "cluster-faults-long-variant-benchcluster-faults"),
        ("keys_and snake_case", "keys_and-snake_case"),
    ],
)
def test_given_a_heading_then_its_anchor_is_githubs(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor
