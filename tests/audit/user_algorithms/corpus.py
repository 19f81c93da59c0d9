"""A corpus of users' own algorithms, written only through fedpriv's public extension API.

Every entry is a small federated algorithm a researcher could write from
docs/guides/your-claims.md alone: agents hold reward tables, send the server noisy
statistics through :func:`fedpriv.privacy.laplace_release` (which charges the run's
:class:`fedpriv.privacy.Accountant`), and claim ε = 1-DP for one changed reward of one
agent, as seen by the server. Four are correct; eight leak, each in one of the ways the
issue lists (noise sized for one release of many, a mis-declared ``disjoint`` level,
re-used noise, a data-dependent send/skip decision, a raw count released, a leak only
through differences of messages, a leak at a late position only, a leak only in a
vector's joint distribution).

Each algorithm's docstring derives its true ε; :data:`CORPUS` states it with the verdict
the entry must get. The rows are built as the guide builds them (``Claim``,
``RegisteredClaim``, ``View``, ``NeighborSearch``): the audits search the changed
reward over agent 0's stream (first, last, both sides of every epoch boundary, seeded
random positions; values 0 -> 1) and read the whole view, as the guide's section "How
the audit reads a view, and which neighbour it changes" shows; the declaration check
``fedpriv verify`` derives from the same ``search`` runs the same candidate pairs. :func:`guide_audit`
keeps the single pair a new user would guess (agent 0's first reward, 0 -> 1).
The file is also a claims file::

    fedpriv verify --claims tests/audit/user_algorithms/corpus.py --quick

Shared shapes: a reward table is ``(n_agents, n_epochs, pulls)`` of rewards in [0, 1]
(``rewards[i, r, j]``: agent ``i``'s ``j``-th reward of epoch ``r``), or
``(n_agents, n_arms, pulls)`` for the per-arm algorithms; each function runs
``n_trials`` independent runs at once (noise of trial ``t`` from child ``t`` of
``seed``) and returns ``(view, accountant)``: what the server sees of agent 0, shape
``(n_trials, n_columns)``, and the run's accountant.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
from fedpriv.audit.claims.claim import Claim
from fedpriv.audit.claims.entry import RegisteredClaim
from fedpriv.audit.claims.family import Family
from fedpriv.audit.engine.coupled import search_and_confirm
from fedpriv.audit.engine.neighbor_search import NeighborSearch
from fedpriv.audit.engine.views import View
from fedpriv.privacy import Accountant, NeighboringRelation, PureDP, laplace_release

KEY = "user_corpus"
TITLE = "Users' algorithms corpus (fedpriv tests)"
EPSILON = 1.0
N_AGENTS = 2
PULLS = 8  # rewards per agent and epoch
TABLE_SEED = 2026


# ---------------------------------------------------------------- shared helpers
def _noise(seed, n_trials: int) -> np.ndarray:
    """One noise generator per trial (child ``t`` of ``seed``), as an object array."""
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    rngs = np.empty(n_trials, dtype=object)
    rngs[:] = [np.random.default_rng(child) for child in root.spawn(n_trials)]
    return rngs


def _accountant(disjoint, sequential=()) -> Accountant:
    return Accountant(
        neighboring_relation=NeighboringRelation.REPLACE_ONE_REWARD,
        disjoint=("trial", *disjoint),
        sequential=tuple(sequential),
        keep_draw_rows=False,
    )


def _release(values, *, scale, sensitivity, accountant, rng, **keys) -> np.ndarray:
    """``laplace_release`` of ``values`` (n_trials, ...), the trial axis keyed first."""
    values = np.asarray(values, dtype=np.float64)
    trial = np.arange(len(values)).reshape((-1,) + (1,) * (values.ndim - 1))
    return laplace_release(
        values,
        scale=scale,
        l1_sensitivity=sensitivity,
        accountant=accountant,
        keys={"trial": trial, **keys},
        rng=rng,
    )


def _trials(table: np.ndarray, n_trials: int) -> np.ndarray:
    return np.broadcast_to(table, (n_trials, *table.shape))


# ---------------------------------------------------------------- correct algorithms
def epoch_sums(rewards, seed, n_trials=1, *, sequential_epochs=False):
    """Each agent sends each epoch's reward sum with Laplace(1/ε) noise.

    True ε = 1: a reward enters one epoch's sum (sensitivity 1), so Laplace(1/ε) gives
    ε for that message and the other messages do not depend on it. The accountant
    agrees when ``epoch`` is declared ``disjoint`` (``holds``); declared sequential
    (``sequential_epochs``, honest but loose) it certifies E·ε and the row is
    ``unresolved``, never ``violated``.
    """
    x = _trials(rewards, n_trials).sum(axis=3)  # (n, agents, epochs)
    levels = ("agent",) if sequential_epochs else ("agent", "epoch")
    acc = _accountant(levels, ("epoch",) if sequential_epochs else ())
    agents, epochs = np.arange(x.shape[1])[:, None], np.arange(x.shape[2])
    out = _release(
        x,
        scale=1 / EPSILON,
        sensitivity=1.0,
        accountant=acc,
        rng=_noise(seed, n_trials),
        agent=agents,
        epoch=epochs,
    )
    return out[:, 0, :], acc


def cumulative_sums(rewards, seed, n_trials=1, *, scale=None, disjoint_epochs=False):
    """Each agent sends its cumulative reward sum S_r = x_0 + ... + x_r every epoch.

    A reward of epoch 0 enters all E messages (sensitivity 1 each). With Laplace noise
    of scale E/ε per message (the default) the E releases compose to ε: true ε = 1.
    With ``scale=1/ε`` (noise sized for one release of many) the same reward moves E
    messages by 1, each Laplace(1): the privacy loss of the view is the sum of E
    independent losses each bounded by 1, attained together, so true ε = E. With
    ``disjoint_epochs`` the epochs are *declared* disjoint though every cumulative sum
    holds epoch 0's rewards: the accountant certifies 1 for a true E.
    """
    x = _trials(rewards, n_trials).sum(axis=3).cumsum(axis=2)
    n_epochs = x.shape[2]
    b = n_epochs / EPSILON if scale is None else scale
    acc = _accountant(
        ("agent", "epoch") if disjoint_epochs else ("agent",), () if disjoint_epochs else ("epoch",)
    )
    out = _release(
        x,
        scale=b,
        sensitivity=1.0,
        accountant=acc,
        rng=_noise(seed, n_trials),
        agent=np.arange(x.shape[1])[:, None],
        epoch=np.arange(n_epochs),
    )
    return out[:, 0, :], acc


def arm_sums_and_leader(rewards, seed, n_trials=1):
    """Per-arm reward sums with Laplace(1/ε), plus the arm whose *noisy* sum is largest.

    ``rewards``: (n_agents, n_arms, pulls). A reward enters one arm's sum (arms are
    disjoint cells), and the leader is post-processing of the noisy sums: true ε = 1.
    """
    x = _trials(rewards, n_trials).sum(axis=3)  # (n, agents, arms)
    acc = _accountant(("agent", "arm"))
    out = _release(
        x,
        scale=1 / EPSILON,
        sensitivity=1.0,
        accountant=acc,
        rng=_noise(seed, n_trials),
        agent=np.arange(x.shape[1])[:, None],
        arm=np.arange(x.shape[2]),
    )
    leader = out[:, 0, :].argmax(axis=1).astype(np.float64)
    return np.column_stack([out[:, 0, :], leader]), acc


# ---------------------------------------------------------------- leaky algorithms
def reused_noise(rewards, seed, n_trials=1):
    """One Laplace draw per agent, charged once, re-sent in every message.

    Message r is S_r + Z with S_r the cumulative sum and one Z ~ Laplace(1/ε) drawn
    (and charged) with the first message. Message r minus message r - 1 is the raw
    epoch sum x_r, so a reward of epoch r >= 1 reaches the server without noise:
    true ε = ∞ (the accountant, charged once, certifies 1). A change in epoch 0 moves
    every message by the same 1 and leaks only ε; the leak needs a later position.
    """
    x = _trials(rewards, n_trials).sum(axis=3)
    cum = x.cumsum(axis=2)
    acc = _accountant(("agent",))
    first = _release(
        cum[:, :, 0],
        scale=1 / EPSILON,
        sensitivity=1.0,
        accountant=acc,
        rng=_noise(seed, n_trials),
        agent=np.arange(x.shape[1]),
    )
    messages = first[:, :, None] + (cum - cum[:, :, :1])  # the same noise every epoch
    return messages[:, 0, :], acc


def send_if_high(rewards, seed, n_trials=1, *, threshold=None):
    """An agent sends an epoch's noisy sum only when the *raw* sum reaches a threshold.

    The server sees (sent?, noisy sum or 0) per epoch. Whether a message is sent is a
    function of raw data: a change that moves the raw sum across the threshold turns
    a message on with probability 1 in one world and 0 in the other: true ε = ∞. The
    accountant is charged for the messages sent only, at ε each, epochs disjoint.
    """
    x = _trials(rewards, n_trials).sum(axis=3)
    cut = PULLS / 2 if threshold is None else threshold
    acc = _accountant(("agent", "epoch"))
    rng = _noise(seed, n_trials)
    agents, epochs = np.nonzero(x[0] >= cut)  # the same table in every trial
    sent = np.zeros(x.shape)
    noisy = np.zeros(x.shape)
    if agents.size:
        values = x[:, agents, epochs]
        noisy[:, agents, epochs] = _release(
            values,
            scale=1 / EPSILON,
            sensitivity=1.0,
            accountant=acc,
            rng=rng,
            agent=agents,
            epoch=epochs,
        )
        sent[:, agents, epochs] = 1.0
    return np.concatenate([sent[:, 0, :], noisy[:, 0, :]], axis=1), acc


def sums_and_first_success(rewards, seed, n_trials=1):
    """Noisy epoch sums (correct, ε = 1) plus the raw index of the first reward 1.

    The index is computed from raw rewards and sent as it is: a change of the first
    reward from 0 to 1 moves it from some j > 0 to 0 deterministically: true ε = ∞.
    """
    view, acc = epoch_sums(rewards, seed, n_trials)
    flat = rewards[0].reshape(-1)
    hits = np.flatnonzero(flat >= 1.0)
    index = float(hits[0]) if hits.size else float(flat.size)
    return np.column_stack([view, np.full(n_trials, index)]), acc


def shared_noise_halves(rewards, seed, n_trials=1):
    """Two messages per agent, the halves' sums, sharing one noise draw.

    The user releases the first half's sum A with Laplace(1/ε) (charged), then sends
    the second half's sum B as ``noisy_A - A + B`` ("the same noise, no extra budget").
    Each message alone is a Laplace(1/ε) release; their difference is A - B raw, so a
    change in either half is seen exactly: true ε = ∞.
    """
    x = _trials(rewards, n_trials)[:, :, 0, :]  # epoch 0 only: (n, agents, pulls)
    half = x.shape[2] // 2
    a, b = x[:, :, :half].sum(axis=2), x[:, :, half:].sum(axis=2)
    acc = _accountant(("agent",))
    noisy_a = _release(
        a,
        scale=1 / EPSILON,
        sensitivity=1.0,
        accountant=acc,
        rng=_noise(seed, n_trials),
        agent=np.arange(x.shape[1]),
    )
    noisy_b = noisy_a - a + b
    return np.column_stack([noisy_a[:, 0], noisy_b[:, 0]]), acc


def late_mean_slip(rewards, seed, n_trials=1):
    """Epoch sums with Laplace(1/ε), except the last epoch, calibrated for its *mean*.

    The last epoch's sum gets noise of scale (1/P)/ε for sensitivity 1/P (P rewards: a
    mean's sensitivity), declared as such; its sum still moves by 1 when a reward of
    that epoch changes: true ε = P·ε = 8 at the last epoch's positions, ε = 1 at every
    other position (the first reward shows nothing).
    """
    x = _trials(rewards, n_trials).sum(axis=3)
    acc = _accountant(("agent", "epoch"))
    rng = _noise(seed, n_trials)
    last = x.shape[2] - 1
    agents = np.arange(x.shape[1])[:, None]
    early = _release(
        x[:, :, :last],
        scale=1 / EPSILON,
        sensitivity=1.0,
        accountant=acc,
        rng=rng,
        agent=agents,
        epoch=np.arange(last),
    )
    slip = 1.0 / PULLS
    final = _release(
        x[:, :, last:],
        scale=slip / EPSILON,
        sensitivity=slip,
        accountant=acc,
        rng=rng,
        agent=agents,
        epoch=np.array([last]),
    )
    return np.concatenate([early, final], axis=2)[:, 0, :], acc


def closing_vector(rewards, seed, n_trials=1):
    """Per-arm sums where the last arm's entry "closes" the vector to the raw total.

    ``rewards``: (n_agents, n_arms, pulls). Arms 0..K-2 are released with Laplace(1/ε)
    (arms disjoint, charged); arm K-1 is sent as ``total - sum(noisy others)``, so that
    the vector adds up to the true total. Every coordinate alone is noisy, but the sum
    of the vector is the raw total: a changed reward moves it by 1 exactly, true ε = ∞,
    visible only in the joint distribution of the coordinates.
    """
    x = _trials(rewards, n_trials).sum(axis=3)  # (n, agents, arms)
    acc = _accountant(("agent", "arm"))
    k = x.shape[2] - 1
    noisy = _release(
        x[:, :, :k],
        scale=1 / EPSILON,
        sensitivity=1.0,
        accountant=acc,
        rng=_noise(seed, n_trials),
        agent=np.arange(x.shape[1])[:, None],
        arm=np.arange(k),
    )
    closing = x.sum(axis=2) - noisy.sum(axis=2)
    return np.concatenate([noisy[:, 0, :], closing[:, 0, None]], axis=1), acc


# ---------------------------------------------------------------- tables and rows
def reward_table(n_groups: int) -> np.ndarray:
    """A fixed Bernoulli(0.5) table ``(N_AGENTS, n_groups, PULLS)``; agent 0's first
    reward is 0 (world D of the guide's pair)."""
    table = (np.random.default_rng(TABLE_SEED).random((N_AGENTS, n_groups, PULLS)) < 0.5) * 1.0
    table[0, 0, 0] = 0.0
    return table


def threshold_table(n_groups: int) -> np.ndarray:
    """:func:`reward_table` with agent 0's epoch 0 summing to PULLS/2 - 1 (first reward 0),
    so that the guide's pair moves it onto :func:`send_if_high`'s threshold."""
    table = reward_table(n_groups)
    table[0, 0, :] = 0.0
    table[0, 0, 1 : PULLS // 2] = 1.0
    return table


@dataclasses.dataclass(frozen=True)
class Entry:
    """One corpus algorithm: its run, table, declared structure and expected verdict.

    ``true_epsilon`` is derived in the algorithm's docstring; ``expected`` is the set of
    verdicts the row may get (never ``holds`` for a leaky one; ``{"violated"}`` where the
    true ε is at least twice the claim); ``needs`` names the work a verdict still
    waits for (the joint-view audit, the worst-neighbour search), empty when the
    verdict is reached today.
    """

    name: str
    run: Callable
    groups: int
    true_epsilon: float
    leaky: bool
    leak: str
    table: Callable[[int], np.ndarray] = reward_table

    @property
    def expected(self) -> frozenset[str]:
        if not self.leaky:
            return frozenset({"holds", "unresolved"})
        if self.true_epsilon >= 2 * EPSILON:
            return frozenset({"violated"})
        return frozenset({"violated", "unresolved"})


def _partial(function, **kwargs):
    def run(rewards, seed, n_trials=1):
        return function(rewards, seed, n_trials, **kwargs)

    run.__name__ = function.__name__
    run.__doc__ = function.__doc__
    return run


CORPUS: tuple[Entry, ...] = (
    Entry("epoch-sums", epoch_sums, 4, 1.0, False, ""),
    Entry("cumulative-sums", cumulative_sums, 5, 1.0, False, ""),
    Entry("arm-sums-leader", arm_sums_and_leader, 3, 1.0, False, ""),
    Entry("epoch-sums-sequential", _partial(epoch_sums, sequential_epochs=True), 4, 1.0, False, ""),
    Entry(
        "one-of-many",
        _partial(cumulative_sums, scale=1 / EPSILON),
        10,
        10.0,
        True,
        "noise sized for one release of many",
    ),
    Entry(
        "misdeclared-disjoint",
        _partial(cumulative_sums, scale=1 / EPSILON, disjoint_epochs=True),
        10,
        10.0,
        True,
        "a mis-declared disjoint level",
    ),
    Entry("reused-noise", reused_noise, 4, math.inf, True, "re-used noise"),
    Entry(
        "send-if-high",
        send_if_high,
        4,
        math.inf,
        True,
        "a data-dependent send/skip decision",
        threshold_table,
    ),
    Entry("raw-first-success", sums_and_first_success, 4, math.inf, True, "a raw index released"),
    Entry(
        "shared-noise-halves",
        shared_noise_halves,
        1,
        math.inf,
        True,
        "a leak only through differences of messages",
    ),
    Entry(
        "late-mean-slip", late_mean_slip, 4, float(PULLS), True, "a leak at a late position only"
    ),
    Entry(
        "closing-vector",
        closing_vector,
        4,
        math.inf,
        True,
        "a leak only in a vector's joint distribution",
    ),
)

ENTRIES = {entry.name: entry for entry in CORPUS}

VIEW = View(
    observer="the server",
    outputs=("every message of agent 0",),
    definition="corpus.py: ε-DP for one changed reward of one agent, as seen by the server",
)


def _entry(claim: Claim) -> Entry:
    return ENTRIES[claim.algorithm]


def accountant(claim: Claim):
    """One run's accountant at the claimed δ (every run charges the same cells)."""
    entry = _entry(claim)
    _, acc = entry.run(entry.table(entry.groups), 0, 1)
    route, epsilon = acc.routes.tightest(claim.claimed_delta)
    return route, float(epsilon), ()


def guide_pair(entry: Entry) -> tuple[np.ndarray, np.ndarray]:
    """The guide's neighbouring pair: agent 0's first reward, 0 -> 1."""
    world0 = entry.table(entry.groups)
    world1 = world0.copy()
    world1[0, 0, 0] = 1.0
    return world0, world1


def search(claim: Claim) -> NeighborSearch:
    """The search's inputs, written once: agent 0's rewards (the table's epochs laid end
    to end as one stream, the epoch starts as message boundaries), agent 0's messages as
    the observable. The audit searches them; ``fedpriv verify`` derives the row's
    declaration check from them (the same candidate pairs, coupled)."""
    entry = _entry(claim)
    table = entry.table(entry.groups)
    agents, groups, pulls = table.shape

    def run(stream: np.ndarray, n: int, seed) -> np.ndarray:
        return entry.run(stream.reshape(table.shape), seed, n)[0]

    return NeighborSearch(
        run=run,
        table=table.reshape(agents, groups * pulls),
        domain=(0.0, 1.0),
        records=[(0,)],
        boundaries=range(pulls, groups * pulls, pulls),
    )


def audit(claim: Claim, budget, seed):
    """The search for the worst neighbour over :func:`search`'s candidates."""
    return search(claim).audit(
        budget=budget,
        seed=seed,
        delta=claim.claimed_delta,
        channel="agent 0's messages to the server",
        batch_size=budget.batch_size,
    )


def guide_audit(claim: Claim, budget, seed):
    """The guide's first audit: the guide's pair, agent 0's messages as the observable."""
    entry = _entry(claim)
    worlds = guide_pair(entry)

    def sample(world: int, n: int, seed) -> np.ndarray:
        return entry.run(worlds[world], seed, n)[0]

    return search_and_confirm(
        {"agent 0, first reward: 0 -> 1": sample},
        budget=budget,
        seed=seed,
        delta=claim.claimed_delta,
        channel="agent 0's messages to the server",
        batch_size=budget.batch_size,
    )


def row(entry: Entry) -> RegisteredClaim:
    """The register row of ``entry``, as the guide writes one."""
    claim = Claim(
        paper=TITLE,
        algorithm=entry.name,
        mode="paper",
        setting=(("n_agents", N_AGENTS), ("epsilon", EPSILON)),
        neighboring_relation=NeighboringRelation.REPLACE_ONE_REWARD,
        claimed=PureDP(EPSILON),
        source=f"corpus.py, {entry.run.__name__}",
    )
    return RegisteredClaim(
        key=f"{KEY}/{entry.name}/eps1",
        claim=claim,
        accountant=accountant,
        audit=audit,
        search=search,
        view=VIEW,
        channel="agent 0's messages to the server",
        note=entry.leak,
    )


def claims() -> tuple[RegisteredClaim, ...]:
    """Every corpus row."""
    return tuple(row(entry) for entry in CORPUS)


FAMILY = Family(key=KEY, title=TITLE, claims=claims)
