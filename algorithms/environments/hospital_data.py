"""The UCI "Diabetes 130-US hospitals" table: download, loading, validation and arms.

Data side of Zhu et al.'s hospital environment (:mod:`fedpriv.algorithms.environments.hospital`, whose
module docstring gives every preprocessing rule the paper leaves open and its
source): :func:`download_diabetes` fetches the UCI archive atomically,
:func:`load_diabetes` reads and validates ``diabetic_data.csv`` (or the zip), and
:func:`assign_arms` maps each encounter to its arm or to an exclusion code. Every
public name is re-exported by :mod:`fedpriv.algorithms.environments.hospital`.

References
----------
.. [1] B. Strack, J. P. DeShazo, C. Gennings, J. L. Olmo, S. Ventura, K. J. Cios,
   J. N. Clore, "Impact of HbA1c measurement on hospital readmission rates:
   analysis of 70,000 clinical database patient records", BioMed Research
   International 2014, article 781670. Data: UCI Machine Learning Repository,
   "Diabetes 130-US Hospitals for Years 1999-2008" (id 296), CC BY 4.0.
"""

from __future__ import annotations

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
from fedpriv.privacy.checks import check_positive
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
    "assign_arms",
    "download_diabetes",
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
    ("repaglinide", "glipizide", "rosiglitazone", "acarbose", "miglitol", "troglitazone"),
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
"""Ways :func:`~fedpriv.algorithms.environments.hospital.hospital_bandit` divides the eligible records
between hospitals."""

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
    fedpriv.privacy.errors.DataFormatError
        Naming the file, if it cannot be parsed as CSV or as a zip, the zip has no
        ``diabetic_data.csv``, any of the 50 :data:`EXPECTED_COLUMNS` is missing
        (all missing ones are listed), there are no data rows, a medication column
        holds a value outside No/Steady/Up/Down, ``readmitted`` holds a value
        outside NO/>30/<30, or an integer column holds a non-integer (each bad
        column is named with an example value and its data row).

    See Also
    --------
    download_diabetes : fetch the file from the UCI repository.
    fedpriv.algorithms.environments.hospital.hospital_bandit : build the bandit from the table.
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
            raise DataFormatError(f"{path}: not a readable zip archive ({exc}).") from exc
    with path.open("rb") as handle:
        return _read_table(handle, source=str(path))


def download_diabetes(
    dest_dir: str | os.PathLike[str], *, url: str = DIABETES_URL, timeout: float = 60.0
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
    fedpriv.privacy.errors.DataFormatError
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
        raise ValueError(f"`url` must use scheme https, http or file, got {scheme!r} in {url!r}.")
    timeout = check_positive("timeout", timeout)
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    target = dest_dir / DIABETES_MEMBER
    zip_tmp = _temp_file(dest_dir, suffix=".zip.part")
    csv_tmp = _temp_file(dest_dir, suffix=".csv.part")
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, zip_tmp.open("wb") as out:
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
    matches = [name for name in archive.namelist() if PurePosixPath(name).name == DIABETES_MEMBER]
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


def _check_schema(frame: pd.DataFrame, *, source: str, columns: tuple[str, ...]) -> None:
    """Raise DataFormatError if ``frame`` lacks ``columns``, rows or allowed values."""
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise DataFormatError(
            f"{source}: missing {len(missing)} expected column(s): {', '.join(missing)}."
        )
    if len(frame) == 0:
        raise DataFormatError(f"{source}: has no data rows.")
    problems = []
    for column in MEDICATION_COLUMNS:
        if column in columns:
            bad = ~frame[column].isin(MEDICATION_VALUES)
            if bad.any():
                problems.append(_describe_bad(frame[column], bad, "/".join(MEDICATION_VALUES)))
    bad = ~frame["readmitted"].isin(READMITTED_VALUES)
    if bad.any():
        problems.append(_describe_bad(frame["readmitted"], bad, "/".join(READMITTED_VALUES)))
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

    The rules (module docstring; Zhu et al. Section 5.2): a
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
    fedpriv.privacy.errors.DataFormatError
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
        raise TypeError(f"`data` must be a pandas DataFrame, got {type(data).__name__}.")
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
