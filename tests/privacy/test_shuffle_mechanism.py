"""Tests for `fedpriv.privacy.mechanisms.shuffle`: the shuffled randomized-response sampler
and its exact law (the reference the amplification route is checked against)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedpriv.privacy import Accountant, PureDP, Shuffled
from fedpriv.privacy.errors import BudgetExceededError
from fedpriv.privacy.mechanisms.shuffle import (
    shuffled_randomized_response,
    shuffled_randomized_response_delta,
    shuffled_randomized_response_log_pmf,
)
from scipy import stats


def _accountant(**kwargs) -> Accountant:
    return Accountant(neighboring_relation="replace_one", disjoint=("run",), **kwargs)


@pytest.mark.statistical
def test_sampler_follows_the_exact_law() -> None:
    """Chi-square test of 200,000 views against the exact pmf; rejected at p < 1e-6, so a
    correct sampler fails with probability 1e-6 (pinned seed)."""
    inputs = np.array([0, 1, 2, 2])
    runs = 200_000
    counts = shuffled_randomized_response(
        np.broadcast_to(inputs, (runs, inputs.size)),
        local_epsilon=0.8,
        num_buckets=3,
        accountant=_accountant(keep_draw_rows=False),
        keys={"run": np.arange(runs)},
        rng=np.random.default_rng(20261129),
    )
    log_pmf = shuffled_randomized_response_log_pmf(inputs, local_epsilon=0.8, num_buckets=3)
    support = np.isfinite(log_pmf).ravel()
    probs = np.exp(log_pmf.ravel()[support])
    cells = np.ravel_multi_index(tuple(counts.T), log_pmf.shape)
    observed = np.bincount(cells, minlength=log_pmf.size)
    assert observed[~support].sum() == 0  # every view sums to n_reports
    expected = probs / probs.sum() * runs
    assert stats.chisquare(observed[support], expected).pvalue > 1e-6


def test_every_run_is_charged_one_shuffled_event() -> None:
    accountant = _accountant()
    shuffled_randomized_response(
        np.zeros((3, 7), dtype=int),
        local_epsilon=1.5,
        accountant=accountant,
        keys={"run": np.arange(3)},
        rng=np.random.default_rng(0),
    )
    charges = accountant.ledger.charges
    assert charges["run"].tolist() == [0, 1, 2]
    assert set(charges["event"]) == {"Shuffled"}
    for run in range(3):
        event = Shuffled(local_epsilon=1.5, n_reports=7)
        assert accountant.ledger.cells(where={"run": run}) == [[(event, 1)]]


def test_budget_refusal_draws_nothing() -> None:
    accountant = _accountant(budget=PureDP(1.0))
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    with pytest.raises(BudgetExceededError):
        shuffled_randomized_response(
            np.zeros((2, 5), dtype=int),
            local_epsilon=2.0,
            accountant=accountant,
            keys={"run": np.arange(2)},
            rng=rng,
        )
    assert rng.bit_generator.state == before
    assert accountant.ledger.cells() == []


@pytest.mark.parametrize(
    ("inputs", "kwargs", "error", "match"),
    [
        (np.zeros((2, 3)), {}, TypeError, "integer"),
        (np.full((2, 3), 2), {}, ValueError, "num_buckets"),
        (np.zeros(3, dtype=int), {}, ValueError, "n_runs"),
        (np.zeros((2, 3), dtype=int), {"local_epsilon": 0.0}, ValueError, "local_epsilon"),
        (np.zeros((2, 3), dtype=int), {"num_buckets": 1}, ValueError, "num_buckets"),
        (np.zeros((2, 3), dtype=int), {"rng": 0}, TypeError, "rng"),
    ],
)
def test_bad_input_is_refused(inputs, kwargs, error, match) -> None:
    arguments = {
        "local_epsilon": 1.0,
        "accountant": _accountant(),
        "keys": {"run": np.arange(2)},
        "rng": np.random.default_rng(0),
    }
    arguments.update(kwargs)
    with pytest.raises(error, match=match):
        shuffled_randomized_response(inputs, **arguments)


def test_exact_law_of_one_reporter_is_randomized_response() -> None:
    log_pmf = shuffled_randomized_response_log_pmf([2], local_epsilon=1.0, num_buckets=3)
    keep = math.e / (math.e + 2)
    assert np.exp(log_pmf[0, 0, 1]) == pytest.approx(keep)
    assert np.exp(log_pmf[1, 0, 0]) == pytest.approx((1 - keep) / 2)


def test_exact_delta_refuses_mismatched_pairs() -> None:
    with pytest.raises(ValueError, match="same length"):
        shuffled_randomized_response_delta([0, 0], [1], 0.5, local_epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        shuffled_randomized_response_delta([0], [1], -0.5, local_epsilon=1.0)
    with pytest.raises(ValueError, match="MAX_EXACT_STATES"):
        shuffled_randomized_response_log_pmf(
            np.zeros(60, dtype=int), local_epsilon=1.0, num_buckets=4
        )
