"""``audit_mechanism``, ``NeighboringPair`` and the deployment loader, fuzzed.

Hostile option values must give a typed error naming the option; a mechanism that
raises, returns NaN or returns the wrong shape must give a :class:`MechanismError`
naming the mechanism (never a bare NumPy error from deep inside the estimators).
"""

from __future__ import annotations

import numbers
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fedpriv.audit import NeighboringPair, audit_mechanism
from fedpriv.privacy import PureDP
from fedpriv.privacy.deployment import load_deployment, parse_deployment
from fedpriv.privacy.errors import DataFormatError, MechanismError
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz._values import HOSTILE, MAX_EXAMPLES

PAIR = NeighboringPair(1.0, 0.0)


def laplace(count: float, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    return count + rng.laplace(0.0, 1.0, n_samples)


def _int_at_least(lower: int):
    return lambda x: isinstance(x, numbers.Integral) and not isinstance(x, bool) and x >= lower


def _real(x: Any) -> bool:
    return (
        isinstance(x, numbers.Real)
        and not isinstance(x, bool)
        and not (isinstance(x, numbers.Integral) and abs(x) > 1.7e308)
    )


def _open_unit(x: Any) -> bool:
    return _real(x) and 0 < float(x) < 1


def _delta(x: Any) -> bool:
    return x is None or (_real(x) and 0 <= float(x) < 1)


OPTIONS = {
    "samples": _int_at_least(1),
    "confidence": _open_unit,
    "delta": _delta,
    "n_thresholds": _int_at_least(1),
    "pilot_samples": lambda x: x is None or _int_at_least(1)(x),
    "batch_size": _int_at_least(1),
}


@pytest.mark.parametrize("option", sorted(OPTIONS))
@settings(max_examples=MAX_EXAMPLES)
@given(value=HOSTILE)
def test_audit_options_are_validated_before_sampling(option: str, value: Any) -> None:
    calls: list[int] = []

    def counted(count: float, n_samples: int, rng: np.random.Generator) -> np.ndarray:
        calls.append(n_samples)
        return laplace(count, n_samples, rng)

    kwargs = {"samples": 2000, "executor": None, option: value}
    if option == "samples" and OPTIONS[option](value) and value > 5000:
        return  # a valid but large budget: not what this test is about
    if option in ("pilot_samples", "batch_size") and OPTIONS[option](value) and (value or 0) > 5000:
        return
    if option == "n_thresholds" and OPTIONS[option](value) and value > 64:
        return
    try:
        audit_mechanism(counted, PAIR, claim=PureDP(1.0), **kwargs)
    except (ValueError, TypeError) as error:
        assert not OPTIONS[option](value), f"{option}={value!r} refused: {error}"
        assert f"`{option}`" in str(error) or option in str(error), str(error)
        assert not calls, "the mechanism ran before the options were validated"
    else:
        assert OPTIONS[option](value), f"{option}={value!r} was accepted"


@settings(max_examples=MAX_EXAMPLES)
@given(claim=HOSTILE)
def test_a_claim_must_be_a_guarantee(claim: Any) -> None:
    with pytest.raises(TypeError, match="`claim`"):
        audit_mechanism(laplace, PAIR, claim=claim, samples=1000, executor=None)


def _raises(count: float, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    raise RuntimeError("user bug")


def _nan(count: float, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    out = laplace(count, n_samples, rng)
    out[::7] = np.nan
    return out


def _short(count: float, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    return laplace(count, n_samples - 1, rng)


def _scalar(count: float, n_samples: int, rng: np.random.Generator) -> float:
    return float(count)


def _strings(count: float, n_samples: int, rng: np.random.Generator) -> list[str]:
    return ["x"] * n_samples


@pytest.mark.parametrize(
    ("mechanism", "match"),
    [
        (_raises, r"_raises raised RuntimeError.*user bug"),
        (_nan, r"_nan returned \d+ NaN"),
        (_short, r"_short must return an array with n_samples"),
        (_scalar, r"_scalar must return an array with n_samples"),
    ],
)
def test_a_broken_mechanism_is_named(mechanism: Any, match: str) -> None:
    with pytest.raises(MechanismError, match=match) as caught:
        audit_mechanism(mechanism, PAIR, claim=PureDP(1.0), samples=2000, executor=None)
    if mechanism is _raises:
        assert isinstance(caught.value.__cause__, RuntimeError)


def test_unusable_outputs_are_named() -> None:
    with pytest.raises(MechanismError, match="_strings"):
        audit_mechanism(_strings, PAIR, claim=PureDP(1.0), samples=2000, executor=None)


@settings(max_examples=MAX_EXAMPLES)
@given(relation=HOSTILE, description=HOSTILE)
def test_neighboring_pair_validates_relation_and_description(
    relation: Any, description: Any
) -> None:
    try:
        pair = NeighboringPair(0.0, 1.0, relation, description)
    except ValueError as error:
        assert "`neighboring_relation`" in str(error)
    except TypeError as error:
        assert "`description`" in str(error)
    else:
        assert isinstance(pair.description, str)


TOML_DOCUMENTS = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
    st.sampled_from(
        [
            "",
            "[[release]]",
            "title = 1\n[[release]]\nevent = 'Laplace'",
            "[[release]]\nevent = 'Laplace'\nscale = nan\nper = {agent = 1}",
            "[[release]]\nevent = 'Laplace'\nscale = -1.0\nper = {agent = [1, 2]}",
            "[[release]]\nevent = 'Nope'\nper = {agent = 1}",
            "target_delta = 2\n[[release]]\nevent = 'Laplace'\nscale = 1.0\nper = {agent = 1}",
            "[claim]\nepsilon = inf\n[[release]]\nevent = 'Laplace'\nscale = 1.0\nper = {agent = 1}",
            "[[release]]\nevent = 'Laplace'\nscale = 1.0\nper = {agent = 1}\ncount = 0",
            "[[release]]\nevent = 'Laplace'\nscale = 1.0\nper = {agent = 1}\ncount = 1e400",
        ]
    ),
)


@settings(max_examples=MAX_EXAMPLES)
@given(document=TOML_DOCUMENTS)
def test_deployment_loader_refuses_malformed_files_with_data_format_error(
    document: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("toml") / "deployment.toml"
    path.write_text(document, encoding="utf-8")
    try:
        deployment = load_deployment(path)
    except DataFormatError as error:
        assert str(path) in str(error)
    else:
        assert deployment.releases  # only a complete description loads


@settings(max_examples=MAX_EXAMPLES)
@given(
    data=st.dictionaries(
        st.sampled_from(
            [
                "title",
                "relation",
                "neighboring_relation",
                "disjoint",
                "target_delta",
                "claim",
                "release",
                "calibration",
                "x",
            ]
        ),
        HOSTILE,
        max_size=4,
    )
)
def test_parse_deployment_refuses_hostile_mappings(data: dict) -> None:
    with pytest.raises(DataFormatError):
        parse_deployment(data, source="fuzz")


def test_missing_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        load_deployment(tmp_path / "absent.toml")
