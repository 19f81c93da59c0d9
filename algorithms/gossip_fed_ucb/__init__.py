"""Gossip_UCB and Fed_UCB (Zhu, Zhu, Liu & Liu, SIGMETRICS 2021)."""

__all__: list[str] = []
