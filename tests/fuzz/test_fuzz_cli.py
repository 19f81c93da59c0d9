"""The command line's numeric options, fuzzed over every ``run`` and ``verify`` command.

Every numeric option of every subcommand gets hostile strings (NaN, infinities,
negatives, garbage, overflow). The command must refuse each with exit status 2, a
one-line message that names the option, no traceback, and nothing written to the
report folder.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path

import pytest
from fedpriv.cli.main import INFINITE_OK, build_parser, main
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.fuzz._values import MAX_EXAMPLES

#: Option values no numeric option of the CLI may accept.
ALWAYS_INVALID = ["nan", "NaN", "abc", "", "-inf", "0x", "1,5", "1e999999999"]

#: Options whose range excludes negative numbers too.
NON_NEGATIVE_EXCEPT = {"--q-value"}


def _numeric_options() -> list[tuple[tuple[str, ...], str]]:
    """(command words, option) for every int/float option of every subcommand."""
    found = []

    def walk(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, (*words, name))
            elif getattr(action.type, "__name__", "") in ("int", "float") and action.option_strings:
                found.append((words, action.option_strings[-1]))

    walk(build_parser(), ())
    return found


OPTIONS = _numeric_options()


def test_options_were_found() -> None:
    commands = {words[0] for words, _ in OPTIONS}
    assert {"run", "verify"} <= commands and len(OPTIONS) > 30


PARSER = build_parser()


def _check_refused(words: tuple[str, ...], option: str, value: str, tmp: Path) -> None:
    """The parser refuses ``option=value`` with status 2, naming the option; the
    command's handler (which would write reports or run algorithms) never starts."""
    argv = [*words, f"{option}={value}"]
    if words[0] in ("verify", "experiment"):
        argv += ["--out", str(tmp / "reports")]
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        with pytest.raises(SystemExit) as stop:
            PARSER.parse_args(argv)
    err = stderr.getvalue()
    assert stop.value.code == 2, f"{argv} exited {stop.value.code}"
    assert "Traceback" not in err
    assert option in err, err
    assert not (tmp / "reports").exists()


def test_a_refused_option_leaves_no_report_folder(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    with contextlib.redirect_stderr(io.StringIO()):
        status = main(["verify", "--quick", "--seed=-1", "--out", str(out)])
    assert status == 2 and not out.exists()


@pytest.mark.parametrize(("words", "option"), OPTIONS, ids=[" ".join((*w, o)) for w, o in OPTIONS])
@settings(max_examples=len(ALWAYS_INVALID) + 3)
@given(value=st.sampled_from(ALWAYS_INVALID))
def test_numeric_option_refuses_garbage(
    words: tuple[str, ...], option: str, value: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    assume(not (option in INFINITE_OK and value == "1e999999999"))  # ε = inf: no noise
    _check_refused(words, option, value, tmp_path_factory.mktemp("cli"))


NEGATIVE = [(w, o) for w, o in OPTIONS if o not in NON_NEGATIVE_EXCEPT]


@pytest.mark.parametrize(
    ("words", "option"), NEGATIVE, ids=[" ".join((*w, o)) for w, o in NEGATIVE]
)
@settings(max_examples=MAX_EXAMPLES // 15)
@given(value=st.one_of(st.integers(max_value=-1), st.floats(max_value=-1e-9, allow_infinity=False)))
def test_range_options_refuse_negatives(
    words: tuple[str, ...], option: str, value: float, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _check_refused(words, option, repr(value), tmp_path_factory.mktemp("cli"))
