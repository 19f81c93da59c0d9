"""FedUCB's Privatizer tree as a frozen event (Dubey & Pentland 2020, Alg. 2), and its cost.

:class:`SymmetricMatrixGaussianTree` describes one stream of the binary-tree
aggregator over symmetric matrices that
:class:`fedpriv.privacy.mechanisms.matrix_tree.MatrixTreePrivatizer` runs: a record
lies in one leaf and in at most ``depth`` released nodes, each a symmetrised Gaussian
release (:class:`fedpriv.privacy.accounting.events.SymmetricMatrixGaussian`), so the
tree is exactly ``μ``-GDP with ``μ = √depth ‖D‖_F / (√2 σ)`` (Dong, Roth & Su 2019,
Cor. 3.3) and the accountant's ``gdp`` and ``pld`` routes are exact for it.

Importing this module registers the event's handler
(:func:`fedpriv.privacy.accounting.handlers.register_event`), so the event can never
exist in a process where it cannot be priced.
"""

from __future__ import annotations

import dataclasses
import math

from fedpriv.privacy.accounting.events import MAX_GAUSSIAN_MU, check_privacy_loss
from fedpriv.privacy.accounting.handlers import EventHandlers, register_event
from fedpriv.privacy.accounting.tree import tree_depth
from fedpriv.privacy.checks import check_int_at_least, check_positive

__all__ = ["SymmetricMatrixGaussianTree", "matrix_tree_gdp"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SymmetricMatrixGaussianTree:
    """A binary tree over one stream of symmetric matrices, symmetrised Gaussian nodes.

    Parameters
    ----------
    noise_stddev : float
        σ of the unsymmetrised node entries ``N̂_ij`` (FedUCB's σ_N), > 0.
    dim : int
        Side of the matrices (``d + 1``), >= 1; descriptive only.
    frobenius_sensitivity : float
        Largest ``‖D‖_F`` by which one record moves a node, > 0 (``√2 (L² + B²)``
        for substitution of one ``(x, y)`` pair, ``L² + B²`` for add/remove).
    capacity : int
        Number of leaves the tree can hold (``2**(m-1)`` for depth ``m``), >= 1.
        One record is in at most ``tree_depth(capacity) = floor(log2 capacity) + 1``
        released nodes.

    Notes
    -----
    Exactly ``μ``-GDP with ``μ = √depth · frobenius_sensitivity / (√2 noise_stddev)``:
    ``depth`` independent :class:`fedpriv.privacy.accounting.events.SymmetricMatrixGaussian` releases
    (see its derivation), composed by Dong, Roth & Su 2019, Cor. 3.3.
    """

    noise_stddev: float
    dim: int
    frobenius_sensitivity: float
    capacity: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise_stddev", check_positive("noise_stddev", self.noise_stddev))
        object.__setattr__(self, "dim", check_int_at_least("dim", self.dim, 1))
        object.__setattr__(
            self,
            "frobenius_sensitivity",
            check_positive("frobenius_sensitivity", self.frobenius_sensitivity),
        )
        object.__setattr__(self, "capacity", check_int_at_least("capacity", self.capacity, 1))
        check_privacy_loss(
            "frobenius_sensitivity",
            self.frobenius_sensitivity,
            "noise_stddev",
            self.noise_stddev,
            MAX_GAUSSIAN_MU,
        )

    @property
    def depth(self) -> int:
        """Largest number of released nodes holding one record."""
        return tree_depth(self.capacity)


def matrix_tree_gdp(event: SymmetricMatrixGaussianTree) -> float:
    """μ of Gaussian DP of the whole tree: ``√depth ‖D‖_F / (√2 σ)``.

    Parameters
    ----------
    event : SymmetricMatrixGaussianTree
        The tree's noise stddev σ, Frobenius sensitivity ‖D‖_F and capacity.

    Returns
    -------
    float
        μ >= 0 (Dong, Roth & Su, arXiv:1905.02383: the depth Gaussian releases of one
        record compose to μ = √(Σ μ_i²)).

    Examples
    --------
    >>> event = SymmetricMatrixGaussianTree(noise_stddev=2.0, dim=3,
    ...                                     frobenius_sensitivity=2.0 ** 0.5, capacity=8)
    >>> matrix_tree_gdp(event)
    1.0
    """
    return (
        math.sqrt(event.depth) * event.frobenius_sensitivity / (math.sqrt(2.0) * event.noise_stddev)
    )


def _gdp_handler(event: SymmetricMatrixGaussianTree) -> float:
    """Positional adapter of :func:`matrix_tree_gdp` for the handler table."""
    return matrix_tree_gdp(event)


register_event(SymmetricMatrixGaussianTree, EventHandlers(gdp=_gdp_handler))
