"""FedUCB (Dubey & Pentland, NeurIPS 2020) and its LinUCB/OFUL baselines."""

__all__: list[str] = []
