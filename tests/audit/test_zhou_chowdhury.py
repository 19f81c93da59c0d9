"""Zhou & Chowdhury (ICLR 2024) rows: registration, bounds and verdicts."""

from __future__ import annotations

import numpy as np
import pytest
from fedpriv.audit.claims.family import family
from fedpriv.audit.claims.verify import evaluate_entry
from fedpriv.audit.engine.coupled import AuditBudget
from fedpriv.audit.families.zhou_chowdhury import recipes as zr
from fedpriv.audit.families.zhou_chowdhury.claims import build_claims
from hypothesis import given, settings
from hypothesis import strategies as st

ROWS = {row.key: row for row in build_claims()}


def test_family_is_registered_through_the_extension_path():
    fam = family("zhou_chowdhury")
    assert fam.key == "zhou_chowdhury"
    assert {r.key for r in fam.claims()} == set(ROWS)
    assert len(ROWS) == 18


@pytest.mark.parametrize("key", sorted(k for k in ROWS if "/ldp/" in k))
def test_paper_rows_have_an_exact_lower_bound_above_the_claim(key):
    row = ROWS[key]
    lower = zr.ldp_analytic_lower(row.claim)
    upper = zr.ldp_accountant(row.claim).epsilon
    assert row.claim.claimed.epsilon < lower <= upper


@pytest.mark.parametrize("key", sorted(k for k in ROWS if "/ldp-corrected/" in k))
def test_corrected_rows_spend_the_claim_and_their_pair_stays_below(key):
    row = ROWS[key]
    upper = zr.ldp_accountant(row.claim).epsilon
    assert upper == pytest.approx(row.claim.claimed.epsilon, rel=1e-6)
    assert upper <= row.claim.claimed.epsilon * (1 + 1e-9)
    assert zr.ldp_analytic_lower(row.claim) <= upper


@pytest.mark.parametrize(
    ("key", "verdict"),
    [
        ("zhou_chowdhury/private-fedlinucb/ldp/fig2b/eps0.2", "violated"),
        ("zhou_chowdhury/private-fedlinucb/ldp-corrected/fig2b/eps0.2", "holds"),
        ("zhou_chowdhury/private-fedlinucb/sdp-vecsum/fig2b/eps0.2", "violated"),
        ("zhou_chowdhury/private-fedlinucb/sdp-vecsum-broadcast/fig2b/eps0.2", "unresolved"),
    ],
)
def test_verdicts_follow_the_rule(key, verdict):
    budget = AuditBudget(pilot_samples=100, samples=500)
    result = evaluate_entry(ROWS[key], budget, np.random.SeedSequence(3))
    assert result.verdict == verdict
    if verdict == "holds":  # the audit never contradicts the accountant (95%, seed fixed)
        assert result.audit.epsilon_lower_bound <= result.accountant_epsilon


def test_crosscheck_page_block_is_the_scripts_output():
    """The page's numbers are generated: its block equals a fresh run of the script."""
    from pathlib import Path

    from fedpriv.audit.families.zhou_chowdhury import crosscheck as cc

    page = Path(__file__).resolve().parents[2] / "docs/explanation/zhou-chowdhury-crosscheck.md"
    text = page.read_text(encoding="utf-8")
    block = text.split("<!-- crosscheck:begin -->\n", 1)[1].split("\n<!-- crosscheck:end -->")[0]
    assert block == cc.render(cc.crosscheck())


def test_shuffle_rows_bracket_the_view():
    """Lower bound (the broadcast sums, a function of the shuffled multiset) never above
    the silo's own bound, which the shuffled view cannot exceed."""
    for key, row in ROWS.items():
        if "/sdp-amp" not in key:
            continue
        lower = zr.sdp_analytic_lower(row.claim)
        upper = zr.sdp_accountant(row.claim).epsilon
        assert 0.0 <= lower <= upper
        if key.endswith("sdp-amp/fig2a/eps0.001"):
            assert lower > row.claim.claimed.epsilon  # violated on the adaptive pair


def test_shuffle_route_credits_no_amplification_to_gaussian_silos():
    """The Shuffled route prices (ε₀, δ₀) reports unamplified, so it is never tighter
    than the silo's own Gaussian bound here; the row keeps the tighter (both valid)."""
    for key, row in ROWS.items():
        if "/sdp-amp" not in key:
            continue
        _, shuffled = zr.shuffle_route(row.claim)
        own = zr.ldp_accountant(row.claim).epsilon
        assert zr.sdp_accountant(row.claim).epsilon == min(own, shuffled)
        assert shuffled >= own


def test_shuffle_route_outside_its_domain_bounds_nothing():
    """A silo ε₀ beyond the Shuffled event's range (own batch data at ε = 1, M = 10) gives
    the route ∞, so the row keeps the silo's own bound instead of raising."""
    from fedpriv.audit.claims.entry import make_claim
    from fedpriv.privacy import ApproxDP, NeighboringRelation

    setting = {
        "n_agents": 10,
        "n_arms": 20,
        "dim": 5,
        "horizon": 200,
        "epsilon": 1.0,
        "delta": 0.1,
        "batch_size": 25,
        "protocol": "sdp-amp",
        "acts_on": "own-batch-data",
    }
    claim = make_claim(
        "zhou_chowdhury",
        "private-fedlinucb",
        "paper",
        setting,
        NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD,
        ApproxDP(1.0, 0.1),
        "test",
    )
    assert zr.shuffle_route(claim)[1] == float("inf")
    own = zr.ldp_accountant(claim).epsilon
    assert zr.sdp_accountant(claim).epsilon == own < float("inf")


@settings(max_examples=25, deadline=None)
@given(
    n_agents=st.integers(1, 4),
    n_arms=st.integers(2, 5),
    dim=st.integers(2, 4),
    batch_size=st.integers(1, 6),
    n_batches=st.integers(1, 20),
    epsilon=st.floats(0.01, 5.0),
    delta=st.floats(1e-6, 0.5),
    broadcast=st.booleans(),
)
def test_lower_bound_never_above_upper_bound(
    n_agents, n_arms, dim, batch_size, n_batches, epsilon, delta, broadcast
):
    """Soundness bracket on random settings: the pair's exact ε <= the accountant's."""
    from fedpriv.audit.claims.entry import make_claim
    from fedpriv.privacy import ApproxDP, NeighboringRelation

    setting = {
        "n_agents": n_agents,
        "n_arms": n_arms,
        "dim": dim,
        "horizon": batch_size * n_batches,
        "epsilon": epsilon,
        "delta": delta,
        "batch_size": batch_size,
        "protocol": "ldp",
        "acts_on": "broadcast-sums" if broadcast else "own-batch-data",
    }
    claim = make_claim(
        "zhou_chowdhury",
        "private-fedlinucb",
        "paper",
        setting,
        NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD,
        ApproxDP(epsilon, delta),
        "test",
    )
    assert zr.ldp_analytic_lower(claim) <= zr.ldp_accountant(claim).epsilon * (1 + 1e-9)


_CSV_COLUMNS = [
    "label",
    "protocol",
    "target_epsilon",
    "target_delta",
    "trial",
    "avg_regret_per_silo",
    "regret_per_silo",
    "n_syncs",
    "noise_stddev",
    "regularizer",
    "records_per_leaf",
    "accountant_epsilon",
    "accountant_route",
]


@pytest.mark.parametrize("name", ["zhou-chowdhury-fig2a", "zhou-chowdhury-fig2b"])
def test_figure_writes_its_four_files_with_one_curve_per_run(name, tmp_path):
    import pandas as pd
    from fedpriv.audit.families.zhou_chowdhury.experiments import FIGURES, run_figure

    folder = run_figure(name, out=tmp_path, horizon=50, n_trials=2, n_agents=3)
    stem = name.removeprefix("zhou-chowdhury-")
    assert folder == tmp_path / "zhou_chowdhury"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        f"{stem}{suffix}" for suffix in (".png", ".csv", "_curves.csv", ".md")
    )
    runs = FIGURES[name][1]
    labels = [label for label, *_ in runs]
    table = pd.read_csv(folder / f"{stem}.csv")
    assert list(table.columns) == _CSV_COLUMNS
    assert list(table["label"]) == [label for label in labels for _ in range(2)]
    assert list(table["trial"]) == [0, 1] * len(runs)
    assert (table["n_syncs"] == 2).all()  # ⌊50/25⌋ batches
    # every private run's ledger is finite at its δ; the non-private one is inf
    private = table["protocol"] != "non-private"
    assert np.isfinite(table.loc[private, "accountant_epsilon"]).all()
    assert np.isinf(table.loc[~private, "accountant_epsilon"]).all()
    np.testing.assert_allclose(table["avg_regret_per_silo"], table["regret_per_silo"] / 50)
    curves = pd.read_csv(folder / f"{stem}_curves.csv")
    assert list(curves.columns) == ["label", "t", "mean", "min", "max"]
    assert list(dict.fromkeys(curves["label"])) == labels  # one curve per run, in order
    for label, curve in curves.groupby("label"):
        assert list(curve["t"]) == list(range(1, 51))
        assert (curve["min"] <= curve["mean"]).all() and (curve["mean"] <= curve["max"]).all()
        # R(t)/t at T is the table's R(T)/T (mean over trials)
        final = table.loc[table["label"] == label, "avg_regret_per_silo"].mean()
        assert curve["mean"].iloc[-1] == pytest.approx(final)
    note = (folder / f"{stem}.md").read_text(encoding="utf-8")
    assert f"`fedpriv experiment {name}`" in note and "MSLR-WEB10K" in note
    assert all(f"| {label} |" in note for label in labels)


def test_fig2b_runs_the_vector_sum_protocol(tmp_path):
    from fedpriv.audit.families.zhou_chowdhury.experiments import FIGURES

    protocols = {protocol: eps for _, protocol, eps, _ in FIGURES["zhou-chowdhury-fig2b"][1]}
    assert protocols == {"non-private": None, "ldp": 0.2, "sdp-vecsum": 0.2}
    fig2a = {(p, eps, d) for _, p, eps, d in FIGURES["zhou-chowdhury-fig2a"][1]}
    assert fig2a == {
        ("non-private", None, None),
        *((p, eps, 1e-4) for p in ("ldp", "sdp-amp") for eps in (1e-4, 1e-3)),
    }


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"horizon": 24}, "horizon"),
        ({"n_trials": 0}, "n_trials"),
        ({"n_agents": 0}, "n_agents"),
        ({"seed": -1}, "seed"),
    ],
)
def test_figure_refuses_bad_sizes_before_writing(kwargs, name, tmp_path):
    from fedpriv.audit.families.zhou_chowdhury.experiments import run_figure

    with pytest.raises(ValueError, match=f"`{name}`"):
        run_figure("zhou-chowdhury-fig2a", out=tmp_path, **kwargs)
    with pytest.raises(ValueError, match="`name`"):
        run_figure("zhou-chowdhury-fig2c", out=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_calibration_finding_numbers_are_the_exact_values():
    import math

    from fedpriv.audit.families.zhou_chowdhury.findings import FINDINGS
    from fedpriv.privacy.accounting.conversions import gaussian_dp_epsilon
    from fedpriv.privacy.calibrations.zhou_chowdhury import zc_ldp_noise_stddev, zc_tree_depth

    (finding,) = [f for f in FINDINGS if f.id.endswith("calibration-at-large-epsilon")]
    # the pair: x = e0, x' = (1/2, √3/2), y = 1, y' = -1 moves (G, u) by √4.5
    x, xp = np.array([1.0, 0.0]), np.array([0.5, math.sqrt(3) / 2])
    shift = math.sqrt(np.sum((np.outer(x, x) - np.outer(xp, xp)) ** 2) + np.sum((x + xp) ** 2))
    assert shift == pytest.approx(math.sqrt(4.5))
    kappa = zc_tree_depth(25_000, 25)
    shown = []
    for eps in (1.0, 5.0):
        mu = math.sqrt(kappa) * shift / zc_ldp_noise_stddev(eps, 0.1, depth=kappa)
        exact = gaussian_dp_epsilon(mu, 0.1)
        assert exact > eps
        shown.append(f"{exact:.3g}")
    assert f"ε = {shown[0]} and {shown[1]}" in finding.statement


def _no_constant(name):
    raise ValueError(f"not JSON: {name}")


@pytest.mark.parametrize(("protocol", "status"), [("ldp", 1), ("non-private", 0)])
def test_the_run_command_prints_strict_json_and_its_text(protocol, status, capsys):
    import json

    from fedpriv.cli.main import main

    argv = ["run", "private-fedlinucb", "--protocol", protocol, "--horizon", "100"]
    argv += ["--agents", "3", "--arms", "6"]
    # the paper's ldp run is violated (exit 1, tests/test_cli_zhou_chowdhury.py); the
    # non-private one claims nothing (exit 0)
    assert main([*argv, "--json"]) == status
    record = json.loads(capsys.readouterr().out, parse_constant=_no_constant)
    assert record["algorithm"] == "private-fedlinucb" and record["protocol"] == protocol
    g = record["guarantee"]
    assert g["claimed"]["delta"] == 0.1 and record["seconds"] >= 0
    if protocol == "non-private":  # nothing is noised: ε = ∞, written as "inf"
        assert g["accountant"]["epsilon"] == "inf" and g["verdict"] == "no-claim"
    else:
        assert g["claimed"]["epsilon"] == 1.0 and g["verdict"] == "violated"
        assert 0 < g["accountant"]["epsilon"] < float("inf")
    assert main(argv) == status
    text = capsys.readouterr().out
    assert text.startswith(f"Private-FedLinUCB ({protocol}): regret per silo ")
    assert f", {record['n_syncs']} syncs, " in text


@pytest.mark.parametrize("variant", ["sdp-vecsum", "sdp-vecsum-broadcast"])
def test_vecsum_rows_bracket_the_view(variant):
    """Lower (an exact ε of a marginal of the view) never above the ledger's upper bound."""
    from fedpriv.audit.families.zhou_chowdhury import vecsum as zv

    row = ROWS[f"zhou_chowdhury/private-fedlinucb/{variant}/fig2b/eps0.2"]
    lower = zv.vecsum_analytic_lower(row.claim)
    upper = zv.vecsum_accountant(row.claim).epsilon
    assert 0.0 <= lower <= upper
    if variant == "sdp-vecsum":  # B users' messages move: above the claim
        assert lower > row.claim.claimed.epsilon


def _exact_product_epsilon(pairs, delta):
    """Brute force: ε at ``delta`` of independent releases, each a pair of pmfs on
    0..len-1, from the joint pmfs' hockey-stick divergence (both orders; bisection)."""
    import itertools

    joint_p, joint_q = np.ones(1), np.ones(1)
    for p_pmf, q_pmf in pairs:
        joint_p = np.multiply.outer(joint_p, p_pmf).ravel()
        joint_q = np.multiply.outer(joint_q, q_pmf).ravel()

    def hockey(eps, a, b):
        return float(np.maximum(a - np.exp(eps) * b, 0.0).sum())

    out = 0.0
    for a, b in itertools.permutations((joint_p, joint_q)):
        if hockey(0.0, a, b) <= delta:
            continue
        if float(a[b == 0].sum()) > delta:  # mass the other world cannot produce
            return float("inf")
        lo, hi = 0.0, 1.0
        while hockey(hi, a, b) > delta:
            hi *= 2.0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if hockey(mid, a, b) > delta else (lo, mid)
        out = max(out, hi)
    return out


@pytest.mark.parametrize("n_agents", [1, 5])  # g = 4 (integer) and 2√5, 2√10 (rounding)
@pytest.mark.parametrize("delta", [0.01, 0.1, 0.3])
def test_one_user_vecsum_lower_bound_is_the_exact_epsilon(n_agents, delta):
    """The broadcast rows' one-user lower bound against the joint pmfs of every level's
    u₀ count computed by brute force: never above the exact ε, and within the PLD grid."""
    from fedpriv.audit.families.zhou_chowdhury import vecsum as zv
    from fedpriv.privacy.mechanisms.vector_sum import VECSUM_PROBABILITY, vector_sum_parameters
    from scipy import stats

    setting = {"dim": 2, "n_agents": n_agents, "batch_size": 1, "horizon": 2}
    setting |= {"epsilon": 0.5, "delta": 0.1, "acts_on": "broadcast-sums"}
    pairs = []
    for level in range(2):  # T/B = 2 batches: two levels, each with a node holding user 1
        n = n_agents * 2**level
        g, trials = vector_sum_parameters(n, dim=2, epsilon=0.5, delta=0.1)
        big_n = n * trials
        k, f = int(np.floor(2 * g)), 2 * g - np.floor(2 * g)
        xs = np.arange(big_n + k + 2)
        q_pmf = stats.binom.pmf(xs, big_n, VECSUM_PROBABILITY)
        p_pmf = (1 - f) * stats.binom.pmf(xs - k, big_n, VECSUM_PROBABILITY) + f * stats.binom.pmf(
            xs - k - 1, big_n, VECSUM_PROBABILITY
        )
        pairs.append((p_pmf, q_pmf))
    exact = _exact_product_epsilon(pairs, delta)
    lower = zv._one_user_lower(tuple(setting.items()), delta)
    assert lower <= exact + 1e-9
    assert lower >= exact - 2e-3  # dp-accounting's grid of 1e-4 per release, composed
