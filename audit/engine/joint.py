"""Statistics of the whole view for the end-to-end audit: linear ones and a learned one.

The end-to-end audit (:func:`fedpriv.audit.engine.coupled.search_and_confirm`) bounds ε
with one distinguishing event chosen on a pilot sample and confirmed on fresh runs. An
event on one column of a transcript misses a leak spread over several messages (a
cumulative sum re-released every epoch, one noise draw re-sent in every message, a
difference between messages). This module gives the search two further kinds of
candidate columns, each a fixed function of one run's observations:

- **linear statistics** (:func:`linear_statistics`): the sum of all columns, every
  consecutive difference, last minus first and, when a run returns several messages
  each of several values (``(n, n_messages, size)``), each message's sum and Euclidean
  norm;
- **a learned distinguisher** (:func:`fit_distinguisher`), as in DP-Sniper (Bichsel,
  Steffen, Bogunovic and Vechev, IEEE S&P 2021, Sec. IV): a logistic regression
  (scikit-learn) trained to tell world D from world D' on a *training* split of both
  worlds' runs, drawn apart from the pilot. Its score is one more column; the pilot (the
  second split) chooses its threshold among every other candidate's, and the fresh
  confirming runs (the third split) are scored with the frozen model.

Soundness. The confirmed bound holds at the stated confidence for any event fixed
before the confirming runs are drawn (:func:`fedpriv.audit.estimators.estimate_epsilon_lower_bound`).
The training split and the pilot are drawn at their own seed addresses, the model and
the threshold depend on them alone, and confirmation tests exactly one event (two
directions), so adding candidates never changes the confirmation's level: it can only
change which event is confirmed.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

__all__ = ["JointColumns", "fit_distinguisher", "flatten_runs", "linear_statistics"]

#: Columns above which consecutive differences are not formed (their count would double
#: the search's candidates for a long transcript).
MAX_DIFFERENCE_COLUMNS = 256

#: Features are clipped to this magnitude before the classifier sees them (a run may
#: return ±inf or NaN, e.g. an empty message; the map stays fixed).
_FEATURE_CLIP = 1e12


def flatten_runs(observed: np.ndarray) -> np.ndarray:
    """Every run's whole view as one row of float64 columns.

    Parameters
    ----------
    observed : array_like, shape (n,) or (n, ...)
        One entry (scalar or array) per run.

    Returns
    -------
    ndarray of float64, shape (n, n_columns)
        A 1-D input becomes one column; any other is reshaped to ``(n, -1)``.
    """
    observed = np.asarray(observed, dtype=np.float64)
    return observed[:, None] if observed.ndim == 1 else observed.reshape(len(observed), -1)


def linear_statistics(observed: np.ndarray) -> tuple[np.ndarray, tuple[str, ...]]:
    """Linear (and per-message norm) statistics of every run's whole view.

    Parameters
    ----------
    observed : ndarray of float64, shape (n, n_columns) or (n, n_messages, size)
        One row per run, as a sampler returns it. A 3-D array is read as
        ``n_messages`` messages of ``size`` values each.

    Returns
    -------
    columns : ndarray of float64, shape (n, n_statistics)
        With ``c`` flattened columns, ``c >= 2``: the sum of all columns, the ``c - 1``
        consecutive differences ``x[j+1] - x[j]`` (only for ``c <=``
        :data:`MAX_DIFFERENCE_COLUMNS`) and ``x[c-1] - x[0]``; for 3-D input with
        ``size >= 2`` also each message's sum and Euclidean norm. ``(n, 0)`` when
        ``c < 2``.
    names : tuple of str, length n_statistics
        Readable names, with ``observable[j]`` for column ``j``.

    Examples
    --------
    >>> cols, names = linear_statistics(np.array([[1.0, 3.0, 6.0]]))
    >>> cols.tolist(), names
    ([[10.0, 2.0, 3.0, 5.0]], ('sum of observable', 'observable[1] - observable[0]', \
'observable[2] - observable[1]', 'observable[2] - observable[0]'))
    """
    raw = np.asarray(observed, dtype=np.float64)
    flat = flatten_runs(raw)
    n, c = flat.shape
    if c < 2:
        return np.empty((n, 0)), ()
    parts = [flat.sum(axis=1, keepdims=True)]
    names = ["sum of observable"]
    if c <= MAX_DIFFERENCE_COLUMNS:
        parts.append(np.diff(flat, axis=1))
        names += [f"observable[{j + 1}] - observable[{j}]" for j in range(c - 1)]
    parts.append(flat[:, -1:] - flat[:, :1])
    names.append(f"observable[{c - 1}] - observable[0]")
    if raw.ndim == 3 and raw.shape[2] >= 2:
        parts += [raw.sum(axis=2), np.sqrt(np.square(raw).sum(axis=2))]
        names += [f"sum of message {m}" for m in range(raw.shape[1])]
        names += [f"norm of message {m}" for m in range(raw.shape[1])]
    with np.errstate(invalid="ignore"):
        return np.concatenate(parts, axis=1), tuple(names)


class JointColumns:
    """The augmented columns of one neighbouring pair's runs (a fixed map, once fitted).

    ``columns(observed)`` is the flattened view, then :func:`linear_statistics`, then
    (when a distinguisher was fitted) its score. The map is fixed once constructed, so
    the pilot and the confirming runs are read by the same function.

    Parameters
    ----------
    distinguisher : callable or None
        ``features (n, f) -> scores (n,)`` from :func:`fit_distinguisher`, or None.
    linear : bool
        Whether to add :func:`linear_statistics`.
    """

    def __init__(self, distinguisher: Any = None, *, linear: bool = True) -> None:
        self.distinguisher = distinguisher
        self.linear = linear

    def features(self, observed: np.ndarray) -> np.ndarray:
        """Flattened view and linear statistics: the distinguisher's features.

        Parameters
        ----------
        observed : ndarray of float64, shape (n, ...)
            Runs as a sampler returns them.

        Returns
        -------
        ndarray of float64, shape (n, n_features)
        """
        flat = flatten_runs(observed)
        if not self.linear:
            return flat
        return np.concatenate([flat, linear_statistics(observed)[0]], axis=1)

    def columns(self, observed: np.ndarray) -> np.ndarray:
        """The search's columns: :meth:`features`, then the distinguisher's score.

        Parameters
        ----------
        observed : ndarray of float64, shape (n, ...)
            Runs as a sampler returns them.

        Returns
        -------
        ndarray of float64, shape (n, n_columns)
        """
        features = self.features(observed)
        if self.distinguisher is None:
            return features
        return np.concatenate([features, self.distinguisher(features)[:, None]], axis=1)

    def names(self, observed: np.ndarray, base: tuple[str, ...] | None) -> tuple[str, ...]:
        """Names of :meth:`columns`.

        Parameters
        ----------
        observed : ndarray of float64, shape (n, ...)
            At least one run (its shape sets the columns).
        base : tuple of str or None
            Names of the view's own columns (``observable[j]`` where missing).

        Returns
        -------
        tuple of str
            One name per column of :meth:`columns`.
        """
        flat = flatten_runs(observed)
        own = tuple(base or ())
        own = own[: flat.shape[1]] + tuple(
            f"observable[{j}]" for j in range(len(own), flat.shape[1])
        )
        names = own
        if self.linear:
            stat_names = linear_statistics(observed[:1])[1]
            if base:
                for j in range(len(own) - 1, -1, -1):  # longest index first: [12] before [1]
                    stat_names = tuple(s.replace(f"observable[{j}]", own[j]) for s in stat_names)
            names += stat_names
        if self.distinguisher is not None:
            names += ("learned distinguisher score",)
        return names


def _clean(features: np.ndarray) -> np.ndarray:
    return np.clip(
        np.nan_to_num(features, nan=0.0, posinf=_FEATURE_CLIP, neginf=-_FEATURE_CLIP),
        -_FEATURE_CLIP,
        _FEATURE_CLIP,
    )


def fit_distinguisher(features_d: np.ndarray, features_d_prime: np.ndarray) -> Any:
    """Train a logistic regression telling world D' from world D (DP-Sniper's classifier).

    Standardized features (``StandardScaler``), L2-regularized logistic regression
    (``LogisticRegression(C=1.0, solver="liblinear", random_state=0)``: deterministic
    for given data), both from scikit-learn. The returned score is the model's log-odds of D', a fixed function
    of one run's features: the audit thresholds it on the pilot and confirms on fresh
    runs, never on the runs it was trained on.

    Parameters
    ----------
    features_d, features_d_prime : ndarray of float64, shape (n, f) and (n', f)
        Training runs of world D and of world D'. Non-finite entries are mapped to 0
        (NaN) or ±10¹² (the same map is applied when scoring).

    Returns
    -------
    callable
        ``score(features (m, f)) -> ndarray of float64, shape (m,)``.

    Raises
    ------
    ValueError
        If the two arrays have different numbers of columns or either is empty.

    References
    ----------
    .. [1] Bichsel, Steffen, Bogunovic and Vechev, "DP-Sniper: Black-Box Discovery of
       Differential Privacy Violations using Classifiers", IEEE S&P 2021, Sec. IV
       (a classifier trained on both outputs' samples; its threshold chosen on a
       second sample, Alg. 1; the power estimated on a third).
    """
    features_d = np.asarray(features_d, dtype=np.float64)
    features_d_prime = np.asarray(features_d_prime, dtype=np.float64)
    if features_d.ndim != 2 or features_d.shape[1:] != features_d_prime.shape[1:]:
        raise ValueError(
            "`features_d` and `features_d_prime` must be 2-D with the same number of "
            f"columns, got shapes {features_d.shape} and {features_d_prime.shape}."
        )
    if len(features_d) == 0 or len(features_d_prime) == 0:
        raise ValueError("`features_d` and `features_d_prime` must hold at least one run each.")
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x = _clean(np.concatenate([features_d, features_d_prime], axis=0))
    y = np.concatenate([np.zeros(len(features_d)), np.ones(len(features_d_prime))])
    # liblinear: 10x faster than lbfgs on these small problems; random_state fixes its
    # coordinate order, so the fit is a function of the training runs alone.
    model = make_pipeline(
        StandardScaler(),
        LogisticRegression(C=1.0, solver="liblinear", max_iter=1000, random_state=0),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(x, y)

    def score(features: np.ndarray) -> np.ndarray:
        return np.asarray(model.decision_function(_clean(features)), dtype=np.float64)

    return score
