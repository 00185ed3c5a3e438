"""Where the workbook is: the clone of the repository that the workbook commands run, compare and update.

The installed package holds the library; the notebooks, the committed reference (``paper_figures/``, the executed
notebooks, the run times) and the prose templates live in a clone of the repository, the *workbook*.  The commands
that need it (``dpkernels list``, ``run``, ``reproduce``, ``update-reference``, ``report``, ``sync``, ``site``) find
it by :func:`find_root`, first match wins:

1. the ``--root PATH`` option of the command (the ``root`` argument);
2. the environment variable ``DPKERNELS_ROOT`` (:data:`ROOT_ENV`);
3. the current directory or the nearest of its parents that is a workbook (:func:`is_workbook`);
4. the checkout the package is imported from, when it is one (an editable install, ``make``'s ``.venv``).

A workbook is a directory holding ``notebooks/`` and a ``pyproject.toml`` whose project is ``dpkernels``.  When none
is found, :class:`WorkbookNotFound` says how to point at one.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

__all__ = ["ROOT_ENV", "WorkbookNotFound", "is_workbook", "find_root"]

#: Environment variable naming the workbook (rule 2 of :func:`find_root`).
ROOT_ENV = "DPKERNELS_ROOT"
_PACKAGE_CHECKOUT = Path(__file__).resolve().parents[2]


class WorkbookNotFound(FileNotFoundError):
    """No workbook (a clone of the repository) was found; the message says how to name one."""


def is_workbook(path: Path | str) -> bool:
    """Whether ``path`` holds ``notebooks/`` and a ``pyproject.toml`` whose ``[project] name`` is ``dpkernels``."""
    path = Path(path)
    pyproject = path / "pyproject.toml"
    if not (path / "notebooks").is_dir() or not pyproject.is_file():
        return False
    try:
        return tomllib.loads(pyproject.read_text()).get("project", {}).get("name") == "dpkernels"
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False


def find_root(root: Path | str | None = None) -> Path:
    """The workbook's directory, by the rules of the module docstring; raises :class:`WorkbookNotFound`.

    An explicit ``root`` or ``$DPKERNELS_ROOT`` that is not a workbook is an error (never silently replaced by
    another directory)."""
    for given, origin in ((root, "--root"), (os.environ.get(ROOT_ENV) or None, f"${ROOT_ENV}")):
        if given is not None:
            path = Path(given).expanduser().resolve()
            if not is_workbook(path):
                raise WorkbookNotFound(f"{origin} {given} is not a dpkernels workbook (a clone of the repository, "
                                       "holding notebooks/ and pyproject.toml)")
            return path
    here = Path.cwd().resolve()
    for path in (here, *here.parents):
        if is_workbook(path):
            return path
    if is_workbook(_PACKAGE_CHECKOUT):
        return _PACKAGE_CHECKOUT
    raise WorkbookNotFound(
        f"no dpkernels workbook found from {here}: the installed package holds the library, the notebooks and the "
        "reference live in a clone of the repository. Run the command inside the clone, or pass --root PATH, or set "
        f"{ROOT_ENV}=PATH.")
