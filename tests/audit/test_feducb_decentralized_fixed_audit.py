"""Decentralized FedUCB, fixed schedule: accountant and end-to-end audit recipes, CLI.

The audits run at confidence ``1 - 1e-6``: the "holds" expectation fails only if the
Clopper–Pearson bounds fail (probability <= 1e-6); the noise-free control is a
deterministic distinguisher whose bound is derived in the test.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from fedpriv.audit.claims.register import claims_for
from fedpriv.audit.claims.verify import evaluate_claim
from fedpriv.audit.engine.coupled import AuditBudget
from fedpriv.audit.families.feducb.recipes import (
    audit_feducb_decentralized_fixed,
    feducb_decentralized_fixed_accountant,
)
from fedpriv.cli.main import main

KEY = "feducb/feducb-decentralized/fixed"
CONFIDENCE = 1.0 - 1e-6
BUDGET = AuditBudget(pilot_samples=60, samples=300, confidence=CONFIDENCE, batch_size=300)


def _entry():
    (entry,) = [e for e in claims_for("feducb") if e.key == KEY]
    return entry


def test_the_register_row_is_a_run_and_an_audit():
    entry = _entry()
    assert entry.accountant is feducb_decentralized_fixed_accountant
    assert entry.audit is audit_feducb_decentralized_fixed
    assert "hypothetical" not in entry.claim.mode
    route, epsilon, findings = entry.accountant(entry.claim)
    assert epsilon <= entry.claim.claimed.epsilon and route
    assert any("no sync-timing channel" in f for f in findings)
    assert not any("unpriced channel" in f for f in findings)


@pytest.mark.statistical
def test_the_fixed_schedule_holds_end_to_end():
    """The neighbour's view of agent 0's releases: arrival times coincide in both worlds
    and the released statistics carry the Privatizer's noise, so a bound above the
    claimed ε = 1 (δ = 0.1) has probability <= 1e-6."""
    result = evaluate_claim(KEY, BUDGET, np.random.SeedSequence(2024))
    assert result.audit.epsilon_lower_bound <= 1.0
    assert result.verdict == "holds"
    assert result.channel.startswith("neighbour: agent 0's releases")


def test_without_noise_the_same_audit_sees_the_changed_user():
    """Control: ε = inf (no noise) makes agent 0's first release a function of the
    changed decision set, so one released value is hit n/n times in D and 0/n in D';
    the bound is the deterministic ceiling ln((a^(1/n) − δ)/(1 − a^(1/n))),
    a = (1 − confidence)/4, at n = 300 (≈ 2.85)."""
    claim = _entry().claim
    setting = {**claim.setting_dict(), "epsilon": math.inf}
    noiseless = dataclasses.replace(claim, setting=tuple(setting.items()))
    audit = audit_feducb_decentralized_fixed(noiseless, BUDGET, np.random.SeedSequence(7))
    a = (1.0 - CONFIDENCE) / 4.0
    ceiling = math.log((a ** (1 / 300) - 0.1) / (1.0 - a ** (1 / 300)))
    assert audit.bound.epsilon_lower_bound == pytest.approx(ceiling, rel=1e-9)
    assert "release" in audit.event


def test_cli_runs_the_fixed_schedule(capsys):
    argv = [
        "run",
        "feducb-decentralized",
        "--agents",
        "3",
        "--arms",
        "4",
        "--dim",
        "2",
        "--horizon",
        "40",
        "--gamma",
        "2",
        "--graph",
        "path",
        "--schedule",
        "fixed",
        "--sync-every",
        "8",
        "--json",
    ]
    assert main(argv) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["schedule"] == "fixed" and record["sync_every"] == 8
    assert record["communication"]["requests"]["mean"] == 0
    assert record["communication"]["releases"]["mean"] == 5 * 3 * 2  # ticks, agents, sets
    assert record["guarantee"]["non_private_releases"] == []
    assert main(argv[:-3] + ["--json"]) == 0  # --sync-every defaults to 100
    assert json.loads(capsys.readouterr().out)["sync_every"] == 100


def test_cli_rejects_sync_every_with_the_adaptive_schedule(capsys):
    assert (
        main(
            ["run", "feducb-decentralized", "--agents", "3", "--horizon", "20", "--sync-every", "8"]
        )
        == 2
    )
    assert "`sync_every` applies to schedule='fixed' only" in capsys.readouterr().err
