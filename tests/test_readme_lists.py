"""The README template's lists are complete: every estimator in its table, every subcommand of the `dpkernels`
command, every public module of the package in "What is where" (they had fallen behind the code: issue 29's
estimators, `dpkernels recommend`, recommendation.py, feature_maps.py, selection.py, defaults.py)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

import dpkernels
from dpkernels.cli import main
from dpkernels.mechanisms.base import ReleaseMixin

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "docs" / "README.md").read_text()


def _section(head: str) -> str:
    return README.split(f"\n## {head}\n", 1)[1].split("\n## ", 1)[0]


def test_the_estimator_table_lists_every_estimator():
    table = _section("Using the mechanisms").split("| module | estimators |", 1)[1].split("\n\n", 1)[0]
    estimators = [n for n in dpkernels.__all__
                  if isinstance(getattr(dpkernels, n), type) and issubclass(getattr(dpkernels, n), ReleaseMixin)]
    assert len(estimators) >= 20
    assert [n for n in estimators if f"`{n}`" not in table] == []


def test_the_command_block_lists_every_subcommand():
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["--help"])
    commands = re.search(r"\{([a-z,-]+)\}", out.getvalue()).group(1).split(",")
    assert "recommend" in commands
    block = _section("The `dpkernels` command")
    assert [c for c in commands if f"\ndpkernels {c}" not in block] == []


def test_what_is_where_lists_every_public_module():
    block = _section("What is where")
    modules = sorted(p.name for p in (ROOT / "lib" / "dpkernels").iterdir()
                     if p.suffix in (".py", ".yaml") and not p.name.startswith("_"))
    assert [m for m in modules if not re.search(rf"(?<![\w.]){re.escape(m)}(?!\w)", block)] == []
