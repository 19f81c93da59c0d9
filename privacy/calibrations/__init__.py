"""Noise calibrations as the seed papers prescribe them, and as corrected.

Each function returns the noise one seed paper prescribes, **as written**, for its
claimed guarantee, together with that claim, so that reports can put the claim next
to what the accountant computes. Nothing here draws noise or charges an accountant.

Zhu et al. (2021), Fed_UCB
    §4.1: "Set ε' := ε / ⌈log T⌉" and add ``Lap(1/ε')`` to every tree node, claiming
    ε-DP. The paper never states the base of ``log``. Algorithm 4 acts on ϑ̃(t−1)
    (line 9) and sends ϑ̃(t−1) (line 19) for t = 1..T, so the prefixes 1..T−1 reach
    an output and a record sits in ``floor(log2 (T-1)) + 1 = ⌈log2 T⌉`` of the nodes
    that reach one (:func:`fedpriv.privacy.accounting.tree.released_tree_depth`): the corrected
    calibration spends exactly ε on that view, ``ε' = ε / ⌈log2 T⌉`` (equal to the
    paper's under log2), or ``ε / (floor(log2 T) + 1)`` when the final estimate
    ϑ̃(T) is published too (``publish_final``).
Dubey & Pentland (NeurIPS 2020), FedUCB
    Alg. 2 (Privatizer) and Prop. 4: :func:`feducb_privatizer`.
Li & Song, CDP/DDP/HDP-MAB
    Per-epoch Laplace scale ``1/(M ε n_r)``: :func:`li_song_epoch_scale`,
    :func:`li_song_claimed_epsilon`.
Dubey & Pentland (AAMAS 2020), private message passing
    The interval mechanism, whose formulas were lost from the available text and are
    reconstructed by fedpriv: :func:`interval_release_schedule`,
    :func:`interval_noise_scales`, :func:`interval_claimed_guarantee`.

Each paper's calibration is its own module, named by the paper's family key:
:mod:`fedpriv.privacy.calibrations.gossip_fed_ucb`, :mod:`fedpriv.privacy.calibrations.feducb`,
:mod:`fedpriv.privacy.calibrations.li_song` and :mod:`fedpriv.privacy.calibrations.dubey_aamas`;
every public name of those modules is re-exported here.
"""

from __future__ import annotations

from fedpriv.privacy.calibrations.dubey_aamas import (
    INTERVAL_CONFIDENCE,
    INTERVAL_RULES,
    IntervalClaim,
    interval_claimed_guarantee,
    interval_length,
    interval_noise_scales,
    interval_release_epsilons,
    interval_release_schedule,
)
from fedpriv.privacy.calibrations.feducb import (
    FEDUCB_VERSIONS,
    FedUCBCalibration,
    feducb_privatizer,
)
from fedpriv.privacy.calibrations.gossip_fed_ucb import (
    PAPER_LOG_BASES,
    gossip_fed_ucb_node_epsilon,
    gossip_fed_ucb_released_prefixes,
    gossip_fed_ucb_scale,
    paper_log_rounds,
)
from fedpriv.privacy.calibrations.li_song import (
    li_song_claimed_epsilon,
    li_song_epoch_scale,
    li_song_mean_sensitivity,
    li_song_participants,
)

__all__ = [
    "FEDUCB_VERSIONS",
    "INTERVAL_CONFIDENCE",
    "INTERVAL_RULES",
    "PAPER_LOG_BASES",
    "FedUCBCalibration",
    "IntervalClaim",
    "feducb_privatizer",
    "gossip_fed_ucb_node_epsilon",
    "gossip_fed_ucb_released_prefixes",
    "gossip_fed_ucb_scale",
    "interval_claimed_guarantee",
    "interval_length",
    "interval_noise_scales",
    "interval_release_epsilons",
    "interval_release_schedule",
    "li_song_claimed_epsilon",
    "li_song_epoch_scale",
    "li_song_mean_sensitivity",
    "li_song_participants",
    "paper_log_rounds",
]
