"""Run a user's code so that its exit, its death or a hang is seen and reported.

A user's claims file, module or mechanism is arbitrary Python: it can call
``sys.exit(0)`` (which would end ``fedpriv verify`` or ``fedpriv audit`` with status 0
and nothing checked), ``os._exit(0)`` (which ends the process without running any
handler) or loop forever. :func:`run_isolated` runs one call in a forked worker
process, reads its pickled result through a pipe and waits at most ``timeout``
seconds; a ``SystemExit`` inside the worker, a worker that dies before sending its
result (``os._exit``, a signal, the out-of-memory killer) and a worker still running
at the deadline (then killed) all raise :class:`UserCodeAbortedError` naming the
code. An exception the call raises is re-raised in the caller unchanged (or, when it
cannot be pickled, as :class:`UserCodeAbortedError` with its text).

Cost: one ``fork`` per call (milliseconds; the worker shares the caller's imported
modules), so callers isolate one claim or one audit, never one sample. Where
``os.fork`` does not exist (Windows), the call runs in this process and only
``SystemExit`` is caught; ``os._exit`` and hangs are then not contained.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

from fedpriv.privacy.errors import ToolkitError

__all__ = ["DEFAULT_TIMEOUT", "UserCodeAbortedError", "check_timeout", "run_isolated"]

#: Seconds one claim of a user's claims file (``fedpriv verify --claims``) or one
#: ``fedpriv audit`` may run before it is stopped (``--timeout`` changes it).
DEFAULT_TIMEOUT = 3600.0


class UserCodeAbortedError(ToolkitError, RuntimeError):
    """A user's code exited, died or ran past its timeout; nothing it did is reported.

    Attributes
    ----------
    reason : str
        What happened, without the code's name (e.g. ``"called sys.exit(0)"``,
        ``"exited with status 0 (os._exit or a crash)"``, ``"ran past its timeout of
        60 s"``), for callers that phrase their own message; the message names the code.
    """

    reason: str = ""


def _aborted(what: str, reason: str, tail: str) -> UserCodeAbortedError:
    """The error ``f"{what} {reason}{tail}"`` carrying ``reason``."""
    error = UserCodeAbortedError(f"{what} {reason}{tail}")
    error.reason = reason  # in ``__dict__``: it survives pickling to another process
    return error


def check_timeout(timeout: float, name: str = "timeout") -> float:
    """``timeout`` as a float in (0, inf].

    Parameters
    ----------
    timeout : float
        Seconds; ``math.inf`` waits for ever.
    name : str
        The parameter's name for the message.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``timeout`` is not a real number.
    ValueError
        If ``timeout`` is NaN or not > 0.
    """
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"`{name}` must be a number of seconds, got {type(timeout).__name__}.")
    if not timeout > 0:  # NaN too
        raise ValueError(f"`{name}` must be a number of seconds in (0, inf], got {timeout!r}.")
    return float(timeout)


def _describe_status(status: int) -> str:
    """Words for a ``waitpid`` status."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return f"was killed by signal {signal.Signals(number).name}"
        except ValueError:
            return f"was killed by signal {number}"
    return f"exited with status {os.WEXITSTATUS(status)} (os._exit or a crash)"


def _child(write: int, function: Callable[..., Any], args: tuple) -> None:
    """Worker side: run ``function(*args)``, send its outcome, never return."""
    status = 0
    try:
        try:
            payload: tuple = ("ok", function(*args))
        except SystemExit as stop:
            payload = ("exit", repr(stop.code))
        except BaseException as error:  # sent back; the caller re-raises it
            payload = ("raise", error)
        try:
            data = pickle.dumps(payload)
        except Exception as error:  # an unpicklable result or exception
            kind = payload[0]
            text = (
                f"{type(payload[1]).__name__}: {payload[1]}"
                if kind == "raise"
                else f"its result cannot be sent back ({type(error).__name__}: {error})"
            )
            data = pickle.dumps(("text", text))
        with os.fdopen(write, "wb") as pipe:
            pipe.write(data)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
    except BaseException:
        status = 70
    finally:
        os._exit(status)


def run_isolated(
    function: Callable[..., Any],
    *args: Any,
    timeout: float,
    what: str,
    hint: str = "raise --timeout if it needs longer",
) -> Any:
    """``function(*args)`` in a forked worker; its exit, death or hang raises.

    Parameters
    ----------
    function : callable
        Runs in the worker; its result must be picklable.
    *args
        Its arguments (not pickled: the worker is a fork).
    timeout : float
        Seconds to wait, in (0, inf].
    what : str
        Names the user's code in messages, e.g. ``"claims file path/x.py"``.
    hint : str
        How to give it longer, said when it runs past ``timeout``.

    Returns
    -------
    object
        What ``function`` returned.

    Raises
    ------
    UserCodeAbortedError
        If the code called ``sys.exit`` (any status), the worker died before sending
        a result, or it ran past ``timeout`` (it is killed then).
    Exception
        What ``function`` raised, re-raised here.
    """
    timeout = check_timeout(timeout)
    if not hasattr(os, "fork"):  # pragma: no cover - Windows: SystemExit only
        try:
            return function(*args)
        except SystemExit as stop:
            raise _aborted(
                what, f"called sys.exit({stop.code!r})", "; nothing it computed is reported."
            ) from None
    for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
        try:
            stream.flush()
        except Exception:
            pass
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the worker (coverage does not follow forks)
        os.close(read)
        _child(write, function, args)
    os.close(write)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                pid = 0
                raise _aborted(
                    what,
                    f"ran past its timeout of {timeout:g} s",
                    f" and was stopped; nothing it computed is reported ({hint}).",
                )
            ready, _, _ = select.select([read], [], [], min(remaining, 3600.0))
            if ready:
                chunk = os.read(read, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
    except BaseException:
        if pid:  # interrupted (Ctrl-C) or timed out: the worker must not outlive us
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        raise
    finally:
        os.close(read)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        raise _aborted(
            what,
            _describe_status(status),
            " before reporting a result; nothing it computed is reported.",
        )
    kind, value = pickle.loads(b"".join(chunks))
    if kind == "ok":
        return value
    if kind == "raise":
        raise value
    if kind == "exit":
        raise _aborted(what, f"called sys.exit({value})", "; nothing it computed is reported.")
    raise _aborted(what, f"failed: {value}", "")
