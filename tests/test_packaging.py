"""The distribution installs one top-level name: ``fedpriv`` (and the pytest plugin).

Builds the wheel from the checkout, installs it without dependencies into a fresh
virtual environment, and compares the importable top-level names before and after.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIST_TOP_LEVEL = (
    "import json, pkgutil; print(json.dumps(sorted({m.name for m in pkgutil.iter_modules()})))"
)


def _run(*args: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


#: Left out of the copy that is built: setuptools' build/ folder would carry modules
#: that no longer exist in the tree into the wheel, and the rest is not source.
NOT_SOURCE = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    "reports",
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source") / "fedpriv"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)  # build outside the checkout
    out = tmp_path_factory.mktemp("wheel")
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", out, source)
    (built,) = out.glob("fedpriv-*.whl")
    return built


def test_every_package_folder_is_in_the_wheel(wheel: Path) -> None:
    """setup.py generates the package list from the folders (no list kept by hand)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "packages" not in config  # generated, never listed by hand
    found = {"fedpriv"}
    for package, folder in config["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join([package, *rel]))
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {
        n[: -len("/__init__.py")].replace("/", ".") for n in names if n.endswith("/__init__.py")
    }
    assert found == shipped


def test_wheel_holds_only_fedpriv_and_the_plugin(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"fedpriv", "fedpriv_pytest.py"}
    for layer in ("privacy", "algorithms", "audit", "cli"):
        assert f"fedpriv/{layer}/__init__.py" in names


def test_fresh_environment_gains_only_fedpriv_and_the_plugin(wheel: Path, tmp_path: Path) -> None:
    env = tmp_path / "env"
    venv.EnvBuilder(with_pip=True).create(env)
    python = env / "bin" / "python"
    # Run outside the checkout: `python -c` puts the working directory on sys.path.
    before = set(json.loads(_run(python, "-c", LIST_TOP_LEVEL, cwd=tmp_path)))
    _run(python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel)
    after = set(json.loads(_run(python, "-c", LIST_TOP_LEVEL, cwd=tmp_path)))
    assert after - before == {"fedpriv", "fedpriv_pytest"}
