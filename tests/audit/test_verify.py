"""The verify job, claims and verdicts, report files and the CLI."""

from __future__ import annotations

import concurrent.futures
import json
import math

import pytest
from fedpriv.audit.claims.attachment import AttachmentOutput, AttachmentResult
from fedpriv.audit.claims.claim import LowerBoundEvidence, decide_verdict, json_number
from fedpriv.audit.claims.family import family
from fedpriv.audit.claims.report import write_attachment
from fedpriv.audit.estimators import EpsilonLowerBound
from fedpriv.audit.families.gossip_fed_ucb import report as report_module
from fedpriv.audit.families.gossip_fed_ucb.regret import (
    BOUNDED_REWARDS,
    VerifyConfig,
    verify_gossip_fed_ucb,
)
from fedpriv.cli.main import main

#: The family's report folder (its key), where its attachment writes.
REPORT_FOLDER = "gossip_fed_ucb"

SCHEMA_KEYS = {
    "paper",
    "algorithm",
    "mode",
    "setting",
    "neighboring_relation",
    "claimed",
    "accountant",
    "audit",
    "verdict",
}


def _bound(value: float) -> EpsilonLowerBound:
    return EpsilonLowerBound(
        epsilon_lower_bound=value,
        confidence=0.95,
        n_samples=100,
        n_samples_d=100,
        n_samples_d_prime=100,
        threshold=1.0,
        direction="D>D'",
        n_tests=2,
        delta=0.0,
        count_d=50,
        count_d_prime=10,
    )


def test_verdict_analytic_and_statistical_evidence():
    # An upper bound above the claim alone shows nothing; an exact value above it does.
    assert decide_verdict(1.0, 1.25, None)[0] == "unresolved"
    exact = LowerBoundEvidence(epsilon=1.25, kind="analytic", description="exact")
    assert decide_verdict(1.0, 1.25, None, analytic_lower=exact)[0] == "violated"
    assert decide_verdict(1.0, 1.0, None)[0] == "holds"
    # Statistical evidence alone is enough, even if the accountant were within the claim.
    verdict, evidence = decide_verdict(1.0, 1.0, _bound(1.1))
    assert verdict == "violated" and "audit lower bound" in evidence
    # A lower bound below the claim never makes a violation by itself.
    assert decide_verdict(1.0, 0.9, _bound(0.95))[0] == "holds"
    # Float rounding of a sum of epsilons is not an excess, a real excess is.
    assert decide_verdict(1.0, 1.0 + 1e-15, None)[0] == "holds"
    assert decide_verdict(1.0, 1.0 + 1e-9, None)[0] == "unresolved"


def test_json_number_encodes_infinity_as_string():
    assert json_number(math.inf) == "inf" and json_number(-math.inf) == "-inf"
    assert json_number(1.5) == 1.5 and json_number("x") == "x"


#: Confidence of the small report's audits: an audit lower bound exceeds the true ε of
#: what it audits with probability <= 1e-6 (CONTRIBUTING.md, Test), so a view that spends exactly
#: its claim is never ruled violated by the audit except with that probability.
_CONFIDENCE = 1 - 1e-6


@pytest.fixture(scope="module")
def small_report():
    """One ε, the two small horizons, 10⁶ audit samples at T=16 (the issue's setting)."""
    config = VerifyConfig(
        epsilons=(1.0,),
        horizons=(16, 600_000),
        audit_horizons=(16,),
        audit_samples=((16, 10**6),),
        audit_product_samples=((16, 10**6),),
        regret_horizon=60,
        n_trials=2,
        ledger_horizon=32,
        confidence=_CONFIDENCE,
    )
    return verify_gossip_fed_ucb(config)


def _find(report, mode, log_base, horizon, final=False):
    for result in report.claims:
        s = result.claim.setting_dict()
        released = horizon if final else horizon - 1
        if (
            result.claim.mode == mode
            and s["log_base"] == log_base
            and s["horizon"] == horizon
            and s["released_prefixes"] == released
        ):
            return result
    raise AssertionError(f"no claim for {mode}/{log_base}/{horizon}/final={final}")


@pytest.mark.statistical
def test_issue_reference_values(small_report):
    # Fed_UCB's view (Alg. 4 sends and acts on ϑ̃(t-1), lines 19 and 9): prefixes 1..15,
    # 4 nodes hold round 1, the paper's b = ⌈log2 16⌉ = 4 spends exactly ε = 1: holds.
    # The audit's bound is a (1 - 1e-6)-confidence lower bound on the view's true ε = 1,
    # so it stays <= 1 except with probability <= 1e-6.
    paper = _find(small_report, "paper", "2", 16)
    assert paper.accountant_epsilon == 1.0 and paper.verdict == "holds"
    assert paper.audit.n_samples == 10**6 and paper.audit.epsilon_lower_bound <= 1.0
    assert paper.audit.epsilon_lower_bound > 0.9  # power: observed ≈ 0.95
    assert dict(paper.extras)["initial_pulls_epsilon"] == math.inf
    # The second reading (ϑ̃(16) published): 5 nodes, 1.25. False-failure probability of
    # the audit check: the bound at 10⁶ samples comes out ≈ 1.2 with sd ≈ 0.01; falling
    # below 1.0 would need a > 15 sd deviation (< 1e-12).
    final = _find(small_report, "paper", "2", 16, final=True)
    assert final.accountant_epsilon == 1.25 and final.verdict == "violated"
    assert final.audit.epsilon_lower_bound > 1.0
    assert final.claim.reading.endswith("(tree prefixes 1..T)")
    corrected = _find(small_report, "corrected", "2", 16)
    assert corrected.accountant_epsilon == 1.0 and corrected.verdict == "holds"
    assert dict(corrected.extras)["initial_pulls_epsilon"] == 1.0 / 4.0  # b = 4: 4 nodes
    assert corrected.audit.epsilon_lower_bound <= 1.0  # false alarm <= 1e-6
    # ln on the view: 4/3 at T = 16 (not 5/3), 10/7 at 600 000 (20 nodes / 14).
    ln_short = _find(small_report, "paper", "e", 16)
    assert ln_short.accountant_epsilon == pytest.approx(4 / 3, rel=1e-12)
    assert ln_short.verdict == "violated"
    assert ln_short.audit.epsilon_lower_bound <= 4 / 3  # false alarm <= 1e-6
    assert _find(small_report, "paper", "2", 600_000).verdict == "holds"
    ln_long = _find(small_report, "paper", "e", 600_000)
    assert ln_long.accountant_epsilon == pytest.approx(20 / 14, rel=1e-12)
    assert ln_long.verdict == "violated" and ln_long.audit is None


def test_claims_records_follow_the_schema(small_report):
    records = report_module.claims_records(small_report)
    assert len(records) == 5 * 2  # variants x horizons x epsilons
    for record in records:
        assert set(record) >= SCHEMA_KEYS
        assert {"n_agents", "n_arms", "horizon", "epsilon", "log_base"} <= set(record["setting"])
        assert set(record["claimed"]) == {"epsilon", "delta"}
        assert set(record["accountant"]) == {"epsilon", "delta", "route"}
        assert record["verdict"] in ("holds", "violated")
        assert record["audit"] is None or set(record["audit"]) == {
            "epsilon_lower_bound",
            "confidence",
            "samples",
            "event",
        }
        assert record["mechanism_epsilon"] == record["accountant"]["epsilon"]  # no raw channel
        if record["audit"] is None:
            assert record["tightness"] is None
        else:
            bound = record["audit"]["epsilon_lower_bound"]
            expected = bound / record["accountant"]["epsilon"] if bound > 0 else None
            assert record["tightness"] == expected
    json.dumps(records, allow_nan=False)  # strict JSON: no NaN or Infinity literals


def test_regret_rows_and_ledger(small_report):
    regret = small_report.regret
    assert set(regret["epsilon"]) == {1.0, math.inf}
    assert (regret["regret_min"] <= regret["regret_mean"]).all()
    assert (regret["regret_mean"] <= regret["regret_max"]).all()
    ledger = small_report.ledger
    assert {"mode", "log_base", "agent", "arm", "node", "level", "scale", "epsilon"} <= set(ledger)
    assert (ledger["epsilon"] == ledger["l1_sensitivity"] / ledger["scale"]).all()


def _attached(report) -> AttachmentResult:
    """The report as the run of the family's attachment within ``fedpriv verify``."""
    (attachment,) = family(REPORT_FOLDER).attachments
    return AttachmentResult(
        family=REPORT_FOLDER,
        attachment=attachment,
        config=report.config,
        output=AttachmentOutput(rows={}, result=report),
    )


def test_write_report_writes_all_files_and_replaces_atomically(small_report, tmp_path, monkeypatch):
    folder = write_attachment(_attached(small_report), tmp_path)
    assert folder == tmp_path / REPORT_FOLDER
    names = {p.name for p in folder.iterdir()}
    assert names == {"report.md", "claims.json", "ledger.csv", "regret.png"}
    before = (folder / "claims.json").read_text()
    assert "violated" in (folder / "report.md").read_text()

    def broken_plot(report, path):
        raise RuntimeError("disk full")

    monkeypatch.setattr(report_module, "_plot", broken_plot)
    with pytest.raises(RuntimeError, match="disk full"):
        write_attachment(_attached(small_report), tmp_path)
    # The previous report is intact and no staging folder is left behind.
    assert (folder / "claims.json").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [REPORT_FOLDER]


def test_verify_on_the_real_hospital_sample(hospital_sample):
    config = VerifyConfig(
        data_path=hospital_sample,
        epsilons=(1.0,),
        horizons=(16,),
        audit_horizons=(),
        regret_horizon=50,
        n_trials=2,
        ledger_horizon=16,
    )
    report = verify_gossip_fed_ucb(config)
    assert report.environment.startswith("hospital")
    assert _find(report, "corrected", "2", 16).accountant_epsilon == 1.0
    # Bernoulli rewards are inside [0, 1]: no finding about unbounded rewards.
    assert all("outside [0, 1]" not in f for r in report.claims for f in r.notes)
    assert (report.regret["n_out_of_bounds"] == 0).all()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "gossip-fed-ucb", "--epsilon", "0"], "`epsilon` must be in \\(0, inf\\]"),
        (["run", "gossip-fed-ucb", "--epsilon", "nan"], "--epsilon must be a number, got NaN"),
        (["run", "gossip-fed-ucb", "--horizon", "0"], "`horizon` must be >= 1"),
        (["run", "gossip-ucb", "--trials", "0"], "`n_trials` must be >= 1"),
        (["run", "gossip-ucb", "--seed", "-1"], "--seed must be an integer >= 0"),
        (["run", "gossip-ucb", "--graph", "erdos_renyi", "--p", "1.5"], "`p`"),
    ],
)
def test_cli_bad_input_exits_2_naming_the_parameter(argv, message, capsys):
    assert main(argv) == 2
    assert __import__("re").search(message, capsys.readouterr().err)


def test_cli_verify_bad_data_writes_nothing(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    out = tmp_path / "out"
    assert main(["verify", "--quick", "--data", str(bad), "--out", str(out)]) == 2
    assert "missing" in capsys.readouterr().err.lower()
    assert not (out / REPORT_FOLDER).exists()
    assert not out.exists() or not any(out.iterdir())


def test_cli_run_json_reports_guarantee_next_to_claim(capsys, hospital_sample):
    # Bounded (Bernoulli) rewards: the paper's calibration at T = 64 is b = ⌈log2 64⌉ = 6.
    # The view (prefixes 1..63) holds round 1 in 6 nodes: exactly ε. Publishing ϑ̃(64)
    # too (the second reading) adds the root: 7 nodes, 7/6.
    argv = [
        "run",
        "gossip-fed-ucb",
        "--horizon",
        "64",
        "--epsilon",
        "1",
        "--mode",
        "paper",
        "--data",
        str(hospital_sample),
        "--json",
    ]
    assert main(argv + ["--publish-final"]) == 1  # violated: run exits 1 like verify
    final = json.loads(capsys.readouterr().out)["guarantee"]
    assert final["accountant"]["epsilon"] == pytest.approx(7 / 6, rel=1e-12)
    assert final["verdict"] == "violated"
    status = main(argv)
    record = json.loads(capsys.readouterr().out)
    guarantee = record["guarantee"]
    assert status == 0  # holds: nothing refuted
    assert guarantee["claimed"]["epsilon"] == 1.0
    assert guarantee["accountant"]["epsilon"] == 1.0
    assert guarantee["verdict"] == "holds"
    assert "1..T−1" in guarantee["accountant"]["scope"]
    assert guarantee["accountant_including_initial_pulls"] == "inf"
    assert record["ledger"]["noise_draws"] > 0


def test_cli_run_paper_mode_on_unbounded_rewards_has_no_finite_epsilon(capsys):
    # The synthetic experiment's rewards are mu + N(0, 1), fed unclipped in paper mode.
    # violated (a raw channel): run exits 1 like verify
    assert main(["run", "gossip-fed-ucb", "--horizon", "64", "--mode", "paper", "--json"]) == 1
    record = json.loads(capsys.readouterr().out)
    assert record["guarantee"]["accountant"]["epsilon"] == "inf"
    assert any("unclipped" in r for r in record["guarantee"]["non_private_releases"])
    assert main(["run", "gossip-fed-ucb", "--horizon", "64", "--mode", "corrected", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["guarantee"]["accountant"]["epsilon"] == 1.0


@pytest.mark.slow
@pytest.mark.statistical
def test_cli_verify_quick_json_end_to_end(tmp_path, capsys):
    # Paper mode (log base 2), T = 16, ε = 1 on the view (prefixes 1..15) -> exactly 1.0,
    # holds; the final-estimate reading -> 1.25, violated, audit bound > 1.0; corrected
    # -> exactly 1.0, holds. False-failure probability of the > 1.0 check < 1e-12 (see
    # test_issue_reference_values). The view rows' "holds" needs the 95% audit bound
    # <= 1: it comes out ≈ 0.94-0.96 at 2·10⁵ runs/world with sd ≈ 0.01, so exceeding
    # 1 needs a > 4 sd deviation (< 1e-4) on top of the audit's own 5%. Written to work
    # with the Fed_UCB-only verify and with the register's (fedpriv.cli.verify), which
    # prints every paper's claims: only Fed_UCB's grid of 45 claims is checked here.
    out = tmp_path / "reports"
    argv = [
        "verify",
        "--quick",
        "--json",
        "--out",
        str(out),
        "--trials",
        "2",
        "--regret-horizon",
        "100",
    ]
    # Claims are violated (the final-estimate reading below among them): exit status 1
    # under the default `--fail-on violated`, the reports written all the same.
    assert main(argv) == 1
    printed = json.loads(capsys.readouterr().out)
    records = [
        r
        for r in printed
        if r["paper"] == "Zhu et al. 2021"
        and "scope" not in r["setting"]
        and r["setting"].get("rewards") == BOUNDED_REWARDS  # the grid rows' stated setting
    ]
    assert len(records) == 45

    def pick(mode, base, released=15):
        return next(
            r
            for r in records
            if r["mode"] == mode
            and r["setting"]["log_base"] == base
            and r["setting"]["horizon"] == 16
            and r["setting"]["epsilon"] == 1.0
            and r["setting"]["released_prefixes"] == released
        )

    paper, corrected = pick("paper", "2"), pick("corrected", "2")
    final = pick("paper", "2", released=16)
    assert paper["accountant"]["epsilon"] == 1.0 and paper["verdict"] == "holds"
    assert final["accountant"]["epsilon"] == 1.25 and final["verdict"] == "violated"
    assert final["audit"]["samples"] >= 2 * 10**5 and final["audit"]["epsilon_lower_bound"] > 1.0
    assert corrected["accountant"]["epsilon"] == 1.0 and corrected["verdict"] == "holds"
    folder = json.loads((out / REPORT_FOLDER / "claims.json").read_text())
    common = (
        "paper",
        "algorithm",
        "mode",
        "setting",
        "neighboring_relation",
        "claimed",
        "accountant",
        "verdict",
    )
    assert [{k: r[k] for k in common} for r in folder] == [
        {k: r[k] for k in common} for r in records
    ]


def test_audit_results_do_not_depend_on_the_number_of_workers():
    # Every audit has its own SeedSequence address, so a process pool changes nothing.
    def bounds(workers: int) -> list[float]:
        config = VerifyConfig(
            epsilons=(1.0, 2.0),
            horizons=(16,),
            audit_horizons=(16,),
            audit_samples=((16, 20_000),),
            audit_product_samples=((16, 20_000),),
            regret_horizon=20,
            n_trials=1,
            ledger_horizon=16,
            workers=workers,
        )
        return [r.audit.epsilon_lower_bound for r in verify_gossip_fed_ucb(config).claims]

    serial, pooled = bounds(1), bounds(2)
    assert serial == pooled and len(serial) == 10 and all(b > 0 for b in serial)


# ---------------------------------------------------------------------------------
# fedpriv verify over the claims register (fedpriv.audit.claims.verify, fedpriv.cli.verify)
# ---------------------------------------------------------------------------------


def _verify_parser():
    import argparse

    from fedpriv.cli.verify import register_verify

    parser = argparse.ArgumentParser(prog="fedpriv")
    register_verify(parser.add_subparsers(dest="command", required=True))
    return parser


def test_verify_paper_on_a_tiny_configuration(tmp_path):
    from fedpriv.audit.claims.report import write_claims_report
    from fedpriv.audit.claims.verify import ClaimsConfig, verify_claims
    from fedpriv.audit.engine.coupled import AuditBudget

    # Another paper's record is already in claims.json: a --paper run keeps it.
    other = {"paper": "Zhu et al. 2021", "algorithm": "gossip-fed-ucb", "verdict": "holds"}
    (tmp_path / "claims.json").write_text(json.dumps([other]))
    config = ClaimsConfig(
        papers=("feducb",),
        workers=1,
        budget=AuditBudget(pilot_samples=30, samples=120, batch_size=120),
    )
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        report = verify_claims(config, executor=pool)  # any Executor (or a dask Client)
    assert {r.key.split("/")[0] for r in report.results} == {"feducb"}
    verdicts = {r.key: r.verdict for r in report.results}
    assert verdicts["feducb/feducb/adaptive"] == "violated"
    assert verdicts["feducb/feducb/fixed"] == "holds"
    written = write_claims_report(report, tmp_path)
    assert tmp_path / "feducb.md" in written and not (tmp_path / "claims.md").exists()
    records = json.loads((tmp_path / "claims.json").read_text())
    assert records[0] == other and len(records) == 1 + len(report.results)
    for record in records[1:]:
        assert set(record) >= SCHEMA_KEYS and record["key"].startswith("feducb/")
        assert record["claimed"]["delta"] == record["accountant"]["delta"]
    page = (tmp_path / "feducb.md").read_text()
    assert "**violated**" in page and "first sync time" in page
    # The fixed schedule (claimed δ vacuous) is bracketed at δ = 1e-6 by the Privatizer
    # audit (120 · 1000 runs per world at 97.5%): its bound is positive on this pinned
    # seed and exceeds the accountant's ε there with probability <= 2.5% per row.
    for key in ("feducb/feducb/fixed", "feducb/feducb-decentralized/fixed"):
        (record,) = [r for r in records[1:] if r["key"] == key]
        bracket = record["audit"]["at_1e-6"]
        assert 0 < bracket["epsilon_lower_bound"] <= record["epsilon_at_1e-6"], key
        assert bracket["samples"] == 120_000 and bracket["confidence"] == 0.95, key
        assert record["tightness_at_1e-6"] == pytest.approx(
            bracket["epsilon_lower_bound"] / record["epsilon_at_1e-6"]
        ), key
    assert page.count("at δ=1e-6: audit ≥") >= 2
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging left


def test_cli_verify_options_build_the_config():
    from fedpriv.cli.verify import _config

    args = _verify_parser().parse_args(
        ["verify", "--quick", "--paper", "byzantine", "--workers", "1", "--seed", "3"]
    )
    config = _config(args)
    assert config.quick and config.papers == ("dubey_aamas",) and config.workers == 1
    assert (
        config.seed == 3
        and config.attachments["gossip_fed_ucb/regret"].quick
        and config.budget.samples == 1_000
    )
    bad = _verify_parser().parse_args(["verify", "--paper", "nonsense"])
    with pytest.raises(ValueError, match="`paper` must be one of"):
        _config(bad)
