"""Every call ``fedpriv verify`` makes into a family's attachment, contained for a user's.

An attachment (:mod:`fedpriv.audit.claims.attachment`) is code of its family. A
built-in family's attachment is fedpriv's own tested code: it is called here, in this
process, with the run's executor, exactly as before. An attachment of a family a user
registered (a claims file given with ``--claims``, or an installed ``fedpriv.papers``
entry point) is untrusted input: its module is imported, and each of its ``configure``,
``planned``, ``run`` and ``write``, called, in a forked worker stopped after the run's
``--timeout`` (:func:`fedpriv.audit.engine.isolation.run_isolated`). A
``sys.exit``, an ``os._exit``, a death by a signal or a hang there raises
:class:`~fedpriv.audit.engine.isolation.UserCodeAbortedError` naming the step, the
attachment and the claims file or entry point; an exception it raises, or a result
that is not what the protocol says (``planned`` returns a
:class:`~fedpriv.audit.claims.attachment.Plan`, ``run`` an
:class:`~fedpriv.audit.claims.attachment.AttachmentOutput` whose rows are
:class:`~fedpriv.audit.claims.attachment.RowEvidence`), raises
:class:`~fedpriv.audit.claims.attachment.AttachmentError` naming them too. Either way
``fedpriv verify`` exits 2 and writes nothing.

In the worker, ``run`` receives ``executor=None`` (an executor, a process pool or a
dask client, does not survive a fork): it runs its jobs as it does without one (its
``workers`` setting). Its numbers do not change: every job carries its own
SeedSequence address. Its progress lines are relayed to this process as they are
sent, and reach the run's progress callback here (its counter and bar stay correct).
What crosses back (a configuration, a plan, an output) is pickled: a result that
cannot be pickled raises ``UserCodeAbortedError`` naming the attachment.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from fedpriv.audit.claims.attachment import (
    Attachment,
    AttachmentError,
    AttachmentOutput,
    Plan,
    RowEvidence,
)
from fedpriv.audit.engine.isolation import UserCodeAbortedError, run_isolated
from fedpriv.audit.reporting.files import staged_files

__all__ = [
    "configure_attachment",
    "plan_attachment",
    "run_attachment",
    "user_origins",
    "write_attachments",
]


def user_origins(claims_files=()) -> dict[str, str]:
    """How messages name each family a user registered, by family key.

    Parameters
    ----------
    claims_files : sequence of str
        The run's claims files (absolute paths, already loaded).

    Returns
    -------
    dict of str to str
        Family key -> ``"claims file /abs/path.py"`` or ``"entry point 'NAME'
        (module:attribute)"`` (:func:`~fedpriv.audit.claims.family.entry_point_origins`);
        built-in families are absent.
    """
    from fedpriv.audit.claims.family import entry_point_origins, load_claims_file

    out = dict(entry_point_origins())
    for path in claims_files:
        out.update({fam.key: f"claims file {path}" for fam in load_claims_file(path)})
    return out


def _call(attachment: Attachment, step: str, args: tuple, kwargs: dict, relay=None) -> Any:
    """``attachment``'s module's ``step(*args, **kwargs)`` (``progress=relay`` if given)."""
    if relay is not None:
        kwargs = {**kwargs, "progress": relay}
    return getattr(attachment.load(), step)(*args, **kwargs)


def _contained(
    attachment: Attachment,
    step: str,
    origin: str,
    timeout: float,
    args: tuple = (),
    kwargs: Mapping[str, Any] | None = None,
    relay: Callable[[str], None] | None = None,
) -> Any:
    """``step`` of a user's attachment in a forked, timed worker; its failures named."""
    what = f"{step} of attachment {attachment.name!r} of {origin}"
    try:
        return run_isolated(
            _call,
            attachment,
            step,
            args,
            dict(kwargs or {}),
            timeout=timeout,
            what=what,
            relay=relay,
        )
    except (UserCodeAbortedError, KeyboardInterrupt):
        raise
    except Exception as error:
        raise AttachmentError(f"{what} raised {type(error).__name__}: {error}") from error


def _refuse(attachment: Attachment, step: str, origin: str, wanted: str, got: Any) -> None:
    raise AttachmentError(
        f"{step} of attachment {attachment.name!r} of {origin} must return {wanted}; "
        f"got {type(got).__name__}."
    )


def configure_attachment(
    attachment: Attachment, *, origin: str | None, timeout: float, **keywords
) -> Any:
    """The attachment's configuration: its ``configure(**keywords)``.

    Parameters
    ----------
    attachment : Attachment
    origin : str or None
        The user's claims file or entry point (:func:`user_origins`); None for a
        built-in family (called in this process).
    timeout : float
        Seconds the worker may take, in (0, inf].
    **keywords
        ``quick``, ``seed``, ``workers`` and the attachment's options.

    Returns
    -------
    object
        What ``configure`` returned.

    Raises
    ------
    UserCodeAbortedError
        If a user's ``configure`` exits, dies, hangs or returns an unpicklable value.
    AttachmentError
        If a user's ``configure`` raises (a ``ValueError`` naming it, with the error).
    ValueError
        What a built-in ``configure`` raises on bad input.
    """
    if origin is None:
        return attachment.load().configure(**keywords)
    return _contained(attachment, "configure", origin, timeout, kwargs=keywords)


def plan_attachment(
    attachment: Attachment, config: Any, entries, *, origin: str | None, timeout: float
) -> Plan:
    """What the attachment will do: its ``planned(config, entries)``.

    Parameters
    ----------
    attachment : Attachment
    config : object
        Its configuration.
    entries : list of RegisteredClaim
        The family's selected rows.
    origin : str or None
        As for :func:`configure_attachment`.
    timeout : float
        Seconds the worker may take.

    Returns
    -------
    Plan

    Raises
    ------
    UserCodeAbortedError, AttachmentError
        As for :func:`configure_attachment`; ``AttachmentError`` too when a user's
        ``planned`` returns no :class:`Plan`.
    """
    if origin is None:
        return attachment.load().planned(config, entries)
    plan = _contained(attachment, "planned", origin, timeout, (config, entries))
    if not isinstance(plan, Plan):
        _refuse(attachment, "planned", origin, "a Plan", plan)
    return plan


def run_attachment(
    attachment: Attachment,
    config: Any,
    entries,
    *,
    origin: str | None,
    timeout: float,
    progress: Callable[[str], None],
    executor=None,
) -> AttachmentOutput:
    """The attachment's experiment: its ``run(config, entries, progress=, executor=)``.

    Parameters
    ----------
    attachment : Attachment
    config : object
        Its configuration.
    entries : list of RegisteredClaim
        The family's selected rows.
    origin : str or None
        As for :func:`configure_attachment`.
    timeout : float
        Seconds the worker may take.
    progress : callable
        Receives the run's progress lines (relayed live from a user's worker).
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Given to a built-in attachment; a user's runs with ``executor=None`` in its
        worker.

    Returns
    -------
    AttachmentOutput

    Raises
    ------
    UserCodeAbortedError, AttachmentError
        As for :func:`configure_attachment`; ``AttachmentError`` too when a user's
        ``run`` returns no :class:`AttachmentOutput`, or rows that are not a mapping of
        register keys to :class:`RowEvidence`.
    """
    if origin is None:
        return attachment.load().run(config, entries, progress=progress, executor=executor)
    output = _contained(
        attachment, "run", origin, timeout, (config, entries), {"executor": None}, progress
    )
    if not isinstance(output, AttachmentOutput):
        _refuse(attachment, "run", origin, "an AttachmentOutput", output)
    rows = output.rows
    if not isinstance(rows, Mapping) or not all(
        isinstance(k, str) and isinstance(v, RowEvidence) for k, v in rows.items()
    ):
        _refuse(attachment, "run", origin, "rows mapping register keys to RowEvidence", rows)
    return output


def _write_files(
    attachment: Attachment, result: Any, folder: Path, *, origin: str | None, timeout: float
) -> None:
    """The attachment's ``write(result, folder)``: here for a built-in family, in a
    forked, timed worker for a user's (:func:`_contained`)."""
    if origin is None:
        attachment.load().write(result, folder)
    else:
        _contained(attachment, "write", origin, timeout, (result, folder))


def write_attachments(runs, out_dir: str | os.PathLike) -> list[Path]:
    """Every attachment's files, all or nothing, each into ``out_dir/<family key>/``.

    Each attachment's ``write`` fills its own staging folder
    (:func:`fedpriv.audit.reporting.files.staged_files`); files are moved into place
    only once every ``write`` has finished. On a failure nothing is moved, and the
    folders this call created (``out_dir`` and its parents included) are removed again,
    so nothing is left behind. A user's ``write`` (``run.origin`` set) runs in a forked
    worker stopped after ``run.timeout`` seconds.

    Parameters
    ----------
    runs : sequence of AttachmentResult
        The attachments that ran.
    out_dir : str or PathLike
        The reports folder (created if needed, when there is something to write).

    Returns
    -------
    list of Path
        ``out_dir/<family key>`` of each run, in order.

    Raises
    ------
    UserCodeAbortedError
        If a user's ``write`` exits, dies or runs past its timeout.
    AttachmentError
        If a user's ``write`` raises.
    """
    targets = [Path(out_dir) / run.family for run in runs]
    created = [p for target in targets for p in (target, *target.parents) if not p.exists()]
    try:
        with contextlib.ExitStack() as stack:
            for run, target in zip(runs, targets, strict=True):
                staging = stack.enter_context(staged_files(target, prefix=run.family))
                _write_files(
                    run.attachment,
                    run.output.result,
                    staging,
                    origin=run.origin,
                    timeout=run.timeout,
                )
    except BaseException:
        for folder in sorted(set(created), key=lambda p: len(p.parts), reverse=True):
            try:
                folder.rmdir()  # only if empty: a folder someone else filled stays
            except OSError:
                pass
        raise
    return targets
