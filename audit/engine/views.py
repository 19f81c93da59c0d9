"""What each claim protects: the observer and the outputs the paper's definition names.

A verdict is about a *view* (docs/reference/verdicts.md): the observer of the
paper's privacy definition and exactly the outputs it receives. The accountant is
charged for every release that reaches the view and nothing else, and the audits
distinguish the two worlds from those outputs only, never from a component that
releases more (a tree counter that publishes every prefix, a Privatizer fed an oblivious
stream). Each paper family declares the views of its rows (``Family(views=...)``, in
``audit/families/<key>/views.py``) by the pattern of their keys, and
:func:`fedpriv.audit.claims.register.view_of` finds a row's; the view is printed in
``claims.json`` and ``claims.md`` beside the audit's channel.

Each view quotes the definition it comes from, so a reader can check it against the
paper; where the row reads the paper one way among several, the row's ``reading`` says so.
"""

from __future__ import annotations

import dataclasses

__all__ = ["View"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class View:
    """The observer of a privacy definition and the outputs it receives.

    Attributes
    ----------
    observer : str
        Who sees the outputs (the adversary of the definition).
    outputs : tuple of str
        Exactly the outputs that observer receives and the definition protects.
    definition : str
        The definition it comes from, cited in the paper's own terms.
    """

    observer: str
    outputs: tuple[str, ...]
    definition: str

    def __post_init__(self) -> None:
        if not self.observer.strip() or not self.outputs or not self.definition.strip():
            raise ValueError("a View needs an observer, at least one output and a definition.")

    def describe(self) -> str:
        """One line: ``observer: output; output``."""
        return f"{self.observer}: " + "; ".join(self.outputs)

    def to_dict(self) -> dict[str, object]:
        """The ``claims.json`` record."""
        return {
            "observer": self.observer,
            "outputs": list(self.outputs),
            "definition": self.definition,
        }
