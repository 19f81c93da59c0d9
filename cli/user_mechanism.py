"""Loading a user's mechanism for ``fedpriv audit`` and naming its failures.

:func:`load_mechanism` imports ``MODULE:FUNCTION`` (a dotted name, searched from the
current folder first as ``python -m`` does, or a ``.py`` path);
:class:`CheckedMechanism` wraps the function so that an exception, a wrong shape or a
non-finite output is raised as :class:`UserCodeError` with the user's own traceback, and
prints the audit's progress on stderr. :mod:`fedpriv.cli.audit` runs both inside a
forked worker (:func:`fedpriv.audit.engine.isolation.run_isolated`).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # NumPy is imported when a mechanism is checked, so that
    import numpy as np  # `fedpriv audit --help` answers at once

__all__ = ["CheckedMechanism", "UserCodeError", "load_mechanism"]


class UserCodeError(Exception):
    """The user's module or function failed; the message names it and says how."""


def _import_target(module: str):
    """Import ``module`` (a dotted name or a ``.py`` path); UserCodeError on failure."""
    path = Path(module)
    try:
        if module.endswith(".py") or path.is_file():
            if not path.is_file():
                raise UserCodeError(f"no such file: {module!r}.")
            spec = importlib.util.spec_from_file_location(path.stem, path)
            loaded = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(loaded)
            return loaded
        if "" not in sys.path and str(Path.cwd()) not in sys.path:
            sys.path.insert(0, str(Path.cwd()))  # like `python -m`: the current folder
        return importlib.import_module(module)
    except UserCodeError:
        raise
    except ModuleNotFoundError as error:
        if error.name and module.split(".")[0] == error.name.split(".")[0]:
            raise UserCodeError(
                f"cannot import your module {module!r}: {error}. Put its folder on "
                "PYTHONPATH, run from that folder, or pass a path: path/to/file.py:FUNCTION."
            ) from error
        raise UserCodeError(
            f"your module {module!r} failed to import:\n" + _user_traceback(error)
        ) from error
    except (Exception, SystemExit) as error:
        raise UserCodeError(
            f"your module {module!r} failed to import:\n" + _user_traceback(error)
        ) from error


def _user_traceback(error: BaseException) -> str:
    """The traceback of ``error`` from the user's code on (this module's frames dropped)."""
    frames = [
        f
        for f in traceback.extract_tb(error.__traceback__)
        if f.filename != __file__ and not f.filename.startswith("<frozen")
    ]
    lines = traceback.format_list(frames)
    lines += traceback.format_exception_only(type(error), error)
    return "".join(lines).rstrip()


def load_mechanism(target: str):
    """The function named by ``MODULE:FUNCTION`` (or ``path/to/file.py:FUNCTION``).

    Parameters
    ----------
    target : str
        ``MODULE:FUNCTION`` or ``path/to/file.py:FUNCTION``.

    Returns
    -------
    callable

    Raises
    ------
    ValueError
        If ``target`` has no ``:`` separating the module and the function.
    UserCodeError
        If the module cannot be imported, raises while importing, or has no callable
        of that name.
    """
    module, sep, name = str(target).rpartition(":")
    if not sep or not module or not name:
        raise ValueError(
            f"`MODULE:FUNCTION` must name a module and a function, e.g. "
            f"mymodule:noisy_count or path/to/file.py:noisy_count; got {target!r}."
        )
    loaded = _import_target(module)
    function = getattr(loaded, name, None)
    if function is None:
        defined = sorted(
            k for k, v in vars(loaded).items() if callable(v) and not k.startswith("_")
        )
        raise UserCodeError(
            f"your module {module!r} has no function {name!r}; it defines: "
            f"{', '.join(defined) or 'no public callables'}."
        )
    if not callable(function):
        raise UserCodeError(f"{module}:{name} is a {type(function).__name__}, not a function.")
    return function


class CheckedMechanism:
    """The user's mechanism, with its failures named and its progress on stderr."""

    def __init__(self, function, target: str, *, total: int, pilot: int) -> None:
        self.function, self.target = function, target
        self.total, self.pilot, self.done = total, pilot, 0
        self.started = self.last = time.perf_counter()

    def __call__(self, dataset: Any, n_samples: int, rng: np.random.Generator) -> np.ndarray:
        try:
            outputs = self.function(dataset, n_samples, rng)
        except Exception as error:
            raise UserCodeError(
                f"your mechanism {self.target} raised when called as "
                f"{self.target.rpartition(':')[2]}(dataset, {n_samples}, rng):\n"
                + _user_traceback(error)
            ) from error
        outputs = self._check(outputs, n_samples)
        self.done += n_samples
        self._progress()
        return outputs

    def _check(self, outputs: Any, n_samples: int) -> np.ndarray:
        import numpy as np

        try:
            array = np.asarray(outputs, dtype=np.float64)
        except (TypeError, ValueError):
            raise UserCodeError(
                f"your mechanism {self.target} must return numbers (an array with "
                f"n_samples = {n_samples} rows); got {type(outputs).__name__}."
            ) from None
        if array.ndim == 0 or array.shape[0] != n_samples:
            raise UserCodeError(
                f"your mechanism {self.target} must return an array with n_samples = "
                f"{n_samples} rows (shape ({n_samples},) or ({n_samples}, ...)); got shape "
                f"{array.shape}. The contract is mechanism(dataset, n_samples, rng)."
            )
        if not np.all(np.isfinite(array)):
            raise UserCodeError(
                f"your mechanism {self.target} returned NaN or infinite "
                "values; an audit needs finite outputs."
            )
        return array

    def _progress(self) -> None:
        now = time.perf_counter()
        if now - self.last < 0.5 and self.done < self.total:
            return
        self.last = now
        stage = "pilot" if self.done <= 2 * self.pilot else "confirmation"
        print(
            f"[{now - self.started:6.1f}s] {self.done:,}/{self.total:,} samples "
            f"({self.done / self.total:.0%}, {stage})",
            file=sys.stderr,
            flush=True,
        )
