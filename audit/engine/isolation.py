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
cannot be pickled, as :class:`UserCodeAbortedError` with its text). A caller that
passes ``relay`` receives the worker's progress lines live, through a second pipe.

The worker leads its own process group: the processes it starts (a process pool the
code made and left running) are killed with it when it is stopped, and once it has
ended; a process that leaves the group (``setsid``) is not. Its result is sent with
its length first, so a process it started that still holds the pipe cannot hold the
result back until the timeout.

Cost: one ``fork`` per call (milliseconds; the worker shares the caller's imported
modules), so callers isolate one claim or one audit, never one sample. Where
``os.fork`` does not exist (Windows), the call runs in this process and only
``SystemExit`` is caught; ``os._exit`` and hangs are then not contained.
"""

from __future__ import annotations

import json
import os
import pickle
import select
import signal
import sys
import threading
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


def _sender(fd: int) -> Callable[[str], None]:
    """Worker side of ``relay``: ``send(text)`` writes one JSON line to ``fd``."""
    lock = threading.Lock()  # a user's threads may report at once: whole lines only

    def send(text: str) -> None:
        data = (json.dumps(str(text)) + "\n").encode("utf-8")
        with lock:
            while data:
                data = data[os.write(fd, data) :]

    return send


def _child(
    write: int, function: Callable[..., Any], args: tuple, messages: int | None = None
) -> None:
    """Worker side: run ``function(*args)``, send its outcome, never return."""
    status = 0
    try:
        try:
            os.setpgid(0, 0)  # its own group: what it starts is stopped with it
            # Out of the terminal's foreground group: writing to the terminal (a run's
            # live output under ``stty tostop``) must not stop it, reading fails (EIO).
            signal.signal(signal.SIGTTOU, signal.SIG_IGN)
            signal.signal(signal.SIGTTIN, signal.SIG_IGN)
        except (OSError, ValueError, AttributeError):
            pass
        try:
            if messages is None:
                payload: tuple = ("ok", function(*args))
            else:
                payload = ("ok", function(*args, relay=_sender(messages)))
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
                else "its result cannot be sent back from the worker process (return "
                f"picklable values: {type(error).__name__}: {error})"
            )
            data = pickle.dumps(("text", text))
        with os.fdopen(write, "wb") as pipe:  # length first: no need to wait for EOF
            pipe.write(len(data).to_bytes(8, "big") + data)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
    except BaseException:
        status = 70
    finally:
        os._exit(status)


def _stop(pid: int) -> None:
    """Kill the worker ``pid`` and every process it started (its group), and reap it."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _reap(pid: int) -> int:
    """The ``waitpid`` status of the worker ``pid`` once it has ended; the processes it
    started and left running (its group) are killed first, while its pid, a zombie not
    yet reaped, still names the group."""
    if hasattr(os, "waitid"):
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return os.waitpid(pid, 0)[1]


def run_isolated(
    function: Callable[..., Any],
    *args: Any,
    timeout: float,
    what: str,
    hint: str = "raise --timeout if it needs longer",
    relay: Callable[[str], None] | None = None,
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
    relay : callable, optional
        Receives, in this process and as they arrive, the lines the worker sends: with
        ``relay`` the worker calls ``function(*args, relay=send)``, and each
        ``send(text)`` there becomes ``relay(text)`` here (a progress callback whose
        state, a counter or a bar, must stay in this process). Lines sent before the
        worker exits, dies or is stopped are relayed before the error is raised.

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
    extra = {} if relay is None else {"relay": relay}
    if not hasattr(os, "fork"):  # pragma: no cover - Windows: SystemExit only
        try:
            return function(*args, **extra)
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
    lines_read, lines_write = os.pipe() if relay is not None else (None, None)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the worker (coverage does not follow forks)
        os.close(read)
        if lines_read is not None:
            os.close(lines_read)
        _child(write, function, args, lines_write)
    try:  # also here, so that a kill right after the fork reaches the whole group
        os.setpgid(pid, pid)
    except OSError:
        pass
    os.close(write)
    if lines_write is not None:
        os.close(lines_write)
    received = bytearray()  # the result: its length (8 bytes), then its pickle
    pending = bytearray()  # relayed bytes not yet ended by a newline

    def relay_lines(chunk: bytes) -> None:
        pending.extend(chunk)
        *complete, rest = bytes(pending).split(b"\n")
        pending[:] = rest
        for line in complete:
            relay(json.loads(line.decode("utf-8")))

    def drain() -> None:  # what the worker sent before its end is still in the pipe
        while lines_read in open_fds and select.select([lines_read], [], [], 0)[0]:
            chunk = os.read(lines_read, 1 << 16)
            if not chunk:
                open_fds.remove(lines_read)
            else:
                relay_lines(chunk)

    def complete() -> bool:
        return len(received) >= 8 and len(received) >= 8 + int.from_bytes(received[:8], "big")

    open_fds = [read] if lines_read is None else [read, lines_read]
    deadline = time.monotonic() + timeout
    try:
        while read in open_fds and not complete():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                _stop(pid)
                pid = 0
                drain()
                raise _aborted(
                    what,
                    f"ran past its timeout of {timeout:g} s",
                    f" and was stopped; nothing it computed is reported ({hint}).",
                )
            ready, _, _ = select.select(open_fds, [], [], min(remaining, 3600.0))
            for fd in ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    open_fds.remove(fd)
                elif fd == read:
                    received.extend(chunk)
                else:
                    relay_lines(chunk)
        drain()  # a line still buffered once the result has arrived
    except BaseException:
        if pid:  # interrupted (Ctrl-C) or timed out: the worker must not outlive us
            _stop(pid)
        raise
    finally:
        os.close(read)
        if lines_read is not None:
            os.close(lines_read)
    status = _reap(pid)
    if not complete():
        raise _aborted(
            what,
            _describe_status(status),
            " before reporting a result; nothing it computed is reported.",
        )
    try:
        kind, value = pickle.loads(bytes(received[8:]))
    except Exception as error:  # e.g. a class only the worker could import
        raise _aborted(
            what,
            f"returned a result this process cannot read ({type(error).__name__}: {error})",
            "; nothing it computed is reported.",
        ) from None
    if kind == "ok":
        return value
    if kind == "raise":
        raise value
    if kind == "exit":
        raise _aborted(what, f"called sys.exit({value})", "; nothing it computed is reported.")
    raise _aborted(what, f"failed: {value}", "")
