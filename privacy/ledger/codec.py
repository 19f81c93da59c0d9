"""Lossless, typed JSON encoding of events and key labels (no pickle).

Used by the ledger store (:mod:`fedpriv.privacy.ledger.store`). An event is encoded as
canonical JSON ``{"type": class name, "fields": {...}}``: fields in sorted order,
nested events recursively, tuples as lists, floats by their shortest exact ``repr``.
The type registry is the accountant's own (:func:`fedpriv.privacy.accounting.routes.register_event`):
any event the accountant can price can be encoded, and a decoded name must be
registered (and unique) in the reading process. Every event type of fedpriv's own is
registered on import of this module (:mod:`fedpriv.privacy.accounting.builtin`); a
user's own must be registered before its store is opened. :func:`encode_event` checks that the
encoding decodes to an equal event of the same type before returning it.

An enum field (a :class:`~fedpriv.privacy.accounting.sampling.PoissonSampled` event's
``neighboring_relation``) is encoded as ``{"enum": class name, "value": its value}`` and
decoded through the enum classes named in the registered event types' field
annotations (so no module is imported by name from a stored file); every event type
the accountant accepts therefore round-trips (tests/privacy/test_codec.py draws one of
each registered type).

Key labels keep their NumPy dtype (bool, int, float, str or object); labels of
object arrays must be ``str``, ``int``, ``float``, ``bool`` or ``None``.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from collections.abc import Mapping
from typing import Any

import numpy as np
from fedpriv.privacy.accounting import builtin  # noqa: F401  (registers every built-in event type)
from fedpriv.privacy.accounting.handlers import REGISTRY
from fedpriv.privacy.errors import StoreFormatError

__all__ = [
    "decode_draws",
    "decode_event",
    "decode_keys",
    "encode_draws",
    "encode_event",
    "encode_keys",
]

_LABEL_TYPES = (str, int, float, bool, type(None))
_ARRAY_KINDS = frozenset("biufUO")


# ---------------------------------------------------------------------- events
def _registered_type(name: str) -> type:
    matches = [cls for cls in REGISTRY if cls.__qualname__ == name]
    if len(matches) != 1:
        problem = "is not registered" if not matches else "is ambiguous"
        raise StoreFormatError(
            f"event type {name!r} {problem}: register it with "
            "fedpriv.privacy.accounting.routes.register_event before opening the store."
        )
    return matches[0]


def _enum_types() -> dict[str, list[type]]:
    """Enum classes named in the field annotations of every registered event type
    (and the neighboring relation), by qualified name."""
    from fedpriv.privacy.relations import NeighboringRelation

    registered = tuple(REGISTRY)
    if _ENUM_CACHE and _ENUM_CACHE[0] == registered:
        return _ENUM_CACHE[1]
    found: dict[str, list[type]] = {NeighboringRelation.__qualname__: [NeighboringRelation]}
    for cls in registered:
        try:
            hints = typing.get_type_hints(cls)
        except Exception:  # an annotation this process cannot resolve names no enum
            continue
        stack = list(hints.values())
        while stack:
            hint = stack.pop()
            if isinstance(hint, type) and issubclass(hint, enum.Enum):
                known = found.setdefault(hint.__qualname__, [])
                if hint not in known:
                    known.append(hint)
            elif isinstance(hint, types.UnionType) or typing.get_origin(hint) is not None:
                stack.extend(typing.get_args(hint))
    _ENUM_CACHE[:] = [registered, found]
    return found


#: ``[registered types, enums by name]`` of the last :func:`_enum_types` call.
_ENUM_CACHE: list[Any] = []


def _decode_enum(tree: Mapping[str, Any]) -> enum.Enum:
    name = tree.get("enum")
    matches = _enum_types().get(name, []) if isinstance(name, str) else []
    if len(matches) != 1:
        problem = "is not an enum of a registered event type" if not matches else "is ambiguous"
        raise StoreFormatError(f"stored enum {name!r} {problem}.")
    try:
        return matches[0](tree["value"])
    except (ValueError, TypeError) as error:
        raise StoreFormatError(f"stored {name} value is invalid: {error}") from None


def _encode_value(value: Any, where: str) -> Any:
    if type(value) in REGISTRY:
        return _event_tree(value)
    if isinstance(value, enum.Enum):
        if not isinstance(value.value, _LABEL_TYPES):
            raise TypeError(
                f"event field `{where}` is an enum whose value of type "
                f"{type(value.value).__name__} cannot be stored."
            )
        return {"enum": type(value).__qualname__, "value": value.value}
    if isinstance(value, tuple):
        return [_encode_value(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, _LABEL_TYPES):
        return value
    raise TypeError(
        f"event field `{where}` of type {type(value).__name__} cannot be stored; "
        "allowed: str, int, float, bool, None, enums, tuples and registered events."
    )


def _event_tree(event: Any) -> dict[str, Any]:
    if not dataclasses.is_dataclass(event) or isinstance(event, type):
        raise TypeError(f"only dataclass events can be stored, got {type(event).__name__}.")
    name = type(event).__qualname__
    fields = {
        f.name: _encode_value(getattr(event, f.name), f"{name}.{f.name}")
        for f in dataclasses.fields(event)
        if f.init  # derived fields (e.g. a Gaussian's noise_multiplier) are rebuilt
    }
    return {"type": name, "fields": fields}


def _decode_value(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"enum", "value"}:
        return _decode_enum(value)
    if isinstance(value, dict):
        return _build_event(value)
    if isinstance(value, list):
        return tuple(_decode_value(v) for v in value)
    return value


def _build_event(tree: Mapping[str, Any]) -> Any:
    if set(tree) != {"type", "fields"} or not isinstance(tree["fields"], dict):
        raise StoreFormatError(f"malformed event record {tree!r}.")
    cls = _registered_type(tree["type"])
    fields = {name: _decode_value(value) for name, value in tree["fields"].items()}
    try:
        return cls(**fields)
    except (TypeError, ValueError) as error:
        raise StoreFormatError(f"stored {tree['type']} is invalid: {error}") from None


def encode_event(event: Any) -> str:
    """Canonical JSON of a registered, frozen dataclass event (lossless).

    Parameters
    ----------
    event : Event
        An event of a type registered with the codec.

    Returns
    -------
    str
        Compact JSON with sorted keys, so equal events encode to equal text.

    Raises
    ------
    TypeError
        If a field cannot be stored, or the encoding does not decode to an event
        equal to ``event`` (a type whose constructor changes its fields).

    Examples
    --------
    >>> from fedpriv.privacy import events
    >>> encode_event(events.Laplace(scale=2.0))
    '{"fields":{"l1_sensitivity":1.0,"scale":2.0},"type":"Laplace"}'
    """
    text = json.dumps(_event_tree(event), sort_keys=True, separators=(",", ":"))
    decoded = decode_event(text)
    if decoded != event or type(decoded) is not type(event):
        raise TypeError(
            f"{type(event).__name__} does not round-trip through its fields "
            f"({event!r} became {decoded!r}); it cannot be stored."
        )
    return text


def decode_event(text: str) -> Any:
    """Inverse of :func:`encode_event`.

    Parameters
    ----------
    text : str
        A record written by :func:`encode_event`.

    Returns
    -------
    Event
        An event equal to the encoded one.

    Raises
    ------
    StoreFormatError
        If ``text`` is not an event record, names an unregistered type, or its fields
        are invalid for that type.
    """
    try:
        tree = json.loads(text)
    except (TypeError, ValueError) as error:
        raise StoreFormatError(f"stored event is not JSON: {error}") from None
    if not isinstance(tree, dict):
        raise StoreFormatError(f"malformed event record {tree!r}.")
    return _build_event(tree)


# ---------------------------------------------------------------------- key arrays
def _encode_array(array: np.ndarray, where: str) -> list[Any]:
    if array.dtype.kind not in _ARRAY_KINDS:
        raise TypeError(
            f"labels of `{where}` have dtype {array.dtype}; a store keeps bool, int, "
            "float, str or object arrays."
        )
    values = array.tolist()
    if array.dtype.kind == "O":
        values = [v.item() if isinstance(v, np.generic) else v for v in values]
        bad = next((v for v in values if not isinstance(v, _LABEL_TYPES)), None)
        if bad is not None:
            raise TypeError(
                f"label {bad!r} of `{where}` has type {type(bad).__name__}; a store "
                "keeps str, int, float, bool or None labels."
            )
    return [array.dtype.str, values]


def encode_keys(arrays: Mapping[str, np.ndarray]) -> str:
    """JSON of ``{level: 1-D label array}`` keeping each array's dtype.

    Parameters
    ----------
    arrays : mapping of str to ndarray
        One 1-D label array per key level.

    Returns
    -------
    str
        Compact JSON ``{level: [dtype, values]}``.

    Raises
    ------
    TypeError
        If an array's dtype or an object label cannot be stored.
    """
    encoded = {level: _encode_array(np.asarray(a), level) for level, a in arrays.items()}
    return json.dumps(encoded, separators=(",", ":"), allow_nan=True)


def decode_keys(text: str) -> dict[str, np.ndarray]:
    """Inverse of :func:`encode_keys`.

    Parameters
    ----------
    text : str
        A record written by :func:`encode_keys`.

    Returns
    -------
    dict of str to ndarray
        The label arrays, each with its stored dtype.

    Raises
    ------
    StoreFormatError
        If ``text`` is not a key record.
    """
    try:
        encoded = json.loads(text)
        arrays = {}
        for level, (dtype, values) in encoded.items():
            array = np.empty(len(values), dtype=np.dtype(dtype))
            array[:] = values
            arrays[level] = array
        return arrays
    except (TypeError, ValueError, AttributeError) as error:
        raise StoreFormatError(f"malformed key record: {error}") from None


def encode_draws(block: Mapping[str, Any] | None) -> str | None:
    """JSON of an accountant's draw block (label arrays and ``(value, n)`` scalars).

    Parameters
    ----------
    block : mapping of str to Any, optional
        Label arrays and ``(value, n)`` scalars (scale, sensitivity) of one block of
        draw rows, or None.

    Returns
    -------
    str or None
        Compact JSON, or None for a None block.

    Raises
    ------
    TypeError
        If a label array cannot be stored (as :func:`encode_keys`).
    """
    if block is None:
        return None
    arrays = {k: v for k, v in block.items() if not isinstance(v, tuple)}
    scalars = {k: v[0] for k, v in block.items() if isinstance(v, tuple)}
    return json.dumps(
        {"arrays": json.loads(encode_keys(arrays)), "scalars": scalars}, separators=(",", ":")
    )


def decode_draws(text: str | None, n_draws: int) -> dict[str, Any] | None:
    """Inverse of :func:`encode_draws` for a block of ``n_draws`` rows.

    Parameters
    ----------
    text : str or None
        A record written by :func:`encode_draws`.
    n_draws : int
        Number of rows in the block (the ``n`` of every scalar).

    Returns
    -------
    dict of str to Any or None
        The block, or None for a None record.

    Raises
    ------
    StoreFormatError
        If ``text`` is not a draw record.
    """
    if text is None:
        return None
    try:
        record = json.loads(text)
        block: dict[str, Any] = decode_keys(json.dumps(record["arrays"]))
        block.update({k: (float(v), n_draws) for k, v in record["scalars"].items()})
    except (TypeError, ValueError, KeyError) as error:
        raise StoreFormatError(f"malformed draw record: {error}") from None
    return block
