"""Profile parameters of the notebooks, read from the package data ``dpkernels/profiles.yaml`` (the single source).

A profile (``quick`` for CI and a first look, ``full`` for paper scale, ``scale`` for the frontier from a thousand
rows to the full data on a Dask cluster) maps each paper to the sizes its notebook uses; a paper may lack a profile
(only the frontier has ``scale``).  Notebooks call :func:`load` with their papermill ``profile`` parameter and may override single values
through their ``sizes`` parameter.  The file ships inside the package (read with :mod:`importlib.resources`), so
an installed wheel has the same profiles as a clone.

``DPKERNELS_PROFILE_OVERRIDE`` (set by ``make test``) makes :func:`load` use that profile whatever the notebook
says: nbval re-executes the committed full-profile notebooks at the quick scale and compares only the cells
marked ``# NBVAL_CHECK_OUTPUT``, which do not depend on the profile.
"""

from __future__ import annotations

import os
from importlib import resources
from typing import Any

import yaml

__all__ = ["PROFILES_FILE", "PROFILE_NAMES", "load", "papers"]

PROFILES_FILE = resources.files("dpkernels").joinpath("profiles.yaml")
PROFILE_NAMES = ("quick", "full", "scale")


def _read() -> dict[str, dict[str, dict[str, Any]]]:
    return yaml.safe_load(PROFILES_FILE.read_text())


def papers() -> list[str]:
    """Papers that have a profile entry."""
    return sorted(_read())


def load(paper: str, profile: str, sizes: dict[str, Any] | None = None) -> dict[str, Any]:
    """The parameters of ``paper`` under ``profile``, updated with ``sizes`` (unknown keys refused)."""
    profile = os.environ.get("DPKERNELS_PROFILE_OVERRIDE") or profile
    if profile not in PROFILE_NAMES:
        raise ValueError(f"profile must be one of {PROFILE_NAMES}, got {profile!r}")
    data = _read()
    if paper not in data:
        raise ValueError(f"{PROFILES_FILE} has no entry for {paper!r}")
    if profile not in data[paper]:
        raise ValueError(f"{PROFILES_FILE} has no {profile!r} profile for {paper!r}")
    params = dict(data[paper][profile])
    for key, value in (sizes or {}).items():
        if key not in params:
            raise ValueError(f"unknown size {key!r} for {paper}; known: {sorted(params)}")
        params[key] = value
    return params
