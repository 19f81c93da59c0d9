"""Privacy budget reports for a deployment described in a TOML file.

A deployment names the neighboring relation, the key levels that partition the data,
the target δ, optionally the claim to compare with, and its releases. Each release is
an event of :mod:`fedpriv.privacy.accounting.events` (or :class:`fedpriv.privacy.mechanisms.interval.IntervalRelease`) charged
once per label combination of ``per`` and repeated ``count`` times. A numeric field
may instead be the string ``"NAME.FIELD"``: the field of a paper calibration declared
in a ``[calibration.NAME]`` table (see :data:`CALIBRATIONS`), so that a file can say
"the noise FedUCB prescribes" instead of a number::

    title = "FedUCB, paper calibration"
    neighboring_relation = "replace_one_context_reward"
    disjoint = ["agent"]
    target_delta = 0.1

    [claim]
    epsilon = 1.0
    delta = 0.1
    source = "Dubey & Pentland 2020, Prop. 4"

    [calibration.feducb]
    function = "feducb_privatizer"
    epsilon = 1.0
    delta = 0.1
    horizon = 10000
    n_agents = 10
    dim = 10

    [[release]]
    name = "Privatizer tree"
    event = "GaussianTree"
    per = { agent = 10 }
    noise_stddev = "feducb.noise_stddev"
    horizon = 10000
    l2_sensitivity = "feducb.l2_sensitivity"

Malformed files raise :class:`~fedpriv.privacy.errors.DataFormatError` naming the file and the
offending key; nothing is charged unless the whole file is valid.

Length: ``fedpriv account`` is one feature: the deployment TOML format (parse, validate,
build an accountant) and the reports of a description or a ledger store share their
rendering.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import itertools
import math
import stat
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from fedpriv.privacy import calibrations as calibration
from fedpriv.privacy.accounting import events
from fedpriv.privacy.accounting.guarantees import format_epsilon
from fedpriv.privacy.accounting.verdicts import LowerBoundEvidence, judge
from fedpriv.privacy.errors import DataFormatError, ResourceLimitError
from fedpriv.privacy.ledger.accountant import Accountant
from fedpriv.privacy.ledger.backends import open_store
from fedpriv.privacy.relations import parse_relation

__all__ = [
    "CALIBRATIONS",
    "CALIBRATION_ALIASES",
    "CLAIM_FIELDS",
    "MAX_CELLS",
    "MAX_DEPLOYMENT_BYTES",
    "MAX_TOTAL_CELLS",
    "Deployment",
    "DeploymentRelease",
    "budget_report",
    "build_accountant",
    "load_deployment",
    "parse_deployment",
    "render_markdown",
    "render_store_markdown",
    "render_store_text",
    "render_text",
    "store_report",
]

#: Most releases of one ``[[release]]`` per cell (its ``count``): the events' ceiling.
MAX_COUNT = events.MAX_COUNT
#: Most cells one ``[[release]]`` may be charged to (product of its ``per`` labels).
MAX_CELLS = 10**6
#: Most cell charges a whole deployment file may make by default: the sum over its
#: releases of (cells named by ``per``) × ``count``, the rows the accountant is
#: charged. Its time and memory grow with this total (one release of ``MAX_CELLS``
#: cells took minutes to report), so a file is refused beyond it unless the caller
#: raises it (:func:`parse_deployment`'s ``max_total_cells``, ``fedpriv account
#: --max-cells``).
MAX_TOTAL_CELLS = MAX_CELLS
#: Largest deployment file :func:`load_deployment` reads, in bytes (16 MiB: room for
#: label lists of ``MAX_CELLS`` entries). Only regular files are read, so a FIFO or a
#: device such as ``/dev/zero`` is refused before it is opened.
MAX_DEPLOYMENT_BYTES = 16 * 2**20

#: Paper calibrations a deployment file may call by name: each calibration module's
#: ``DEPLOYMENT_FUNCTIONS`` (:data:`fedpriv.privacy.calibrations.DEPLOYMENT_FUNCTIONS`).
CALIBRATIONS = dict(calibration.DEPLOYMENT_FUNCTIONS)
#: Names a deployment file may still type for a calibration renamed since (the family's
#: one spelling, ``gossip_fed_ucb``): old name -> current name.
CALIBRATION_ALIASES = {"fed_ucb_scale": "gossip_fed_ucb_scale"}


def _event_classes() -> dict[str, type]:
    classes = {
        name: getattr(events, name)
        for name in events.__all__
        if isinstance(getattr(events, name), type)
    }
    from fedpriv.privacy.accounting.interval import IntervalRelease  # on use: keeps startup light

    classes["IntervalRelease"] = IntervalRelease
    return classes


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DeploymentRelease:
    """One kind of release: an event charged to every label combination of ``per``."""

    name: str
    event: Any
    per: tuple[tuple[str, tuple[Any, ...]], ...]
    count: int


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Deployment:
    """A validated deployment description (see the module docstring)."""

    title: str
    neighboring_relation: str
    disjoint: tuple[str, ...]
    sequential: tuple[str, ...]
    target_delta: float
    claim_epsilon: float | None
    claim_delta: float | None
    claim_source: str
    releases: tuple[DeploymentRelease, ...]
    calibrations: tuple[tuple[str, Any], ...]
    source: str


#: Extra δ values at which a budget report gives the tightest ε (the ε(δ) curve).
_CURVE_DELTAS = (1e-3, 1e-5, 1e-8)


def _fail(source: str, where: str, message: str) -> DataFormatError:
    return DataFormatError(f"{source}: {where}: {message}")


def _resolve(value: Any, calibrated: Mapping[str, Any], source: str, where: str) -> Any:
    if isinstance(value, str) and "." in value and value.split(".", 1)[0] in calibrated:
        name, field = value.split(".", 1)
        result = calibrated[name]
        if not hasattr(result, field):
            raise _fail(source, where, f"calibration {name!r} has no field {field!r}")
        return getattr(result, field)
    return value


def _labels(spec: Any, source: str, where: str) -> tuple[Any, ...]:
    if isinstance(spec, bool):
        raise _fail(source, where, "labels must be a count or a list")
    if isinstance(spec, int):
        if not 1 <= spec <= MAX_CELLS:
            raise _fail(
                source,
                where,
                f"a label count must be in [1, {MAX_CELLS:,}] (MAX_CELLS), got {spec:,}",
            )
        return tuple(range(spec))
    if isinstance(spec, list) and spec:
        return tuple(spec)
    raise _fail(source, where, "labels must be a positive count or a non-empty list")


def parse_deployment(
    data: Mapping[str, Any], *, source: str = "<deployment>", max_total_cells: int = MAX_TOTAL_CELLS
) -> Deployment:
    """Validate a parsed TOML mapping and build a :class:`Deployment`.

    Parameters
    ----------
    data : mapping of str to Any
        The parsed TOML document (``tomllib.loads``); its fields are described in
        the deployment file format reference (``docs/reference/deployment-file.md``).
    source : str, default "<deployment>"
        Where ``data`` came from (a path), repeated in error messages and reports.
    max_total_cells : int, default MAX_TOTAL_CELLS
        Most cell charges the whole file may make: the sum over its releases of
        (cells named by ``per``) × ``count``, the rows the accountant is charged. >= 1.

    Returns
    -------
    Deployment
        The validated relation, key levels, releases and optional claim.

    Raises
    ------
    DataFormatError
        On a missing or malformed key (an unknown key of the top level, of
        ``[claim]`` or of a release included), an unknown event or calibration, or an
        event whose fields are invalid (the message names the key and the problem).
    ResourceLimitError
        If the releases make more than ``max_total_cells`` cell charges together.
    ValueError
        If ``max_total_cells`` is not an integer >= 1.
    """
    if isinstance(max_total_cells, bool) or not isinstance(max_total_cells, int):
        raise ValueError(f"`max_total_cells` must be an integer >= 1, got {max_total_cells!r}.")
    if max_total_cells < 1:
        raise ValueError(f"`max_total_cells` must be an integer >= 1, got {max_total_cells!r}.")
    if not isinstance(data, Mapping):
        raise _fail(source, "top level", f"must be a table, got {type(data).__name__}")
    _check_top_level(data, source)
    for key, kind in (
        ("claim", Mapping),
        ("calibration", Mapping),
        ("disjoint", list),
        ("sequential", list),
        ("release", list),
    ):
        if key in data and not isinstance(data[key], (kind, tuple) if kind is list else kind):
            expected = "a table" if kind is Mapping else "an array"
            raise _fail(source, key, f"must be {expected}, got {type(data[key]).__name__}")
    relation_field = _relation_field(data, source)
    try:
        neighboring_relation = parse_relation(relation_field).value
        target_delta = float(data.get("target_delta", 0.0))
        if not 0.0 <= target_delta < 1.0:
            raise ValueError(f"`target_delta` must be in [0, 1), got {target_delta!r}.")
    except (ValueError, TypeError) as error:
        raise _fail(source, "top level", str(error)) from None
    disjoint = tuple(data.get("disjoint", ("agent",)))
    sequential = tuple(data.get("sequential", ()))
    if not disjoint or not all(isinstance(level, str) for level in disjoint + sequential):
        raise _fail(source, "disjoint", "must be a non-empty list of level names")
    claim = data.get("claim", {})
    claim_epsilon, claim_delta = _parse_claim(claim, source)
    calibrated = _parse_calibrations(data.get("calibration", {}), source)
    raw_releases = data.get("release", [])
    if not isinstance(raw_releases, list) or not raw_releases:
        raise _fail(source, "release", "at least one [[release]] table is required")
    classes = _event_classes()
    releases = [
        _parse_release(spec, f"release[{index}]", classes, calibrated, disjoint, sequential, source)
        for index, spec in enumerate(raw_releases)
    ]
    total = sum(math.prod(len(labels) for _, labels in r.per) * r.count for r in releases)
    if total > max_total_cells:
        raise ResourceLimitError(
            f"{source}: release: the releases make {total:,} cell charges together "
            f"(cells named by `per` × `count`, summed), more than `max_total_cells` = "
            f"{max_total_cells:,} (default MAX_TOTAL_CELLS; `fedpriv account --max-cells` "
            "raises it, at a cost of time and memory proportional to the total)."
        )
    return Deployment(
        title=str(data.get("title", Path(source).stem)),
        neighboring_relation=neighboring_relation,
        disjoint=disjoint,
        sequential=sequential,
        target_delta=target_delta,
        claim_epsilon=None if claim_epsilon is None else float(claim_epsilon),
        claim_delta=None if claim_delta is None else float(claim_delta),
        claim_source=str(claim.get("source", "")),
        releases=tuple(releases),
        calibrations=tuple(calibrated.items()),
        source=source,
    )


_TOP_LEVEL_KEYS = frozenset(
    {
        "title",
        "neighboring_relation",
        "relation",
        "disjoint",
        "sequential",
        "target_delta",
        "claim",
        "calibration",
        "release",
    }
)


def _relation_field(data: Mapping[str, Any], source: str) -> Any:
    """The ``neighboring_relation`` key, or ``relation`` (its name in files written
    before dp-accounting's name was adopted); giving both is refused."""
    if "neighboring_relation" in data and "relation" in data:
        raise _fail(
            source,
            "top level",
            "give `neighboring_relation` only (`relation` is its former name), not both",
        )
    return data.get("neighboring_relation", data.get("relation", "replace_one_reward"))


def _check_top_level(data: Mapping[str, Any], source: str) -> None:
    """Refuse unknown top-level keys."""
    unknown = sorted(set(data) - _TOP_LEVEL_KEYS)
    if unknown:
        raise _fail(
            source, "top level", f"unknown key(s) {unknown}; allowed: {sorted(_TOP_LEVEL_KEYS)}"
        )


#: The fields of the ``[claim]`` table; any other key is refused (a typo such as
#: ``epsilom`` would otherwise drop the claim silently).
CLAIM_FIELDS = ("epsilon", "delta", "source")


def _parse_claim(claim: Mapping[str, Any], source: str) -> tuple[Any, Any]:
    """The ``[claim]`` table's (epsilon, delta), validated (either may be None)."""
    _check_fields(
        claim, list(CLAIM_FIELDS), [], source=source, where="claim", what="the [claim] table"
    )
    claim_epsilon = claim.get("epsilon")
    claim_delta = claim.get("delta", 0.0 if claim_epsilon is not None else None)
    if claim_epsilon is not None and not (
        isinstance(claim_epsilon, (int, float)) and claim_epsilon > 0
    ):
        raise _fail(source, "claim.epsilon", f"must be a number > 0, got {claim_epsilon!r}")
    if claim_delta is not None and not (
        isinstance(claim_delta, (int, float)) and 0 <= claim_delta < 1
    ):
        raise _fail(source, "claim.delta", f"must be in [0, 1), got {claim_delta!r}")
    return claim_epsilon, claim_delta


def _parse_calibrations(tables: Mapping[str, Any], source: str) -> dict[str, Any]:
    """Run each ``[calibration.NAME]`` table's paper calibration function."""
    calibrated: dict[str, Any] = {}
    for name, spec in tables.items():
        where = f"calibration.{name}"
        if not isinstance(spec, dict) or "function" not in spec:
            raise _fail(source, where, "needs a `function` key")
        function = CALIBRATIONS.get(CALIBRATION_ALIASES.get(spec["function"], spec["function"]))
        if function is None:
            raise _fail(
                source,
                where,
                f"unknown function {spec['function']!r}; known: {sorted(CALIBRATIONS)}",
            )
        args = {k: v for k, v in spec.items() if k != "function"}
        allowed, required = _parameters(function)
        _check_fields(
            args,
            allowed,
            required,
            source=source,
            where=where,
            what=f"calibration function {spec['function']!r}",
            extra=("function",),
        )
        positional = [args.pop(k) for k in ("epsilon", "delta") if k in args]
        try:
            calibrated[name] = function(*positional, **args)
        except (ValueError, TypeError) as error:
            raise _fail(source, where, str(error)) from None
    return calibrated


#: Keys of a ``[[release]]`` table that are not fields of its event.
_RELEASE_KEYS = ("event", "name", "per", "count")


def _parameters(function: Any) -> tuple[list[str], list[str]]:
    """The keyword parameters ``function`` (a class or a function) accepts, and the
    required ones among them (no default). Empty lists if the signature is unknown."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return [], []
    named = [
        p
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    return (
        [p.name for p in named],
        [p.name for p in named if p.default is inspect.Parameter.empty],
    )


def _check_fields(
    given: Any,
    allowed: list[str],
    required: list[str],
    *,
    source: str,
    where: str,
    what: str,
    extra: tuple[str, ...] = (),
) -> None:
    """Refuse a key not in ``allowed`` (or ``extra``) and a missing required one, with
    the allowed fields listed and the nearest spelling suggested."""
    if not allowed:
        return
    known = list(extra) + allowed
    unknown = [key for key in given if key not in known]
    if unknown:
        hints = []
        for key in unknown:
            close = difflib.get_close_matches(key, known, n=1)
            hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise _fail(
            source,
            where,
            f"unknown field(s) {', '.join(hints)} for {what}; allowed: " + ", ".join(known),
        )
    missing = [key for key in required if key not in given]
    if missing:
        raise _fail(
            source,
            where,
            f"{what} needs the field(s) {', '.join(missing)}; allowed: {', '.join(known)}",
        )


def _parse_release(
    spec: Any,
    where: str,
    classes: Mapping[str, type],
    calibrated: Mapping[str, Any],
    disjoint: tuple[str, ...],
    sequential: tuple[str, ...],
    source: str,
) -> DeploymentRelease:
    """One ``[[release]]`` table: its event, the cells it is charged to, its count."""
    if not isinstance(spec, dict) or "event" not in spec:
        raise _fail(source, where, "needs an `event` key")
    cls = classes.get(spec["event"])
    if cls is None:
        raise _fail(source, where, f"unknown event {spec['event']!r}; known: {sorted(classes)}")
    if isinstance(spec.get("name"), str):
        where = f"{where} ({spec['name']!r})"
    allowed, required = _parameters(cls)
    _check_fields(
        spec,
        allowed,
        required,
        source=source,
        where=where,
        what=f"event {spec['event']!r}",
        extra=_RELEASE_KEYS,
    )
    per_spec = spec.get("per", {})
    if not isinstance(per_spec, dict):
        raise _fail(source, f"{where}.per", "must be a table of level = labels")
    missing = [level for level in disjoint if level not in per_spec]
    if missing:
        raise _fail(source, f"{where}.per", f"no labels for the disjoint level(s) {missing}")
    undeclared = sorted(set(per_spec) - set(disjoint) - set(sequential))
    if undeclared:
        raise _fail(source, f"{where}.per", f"level(s) {undeclared} are not declared")
    per = tuple(
        (level, _labels(per_spec[level], source, f"{where}.per.{level}")) for level in per_spec
    )
    n_cells = math.prod(len(labels) for _, labels in per)
    if n_cells > MAX_CELLS:
        raise _fail(
            source, f"{where}.per", f"names {n_cells:,} cells, more than MAX_CELLS = {MAX_CELLS:,}"
        )
    count = _resolve(spec.get("count", 1), calibrated, source, f"{where}.count")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_COUNT:
        raise _fail(
            source,
            f"{where}.count",
            f"must be an integer in [1, {MAX_COUNT:,}] (MAX_COUNT), got {count!r}",
        )
    fields = {
        k: _resolve(v, calibrated, source, f"{where}.{k}")
        for k, v in spec.items()
        if k not in ("event", "per", "count", "name")
    }
    fields = {k: (tuple(v) if isinstance(v, (list, np.ndarray)) else v) for k, v in fields.items()}
    try:
        event = cls(**fields)
    except (ValueError, TypeError) as error:
        raise _fail(source, where, f"{spec['event']}: {error}") from None
    return DeploymentRelease(
        name=str(spec.get("name", spec["event"])), event=event, per=per, count=count
    )


def load_deployment(path: str | Path, *, max_total_cells: int = MAX_TOTAL_CELLS) -> Deployment:
    """Read and validate a deployment TOML file.

    Parameters
    ----------
    path : str or Path
        A deployment TOML file: a regular file of at most
        :data:`MAX_DEPLOYMENT_BYTES` bytes.
    max_total_cells : int, default MAX_TOTAL_CELLS
        As in :func:`parse_deployment`.

    Returns
    -------
    Deployment
        As :func:`parse_deployment`, with ``source`` set to ``path``.

    Raises
    ------
    DataFormatError
        If the file is not a regular file (a FIFO, a device such as ``/dev/zero``),
        is not UTF-8 TOML, is nested too deeply to parse, or is not a valid deployment.
    ResourceLimitError
        If the file is larger than :data:`MAX_DEPLOYMENT_BYTES`, or its releases
        make more than ``max_total_cells`` cell charges.
    OSError
        If the file cannot be read.
    """
    path = Path(path)
    info = path.stat()  # stat, not open: a FIFO would block open()
    if not stat.S_ISREG(info.st_mode):
        raise DataFormatError(
            f"{path}: a deployment file must be a regular file, not a "
            f"{_file_kind(info.st_mode)} (its size must be known and bounded)."
        )
    if info.st_size > MAX_DEPLOYMENT_BYTES:
        raise ResourceLimitError(
            f"{path}: a deployment file must be at most MAX_DEPLOYMENT_BYTES = "
            f"{MAX_DEPLOYMENT_BYTES:,} bytes, got {info.st_size:,}."
        )
    with path.open("rb") as handle:
        raw = handle.read(MAX_DEPLOYMENT_BYTES + 1)
    if len(raw) > MAX_DEPLOYMENT_BYTES:  # grew after the stat
        raise ResourceLimitError(
            f"{path}: a deployment file must be at most MAX_DEPLOYMENT_BYTES = "
            f"{MAX_DEPLOYMENT_BYTES:,} bytes."
        )
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise DataFormatError(f"{path}: not UTF-8 text: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise DataFormatError(f"{path}: not valid TOML: {error}") from None
    except RecursionError:
        raise DataFormatError(
            f"{path}: not a deployment file: its tables or arrays are nested too deeply "
            "to parse (a deployment needs at most a few levels)."
        ) from None
    return parse_deployment(data, source=str(path), max_total_cells=max_total_cells)


def _file_kind(mode: int) -> str:
    """Words for a non-regular file's type."""
    for test, name in (
        (stat.S_ISDIR, "directory"),
        (stat.S_ISFIFO, "FIFO (named pipe)"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISSOCK, "socket"),
    ):
        if test(mode):
            return name
    return "special file"


def build_accountant(deployment: Deployment) -> Accountant:
    """An accountant charged with every release of ``deployment``.

    Parameters
    ----------
    deployment : Deployment
        From :func:`load_deployment` or :func:`parse_deployment`.

    Returns
    -------
    Accountant
        A new accountant with the deployment's relation and key levels, each release
        charged ``count`` times to every label combination of its ``per`` levels.
    """
    accountant = Accountant(
        neighboring_relation=deployment.neighboring_relation,
        disjoint=deployment.disjoint,
        sequential=deployment.sequential,
    )
    for release in deployment.releases:
        levels = [level for level, _ in release.per]
        combos = list(itertools.product(*(labels for _, labels in release.per)))
        keys = {
            level: np.repeat(np.array([c[i] for c in combos], dtype=object), release.count)
            for i, level in enumerate(levels)
        }
        accountant.spend(release.event, key=keys)
    return accountant


def _bounds_at(accountant: Accountant, delta: float) -> dict[str, Any]:
    """The report's ``routes``, ``tightest``, ``lower_bound`` and ``curve`` at ``delta``."""
    route, epsilon = accountant.routes.tightest(delta)
    return {
        "routes": accountant.routes.epsilons(delta),
        "tightest": {"route": route, "epsilon": epsilon},
        "lower_bound": accountant.brackets.lower_bound(delta),
        "curve": {f"{d:g}": accountant.get_epsilon(d) for d in _CURVE_DELTAS if d != delta},
    }


def budget_report(deployment: Deployment) -> dict[str, Any]:
    """Every route, the tightest, the lower bracket and the spend per label.

    Parameters
    ----------
    deployment : Deployment
        From :func:`load_deployment` or :func:`parse_deployment`.

    Returns
    -------
    dict
        ``routes`` {name: ε}, ``tightest`` {route, epsilon}, ``lower_bound`` (the
        optimistic PLD, where available), ``per_level`` {level: {label: ε}}, the claim
        and a verdict with its evidence when a claim is given (the one rule of
        :func:`fedpriv.privacy.accounting.verdicts.judge`: ``holds``, ``violated`` or
        ``unresolved``). ε is reported
        at the claim's δ if there is a claim, else at ``target_delta``.
    """
    accountant = build_accountant(deployment)
    delta = (
        deployment.claim_delta if deployment.claim_epsilon is not None else deployment.target_delta
    )
    bounds = _bounds_at(accountant, delta)
    route, epsilon = bounds["tightest"]["route"], bounds["tightest"]["epsilon"]
    lower = bounds["lower_bound"]
    per_level: dict[str, dict[str, float]] = {}
    for level in deployment.disjoint + deployment.sequential:
        labels = sorted(
            {label for r in deployment.releases for lv, ls in r.per if lv == level for label in ls},
            key=repr,
        )
        if labels:
            per_level[level] = {
                str(label): accountant.get_epsilon(delta, where={level: label}) for label in labels
            }
    report: dict[str, Any] = {
        "title": deployment.title,
        "source": deployment.source,
        "neighboring_relation": deployment.neighboring_relation,
        "disjoint": list(deployment.disjoint),
        "delta": delta,
        **bounds,
        "per_level": per_level,
        "releases": [
            {
                "name": r.name,
                "event": repr(r.event),
                "per": {lv: len(ls) for lv, ls in r.per},
                "count": r.count,
            }
            for r in deployment.releases
        ],
        "calibrations": {
            name: dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value
            for name, value in deployment.calibrations
        },
        "claim": None,
        "verdict": None,
    }
    if deployment.claim_epsilon is not None:
        report["claim"] = {
            "epsilon": deployment.claim_epsilon,
            "delta": deployment.claim_delta,
            "source": deployment.claim_source,
        }
        # The one verdict rule (fedpriv.privacy.accounting.verdicts.judge): the tightest route is the
        # certified upper bound of the declared releases, and the lower bracket an exact
        # analytic lower bound on them (the releases as declared, at worst-case inputs).
        lowers = []
        if lower is not None and lower > 0:
            lowers.append(
                LowerBoundEvidence(
                    epsilon=lower,
                    kind="analytic",
                    description="the accountant's lower bracket of the declared releases",
                )
            )
        report["verdict"], report["evidence"] = judge(
            deployment.claim_epsilon, epsilon, lowers, upper_note=f"route {route}"
        )
        report["slack"] = deployment.claim_epsilon / epsilon if epsilon > 0 else math.inf
        report["delta_at_claimed_epsilon"] = accountant.get_delta(deployment.claim_epsilon)
    return report


def render_text(report: Mapping[str, Any]) -> str:
    """A plain-text table of :func:`budget_report`.

    Parameters
    ----------
    report : mapping
        A report returned by :func:`budget_report`.

    Returns
    -------
    str
        One line per route, bound, curve point and level, no trailing newline.
    """
    lines = [f"{report['title']} ({report['neighboring_relation']}, δ = {report['delta']:g})"]
    if report["claim"]:
        c = report["claim"]
        lines.append(f"claimed: ε = {c['epsilon']:g}, δ = {c['delta']:g}  [{c['source']}]")
    lines.append(f"{'route':<12}{'ε':>14}")
    for name, value in report["routes"].items():
        mark = "  <- tightest" if name == report["tightest"]["route"] else ""
        lines.append(f"{name:<12}{format_epsilon(value):>14}{mark}")
    if report.get("lower_bound") is not None:
        lines.append(f"{'lower (PLD)':<12}{format_epsilon(report['lower_bound']):>14}")
    if report.get("curve"):
        points = ", ".join(f"ε({d}) = {format_epsilon(v)}" for d, v in report["curve"].items())
        lines.append(f"curve: {points}")
    for level, spends in report["per_level"].items():
        values = ", ".join(f"{label}: {format_epsilon(v)}" for label, v in spends.items())
        lines.append(f"per {level}: {values}")
    if report["verdict"]:
        lines.append(f"δ at the claimed ε: {report['delta_at_claimed_epsilon']:.3g}")
        lines.append(f"verdict: {report['verdict']} (claim / accountant = {report['slack']:.3g})")
        lines.append(f"evidence: {report['evidence']}")
    return "\n".join(lines)


def render_markdown(report: Mapping[str, Any]) -> str:
    """A Markdown page of :func:`budget_report`.

    Parameters
    ----------
    report : mapping
        A report returned by :func:`budget_report`.

    Returns
    -------
    str
        A Markdown page ending with a newline.
    """
    lines = [
        f"# Privacy budget: {report['title']}",
        "",
        (
            f"Neighboring relation `{report['neighboring_relation']}`, "
            f"disjoint levels {report['disjoint']}, δ = {report['delta']:g}. "
            f"Source: `{report['source']}`."
        ),
        "",
    ]
    if report["claim"]:
        c = report["claim"]
        lines += [
            (
                f"**Claim:** ε = {c['epsilon']:g}, δ = {c['delta']:g} ({c['source']}). "
                f"**Verdict: {report['verdict']}** (claim / accountant = {report['slack']:.3g}): "
                f"{report['evidence']}."
            ),
            "",
        ]
    lines += ["| route | ε |", "|---|---|"]
    for name, value in report["routes"].items():
        bold = "**" if name == report["tightest"]["route"] else ""
        lines.append(f"| {bold}{name}{bold} | {bold}{format_epsilon(value)}{bold} |")
    if report.get("lower_bound") is not None:
        lines.append(
            f"| lower bracket (optimistic PLD) | {format_epsilon(report['lower_bound'])} |"
        )
    if report.get("curve"):
        lines += ["", "| δ | tightest ε |", "|---|---|"]
        lines += [f"| {d} | {format_epsilon(v)} |" for d, v in report["curve"].items()]
    for level, spends in report["per_level"].items():
        lines += ["", f"## Spend per {level}", "", f"| {level} | ε |", "|---|---|"]
        lines += [f"| {label} | {format_epsilon(v)} |" for label, v in spends.items()]
    lines += ["", "## Releases", "", "| name | event | per | count |", "|---|---|---|---|"]
    for r in report["releases"]:
        lines.append(f"| {r['name']} | `{r['event']}` | {r['per']} | {r['count']} |")
    return "\n".join(lines) + "\n"


def store_report(
    path: str | Path, *, delta: float | None = None, key: bytes | None = None
) -> dict[str, Any]:
    """What a running deployment has spent so far, read from its ledger store.

    Parameters
    ----------
    path : str or Path
        A ledger store written by ``Accountant(..., store=path)``
        (:mod:`fedpriv.privacy.ledger.store`); other processes may still be charging it.
    delta : float, optional
        δ at which ε is reported; default the budget's δ (0 for a pure budget or
        none).
    key : bytes, optional
        The store's HMAC key, if it was created with one.

    Returns
    -------
    dict
        The keys of :func:`budget_report` (``routes``, ``tightest``, ``lower_bound``,
        ``curve``, ``per_level`` over every key level, ``releases`` grouped by event;
        ``claim`` and ``verdict`` are None) plus ``budget`` (its fields: {epsilon,
        delta}, {rho} or {mu}; or None), ``spent`` and ``remaining``
        (:meth:`~fedpriv.privacy.ledger.budget.Odometer.spent` and
        ``remaining``: ε at the budget's δ, or ρ or μ for a zCDP or Gaussian-DP budget),
        ``n_charges``, ``n_draws``, ``fedpriv_version``, ``schema_version``.

    Raises
    ------
    FileNotFoundError, StoreFormatError
        If ``path`` is missing or not a readable ledger store.
    ValueError
        If ``delta`` is outside [0, 1).
    """
    store = open_store(path, key=key)
    meta = store.meta
    store.close()
    accountant = Accountant.open(path, key=key)
    try:
        budget = accountant.odometer.budget
        if delta is None:
            delta = getattr(budget, "delta", 0.0)
        bounds = _bounds_at(accountant, delta)
        epsilon = bounds["tightest"]["epsilon"]
        charges = accountant.ledger.charges
        report: dict[str, Any] = {
            "title": f"ledger {Path(path).name}",
            "source": str(path),
            "neighboring_relation": accountant.neighboring_relation.value,
            "disjoint": list(accountant.ledger.disjoint),
            "sequential": list(accountant.ledger.sequential),
            "delta": delta,
            **bounds,
            "per_level": _store_per_level(accountant, charges, delta),
            "releases": _store_releases(accountant),
            "budget": None if budget is None else dataclasses.asdict(budget),
            "spent": accountant.odometer.spent() if budget is not None else epsilon,
            "remaining": accountant.odometer.remaining(),
            "n_charges": len(charges),
            "n_draws": accountant.ledger.n_draws,
            "fedpriv_version": meta.get("fedpriv_version"),
            "schema_version": int(meta.get("schema_version", 0)),
            "claim": None,
            "verdict": None,
        }
    finally:
        accountant.store.close()
    return report


def _store_per_level(
    accountant: Accountant, charges: Any, delta: float
) -> dict[str, dict[str, float]]:
    """Tightest ε at ``delta`` of the charges carrying each label of each level."""
    per_level: dict[str, dict[str, float]] = {}
    for level in accountant.ledger.levels:
        if level not in charges or charges.empty:
            continue
        labels = sorted({label for label in charges[level].dropna()}, key=repr)
        per_level[level] = {
            str(label): accountant.get_epsilon(delta, where={level: label}) for label in labels
        }
    return per_level


def _store_releases(accountant: Accountant) -> list[dict[str, Any]]:
    """One row per distinct event: the cells it was charged to, and their labels."""
    grouped: dict[Any, list[dict[str, np.ndarray]]] = {}
    for event, arrays in accountant.ledger.rows():  # the ledger rows, in charge order
        grouped.setdefault(event, []).append(arrays)
    rows = []
    for event, charges in grouped.items():
        levels = sorted({level for arrays in charges for level in arrays})
        per = {
            level: len(
                {label for arrays in charges if level in arrays for label in arrays[level].tolist()}
            )
            for level in levels
        }
        rows.append(
            {
                "name": type(event).__name__,
                "event": repr(event),
                "per": per,
                "count": sum(max(a.size for a in arrays.values()) for arrays in charges),
            }
        )
    return rows


def _store_summary(report: Mapping[str, Any]) -> list[str]:
    """The lines a store report adds: what was charged and the budget left."""
    lines = [
        (
            f"charges: {report['n_charges']} cells, {report['n_draws']} noise draws "
            f"(fedpriv {report['fedpriv_version']}, schema {report['schema_version']})"
        )
    ]
    if report["budget"] is not None:
        budget = report["budget"]
        if "rho" in budget:  # a zCDP budget: spent and remaining are ρ
            cap = f"ρ = {budget['rho']:g} (zCDP)"
        elif "mu" in budget:  # a Gaussian-DP budget: spent and remaining are μ
            cap = f"μ = {budget['mu']:g} (Gaussian DP)"
        else:
            cap = f"ε = {budget['epsilon']:g} at δ = {budget.get('delta', 0.0):g}"
        lines.append(
            f"budget: {cap}; spent {format_epsilon(report['spent'])}, "
            f"remaining {format_epsilon(report['remaining'])}"
        )
    return lines


def render_store_text(report: Mapping[str, Any]) -> str:
    """A plain-text table of :func:`store_report`: :func:`render_text` plus the budget.

    Parameters
    ----------
    report : mapping
        A report returned by :func:`store_report`.

    Returns
    -------
    str
        No trailing newline.
    """
    return "\n".join([render_text(report), *_store_summary(report)])


def render_store_markdown(report: Mapping[str, Any]) -> str:
    """A Markdown page of :func:`store_report`: :func:`render_markdown` plus the budget.

    Parameters
    ----------
    report : mapping
        A report returned by :func:`store_report`.

    Returns
    -------
    str
        A Markdown page ending with a newline.
    """
    summary = "\n".join(f"- {line}" for line in _store_summary(report))
    return render_markdown(report) + f"\n## Spent so far\n\n{summary}\n"
