"""Issue 34, item 6: bad input gives exit status 2 (CLI) or a typed error (API),
naming the field, instead of a silent drop, a crash or a hang."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from fedpriv.cli.main import main
from fedpriv.privacy.deployment import (
    MAX_DEPLOYMENT_BYTES,
    MAX_TOTAL_CELLS,
    load_deployment,
    parse_deployment,
)
from fedpriv.privacy.errors import DataFormatError, ResourceLimitError, StorePathError

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "feducb.toml"


def _example(tmp_path: Path, old: str = "", new: str = "", name: str = "d.toml") -> Path:
    text = EXAMPLE.read_text(encoding="utf-8")
    if old:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_typo_in_the_claim_table_is_refused(tmp_path, capsys) -> None:
    path = _example(tmp_path, "[claim]\nepsilon", "[claim]\nepsilom")
    assert main(["account", str(path)]) == 2
    err = capsys.readouterr().err
    assert "claim" in err and "'epsilom'" in err and "did you mean 'epsilon'" in err
    with pytest.raises(DataFormatError, match="epsilom"):
        load_deployment(path)


def test_the_example_claim_still_parses(tmp_path) -> None:
    assert load_deployment(_example(tmp_path)).claim_epsilon is not None


def test_a_deeply_nested_toml_is_a_format_error(tmp_path, capsys) -> None:
    path = tmp_path / "deep.toml"
    path.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    assert main(["account", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "nested too deeply" in err and "Traceback" not in err


def test_a_deeply_nested_audit_pair_is_a_usage_error(capsys) -> None:
    deep = "[" * 50_000 + "]" * 50_000
    assert main(["audit", "x.py:f", "--pair", deep, "0", "--claim", "pure:1"]) == 2
    err = capsys.readouterr().err
    assert "`--pair` D" in err and "nested too deeply" in err


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_account_refuses_devices(device, capsys) -> None:
    assert main(["account", device]) == 2
    err = capsys.readouterr().err
    assert device in err and "regular file" in err
    with pytest.raises(DataFormatError, match="regular file"):
        load_deployment(device)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_account_and_the_store_refuse_a_fifo(tmp_path, capsys) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert main(["account", str(fifo)]) == 2  # would block in open() before the fix
    assert "regular file" in capsys.readouterr().err
    assert main(["account", "--verify", str(fifo)]) == 2
    from fedpriv.privacy.ledger.sqlite_file import is_store
    from fedpriv.privacy.ledger.store import LedgerStore

    assert not is_store(fifo)
    with pytest.raises(StorePathError, match="regular file"):
        LedgerStore.open(fifo)


def test_a_deployment_file_over_the_size_ceiling_is_refused(tmp_path, capsys) -> None:
    path = _example(tmp_path)
    with path.open("ab") as handle:  # a sparse tail: no 16 MiB written
        handle.truncate(MAX_DEPLOYMENT_BYTES + 1)
    assert main(["account", str(path)]) == 2
    assert "MAX_DEPLOYMENT_BYTES" in capsys.readouterr().err
    with pytest.raises(ResourceLimitError, match="MAX_DEPLOYMENT_BYTES"):
        load_deployment(path)


_TWO_RELEASES = """
neighboring_relation = "replace_one_reward"
disjoint = ["agent"]

[[release]]
event = "Laplace"
per = {{ agent = {cells} }}
count = {count}
scale = 1.0

[[release]]
event = "Laplace"
per = {{ agent = {cells} }}
scale = 1.0
"""


def test_the_total_cells_ceiling_bounds_the_sum_over_releases(tmp_path, capsys) -> None:
    import tomllib

    half = MAX_TOTAL_CELLS // 2
    fits = tomllib.loads(_TWO_RELEASES.format(cells=half, count=1))
    assert len(parse_deployment(fits).releases) == 2
    over = tomllib.loads(_TWO_RELEASES.format(cells=half, count=2))  # 3/2 of the ceiling
    with pytest.raises(ResourceLimitError, match="max_total_cells"):
        parse_deployment(over)
    assert len(parse_deployment(over, max_total_cells=2 * MAX_TOTAL_CELLS).releases) == 2
    with pytest.raises(ValueError, match="max_total_cells"):
        parse_deployment(fits, max_total_cells=0)
    path = tmp_path / "many.toml"
    path.write_text(_TWO_RELEASES.format(cells=3, count=4), encoding="utf-8")
    assert main(["account", str(path), "--max-cells", "10"]) == 2  # 3 × 4 + 3 = 15 > 10
    assert "15 cell charges" in capsys.readouterr().err
    assert main(["account", str(path), "--max-cells", "15"]) == 0


def test_run_feducb_with_an_underflowing_epsilon_names_it(capsys) -> None:
    assert main(["run", "feducb", "--epsilon", "5e-324", "--horizon", "100"]) == 2
    err = capsys.readouterr().err
    assert "`epsilon`" in err and "ZeroDivisionError" not in err and "Traceback" not in err


def test_feducb_calibration_refuses_an_epsilon_without_a_finite_scale() -> None:
    from fedpriv.privacy.calibrations.feducb import feducb_privatizer

    with pytest.raises(ValueError, match="`epsilon` = 5e-324 gives no finite noise scale"):
        feducb_privatizer(5e-324, 0.1, horizon=100, n_agents=2, dim=2)


def test_li_song_target_refuses_an_underflowing_epsilon() -> None:
    from fedpriv.algorithms.li_song.core import sample_target

    with pytest.raises(ValueError, match="`epsilon` = 5e-324 is too small"):
        sample_target([3.0], 1, n_arms=3, horizon=100, divisor=1, epsilon=5e-324, target_gap=0.5)


@pytest.mark.parametrize("scale", [1.0, 10.0])
def test_laplace_tree_refuses_an_unrepresentable_loss(scale) -> None:
    from fedpriv.privacy.accounting.events import LaplaceTree

    with pytest.raises(ValueError, match="`l1_sensitivity` / `scale` must be >="):
        LaplaceTree(scale=scale, horizon=10, l1_sensitivity=5e-324)  # 5e-324/10 == 0.0


@pytest.mark.parametrize("rate", [5e-324, 1e-300, 1e-7])
def test_poisson_sampled_refuses_a_rate_no_route_can_price(rate) -> None:
    from fedpriv.privacy.accounting.events import Gaussian
    from fedpriv.privacy.accounting.sampling import MIN_SAMPLING_RATE, PoissonSampled

    with pytest.raises(ValueError, match=r"`sampling_rate` must be 0 or in \[1e-06, 1\]"):
        PoissonSampled(event=Gaussian(noise_multiplier=1.0), sampling_rate=rate)
    assert rate < MIN_SAMPLING_RATE


@pytest.mark.parametrize("noise_multiplier", [0.5, 10.0, 100.0, 1e4])
@pytest.mark.parametrize("relation", ["add_or_remove_one", "replace_one"])
def test_the_smallest_accepted_rate_can_be_priced(noise_multiplier, relation) -> None:
    from fedpriv.privacy.accounting.events import Gaussian
    from fedpriv.privacy.accounting.sampling import MIN_SAMPLING_RATE, PoissonSampled
    from fedpriv.privacy.ledger.accountant import Accountant

    event = PoissonSampled(
        event=Gaussian(noise_multiplier=noise_multiplier),
        sampling_rate=MIN_SAMPLING_RATE,
        neighboring_relation=relation,
    )
    accountant = Accountant(neighboring_relation=relation)
    accountant.spend(event)
    # Priced without an error. ε may be 0: at noise multiplier 1e4 the sampled
    # release's total variation (about q μ / sqrt(2π) = 4e-11) is below δ = 1e-9.
    route, epsilon = accountant.routes.tightest(1e-9)
    assert 0.0 <= epsilon < float("inf"), route
