"""PhysioNet eegmmidb from the local copy in MNE's layout (real data)."""

import pytest

from bci_universum.datasets import load_eegmmidb


@pytest.mark.data
def test_eegmmidb_universa(data_dir):
    e = load_eegmmidb(1, (4, 8, 12), path=data_dir, universum=("rest", "baseline", "task"))
    counts = e.counts()
    # 15 task trials per run (T1 + T2), 15 rest periods per run (data README)
    assert counts["left"] + counts["right"] == 45
    assert counts["universum/rest"] == 45
    assert counts["universum/task"] == 45
    # R01, R02: 61 s of data each; a 1 s window every 4 s from 0 s: 15 windows per run
    assert counts["universum/baseline"] == 2 * 15
    assert set(e.runs[e.universum_kinds == "task"]) == {"6", "10", "14"}
    assert set(e.runs[e.universum_kinds == "baseline"]) == {"1", "2"}
    assert e.X.shape[1:] == (64, 161) and e.sfreq == 160.0
    assert "C3" in e.ch_names
    with pytest.raises(FileNotFoundError, match="subject 1 run 3"):
        load_eegmmidb(1, (3,), path=data_dir / "bci4als")


@pytest.mark.parametrize(
    ("runs", "kwargs", "match"),
    [
        ((4, 4, 8), {}, r"eegmmidb runs entry 4 is listed more than once"),
        ((), {}, r"eegmmidb runs is empty"),
        ((4, 8), {"universum": ("task",), "task_runs": (8, 12)},
         r"runs \[8\] are in both runs and task_runs"),
        ((4,), {"universum": ("task",), "task_runs": (1,)},
         r"eegmmidb task_runs: task runs are 3–14, got \[1\]"),
        ((4,), {"universum": ("task",), "task_runs": (6, 6)},
         r"task_runs entry 6 is listed more than once"),
        ((4,), {"universum": ("baseline",), "baseline_runs": ()}, r"baseline_runs is empty"),
        ((4,), {"universum": ("baseline",), "baseline_runs": (4,)},
         r"baseline_runs: baseline runs are 1–2, got \[4\]"),
        (("4", "8"), {}, r"eegmmidb runs: runs are numbers \(task runs are 3–14\), got '4'"),
        ((4, True), {}, r"runs are numbers .*, got True"),
        ((4,), {"universum": ("baseline",), "baseline_step": 0},
         r"baseline_step must be a positive number of seconds, got 0"),
    ],
)  # fmt: skip
def test_bad_run_selections_are_refused_before_reading(tmp_path, runs, kwargs, match):
    """A run twice (or a labelled run also a universum run) would put one trial in training
    and test folds; refused before any file is read (the folder is empty)."""
    with pytest.raises(ValueError, match=match):
        load_eegmmidb(1, runs, path=tmp_path, **kwargs)
