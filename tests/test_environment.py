"""environment.yml and pyproject.toml must describe the same dependencies; notebooks must be paired."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def pyproject_requirements() -> dict[str, SpecifierSet]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    reqs = list(data["project"]["dependencies"])
    for extra in data["project"]["optional-dependencies"].values():
        reqs += extra
    out: dict[str, SpecifierSet] = {}
    for r in map(Requirement, reqs):
        name = canonicalize_name(r.name)
        if name == canonicalize_name(data["project"]["name"]):
            continue  # an extra that includes another (dpkernels[plot]): its packages are listed there
        out[name] = out.get(name, SpecifierSet()) & r.specifier
    return out


def environment_requirements() -> tuple[dict[str, SpecifierSet], list[str]]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    out: dict[str, SpecifierSet] = {}
    pip_lines: list[str] = []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip_lines += dep["pip"]
            continue
        r = Requirement(dep.replace(" ", ""))
        out[canonicalize_name(r.name)] = r.specifier
    for line in pip_lines:
        if line.startswith("-e"):
            continue
        r = Requirement(line)
        out[canonicalize_name(r.name)] = r.specifier
    return out, pip_lines


def test_environment_yml_matches_pyproject():
    py = pyproject_requirements()
    env, pip_lines = environment_requirements()
    env.pop("python"), env.pop("pip")
    assert sorted(env) == sorted(py), "package lists differ"
    for name, spec in py.items():
        assert set(map(str, env[name])) == set(map(str, spec)), f"{name}: {env[name]} vs {spec}"
    assert any(line.startswith("-e .") for line in pip_lines), "the project itself must be installed via pip"


def test_python_version_agrees():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert f"python{data['project']['requires-python']}" in env["dependencies"]


@pytest.mark.parametrize("nb", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_notebooks_are_paired_and_in_sync(nb):
    py = nb.with_suffix(".py")
    assert py.exists(), f"{nb.name} has no paired {py.name}"
    notebook = nbformat.read(nb, as_version=4)
    # the executed reference is not paired itself (the .py pairs with build/notebooks/): its cells must be the source's
    assert not any("injected-parameters" in c.metadata.get("tags", []) for c in notebook.cells)
    notebook.metadata["jupytext"] = jupytext.read(py).metadata["jupytext"]
    text = jupytext.writes(notebook, fmt="py:percent")
    assert text == py.read_text(), f"{nb.name} and {py.name} differ: run 'make sync'"
    meta = nbformat.read(nb, as_version=4).metadata
    assert meta.get("kernelspec", {}).get("name") == "dpkernels"


def test_runtime_dependencies_leave_plotting_notebooks_and_dask_to_extras():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    runtime = {canonicalize_name(Requirement(r).name) for r in data["project"]["dependencies"]}
    optional = {"matplotlib", "seaborn", "dask", "distributed", "papermill", "jupytext", "ipykernel", "nbformat",
                "jupyterlab", "diffprivlib", "pytest", "nbval"}
    assert runtime & optional == set()
    extras = data["project"]["optional-dependencies"]
    assert {"plot", "dask", "notebooks", "compare", "test"} <= set(extras)


def test_module_level_imports_are_runtime_dependencies():
    """Every third-party package a library module imports at module level (so on import) is a runtime dependency of
    the wheel; optional ones (plotting, Dask, notebooks, diffprivlib) may only be imported inside functions."""
    import ast
    from importlib.metadata import packages_distributions

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    runtime = {canonicalize_name(Requirement(r).name) for r in data["project"]["dependencies"]}
    dists = packages_distributions()
    offenders = []
    for path in sorted((ROOT / "lib" / "dpkernels").rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top in sys.stdlib_module_names or top in ("dpkernels", "__future__"):
                    continue
                if not {canonicalize_name(d) for d in dists.get(top, [])} & runtime:
                    offenders.append(f"{path.relative_to(ROOT)}: {module}")
    assert offenders == []
