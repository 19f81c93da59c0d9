"""Zhou & Chowdhury's issues (ii) and (iii) with FedUCB, measured on fedpriv's FedUCB runs.

Zhou & Chowdhury (ICLR 2024, abstract) name three issues of Dubey & Pentland's FedUCB:
"(i) failure of claimed privacy protection, (ii) incorrect regret bound due to noise
miscalculation and (iii) ungrounded communication cost". Issue (i) is a privacy issue and
is the FedUCB family's register rows (docs/explanation/zhou-chowdhury-crosscheck.md sets
them side by side). This module measures (ii) and (iii) with fedpriv's own FedUCB
(:func:`fedpriv.algorithms.feducb.centralized.run_feducb`, the paper's calibration):

* **(iii) communication.** FedUCB's Prop. 1 bounds the number of syncs of the log-det
  trigger by ``2 √((d T / D) log X) + 4`` (:func:`~fedpriv.algorithms.feducb.sync.communication_bound`).
  At the threshold ``D`` that Prop. 1 maps to the ``⌈M ln T⌉`` syncs the paper reports
  (:func:`~fedpriv.algorithms.feducb.sync.threshold_for_syncs` with the Privatizer's ρ_min,
  ρ_max), the private run's realised syncs are counted against the bound.
* **(ii) noise.** The controller's Gram matrix is the sum of the ``M`` agents' released
  prefix sums, each with its own tree noise; the sum's noise has ``M`` times one agent's
  variance. The private part of the regret, measured as the private minus the
  non-private total regret at ``M = 5, 10, 20, 40`` (the same worlds), gives a growth
  exponent in ``M`` to set beside the bound's.

:func:`crosscheck` runs both and returns the numbers; :func:`render` makes the page's
generated block from them; ``python -m fedpriv.audit.families.zhou_chowdhury.crosscheck``
rewrites that block of the page (between ``<!-- crosscheck:begin -->`` and
``<!-- crosscheck:end -->``) and prints it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

__all__ = ["AGENTS", "crosscheck", "render", "update_page"]

#: The agent counts of the regret measurement.
AGENTS = (5, 10, 20, 40)
#: Shared setting of every run (FedUCB §4.4 with a shorter horizon: d = 10, δ = 0.1).
SETTING = {"dim": 10, "n_arms": 20, "horizon": 1000, "epsilon": 1.0, "delta": 0.1}
_BEGIN, _END = "<!-- crosscheck:begin -->", "<!-- crosscheck:end -->"


def _tables(n_agents: int, *, seed: int, n_trials: int):
    from fedpriv.algorithms.environments.linear import LinearBandit

    spec = LinearBandit(n_agents=n_agents, n_arms=SETTING["n_arms"], dim=SETTING["dim"])
    return spec.sample(seed, n_trials=n_trials, horizon=SETTING["horizon"])


def crosscheck(*, seed: int = 0, n_trials: int = 2, agents: tuple[int, ...] = AGENTS) -> dict:
    """Run fedpriv's FedUCB for issues (ii) and (iii) (module docstring).

    Parameters
    ----------
    seed : int
        Root of the worlds and of the noise, >= 0.
    n_trials : int
        Worlds per agent count, >= 1.
    agents : tuple of int
        Agent counts, each >= 2.

    Returns
    -------
    dict
        ``{"setting", "rows": [{n_agents, target_syncs, threshold, prop1_bound,
        private_syncs, nonprivate_syncs, regret_private, regret_nonprivate}], "exponent"}``
        (regrets are totals over agents at T, averaged over trials).
    """
    from fedpriv.algorithms.feducb.centralized import run_feducb, run_feducb_nonprivate
    from fedpriv.algorithms.feducb.sync import (
        communication_bound,
        syncs_for_order,
        threshold_for_syncs,
    )
    from fedpriv.privacy.calibrations.feducb import feducb_privatizer

    horizon, dim = SETTING["horizon"], SETTING["dim"]
    rows = []
    for m in agents:
        tables = _tables(m, seed=seed, n_trials=n_trials)
        cal = feducb_privatizer(
            SETTING["epsilon"], SETTING["delta"], horizon=horizon, n_agents=m, dim=dim
        )
        target = syncs_for_order("MlogT", n_agents=m, horizon=horizon)
        threshold = threshold_for_syncs(
            target, horizon=horizon, dim=dim, rho_min=cal.rho_min, rho_max=cal.rho_max
        )
        bound = communication_bound(
            threshold, horizon=horizon, dim=dim, rho_min=cal.rho_min, rho_max=cal.rho_max
        )
        private = run_feducb(
            tables,
            epsilon=SETTING["epsilon"],
            delta=SETTING["delta"],
            threshold=threshold,
            seed=seed,
        )
        nonprivate_threshold = threshold_for_syncs(
            target, horizon=horizon, dim=dim, rho_min=1.0 / m, rho_max=1.0 / m
        )
        nonprivate = run_feducb_nonprivate(tables, threshold=nonprivate_threshold, seed=seed)
        rows.append(
            {
                "n_agents": m,
                "target_syncs": int(target),
                "threshold": float(threshold),
                "prop1_bound": float(bound),
                "private_syncs": float(np.mean(private.n_syncs)),
                "nonprivate_syncs": float(np.mean(nonprivate.n_syncs)),
                "regret_private": float(private.final_regret.sum(axis=1).mean()),
                "regret_nonprivate": float(nonprivate.final_regret.sum(axis=1).mean()),
            }
        )
    gap = np.array([r["regret_private"] - r["regret_nonprivate"] for r in rows])
    x = np.log([r["n_agents"] for r in rows])
    exponent = float(np.polyfit(x, np.log(np.maximum(gap, 1e-12)), 1)[0])
    return {
        "setting": dict(SETTING, n_trials=n_trials, seed=seed),
        "rows": rows,
        "exponent": exponent,
    }


def render(numbers: dict) -> str:
    """The page's generated block: two tables and the fitted exponent.

    Parameters
    ----------
    numbers : dict
        :func:`crosscheck`'s result.

    Returns
    -------
    str
        Markdown (no trailing newline).
    """
    s = numbers["setting"]
    lines = [
        f"Setting: d = {s['dim']}, K = {s['n_arms']}, T = {s['horizon']}, ε = {s['epsilon']:g}, "
        f"δ = {s['delta']:g}, Bernoulli rewards, {s['n_trials']} worlds per M (seed "
        f"{s['seed']}), the paper's Privatizer calibration.",
        "",
        "| M | ⌈M ln T⌉ | D (Prop. 1) | Prop. 1 bound | private syncs | non-private syncs |",
        "|---|---|---|---|---|---|",
    ]
    for r in numbers["rows"]:
        lines.append(
            f"| {r['n_agents']} | {r['target_syncs']} | {r['threshold']:.4g} | "
            f"{r['prop1_bound']:.4g} | {r['private_syncs']:.4g} | {r['nonprivate_syncs']:.4g} |"
        )
    lines += [
        "",
        "| M | total regret, private | total regret, non-private | private − non-private |",
        "|---|---|---|---|",
    ]
    for r in numbers["rows"]:
        gap = r["regret_private"] - r["regret_nonprivate"]
        lines.append(
            f"| {r['n_agents']} | {r['regret_private']:.4g} | {r['regret_nonprivate']:.4g} | "
            f"{gap:.4g} |"
        )
    lines += [
        "",
        f"Fitted growth of the private part of the regret: M^{numbers['exponent']:.2f} "
        "(least squares of log(private − non-private) on log M).",
    ]
    return "\n".join(lines)


def update_page(page: Path, block: str) -> str:
    """Replace the generated block of ``page`` by ``block``; return the new text.

    Parameters
    ----------
    page : Path
        A Markdown file holding the two markers.
    block : str
        :func:`render`'s output.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If the markers are missing.
    """
    text = page.read_text(encoding="utf-8")
    if _BEGIN not in text or _END not in text:
        raise ValueError(f"{page} has no {_BEGIN} ... {_END} block.")
    head, rest = text.split(_BEGIN, 1)
    _, tail = rest.split(_END, 1)
    new = f"{head}{_BEGIN}\n{block}\n{_END}{tail}"
    page.write_text(new, encoding="utf-8")
    return new


def _main(argv: list[str]) -> int:
    block = render(crosscheck())
    if argv:
        update_page(Path(argv[0]), block)
    print(block)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(_main(sys.argv[1:]))
