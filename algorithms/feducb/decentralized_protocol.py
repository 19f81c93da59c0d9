"""One round of decentralized FedUCB (Alg. 3), as named steps on a batch of runs.

The protocol, its readings and its accounting are documented in
:mod:`fedpriv.algorithms.feducb.decentralized`; this module holds the state of a batch
of runs and advances it one round at a time: messages hop (step 1), agents act on
their current set (step 2), decide what to release (step 3: Alg. 3 line 6's test, or
the fixed clock), read the messages received (step 4: lines 12–24) and release,
store and broadcast (step 5).
"""

from __future__ import annotations

import math

import numpy as np
from fedpriv.algorithms.feducb.adaptivity import leaf_reach
from fedpriv.algorithms.feducb.network import ReleaseStore, build_transcript
from fedpriv.algorithms.feducb.oful import (
    cholesky_and_logdet,
    inverse_and_logdet,
    inverse_from_cholesky,
    sherman_morrison_update,
)
from fedpriv.algorithms.seeding import Stream, spawn_stream_rngs
from fedpriv.privacy.accounting.events import NonPrivate
from fedpriv.privacy.errors import CapacityExceededError
from fedpriv.privacy.ledger.accountant import Accountant
from fedpriv.privacy.mechanisms.matrix_tree import MatrixTreePrivatizer
from fedpriv.privacy.relations import NeighboringRelation

__all__ = ["SCHEDULES", "SYNC_TIMING_REASON", "DecentralizedProtocol"]

#: When agents release: Alg. 3's line-6 requests, or a data-independent clock.
SCHEDULES = ("adaptive", "fixed")
_REQUEST, _RELEASE = 0, 1
#: ``cause`` codes of the release log (see :func:`~fedpriv.algorithms.feducb.network.build_transcript`).
_CAUSE_REQUEST, _CAUSE_SCHEDULE = 1, 2
#: Reason of the NonPrivate charge of the raw-data request decisions.
SYNC_TIMING_REASON = (
    "sync requests: Alg. 3 line 6's log-det test on each agent's raw local Gram "
    "matrix decides when Synchronize(i, g, t) is broadcast (Alg. 3 lines 6-10)"
)


class DecentralizedProtocol:
    """State of a batch of decentralized runs, advanced one round at a time.

    Built by :func:`fedpriv.algorithms.feducb.decentralized.run_feducb_decentralized`
    from its validated ``setup`` and ``noise`` (calibration) dictionaries. Arrays are indexed ``(trial b, agent i, set g, ...)``; ``latest[b, i, j, g]`` is
    the id of the last release of peer ``j``'s set ``g`` that ``i`` accepted.
    """

    def __init__(
        self, setup: dict, noise: dict, *, root, record: bool, failure_probability: float
    ) -> None:
        self.setup, self.noise, self.record = setup, noise, record
        self.failure_probability = failure_probability
        tables = setup["tables"]
        self.spec = tables.spec
        n_trials, n_agents, d, horizon = (
            tables.n_trials,
            tables.n_agents,
            tables.dim,
            tables.horizon,
        )
        self.n_trials, self.n_agents, self.d, self.horizon = n_trials, n_agents, d, horizon
        self.gamma = gamma = setup["gamma"]
        self.shape = shape = (n_trials, n_agents, gamma)
        self._open_accounting(root)
        eye = self.eye = np.eye(d)
        self.store = ReleaseStore(d, noise["placeholder"])
        self.latest = np.zeros((n_trials, n_agents, n_agents, gamma), dtype=np.int64)  # ids
        self.latest_t = np.full((n_trials, n_agents, n_agents, gamma), -1, dtype=np.int64)
        self.s_gram = np.broadcast_to(
            (noise["base"] + setup["clique_size"] * noise["placeholder"])[None, :, None, None, None]
            * eye,
            shape + (d, d),
        ).copy()
        self.s_vec = np.zeros(shape + (d,))
        self.shift_w = n_agents * (noise["rho_max"] - noise["rho_min"]) * eye
        self.a_inv, self.logdet_v = inverse_and_logdet(self.s_gram)  # V = S + U, rank-one updates
        self.w_inv, self.logdet_w = inverse_and_logdet(self.s_gram + self.shift_w)  # line 6's W
        self.logdet_s = self.logdet_v.copy()
        # refreshed (b, i, g) whose inverse is not formed yet, and their Cholesky factors
        self.chol_v, self.chol_w = np.zeros(shape + (d, d)), np.zeros(shape + (d, d))
        self.stale_v, self.stale_w = np.zeros(shape, dtype=bool), np.zeros(shape, dtype=bool)
        self.gram = np.zeros(shape + (d, d))
        self.u_bar = np.zeros(shape + (d,))
        self.leaf = np.zeros(shape + (d + 1, d + 1))
        self.dt = np.zeros(shape, dtype=np.int64)
        self.pending = np.zeros(shape, dtype=bool)
        self.stopped = np.zeros(shape, dtype=bool)
        self.cumulative = np.zeros((n_trials, n_agents))
        self.curve = np.empty((n_trials, horizon))
        self.counts = {
            k: np.zeros(n_trials, dtype=np.int64)
            for k in ("requests", "releases", "deliveries", "transmissions")
        }
        # messages in flight: columns trial, kind, sender, subset, t_sent, release_id, hops
        self.flight = np.zeros((0, 7), dtype=np.int64)
        self.frontier = np.zeros((0, n_agents), dtype=bool)
        self.visited = np.zeros((0, n_agents), dtype=bool)
        self.logs: dict[str, list] = {"messages": [], "releases": [], "requests": []}
        self.actions = np.zeros((n_trials, n_agents, horizon), dtype=np.int16) if record else None
        self.rows_b = np.arange(n_trials)[:, None]
        self.rows_i = np.arange(n_agents)[None, :]

    def _open_accounting(self, root) -> None:
        """The accountant, one Privatizer tree per (trial, agent, set), the raw channel."""
        spec, shape, gamma, side = self.spec, self.shape, self.gamma, self.setup["side"]

        def new_accountant() -> Accountant:
            if spec.shared_users:
                return Accountant(
                    neighboring_relation=NeighboringRelation.USER_AT_ALL_AGENTS,
                    disjoint=("trial", "subset"),
                    sequential=("agent", "channel"),
                )
            return Accountant(
                neighboring_relation=NeighboringRelation.REPLACE_ONE_CONTEXT_REWARD,
                disjoint=("trial", "agent", "subset"),
                sequential=("channel",),
            )

        accountant = new_accountant()
        keys = {
            "trial": np.arange(self.n_trials)[:, None, None],
            "agent": np.arange(self.n_agents)[None, :, None],
            "subset": np.arange(gamma)[None, None, :],
        }
        # (trial, agent, set): the children stream_rng(root, trial, side, agent, NOISE).spawn(γ)
        sizes = {"n_trials": self.n_trials, "n_agents": self.n_agents, "n_children": gamma}
        rngs = spawn_stream_rngs(root, **sizes, side=side, stream=Stream.NOISE)
        noise = self.noise
        # fixed clock: one changed pair moves up to ⌈B/γ⌉ pairs of its set's leaf through
        # the agent's own actions on set g between releases (adaptivity.py)
        fixed = self.setup["schedule"] == "fixed"
        private = noise["noise"] > 0
        self.records_per_leaf = reach = (
            leaf_reach(sync_every=self.setup["sync_every"], horizon=self.horizon, gamma=gamma)
            if fixed and private
            else 1
        )
        self.privatizer = MatrixTreePrivatizer(
            stream_shape=shape,
            dim=self.d,
            capacity=noise["capacity"],
            noise_stddev=noise["noise"],
            shift=noise["shift"],
            frobenius_sensitivity=math.sqrt(2.0) * (spec.bound_x**2 + spec.bound_y**2),
            accountant=accountant,
            keys={**keys, "channel": "privatizer"},
            rng=rngs,
            secure=self.setup["secure_noise"],
            records_per_leaf=reach,
        )
        flat = {k: np.broadcast_to(v, shape).ravel() for k, v in keys.items()}
        self.mechanism_accountant = None
        if reach > 1:
            self.mechanism_accountant = new_accountant()
            self.mechanism_accountant.spend(
                self.privatizer.event_for(1), key={**flat, "channel": "privatizer"}
            )
        if not fixed:  # the fixed clock reads no data
            accountant.spend(
                NonPrivate(reason=SYNC_TIMING_REASON), key={**flat, "channel": "sync-timing"}
            )
        self.accountant = accountant

    # ------------------------------------------------------------ linear algebra
    def radius(self, log_det: np.ndarray) -> np.ndarray:
        """β of Prop. 2 with the clique's regulariser (or the tuned constant).

        Parameters
        ----------
        log_det : ndarray of float64
            ``log det V`` of each (trial, agent, set).

        Returns
        -------
        ndarray of float64, same shape
        """
        if self.setup["beta"] == "tuned":
            return np.full(log_det.shape, self.setup["beta_value"])
        radicand = (
            2.0 * math.log(2.0 / self.failure_probability)
            + log_det
            - self.d * np.log(self.noise["reg"])
        )
        return (
            self.spec.sub_gaussian * np.sqrt(np.maximum(radicand, 0.0)) + self.noise["privacy_term"]
        )

    def refresh(self, b: np.ndarray, i: np.ndarray, g: np.ndarray) -> None:
        """Recompute ``S, s`` of the given (b, i, g) from the stored releases.

        Parameters
        ----------
        b, i, g : ndarray of int64, shape (n,)
            Trials, agents and sets to refresh (duplicates allowed).
        """
        b, i, g = np.unravel_index(
            np.unique(np.ravel_multi_index((b, i, g), self.shape)), self.shape
        )
        member, store, eye = self.setup["member"], self.store, self.eye
        ids = self.latest[b, i, :, g]  # (n, M)
        weight = member[i][..., None, None]
        self.s_gram[b, i, g] = self.noise["base"] * eye + (store.gram[ids] * weight).sum(axis=1)
        self.s_vec[b, i, g] = (store.vec[ids] * member[i][..., None]).sum(axis=1)
        v_gram = self.s_gram[b, i, g] + self.gram[b, i, g]
        for matrix, inverse, logdet, factor, stale in (
            (v_gram, self.a_inv, self.logdet_v, self.chol_v, self.stale_v),
            (v_gram + self.shift_w, self.w_inv, self.logdet_w, self.chol_w, self.stale_w),
        ):
            found = cholesky_and_logdet(matrix)
            if found is None:  # not PD: inverse_and_logdet floors this batch, as before
                inverse[b, i, g], logdet[b, i, g] = inverse_and_logdet(matrix)
                stale[b, i, g] = False
            else:  # the inverse is formed when the set is next used (see `catch_up`)
                factor[b, i, g], logdet[b, i, g] = found
                stale[b, i, g] = True
        self.logdet_s[b, i, g] = np.linalg.slogdet(self.s_gram[b, i, g])[1]

    def catch_up(self, g: int) -> None:
        """Form the inverses of set ``g`` refreshed since its last use, from their
        last Cholesky factor: a (b, i, g) refreshed several times between two uses
        is inverted once, with the values an inversion at each refresh would leave.

        Parameters
        ----------
        g : int
            The set used this round.
        """
        for inverse, factor, stale in (
            (self.a_inv, self.chol_v, self.stale_v),
            (self.w_inv, self.chol_w, self.stale_w),
        ):
            b, i = np.nonzero(stale[:, :, g])
            if b.size:
                inverse[b, i, g] = inverse_from_cholesky(factor[b, i, g])
                stale[b, i, g] = False

    # ------------------------------------------------------------ one round
    def play_round(self, t: int, contexts, rewards, means) -> None:
        """Round ``t``: hop, act, decide (line 6 or the clock), receive, release.

        Parameters
        ----------
        t : int
            Round, 0-based.
        contexts : ndarray of float64, shape (n_trials, n_agents, n_arms, dim)
            This round's decision sets.
        rewards, means : ndarray of float64, shape (n_trials, n_agents, n_arms)
            This round's rewards and expected rewards.
        """
        g_now = t % self.gamma
        delivered, arrived = self._hop()
        self._act(t, g_now, contexts, rewards, means)
        release, request, cause = self._decide(t, g_now)
        if delivered.shape[0]:
            self._receive(t, delivered, arrived, release)
        if self.setup["respond"] == "next_use":
            release[:, :, g_now] |= self.pending[:, :, g_now]
            self.pending[:, :, g_now] = False
        self._release(t, g_now, release, request, cause)

    def _hop(self) -> tuple[np.ndarray, np.ndarray | None]:
        """Step 1: one hop for every message in flight (sent at rounds < t)."""
        delivered = np.zeros((0, self.n_agents), dtype=bool)
        arrived = None
        flight = self.flight
        if flight.shape[0]:
            np.add.at(
                self.counts["transmissions"], flight[:, 0], self.frontier @ self.setup["degree"]
            )
            reach = (self.frontier.astype(np.int64) @ self.setup["adjacency"] > 0) & ~self.visited
            self.visited |= reach
            flight[:, 6] += 1
            delivered, arrived = reach, flight.copy()
            keep = (flight[:, 6] < self.gamma) & reach.any(axis=1)
            self.flight, self.frontier, self.visited = flight[keep], reach[keep], self.visited[keep]
        return delivered, arrived

    def _act(self, t: int, g_now: int, contexts, rewards, means) -> None:
        """Step 2: act optimistically on set ``g_now`` and add the pair to ``U, ū, Q``."""
        rows_b, rows_i = self.rows_b, self.rows_i
        self.catch_up(g_now)
        inv = self.a_inv[:, :, g_now]  # a view: updated in place below
        theta = np.matmul(inv, (self.s_vec[:, :, g_now] + self.u_bar[:, :, g_now])[..., None])[
            ..., 0
        ]
        ax = np.matmul(contexts, inv)
        width = np.sqrt(np.maximum(np.einsum("jikd,jikd->jik", ax, contexts), 0.0))
        mean = np.einsum("jikd,jid->jik", contexts, theta)
        arm = np.argmax(mean + self.radius(self.logdet_v[:, :, g_now])[..., None] * width, axis=-1)
        x = contexts[rows_b, rows_i, arm]
        y = rewards[rows_b, rows_i, arm]
        self.cumulative += means.max(axis=-1) - means[rows_b, rows_i, arm]
        self.curve[:, t] = self.cumulative.mean(axis=1)
        if self.record:
            self.actions[:, :, t] = arm
        self.gram[:, :, g_now] += np.einsum("...i,...j->...ij", x, x)  # outer products
        self.u_bar[:, :, g_now] += y[..., None] * x
        vv = np.concatenate([x, y[..., None]], axis=-1)
        self.leaf[:, :, g_now] += np.einsum("...i,...j->...ij", vv, vv)
        self.logdet_v[:, :, g_now] += np.log1p(sherman_morrison_update(inv, x))
        self.logdet_w[:, :, g_now] += np.log1p(sherman_morrison_update(self.w_inv[:, :, g_now], x))

    def _decide(self, t: int, g_now: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Step 3: ``(release, request, cause)`` masks of shape (n_trials, n_agents, γ).

        Adaptive: line 6's test on raw data, ``W = V + x xᵀ + M (ρ_max − ρ_min) I``,
        requests set ``g_now`` (cause 1). Fixed: at the end of rounds ``B-1, 2B-1,
        ...`` every agent releases every set (cause 2); nothing is requested.
        """
        if self.setup["schedule"] == "fixed":
            request = np.zeros(self.shape[:2], dtype=bool)
            tick = (t + 1) % self.setup["sync_every"] == 0
            release = np.full(self.shape, tick) & ~self.stopped
            return release, request, release.astype(np.int64) * _CAUSE_SCHEDULE
        limit = self.noise["threshold"] / (
            (self.dt[:, :, g_now] + 1) * (1.0 + self.spec.bound_x**2)
        )
        gap = self.logdet_w[:, :, g_now] - self.logdet_s[:, :, g_now]
        request = (gap >= limit) & ~self.stopped[:, :, g_now]
        release = np.zeros(self.shape, dtype=bool)
        release[:, :, g_now] = request
        return release, request, release.astype(np.int64) * _CAUSE_REQUEST

    def _receive(
        self, t: int, delivered: np.ndarray, arrived: np.ndarray, release: np.ndarray
    ) -> None:
        """Step 4: messages received at ``t`` from the same clique with ``t' >= t − γ``
        (lines 12-24): requests mark ``release`` (or ``pending``), releases are stored."""
        member = self.setup["member"]
        m_idx, r_idx = np.nonzero(delivered)
        msg = arrived[m_idx]
        ok = member[msg[:, 2], r_idx] & (msg[:, 4] >= t - self.gamma)
        np.add.at(self.counts["deliveries"], msg[:, 0], 1)
        if self.record:
            self.logs["messages"].append(
                np.column_stack(
                    [msg[:, :5], r_idx, np.full(r_idx.size, t), msg[:, 6], msg[:, 5], ok]
                )
            )
        req = ok & (msg[:, 1] == _REQUEST)
        if self.setup["respond"] == "receipt":
            release[msg[req, 0], r_idx[req], msg[req, 3]] = True
        else:
            self.pending[msg[req, 0], r_idx[req], msg[req, 3]] = True
        rel = ok & (msg[:, 1] == _RELEASE)
        if rel.any():
            b, i, j, g = msg[rel, 0], r_idx[rel], msg[rel, 2], msg[rel, 3]
            newer = msg[rel, 4] > self.latest_t[b, i, j, g]
            b, i, j, g = b[newer], i[newer], j[newer], g[newer]
            self.latest[b, i, j, g] = msg[rel, 5][newer]
            self.latest_t[b, i, j, g] = msg[rel, 4][newer]
            self.refresh(b, i, g)

    def _check_capacity(self, t: int, release: np.ndarray) -> np.ndarray:
        """``release`` without (agent, set) trees that are full (raise, or stop them)."""
        release &= ~self.stopped
        full = release & (self.privatizer.remaining_capacity <= 0)
        if full.any():
            if self.setup["on_capacity"] == "raise":
                raise CapacityExceededError(
                    f"round {t}: an (agent, set) tree asked for leaf {self.noise['capacity'] + 1} "
                    f"past its capacity {self.noise['capacity']} (m = {self.privatizer.depth}); "
                    "use respond='next_use', a larger threshold, or on_capacity='stop'."
                )
            self.stopped |= full
            release &= ~full
        return release

    def _release(
        self, t: int, g_now: int, release: np.ndarray, request: np.ndarray, cause: np.ndarray
    ) -> None:
        """Step 5: Privatizer releases, own storage, resets, broadcasts."""
        release = self._check_capacity(t, release)
        self.dt[:, :, g_now] += 1
        if not release.any():
            return
        u_hat, small = self.privatizer.release(self.leaf, release)
        b, i, g = np.nonzero(release)
        ids = self.store.add(u_hat[b, i, g], small[b, i, g])
        self.latest[b, i, i, g], self.latest_t[b, i, i, g] = ids, t
        self.gram[b, i, g], self.u_bar[b, i, g], self.leaf[b, i, g], self.dt[b, i, g] = (
            0.0,
            0.0,
            0.0,
            0,
        )
        self.refresh(b, i, g)
        np.add.at(self.counts["releases"], b, 1)
        new = np.column_stack(
            [
                b,
                np.full(b.size, _RELEASE),
                i,
                g,
                np.full(b.size, t),
                ids,
                np.zeros(b.size, dtype=np.int64),
            ]
        )
        rb, ri = np.nonzero(request)
        np.add.at(self.counts["requests"], rb, 1)
        req_msgs = np.column_stack(
            [
                rb,
                np.full(rb.size, _REQUEST),
                ri,
                np.full(rb.size, g_now),
                np.full(rb.size, t),
                np.full(rb.size, -1),
                np.zeros(rb.size, dtype=np.int64),
            ]
        )
        new = np.concatenate([req_msgs, new]).astype(np.int64)
        start = np.zeros((new.shape[0], self.n_agents), dtype=bool)
        start[np.arange(new.shape[0]), new[:, 2]] = True
        self.flight = np.concatenate([self.flight, new])
        self.frontier = np.concatenate([self.frontier, start])
        self.visited = np.concatenate([self.visited, start])
        if self.record:
            self.logs["releases"].append(
                np.column_stack([ids, b, i, g, np.full(b.size, t), cause[b, i, g]])
            )
            self.logs["requests"].append(
                np.column_stack([rb, ri, np.full(rb.size, g_now), np.full(rb.size, t)])
            )

    def outcome(self, *, delta: float, failure_probability: float, calibration: str) -> dict:
        """The fields of the run's record (transcript only with ``record=True``).

        Parameters
        ----------
        delta : float
            The claim's δ.
        failure_probability : float
            α of Prop. 2 and 4.
        calibration : str
            The noise calibration used.

        Returns
        -------
        dict
            Keyword arguments of :class:`DecentralizedFedUCBRun`.
        """
        setup, noise, spec = self.setup, self.noise, self.spec
        transcript = build_transcript(self.logs, self.store, self.actions) if self.record else None
        private = noise["cal"] is not None
        setting = {
            "n_agents": self.n_agents,
            "n_arms": setup["tables"].n_arms,
            "dim": self.d,
            "horizon": self.horizon,
            "n_trials": self.n_trials,
            "reward": spec.reward,
            "shared_users": spec.shared_users,
            "gamma": self.gamma,
            "respond": setup["respond"],
            "beta": setup["beta"],
            "beta_value": setup["beta_value"],
            "failure_probability": failure_probability,
            "n_cliques": len(setup["cover"]),
            "epsilon": setup["epsilon"],
            "delta": delta if private else 0.0,
            "calibration": calibration if private else "none",
            "schedule": setup["schedule"],
            "sync_every": setup["sync_every"],
        }
        if setup["secure_noise"] and private:  # only when set: default settings unchanged
            setting["secure_noise"] = True
        counts = self.counts
        return {
            "setting": setting,
            "regret_curve": self.curve,
            "final_regret": self.cumulative,
            "n_requests": counts["requests"],
            "n_releases": counts["releases"],
            "n_deliveries": counts["deliveries"],
            "n_transmissions": counts["transmissions"],
            "threshold": float(noise["threshold"]),
            "gamma": self.gamma,
            "tree_depth": self.privatizer.depth,
            "capacity": noise["capacity"],
            "cover": setup["cover"],
            "calibration": noise["cal"],
            "accountant": self.accountant,
            "transcript": transcript,
            "records_per_leaf": self.records_per_leaf,
            "mechanism_accountant": self.mechanism_accountant,
            "schedule": setup["schedule"],
            "sync_every": setup["sync_every"],
        }
