"""Shared fixtures.  Statistical tests use fixed seeds, so each is deterministic; the false-alarm
rate quoted in a test's docstring is the chance it would fail for a correct sampler under a random seed."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261121)


@pytest.fixture
def offline_empty_data(tmp_path, monkeypatch):
    """No DPKERNELS_DATA files, an empty cache, no downloads."""
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("DPKERNELS_DATA", str(data))
    monkeypatch.setenv("DPKERNELS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DPKERNELS_OFFLINE", "1")
    return data
