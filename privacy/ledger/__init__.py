"""The accountant and its ledger: one row per charge, the running budget checks, and the
crash-safe SQLite store that shares a ledger between processes (with its typed codec).

:mod:`~fedpriv.privacy.ledger.accountant` holds the :class:`Accountant` core; the objects
reachable from it live beside it: :mod:`~fedpriv.privacy.ledger.ledger` (the ledger),
:mod:`~fedpriv.privacy.ledger.pricing` (routes and brackets),
:mod:`~fedpriv.privacy.ledger.budget` (the odometer), with :mod:`~fedpriv.privacy.ledger.cells` (key
labels and cells), :mod:`~fedpriv.privacy.ledger.running` (the incremental budget
check), :mod:`~fedpriv.privacy.ledger.store` and :mod:`~fedpriv.privacy.ledger.postgres`
(the stores, opened by :mod:`~fedpriv.privacy.ledger.backends`; the SQLite file in
:mod:`~fedpriv.privacy.ledger.sqlite_file`), :mod:`~fedpriv.privacy.ledger.integrity` (what both stores share) and
:mod:`~fedpriv.privacy.ledger.codec`.

It builds on :mod:`fedpriv.privacy.accounting` (guarantees, events, handlers, routes),
which never imports it; the mechanisms charge it.
"""
