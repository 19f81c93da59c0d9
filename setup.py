"""The package list, generated: every folder with an ``__init__.py`` under the roots that
pyproject.toml's ``package-dir`` maps, so adding a paper family's folder needs no edit here
or in pyproject.toml (everything else about the build is in pyproject.toml)."""

import tomllib
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent
PACKAGE_DIR = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
    "package-dir"
]


def packages() -> list[str]:
    found = set()
    for package, folder in PACKAGE_DIR.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            found.add(".".join([package, *init.parent.relative_to(ROOT / folder).parts]))
    return sorted(found)


setup(packages=packages())
