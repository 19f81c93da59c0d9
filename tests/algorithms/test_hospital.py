"""Tests of fedpriv.algorithms.environments.hospital: UCI diabetes loader, downloader and hospital bandit.

The real 4,999-encounter sample lives in the ``shared`` folder beside the checkout
and is never copied into the repository; tests that need it are skipped when it is
absent. Every other test builds small tables in memory or in ``tmp_path``.
"""

from __future__ import annotations

import dataclasses
import math
import urllib.error
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fedpriv.algorithms.environments.heterogeneous import BanditEnvironment
from fedpriv.algorithms.environments.hospital import (
    ARM_LABELS,
    ARM_MEDICATIONS,
    DIABETES_MEMBER,
    DIABETES_URL,
    EXCLUDED_DOSE_CHANGE,
    EXCLUDED_SEVERAL_GROUPS,
    EXPECTED_COLUMNS,
    INTEGER_COLUMNS,
    MEDICATION_COLUMNS,
    N_ARMS,
    HospitalBandit,
    assign_arms,
    download_diabetes,
    hospital_bandit,
    load_diabetes,
)
from fedpriv.privacy.errors import DataFormatError
from hypothesis import given, settings
from hypothesis import strategies as st

__all__: list[str] = []

PROPERTY = settings(database=None, deadline=None, max_examples=40)

FALSE_FAILURE_PROBABILITY = 1e-6

SAMPLE = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "diabetic_data_first4999.csv"
)
needs_sample = pytest.mark.skipif(
    not SAMPLE.is_file(),
    reason=f"UCI diabetes sample not found at {SAMPLE} (the `shared` folder "
    "beside the checkout); it is never copied into the repository.",
)

# Arm of each medication given alone at a steady dose, written out independently of
# ARM_MEDICATIONS from Zhu et al. Section 5 (tolazamide: our decision, arm 3).
PAPER_ARM = {
    "insulin": 0,
    "metformin": 1,
    **dict.fromkeys(
        ["repaglinide", "glipizide", "rosiglitazone", "acarbose", "miglitol", "troglitazone"], 2
    ),
    **dict.fromkeys(
        [
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
        ],
        3,
    ),
}


def _record(readmitted: str = "NO", **doses: str) -> dict[str, str]:
    """One encounter as strings, all 50 columns; medications default to "No"."""
    row = dict.fromkeys(EXPECTED_COLUMNS, "?")
    row.update(dict.fromkeys(INTEGER_COLUMNS, "1"))
    row.update(dict.fromkeys(MEDICATION_COLUMNS, "No"))
    row.update({"change": "No", "diabetesMed": "No", "readmitted": readmitted})
    row.update({name.replace("_", "-"): value for name, value in doses.items()})
    return row


def _frame(rows: list[dict[str, str]]) -> pd.DataFrame:
    """DataFrame of string records with the expected column order."""
    return pd.DataFrame(rows, columns=list(EXPECTED_COLUMNS))


def _arm_record(arm: int, readmitted: str) -> dict[str, str]:
    """A record of the given arm (one steady drug of its group, or none)."""
    drugs = ["insulin", "metformin", "glipizide", "glyburide", None]
    return _record(readmitted, **({} if drugs[arm] is None else {drugs[arm]: "Steady"}))


def _write_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _small_table() -> pd.DataFrame:
    """Ten eligible records (two per arm) plus two excluded ones."""
    rows = [_arm_record(k % N_ARMS, [">30", "NO", "<30"][k % 3]) for k in range(10)]
    rows.insert(3, _record(">30", insulin="Up"))
    rows.insert(8, _record(">30", insulin="Steady", metformin="Steady"))
    return _frame(rows)


def _csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


# ---------------------------------------------------------------------- constants
def test_column_constants() -> None:
    assert len(EXPECTED_COLUMNS) == 50
    assert len(set(EXPECTED_COLUMNS)) == 50
    assert len(MEDICATION_COLUMNS) == 23
    assert EXPECTED_COLUMNS[24:47] == MEDICATION_COLUMNS
    assert "citoglipton" in EXPECTED_COLUMNS and "sitagliptin" not in EXPECTED_COLUMNS
    assert EXPECTED_COLUMNS[0] == "encounter_id"
    assert EXPECTED_COLUMNS[-1] == "readmitted"
    assert set(INTEGER_COLUMNS) < set(EXPECTED_COLUMNS)


def test_url_points_at_the_uci_zip() -> None:
    assert DIABETES_URL.startswith("https://archive.ics.uci.edu/static/public/296/")
    assert DIABETES_URL.endswith(".zip")
    assert DIABETES_MEMBER == "diabetic_data.csv"


def test_arm_groups_partition_the_medications() -> None:
    grouped = [column for group in ARM_MEDICATIONS for column in group]
    assert sorted(grouped) == sorted(MEDICATION_COLUMNS)
    assert len(ARM_MEDICATIONS) == len(ARM_LABELS) == N_ARMS == 5
    assert ARM_MEDICATIONS[4] == ()
    assert {c: k for k, group in enumerate(ARM_MEDICATIONS) for c in group} == PAPER_ARM


@needs_sample
def test_sample_header_matches_expected_columns() -> None:
    header = SAMPLE.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert tuple(header) == EXPECTED_COLUMNS


# ------------------------------------------------------------------------ loading
@needs_sample
def test_load_sample() -> None:
    data = load_diabetes(SAMPLE)
    assert data.shape == (4999, 50)
    assert tuple(data.columns) == EXPECTED_COLUMNS
    for column in INTEGER_COLUMNS:
        assert data[column].dtype == np.int64
    assert data["encounter_id"].iloc[0] == 2278392
    assert data["readmitted"].value_counts().to_dict() == {"NO": 2478, ">30": 1967, "<30": 554}
    assert data["max_glu_serum"].iloc[0] == "None"  # not parsed as missing


@needs_sample
def test_load_zip_of_sample_equals_csv(tmp_path: Path) -> None:
    archive = _write_zip(tmp_path / "uci.zip", {DIABETES_MEMBER: SAMPLE.read_bytes()})
    pd.testing.assert_frame_equal(load_diabetes(archive), load_diabetes(SAMPLE))


def test_load_small_csv_and_zip(tmp_path: Path) -> None:
    table = _small_table()
    csv = tmp_path / "table.csv"
    csv.write_bytes(_csv_bytes(table))
    loaded = load_diabetes(str(csv))
    assert loaded.shape == (12, 50)
    assert loaded["time_in_hospital"].dtype == np.int64
    pd.testing.assert_series_equal(loaded["readmitted"], table["readmitted"], check_dtype=False)
    # A zip whose member sits in a folder, under a name without ".zip".
    archive = _write_zip(
        tmp_path / "download.bin",
        {"README.txt": b"x", f"dataset/{DIABETES_MEMBER}": _csv_bytes(table)},
    )
    pd.testing.assert_frame_equal(load_diabetes(archive), loaded)


def _bad_tables() -> list[tuple[str, pd.DataFrame, str]]:
    table = _small_table()
    bad_dose = table.copy()
    bad_dose.loc[1, "insulin"] = "Maybe"
    bad_label = table.copy()
    bad_label.loc[4, "readmitted"] = "YES"
    bad_int = table.copy()
    bad_int.loc[0, "time_in_hospital"] = "three"
    return [
        (
            "missing",
            table.drop(columns=["weight", "readmitted"]),
            r"missing 2 expected column\(s\): weight, readmitted\.",
        ),
        (
            "dose",
            bad_dose,
            (
                r"column 'insulin' has 1 value\(s\) that are not No/Steady/Up/Down, "
                r"e\.g\. 'Maybe' at data row 2"
            ),
        ),
        (
            "label",
            bad_label,
            (
                r"column 'readmitted' has 1 value\(s\) that are not NO/>30/<30, "
                r"e\.g\. 'YES' at data row 5"
            ),
        ),
        ("integer", bad_int, r"column 'time_in_hospital' has 1 value\(s\) that are not an integer"),
        ("empty", table.iloc[:0], r"has no data rows"),
    ]


@pytest.mark.parametrize(("name", "table", "match"), _bad_tables())
def test_load_rejects_bad_tables(
    tmp_path: Path, name: str, table: pd.DataFrame, match: str
) -> None:
    path = tmp_path / f"{name}.csv"
    path.write_bytes(_csv_bytes(table))
    with pytest.raises(DataFormatError, match=match) as excinfo:
        load_diabetes(path)
    assert str(path) in str(excinfo.value)


def test_load_reports_every_bad_column(tmp_path: Path) -> None:
    table = _small_table()
    table.loc[0, "metformin"] = "steady"
    table.loc[2, "insulin"] = ""
    path = tmp_path / "two.csv"
    path.write_bytes(_csv_bytes(table))
    with pytest.raises(DataFormatError, match=r"'metformin'.*; column 'insulin'"):
        load_diabetes(path)


def test_load_rejects_unparseable_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(DataFormatError, match=r"empty\.csv: cannot be parsed as CSV"):
        load_diabetes(empty)
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK not really a zip")
    with pytest.raises(DataFormatError, match=r"broken\.zip: not a readable zip"):
        load_diabetes(broken)
    no_member = _write_zip(tmp_path / "other.zip", {"IDS_mapping.csv": b"a,b\n"})
    with pytest.raises(
        DataFormatError,
        match=r"other\.zip: zip archive must hold exactly one 'diabetic_data\.csv', "
        r"found 0 \(archive holds: IDS_mapping\.csv\)",
    ):
        load_diabetes(no_member)


def test_load_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"is not an existing file"):
        load_diabetes(tmp_path / "absent.csv")


# ---------------------------------------------------------------------- download
def test_download_from_file_url(tmp_path: Path) -> None:
    table = _small_table()
    archive = _write_zip(
        tmp_path / "uci.zip", {DIABETES_MEMBER: _csv_bytes(table), "IDS_mapping.csv": b"a\n"}
    )
    dest = tmp_path / "new" / "nested"
    path = download_diabetes(dest, url=archive.as_uri(), timeout=5)
    assert path == dest / DIABETES_MEMBER
    assert sorted(p.name for p in dest.iterdir()) == [DIABETES_MEMBER]
    assert path.read_bytes() == _csv_bytes(table)
    assert load_diabetes(path).shape == (12, 50)


def _bad_archives(tmp_path: Path) -> list[tuple[Path, str]]:
    bad_label = _small_table()
    bad_label.loc[0, "readmitted"] = "maybe"
    not_zip = tmp_path / "not.zip"
    not_zip.write_bytes(b"<html>Service unavailable</html>")
    return [
        (not_zip, r"download is not a readable zip archive"),
        (
            _write_zip(tmp_path / "nomember.zip", {"other.csv": b"x\n"}),
            r"must hold exactly one 'diabetic_data\.csv', found 0",
        ),
        (
            _write_zip(tmp_path / "badvalue.zip", {DIABETES_MEMBER: _csv_bytes(bad_label)}),
            r"column 'readmitted' has 1 value\(s\)",
        ),
    ]


@pytest.mark.parametrize("case", [0, 1, 2])
def test_failed_download_leaves_nothing_behind(tmp_path: Path, case: int) -> None:
    archive, match = _bad_archives(tmp_path)[case]
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / DIABETES_MEMBER).write_text("previous good copy")
    with pytest.raises(DataFormatError, match=match):
        download_diabetes(dest, url=archive.as_uri())
    assert sorted(p.name for p in dest.iterdir()) == [DIABETES_MEMBER]
    assert (dest / DIABETES_MEMBER).read_text() == "previous good copy"


def test_unreachable_url_leaves_nothing_behind(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    with pytest.raises(urllib.error.URLError):
        download_diabetes(dest, url=(tmp_path / "absent.zip").as_uri())
    assert list(dest.iterdir()) == []


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"url": "ftp://example.org/x.zip"}, ValueError, r"`url` must use scheme"),
        ({"url": "/tmp/x.zip"}, ValueError, r"got '' in '/tmp/x\.zip'"),
        ({"timeout": 0}, ValueError, r"`timeout` must be in \(0, inf\), got 0\.0"),
    ],
)
def test_download_rejects_arguments(tmp_path: Path, kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        download_diabetes(tmp_path, **kwargs)


# ---------------------------------------------------------------------- arm rules
@pytest.mark.parametrize("medication", MEDICATION_COLUMNS)
def test_each_medication_alone_maps_to_its_paper_arm(medication: str) -> None:
    frame = _frame([_record(**{medication: "Steady"})])
    np.testing.assert_array_equal(assign_arms(frame), [PAPER_ARM[medication]])


def test_arm_rules() -> None:
    frame = _frame(
        [
            _record(),  # no medication -> arm 4
            _record(glipizide="Steady", rosiglitazone="Steady"),  # same group -> 2
            _record(tolazamide="Steady", pioglitazone="Steady"),  # same group -> 3
            _record(insulin="Steady", metformin="Steady"),  # two groups
            _record(metformin="Steady", glyburide_metformin="Steady"),  # two groups
            _record(insulin="Steady", glyburide="Up"),  # dose change
            _record(acarbose="Down"),  # dose change
            _record(insulin="Up", metformin="Steady"),  # both: dose change wins
        ]
    )
    arms = assign_arms(frame)
    assert arms.dtype == np.int64
    np.testing.assert_array_equal(
        arms,
        [
            4,
            2,
            3,
            EXCLUDED_SEVERAL_GROUPS,
            EXCLUDED_SEVERAL_GROUPS,
            EXCLUDED_DOSE_CHANGE,
            EXCLUDED_DOSE_CHANGE,
            EXCLUDED_DOSE_CHANGE,
        ],
    )
    assert (EXCLUDED_DOSE_CHANGE, EXCLUDED_SEVERAL_GROUPS) == (-1, -2)


def test_assign_arms_rejects() -> None:
    with pytest.raises(TypeError, match=r"`data` must be a pandas DataFrame, got list"):
        assign_arms([_record()])
    with pytest.raises(
        DataFormatError, match=r"`data`: missing 1 expected column\(s\): readmitted\."
    ):
        assign_arms(_frame([_record()]).drop(columns="readmitted"))


@needs_sample
def test_arm_assignment_counts_on_sample() -> None:
    arms = assign_arms(load_diabetes(SAMPLE))
    values, counts = np.unique(arms, return_counts=True)
    assert dict(zip(values.tolist(), counts.tolist())) == {
        EXCLUDED_SEVERAL_GROUPS: 853,
        EXCLUDED_DOSE_CHANGE: 1106,
        0: 1085,
        1: 175,
        2: 302,
        3: 324,
        4: 1154,
    }


# ------------------------------------------------------------------ hospital_bandit
def test_hospital_bandit_known_values() -> None:
    # Eligible records k = 0..9 have arm k % 5 and reward [1, 0, 0][k % 3];
    # hospital 0 holds k = 0..4, hospital 1 holds k = 5..9.
    env = hospital_bandit(_small_table(), n_agents=2)
    assert (env.n_agents, env.n_arms, env.n_records) == (2, 5, 10)
    np.testing.assert_array_equal(env.row_index, [0, 1, 2, 4, 5, 6, 7, 9, 10, 11])
    np.testing.assert_array_equal(env.agents, [0] * 5 + [1] * 5)
    np.testing.assert_array_equal(env.arms, [0, 1, 2, 3, 4] * 2)
    np.testing.assert_array_equal(env.record_counts, np.ones((2, 5)))
    assert env.record_counts.dtype == np.int64
    np.testing.assert_array_equal(
        env.arm_means, [[1.0, 0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0, 1.0]]
    )
    np.testing.assert_array_equal(env.global_means, [0.5, 0.5, 0.0, 0.5, 0.5])
    assert env.best_arm == 0
    np.testing.assert_array_equal(env.gaps, [0.0, 0.0, 0.5, 0.0, 0.0])
    assert env.reward_bounds == (0.0, 1.0)
    # One record per cell: every entry of the table is that record's reward.
    table = env.sample_rewards(20, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(table, np.broadcast_to(env.arm_means[:, None], table.shape))


def test_hospital_bandit_is_a_frozen_environment() -> None:
    env = hospital_bandit(_small_table(), n_agents=2)
    assert isinstance(env, BanditEnvironment)
    with pytest.raises(dataclasses.FrozenInstanceError):
        env.n_agents = 3  # type: ignore[misc]
    with pytest.raises(ValueError, match="read-only"):
        env.rewards[0] = 0.5
    assert env == hospital_bandit(_small_table(), n_agents=2)
    assert hash(env) == hash(hospital_bandit(_small_table(), n_agents=2))


def _cycling_table(n_records: int) -> pd.DataFrame:
    """Eligible records whose arms cycle 0..4, rewards alternating 1, 0, 0."""
    return _frame([_arm_record(k % N_ARMS, [">30", "NO", "<30"][k % 3]) for k in range(n_records)])


def test_contiguous_split_sizes_differ_by_at_most_one() -> None:
    env = hospital_bandit(_cycling_table(17), n_agents=3)
    np.testing.assert_array_equal(env.agents, [0] * 6 + [1] * 6 + [2] * 5)
    np.testing.assert_array_equal(env.record_counts.sum(axis=1), [6, 6, 5])


def test_random_split_is_a_reproducible_permutation() -> None:
    table = _cycling_table(300)
    env = hospital_bandit(table, n_agents=3, split="random", rng=np.random.default_rng(4))
    again = hospital_bandit(table, n_agents=3, split="random", rng=np.random.default_rng(4))
    assert env == again
    np.testing.assert_array_equal(np.bincount(env.agents), [100, 100, 100])
    contiguous = hospital_bandit(table, n_agents=3)
    assert not np.array_equal(env.agents, contiguous.agents)
    np.testing.assert_array_equal(env.arms, contiguous.arms)


def test_contiguous_split_ignores_rng() -> None:
    rng = np.random.default_rng(9)
    env = hospital_bandit(_cycling_table(15), n_agents=3, rng=rng)
    assert env == hospital_bandit(_cycling_table(15), n_agents=3)
    assert rng.random() == np.random.default_rng(9).random()


def test_hospital_bandit_names_empty_cells() -> None:
    # Arm 1 (metformin) occurs only among the first records, so hospital 1 has none.
    rows = [_arm_record(k, ">30") for k in range(5)] + [
        _arm_record(k, "NO") for k in (0, 2, 3, 4, 0)
    ]
    with pytest.raises(DataFormatError, match=r"none for hospital 1 / arm 1\.$"):
        hospital_bandit(_frame(rows), n_agents=2)
    with pytest.raises(DataFormatError, match=r"hospital 2 / arm 0, hospital 2 / arm 1"):
        hospital_bandit(_cycling_table(10), n_agents=3)


@pytest.mark.parametrize(
    ("data", "kwargs", "error", "match"),
    [
        (_cycling_table(10), {"n_agents": 0}, ValueError, r"`n_agents` must be >= 1"),
        (_cycling_table(10), {"n_agents": 2.0}, TypeError, r"`n_agents` must be an int"),
        (
            _cycling_table(10),
            {"split": "stratified"},
            ValueError,
            r"`split` must be one of \['contiguous', 'random'\], got 'stratified'",
        ),
        (
            _cycling_table(10),
            {"split": "random"},
            TypeError,
            r"`rng` must be a numpy\.random\.Generator for split='random'",
        ),
        (
            _frame([_record(insulin="Up"), _record(insulin="Steady", metformin="Steady")]),
            {},
            DataFormatError,
            r"no eligible record among 2 rows \(1 with an Up/Down dosage, 1 with",
        ),
        ("table.csv", {}, TypeError, r"`data` must be a pandas DataFrame, got str"),
    ],
)
def test_hospital_bandit_rejects(data, kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        hospital_bandit(data, **kwargs)


VALID_RECORDS = {
    "agents": [0, 0, 1, 1],
    "arms": [0, 1, 0, 1],
    "rewards": [1.0, 0.0, 0.0, 1.0],
    "n_agents": 2,
    "n_arms": 2,
}


def test_hospital_bandit_class_direct_construction() -> None:
    env = HospitalBandit(**VALID_RECORDS)
    np.testing.assert_array_equal(env.row_index, [0, 1, 2, 3])
    np.testing.assert_array_equal(env.arm_means, [[1.0, 0.0], [0.0, 1.0]])
    assert env.agents.dtype == env.arms.dtype == env.row_index.dtype == np.int64


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"arms": [0, 1, 1]}, ValueError, r"`arms` must have shape \(4,\) like `agents`"),
        (
            {"agents": [0, 0, 1, 2]},
            ValueError,
            r"`agents` must lie in \[0, 1\]; found values in \[0, 2\]",
        ),
        ({"arms": [0, 1, 0, 2]}, ValueError, r"`arms` must lie in \[0, 1\]"),
        ({"agents": [0.0, 0.0, 1.0, 1.0]}, TypeError, r"`agents` must be an integer"),
        ({"rewards": [0.0, 2.0, 0.0, 0.0]}, ValueError, r"`rewards` must lie in \[0\.0"),
        ({"agents": [], "arms": [], "rewards": []}, ValueError, r"`agents` must be 1-D"),
        ({"row_index": [0]}, ValueError, r"`row_index` must have shape \(4,\)"),
        ({"n_arms": 1}, ValueError, r"`n_arms` must be >= 2, got 1"),
        ({"n_agents": 0}, ValueError, r"`n_agents` must be >= 1, got 0"),
        (
            {"agents": [0, 0, 0, 1]},
            DataFormatError,
            r"every \(hospital, arm\) pair needs >= 1 record; none for hospital 1 / arm 0\.$",
        ),
    ],
)
def test_hospital_bandit_class_rejects(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        HospitalBandit(**(VALID_RECORDS | kwargs))


# ------------------------------------------------------------------------ sampling
@st.composite
def record_sets(draw: st.DrawFn) -> HospitalBandit:
    """Record sets covering every (hospital, arm) cell, plus random extra records."""
    n_agents = draw(st.integers(1, 4))
    n_arms = draw(st.integers(2, 5))
    n_extra = draw(st.integers(0, 30))
    cover = np.arange(n_agents * n_arms)
    extra = np.array(
        draw(st.lists(st.integers(0, n_agents * n_arms - 1), min_size=n_extra, max_size=n_extra)),
        dtype=np.int64,
    )
    cells = np.concatenate([cover, extra])
    rewards = draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=cells.size, max_size=cells.size))
    return HospitalBandit(
        agents=cells // n_arms,
        arms=cells % n_arms,
        rewards=rewards,
        n_agents=n_agents,
        n_arms=n_arms,
    )


@PROPERTY
@given(env=record_sets(), horizon=st.integers(1, 40), seed=st.integers(0, 2**32 - 1))
def test_draws_come_from_the_pulling_hospitals_records_of_the_arm(
    env: HospitalBandit, horizon: int, seed: int
) -> None:
    indices = env.sample_record_indices(horizon, rng=np.random.default_rng(seed))
    shape = (env.n_agents, horizon + 1, env.n_arms)
    assert indices.shape == shape
    assert indices.dtype == np.int64
    np.testing.assert_array_equal(
        env.agents[indices], np.broadcast_to(np.arange(env.n_agents)[:, None, None], shape)
    )
    np.testing.assert_array_equal(
        env.arms[indices], np.broadcast_to(np.arange(env.n_arms)[None, None, :], shape)
    )
    table = env.sample_rewards(horizon, rng=np.random.default_rng(seed))
    assert table.dtype == np.float64
    assert np.all((table == 0.0) | (table == 1.0))
    np.testing.assert_array_equal(table, env.rewards[indices])


def test_sampling_rejects_bad_arguments() -> None:
    env = hospital_bandit(_small_table(), n_agents=2)
    with pytest.raises(ValueError, match=r"`horizon` must be >= 1, got 0"):
        env.sample_rewards(0, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match=r"`rng` must be a numpy\.random\.Generator"):
        env.sample_rewards(5, rng=42)


@pytest.mark.statistical
def test_reward_means_match_record_rates() -> None:
    # Cells with rates 1/4, 2/3 and 1/2 (1, 3 and 2 records). Hoeffding for [0, 1]
    # rewards, union bound over 4 cells: P(any |mean - rate| >= tol)
    # <= 4 * 2 exp(-2 n tol^2) = FALSE_FAILURE_PROBABILITY.
    env = HospitalBandit(
        agents=[0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1],
        arms=[0, 0, 0, 0, 1, 1, 1, 0, 1, 1, 0],
        rewards=[1, 0, 0, 0, 1, 1, 0, 1, 1, 0, 0],
        n_agents=2,
        n_arms=2,
    )
    rates = np.array([[0.25, 2 / 3], [0.5, 0.5]])
    np.testing.assert_allclose(env.arm_means, rates, atol=1e-15)
    horizon = 50_000
    tol = math.sqrt(math.log(2 * 4 / FALSE_FAILURE_PROBABILITY) / (2 * (horizon + 1)))
    table = env.sample_rewards(horizon, rng=np.random.default_rng(20240604))
    np.testing.assert_array_less(np.abs(table.mean(axis=1) - rates), tol)


# ------------------------------------------------------------------ the real sample
SAMPLE_COUNTS = [[442, 48, 96, 90, 338], [387, 50, 103, 101, 372], [256, 77, 103, 133, 444]]


@needs_sample
def test_sample_hospital_bandit_counts() -> None:
    env = hospital_bandit(load_diabetes(SAMPLE))
    np.testing.assert_array_equal(env.record_counts, SAMPLE_COUNTS)
    assert env.n_records == 3040
    data = load_diabetes(SAMPLE)
    successes = (data["readmitted"].to_numpy()[env.row_index] == ">30").sum()
    assert np.sum(env.arm_means * env.record_counts) == pytest.approx(successes)
    assert env.arm_means[0, 1] == pytest.approx(22 / 48)


@needs_sample
@pytest.mark.statistical
def test_sample_reward_means() -> None:
    # Hoeffding for [0, 1] rewards, union bound over the 15 (hospital, arm) cells:
    # P(any |mean - mu| >= tol) <= 15 * 2 exp(-2 n tol^2) = FALSE_FAILURE_PROBABILITY.
    env = hospital_bandit(load_diabetes(SAMPLE))
    horizon = 30_000
    tol = math.sqrt(math.log(2 * 15 / FALSE_FAILURE_PROBABILITY) / (2 * (horizon + 1)))
    table = env.sample_rewards(horizon, rng=np.random.default_rng(20240605))
    assert table.shape == (3, horizon + 1, 5)
    np.testing.assert_array_less(np.abs(table.mean(axis=1) - env.arm_means), tol)
