"""Paired statistics: every pipeline against a reference, paired by split."""

import numpy as np
import pytest

from bci_universum.evaluation import compare_to_pipeline, write_report
from bci_universum.model_selection import corrected_paired_ttest

from .test_report import _rows


def test_pipeline_comparison_pairs_by_split(tmp_path):
    a = [0.60, 0.70, 0.65, 0.75, 0.62]
    b = [0.55, 0.71, 0.60, 0.70, 0.66]
    other = [{**r, "pipeline": "ts_lr", "split": r["split"]} for r in _rows("S1", "none", b)]
    rows = _rows("S1", "none", a) + _rows("S1", "U_C3", a[::-1]) + other[::-1]  # any order
    tests = compare_to_pipeline(rows, ("ts_lr", "none"))
    assert [(t["pipeline"], t["universum"]) for t in tests] == [("p", "none"), ("p", "U_C3")]
    expected = corrected_paired_ttest(a, b, 90, 10)
    assert tests[0]["p_corrected"] == pytest.approx(expected.pvalue)
    assert tests[0]["mean_difference"] == pytest.approx(np.mean(a) - np.mean(b))
    paths = write_report(rows, tmp_path, reference=("ts_lr", "none"))
    assert "ts_lr + none" in paths["markdown"].read_text()
    assert len(paths["tests"].read_text().splitlines()) == 1 + 1 + 2  # header, baseline, reference
