"""The claims of ``my_algorithm.py``, checked by ``fedpriv verify --claims``.

    fedpriv verify --claims examples/my_claims.py --quick --out my-report

A claims file defines ``FAMILY`` (one :class:`~fedpriv.audit.claims.family.Family`) or
``FAMILIES``. The family's ``claims`` callable returns the register rows, each a
:class:`~fedpriv.audit.claims.entry.RegisteredClaim` holding a
:class:`~fedpriv.audit.claims.claim.Claim` (what is claimed: algorithm, setting,
neighboring relation, guarantee, where it is stated), the view the claim protects, and
two recipes: the accountant's (``claim -> (route, ε, notes)``: one run of the algorithm
and the ε its own accountant certifies at the claimed δ) and the end-to-end audit's
(``(claim, budget, seed) -> EndToEndAudit``: many coupled runs on two neighbouring
reward tables, from which :func:`~fedpriv.audit.engine.coupled.search_and_confirm`
picks a distinguishing event on a pilot sample and confirms it on fresh runs), and
the inputs of the worst-neighbour search (``claim -> NeighborSearch``), from which
``fedpriv verify`` derives the coupled runs that check the declarations (a user's row
without such a check is never ``holds``). These
are the types the four papers' rows use; ``fedpriv verify`` decides the verdict with
the same rule: ``violated`` needs a lower bound above the claim, ``holds`` the
accountant's end-to-end upper bound within it.

Two rows: the algorithm as designed (noise for a sum's sensitivity 1: ``holds``), and
the leaky variant (noise for a mean's sensitivity 1/n on a sum: its accountant is told
1/n and certifies ε, the audit finds more than ε: ``violated``).
"""

from __future__ import annotations

import numpy as np
from fedpriv.audit.claims.claim import Claim
from fedpriv.audit.claims.entry import RegisteredClaim
from fedpriv.audit.claims.family import Family
from fedpriv.audit.engine.coupled import search_and_confirm
from fedpriv.audit.engine.neighbor_search import NeighborSearch
from fedpriv.audit.engine.views import View
from fedpriv.privacy import NeighboringRelation, PureDP

# The file's folder is importable while fedpriv loads it: the algorithm sits beside it.
from my_algorithm import private_fed_ucb, pulls_needed

KEY = "my_fed_ucb"
TITLE = "My private federated UCB (fedpriv example)"

#: The setting both rows claim ε for (a reward table of 4 agents x 3 arms).
SETTING = {"n_agents": 4, "n_arms": 3, "epsilon": 1.0, "n_epochs": 4, "base_pulls": 8}
ARM_MEANS = (0.7, 0.5, 0.3)
TABLE_SEED = 2026

VIEW = View(
    observer="the server",
    outputs=("every message of agent i: its noisy per-arm reward sums, every epoch",),
    definition="my_algorithm.py, module docstring: ε-DP for one changed reward of one "
    "agent, as seen by the server",
)


def reward_table(setting: dict) -> np.ndarray:
    """The claim's reward table: Bernoulli rewards of ``ARM_MEANS``, fixed seed."""
    rng = np.random.default_rng(TABLE_SEED)
    shape = (
        setting["n_agents"],
        setting["n_arms"],
        pulls_needed(setting["n_epochs"], setting["base_pulls"]),
    )
    return (rng.random(shape) < np.asarray(ARM_MEANS)[None, :, None]).astype(np.float64)


def _run(claim: Claim, rewards: np.ndarray, seed, n_trials: int):
    s = claim.setting_dict()
    return private_fed_ucb(
        rewards,
        seed,
        epsilon=s["epsilon"],
        n_epochs=s["n_epochs"],
        base_pulls=s["base_pulls"],
        n_trials=n_trials,
        leaky=claim.algorithm == "leaky-fed-ucb",
    )


def accountant(claim: Claim) -> tuple[str, float, tuple[str, ...]]:
    """The run's own accountant at the claimed δ (one run; every run charges the same
    cells, so one is enough)."""
    run = _run(claim, reward_table(claim.setting_dict()), 0, 1)
    route, epsilon = run.accountant.routes.tightest(claim.claimed_delta)
    return route, float(epsilon), ()


def audit(claim: Claim, budget, seed):
    """Agent 0's first reward of arm 0 changed from 0 to 1 (it enters epoch 0's sum of
    arm 0); the server sees every message of agent 0."""
    table = reward_table(claim.setting_dict())
    worlds = (table.copy(), table.copy())
    worlds[0][0, 0, 0], worlds[1][0, 0, 0] = 0.0, 1.0

    def sample(world: int, n: int, seed) -> np.ndarray:
        return _run(claim, worlds[world], seed, n).agent_view(0)

    s = claim.setting_dict()
    names = tuple(f"epoch 0 sum of arm {k}" for k in range(s["n_arms"])) + tuple(
        f"epoch {r} {what}" for r in range(1, s["n_epochs"]) for what in ("arm", "sum")
    )
    return search_and_confirm(
        {"agent 0, arm 0, pull 0: reward 0 -> 1": sample},
        budget=budget,
        seed=seed,
        delta=claim.claimed_delta,
        channel="agent 0's messages to the server",
        names=names,
        batch_size=budget.batch_size,
    )


def search(claim: Claim) -> NeighborSearch:
    """The run function and the table, written once: ``fedpriv verify`` checks the
    declared sensitivity and disjoint levels on these candidates (agent 0's first and
    last reward of every arm, both sides of epoch 1's first pull, and seeded random
    positions, each changed from 0 to 1), by coupled runs, before the accountant's
    bound may support ``holds``; ``search(claim).audit(...)`` would search them too."""
    s = claim.setting_dict()
    return NeighborSearch(
        run=lambda table, n, seed: _run(claim, table, seed, n).agent_view(0),
        table=reward_table(s),
        domain=(0.0, 1.0),
        records=[(0, k) for k in range(s["n_arms"])],
        boundaries=[s["base_pulls"]],
    )


def _row(algorithm: str, source: str, note: str = "") -> RegisteredClaim:
    claim = Claim(
        paper=TITLE,
        algorithm=algorithm,
        mode="paper",
        setting=tuple(SETTING.items()),
        neighboring_relation=NeighboringRelation.REPLACE_ONE_REWARD,
        claimed=PureDP(SETTING["epsilon"]),
        source=source,
    )
    return RegisteredClaim(
        key=f"{KEY}/{algorithm}/eps{SETTING['epsilon']:g}",
        claim=claim,
        accountant=accountant,
        audit=audit,
        search=search,
        view=VIEW,
        channel="agent 0's messages to the server",
        note=note,
    )


def claims() -> tuple[RegisteredClaim, ...]:
    """The family's register rows."""
    return (
        _row("private-fed-ucb", "my_algorithm.py: Laplace(1/ε) on each epoch's sum"),
        _row(
            "leaky-fed-ucb",
            "my_algorithm.py, leaky=True: noise for the mean's sensitivity 1/n on the sum",
            note="the accountant was told l1_sensitivity 1/n (a mean's) for a sum whose "
            "sensitivity is 1; it prices what it is told, the audit measures the "
            "release",
        ),
    )


FAMILY = Family(
    key=KEY,
    title=TITLE,
    claims=claims,
    setting_fields={"n_epochs": int, "base_pulls": int},  # beside the standard entries
)
