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
