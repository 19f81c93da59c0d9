"""The hospital environment of Zhu et al. from the UCI "Diabetes 130-US hospitals" data.

Zhu et al. (Section 5, "Real data", Fig. 2c) turn the diabetes encounters of Strack
et al. (2014) into a 3-agent, 5-arm Bernoulli bandit: the arm is the medication
group given at a steady dosage, the reward is 1 when the patient was readmitted
after more than 30 days, and the records are split between three hospitals. The
paper's preprocessing is in supplementary material that is not available, so every
rule it leaves open is decided here (paper's Section 5.2 is silent on them):

Arms (0-indexed; the paper numbers them 1 to 5)
    0. steady insulin;
    1. steady metformin;
    2. steady repaglinide, glipizide, rosiglitazone, acarbose, miglitol or
       troglitazone;
    3. steady nateglinide, chlorpropamide, glyburide, examide, glimepiride,
       acetohexamide, tolbutamide, pioglitazone, sitagliptin (column
       ``citoglipton``), glyburide-metformin, glipizide-metformin,
       glimepiride-pioglitazone, metformin-rosiglitazone, metformin-pioglitazone,
       **and tolazamide**;
    4. no medication at all (all 23 medication columns are ``"No"``).

Decisions on what the paper leaves open
    * **tolazamide** is in no arm of the paper. It goes to arm 3, the catch-all
      group of rarely used drugs: like chlorpropamide and tolbutamide (arm 3) it is
      a first-generation sulfonylurea.
    * **Any Up or Down** in any of the 23 medication columns excludes the record: the
      paper says "we only focus on the sub-feature No and Steady".
    * **Steady drugs from more than one arm group** (for example insulin and
      metformin) exclude the record, since its treatment is none of the five arms.
      Several steady drugs from the *same* group (for example glipizide and
      rosiglitazone) are kept in that group's arm.
    * **Reward**: 1 if ``readmitted == ">30"``, 0 for ``"NO"`` (no record) and
      ``"<30"`` (the paper: "we assume no record means the treatment does not work
      well").
    * **Hospitals**: the eligible records (after the exclusions above), in file
      order, are cut into ``n_agents`` contiguous near-equal parts (the first
      ``n_eligible % n_agents`` parts get one extra record). The paper says both
      "randomly divide the samples into 3 equal-sized set" and "local biased indeed
      occurs when the dataset is separated into several parts according to the
      order in which the samples appear"; only the in-order split makes the local
      means differ, so it is the default, and ``split="random"`` gives the other.
    * **Sampling**: when hospital i pulls arm k it draws one of its own records of
      arm k uniformly with replacement and observes that record's reward, so the
      local mean mu_{i,k} is the hospital's empirical reward rate of arm k.

The data are not shipped: :func:`download_diabetes` fetches the UCI archive, or the
user passes the path of ``diabetic_data.csv`` (or of the zip) to
:func:`load_diabetes`.

Notes
-----
One patient (``patient_nbr``) can have several encounters, which may land in several
hospitals; a user-level neighbouring relation must account for that.

References
----------
.. [1] Z. Zhu, J. Zhu, J. Liu, Y. Liu, "Federated Bandit: A Gossiping Approach",
   Proc. ACM Meas. Anal. Comput. Syst. 5(1), 2021, Section 5 ("Real data") and
   Fig. 2(c).
.. [2] B. Strack, J. P. DeShazo, C. Gennings, J. L. Olmo, S. Ventura, K. J. Cios,
   J. N. Clore, "Impact of HbA1c measurement on hospital readmission rates:
   analysis of 70,000 clinical database patient records", BioMed Research
   International 2014, article 781670. Data: UCI Machine Learning Repository,
   "Diabetes 130-US Hospitals for Years 1999-2008" (id 296), CC BY 4.0.

The data side (constants, :func:`load_diabetes`, :func:`download_diabetes`,
:func:`assign_arms`) lives in :mod:`fedpriv.algorithms.environments.hospital_data` and is re-exported here.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from fedpriv.algorithms.environments.heterogeneous import GlobalArmsMixin
from fedpriv.algorithms.environments.hospital_data import (
    ARM_LABELS,
    ARM_MEDICATIONS,
    DIABETES_MEMBER,
    DIABETES_URL,
    EXCLUDED_DOSE_CHANGE,
    EXCLUDED_SEVERAL_GROUPS,
    EXPECTED_COLUMNS,
    INTEGER_COLUMNS,
    MEDICATION_COLUMNS,
    MEDICATION_VALUES,
    N_ARMS,
    READMITTED_VALUES,
    SPLITS,
    assign_arms,
    download_diabetes,
    load_diabetes,
)
from fedpriv.privacy.checks import check_generator, check_in_range_array, check_int_at_least
from fedpriv.privacy.errors import DataFormatError

__all__ = [
    "ARM_LABELS",
    "ARM_MEDICATIONS",
    "DIABETES_MEMBER",
    "DIABETES_URL",
    "EXCLUDED_DOSE_CHANGE",
    "EXCLUDED_SEVERAL_GROUPS",
    "EXPECTED_COLUMNS",
    "INTEGER_COLUMNS",
    "MEDICATION_COLUMNS",
    "MEDICATION_VALUES",
    "N_ARMS",
    "READMITTED_VALUES",
    "SPLITS",
    "HospitalBandit",
    "assign_arms",
    "download_diabetes",
    "hospital_bandit",
    "load_diabetes",
]


# --------------------------------------------------------------------------- bandit
@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class HospitalBandit(GlobalArmsMixin):
    """Hospitals that pull an arm by drawing one of their own records of that arm.

    Implements :class:`fedpriv.algorithms.environments.heterogeneous.BanditEnvironment`. Usually built
    with :func:`hospital_bandit`; the fields describe the eligible records.

    Parameters
    ----------
    agents : array_like of int, shape (n_records,)
        Hospital of each record, in 0..n_agents-1.
    arms : array_like of int, shape (n_records,)
        Arm of each record, in 0..n_arms-1.
    rewards : array_like of float, shape (n_records,)
        Reward of each record, in [0, 1] (0 or 1 for the diabetes data).
    n_agents : int
        Number of hospitals N, >= 1.
    n_arms : int, default 5
        Number of arms M, >= 2.
    row_index : array_like of int, shape (n_records,), optional
        Position of each record in the source table (default ``0..n_records-1``).

    Raises
    ------
    ValueError
        If the arrays are not 1-D of one common length >= 1, or hold values out of
        range.
    TypeError
        If ``agents``, ``arms`` or ``row_index`` are not integer arrays.
    fedpriv.privacy.errors.DataFormatError
        If some (hospital, arm) pair has no record; the message names every such
        hospital and arm.

    Notes
    -----
    The local mean ``arm_means[i, k]`` is hospital i's empirical reward rate on arm
    k, and ``global_means`` is their unweighted average over hospitals (Zhu et
    al.'s assumption mu_k = (1/N) sum_i mu_{i,k}), which differs from the pooled
    rate when hospitals have different numbers of records of an arm. Equality
    compares all fields; instances are hashable.

    Examples
    --------
    >>> env = HospitalBandit(agents=[0, 0, 1, 1], arms=[0, 1, 0, 1],
    ...                      rewards=[1.0, 0.0, 1.0, 1.0], n_agents=2, n_arms=2)
    >>> env.record_counts
    array([[1, 1],
           [1, 1]])
    >>> env.global_means, env.best_arm
    (array([1. , 0.5]), 0)
    """

    agents: np.ndarray
    arms: np.ndarray
    rewards: np.ndarray
    n_agents: int
    n_arms: int = N_ARMS
    row_index: np.ndarray | None = None
    _order: np.ndarray = dataclasses.field(init=False, repr=False)
    _offsets: np.ndarray = dataclasses.field(init=False, repr=False)
    _counts: np.ndarray = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        n_agents = check_int_at_least("n_agents", self.n_agents, 1)
        n_arms = check_int_at_least("n_arms", self.n_arms, 2)
        agents = _int_array("agents", self.agents)
        arms = _int_array("arms", self.arms)
        rewards = check_in_range_array("rewards", self.rewards, 0.0, 1.0)
        n_records = agents.shape[0] if agents.ndim == 1 else -1
        if n_records < 1:
            raise ValueError(f"`agents` must be 1-D with >= 1 record, got shape {agents.shape}.")
        row_index = (
            np.arange(n_records, dtype=np.int64)
            if self.row_index is None
            else _int_array("row_index", self.row_index)
        )
        for name, array in (("arms", arms), ("rewards", rewards), ("row_index", row_index)):
            if array.shape != (n_records,):
                raise ValueError(
                    f"`{name}` must have shape ({n_records},) like `agents`, got {array.shape}."
                )
        for name, array, size in (("agents", agents, n_agents), ("arms", arms, n_arms)):
            if array.min() < 0 or array.max() >= size:
                raise ValueError(
                    f"`{name}` must lie in [0, {size - 1}]; found values in "
                    f"[{array.min()}, {array.max()}]."
                )
        cell = agents * n_arms + arms
        counts = np.bincount(cell, minlength=n_agents * n_arms).reshape(n_agents, n_arms)
        empty = np.argwhere(counts == 0)
        if empty.size:
            pairs = ", ".join(f"hospital {i} / arm {k}" for i, k in empty.tolist())
            raise DataFormatError(
                f"every (hospital, arm) pair needs >= 1 record; none for {pairs}."
            )
        order = np.argsort(cell, kind="stable")
        offsets = (np.cumsum(counts.ravel()) - counts.ravel()).reshape(counts.shape)
        for name, value in (
            ("n_agents", n_agents),
            ("n_arms", n_arms),
            ("agents", agents),
            ("arms", arms),
            ("rewards", rewards.copy()),
            ("row_index", row_index),
            ("_order", order),
            ("_offsets", offsets),
            ("_counts", counts),
        ):
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
            object.__setattr__(self, name, value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HospitalBandit):
            return NotImplemented
        return (self.n_agents, self.n_arms) == (other.n_agents, other.n_arms) and all(
            np.array_equal(getattr(self, name), getattr(other, name))
            for name in ("agents", "arms", "rewards", "row_index")
        )

    def __hash__(self) -> int:
        return hash(
            (
                self.n_agents,
                self.n_arms,
                self.agents.tobytes(),
                self.arms.tobytes(),
                self.rewards.tobytes(),
                self.row_index.tobytes(),
            )
        )

    @property
    def n_records(self) -> int:
        """Number of eligible records over all hospitals."""
        return int(self.agents.shape[0])

    @property
    def record_counts(self) -> np.ndarray:
        """Records per (hospital, arm), int64 of shape (n_agents, n_arms)."""
        return self._counts.copy()

    @property
    def arm_means(self) -> np.ndarray:
        """Empirical reward rate per (hospital, arm), float64 (n_agents, n_arms)."""
        cell = self.agents * self.n_arms + self.arms
        sums = np.bincount(cell, weights=self.rewards, minlength=self._counts.size)
        return sums.reshape(self._counts.shape) / self._counts

    @property
    def global_means(self) -> np.ndarray:
        """Unweighted mean of ``arm_means`` over hospitals, shape (n_arms,)."""
        return self.arm_means.mean(axis=0)

    @property
    def reward_bounds(self) -> tuple[float, float]:
        """Bounds ``(0.0, 1.0)`` of every reward."""
        return (0.0, 1.0)

    def sample_record_indices(self, horizon: int, *, rng: np.random.Generator) -> np.ndarray:
        """Draw which record every potential pull would return.

        Parameters
        ----------
        horizon : int
            Number of rounds T after the initial pulls, >= 1.
        rng : numpy.random.Generator
            The trial's environment stream; one ``rng.integers`` call of the
            table's size is made.

        Returns
        -------
        ndarray of int64, shape (n_agents, horizon + 1, n_arms)
            Entry ``[i, t, k]`` indexes ``agents`` / ``arms`` / ``rewards``: a
            record of hospital i and arm k drawn uniformly with replacement,
            independently for every entry. Row ``t = 0`` is the initial pull.

        Raises
        ------
        ValueError
            If ``horizon < 1``.
        TypeError
            If ``horizon`` is not an integer or ``rng`` is not a Generator.
        """
        horizon = check_int_at_least("horizon", horizon, 1)
        check_generator("rng", rng)
        shape = (self.n_agents, horizon + 1, self.n_arms)
        draws = rng.integers(0, self._counts[:, np.newaxis, :], size=shape)
        return self._order[self._offsets[:, np.newaxis, :] + draws]

    def sample_rewards(self, horizon: int, *, rng: np.random.Generator) -> np.ndarray:
        """Draw one trial's reward table.

        Parameters
        ----------
        horizon : int
            Number of rounds T after the initial pulls, >= 1.
        rng : numpy.random.Generator
            The trial's environment stream (see :meth:`sample_record_indices`,
            whose draws this reuses, so both give the same records for one seed).

        Returns
        -------
        ndarray of float64, shape (n_agents, horizon + 1, n_arms)
            ``[i, t, k]`` is the reward of the record hospital i draws if it pulls
            arm k at round t; row ``t = 0`` holds the initial pulls.

        Raises
        ------
        ValueError
            If ``horizon < 1``.
        TypeError
            If ``horizon`` is not an integer or ``rng`` is not a Generator.
        """
        return self.rewards[self.sample_record_indices(horizon, rng=rng)]


def hospital_bandit(
    data: pd.DataFrame,
    *,
    n_agents: int = 3,
    split: str = "contiguous",
    rng: np.random.Generator | None = None,
) -> HospitalBandit:
    """Build Zhu et al.'s hospital bandit from the diabetes encounter table.

    Applies :func:`assign_arms`, drops the excluded records, maps ``readmitted``
    to the reward (``">30"`` -> 1.0, ``"NO"`` and ``"<30"`` -> 0.0) and divides the
    eligible records between ``n_agents`` hospitals (rules and their sources in the
    module docstring).

    Parameters
    ----------
    data : pandas.DataFrame
        Encounter table with the 23 :data:`MEDICATION_COLUMNS` and ``readmitted``,
        in file order (for example from :func:`load_diabetes`).
    n_agents : int, default 3
        Number of hospitals N, >= 1 (the paper uses 3).
    split : {"contiguous", "random"}, default "contiguous"
        ``"contiguous"``: the eligible records in table order are cut into N
        contiguous parts whose sizes differ by at most one (the first parts are the
        larger). ``"random"``: the same part sizes, but records are assigned by a
        uniformly random permutation drawn from ``rng``.
    rng : numpy.random.Generator, optional
        Required for ``split="random"``; ignored (nothing drawn) otherwise.

    Returns
    -------
    HospitalBandit
        With ``n_arms = 5`` and ``row_index`` the positions of the eligible rows
        in ``data``.

    Raises
    ------
    TypeError
        If ``data`` is not a DataFrame, ``n_agents`` is not an integer, or ``rng``
        is not a Generator when ``split="random"``.
    ValueError
        If ``n_agents < 1`` or ``split`` is unknown.
    fedpriv.privacy.errors.DataFormatError
        If a required column is missing or holds a disallowed value, or some
        (hospital, arm) pair gets no record (the hospitals and arms are named).

    References
    ----------
    .. [1] Zhu et al. (2021), Section 5, "Real data" (Section 5.2, Fig. 2(c)).
    """
    n_agents = check_int_at_least("n_agents", n_agents, 1)
    if split not in SPLITS:
        raise ValueError(f"`split` must be one of {list(SPLITS)}, got {split!r}.")
    if split == "random" and not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"`rng` must be a numpy.random.Generator for split='random', got {type(rng).__name__}."
        )
    arms = assign_arms(data)
    row_index = np.flatnonzero(arms >= 0).astype(np.int64)
    n_eligible = row_index.size
    if n_eligible == 0:
        raise DataFormatError(
            f"`data`: no eligible record among {arms.size} rows "
            f"({int(np.sum(arms == EXCLUDED_DOSE_CHANGE))} with an Up/Down dosage, "
            f"{int(np.sum(arms == EXCLUDED_SEVERAL_GROUPS))} with steady drugs from "
            "several arm groups)."
        )
    rewards = (data["readmitted"].to_numpy()[row_index] == ">30").astype(np.float64)
    sizes = n_eligible // n_agents + (np.arange(n_agents) < n_eligible % n_agents)
    in_order = np.repeat(np.arange(n_agents, dtype=np.int64), sizes)
    if split == "contiguous":
        agents = in_order
    else:
        agents = np.empty(n_eligible, dtype=np.int64)
        agents[rng.permutation(n_eligible)] = in_order
    return HospitalBandit(
        agents=agents,
        arms=arms[row_index],
        rewards=rewards,
        n_agents=n_agents,
        n_arms=N_ARMS,
        row_index=row_index,
    )


def _int_array(name: str, values: object) -> np.ndarray:
    """Return ``values`` as an int64 array; TypeError if it is not integer-valued."""
    array = np.asarray(values)
    if array.dtype.kind not in "iu" and not (array.size == 0 and array.dtype.kind == "f"):
        raise TypeError(f"`{name}` must be an integer array, got dtype {array.dtype}.")
    return array.astype(np.int64)
