"""The accounting core: guarantees and conversions, events, per-event handlers,
composition routes, running budget checks, binary-tree arithmetic, the typed accountant,
its SQLite ledger store and codec, and the verdict rule.

The other rooms of :mod:`fedpriv.privacy` build on it and never the other way round:
:mod:`~fedpriv.privacy.calibrations` (each paper's noise formulas),
:mod:`~fedpriv.privacy.mechanisms` (what draws noise and charges the accountant) and
:mod:`~fedpriv.privacy.deployment` (budget reports of a TOML deployment).
"""
