"""The flat namespace of ``fedpriv.algorithms`` and the common shape of the results.

Every subpackage's ``__all__`` resolves flat to the same object; no two families export
one name; every public ``run_*`` function and ``*Run`` class of the source tree is
exported; ``import fedpriv.algorithms`` stays light; every result is an
:class:`~fedpriv.algorithms.AlgorithmRun` whose ``final_regret`` is per agent.
"""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import fedpriv.algorithms as algorithms
import numpy as np
import pytest
from fedpriv.algorithms.exports import flat_index, lazy_exports

ROOT = Path(__file__).resolve().parents[2] / "algorithms"
SUBPACKAGES = sorted(m.name for m in pkgutil.iter_modules(algorithms.__path__) if m.ispkg)
#: Not an algorithm: the audits' second world (fedpriv.algorithms.feducb.worlds).
AUDIT_ONLY = {"run_in_world"}


def _public_definitions() -> dict[str, str]:
    """``run_*`` functions and ``*Run`` classes defined at the top of any module."""
    found = {}
    for path in ROOT.rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (
                isinstance(node, ast.FunctionDef)
                and node.name.startswith("run_")
                and node.name not in AUDIT_ONLY
            ) or (isinstance(node, ast.ClassDef) and node.name.endswith("Run")):
                found[node.name] = str(path.relative_to(ROOT))
    return found


def test_every_family_is_a_subpackage_with_exports() -> None:
    assert {
        "environments",
        "networks",
        "feducb",
        "li_song",
        "gossip_fed_ucb",
        "dubey_aamas",
    } <= set(SUBPACKAGES)
    for name in SUBPACKAGES:
        assert importlib.import_module(f"fedpriv.algorithms.{name}").__all__, name


@pytest.mark.parametrize("subpackage", SUBPACKAGES)
def test_subpackage_names_resolve_flat_to_the_same_object(subpackage: str) -> None:
    package = importlib.import_module(f"fedpriv.algorithms.{subpackage}")
    for name in package.__all__:
        value = getattr(package, name)
        assert getattr(algorithms, name) is value, name
        assert name in algorithms.__all__ and name in dir(algorithms)
        # re-exported from a module that declares it public
        owner = importlib.import_module(value.__module__) if hasattr(value, "__module__") else None
        if owner is not None and owner.__name__.startswith("fedpriv.algorithms"):
            assert name in owner.__all__, (name, owner.__name__)


def test_no_two_families_export_one_name() -> None:
    seen: dict[str, str] = {}
    for subpackage in SUBPACKAGES:
        for name in importlib.import_module(f"fedpriv.algorithms.{subpackage}").__all__:
            assert name not in seen, f"{name!r} in both {seen[name]} and {subpackage}"
            seen[name] = subpackage
    assert set(seen) | {"AlgorithmRun"} == set(algorithms.__all__)


def test_every_run_function_and_result_class_is_exported_flat() -> None:
    missing = {n: p for n, p in _public_definitions().items() if n not in algorithms.__all__}
    assert not missing, f"not exported (add to the subpackage's __init__): {missing}"


def test_a_clash_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="'f' is exported by both"):
        lazy_exports("fedpriv.algorithms", {"a": ("f",), "b": ("f",)})
    for sub in ("one", "two"):
        (tmp_path / "clashpkg" / sub).mkdir(parents=True)
        (tmp_path / "clashpkg" / sub / "__init__.py").write_text("__all__ = ['run_x']\n")
    (tmp_path / "clashpkg" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match="'run_x' is exported by both"):
        flat_index("clashpkg", [str(tmp_path / "clashpkg")])


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'run_nothing'"):
        algorithms.run_nothing  # noqa: B018
    with pytest.raises(ImportError):
        from fedpriv.algorithms import run_nothing  # noqa: F401


def test_import_is_light() -> None:
    probe = (
        "import json, sys\nimport fedpriv.algorithms as a\nimport fedpriv.algorithms.feducb\n"
        "names = a.__all__\n"
        "print(json.dumps([len(names), sorted({m.split('.')[0] for m in sys.modules})]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    count, modules = json.loads(done.stdout)
    assert count > 40
    assert not {"numpy", "scipy", "networkx", "pandas"} & set(modules)


def _runs():
    from fedpriv.algorithms import (
        LinearBandit,
        homogeneous_bandit,
        make_graph,
        paper_synthetic_bandit,
        run_cdp_mab,
        run_dp_ucb_int,
        run_feducb,
        run_feducb_decentralized,
        run_gossip_fed_ucb,
        run_linucb,
        run_private_coop_ucb,
    )
    from fedpriv.algorithms.zhou_chowdhury.environment import SyntheticEnvironment
    from fedpriv.algorithms.zhou_chowdhury.fedlinucb import run_private_fedlinucb

    env = homogeneous_bandit(3, 3, np.random.default_rng(0))
    graph = make_graph("complete", 3)
    tables = LinearBandit(n_agents=3, n_arms=3, dim=2).sample(1, n_trials=2, horizon=12)
    return {
        "FedUCBRun": run_feducb(tables, epsilon=1.0, delta=0.1),
        "DecentralizedFedUCBRun": run_feducb_decentralized(
            tables, graph, gamma=1, epsilon=1.0, delta=0.1
        ),
        "LinUCBRun": run_linucb(tables),
        "LiSongRun": run_cdp_mab(env, horizon=40, epsilon=1.0, n_trials=2),
        "GossipRun": run_gossip_fed_ucb(
            paper_synthetic_bandit(3, 3, rng=np.random.default_rng(0)),
            graph,
            horizon=12,
            epsilon=1.0,
            n_trials=2,
        ),
        "CoopRun": run_private_coop_ucb(env, graph, horizon=12, epsilon=1.0, gamma=1, n_trials=2),
        "UCBRun": run_dp_ucb_int(env, horizon=12, epsilon=1.0, n_trials=2),
        "PrivateFedLinUCBRun": run_private_fedlinucb(
            SyntheticEnvironment(n_agents=3, n_arms=4, dim=3),
            horizon=4,
            batch_size=2,
            epsilon=1.0,
            delta=0.1,
            n_trials=2,
        ),
    }


def test_every_run_class_is_an_algorithm_run() -> None:
    """Every public ``*Run`` class of the tree, whatever family defines it."""
    found = {n: path for n, path in _public_definitions().items() if n.endswith("Run")}
    assert "AlgorithmRun" in found and len(found) > 1
    for name, path in found.items():
        module = "fedpriv.algorithms." + path.removesuffix(".py").replace("/", ".")
        cls = getattr(importlib.import_module(module.removesuffix(".__init__")), name)
        if cls is algorithms.AlgorithmRun:
            continue
        declared = set().union(
            *(vars(c) for c in cls.__mro__),
            *(getattr(c, "__annotations__", {}) for c in cls.__mro__),
        )
        # the protocol's members (typing.Protocol with data members has no issubclass)
        assert {"algorithm", "final_regret", "accountant", "seed_entropy"} <= declared, name


def test_every_result_is_an_algorithm_run_with_per_agent_final_regret() -> None:
    runs = _runs()
    for name, run in runs.items():
        assert type(run).__name__ == name
        assert isinstance(run, algorithms.AlgorithmRun), name
        assert run.final_regret.shape == (2, 3) and run.final_regret.dtype == np.float64, name
        assert np.all(run.final_regret >= 0.0), name
        assert isinstance(run.algorithm, str) and isinstance(run.seed_entropy, int)
    for name in ("GossipRun", "CoopRun", "UCBRun"):
        run = runs[name]
        np.testing.assert_array_equal(run.final_regret, run.cumulative_regret[..., -1])
    np.testing.assert_allclose(
        runs["LiSongRun"].final_regret.sum(axis=1), runs["LiSongRun"].total_regret
    )
