"""The accounting core, shaped like dp-accounting: guarantees and conversions, events
(dp-accounting interop, Poisson-sampled events), per-event handlers, composition routes,
binary-tree arithmetic, exact sums, and the verdict rule.

The other rooms of :mod:`fedpriv.privacy` build on it and never the other way round:
:mod:`~fedpriv.privacy.ledger` (the accountant, its running budget checks and store),
:mod:`~fedpriv.privacy.calibrations` (each paper's noise formulas),
:mod:`~fedpriv.privacy.mechanisms` (what draws noise and charges the accountant) and
:mod:`~fedpriv.privacy.deployment` (budget reports of a TOML deployment).
"""
