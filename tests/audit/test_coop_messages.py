"""The cooperative UCB's per-message accountant (issue 10 §4) and message contents."""

from __future__ import annotations

import math

import pytest
from fedpriv.audit.claims.register import claims_for
from fedpriv.audit.families.dubey_aamas.recipes import (
    coop_accountant,
    coop_message_accountant,
    coop_message_contents,
    run_coop,
)
from fedpriv.privacy.calibrations import interval_length


def _claim(key: str):
    (entry,) = [e for e in claims_for("dubey_aamas") if e.key == key]
    return entry.claim


NOISY = "dubey_aamas/private-coop-ucb/own-noisy/per-message"


def test_per_message_rows_charge_the_worst_message_with_every_release_it_depends_on():
    """The worst message (the last release point within T) depends on every release of
    its stream, so its pure ε is the stream's whole composition, which the algorithm's
    own accountant computes independently (one IntervalRelease per stream)."""
    claim = _claim(NOISY)
    route, epsilon, findings = coop_message_accountant(claim)
    s = claim.setting_dict()
    releases = int(s["horizon"]) // interval_length(float(s["epsilon"]))
    assert route == f"pure (message {releases}: releases 1..{releases})"
    run = run_coop(claim, n_trials=1, seed=0)
    assert epsilon == pytest.approx(run.accountant.get_epsilon(0.0), rel=1e-12)
    assert epsilon > claim.claimed.epsilon  # the per-message claim is exceeded
    assert coop_accountant(claim) == (route, epsilon, findings)
    assert findings[0] == coop_message_contents(claim, releases)
    assert f"release {releases} alone is" in findings[1]


@pytest.mark.parametrize(
    "key",
    ["dubey_aamas/private-coop-ucb/own-raw/per-message", "dubey_aamas/byzantine-coop-ucb/title"],
)
def test_raw_data_in_a_message_makes_the_per_message_epsilon_infinite(key):
    route, epsilon, findings = coop_message_accountant(_claim(key))
    assert route == "nonprivate" and math.isinf(epsilon) and findings


def test_message_contents_say_what_the_counts_follow():
    noisy = _claim(NOISY)
    assert "release 1 itself" in coop_message_contents(noisy, 1)
    assert "releases 1..4 of the stream" in coop_message_contents(noisy, 5)
    assert "reaches 10, f = 2" in coop_message_contents(noisy, 5)
    assert "releases 1..n−1" in coop_message_contents(noisy)
    raw = _claim("dubey_aamas/private-coop-ucb/own-raw/per-message")
    assert "raw rewards" in coop_message_contents(raw, 3)
    assert "raw reward itself" in coop_message_contents(
        _claim("dubey_aamas/byzantine-coop-ucb/title")
    )
    with pytest.raises(ValueError, match="`message` must be >= 1, got 0"):
        coop_message_contents(noisy, 0)


@pytest.mark.parametrize(
    "key", [NOISY, "dubey_aamas/private-coop-ucb/own-noisy/fixed-rule/composed"]
)
def test_first_release_of_runs_stopped_after_the_round_robin_equals_the_whole_runs(key):
    """The first-release audit samples runs stopped at round K f: agent 0's first
    released mean of arm 0 is, bit for bit, the whole transcript's column."""
    import numpy as np
    from fedpriv.algorithms.seeding import child_seed
    from fedpriv.audit.families.dubey_aamas.recipes import _first_released, _flipped_pair, _observe

    claim = _claim(key)
    s = claim.setting_dict()
    tables, _ = _flipped_pair(s)
    f, k, horizon = interval_length(float(s["epsilon"])), int(s["n_arms"]), int(s["horizon"])
    rounds = np.unique(np.linspace(1, horizon, 8).astype(np.int64))
    for world in (0, 1):
        seed = child_seed(4, world)
        whole = run_coop(claim, n_trials=300, seed=seed, table=tables[world], record=True)
        short = run_coop(
            claim, n_trials=300, seed=seed, table=tables[world], record=True, stop=k * f
        )
        expected = _observe(whole, rounds, k * f + 1, f)[:, -1]
        got = _first_released(short.transcript.content, f)
        assert np.isfinite(expected).all() and np.unique(expected).size > 100
        np.testing.assert_array_equal(got, expected)
