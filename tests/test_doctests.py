"""Run the docstring examples of every module of the installed ``fedpriv`` package.

The examples are run against the installed package, as a user would import it, not
against the checkout's folders (which are not importable under their installed names).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

SUBPACKAGES = ("privacy", "algorithms", "audit", "cli")


def _walk() -> list[str]:
    # Walk each subpackage from its own __path__: an editable install maps them from
    # the repository's folders, so fedpriv.__path__ alone does not list them.
    names = ["fedpriv"]
    for sub in SUBPACKAGES:
        package = importlib.import_module(f"fedpriv.{sub}")
        names.append(package.__name__)
        names += [i.name for i in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")]
    return sorted(names)


ALL_MODULES = _walk()


def _examples(name: str) -> list[doctest.DocTest]:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [test for test in finder.find(module) if test.examples]


WITH_EXAMPLES = [name for name in ALL_MODULES if _examples(name)]


def test_every_subpackage_is_walked() -> None:
    assert {"fedpriv.privacy", "fedpriv.algorithms", "fedpriv.audit", "fedpriv.cli"} <= set(
        ALL_MODULES
    )
    assert len(WITH_EXAMPLES) >= 20


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples(name: str) -> None:
    tests = _examples(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    for test in tests:
        runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
