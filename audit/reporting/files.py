"""A folder's report files written all or nothing: staged, then renamed into place."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["staged_files"]


@contextlib.contextmanager
def staged_files(folder: str | os.PathLike, *, prefix: str = "report") -> Iterator[Path]:
    """Write files into a staging folder; move them into ``folder`` when the block ends.

    The staging folder is a hidden temporary folder inside ``folder`` (so every move is a
    rename on one file system, atomic per file). When the ``with`` block finishes, each
    file written into the staging folder replaces its namesake in ``folder``, in sorted
    order; if the block raises, nothing is moved and ``folder``'s previous files stay
    intact. The staging folder is removed in both cases. Other files of ``folder`` are
    left alone.

    Parameters
    ----------
    folder : str or PathLike
        The target folder (created with its parents if needed).
    prefix : str, default "report"
        Names the staging folder (``.<prefix>-XXXX``), for a reader who finds one left
        by a killed process.

    Yields
    ------
    Path
        The staging folder; write the files into it.

    Raises
    ------
    OSError
        If ``folder`` cannot be created or a file cannot be moved.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> with staged_files(out / "paper") as staging:
    ...     _ = (staging / "fig.md").write_text("# fig\\n")
    >>> sorted(p.name for p in (out / "paper").iterdir())
    ['fig.md']
    """
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{prefix}-", dir=target))
    try:
        yield staging
        for path in sorted(staging.iterdir()):
            os.replace(path, target / path.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
