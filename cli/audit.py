"""``fedpriv audit``: audit a user's own mechanism against a privacy claim from the shell.

``cli/main.py`` calls :func:`register_audit` with its top-level subparsers::

    fedpriv audit MODULE:FUNCTION --pair D D' --claim pure:EPS|approx:EPS:DELTA|gdp:MU
                  [--samples N] [--seed S] [--confidence C] [--json]

``MODULE`` is an importable module name (the current folder is searched first, as
for ``python -m``) or a path to a ``.py`` file. ``FUNCTION`` follows the
:func:`fedpriv.audit.regression.api.audit_mechanism` contract,
``mechanism(dataset, n_samples, rng) -> ndarray`` with ``n_samples`` rows. ``D`` and
``D'`` are JSON numbers or (nested) arrays; a number is passed as a float, an array
as a NumPy array.

The audit runs in one forked worker process
(:func:`fedpriv.audit.engine.isolation.run_isolated`; the user's function need not be
picklable) with :func:`audit_mechanism`'s defaults otherwise, so its numbers are those of
``audit_mechanism(function, NeighboringPair(D, D'), claim=..., samples=N, seed=S)``
(the executor never changes them). Progress goes to stderr, one line per batch
(at most two lines a second). Exit status: 0 when the audit finds no violation
(which does not certify the claim), 1 when it refutes the claim, 2 on bad input or
when the user's module fails (cannot be imported, has no such function, raises, or
returns the wrong shape) or calls ``sys.exit``/``os._exit``, is killed, or runs past
``--timeout`` seconds (default 3600, for the whole audit); the message then names the
module and nothing is reported as audited.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import TYPE_CHECKING, Any

from fedpriv.cli.commands import EXIT_CODES
from fedpriv.cli.user_mechanism import CheckedMechanism, UserCodeError, load_mechanism

if TYPE_CHECKING:  # the functions import NumPy and fedpriv when they run, so that
    pass  # `fedpriv audit --help` answers at once

__all__ = ["UserCodeError", "load_mechanism", "parse_claim", "parse_dataset", "register_audit"]

_CLAIM_FORMS = "pure:EPS, approx:EPS:DELTA or gdp:MU (e.g. approx:1:1e-5)"


def parse_claim(text: str):
    """``pure:EPS`` -> PureDP, ``approx:EPS:DELTA`` -> ApproxDP, ``gdp:MU`` -> GaussianDP.

    Parameters
    ----------
    text : str
        The ``--claim`` option.

    Returns
    -------
    PureDP or ApproxDP or GaussianDP

    Raises
    ------
    ValueError
        If ``text`` has another form or a value is out of the guarantee's range.

    Examples
    --------
    >>> parse_claim("approx:1:1e-5")
    ApproxDP(epsilon=1.0, delta=1e-05)
    """
    from fedpriv.privacy.accounting.guarantees import ApproxDP, GaussianDP, PureDP

    kind, *values = str(text).strip().split(":")
    arity = {"pure": 1, "approx": 2, "gdp": 1}
    if kind.lower() not in arity or len(values) != arity[kind.lower()]:
        raise ValueError(f"`--claim` must be {_CLAIM_FORMS}; got {text!r}.")
    try:
        numbers = [float(v) for v in values]
    except ValueError:
        raise ValueError(
            f"`--claim` values must be numbers ({_CLAIM_FORMS}); got {text!r}."
        ) from None
    kind = kind.lower()
    if kind == "pure":
        return PureDP(numbers[0])
    if kind == "approx":
        return ApproxDP(numbers[0], numbers[1])
    return GaussianDP(numbers[0])


def parse_dataset(name: str, text: str) -> Any:
    """A JSON number (-> float) or array (-> ndarray) given on the command line.

    Parameters
    ----------
    name : str
        ``"D"`` or ``"D'"``, for the message.
    text : str
        The option's value.

    Returns
    -------
    float or ndarray of float64

    Raises
    ------
    ValueError
        If ``text`` is not JSON, or is JSON but not a number or a rectangular numeric
        array; the message names ``name`` (``D`` or ``D'``).
    """
    import numpy as np

    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(
            f"`--pair` {name} is nested too deeply to read ({len(text):,} characters); "
            "a dataset is a JSON number or a (nested) array of a few levels."
        ) from None
    except ValueError as error:
        raise ValueError(
            f"`--pair` {name} must be a JSON number or array, got {text!r} ({error})."
        ) from None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value) if abs(value) < 1.7e308 else math.inf
        if not math.isfinite(number):
            raise ValueError(
                f"`--pair` {name} must be a finite number, got {text!r}; a "
                "mechanism cannot be audited on NaN or infinite data."
            )
        return number
    if isinstance(value, list):
        try:
            array = np.asarray(value)
        except (ValueError, OverflowError, RecursionError):
            array = None
        if array is not None and array.dtype.kind in "iuf" and array.size > 0:
            if not np.all(np.isfinite(array.astype(np.float64))):
                raise ValueError(
                    f"`--pair` {name} must hold finite numbers, got {text!r}; "
                    "a mechanism cannot be audited on NaN or infinite data."
                )
            return array
    raise ValueError(
        f"`--pair` {name} must be a JSON number or a non-empty rectangular "
        f"array of numbers, got {text!r}."
    )


def register_audit(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``audit`` subcommand to ``sub``; its handler is ``args.handler``.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``fedpriv`` subcommands.

    Returns
    -------
    argparse.ArgumentParser
        The ``audit`` parser.
    """
    p = sub.add_parser(
        "audit",
        help="audit your own mechanism against a privacy claim",
        description=(
            "Audit mechanism(dataset, n_samples, rng) on two neighboring datasets against a claim."
        ),
        epilog=(
            f"{EXIT_CODES} Here 0 means the audit found no violation (not a "
            "certificate), 1 that it refuted the claim, 2 also that your module "
            "failed (import, exception, wrong shape)."
        ),
    )
    p.add_argument(
        "target",
        metavar="MODULE:FUNCTION",
        help="e.g. mymodule:noisy_count or path/to/file.py:noisy_count",
    )
    p.add_argument(
        "--pair",
        nargs=2,
        required=True,
        metavar=("D", "D'"),
        help="the two neighboring datasets as JSON numbers or arrays",
    )
    p.add_argument("--claim", required=True, help=_CLAIM_FORMS)
    p.add_argument(
        "--samples",
        type=int,
        default=100_000,
        help="confirmation samples per world (default 100000)",
    )
    p.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="family-wise confidence of the verdict (default 0.95)",
    )
    p.add_argument(
        "--reading",
        choices=("any", "gaussian"),
        default="any",
        help=(
            "how to read an (ε, δ) claim: 'any' mechanism (default), or 'gaussian': "
            "also refute it read as Gaussian-DP (Nasr et al. 2023; the verdict says "
            "under which reading)"
        ),
    )
    p.add_argument(
        "--sequential",
        action="store_true",
        help=(
            "anytime-valid confidence sequences: stop at the first look that refutes "
            "the claim and report the samples saved"
        ),
    )
    p.add_argument(
        "--looks", type=int, default=10, help="batches of a --sequential audit (default 10)"
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=3600.0,
        metavar="SECONDS",
        help="seconds the whole audit (import and every call of your function) may "
        "take before it is stopped and the command exits 2 (default 3600)",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=_audit)
    return p


def _report(result, target: str, args: argparse.Namespace) -> str:
    verdict = (
        "REFUTED: the audit's lower bound exceeds the claim"
        if result.violated
        else "not refuted: no evidence of a violation (an audit cannot certify privacy)"
    )
    if result.violated and not result.epsilon_lower_bound > result.claimed_epsilon:
        # refuted only under --reading gaussian: say so, the any-mechanism bound is below
        verdict = (
            "REFUTED under the Gaussian-DP reading of the claim (the any-mechanism "
            "lower bound below does not exceed it; the pilot did not reject the "
            "Gaussian shape the reading assumes)"
        )
    lines = [
        f"fedpriv audit {target}: claim {result.claim!r}, D = {args.pair[0]}, D' = {args.pair[1]}",
        f"verdict: {verdict}",
        (
            f"ε lower bound {result.epsilon_lower_bound:.4g} at δ = {result.delta:.3g} vs "
            f"claimed ε {result.claimed_epsilon:.4g} ({result.confidence:.0%} confidence, "
            f"{result.n_samples:,} samples per world, {result.seconds:.1f} s)"
        ),
        f"evidence: {result.evidence}",
    ]
    if math.isfinite(result.tightness):
        lines.insert(3, f"tightness (lower bound / claimed ε): {result.tightness:.3f}")
    details = result.to_dict()
    if details.get("reading") == "gaussian":
        lines.extend(_reading_lines(result))
    if args.sequential:
        lines.append(
            f"sequential: {details.get('looks')} look(s); "
            f"{details.get('samples_saved', 0):,} of {details.get('samples_budget', 0):,} "
            "samples per world saved"
        )
    return "\n".join(lines)


def _reading_lines(result) -> list[str]:
    """What the Gaussian-DP reading found, in words: its verdict, its ε and the shape
    test it rests on (what was tested, at which level, why a reading was declined)."""
    reading_epsilon = f"{result.details.get('reading_epsilon_lower_bound', math.nan):.4g}"
    shape = result.details.get("shape_test")
    if shape is None:  # a GaussianDP claim: the μ bound refutes it for any mechanism
        return [
            f"under the Gaussian-DP reading: ε lower bound {reading_epsilon} at "
            f"δ = {result.delta:.3g}"
        ]
    verdict = result.details.get("reading_verdict")
    power = result.details.get("shape_power")
    if verdict == "unresolved":
        if math.isnan(shape.statistic):
            why = "the assumption could not be tested"
        elif shape.rejected:
            why = "the assumption is rejected"
        else:
            why = (
                "the shape test could not have told the claim's own non-Gaussian "
                "curves from a Gaussian one"
            )
        tested = shape.description + ("" if power is None else f"; {power.description}")
        return [
            "Gaussian-DP reading: UNRESOLVED (declined). The reading turns the μ lower "
            "bound into ε assuming the trade-off curve is Gaussian; the audit tested "
            f"that: {tested}.",
            f"Since {why}, the reading's ε ({reading_epsilon} at δ = {result.delta:.3g}) "
            "is not evidence about this mechanism and refutes nothing; the verdict rests "
            "on the any-mechanism ε lower bound above.",
        ]
    return [
        f"Gaussian-DP reading: {verdict}; ε lower bound {reading_epsilon} at "
        f"δ = {result.delta:.3g} if the trade-off curve is Gaussian ({shape.description})"
    ]


def _run_audit(args: argparse.Namespace, claim, pair):
    """Import the user's function and audit it (in the forked worker of :func:`_audit`).

    A failure of the user's code is raised as :class:`UserCodeError` itself (its
    message names the module), since an exception's ``__cause__`` does not survive
    the trip back from the worker."""
    from fedpriv.audit.regression.api import audit_mechanism
    from fedpriv.privacy.errors import MechanismError

    try:
        function = load_mechanism(args.target)
        pilot = max(1000, args.samples // 10)  # audit_mechanism's default pilot size
        checked = CheckedMechanism(
            function, args.target, total=2 * (pilot + args.samples), pilot=pilot
        )
        return audit_mechanism(
            checked,
            pair,
            claim=claim,
            samples=args.samples,
            seed=args.seed,
            confidence=args.confidence,
            pilot_samples=pilot,
            executor=None,
            reading=args.reading,
            sequential=args.sequential,
            looks=args.looks,
        )
    except MechanismError as error:
        # audit_mechanism reports a failing mechanism as MechanismError; when the
        # failure is the user's code (our CheckedMechanism wrapper), say so as such
        if isinstance(error.__cause__, UserCodeError):
            raise error.__cause__ from None
        raise


def _audit(args: argparse.Namespace) -> int:
    from fedpriv.audit.engine.isolation import UserCodeAbortedError, run_isolated
    from fedpriv.audit.regression.api import NeighboringPair

    claim = parse_claim(args.claim)
    pair = NeighboringPair(
        parse_dataset("D", args.pair[0]),
        parse_dataset("D'", args.pair[1]),
        description=f"D = {args.pair[0]}, D' = {args.pair[1]}",
    )
    if args.samples < 1:
        raise ValueError(f"`--samples` must be >= 1, got {args.samples}.")
    if not args.timeout > 0:
        raise ValueError(f"`--timeout` must be a number of seconds > 0, got {args.timeout!r}.")
    try:
        result = run_isolated(
            _run_audit,
            args,
            claim,
            pair,
            timeout=args.timeout,
            what=f"your mechanism {args.target}",
        )
    except (UserCodeError, UserCodeAbortedError) as error:
        print(f"fedpriv audit: error in your code: {error}", file=sys.stderr)
        return 2
    if args.json:
        from fedpriv.audit.claims.claim import jsonable

        out = {
            "mechanism": args.target,
            "verdict": "refuted" if result.violated else "not refuted",
            **result.to_dict(),
        }
        print(json.dumps(jsonable(out), indent=2, allow_nan=False))
    else:
        print(_report(result, args.target, args))
    return 1 if result.violated else 0
