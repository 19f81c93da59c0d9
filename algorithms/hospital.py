"""The hospital environment of Zhu et al. from the UCI "Diabetes 130-US hospitals" data.

Zhu et al. (Section 5, "Real data", Fig. 2c) turn the diabetes encounters of Strack
et al. (2014) into a 3-agent, 5-arm Bernoulli bandit: the arm is the medication
group given at a steady dosage, the reward is 1 when the patient was readmitted
after more than 30 days, and the records are split between three hospitals. The
paper's preprocessing is in supplementary material that is not available, so every
rule it leaves open is decided here (gossip.md Section 5.1 and Section 8 item 9):

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
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path, PurePosixPath
from typing import IO

import numpy as np
import pandas as pd

from algorithms.environments import GlobalArmsMixin
from privacy._checks import (
    check_generator,
    check_in_range_array,
    check_int_at_least,
    check_positive,
)
from privacy.errors import DataFormatError

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

DIABETES_URL = (
    "https://archive.ics.uci.edu/static/public/296/"
    "diabetes+130-us+hospitals+for+years+1999-2008.zip"
)
"""UCI download address of the zip archive holding ``diabetic_data.csv``."""

DIABETES_MEMBER = "diabetic_data.csv"
"""Name of the encounter table inside the UCI archive."""

MEDICATION_COLUMNS: tuple[str, ...] = (
    "metformin",
    "repaglinide",
    "nateglinide",
    "chlorpropamide",
    "glimepiride",
    "acetohexamide",
    "glipizide",
    "glyburide",
    "tolbutamide",
    "pioglitazone",
    "rosiglitazone",
    "acarbose",
    "miglitol",
    "troglitazone",
    "tolazamide",
    "examide",
    "citoglipton",
    "insulin",
    "glyburide-metformin",
    "glipizide-metformin",
    "glimepiride-pioglitazone",
    "metformin-rosiglitazone",
    "metformin-pioglitazone",
)
"""The 23 medication columns, in file order (sitagliptin is spelt ``citoglipton``)."""

EXPECTED_COLUMNS: tuple[str, ...] = (
    "encounter_id",
    "patient_nbr",
    "race",
    "gender",
    "age",
    "weight",
    "admission_type_id",
    "discharge_disposition_id",
    "admission_source_id",
    "time_in_hospital",
    "payer_code",
    "medical_specialty",
    "num_lab_procedures",
    "num_procedures",
    "num_medications",
    "number_outpatient",
    "number_emergency",
    "number_inpatient",
    "diag_1",
    "diag_2",
    "diag_3",
    "number_diagnoses",
    "max_glu_serum",
    "A1Cresult",
    *MEDICATION_COLUMNS,
    "change",
    "diabetesMed",
    "readmitted",
)
"""The 50 columns of ``diabetic_data.csv``, in file order."""

INTEGER_COLUMNS: tuple[str, ...] = (
    "encounter_id",
    "patient_nbr",
    "admission_type_id",
    "discharge_disposition_id",
    "admission_source_id",
    "time_in_hospital",
    "num_lab_procedures",
    "num_procedures",
    "num_medications",
    "number_outpatient",
    "number_emergency",
    "number_inpatient",
    "number_diagnoses",
)
"""Columns that :func:`load_diabetes` parses as int64; all others stay strings."""

MEDICATION_VALUES: tuple[str, ...] = ("No", "Steady", "Up", "Down")
"""Allowed values of a medication column."""

READMITTED_VALUES: tuple[str, ...] = ("NO", ">30", "<30")
"""Allowed values of ``readmitted``; only ``">30"`` is a success (reward 1)."""

N_ARMS = 5
"""Number of arms of the hospital bandit."""

ARM_MEDICATIONS: tuple[tuple[str, ...], ...] = (
    ("insulin",),
    ("metformin",),
    (
        "repaglinide",
        "glipizide",
        "rosiglitazone",
        "acarbose",
        "miglitol",
        "troglitazone",
    ),
    (
        "nateglinide",
        "chlorpropamide",
        "glyburide",
        "examide",
        "glimepiride",
        "acetohexamide",
        "tolbutamide",
        "pioglitazone",
        "citoglipton",
        "glyburide-metformin",
        "glipizide-metformin",
        "glimepiride-pioglitazone",
        "metformin-rosiglitazone",
        "metformin-pioglitazone",
        "tolazamide",
    ),
    (),
)
"""Medication columns whose steady dosage defines each arm (arm 4: none at all)."""

ARM_LABELS: tuple[str, ...] = (
    "steady insulin",
    "steady metformin",
    "steady repaglinide/glipizide/rosiglitazone/acarbose/miglitol/troglitazone",
    "steady other oral drug (nateglinide, glyburide, pioglitazone, ...)",
    "no medication",
)
"""Short human-readable name of each arm."""

EXCLUDED_DOSE_CHANGE = -1
"""Code from :func:`assign_arms` for a record with an Up or Down dosage."""

EXCLUDED_SEVERAL_GROUPS = -2
"""Code from :func:`assign_arms` for steady drugs from more than one arm group."""

SPLITS: tuple[str, ...] = ("contiguous", "random")
"""Ways :func:`hospital_bandit` divides the eligible records between hospitals."""

_REQUIRED_FOR_BANDIT: tuple[str, ...] = (*MEDICATION_COLUMNS, "readmitted")


# --------------------------------------------------------------------------- loading
def load_diabetes(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read and validate the UCI diabetes encounter table.

    Parameters
    ----------
    path : str or os.PathLike
        ``diabetic_data.csv`` (or a sample of it with the same header), or a zip
        archive containing a member named ``diabetic_data.csv`` (such as the UCI
        download). A file is treated as a zip when its name ends in ``.zip`` or
        its content is a zip archive.

    Returns
    -------
    pandas.DataFrame
        One row per encounter, every column of the file in file order. The
        :data:`INTEGER_COLUMNS` are int64; all other columns are strings exactly as
        in the file (missing values stay ``"?"``, and ``"None"`` in
        ``max_glu_serum`` / ``A1Cresult`` stays the string ``"None"``). Extra
        columns are kept.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    privacy.errors.DataFormatError
        Naming the file, if it cannot be parsed as CSV or as a zip, the zip has no
        ``diabetic_data.csv``, any of the 50 :data:`EXPECTED_COLUMNS` is missing
        (all missing ones are listed), there are no data rows, a medication column
        holds a value outside No/Steady/Up/Down, ``readmitted`` holds a value
        outside NO/>30/<30, or an integer column holds a non-integer (each bad
        column is named with an example value and its data row).

    See Also
    --------
    download_diabetes : fetch the file from the UCI repository.
    hospital_bandit : build the bandit from the table.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"`path` {str(path)!r} is not an existing file.")
    if path.suffix.lower() == ".zip" or zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as archive:
                member = _find_member(archive, source=str(path))
                with archive.open(member) as handle:
                    return _read_table(handle, source=f"{path}!{member}")
        except zipfile.BadZipFile as exc:
            raise DataFormatError(
                f"{path}: not a readable zip archive ({exc})."
            ) from exc
    with path.open("rb") as handle:
        return _read_table(handle, source=str(path))


def download_diabetes(
    dest_dir: str | os.PathLike[str],
    *,
    url: str = DIABETES_URL,
    timeout: float = 60.0,
) -> Path:
    """Download the UCI archive and extract ``diabetic_data.csv`` atomically.

    The archive is streamed to a temporary file in ``dest_dir``, the member is
    extracted to a second temporary file, validated with the checks of
    :func:`load_diabetes`, flushed to disk and only then renamed to
    ``dest_dir / "diabetic_data.csv"`` (``os.replace``, atomic on one file
    system). On any failure both temporary files are removed and an existing
    ``diabetic_data.csv`` is left untouched.

    Parameters
    ----------
    dest_dir : str or os.PathLike
        Directory for the extracted file; created (with parents) if missing.
    url : str, default DIABETES_URL
        Address of the zip archive; scheme ``https``, ``http`` or ``file``.
    timeout : float, default 60.0
        Network timeout in seconds for each blocking operation, > 0.

    Returns
    -------
    pathlib.Path
        Path of the extracted ``diabetic_data.csv``.

    Raises
    ------
    ValueError
        If ``url`` has another scheme or ``timeout <= 0``.
    privacy.errors.DataFormatError
        If the download is not a zip archive, holds no ``diabetic_data.csv``, or
        the table fails the checks of :func:`load_diabetes`.
    urllib.error.URLError, OSError
        If the download or a file operation fails.

    Examples
    --------
    >>> path = download_diabetes("data")  # doctest: +SKIP
    >>> load_diabetes(path).shape  # doctest: +SKIP
    (101766, 50)
    """
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in ("https", "http", "file"):
        raise ValueError(
            f"`url` must use scheme https, http or file, got {scheme!r} in {url!r}."
        )
    timeout = check_positive("timeout", timeout)
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    target = dest_dir / DIABETES_MEMBER
    zip_tmp = _temp_file(dest_dir, suffix=".zip.part")
    csv_tmp = _temp_file(dest_dir, suffix=".csv.part")
    try:
        with (
            urllib.request.urlopen(url, timeout=timeout) as response,
            zip_tmp.open("wb") as out,
        ):
            shutil.copyfileobj(response, out)
        try:
            with zipfile.ZipFile(zip_tmp) as archive:
                member = _find_member(archive, source=url)
                with archive.open(member) as src, csv_tmp.open("wb") as out:
                    shutil.copyfileobj(src, out)
                    out.flush()
                    os.fsync(out.fileno())
        except zipfile.BadZipFile as exc:
            raise DataFormatError(
                f"{url}: download is not a readable zip archive ({exc})."
            ) from exc
        with csv_tmp.open("rb") as handle:
            _read_table(handle, source=f"{url}!{member}")
        os.replace(csv_tmp, target)
    finally:
        zip_tmp.unlink(missing_ok=True)
        csv_tmp.unlink(missing_ok=True)
    return target


def _temp_file(directory: Path, *, suffix: str) -> Path:
    """Create an empty hidden temporary file in ``directory`` and return its path."""
    fd, name = tempfile.mkstemp(dir=directory, prefix=".diabetes-", suffix=suffix)
    os.close(fd)
    return Path(name)


def _find_member(archive: zipfile.ZipFile, *, source: str) -> str:
    """Return the name of the ``diabetic_data.csv`` member of ``archive``."""
    matches = [
        name
        for name in archive.namelist()
        if PurePosixPath(name).name == DIABETES_MEMBER
    ]
    if len(matches) != 1:
        found = ", ".join(archive.namelist()[:10]) or "nothing"
        raise DataFormatError(
            f"{source}: zip archive must hold exactly one {DIABETES_MEMBER!r}, found "
            f"{len(matches)} (archive holds: {found})."
        )
    return matches[0]


def _read_table(handle: IO[bytes], *, source: str) -> pd.DataFrame:
    """Parse a CSV byte stream, check the schema and convert the integer columns."""
    try:
        frame = pd.read_csv(handle, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise DataFormatError(f"{source}: cannot be parsed as CSV ({exc}).") from exc
    _check_schema(frame, source=source, columns=EXPECTED_COLUMNS)
    problems = []
    converted = {}
    for column in INTEGER_COLUMNS:
        values = frame[column].str.strip()
        bad = ~values.str.fullmatch(r"[+-]?\d+")
        if bad.any():
            problems.append(_describe_bad(frame[column], bad, "an integer"))
        else:
            converted[column] = values.astype(np.int64)
    if problems:
        raise DataFormatError(f"{source}: " + "; ".join(problems) + ".")
    return frame.assign(**converted)


def _check_schema(
    frame: pd.DataFrame, *, source: str, columns: tuple[str, ...]
) -> None:
    """Raise DataFormatError if ``frame`` lacks ``columns``, rows or allowed values."""
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise DataFormatError(
            f"{source}: missing {len(missing)} expected column(s): "
            f"{', '.join(missing)}."
        )
    if len(frame) == 0:
        raise DataFormatError(f"{source}: has no data rows.")
    problems = []
    for column in MEDICATION_COLUMNS:
        if column in columns:
            bad = ~frame[column].isin(MEDICATION_VALUES)
            if bad.any():
                problems.append(
                    _describe_bad(frame[column], bad, "/".join(MEDICATION_VALUES))
                )
    bad = ~frame["readmitted"].isin(READMITTED_VALUES)
    if bad.any():
        problems.append(
            _describe_bad(frame["readmitted"], bad, "/".join(READMITTED_VALUES))
        )
    if problems:
        raise DataFormatError(f"{source}: " + "; ".join(problems) + ".")


def _describe_bad(values: pd.Series, bad: pd.Series, allowed: str) -> str:
    """One clause naming a column, its bad-value count, an example and its row."""
    first = int(np.flatnonzero(bad.to_numpy())[0])
    return (
        f"column {values.name!r} has {int(bad.sum())} value(s) that are not "
        f"{allowed}, e.g. {values.iloc[first]!r} at data row {first + 1}"
    )


# ----------------------------------------------------------------------------- arms
def assign_arms(data: pd.DataFrame) -> np.ndarray:
    """Map each encounter to its arm, or to an exclusion code.

    The rules (module docstring; Zhu et al. Section 5, gossip.md Section 5.1): a
    record with any Up/Down dosage gets :data:`EXCLUDED_DOSE_CHANGE`; otherwise the
    arm groups of its steady drugs (:data:`ARM_MEDICATIONS`, tolazamide in arm 3)
    decide: none is arm 4, exactly one group is that group's arm, several groups is
    :data:`EXCLUDED_SEVERAL_GROUPS`.

    Parameters
    ----------
    data : pandas.DataFrame
        Encounter table with the 23 :data:`MEDICATION_COLUMNS` and ``readmitted``
        (for example from :func:`load_diabetes`), at least one row.

    Returns
    -------
    ndarray of int64, shape (n_rows,)
        Arm in 0..4, or a negative exclusion code, for each row in order.

    Raises
    ------
    TypeError
        If ``data`` is not a DataFrame.
    privacy.errors.DataFormatError
        If a required column is missing, there are no rows, or a medication or
        ``readmitted`` value is not allowed.

    Examples
    --------
    >>> row = dict.fromkeys(MEDICATION_COLUMNS, "No") | {"readmitted": ">30"}
    >>> frame = pd.DataFrame([row | {"tolazamide": "Steady"},
    ...                       row | {"insulin": "Steady", "metformin": "Steady"},
    ...                       row | {"insulin": "Up"}, row])
    >>> assign_arms(frame)
    array([ 3, -2, -1,  4])
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(
            f"`data` must be a pandas DataFrame, got {type(data).__name__}."
        )
    _check_schema(data, source="`data`", columns=_REQUIRED_FOR_BANDIT)
    doses = data.loc[:, list(MEDICATION_COLUMNS)].to_numpy(dtype=object)
    changed = np.isin(doses, ("Up", "Down")).any(axis=1)
    group_of_column = np.full(len(MEDICATION_COLUMNS), -1, dtype=np.int64)
    for arm, columns in enumerate(ARM_MEDICATIONS):
        group_of_column[[MEDICATION_COLUMNS.index(c) for c in columns]] = arm
    groups = np.eye(N_ARMS - 1, dtype=np.int64)[group_of_column]
    hits = ((doses == "Steady").astype(np.int64) @ groups) > 0
    n_groups = hits.sum(axis=1)
    arms = np.where(n_groups == 0, N_ARMS - 1, np.argmax(hits, axis=1))
    arms[n_groups > 1] = EXCLUDED_SEVERAL_GROUPS
    arms[changed] = EXCLUDED_DOSE_CHANGE
    return arms.astype(np.int64)


# --------------------------------------------------------------------------- bandit
@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class HospitalBandit(GlobalArmsMixin):
    """Hospitals that pull an arm by drawing one of their own records of that arm.

    Implements :class:`algorithms.environments.BanditEnvironment`. Usually built
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
    privacy.errors.DataFormatError
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
            raise ValueError(
                f"`agents` must be 1-D with >= 1 record, got shape {agents.shape}."
            )
        row_index = (
            np.arange(n_records, dtype=np.int64)
            if self.row_index is None
            else _int_array("row_index", self.row_index)
        )
        for name, array in (
            ("arms", arms),
            ("rewards", rewards),
            ("row_index", row_index),
        ):
            if array.shape != (n_records,):
                raise ValueError(
                    f"`{name}` must have shape ({n_records},) like `agents`, got "
                    f"{array.shape}."
                )
        for name, array, size in (("agents", agents, n_agents), ("arms", arms, n_arms)):
            if array.min() < 0 or array.max() >= size:
                raise ValueError(
                    f"`{name}` must lie in [0, {size - 1}]; found values in "
                    f"[{array.min()}, {array.max()}]."
                )
        cell = agents * n_arms + arms
        counts = np.bincount(cell, minlength=n_agents * n_arms).reshape(
            n_agents, n_arms
        )
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


    def sample_record_indices(
        self, horizon: int, *, rng: np.random.Generator
    ) -> np.ndarray:
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
    privacy.errors.DataFormatError
        If a required column is missing or holds a disallowed value, or some
        (hospital, arm) pair gets no record (the hospitals and arms are named).

    References
    ----------
    .. [1] Zhu et al. (2021), Section 5, "Real data"; gossip.md Section 5.1.
    """
    n_agents = check_int_at_least("n_agents", n_agents, 1)
    if split not in SPLITS:
        raise ValueError(f"`split` must be one of {list(SPLITS)}, got {split!r}.")
    if split == "random" and not isinstance(rng, np.random.Generator):
        raise TypeError(
            "`rng` must be a numpy.random.Generator for split='random', got "
            f"{type(rng).__name__}."
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
    if array.dtype.kind not in "iu" and not (
        array.size == 0 and array.dtype.kind == "f"
    ):
        raise TypeError(f"`{name}` must be an integer array, got dtype {array.dtype}.")
    return array.astype(np.int64)
