"""The OCR digits study: data, universum builder, quick run, table, bad settings."""

import re
from dataclasses import replace

import numpy as np
import pytest

from bci_universum.studies.ocr_digits import (
    QUICK_CONFIG,
    OCRStudyConfig,
    format_ocr_table,
    load_ocr_digits,
    mean_universum,
    ocr_study_results,
    run_ocr_study,
)

CONFIG = QUICK_CONFIG


def _cells(row: str) -> list[str]:
    """Cells of a Markdown table row (``\\|`` is an escaped pipe inside a cell)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


@pytest.fixture(scope="module")
def quick_result():
    return ocr_study_results(CONFIG, random_state=0)


def test_load_ocr_digits():
    X, y, X_threes = load_ocr_digits()
    assert X.shape == (356, 64) and X_threes.shape == (183, 64)
    assert (y == 1).sum() == 182 and (y == -1).sum() == 174
    assert X.min() == 0 and X.max() == 16


def test_mean_universum_averages_one_trial_of_each_class():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(9, 3))
    y = np.array([1, 1, 1, 1, -1, -1, -1, -1, -1])
    Z = mean_universum(X, y, 20, np.random.default_rng(5))
    pairs = 0.5 * (X[y > 0][:, None, :] + X[y < 0][None, :, :])
    for z in Z:
        assert np.isclose(pairs, z).all(axis=-1).any()
    np.testing.assert_array_equal(Z, mean_universum(X, y, 20, np.random.default_rng(5)))


def test_quick_study_errors_are_sensible(quick_result):
    errors = quick_result.errors
    small, large = CONFIG.train_sizes
    baselines = [c for c in ("SVM", "LS-SVM") if c in CONFIG.classifiers]
    keys = [(None, 0, name) for name in baselines] + [
        (u, n, name)
        for u in CONFIG.universa
        for n in CONFIG.universum_sizes
        for name in CONFIG.classifiers
        if name not in baselines
    ]
    for key in keys:
        e_small, e_large = errors[(*key, small)], errors[(*key, large)]
        assert e_small.shape == e_large.shape == (CONFIG.n_splits,)
        # Observed over seeds 0-3: mean error ≤ 5.7 % at |L| = 10 and ≤ 1.4 % at |L| = 40.
        assert e_small.mean() < 0.10, key
        assert e_large.mean() < 0.04, key
        assert e_large.mean() < e_small.mean(), key


def test_universum_models_fall_back_to_their_baseline(quick_result):
    baseline_of = {"U-SVM": "SVM", "U_ls-SVM": "LS-SVM"}
    for (universum, n_u, name, n_train), chosen in quick_result.universum_chosen.items():
        errors = quick_result.errors[(universum, n_u, name, n_train)]
        base = quick_result.errors[(None, 0, baseline_of[name], n_train)]
        np.testing.assert_array_equal(errors[~chosen], base[~chosen])


def test_table_has_expected_rows_and_columns(quick_result):
    table = format_ocr_table(quick_result)
    for universum in CONFIG.universa:
        section = table.split(f"### Universum {universum}")[1].split("###")[0]
        rows = [line for line in section.splitlines() if line.startswith("|")]
        header = _cells(rows[0])
        n_u = CONFIG.universum_sizes[0]
        expected = ["\\|L\\|"]
        for base, model in (("SVM", "U-SVM"), ("LS-SVM", "U_ls-SVM")):
            expected += [name for name in (base,) if name in CONFIG.classifiers]
            expected += [
                f"{model} \\|U\\|={n_u}" for name in (model,) if name in CONFIG.classifiers
            ]
        assert header == expected
        body = rows[2:]
        assert [_cells(r)[0] for r in body] == [str(n) for n in CONFIG.train_sizes]
        for row in body:
            cells = _cells(row)[1:]
            assert len(cells) == len(expected) - 1
            assert all("±" in c for c in cells)
    svm = quick_result.errors[(None, 0, CONFIG.classifiers[0], CONFIG.train_sizes[0])]
    assert f"{100 * svm.mean():.2f} ± {100 * svm.std(ddof=1):.2f}" in table


def test_run_is_reproducible_and_parallel_safe():
    tiny = replace(CONFIG, train_sizes=(10,), n_splits=2, universa=("U_mean",))
    serial = run_ocr_study(config=tiny, random_state=3)
    assert serial == run_ocr_study(config=tiny, random_state=3, n_jobs=2)
    assert serial.startswith("## OCR study: digits 5 vs 8")


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"train_sizes": (11,)}, "train_sizes must be even"),
        ({"train_sizes": (400,)}, "train_sizes must be even"),
        ({"universum_sizes": (500,)}, "universum_sizes must lie in"),
        ({"n_splits": 1}, "n_splits must be at least 2"),
        ({"C_universum_grid": (1.0, 10.0)}, "must contain 0"),
        ({"classifiers": ("SVM", "kNN")}, "classifiers must be a non-empty subset"),
        ({"classifiers": ("U_ls-SVM",)}, "needs its baseline LS-SVM"),
        ({"universa": ("U_gen",)}, "universa must be a non-empty subset"),
        ({"sigma": 3}, "Unknown study settings"),
    ],
)
def test_bad_settings_are_rejected(overrides, match):
    with pytest.raises(ValueError, match=match):
        run_ocr_study(config=replace(CONFIG, n_splits=2), **overrides)


def test_default_config_is_the_thesis_protocol():
    config = OCRStudyConfig()
    assert config.C_grid == (1.0, 10.0, 100.0)
    assert config.C_universum_grid == (0.0, 1.0, 10.0, 100.0)
    assert config.epsilon_grid == (0.01, 0.05, 0.1, 0.5)
    assert config.n_splits == 10 and config.cv_folds == 10
