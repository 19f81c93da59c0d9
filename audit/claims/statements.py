"""One plain-language sentence per register row, built from the row's own data.

The report page and ``claims.md`` name each claim by its register key
(``<family>/<algorithm>/<mode>/...``), which only a reader of the register can decode.
Each row also gets one sentence that says, in words, what is claimed for whom::

    Private UCB as written, 3 agents on a complete graph, 5 arms, T = 16, log₂ tree:
    claimed ε = 1-DP for one changed reward of an agent's stream, as seen by agent
    i's neighbours.

The subject is the algorithm's name in prose as its family registers it
(``Family.algorithm_names``, :func:`algorithm_names`), else its CLI name.

The sentence is generated, never written by hand, from the fields every row has: the
algorithm, the mode (the paper as written or fedpriv's corrected variant, with the
figure or reading it stands for), the setting, the neighboring relation, the claimed
guarantee, the coverage (the paper's claim, a channel outside it, no claim) and the
observer of the view (:mod:`fedpriv.audit.engine.views`, found from the key). It is
computed from a ``claims.json`` record (:func:`statement_of_record`) or from a
:class:`~fedpriv.audit.claims.claim.Claim` (:func:`statement`), so records merged from an
earlier run get one too. Setting items are rendered in words where a rule below knows
the key and as ``key = value`` otherwise, so a new register row always gets a sentence;
only :data:`QUIET_SETTINGS` (values derived from the rest of the setting) are left out.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "QUIET_SETTINGS",
    "algorithm_names",
    "statement",
    "statement_of_record",
    "structure_names",
]


def _union(field: str) -> dict[str, str]:
    """The union of one mapping field over the registered families, in family order."""
    from fedpriv.audit.claims.family import families

    out: dict[str, str] = {}
    for fam in families():
        out.update(getattr(fam, field))
    return out


def algorithm_names() -> dict[str, str]:
    """Every registered algorithm's name in prose (CLI name -> name), from the families.

    Returns
    -------
    dict of str to str
        The union of the registered families' ``algorithm_names``.
    """
    return _union("algorithm_names")


def structure_names() -> dict[str, str]:
    """Every registered communication structure's phrase, from the families.

    Returns
    -------
    dict of str to str
        The union of the registered families' ``structure_names``.
    """
    return _union("structure_names")


#: Setting keys left out of the sentence: each is computed from the other keys (the
#: node noise scale from ε, T and the log base by the paper's calibration) or is a
#: fixed implementation detail of the row's recipe.
QUIET_SETTINGS: frozenset[str] = frozenset(
    {"node_scale", "graph_seed", "count_field", "delay_convention"}
)

#: What one neighboring change is, per relation (``NeighboringRelation`` values).
_UNITS = {
    "replace_one_reward": "one changed reward of an agent's stream",
    "replace_one_context_reward": "one changed (context, reward) pair of an agent",
    "user_at_all_agents": "one user whose data is at every agent",
    "replace_one": "one changed entry (one action) of an agent's history",
    "add_or_remove_one": "one record added or removed",
}

_GRAPHS = {
    "complete": "a complete graph",
    "path": "a path graph",
    "ring": "a ring",
    "star": "a star graph",
    "erdos_renyi": "an Erdős–Rényi graph",
}


def _number(value: Any) -> str:
    """``1`` for 1.0, ``0.25``, ``10,000,000``, ``1e-05`` (4 significant digits)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return value
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isinf(value):
            return "∞"
        if value == int(value) and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:.4g}"
    return str(value)


def _setting_phrases(setting: dict[str, Any], claimed: dict | None) -> list[str]:
    """The setting in words, in the order of the row's setting.

    The setting's ε (and δ) are left out where they are the claimed guarantee's; where
    they differ (the claim composes them, or is a figure's), they are the parameters the
    algorithm is run with.
    """
    out: list[str] = []
    horizon = setting.get("horizon")
    claimed = claimed or {}
    same_eps = _number(setting.get("epsilon")) == _number(claimed.get("epsilon"))
    same_delta = _number(setting.get("delta")) == _number(claimed.get("delta"))
    for key, value in setting.items():
        if (
            key in QUIET_SETTINGS
            or (key == "epsilon" and same_eps)
            or (key == "delta" and same_eps and same_delta)
        ):
            continue
        if key == "n_agents":
            graph = setting.get("graph")
            text = f"{_number(value)} agents"
            if graph is not None:
                text += " on " + _GRAPHS.get(str(graph), f"a {graph} graph")
                if "graph_p" in setting:
                    text += f" (p = {_number(setting['graph_p'])})"
            out.append(text)
        elif key in ("graph", "graph_p") and "n_agents" in setting:
            continue  # said with the agents
        elif key == "n_arms":
            out.append(f"{_number(value)} arms")
        elif key == "horizon":
            out.append(f"T = {_number(value)}")
        elif key == "epsilon":
            out.append(f"run with ε = {_number(value)}")
        elif key == "delta":
            out.append(f"δ = {_number(value)}")
        elif key == "delta_prime":
            out.append(f"δ′ = {_number(value)}")
        elif key == "target_delta":
            out.append(f"target δ = {_number(value)}")
        elif key == "dim":
            out.append(f"d = {_number(value)}")
        elif key == "gamma":
            out.append(f"γ = {_number(value)}")
        elif key == "theta":
            out.append(f"ϑ = {_number(value)}")
        elif key == "structure":
            out.append(structure_names().get(str(value), f"{value} structure"))
        elif key == "schedule":
            out.append(f"{value} sync schedule")
        elif key == "sync_every":
            out.append(f"a sync every {_number(value)} rounds")
        elif key == "n_syncs":
            out.append(f"{_number(value)} syncs")
        elif key == "log_base":
            out.append(
                {"2": "log₂ tree", "e": "natural-log tree"}.get(
                    str(value), f"log base {value} tree"
                )
            )
        elif key == "released_prefixes":
            if horizon is not None and value == horizon:
                out.append("final estimate ϑ̃(T) also sent")
            elif horizon is None or value != horizon - 1:
                out.append(f"{_number(value)} prefixes released")
        elif key == "rounds":
            out.append(f"R = {_number(value)} communication rounds")
        elif key == "gap":
            out.append(f"gap Δ = {_number(value)}")
        elif key == "participation_rate":
            out.append(f"participation rate {_number(value)}")
        elif key == "components":
            out.append(f"{_number(value)} components")
        elif key == "table_ii_case":
            out.append(f"Table II case {_number(value)}")
        elif key == "rewards":
            out.append(f"{value} rewards")
        elif key == "canary":
            out.append(f"canary reward {_number(value)}")
        elif key == "scope":
            out.append(
                {"per-message": "one message", "composed": "composed over the run"}.get(
                    str(value), f"scope: {value}"
                )
            )
        elif key == "rule":
            out.append(f"{value} noise rule")
        elif key == "own_term":
            out.append(f"own term {value}")
        elif key == "composition":
            out.append(f"{value} composition")
        else:
            out.append(f"{key} = {_number(value)}")
    return out


def _guarantee(claimed: dict | None) -> str:
    """``ε = 1-DP`` or ``(ε = 1, δ = 0.1)-DP``."""
    if not claimed:
        return "no guarantee"
    eps, delta = claimed.get("epsilon"), claimed.get("delta") or 0.0
    if isinstance(delta, str):
        delta = float(delta)
    if not delta:
        return f"ε = {_number(eps)}-DP"
    return f"(ε = {_number(eps)}, δ = {_number(delta)})-DP"


def _variant(mode: str) -> str:
    """``as written`` / ``as corrected by fedpriv``, with the mode's qualifier
    (``paper (Fig. 1A setting)`` -> ``as written (Fig. 1A setting)``)."""
    mode = str(mode or "").strip()
    for word, said in (("paper", "as written"), ("corrected", "as corrected by fedpriv")):
        if mode.startswith(word):
            rest = mode[len(word) :].strip()
            if rest.startswith("(") and ")" in rest:  # unwrap the leading parenthesis
                close = rest.index(")")
                rest = rest[1:close] + rest[close + 1 :]
            rest = rest.lstrip(",; ").strip()
            return said + (f" ({rest})" if rest else "")
    return f"mode {mode}" if mode else "as written"


def _observer(key: str | None) -> str | None:
    """The observer of the row's view, or None when the key has none."""
    if not key:
        return None
    from fedpriv.audit.claims.register import view_of

    try:
        observer = view_of(key).observer
    except KeyError:  # a family registered outside the package declares its rows' views
        from fedpriv.audit.claims.register import claims_for

        view = next((e.view for e in claims_for(None) if e.key == key), None)
        if view is None:
            return None
        observer = view.observer
    # The parenthesis (which channel, or "not an observer of Definition 1") is said by
    # the algorithm's name and the coverage.
    return observer.split(" (")[0].strip() or observer


def statement_of_record(record: dict) -> str:
    """The sentence of one ``claims.json`` record.

    Parameters
    ----------
    record : dict
        A record with (any of) ``algorithm``, ``mode``, ``setting``,
        ``neighboring_relation`` (``relation`` in registers written before that
        name), ``claimed``, ``coverage`` and ``key``; missing fields are left out of
        the sentence.

    Returns
    -------
    str
        One sentence ending in a full stop, never empty.

    Examples
    --------
    >>> statement_of_record({"algorithm": "my-private-ucb", "mode": "paper",
    ...     "setting": {"horizon": 16, "epsilon": 1.0, "log_base": "2"},
    ...     "neighboring_relation": "replace_one_reward", "claimed": {"epsilon": 1.0, "delta": 0.0}})
    "my-private-ucb as written, T = 16, log₂ tree: claimed ε = 1-DP for one changed reward of an agent's stream."
    """
    algorithm = str(record.get("algorithm") or "the algorithm")
    subject = algorithm_names().get(algorithm, algorithm) + " " + _variant(record.get("mode"))
    setting = record.get("setting") if isinstance(record.get("setting"), dict) else {}
    claimed = record.get("claimed")
    phrases = [p for p in _setting_phrases(setting, claimed) if p not in subject]
    head = subject + (", " + ", ".join(phrases) if phrases else "")
    relation = str(record.get("neighboring_relation") or record.get("relation") or "")
    unit = _UNITS.get(relation, f"neighbours under {relation}" if relation else "one change")
    observer = _observer(record.get("key"))
    seen = f", as seen by {observer}" if observer else ""
    coverage = record.get("coverage") or "claim"
    leak = f"fedpriv measures how much {unit} leaks" + (f" to {observer}" if observer else "")
    if coverage == "no-claim":
        body = f"the paper claims no privacy; {leak}"
    elif coverage == "outside-claim":
        body = f"outside the paper's claim, which covers other outputs; {leak}"
    else:
        body = f"claimed {_guarantee(claimed)} for {unit}{seen}"
    return f"{head}: {body}."


def statement(claim, key: str | None = None) -> str:
    """The sentence of a :class:`~fedpriv.audit.claims.claim.Claim` (register ``key``
    gives the observer); the same as :func:`statement_of_record` on its record.

    Parameters
    ----------
    claim : Claim
        A registered claim.
    key : str, optional
        Its register key.

    Returns
    -------
    str
        One sentence in plain words.
    """
    record = {
        "algorithm": claim.algorithm,
        "mode": claim.mode,
        "setting": claim.setting_dict(),
        "neighboring_relation": claim.neighboring_relation.value,
        "coverage": claim.coverage,
        "key": key,
        "claimed": {"epsilon": float(claim.claimed.epsilon), "delta": claim.claimed_delta},
    }
    return statement_of_record(record)
