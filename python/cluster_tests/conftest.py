"""The cluster every test of this folder shares: starting it costs more than most tests here."""

from __future__ import annotations

from typing import Iterator

import pytest
from standalone import StandaloneCluster


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    """One cluster for every test: the tests' drivers come and go, its workers stay."""
    with StandaloneCluster(tmp_path_factory.mktemp("cluster")) as started:
        yield started
