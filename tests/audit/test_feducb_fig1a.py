"""The sync-timing audit of FedUCB's Fig. 1A rows (audit/families/feducb/fig1a.py).

False-alarm rate: every run here is deterministic (nothing is noised before a first
sync), so each world's runs all return one value. A pair of identical worlds then
gives equal counts for every event and a bound of 0 with probability 1 (tested
below); a knife-edge pair gives exactly the Clopper–Pearson bound of n of n events
against 0 of n, also with probability 1. The seeds are not read; the audit counts
only the runs it executes (tested below).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from fedpriv.algorithms.environments.linear import LinearBanditTables
from fedpriv.algorithms.feducb.first_sync import first_sync_rounds
from fedpriv.audit.claims.register import claims_for
from fedpriv.audit.engine.coupled import AuditBudget, confirm_event
from fedpriv.audit.families.feducb import fig1a as fa

_ROWS = {e.key: e for e in claims_for("feducb") if "/fig1a/" in e.key}
_BUDGET = AuditBudget(pilot_samples=20, samples=300, batch_size=100)


def _claim(eps: str = "1"):
    return _ROWS[f"feducb/feducb/fig1a/eps{eps}"].claim


def test_the_six_rows_are_audited_in_their_own_setting():
    assert sorted(_ROWS) == sorted(
        f"feducb/feducb/fig1a/eps{e}" for e in ("0.1", "0.5", "1", "2", "5", "10")
    )
    for entry in _ROWS.values():
        s = entry.claim.setting_dict()
        assert (s["n_agents"], s["dim"], s["horizon"], s["delta"]) == (100, 10, 10**7, 0.1)
        assert entry.audit is fa.audit_fig1a_sync_timing
        assert not entry.channel.startswith("accountant only")


def test_the_rows_state_the_deterministic_event_and_its_threshold():
    # ε = ∞ by analysis (the raw channel), the audit a witness: no budget is chosen to
    # make its finite bound clear the claim, and the audited D is not the regime's.
    for entry in _ROWS.values():
        assert entry.raw_channel and entry.sample_factor == 1.0, entry.key
        assert "probability 1 in D and 0 in D'" in entry.note
        assert "not Fig. 1A's n = O(M log T) regime" in entry.note


def test_runs_needed_is_the_least_count_above_epsilon():
    n = fa.runs_needed(3.0, delta=0.1)
    for count, above in ((n, True), (n - 1, False)):
        bound = confirm_event(np.ones(count), np.zeros(count), confidence=0.95, delta=0.1)
        assert (bound.epsilon_lower_bound > 3.0) is above


def test_the_knife_edge_separates_batched_runs_and_depends_on_epsilon():
    edges = {eps: fa.fig1a_knife_edge(_claim(eps)) for eps in ("1", "10")}
    for eps, edge in edges.items():
        for tables, expected in ((edge.tables_d, edge.tau), (edge.tables_d_prime, edge.tau + 1)):
            block = tables.block(0, tables.horizon)
            batch = LinearBanditTables.from_arrays(
                tables.spec,
                *(np.repeat(a, 3, axis=0) for a in (block.contexts, block.rewards, tables.theta)),
            )
            rounds = first_sync_rounds(
                batch, epsilon=float(eps), delta=0.1, horizon=10**7, threshold=edge.threshold
            ).rounds
            assert rounds.tolist() == [expected] * 3
    # ε enters before any release (S₀, the shift of W, β): no run is shared across rows
    assert edges["1"].threshold != edges["10"].threshold


def test_the_audit_confirms_the_knife_edge_event():
    claim = _claim("2")
    edge = fa.fig1a_knife_edge(claim)
    result = fa.audit_fig1a_sync_timing(claim, _BUDGET, 7)
    assert result.event == f"first sync time == {edge.tau}"
    assert "deterministic event" in result.neighbors and "ε = ∞ by analysis" in result.neighbors
    n = min(_BUDGET.samples, _BUDGET.batch_size)  # executed runs only
    expected = confirm_event(np.ones(n), np.zeros(n), confidence=0.95, delta=0.1)
    assert result.bound.epsilon_lower_bound == pytest.approx(expected.epsilon_lower_bound)
    assert result.bound.epsilon_lower_bound > 0
    assert result.epsilon_lower_bound_at_1e_6 > result.bound.epsilon_lower_bound


def test_the_bound_counts_executed_runs_only():
    claim = _claim("0.5")
    runs = fa.runs_needed(0.5, delta=0.1)
    one, many = (
        fa.audit_fig1a_sync_timing(
            claim, AuditBudget(pilot_samples=2, samples=runs, batch_size=size), 4
        )
        for size in (1, runs)
    )
    assert one.event == many.event
    assert (one.bound.n_samples, many.bound.n_samples) == (1, runs)
    assert many.bound.epsilon_lower_bound > 0.5 > one.bound.epsilon_lower_bound


def test_the_event_is_chosen_before_the_confirming_samples(monkeypatch):
    # The confirming runs (address (1, world)) are replaced by a constant: if the
    # event were chosen on them it would change; it must not, and the bound drops to 0.
    calls = []
    real = fa.search_and_confirm

    def spying(samplers, **kwargs):
        def wrap(sample):
            def spy(world, n, root):
                confirming = tuple(root.spawn_key)[:1] == (1,)
                calls.append("confirm" if confirming else "pilot")
                return np.full(n, -5.0) if confirming else sample(world, n, root)

            return spy

        return real({k: wrap(v) for k, v in samplers.items()}, **kwargs)

    claim = _claim("1")
    honest = fa.audit_fig1a_sync_timing(claim, _BUDGET, 3)
    monkeypatch.setattr(fa, "search_and_confirm", spying)
    sabotaged = fa.audit_fig1a_sync_timing(claim, _BUDGET, 3)
    assert sabotaged.event == honest.event
    assert sabotaged.bound.epsilon_lower_bound == 0.0
    assert calls == ["pilot", "pilot", "confirm", "confirm"]


def test_identical_worlds_give_no_evidence(monkeypatch):
    real = fa.fig1a_knife_edge

    def same_worlds(claim, **kwargs):
        edge = real(claim, **kwargs)
        return dataclasses.replace(edge, tables_d_prime=edge.tables_d)

    monkeypatch.setattr(fa, "fig1a_knife_edge", same_worlds)
    result = fa.audit_fig1a_sync_timing(_claim("5"), _BUDGET, 1)
    assert result.bound.epsilon_lower_bound == 0.0


def test_bad_input_is_rejected_naming_the_parameter():
    claim = _claim("1")
    with pytest.raises(ValueError, match="first_round"):
        fa.fig1a_knife_edge(claim, first_round=-1)
    with pytest.raises(ValueError, match="shrink"):
        fa.fig1a_knife_edge(claim, shrink=1.5)
    with pytest.raises(ValueError, match="first_round"):
        fa.audit_fig1a_sync_timing(claim, _BUDGET, 0, first_round=2.5)
    fixed = dataclasses.replace(
        claim, setting=tuple((k, "fixed" if k == "schedule" else v) for k, v in claim.setting)
    )
    with pytest.raises(ValueError, match="claim"):
        fa.audit_fig1a_sync_timing(fixed, _BUDGET, 0)
    with pytest.raises(ValueError, match="epsilon"):
        fa.runs_needed(float("inf"), delta=0.1)
    with pytest.raises(ValueError, match="delta"):
        fa.runs_needed(1.0, delta=1.0)


def _samplers(monkeypatch, claim, budget):
    """The audit's samplers, captured as search_and_confirm receives them."""
    captured = {}
    real = fa.search_and_confirm

    def capture(samplers, **kwargs):
        captured.update(samplers)
        return real(samplers, **kwargs)

    monkeypatch.setattr(fa, "search_and_confirm", capture)
    fa.audit_fig1a_sync_timing(claim, budget, 5)
    (sample,) = captured.values()
    return sample


def test_the_samplers_runs_are_the_algorithms_runs(monkeypatch):
    claim = _claim("1")
    edge = fa.fig1a_knife_edge(claim)
    sample = _samplers(monkeypatch, claim, _BUDGET)
    root = np.random.SeedSequence(11)
    for world, tables in enumerate((edge.tables_d, edge.tables_d_prime)):
        n = 257  # not a multiple of the batch: the last executed batch would be partial
        every = first_sync_rounds(
            fa._tile(tables, n), epsilon=1.0, delta=0.1, horizon=10**7, threshold=edge.threshold
        ).rounds.astype(np.float64)
        got = sample(world, n, root)
        assert got.dtype == every.dtype and got.shape == every.shape
        assert np.array_equal(got, every)
        assert got[0] == (edge.tau if world == 0 else edge.tau + 1)


def test_every_counted_run_is_executed(monkeypatch):
    claim = _claim("2")
    fa.fig1a_knife_edge(claim)  # the knife-edge search's own runs are not counted below
    executed = []
    real = fa._executed_batch

    def counting(s, tables, threshold, world):
        rounds = real(s, tables, threshold, world)
        executed.append((world, rounds.size))
        return rounds

    monkeypatch.setattr(fa, "_executed_batch", counting)
    budget = AuditBudget(pilot_samples=40, samples=5_000, batch_size=30)
    result = fa.audit_fig1a_sync_timing(claim, budget, 2)
    # pilot and confirmation each execute one batch per world, capped at the batch size
    assert sorted(executed) == [(0, 30), (0, 30), (1, 30), (1, 30)]
    assert (result.bound.count_d, result.bound.count_d_prime) == (30, 0)
    assert result.bound.n_samples == 30


def test_a_batch_whose_runs_disagree_stops_the_audit(monkeypatch):
    real = fa._first_sync

    def drifting(s, tables, threshold):
        out = real(s, tables, threshold)
        if out.rounds.size > 1:
            rounds = out.rounds.copy()
            rounds[-1] += 1
            out = dataclasses.replace(out, rounds=rounds)
        return out

    monkeypatch.setattr(fa, "_first_sync", drifting)
    with pytest.raises(RuntimeError, match="runs of world D differ"):
        fa.audit_fig1a_sync_timing(_claim("5"), _BUDGET, 1)
