"""Helpers shared by the privacy tests: snapshot an accountant, check it is unchanged."""

from __future__ import annotations

import pandas as pd
from fedpriv.privacy import Accountant

__all__ = ["assert_unchanged", "snapshot"]


def snapshot(accountant: Accountant) -> tuple[pd.DataFrame, dict, pd.DataFrame, int]:
    """Everything a failed charge must leave as it was: charges, routes, ledger, draws."""
    return (
        accountant.ledger.charges.copy(),
        accountant.routes.epsilons(0.0),
        accountant.ledger.draws.copy(),
        accountant.ledger.n_draws,
    )


def assert_unchanged(accountant: Accountant, before: tuple) -> None:
    """Assert that ``accountant`` still matches the ``snapshot`` taken before."""
    charges, routes, ledger, n_draws = before
    pd.testing.assert_frame_equal(accountant.ledger.charges, charges)
    assert accountant.routes.epsilons(0.0) == routes
    pd.testing.assert_frame_equal(accountant.ledger.draws, ledger)
    assert accountant.ledger.n_draws == n_draws
