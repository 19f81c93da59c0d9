"""Li & Song's message transcripts: rows appended as tuples give the frames of dicts."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from fedpriv.algorithms.environments.bernoulli import BernoulliMAB
from fedpriv.algorithms.li_song.mab import run_cdp_mab, run_ddp_mab, run_hdp_mab

_COLUMNS = {
    "cdp": ["trial", "epoch", "time", "kind", "sender", "receiver", "origin", "arms", "content"],
    "ddp": ["trial", "epoch", "time", "kind", "sender", "receiver", "arms", "origin", "content"],
    "hdp": ["trial", "epoch", "arms", "time", "kind", "sender", "receiver", "origin", "content"],
}


def _run(structure: str):
    env = BernoulliMAB(np.array([[0.8, 0.5, 0.3]] * 4))
    common = {"horizon": 3000, "epsilon": 0.5, "n_trials": 6, "seed": 2, "record": "messages"}
    if structure == "cdp":
        return run_cdp_mab(env, participation_rate=0.5, **common)
    if structure == "ddp":
        return run_ddp_mab(env, nx.path_graph(4), **common)
    return run_hdp_mab(env, [nx.path_graph(3), nx.path_graph(1)], **common)


@pytest.mark.parametrize("structure", ["cdp", "ddp", "hdp"])
def test_message_frames_equal_the_frames_of_dict_rows(structure):
    """Same columns in the same order, dtypes and values as pandas' frame of the same
    records as dicts (how the transcripts were built before issue 23)."""
    frame = _run(structure).messages
    assert list(frame.columns) == _COLUMNS[structure]
    assert len(frame) > 0 and frame["epoch"].nunique() > 1
    records = [dict(zip(frame.columns, row, strict=True)) for row in frame.itertuples(index=False)]
    reference = pd.DataFrame(records)
    assert frame.equals(reference)
    assert (frame.dtypes == reference.dtypes).all()
    assert all(isinstance(c, tuple) for c in frame["content"])
