"""Mechanism-level audit of Li & Song's first message (audit.families.li_song.recipes.audit_li_song_release).

The Fig. 4 rows (M = 50) are audited through one Laplace release at the scale the
algorithm charged; the checks: the bound brackets from below the accountant's ε of the
message (sound and close at Mε = 5), and it never passes the sampling ceiling
``ln(n / ln(4/α))`` documented for large Mε. Seeds pinned; false-failure rates stated.
"""

from __future__ import annotations

import math

import pytest
from fedpriv.audit.claims.register import REGISTER
from fedpriv.audit.engine.coupled import AuditBudget
from fedpriv.audit.families.li_song.recipes import audit_li_song_release, li_song_accountant

__all__: list[str] = []


def _entry(key: str):
    return next(e for e in REGISTER if e.key == key)


@pytest.mark.statistical
def test_fig4_release_is_bracketed_closely_at_m_epsilon_5() -> None:
    """Mε = 5: 0.9·5 <= bound <= 5 at 10⁶ runs per world.

    The upper side fails for a correct audit with probability <= 5%; at 10⁶ runs the
    projected bound is about 4.95 (the event {ȳ beyond both means} has probability ½ in
    D and ½e⁻⁵ in D', about 3,400 runs), so the lower side fails with negligible
    probability. Seed pinned.
    """
    claim = _entry("li_song/cdp-mab/fig4/eps0.1").claim
    _, accountant, _ = li_song_accountant(claim)
    audit = audit_li_song_release(claim, AuditBudget(samples=10**6), seed=4)
    assert accountant == pytest.approx(5.0)
    assert 0.9 * accountant <= audit.bound.epsilon_lower_bound <= accountant
    assert "one Laplace release" in audit.event and "agent 0" in audit.neighbors


def test_fig4_release_at_m_epsilon_50_stays_under_the_sampling_ceiling() -> None:
    """Mε = 50 at 10⁵ runs: the bound is positive and at most ln(n / ln(4/α)) = 9.8."""
    claim = _entry("li_song/cdp-mab/fig4/eps1").claim
    audit = audit_li_song_release(claim, AuditBudget(samples=10**5), seed=0)
    ceiling = math.log(10**5 / math.log(4 / 0.05))
    assert 0.0 < audit.bound.epsilon_lower_bound <= ceiling + 1e-9


def test_fig4_rows_are_audited_not_accountant_only() -> None:
    rows = [e for e in REGISTER if "/fig4/" in e.key]
    assert len(rows) == 4
    assert all(e.audit is audit_li_song_release for e in rows)
    assert all(not e.channel.startswith("accountant only") for e in rows)


@pytest.mark.parametrize(
    "key",
    [
        "li_song/hdp-mab/messages",
        "li_song/ddp-mab/round-limited",
        "li_song/ce-cdp-mab/messages",
        "li_song/hdp-mab/actions",
        "li_song/ddp-mab/actions",
    ],
)
def test_audit_samples_from_epoch_one_equal_the_whole_runs(key):
    """The end-to-end audits sample runs stopped after epoch 1: agent 0's first message
    and first exploitation arm are, bit for bit, those of the whole runs, and so are
    epoch 1's ledger rows."""
    import numpy as np
    from fedpriv.audit.claims.register import claims_for
    from fedpriv.audit.families.li_song.recipes import (
        _MESSAGE_KINDS,
        _first_exploit,
        _first_message,
        li_song_environment,
        run_li_song,
    )

    (claim,) = [e.claim for e in claims_for("li_song") if e.key == key]
    s = claim.setting_dict()
    actions = key.endswith("actions")
    env = li_song_environment(s, tied=actions)
    record = "actions" if actions else "messages"
    seed = np.random.SeedSequence(8)
    whole = run_li_song(s, env, n_trials=400, seed=seed, record=record)
    short = run_li_song(s, env, n_trials=400, seed=seed, record=record, stop_epoch=1)
    if actions:
        expected, got = _first_exploit(whole, n_trials=400), _first_exploit(short, n_trials=400)
        assert np.unique(expected).size > 1
    else:
        kind = _MESSAGE_KINDS[s["structure"]]
        expected = _first_message(whole, n_trials=400, kind=kind, arm=0)
        got = _first_message(short, n_trials=400, kind=kind, arm=0)
        assert np.unique(expected).size > 100  # distinct noisy messages, not all missing
        first = whole.messages[whole.messages["epoch"] == 1].reset_index(drop=True)
        assert short.messages.equals(first)
    np.testing.assert_array_equal(got, expected)
    ledger = whole.accountant.ledger.draws
    first_epoch = ledger[ledger["epoch"] == 1].reset_index(drop=True)
    assert short.accountant.ledger.draws.equals(first_epoch)
    assert (short.committed_arm == -1).all()
