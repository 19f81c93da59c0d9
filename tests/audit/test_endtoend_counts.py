"""Fed_UCB's shared counts ñ: the audit recipe of the shared-counts rows."""

from __future__ import annotations

import numpy as np
from fedpriv.audit.claims.register import REGISTER
from fedpriv.audit.engine.coupled import AuditBudget
from fedpriv.audit.families.gossip_fed_ucb.counts import audit_gossip_fed_ucb_counts


def _entry(mode: str):
    key = f"gossip_fed_ucb/gossip-fed-ucb/{mode}/shared-counts"
    return next(entry for entry in REGISTER if entry.key == key)


def test_raw_initial_pulls_fix_the_first_action_the_counts_reveal():
    # With X(0) raw the round-1 argmax is a deterministic function of the canary: every
    # D run pulls arm 0 and no D' run does, so the bound is limited only by the samples
    # (no randomness in the outcome: this check cannot fail by chance).
    entry = _entry("paper")
    budget = AuditBudget(pilot_samples=50, samples=300, batch_size=300)
    result = audit_gossip_fed_ucb_counts(entry.claim, budget, np.random.SeedSequence(3))
    assert result.bound.count_d == 300 and result.bound.count_d_prime == 0
    assert result.bound.epsilon_lower_bound > 1.0  # above the claim's ε = 1
    assert entry.raw_channel and "ñ" in entry.raw_channel
