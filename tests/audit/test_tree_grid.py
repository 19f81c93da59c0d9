"""Tree-node audits of several scales on common random numbers (audit.engine.tree_grid).

What is checked: every scale's result is, bit for bit, the result of
``audit_tree_nodes`` at that scale with the same seed (the grid only shares the
draws); the parts' counts do not depend on the order or process in which they run;
bad grids are refused naming the parameter; and the Fed_UCB attachment reports, for
every grid row, the single audit at the row's scale with its group's seed.
"""

from __future__ import annotations

import numpy as np
import pytest
from fedpriv.audit.engine.neighbors import worst_case_reward_pair
from fedpriv.audit.engine.tree_grid import (
    audit_tree_nodes_grid,
    grid_parts,
    grid_results,
    part_counts,
)
from fedpriv.audit.engine.tree_nodes import audit_tree_nodes
from hypothesis import given, settings
from hypothesis import strategies as st

__all__: list[str] = []


@settings(max_examples=25, deadline=None)
@given(
    horizon=st.sampled_from([2, 5, 16, 37]),
    final=st.booleans(),
    scales=st.lists(st.sampled_from([0.3, 0.8, 1.0, 2.0, 3.5, 10.0, 20.0]), min_size=1, max_size=4),
    seed=st.integers(0, 2**32 - 1),
    n_samples=st.integers(1, 20_000),
    product_samples=st.integers(1, 9_000),
    batch_size=st.sampled_from([777, 9_000, 1 << 18]),
)
def test_each_scale_is_the_single_audit_bit_for_bit(
    horizon, final, scales, seed, n_samples, product_samples, batch_size
):
    # Batches of 9 000 runs span two scoring blocks of 8 192, so both loops are crossed.
    pair = worst_case_reward_pair(horizon)
    released = horizon if final or horizon == 1 else horizon - 1
    claimed = [1.0 + i for i in range(len(scales))]
    grid = audit_tree_nodes_grid(
        pair,
        scales=scales,
        claimed_epsilons=claimed,
        n_samples=n_samples,
        product_samples=product_samples,
        seed=seed,
        released_prefixes=released,
        batch_size=batch_size,
    )
    for scale, eps, result in zip(scales, claimed, grid):
        single = audit_tree_nodes(
            pair,
            scale=scale,
            claimed_epsilon=eps,
            n_samples=n_samples,
            product_samples=product_samples,
            seed=seed,
            released_prefixes=released,
            batch_size=batch_size,
        )
        assert result.bound == single.bound
        assert result.method == single.method
        assert result.accountant_epsilon == single.accountant_epsilon
        assert (result.n_nodes, result.scale, result.claimed_epsilon) == (
            single.n_nodes,
            single.scale,
            single.claimed_epsilon,
        )


def test_parts_are_independent_of_their_order_and_process():
    from concurrent.futures import ProcessPoolExecutor

    pair = worst_case_reward_pair(16)
    kwargs = {"scales": [4.0, 2.0, 4.0], "n_samples": 30_000, "seed": 3, "released_prefixes": 15}
    parts = grid_parts(pair, product_samples=20_000, **kwargs)
    assert [(p["stage"], p["world"]) for p in parts] == [
        ("joint", 0),
        ("joint", 1),
        ("product", 0),
        ("product", 1),
    ]
    serial = [part_counts(p) for p in parts]
    with ProcessPoolExecutor(max_workers=2) as pool:
        pooled = list(pool.map(part_counts, parts[::-1]))[::-1]
    for a, b in zip(serial, pooled):
        assert a.keys() == b.keys()
        for key in a.keys() - {"seconds"}:
            np.testing.assert_array_equal(a[key], b[key])
    results = grid_results(
        pair,
        parts,
        pooled,
        scales=kwargs["scales"],
        claimed_epsilons=[1.0, 2.0, 1.0],
        released_prefixes=15,
    )
    # A repeated scale is audited once and reported for each of its rows.
    assert results[0].bound == results[2].bound
    assert len(parts[0]["scales"]) == 2


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"scales": []}, "scales"),
        ({"scales": [1.0, -2.0]}, "scale"),
        ({"scales": [1.0, float("nan")]}, "scale"),
        ({"scales": [1.0], "n_samples": 0}, "n_samples"),
        ({"scales": [1.0], "confidence": 1.0}, "confidence"),
        ({"scales": [1.0], "released_prefixes": 17}, "released_prefixes"),
    ],
)
def test_bad_grids_are_refused_naming_the_parameter(kwargs, match):
    arguments = {"n_samples": 10, "seed": 0, **kwargs}
    with pytest.raises(ValueError, match=match):
        grid_parts(worst_case_reward_pair(16), **arguments)


def test_claimed_epsilons_need_one_per_scale():
    with pytest.raises(ValueError, match="claimed_epsilons"):
        audit_tree_nodes_grid(
            worst_case_reward_pair(4),
            scales=[1.0, 2.0],
            claimed_epsilons=[1.0],
            n_samples=10,
            seed=0,
        )


def test_attachment_rows_are_the_single_audits_with_their_groups_seed():
    from fedpriv.algorithms.seeding import child_seed
    from fedpriv.audit.families.gossip_fed_ucb.regret import (
        VerifyConfig,
        _audit_groups,
        _claim_grid,
        _tree_audits,
    )

    config = VerifyConfig(
        epsilons=(1.0, 2.0),
        horizons=(16,),
        audit_horizons=(16,),
        audit_samples=((16, 4_000),),
        audit_product_samples=((16, 3_000),),
        workers=1,
    )
    grid = _claim_grid(config)
    root = np.random.SeedSequence(11)
    audits = _tree_audits(config, grid, root, lambda line: None)
    groups = _audit_groups(config, grid)
    assert len(groups) == 2 and sorted(audits) == [item[0] for item in grid]
    for (horizon, released, n_joint, n_product), rows in groups.items():
        seed = child_seed(root, rows[0]["index"])
        for row in rows:
            single = audit_tree_nodes(
                worst_case_reward_pair(horizon),
                scale=row["scale"],
                claimed_epsilon=row["claimed_epsilon"],
                n_samples=n_joint,
                product_samples=n_product,
                seed=seed,
                released_prefixes=released,
            )
            assert audits[row["index"]][0] == single.bound


@pytest.mark.parametrize(
    "m", [1, 2, 5, 7, 8, 9, 10, 11, 15, 16, 17, 20, 24, 64, 127, 128, 129, 200]
)
def test_pairwise_sum_is_numpys_row_sum_bit_for_bit(m):
    # The grid sums each run's LLR terms column-wise; a NumPy that changed its row sum
    # would fail here first (and the bit-for-bit test above).
    from fedpriv.audit.engine.tree_grid import _row_sums

    rng = np.random.default_rng(m)
    rows = rng.standard_normal((3000, m)) * rng.choice([1e-9, 1.0, 1e9], size=(3000, m))
    rows[:5] = -0.0
    reference = rows.sum(axis=1)
    columns = np.ascontiguousarray(rows.T)
    ours = _row_sums(columns)
    np.testing.assert_array_equal(ours.view(np.int64), reference.view(np.int64))


_FINITE = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=300, deadline=None)
@given(
    scale=st.sampled_from([0.3, 0.6, 0.8, 1.0, 1.4, 2.0, 2.8, 3.5, 7.0, 10.0, 14.0, 20.0]),
    shift=st.integers(0, 40).map(float),
    limit=st.integers(0, 40).map(float),
    below=st.booleans(),
    draws=st.lists(st.floats(-60.0, 60.0), min_size=1, max_size=40),
)
def test_product_cut_decides_as_the_release_for_every_draw(scale, shift, limit, below, draws):
    from fedpriv.audit.engine.tree_grid import _product_cuts

    (cut,) = _product_cuts(np.array([shift]), np.array([limit]), np.array([below]), scale)
    # the draws, and the doubles at and around the cut, where a rounding would show
    near = [] if not np.isfinite(cut) else [abs(cut), -abs(cut)]
    near += [np.nextafter(x, d) for x in near for d in (-np.inf, np.inf)]
    n = np.array(draws + near, dtype=np.float64)
    y = np.multiply(n, scale) + shift  # the single audit's release, NumPy's arithmetic
    direct = y <= limit if below else y >= limit
    signed = n if below else -n
    assert np.array_equal(signed <= cut, direct)


@settings(max_examples=200, deadline=None)
@given(
    scale=st.sampled_from([0.6, 1.0, 2.8, 7.0, 20.0]),
    sums=st.lists(st.tuples(*(st.integers(0, 30).map(float),) * 3), min_size=1, max_size=24),
    seed=st.integers(0, 2**32 - 1),
    threshold=st.floats(-30.0, 30.0),
)
def test_folded_llr_is_the_estimators_llr(scale, sums, seed, threshold):
    from fedpriv.audit.engine.tree_grid import _joint_terms, _laplace_llr
    from fedpriv.audit.estimators import laplace_log_density_ratio

    released, a, b = (np.array(col) for col in zip(*sums))
    noise = np.random.default_rng(seed).laplace(0.0, 1.0, size=(a.size, 300))
    noise[:, :3] = 0.0  # exact zeros: terms of 0 are where the sign of zero may differ
    # runs in C-order rows, as the single audit's releases reach the estimator (its row
    # sums follow the memory order)
    y = np.multiply(np.ascontiguousarray(noise.T), scale) + released
    expected = laplace_log_density_ratio(a, b, scale)(y)
    got = _laplace_llr(noise, _joint_terms(released, a, b, scale), np.empty_like(noise))
    assert np.array_equal(got, expected)  # equal values; +0 == -0
    assert np.array_equal(got >= threshold, expected >= threshold)
