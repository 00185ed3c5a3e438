"""The public API is importable from ``dpkernels`` and ``import dpkernels`` stays light (PEP 562 lazy imports).

Import *time* is measured in ``benchmarks/bench_import.py``, never here; these tests check which modules an import
loads, in a fresh interpreter each.
"""

from __future__ import annotations

import ast
import inspect
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
from sklearn.base import BaseEstimator

import dpkernels
import dpkernels.mechanisms as M

LIB = Path(dpkernels.__file__).parent

#: Heavy or optional third-party packages (top-level module names).
HEAVY = {"numpy", "scipy", "sklearn", "pandas", "cvxpy", "clarabel", "dp_accounting", "joblib", "yaml", "pooch",
         "matplotlib", "seaborn", "dask", "distributed", "diffprivlib", "papermill", "jupytext", "tqdm", "mpmath"}


def loaded_after(statement: str) -> set[str]:
    """Top-level names of the modules a fresh interpreter holds after running ``statement``."""
    code = f"import sys\n{statement}\nimport json\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=LIB.parent)
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_import_dpkernels_loads_no_third_party_package():
    assert loaded_after("import dpkernels") & HEAVY == set()


def test_warnings_need_only_numpy():
    assert loaded_after("from dpkernels import PrivacyLeakWarning, ClippingWarning, UnsafeNoiseWarning") & HEAVY == {"numpy"}


def test_estimators_load_neither_cvxpy_nor_dp_accounting_nor_plotting():
    """Every estimator at once: scikit-learn is needed (and loads pandas and scipy.stats itself, in
    sklearn.utils.fixes); cvxpy (the reference solvers), dp-accounting (loaded when a Gaussian mechanism is
    calibrated), plotting, Dask and the notebook tools are not."""
    estimators = ", ".join(n for n in dpkernels._EXPORTS if n[0].isupper())
    loaded = loaded_after(f"from dpkernels import {estimators}")
    assert "sklearn" in loaded
    assert loaded & {"cvxpy", "dp_accounting", "matplotlib", "seaborn", "dask", "distributed", "diffprivlib",
                     "papermill", "jupytext"} == set()


def test_every_public_name_resolves_to_its_defining_object():
    for name, module in dpkernels._EXPORTS.items():
        obj = getattr(dpkernels, name)
        assert obj is getattr(sys.modules[module], name)
        assert name in dir(dpkernels)
    assert set(M.__all__) <= set(dpkernels.__all__), "a name of dpkernels.mechanisms is missing from dpkernels"
    with pytest.raises(AttributeError, match="no attribute 'PrivateSVMM'"):
        dpkernels.PrivateSVMM  # noqa: B018
    with pytest.raises(ImportError):
        exec("from dpkernels.mechanisms import NotAnEstimator", {})


def test_every_public_estimator_is_exported():
    """Each public scikit-learn estimator class of the library (mechanisms, random features, JL transforms) and each
    warning class is importable from ``dpkernels``."""
    found = set()
    for info in pkgutil.walk_packages([str(LIB)], "dpkernels."):
        if info.name.startswith(("dpkernels.experiments", "dpkernels.runner", "dpkernels.cli")):
            continue
        mod = __import__(info.name, fromlist=["_"])
        for name, obj in vars(mod).items():
            if inspect.isclass(obj) and obj.__module__ == mod.__name__ and not name.startswith("_") and (
                    issubclass(obj, BaseEstimator) or issubclass(obj, Warning)):
                found.add(name)
    assert found, "no estimator found: the walk is broken"
    assert found - set(dpkernels.__all__) == set()


def test_submodules_list_is_complete():
    assert set(dpkernels._SUBMODULES) == {m.name for m in pkgutil.iter_modules([str(LIB)]) if not m.name.startswith("_")}
    assert dpkernels.datasets is sys.modules["dpkernels.datasets"]


@pytest.mark.parametrize("module", [dpkernels, M], ids=lambda m: m.__name__)
def test_type_checking_imports_match_the_lazy_table(module):
    """The ``if TYPE_CHECKING:`` imports (what static checkers and IDEs see) name exactly the lazy exports."""
    tree = ast.parse(Path(module.__file__).read_text())
    block = next(node for node in tree.body if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING")
    static = {}
    for node in block.body:
        for alias in node.names:
            static[alias.name] = node.module
    lazy = {name: (mod if mod.startswith("dpkernels") else f"{module.__name__}.{mod}") for name, mod in module._EXPORTS.items()}
    assert static == lazy
