"""The accountant and its ledger: one row per charge, the running budget checks, and the
crash-safe SQLite store that shares a ledger between processes (with its typed codec).

It builds on :mod:`fedpriv.privacy.accounting` (guarantees, events, handlers, routes),
which never imports it; the mechanisms charge it.
"""
