"""Dubey & Pentland's cooperative UCB (AAMAS 2020) and its baselines."""

__all__: list[str] = []
