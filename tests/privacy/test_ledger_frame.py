"""``Accountant.ledger.draws`` joins runs of same-shaped draw blocks with numpy, then concats the
runs: the same frame, values and dtypes, as one DataFrame per block concatenated (the
implementation it replaced, kept here as the oracle)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from fedpriv.privacy import Accountant
from hypothesis import given, settings
from hypothesis import strategies as st

COLUMNS = ["agent", "trial", "node", "level", "scale", "l1_sensitivity", "epsilon"]


def _per_block_ledger(accountant: Accountant) -> pd.DataFrame:
    """The ledger as built before: one DataFrame per recorded block, then pd.concat."""
    frame = pd.concat(
        [
            pd.DataFrame(
                {k: (np.full(v[1], v[0]) if isinstance(v, tuple) else v) for k, v in b.items()}
            )
            for b in accountant._rows.draws
        ],
        ignore_index=True,
    )
    frame["epsilon"] = frame["l1_sensitivity"] / frame["scale"]
    return frame.reindex(columns=COLUMNS)


_LABELS = st.one_of(
    st.integers(-3, 3),
    st.sampled_from(["a", "bb", "ccc"]),
    st.lists(st.integers(0, 9), min_size=1, max_size=4),
)
_BLOCK = st.fixed_dictionaries(
    {
        "agent": _LABELS,
        "trial": st.one_of(st.none(), _LABELS),
        "node": st.integers(0, 5),
        "scale": st.sampled_from([0.5, 1.0, 3.0]),
        "repeat": st.integers(1, 3),
    }
)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(_BLOCK, min_size=1, max_size=8))
def test_ledger_equals_one_frame_per_block_concatenated(blocks) -> None:
    accountant = Accountant(sequential=("agent", "trial"))
    for block in blocks:
        keys = {"agent": block["agent"]}
        if block["trial"] is not None:
            keys["trial"] = block["trial"]
        n = max(len(v) if isinstance(v, list) else 1 for v in keys.values())
        keys = {
            k: (v if not isinstance(v, list) or len(v) == n else v[:1]) for k, v in keys.items()
        }
        for _ in range(block["repeat"]):  # runs of equal blocks, joined by numpy
            accountant.ledger.record_draws(
                keys=keys, node=block["node"], level=0, scale=block["scale"], l1_sensitivity=1.0
            )
    pd.testing.assert_frame_equal(
        accountant.ledger.draws, _per_block_ledger(accountant), check_exact=True
    )


def test_a_long_ledger_keeps_row_order_and_dtypes() -> None:
    accountant = Accountant(sequential=("agent", "trial"))
    for t in range(300):
        accountant.ledger.record_draws(
            keys={"agent": np.arange(3), "trial": t},
            node=t,
            level=t % 4,
            scale=2.0,
            l1_sensitivity=1.0,
        )
    accountant.ledger.record_draws(
        keys={"agent": "server"}, node=0, level=0, scale=1.0, l1_sensitivity=1.0
    )
    ledger = accountant.ledger.draws
    pd.testing.assert_frame_equal(ledger, _per_block_ledger(accountant), check_exact=True)
    assert len(ledger) == 901 and ledger["node"].tolist()[:6] == [0, 0, 0, 1, 1, 1]
    assert ledger["trial"].isna().tolist()[-1] and ledger["agent"].tolist()[-1] == "server"
