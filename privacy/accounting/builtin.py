"""fedpriv's own event types, every one registered: the one list of them.

An event type registers its pricing handlers in the module that defines it
(:func:`fedpriv.privacy.accounting.handlers.register_event`): the types of
:mod:`~fedpriv.privacy.accounting.events` in :mod:`~fedpriv.privacy.accounting.handlers`,
the others in their own modules. Holding an event therefore means its type is
registered. What starts from a *name* instead (the ledger codec decoding a stored
event, :mod:`fedpriv.privacy.ledger.codec`) imports this module, which imports every
module that defines one of fedpriv's event types, so each stored built-in type
resolves whatever the process imported before. Nothing in
:mod:`fedpriv.privacy.accounting` imports this module: it sits above every event
module, so no import chain returns to it.

Examples
--------
>>> from fedpriv.privacy.accounting.handlers import REGISTRY
>>> all(event_type in REGISTRY for event_type in BUILTIN_EVENT_TYPES)
True
"""

from __future__ import annotations

from fedpriv.privacy.accounting import events
from fedpriv.privacy.accounting.binomial_sum import BinomialVectorSum, BinomialVectorSumTree
from fedpriv.privacy.accounting.interval import IntervalRelease
from fedpriv.privacy.accounting.matrix_tree import SymmetricMatrixGaussianTree
from fedpriv.privacy.accounting.sampling import PoissonSampled
from fedpriv.privacy.accounting.shuffling import Shuffled

__all__ = ["BUILTIN_EVENT_TYPES"]

#: Every event type fedpriv defines and registers (a user's own are added to the
#: handler table by :func:`~fedpriv.privacy.accounting.handlers.register_event`).
BUILTIN_EVENT_TYPES: tuple[type, ...] = (
    events.Laplace,
    events.LaplaceTree,
    events.NonPrivate,
    events.Gaussian,
    events.SymmetricMatrixGaussian,
    events.GaussianTree,
    events.DiscreteLaplace,
    events.DiscreteGaussian,
    events.SymmetricMatrixDiscreteGaussian,
    events.RandomizedResponse,
    events.OpaqueApproxDP,
    events.SelfComposed,
    events.Composed,
    PoissonSampled,
    Shuffled,
    IntervalRelease,
    SymmetricMatrixGaussianTree,
    BinomialVectorSum,
    BinomialVectorSumTree,
)
