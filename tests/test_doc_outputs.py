"""Numbers the guides quote from a command's output, checked against that output.

The report numbers in the docs are checked by ``tests/test_docs.py`` (markers); the
python blocks assert their own results. What is left are numbers a guide quotes from a
shell command's output in prose; each is recomputed here from the command or the
function that prints it.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from fedpriv.cli.main import main
from fedpriv.privacy import events
from fedpriv.privacy.accounting.routes import compose_gdp_mu
from fedpriv.privacy.deployment import budget_report, load_deployment

ROOT = Path(__file__).resolve().parents[1]


def _prose(page: str) -> str:
    """A guide's text with its line breaks folded to spaces."""
    return " ".join((ROOT / "docs" / "guides" / page).read_text("utf-8").split())


def test_the_run_guide_quotes_feducb_run_json(capsys) -> None:
    argv = ["run", "feducb", "--agents", "10", "--horizon", "2000"]
    argv += ["--epsilon", "1", "--delta", "0.1", "--json"]
    main(argv)  # exits 1: the adaptive channel violates the claim, as the guide says
    out = json.loads(capsys.readouterr().out)
    privatizer, accountant = out["privatizer"], out["guarantee"]["accountant"]
    text = _prose("run.md")
    assert f"σ_N = {privatizer['noise_stddev']:.1f}, GDP μ = {privatizer['gdp_mu']:.3g}" in text
    assert accountant["epsilon"] == 0.0 and accountant["delta"] == 0.1
    assert "(ε = 0 at δ = 0.1, " in text
    assert f"{accountant['curve']['1e-06']:.3g} at δ = 10⁻⁶" in text
    assert out["guarantee"]["end_to_end"]["epsilon"] == "inf"


def test_the_run_guide_quotes_private_fedlinucb_runs(capsys) -> None:
    argv = ["run", "private-fedlinucb", "--agents", "10", "--horizon", "1000"]
    argv += ["--epsilon", "1", "--delta", "0.1", "--json"]
    assert main(argv) == 1  # violated, as the guide says
    g = json.loads(capsys.readouterr().out)["guarantee"]
    text = _prose("run.md")
    assert g["verdict"] == "violated" and g["accountant"]["delta"] == 0.1
    assert f"gives ε = {g['accountant']['epsilon']:.5g} at δ = 0.1" in text
    assert f"has the exact ε {g['lower_bound']['epsilon']:.6g} at the run's setting" in text
    assert main([*argv, "--protocol", "ldp-exact", "--broadcast-only"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    assert g["verdict"] == "holds" and f"{g['accountant']['epsilon']:.6g}" == "1"
    assert "the ledger spends ε = 1 and the claim holds (exit 0)" in text


def test_the_budget_guide_quotes_the_feducb_deployment() -> None:
    """``examples/feducb.toml``: (0, 0.1)-DP, and its Gaussian-DP μ."""
    path = ROOT / "examples" / "feducb.toml"
    report = budget_report(load_deployment(path))
    assert report["tightest"]["epsilon"] == 0.0 and report["delta"] == 0.1
    calibration = report["calibrations"]["feducb"]
    (release,) = tomllib.loads(path.read_text("utf-8"))["release"]
    node = events.SymmetricMatrixGaussian(
        noise_stddev=calibration["noise_stddev"],
        dim=release["dim"],
        frobenius_sensitivity=release["frobenius_sensitivity"],
    )
    mu = compose_gdp_mu([(node, calibration["tree_depth"])])  # one record's tree nodes
    match = re.search(r"\(0, 0\.1\)-DP \(Gaussian-DP μ ≈ ([0-9.]+)\)", _prose("budget-reports.md"))
    assert match, "the guide's sentence moved"
    assert f"{mu:.2g}" == match.group(1)


def test_committed_reports_and_docs_name_files_that_exist() -> None:
    """Every source path a committed report, figure note, docs page or the README names is
    in the repository (a note written before a module moved sends a reader to nothing).
    CONTRIBUTING.md is left out: it names the files ``fedpriv new-family`` generates."""
    pages = [*(ROOT / "reports").rglob("*.md"), *(ROOT / "docs").rglob("*.md"), ROOT / "README.md"]
    pattern = (
        r"\b((?:audit|algorithms|privacy|cli|api|benchmarks|examples|tests)/[\w/]+\.(?:py|toml))\b"
    )
    missing = [
        f"{page.relative_to(ROOT)}: {path}"
        for page in sorted(pages)
        for path in sorted(set(re.findall(pattern, page.read_text("utf-8"))))
        if not (ROOT / path).is_file()
    ]
    assert not missing, "stale paths in committed reports or docs:\n" + "\n".join(missing)
