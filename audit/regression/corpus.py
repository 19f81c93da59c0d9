"""Known-broken mechanisms with their correct twins (bugs from the DP-testing literature).

Every :class:`CorpusEntry` holds a vectorized mechanism
``mechanism(dataset, n_samples, rng) -> ndarray (n_samples, ...)``, the neighboring
pair it is audited on, the privacy claim it makes, the verdict an audit must reach
(``expected_violated``), and for broken entries the name of its correct twin. The
twins are the fixed versions, audited on the same kind of pair against the same
claim: :func:`audit.audit_mechanism` must flag every broken entry and pass every
twin (tests/audit/test_corpus.py).

The mechanisms themselves live in :mod:`fedpriv.audit.regression.corpus_mechanisms`, and
:class:`CorpusEntry` in :mod:`fedpriv.audit.regression.corpus_entry` (re-exported here).

Sources of the fixtures: A1 Laplace scale = ε (StatDP ``histogram_eps``, DP-Sniper
``NoisyHist2``); A2 k× under-noising (Tramèr et al. 2022); A3 report-noisy-max
returning the value (StatDP ``noisy_max_v1b``); A4 sparse-vector variants (Lyu, Su &
Li, "Understanding the Sparse Vector Technique", PVLDB 2017, arXiv:1603.01699,
Alg. 1, 5, 6); B1 no noise; B2/B3 tree without the log factor / off by one level;
B4 fresh noise on the running sum every round; B5 unclipped rewards (Google's
bounded-sum test entry 1000.0); B6 data-dependent sync triggers (Zhou & Chowdhury,
ICLR 2024, on FedUCB); B7 noise reused across nodes; B8 wrong neighbour notion.

Length: the entries are data: every known-broken fixture with its twin, pair, claim and
source, grouped by family in one function each (the mechanisms are in
:mod:`~fedpriv.audit.regression.corpus_mechanisms`).
"""

from __future__ import annotations

import functools

import numpy as np
from fedpriv.audit.estimators.white_box import laplace_log_density_ratio
from fedpriv.audit.regression.api import NeighboringPair
from fedpriv.audit.regression.corpus_entry import CorpusEntry
from fedpriv.audit.regression.corpus_float import float_entries
from fedpriv.audit.regression.corpus_mechanisms import (
    bounded_sum,
    fresh_noise_prefix_sums,
    gaussian_count,
    half_difference,
    laplace_count,
    no_noise,
    noisy_max,
    per_agent_release,
    shared_noise_pair,
    sparse_vector,
    synced_sum,
    tree_nodes,
)
from fedpriv.privacy.accounting.guarantees import GaussianDP, PureDP
from fedpriv.privacy.accounting.tree import nodes_covering, tree_depth
from fedpriv.privacy.relations import NeighboringRelation

__all__ = ["CORPUS", "CorpusEntry", "corpus_entries", "get_entry"]

_REWARD = NeighboringRelation.REPLACE_ONE_REWARD
_RECORD = NeighboringRelation.REPLACE_ONE


# ---------------------------------------------------------------------------------
# Mechanisms (module level, so they pickle for process pools and dask)
# ---------------------------------------------------------------------------------


_P = functools.partial


def _count_entries() -> list[CorpusEntry]:
    """A1, A2 and B1: counts released with too little (or no) noise."""
    count_pair = NeighboringPair(1.0, 0.0, _RECORD, "count 1 vs 0 (Δ = 1)")
    entries: list[CorpusEntry] = []
    add = entries.append
    # A1 Laplace scale = ε instead of Δ/ε (ε = 0.5; at ε = 1 the bug is invisible).
    add(
        CorpusEntry(
            name="laplace_scale_is_epsilon",
            mechanism=_P(laplace_count, scale=0.5),
            pair=count_pair,
            claim=PureDP(0.5),
            expected_violated=True,
            twin="laplace_eps_half",
            source="A1 (StatDP histogram_eps)",
            true_epsilon=2.0,
        )
    )
    add(
        CorpusEntry(
            name="laplace_eps_half",
            mechanism=_P(laplace_count, scale=2.0),
            pair=count_pair,
            claim=PureDP(0.5),
            expected_violated=False,
            twin="",
            source="A1 twin",
            true_epsilon=0.5,
        )
    )
    # A2 k× under-noising.
    for k, label in ((2.0, "2x"), (1.25, "1_25x")):
        add(
            CorpusEntry(
                name=f"laplace_under_noised_{label}",
                mechanism=_P(laplace_count, scale=1.0 / k),
                pair=count_pair,
                claim=PureDP(1.0),
                expected_violated=True,
                twin="laplace_correct",
                source="A2 (Tramèr et al. 2022)",
                true_epsilon=k,
            )
        )
    add(
        CorpusEntry(
            name="laplace_correct",
            mechanism=_P(laplace_count, scale=1.0),
            pair=count_pair,
            claim=PureDP(1.0),
            expected_violated=False,
            twin="",
            source="A2 twin",
            true_epsilon=1.0,
        )
    )
    add(
        CorpusEntry(
            name="gaussian_under_noised_2x",
            mechanism=_P(gaussian_count, noise_stddev=1.0),
            pair=count_pair,
            claim=GaussianDP(0.5),
            expected_violated=True,
            twin="gaussian_correct",
            source="A2 (Gaussian, GDP test)",
            true_epsilon=float("nan"),
            samples=20_000,
        )
    )
    add(
        CorpusEntry(
            name="gaussian_correct",
            mechanism=_P(gaussian_count, noise_stddev=2.0),
            pair=count_pair,
            claim=GaussianDP(0.5),
            expected_violated=False,
            twin="",
            source="A2 twin",
            true_epsilon=float("nan"),
            samples=20_000,
        )
    )
    # B1 no noise.
    add(
        CorpusEntry(
            name="no_noise",
            mechanism=no_noise,
            pair=count_pair,
            claim=PureDP(1.0),
            expected_violated=True,
            twin="laplace_correct",
            source="B1/A11",
            true_epsilon=float("inf"),
            samples=10_000,
        )
    )
    return entries


def _selection_entries() -> list[CorpusEntry]:
    """A3 and A4: report-noisy-max and sparse-vector variants."""
    entries: list[CorpusEntry] = []
    add = entries.append
    # A3 report noisy max returning the value (ε = 0.5, Lap(1/ε), monotone counts).
    add(
        CorpusEntry(
            name="noisy_max_returns_value",
            mechanism=_P(noisy_max, scale=2.0, return_value=True),
            pair=NeighboringPair(np.ones(5), np.zeros(5), _RECORD, "5 counts, all +1"),
            claim=PureDP(0.5),
            expected_violated=True,
            twin="noisy_max_index",
            source="A3 (StatDP noisy_max_v1b)",
            true_epsilon=2.5,
        )
    )
    add(
        CorpusEntry(
            name="noisy_max_index",
            mechanism=_P(noisy_max, scale=2.0, return_value=False),
            pair=NeighboringPair(np.eye(5)[0], np.zeros(5), _RECORD, "5 counts, first +1"),
            claim=PureDP(0.5),
            expected_violated=False,
            twin="",
            source="A3 twin",
            true_epsilon=0.5,
        )
    )
    # A4 sparse vector (ε = 0.5, 20 queries; half move up, half down).
    k = 20
    svt_pair = NeighboringPair(
        np.zeros(k),
        np.r_[np.ones(k // 2), -np.ones(k // 2)],
        _RECORD,
        "20 queries: first half +1, second half -1",
    )
    for variant, true_eps in ((5, float("inf")), (6, float("nan"))):
        add(
            CorpusEntry(
                name=f"sparse_vector_alg{variant}",
                mechanism=_P(sparse_vector, epsilon=0.5, variant=variant),
                pair=svt_pair,
                claim=PureDP(0.5),
                expected_violated=True,
                twin="sparse_vector_alg1",
                source=f"A4 (Lyu et al. 2017, Alg. {variant})",
                true_epsilon=true_eps,
                score=half_difference,
            )
        )
    add(
        CorpusEntry(
            name="sparse_vector_alg1",
            mechanism=_P(sparse_vector, epsilon=0.5, variant=1),
            pair=svt_pair,
            claim=PureDP(0.5),
            expected_violated=False,
            twin="",
            source="A4 twin (Lyu et al. 2017, Alg. 1)",
            true_epsilon=0.5,
            score=half_difference,
        )
    )
    return entries


def _tree_entries() -> list[CorpusEntry]:
    """B2/B3 and B4: binary-tree counters with too few levels of noise."""
    entries: list[CorpusEntry] = []
    add = entries.append
    # B2/B3 binary tree, T = 16 (L = 5 levels), reward 1 vs 0 at round 1, ε = 1.
    horizon = 16
    levels = tree_depth(horizon)
    stream = np.zeros(horizon)
    stream_prime = stream.copy()
    stream[0] = 1.0
    tree_pair = NeighboringPair(stream, stream_prime, _REWARD, "T = 16, round 1: 1 vs 0")
    nodes = nodes_covering(1, horizon)
    ones = np.ones(nodes.size)
    tree_llr = laplace_log_density_ratio(ones, np.zeros(nodes.size), float(levels))
    for name, scale, eps, samples in (
        ("tree_without_log_factor", 1.0, float(levels), 100_000),
        ("tree_off_by_one_level", float(levels - 1), levels / (levels - 1), 1_000_000),
    ):
        add(
            CorpusEntry(
                name=name,
                mechanism=_P(tree_nodes, scale=scale),
                pair=tree_pair,
                claim=PureDP(1.0),
                expected_violated=True,
                twin="tree_correct",
                source="B2" if scale == 1.0 else "B3",
                true_epsilon=eps,
                samples=samples,
                log_density_ratio=tree_llr,
            )
        )
    add(
        CorpusEntry(
            name="tree_correct",
            mechanism=_P(tree_nodes, scale=float(levels)),
            pair=tree_pair,
            claim=PureDP(1.0),
            expected_violated=False,
            twin="",
            source="B2/B3 twin",
            true_epsilon=1.0,
            samples=1_000_000,
            log_density_ratio=tree_llr,
        )
    )
    # B4 fresh noise every round on the running sum.
    prefix_llr = laplace_log_density_ratio(np.ones(horizon), np.zeros(horizon), float(horizon))
    add(
        CorpusEntry(
            name="fresh_noise_every_round",
            mechanism=_P(fresh_noise_prefix_sums, scale=1.0),
            pair=tree_pair,
            claim=PureDP(1.0),
            expected_violated=True,
            twin="fresh_noise_composed",
            source="B4",
            true_epsilon=float(horizon),
            log_density_ratio=prefix_llr,
        )
    )
    add(
        CorpusEntry(
            name="fresh_noise_composed",
            mechanism=_P(fresh_noise_prefix_sums, scale=float(horizon)),
            pair=tree_pair,
            claim=PureDP(1.0),
            expected_violated=False,
            twin="",
            source="B4 twin (basic composition over T releases)",
            true_epsilon=1.0,
            log_density_ratio=prefix_llr,
        )
    )
    return entries


def _bandit_entries() -> list[CorpusEntry]:
    """B5 and B7: unclipped rewards, one noise draw reused for two statistics."""
    entries: list[CorpusEntry] = []
    add = entries.append
    # B5 unclipped rewards: the out-of-domain entry 1000.0.
    rewards = np.full(10, 0.5)
    clip_pair = NeighboringPair(
        np.r_[rewards[:-1], 1000.0],
        np.r_[rewards[:-1], 0.0],
        _REWARD,
        "last reward 1000.0 vs 0.0 (declared range [0, 1])",
    )
    add(
        CorpusEntry(
            name="unclipped_rewards",
            mechanism=_P(bounded_sum, scale=1.0, clip=False),
            pair=clip_pair,
            claim=PureDP(1.0),
            expected_violated=True,
            twin="clipped_rewards",
            source="B5",
            true_epsilon=1000.0,
            samples=10_000,
        )
    )
    add(
        CorpusEntry(
            name="clipped_rewards",
            mechanism=_P(bounded_sum, scale=1.0, clip=True),
            pair=clip_pair,
            claim=PureDP(1.0),
            expected_violated=False,
            twin="",
            source="B5 twin",
            true_epsilon=1.0,
        )
    )
    # B7 one Laplace draw reused for two statistics; only the first changes.
    reuse_pair = NeighboringPair(
        np.array([1.0, 0.0]),
        np.array([0.0, 0.0]),
        _REWARD,
        "statistic A 1 vs 0, statistic B unchanged",
    )
    add(
        CorpusEntry(
            name="noise_reused_across_nodes",
            mechanism=_P(shared_noise_pair, scale=1.0, reuse=True),
            pair=reuse_pair,
            claim=PureDP(1.0),
            expected_violated=True,
            twin="noise_fresh_per_node",
            source="B7",
            true_epsilon=float("inf"),
            samples=10_000,
        )
    )
    add(
        CorpusEntry(
            name="noise_fresh_per_node",
            mechanism=_P(shared_noise_pair, scale=1.0, reuse=False),
            pair=reuse_pair,
            claim=PureDP(1.0),
            expected_violated=False,
            twin="",
            source="B7 twin",
            true_epsilon=1.0,
        )
    )
    return entries


def _sync_entries() -> list[CorpusEntry]:
    """B6: a data-dependent sync trigger on raw local sums."""
    entries: list[CorpusEntry] = []
    add = entries.append
    # B6 data-dependent sync trigger on raw local sums.
    sync_d = np.r_[1.0, 1.0, 1.0, 1.0, np.zeros(12)]
    sync_dp = sync_d.copy()
    sync_dp[2] = 0.0
    sync_pair = NeighboringPair(sync_d, sync_dp, _REWARD, "round 3 reward 1 vs 0")
    add(
        CorpusEntry(
            name="data_dependent_sync",
            mechanism=_P(synced_sum, scale=1.0, trigger=3.0, fixed_round=8),
            pair=sync_pair,
            claim=PureDP(1.0),
            expected_violated=True,
            twin="fixed_sync_schedule",
            source="B6 (Zhou & Chowdhury 2024)",
            true_epsilon=float("inf"),
            samples=10_000,
        )
    )
    add(
        CorpusEntry(
            name="fixed_sync_schedule",
            mechanism=_P(synced_sum, scale=1.0, trigger=None, fixed_round=8),
            pair=sync_pair,
            claim=PureDP(1.0),
            expected_violated=False,
            twin="",
            source="B6 twin (fixed schedule)",
            true_epsilon=1.0,
        )
    )
    return entries


def _neighbor_entries() -> list[CorpusEntry]:
    """B8: a user-level claim with event-level noise."""
    entries: list[CorpusEntry] = []
    add = entries.append
    # B8 user-level claim, event-level noise: one user at each of 4 agents.
    user_pair = NeighboringPair(
        np.ones(4),
        np.zeros(4),
        NeighboringRelation.USER_AT_ALL_AGENTS,
        "one user's reward 1 vs 0 at all 4 agents",
    )
    add(
        CorpusEntry(
            name="wrong_neighbor_notion",
            mechanism=_P(per_agent_release, scale=1.0),
            pair=user_pair,
            claim=PureDP(1.0),
            expected_violated=True,
            twin="user_level_noise",
            source="B8",
            true_epsilon=4.0,
        )
    )
    add(
        CorpusEntry(
            name="user_level_noise",
            mechanism=_P(per_agent_release, scale=4.0),
            pair=user_pair,
            claim=PureDP(1.0),
            expected_violated=False,
            twin="",
            source="B8 twin",
            true_epsilon=1.0,
        )
    )
    return entries


def _build() -> tuple[CorpusEntry, ...]:
    """Every fixture, family by family (the order fixes the corpus listing)."""
    families = (
        _count_entries,
        _selection_entries,
        _tree_entries,
        _bandit_entries,
        _sync_entries,
        _neighbor_entries,
    )
    return tuple(entry for family in families for entry in family())


#: Every fixture, broken ones and their twins (C1: :mod:`.corpus_float`).
CORPUS: tuple[CorpusEntry, ...] = _build() + float_entries()


def corpus_entries(expected_violated: bool | None = None) -> tuple[CorpusEntry, ...]:
    """The entries, optionally only the broken (True) or only the correct (False).

    Parameters
    ----------
    expected_violated : bool, optional
        True for the known-broken entries, False for the correct twins, None for all.

    Returns
    -------
    tuple of CorpusEntry
        In corpus order.
    """
    if expected_violated is None:
        return CORPUS
    return tuple(e for e in CORPUS if e.expected_violated is expected_violated)


def get_entry(name: str) -> CorpusEntry:
    """The entry called ``name``.

    Parameters
    ----------
    name : str
        An entry's ``name``.

    Returns
    -------
    CorpusEntry

    Raises
    ------
    KeyError
        If there is none; the message lists the names.
    """
    for entry in CORPUS:
        if entry.name == name:
            return entry
    raise KeyError(f"no corpus entry {name!r}; known: {', '.join(e.name for e in CORPUS)}.")
