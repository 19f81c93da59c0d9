"""The ``fedpriv verify`` options the families' attachments declare: a static mirror.

Each family's registration declares its attachments' options
(``Family.attachments``, :class:`fedpriv.audit.claims.attachment.Option`);
``fedpriv verify --help`` lists them under the family's heading. The mirror exists only
so that ``--help`` imports no registration while importing one imports NumPy through
``fedpriv.audit``; ``tests/audit/test_attachment.py`` checks that it equals what the
registrations declare. Once a registration imports nothing heavy, ``cli/verify.py`` can
read them directly and this module goes.
"""

from __future__ import annotations

__all__ = ["VERIFY_OPTIONS"]

#: Attachment id -> (help heading ``"<key> (<title>): <attachment title>"``, options as
#: ``(flag, field, kind, metavar, help)``).
VERIFY_OPTIONS: dict[str, tuple[str, tuple[tuple[str, str, str, str | None, str], ...]]] = {
    "gossip_fed_ucb/regret": (
        "gossip_fed_ucb (Zhu et al. 2021): Fed_UCB's regret runs, tree audits of the "
        "grid and ledger",
        (
            ("--data", "data_path", "path", "CSV",
             "UCI Diabetes-130 CSV or zip for the regret runs (default: the paper's "
             "synthetic bandit)"),
            ("--trials", "n_trials", "int", "N", "regret-run trials"),
            ("--regret-horizon", "regret_horizon", "int", "T", "regret-run horizon"),
        ),
    ),
}
