"""Key labels keep their identity, and equal labels name one cell (issue 38, item 1).

``spend(..., key={"agent": ["x", 2]})`` used to store ``['x', '2']`` (one NumPy
string array), so agent ``2`` of an earlier ``spend`` and ``'2'`` were two parallel
cells and every number under-reported. The rule these tests pin: a label keeps its
type and value from the call to the store and back, whatever the other labels in its
list; two labels name the same cell iff they are equal as Python dict keys (``True``,
``1`` and ``1.0`` are one label, ``'1'`` another), with every missing label (None,
NaN) one label. The reference is an accountant charged one label at a time, and an
independent count of releases per label in a Python dict.
"""

from __future__ import annotations

import itertools
import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from fedpriv.privacy import Accountant, PureDP
from fedpriv.privacy.accounting import events
from fedpriv.privacy.errors import BudgetExceededError
from hypothesis import given, settings
from hypothesis import strategies as st

LAPLACE = events.Laplace(scale=1.0)  # ε = 1 per release, exactly

#: One label of every scalar type a key accepts, with values that collide across
#: types (2 == 2.0 == np.int64(2), True == 1 == 1.0, None ~ NaN) and ones that must
#: not ('2' != 2, '1' != True).
POOL = (
    True,
    False,
    np.bool_(True),
    0,
    1,
    2,
    -1,
    2**70,
    np.int64(2),
    np.uint8(1),
    0.0,
    -0.0,
    1.0,
    2.0,
    2.5,
    math.nan,
    np.float64(2.5),
    None,
    "x",
    "1",
    "2",
    "",
    np.str_("x"),
)
#: One representative per scalar type, for the every-type-with-every-other matrix.
BY_TYPE = {
    "bool": True,
    "int": 2,
    "float": 2.5,
    "str": "x",
    "none": None,
    "numpy_int": np.int64(1),
    "numpy_float": np.float64(2.0),
    "numpy_bool": np.bool_(False),
    "numpy_str": np.str_("2"),
}


def _cell_of(label):
    """The cell a label names, computed without the accountant: a dict key with every
    missing label one key."""
    if label is None or (isinstance(label, (float, np.floating)) and math.isnan(label)):
        return ("missing",)
    if isinstance(label, np.generic):
        label = label.item()
    return label


def _reference_epsilon(batches) -> float:
    counts: dict = {}
    for batch in batches:
        for label in batch:
            counts[_cell_of(label)] = counts.get(_cell_of(label), 0) + 1
    return float(max(counts.values(), default=0))


def _python_type(label) -> type:
    return type(label.item()) if isinstance(label, np.generic) else type(label)


def _answers(accountant: Accountant) -> tuple:
    return (
        accountant.get_epsilon(0.0),
        accountant.get_epsilon(1e-6),
        accountant.get_delta(1.5),
        sorted(len(cell) and cell[0][1] for cell in accountant.ledger.cells()),
    )


def _check(batches, store: Path | None) -> None:
    """Charge ``batches`` with key arrays (and with a store, reopen), against one
    label at a time and the Python-dict count."""
    one_at_a_time = Accountant(disjoint=("agent",))
    for batch in batches:
        for label in batch:
            one_at_a_time.spend(LAPLACE, key={"agent": label})
    options = {"store": store, "store_synchronous": "normal"} if store else {}
    accountant = Accountant(disjoint=("agent",), **options)
    for batch in batches:
        accountant.spend(LAPLACE, key={"agent": list(batch)})
    expected = _answers(one_at_a_time)
    assert expected[0] == _reference_epsilon(batches)
    assert _answers(accountant) == expected
    # identity: each label comes back with its (Python) type and value
    labels = [label for batch in batches for label in batch]
    kept = accountant.ledger.charges["agent"].tolist()
    assert [_python_type(x) for x in kept] == [_python_type(x) for x in labels]
    assert [_cell_of(x) for x in kept] == [_cell_of(x) for x in labels]
    if store is not None:
        accountant.store.close()
        reopened = Accountant.open(store)
        assert _answers(reopened) == expected
        kept = reopened.ledger.charges["agent"].tolist()
        assert [_python_type(x) for x in kept] == [_python_type(x) for x in labels]
        assert [_cell_of(x) for x in kept] == [_cell_of(x) for x in labels]
        reopened.store.close()


def test_the_issue_example_is_refused_by_the_budget() -> None:
    accountant = Accountant(disjoint=("agent",), budget=PureDP(1.5))
    accountant.spend(LAPLACE, key={"agent": 2})
    with pytest.raises(BudgetExceededError):  # agent 2 would hold two Laplace(1)
        accountant.spend(LAPLACE, key={"agent": ["x", 2]})
    unbudgeted = Accountant(disjoint=("agent",))
    unbudgeted.spend(LAPLACE, key={"agent": 2})
    unbudgeted.spend(LAPLACE, key={"agent": ["x", 2]})
    assert unbudgeted.get_epsilon(0.0) == 2.0  # was 1.0
    assert unbudgeted.get_delta(1.5) > 0.12  # was 0.0 (true ≈ 0.124)


@pytest.mark.parametrize("first, second", list(itertools.permutations(BY_TYPE, 2)))
@pytest.mark.parametrize("stored", [False, True], ids=["memory", "store"])
def test_every_label_type_mixed_with_every_other(first, second, stored, tmp_path) -> None:
    a, b = BY_TYPE[first], BY_TYPE[second]
    # the mixed list, and each label again on its own (same cell as in the list)
    batches = [[a, b], [a], [b], [b, a, a]]
    _check(batches, tmp_path / "ledger.sqlite" if stored else None)


@settings(max_examples=40)
@given(
    batches=st.lists(st.lists(st.sampled_from(POOL), min_size=1, max_size=6), max_size=4),
    stored=st.booleans(),
)
def test_mixed_labels_compose_as_one_label_at_a_time(batches, stored) -> None:
    with tempfile.TemporaryDirectory() as folder:
        _check(batches, Path(folder) / "ledger.sqlite" if stored else None)


@settings(max_examples=30)
@given(
    batches=st.lists(st.lists(st.sampled_from(POOL), min_size=1, max_size=5), max_size=4),
    budget=st.integers(min_value=1, max_value=4),
)
def test_a_budget_sees_mixed_labels_as_the_reference_does(batches, budget) -> None:
    accountant = Accountant(disjoint=("agent",), budget=PureDP(float(budget)))
    accepted = []
    for batch in batches:
        try:
            accountant.spend(LAPLACE, key={"agent": list(batch)})
        except BudgetExceededError:
            assert _reference_epsilon([*accepted, batch]) > budget
            continue
        accepted.append(batch)
        assert _reference_epsilon(accepted) <= budget
    assert accountant.get_epsilon(0.0) == _reference_epsilon(accepted)


def test_lists_of_one_kind_keep_their_dtype() -> None:
    accountant = Accountant(disjoint=("agent",))
    accountant.spend(LAPLACE, key={"agent": [1, 2, 3]})
    accountant.spend(LAPLACE, key={"agent": ["a", "b"]})
    accountant.spend(LAPLACE, key={"agent": np.array([1.5, 2.5])})
    kinds = [arrays["agent"].dtype.kind for _, arrays in accountant.ledger.rows()]
    assert kinds == ["i", "U", "f"]
