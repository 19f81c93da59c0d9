"""Installing a throwaway ``fedpriv.papers`` distribution for a test.

A distribution is "installed" by writing its module and its ``*.dist-info`` folder
(``METADATA`` and ``entry_points.txt``) into a folder that the test puts on
``sys.path`` (or on ``PYTHONPATH`` of a subprocess): the real
``importlib.metadata.entry_points`` then finds it, as it finds a wheel pip installed.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from fedpriv.audit.claims.family import ENTRY_POINT_GROUP

__all__ = ["install_distribution"]


def install_distribution(
    folder: Path, module: str, body: str, *, point: str, target: str = "FAMILY"
) -> Path:
    """Write the module ``module`` (text ``body``) and a dist-info declaring it.

    Parameters
    ----------
    folder : Path
        A folder the caller puts on ``sys.path``.
    module : str
        The module's name (a plain identifier).
    body : str
        Its source (dedented here).
    point : str
        The entry point's name in the group ``fedpriv.papers``.
    target : str
        The attribute the entry point names (default ``FAMILY``; empty: the module).

    Returns
    -------
    Path
        The dist-info folder.
    """
    (folder / f"{module}.py").write_text(textwrap.dedent(body), encoding="utf-8")
    info = folder / f"{module}-0.1.dist-info"
    info.mkdir()
    name = module.replace("_", "-")
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8"
    )
    value = f"{module}:{target}" if target else module
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\n{point} = {value}\n", encoding="utf-8"
    )
    return info
