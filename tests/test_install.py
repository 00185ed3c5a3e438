"""The built wheel works outside the repository: it installs, runs the README's example, loads a data set from its
package data and reads the notebooks' profiles.

How, without the network: the wheel is built from this checkout with the project's own build backend
(``pip wheel --no-deps --no-build-isolation --no-index``; hatchling is in the ``test`` extra), installed with
``--no-deps --no-index`` into a new virtual environment in a temporary directory, and that environment reaches
the already-installed dependencies through a ``.pth`` line naming the project environment's site-packages
(appended after its own site-packages, and without running the project environment's ``.pth`` files, so the
project's editable install is not visible).  The test asserts that ``dpkernels`` is imported from the new
environment, not from the checkout.  Which dependencies the wheel declares is tested in ``test_environment.py``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest

import dpkernels

ROOT = Path(__file__).resolve().parents[1]


def readme_example() -> str:
    """The first Python block of README.md's "Using the mechanisms" section."""
    section = (ROOT / "README.md").read_text().split("## Using the mechanisms", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheelhouse")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "--no-index",
                    "--quiet", "-w", str(out)], check=True)
    (path,) = out.glob("dpkernels-*.whl")
    return path


@pytest.fixture(scope="module")
def venv_python(wheel, tmp_path_factory) -> Path:
    venv = tmp_path_factory.mktemp("outside") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "_dpkernels_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                    "--quiet", str(wheel)], check=True)
    return python


def run_outside(python: Path, code: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DPKERNELS_", "PYTHON"))}
    env.update(DPKERNELS_CACHE=str(cwd / "cache"), DPKERNELS_OFFLINE="1")
    return subprocess.run([str(python), "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_wheel_holds_package_data_and_licence(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    dist_info = f"dpkernels-{dpkernels.__version__}.dist-info"
    for name in ("dpkernels/profiles.yaml", "dpkernels/py.typed", "dpkernels/data/SOURCES.md",
                 "dpkernels/data/adult/adult.data.gz", "dpkernels/mechanisms/__init__.py", f"{dist_info}/licenses/LICENSE"):
        assert name in names, name
    assert not any(n.startswith(("tests/", "notebooks/", "paper_figures/", "data/")) for n in names)
    metadata = zipfile.ZipFile(wheel).read(f"{dist_info}/METADATA").decode()
    assert "License-Expression: MIT" in metadata
    assert f"Version: {dpkernels.__version__}" in metadata


def test_sdist_builds_the_same_wheel(wheel, tmp_path):
    """The source distribution (what a package index serves besides the wheel) holds everything the wheel needs."""
    subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", str(tmp_path)], cwd=ROOT, check=True,
                   capture_output=True)
    (sdist,) = tmp_path.glob("dpkernels-*.tar.gz")
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path / "src", filter="data")
        assert not any(n.split("/", 1)[-1].startswith(("tests/", "notebooks/", "paper_figures/", "docs/")) for n in tar.getnames())
    (src,) = (tmp_path / "src").iterdir()
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation", "--no-index",
                    "--quiet", "-w", str(tmp_path / "wheelhouse")], check=True)
    (rebuilt,) = (tmp_path / "wheelhouse").glob("dpkernels-*.whl")
    assert sorted(zipfile.ZipFile(rebuilt).namelist()) == sorted(zipfile.ZipFile(wheel).namelist())


def test_wheel_outside_the_repository_runs_the_readme_example_and_loads_data(venv_python, tmp_path):
    code = textwrap.dedent("""
        import json, sys
        import dpkernels
        from dpkernels import datasets, profiles
        """) + readme_example() + textwrap.dedent("""
        adult = datasets.load_adult(preprocess="chaudhuri")
        print(json.dumps({
            "file": dpkernels.__file__,
            "prefix": sys.prefix,
            "adult": list(adult.X.shape),
            "origin": datasets.locate("adult.data").origin,
            "location": str(datasets.locate("adult.data").path),
            "profile": sorted(profiles.load("rubinstein2012", "quick")) != [],
            "released": release.coef_.shape[0],
            "accuracy": model.score(X_test, y_test),
            "majority": max(y_test.mean(), 1 - y_test.mean()),
        }))
        """)
    out = run_outside(venv_python, code, tmp_path)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.splitlines()[-1])
    assert "differential privacy" in out.stdout  # the example prints the guarantee
    assert Path(result["file"]).is_relative_to(result["prefix"]), "dpkernels was not imported from the new environment"
    assert not Path(result["file"]).is_relative_to(ROOT)
    assert Path(result["location"]).is_relative_to(result["prefix"])
    assert result["adult"] == [45222, 105] and result["origin"] == "package data"
    assert result["profile"] and result["released"] == 30
    assert result["accuracy"] > result["majority"]  # the README example learns (issue 19), at its seed


def test_console_script_reports_the_datasets(venv_python, tmp_path):
    script = venv_python.parent / ("dpkernels.exe" if os.name == "nt" else "dpkernels")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DPKERNELS_", "PYTHON"))}
    env.update(DPKERNELS_CACHE=str(tmp_path / "cache"), DPKERNELS_OFFLINE="1")
    out = subprocess.run([str(script), "datasets"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    from dpkernels.datasets import DATASETS, FILES

    vendored = sum(1 for spec in DATASETS.values() for key in spec.files if FILES[key].vendored)
    assert out.stdout.count("package data") == vendored == 8
    assert re.search(r"kddcup99\s+unavailable", out.stdout)
