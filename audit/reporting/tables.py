"""GitHub Markdown tables of pandas DataFrames, one format for every report.

``pandas.DataFrame.to_markdown`` needs the optional ``tabulate`` package, which fedpriv
does not depend on, and pads its cells; the reports keep the compact form
``| a | b |`` with numbers to a fixed count of significant digits.
"""

from __future__ import annotations

import numbers
from typing import Any

import pandas as pd

__all__ = ["format_cell", "markdown_table"]


def format_cell(value: Any, *, digits: int = 4) -> str:
    """One table cell: a float to ``digits`` significant digits, anything else as ``str``.

    Parameters
    ----------
    value : object
        The cell's value. Floats (Python or NumPy) use the ``g`` format; ints, bools and
        strings are printed as they are.
    digits : int, default 4
        Significant digits of a float, >= 1.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If ``digits < 1``.

    Examples
    --------
    >>> format_cell(3.14159), format_cell(12345), format_cell("ring")
    ('3.142', '12345', 'ring')
    """
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise ValueError(f"`digits` must be an integer >= 1, got {digits!r}.")
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        return f"{value:.{digits}g}"
    return str(value)


def markdown_table(frame: pd.DataFrame, *, index: bool = True, digits: int = 4) -> str:
    """A GitHub Markdown table of ``frame``: header, separator, one line per row.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table. Column names are printed with ``str``.
    index : bool, default True
        Print the index as the first column, headed by its name (empty if unnamed).
    digits : int, default 4
        Significant digits of float cells (:func:`format_cell`).

    Returns
    -------
    str
        No trailing newline.

    Raises
    ------
    TypeError
        If ``frame`` is not a DataFrame.
    ValueError
        If ``digits < 1``.

    Examples
    --------
    >>> import pandas as pd
    >>> print(markdown_table(pd.DataFrame({"eps": [0.5, 1 / 3]}, index=["a", "b"])))
    |  | eps |
    |---|---|
    | a | 0.5 |
    | b | 0.3333 |
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"`frame` must be a pandas DataFrame, got {type(frame).__name__}.")
    header = [str(c) for c in frame.columns]
    rows = [list(row) for row in frame.itertuples(index=False, name=None)]
    if index:
        header = [str(frame.index.name or "")] + header
        rows = [[label, *row] for label, row in zip(frame.index, rows)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(format_cell(v, digits=digits) for v in row) + " |" for row in rows]
    return "\n".join(lines)
