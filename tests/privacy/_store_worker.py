"""Child process for the ledger-store tests (run as a script, never imported by pytest).

``write PATH``
    Charge step ``i`` (continuing after the last step in the store) forever: one
    ``spend`` with key arrays of :func:`step_event` to agents 0, 1, 2, printing ``charge i`` after
    its commit, then one ``record_draws`` block, printing ``draws i``. The parent
    kills it with SIGKILL.
``race PATH WORKER N_ATTEMPTS GO_FILE``
    Print ``ready``, wait for ``GO_FILE``, then try ``N_ATTEMPTS`` charges of
    ``Laplace(scale=16)`` (ε = 1/16) to agent 0 under the store's budget, printing
    ``accepted`` or ``refused`` for each.
``churn PATH WORKER``
    Reopen the store with its configuration (``store_synchronous="normal"``), print
    ``ready``, then for every byte read from stdin record one block of draws and,
    every tenth time, also charge ``Laplace(scale=1000)`` to ``{"agent": WORKER}``,
    each one committed transaction; exit at the end of stdin. (The parent paces the
    writes, so the ledger it verifies stays small.)
"""

from __future__ import annotations

import os
import sys
import time

from fedpriv.privacy import Accountant, PureDP
from fedpriv.privacy.accounting import events
from fedpriv.privacy.errors import BudgetExceededError

__all__ = ["WRITER_LEVELS", "step_event"]

#: Configuration of the ``write`` mode's accountant.
WRITER_LEVELS = {"disjoint": ("agent",), "sequential": ("step",)}
#: Budget of the ``race`` mode (16 charges of ε = 1/16 fit exactly).
RACE_BUDGET = PureDP(1.0)


def step_event(step: int) -> events.Laplace:
    """The event charged at ``step`` by the writer (distinct neighbours differ)."""
    return events.Laplace(scale=1.0 + step % 5, l1_sensitivity=1.0 + step % 3)


def _write(path: str) -> None:
    accountant = Accountant(**WRITER_LEVELS, store=path)
    charges, ledger = accountant.ledger.charges, accountant.ledger.draws
    step = int(charges["step"].max()) + 1 if len(charges) else 0
    if len(ledger) and ledger["step"].max() < step - 1:  # killed between the two
        _draw(accountant, step - 1)
    while True:
        accountant.spend(step_event(step), key={"agent": [0, 1, 2], "step": step})
        print(f"charge {step}", flush=True)
        _draw(accountant, step)
        step += 1


def _draw(accountant: Accountant, step: int) -> None:
    accountant.ledger.record_draws(
        keys={"agent": [0, 1, 2], "step": step},
        node=[1, 2, 3],
        level=0,
        scale=1.0 + step % 5,
        l1_sensitivity=1.0,
    )
    print(f"draws {step}", flush=True)


def _race(path: str, worker: int, n_attempts: int, go_file: str) -> None:
    accountant = Accountant(
        disjoint=("agent",), sequential=("worker",), budget=RACE_BUDGET, store=path
    )
    print("ready", flush=True)
    while not os.path.exists(go_file):
        time.sleep(0.001)
    for _ in range(n_attempts):
        try:
            accountant.spend(events.Laplace(scale=16.0), key={"agent": 0, "worker": worker})
        except BudgetExceededError:
            print("refused", flush=True)
        else:
            print("accepted", flush=True)
    accountant.store.close()


def _churn(path: str, worker: int) -> None:
    accountant = Accountant.open(path, store_synchronous="normal")
    print("ready", flush=True)
    step = 0
    while sys.stdin.buffer.read(1):
        accountant.ledger.record_draws(
            keys={"agent": worker}, node=step, level=0, scale=1000.0, l1_sensitivity=1.0
        )
        if step % 10 == 0:
            accountant.spend(events.Laplace(scale=1000.0), key={"agent": worker})
        step += 1
    accountant.store.close()


if __name__ == "__main__":
    mode, store_path, *rest = sys.argv[1:]
    if mode == "write":
        _write(store_path)
    elif mode == "churn":
        _churn(store_path, int(rest[0]))
    else:
        _race(store_path, int(rest[0]), int(rest[1]), rest[2])
