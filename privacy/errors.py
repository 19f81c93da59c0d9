"""Exception hierarchy of fedpriv.

Every error the toolkit raises on purpose derives from :class:`ToolkitError`, so a
caller can catch the whole family. Bad *values* still raise :class:`ValueError`
(or a subclass of it) and bad *types* :class:`TypeError`, so ordinary Python
handling keeps working. Modelled on ``networkx/exception.py``.
"""

from __future__ import annotations

__all__ = [
    "BudgetExceededError",
    "CapacityExceededError",
    "DataFormatError",
    "IncompatibleGuaranteeError",
    "LedgerCorruptedError",
    "MechanismError",
    "PrivacyViolationError",
    "ResourceLimitError",
    "StoreError",
    "StoreFormatError",
    "StoreMismatchError",
    "StorePathError",
    "ToolkitError",
    "UnsupportedEventError",
]


class ToolkitError(Exception):
    """Base class of every error fedpriv raises on purpose."""


class UnsupportedEventError(ToolkitError, ValueError):
    """An accountant was given an event (or relation) it cannot account for."""


class IncompatibleGuaranteeError(ToolkitError, TypeError):
    """Two guarantees of different types were mixed without an explicit conversion."""


class BudgetExceededError(ToolkitError):
    """A release would exceed the accountant's budget; nothing was released."""


class CapacityExceededError(ToolkitError, ValueError):
    """A continual counter was asked for more steps than its declared capacity."""


class ResourceLimitError(ToolkitError, ValueError):
    """A request is beyond a documented resource ceiling (releases, samples, memory).

    Raised before anything is allocated or charged; the message names the parameter,
    the ceiling and the value.
    """


class PrivacyViolationError(ToolkitError, AssertionError):
    """An audit found statistical evidence that a privacy claim is false."""


class DataFormatError(ToolkitError, ValueError):
    """A data file does not have the expected schema or values."""


class MechanismError(ToolkitError, ValueError):
    """A mechanism under audit raised, or returned an output the audit cannot use.

    The message names the mechanism, the world (D or D') and what was wrong; the
    mechanism's own exception, if any, is chained as ``__cause__``.
    """


class StoreError(ToolkitError):
    """A persistent ledger store (:mod:`fedpriv.privacy.ledger.store`) cannot be used."""


class StoreFormatError(StoreError, DataFormatError):
    """A file is not a ledger store this fedpriv can read (damaged, foreign, newer)."""


class StoreMismatchError(StoreError, ValueError):
    """A ledger store was opened with another relation, key levels or budget."""


class LedgerCorruptedError(StoreFormatError):
    """A ledger store fails its integrity checks: a broken hash chain, a missing event
    row, a cell count that disagrees with its keys, removed rows or a foreign WAL.
    The message names the first bad row."""


class StorePathError(StoreError, ValueError):
    """``store`` is not a usable file path (empty, a directory, a missing folder)."""
