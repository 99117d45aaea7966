"""Tests of the evaluation engine: protocols, universa, caching/resume, backends, fail-fast."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import distributed
import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from bci_universum.classifiers import ECOCUniversumClassifier, UniversumSVC
from bci_universum.datasets import EpochSet
from bci_universum.evaluation import (
    CrossGroup,
    LearningCurve,
    WithinSession,
    accepts_universum,
    evaluate,
    plan_jobs,
    select_and_fit,
    with_universum,
)
from bci_universum.evaluation_report import (
    compare_to_pipeline,
    read_csv,
    results_table,
    write_report,
)
from bci_universum.features.csp import CSP
from bci_universum.model_selection import (
    UniversumStratifiedKFold,
    corrected_paired_ttest,
    universum_scorer,
)
from tests.bci_universum.test_evaluation_report import assert_png_panels

pytestmark = pytest.mark.filterwarnings("ignore:pipelines without a universum classifier")

ROOT = Path(__file__).resolve().parents[2]
GRID = {"C": (1.0, 10.0), "C_universum": (0.0, 1.0), "epsilon": (0.1,)}
CHANNELS = ["FC3", "C3", "Cz", "C4", "O1", "O2"]


def make_epochs(subject="S1", n_per_class=12, n_rest=6, runs=("R1", "R2"), effect=0.6, seed=0):
    """Two motor-imagery-like classes (variance over C3 or C4) and rest trials, per run."""
    rng = np.random.default_rng(seed)
    X, y, run, kinds = [], [], [], []
    for r in runs:
        for label, ch in (("left", 3), ("right", 1)):
            for _ in range(n_per_class):
                scale = np.ones(len(CHANNELS))
                scale[ch] += effect * rng.uniform(0.5, 1.5)
                X.append(rng.standard_normal((len(CHANNELS), 40)) * scale[:, None])
                y.append(label)
                run.append(r)
                kinds.append("")
        for _ in range(n_rest):
            X.append(rng.standard_normal((len(CHANNELS), 40)))
            y.append("universum")
            run.append(r)
            kinds.append("rest")
    return EpochSet(
        np.array(X), y, run, "ses1", kinds, 100.0, list(CHANNELS), subject, "synthetic"
    )


def csp_usvm(epochs):
    return make_pipeline(CSP(2), UniversumSVC(kernel="linear"))


def csp_lda(epochs):
    return make_pipeline(CSP(2), LinearDiscriminantAnalysis())


class CountingLDA(ClassifierMixin, BaseEstimator):
    """LDA that counts its fits in a file (across processes).

    A file ``<log>.stop`` holding ``N`` makes the fit after ``N`` logged fits raise, or block
    (for a SIGKILL) with ``N block``; it is not a parameter, so cache keys do not change.
    """

    def __init__(self, log=None):
        self.log = log

    def fit(self, X, y):
        log = Path(self.log)
        stop = log.with_suffix(".stop")
        if stop.exists():
            limit, *block = stop.read_text().split()
            if _fits(log) >= int(limit):
                if block:
                    time.sleep(3600)  # the parent SIGKILLs us here
                raise RuntimeError("interrupted")
        with log.open("a") as fh:
            fh.write("fit\n")
        self.lda_ = LinearDiscriminantAnalysis().fit(X, y)
        self.classes_ = self.lda_.classes_
        return self

    def predict(self, X):
        return self.lda_.predict(X)

    def decision_function(self, X):
        return self.lda_.decision_function(X)


class Counting:
    """Picklable factory of CSP + CountingLDA."""

    def __init__(self, log):
        self.log = str(log)

    def __call__(self, epochs):
        return make_pipeline(CSP(2), CountingLDA(self.log))


def _fits(log) -> int:
    return len(Path(log).read_text().splitlines()) if Path(log).exists() else 0


def _without_time(rows):
    return [{k: v for k, v in r.items() if k != "fit_time"} for r in rows]


@pytest.fixture(scope="module")
def data():
    return [make_epochs("S1", seed=1), make_epochs("S2", seed=2)]


# --- protocols -------------------------------------------------------------------------------


def test_within_session_folds_partition_labelled_trials_and_pair_across_universa(data):
    jobs = plan_jobs(data[:1], {"usvm": csp_usvm}, ["none", "U_C3", "U_mean"],
                     WithinSession(3, 3, GRID))  # fmt: skip
    y = data[0].y
    labelled = np.flatnonzero(y != "universum")
    by_split = {}
    for job in jobs:
        by_split.setdefault(job.split.name, []).append(job)
        assert not np.isin(job.split.test, np.flatnonzero(y == "universum")).any()
        assert not np.intersect1d(job.train, job.split.test).size
        n_u = np.sum(y[job.train] == "universum")
        assert n_u == (12 if job.universum == "U_C3" else 0)  # recorded rest trials only for U_C3
    tests = np.concatenate([jobs[0].split.test for jobs in by_split.values()])
    np.testing.assert_array_equal(np.sort(tests), labelled)  # each labelled trial tested once
    for group in by_split.values():  # same labelled folds whatever the universum
        for job in group[1:]:
            np.testing.assert_array_equal(job.split.test, group[0].split.test)
            np.testing.assert_array_equal(job.split.train, group[0].split.train)


def test_cross_run_universum_from_the_new_run(data):
    epochs = data[0]
    protocol = CrossGroup("run", universum_from="test", inner_splits=3, param_grid=GRID)
    jobs = plan_jobs([epochs], {"usvm": csp_usvm}, ["U_C3:rest"], protocol)
    assert sorted(j.split.name for j in jobs) == ["R1->R2", "R2->R1"]
    for job in jobs:
        test_run = job.split.name.split("->")[1]
        assert set(epochs.runs[job.split.test]) == {test_run}
        assert set(epochs.runs[job.split.train]) == {"R1", "R2"} - {test_run}
        uni = job.train[epochs.y[job.train] == "universum"]
        assert uni.size == 6 and set(epochs.runs[uni]) == {test_run}
    train_side = plan_jobs([epochs], {"usvm": csp_usvm}, ["U_C3"],
                           CrossGroup("run", inner_splits=3, param_grid=GRID))  # fmt: skip
    for job in train_side:
        uni = job.train[epochs.y[job.train] == "universum"]
        assert set(epochs.runs[uni]) == {job.split.name.split("->")[0]}


def test_learning_curve_subsets_are_nested_and_test_sets_fixed(data):
    epochs = data[0]
    jobs = plan_jobs([epochs], {"usvm": csp_usvm}, ["U_C3"],
                     LearningCurve((3, 6), n_repeats=2, param_grid=GRID))  # fmt: skip
    assert len(jobs) == 4
    for r in ("repeat0", "repeat1"):
        small, large = (j for j in jobs if j.split.name == r)
        assert small.split.inner_splits == 3 and large.split.inner_splits == 5
        assert set(small.split.train) < set(large.split.train)
        np.testing.assert_array_equal(small.split.test, large.split.test)
        _, counts = np.unique(epochs.y[small.split.train], return_counts=True)
        assert counts.tolist() == [3, 3]
        assert np.sum(epochs.y[small.train] == "universum") == 12
    assert not np.array_equal(jobs[0].split.test, jobs[2].split.test)


def test_evaluate_rows_metrics_and_selected_params(data):
    with pytest.warns(UserWarning, match=r"skipping \[\('lda', 'U_C3'\), \('lda', 'centred'\)\]"):
        rows = evaluate(data, {"usvm": csp_usvm, "lda": csp_lda}, ["none", "U_C3", "centred"],
                        WithinSession(3, 3, GRID), progress=False)  # fmt: skip
    # lda has no universum classifier: none only; 2 subjects x 3 folds x (3 + 1) x 2 metrics
    assert len(rows) == 2 * 3 * 4 * 2
    assert {r["metric"] for r in rows} == {"accuracy", "roc_auc"}
    assert all(0.0 <= r["score"] <= 1.0 for r in rows)
    acc = [r["score"] for r in rows if r["metric"] == "accuracy"]
    assert np.mean(acc) > 0.7  # the synthetic classes are separable above chance
    for r in rows:
        params = json.loads(r["params"])
        if r["pipeline"] == "lda":
            assert params == {}
        elif r["universum"] == "none":
            assert set(params) == {"C"}  # C_universum, epsilon cannot matter without universum
        else:
            assert set(params) == {"C", "C_universum", "epsilon"}


def test_evaluate_is_deterministic_and_seed_dependent(data):
    args = (data[:1], {"usvm": csp_usvm}, ["none", "U_mean"], WithinSession(3, 3, GRID))
    a = evaluate(*args, seed=3, progress=False)
    b = evaluate(*args, seed=3, progress=False)
    c = evaluate(*args, seed=4, progress=False)
    assert _without_time(a) == _without_time(b)
    assert [r["key"] for r in a] != [r["key"] for r in c]


@pytest.mark.parametrize("universum", ["U_C3", "centred", "U_mean"])
def test_select_and_fit_matches_grid_search(universum):
    epochs = make_epochs(effect=0.25, seed=1)  # hard enough for the grid points to differ
    keep = epochs.y != "universum" if universum == "U_mean" else slice(None)
    X, y = epochs.X[keep], epochs.y[keep]
    estimator = with_universum(csp_usvm(epochs), universum, epochs, seed=5)
    prefix = "estimator__" if universum == "U_mean" else ""
    points = {"C": (0.001, 0.1, 10.0), "C_universum": (0.0, 1.0), "epsilon": (0.1,)}
    grid = {f"{prefix}universumsvc__{k}": list(v) for k, v in points.items()}
    if universum == "centred":
        grid = {k.replace("svc__", "svc__estimator__"): v for k, v in grid.items()}
    cv = UniversumStratifiedKFold(3, shuffle=True, random_state=0)
    model, best = select_and_fit(estimator, grid, X, y, cv)
    reference = GridSearchCV(estimator, grid, cv=cv, scoring=universum_scorer("accuracy"))
    reference.fit(X, y)
    assert np.unique(reference.cv_results_["mean_test_score"]).size > 2
    assert best == reference.best_params_
    np.testing.assert_allclose(
        model.decision_function(X), reference.best_estimator_.decision_function(X), rtol=1e-10
    )


class _LabelledOnly(BaseEstimator):
    """A meta-estimator with a universum_label that fits its estimator on labelled trials."""

    def __init__(self, estimator, universum_label=None):
        self.estimator = estimator
        self.universum_label = universum_label


def test_accepts_universum_follows_final_step_and_wrappers(data):
    assert accepts_universum(csp_usvm(data[0]))
    assert accepts_universum(with_universum(csp_usvm(data[0]), "centred_U_nm", data[0], 0))
    assert accepts_universum(ECOCUniversumClassifier(UniversumSVC()))
    assert not accepts_universum(csp_lda(data[0]))
    assert not accepts_universum(
        make_pipeline(CSP(2), _LabelledOnly(LinearDiscriminantAnalysis()))
    )


# --- backends --------------------------------------------------------------------------------


def test_serial_joblib_dask_give_identical_results(data, tmp_path):
    args = (data, {"usvm": csp_usvm, "lda": csp_lda}, ["none", "U_C3"],
            WithinSession(3, 3, GRID))  # fmt: skip
    serial = evaluate(*args, progress=False)
    parallel = evaluate(*args, backend="joblib", n_jobs=2, progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False) as cluster:
        address = cluster.scheduler_address  # as `--scheduler ADDRESS` passes it
        on_dask = evaluate(*args, backend="dask", scheduler=address, progress=False)
    assert _without_time(serial) == _without_time(parallel) == _without_time(on_dask)


# --- cache and resume ------------------------------------------------------------------------


def test_interrupted_run_resumes_without_recomputing(data, tmp_path):
    log, cache = tmp_path / "fits.log", tmp_path / "cache"
    protocol = WithinSession(3, 3, GRID)  # CountingLDA has no grid: one fit per job
    log.with_suffix(".stop").write_text("4")
    with pytest.raises(RuntimeError, match="interrupted"):
        evaluate(data, {"lda": Counting(log)}, "none", protocol, cache_dir=cache, progress=False)
    assert _fits(log) == 4
    cached = sorted(cache.glob("*.json"))
    assert len(cached) == 4 and not list(cache.glob("*.tmp"))
    mtimes = {p: p.stat().st_mtime_ns for p in cached}
    log.with_suffix(".stop").unlink()
    rows = evaluate(data, {"lda": Counting(log)}, "none", protocol, cache_dir=cache,
                    progress=False)  # fmt: skip
    assert _fits(log) == 6  # 2 subjects x 3 folds: only the 2 unfinished jobs ran
    assert {p: p.stat().st_mtime_ns for p in cached} == mtimes  # finished files untouched
    fresh = evaluate(data, {"lda": Counting(log)}, "none", protocol, progress=False)
    assert _fits(log) == 12
    assert _without_time(rows) == _without_time(fresh)
    evaluate(data, {"lda": Counting(log)}, "none", protocol, cache_dir=cache, progress=False)
    assert _fits(log) == 12  # everything cached


@pytest.mark.slow
def test_sigkilled_run_resumes_from_its_cache(tmp_path):
    log, cache = tmp_path / "fits.log", tmp_path / "cache"
    log.with_suffix(".stop").write_text("3 block")
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from tests.bci_universum.test_evaluation import Counting, make_epochs, GRID
        from bci_universum.evaluation import WithinSession, evaluate
        evaluate([make_epochs("S1", seed=1)], {{"lda": Counting({str(log)!r})}},
                 "none", WithinSession(5, 3, GRID), cache_dir={str(cache)!r}, progress=False)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while len(list(cache.glob("*.json"))) < 3:  # the child then blocks in its 4th fit
            assert proc.poll() is None, "the evaluation ended before it was killed"
            assert time.monotonic() < deadline, "the evaluation did not reach 3 cached jobs"
            time.sleep(0.05)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert _fits(log) == 3
    log.with_suffix(".stop").unlink()
    evaluate([make_epochs("S1", seed=1)], {"lda": Counting(log)}, "none",
             WithinSession(5, 3, GRID), cache_dir=cache, progress=False)  # fmt: skip
    assert _fits(log) == 5  # only the 2 unfinished folds were fitted


# --- fail fast -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"universa": ["U_C4"]}, "unknown universum 'U_C4'"),
        ({"universa": ["U_C3:feet"]}, "no universum trials of kind 'feet'"),
        ({"universa": ["U_mean:rest"]}, "a kind"),
        ({"classes": ["left", "feet"]}, r"labels \['feet'\] are missing"),
        ({"protocol": WithinSession(25, 3, GRID)}, "fewer than 25"),
        ({"protocol": LearningCurve((20,), 2, param_grid=GRID)}, "training pool"),
        ({"protocol": CrossGroup("session")}, "at least 2 sessions"),
        ({"protocol": CrossGroup("run", pairs=((("R1",), "R7"),))}, r"runs \['R7'\] not found"),
        ({"backend": "spark"}, "backend must be one of"),
    ],
)
def test_bad_configs_fail_before_any_fit(data, tmp_path, kwargs, message):
    log = tmp_path / "fits.log"
    config = {"universa": ["none"], "protocol": WithinSession(3, 3, GRID), **kwargs}
    with pytest.raises(ValueError, match=message):
        evaluate(data, {"lda": Counting(log)}, progress=False, **config)
    assert _fits(log) == 0


def test_recorded_universum_and_motor_channels_are_checked(data, tmp_path):
    no_rest = make_epochs(n_rest=0)
    with pytest.raises(ValueError, match="no recorded universum trials"):
        evaluate(no_rest, {"usvm": csp_usvm}, ["U_C3"], WithinSession(3, 3, GRID),
                 progress=False)  # fmt: skip
    occipital = make_epochs()
    occipital.ch_names = ["O1", "O2", "Oz", "PO3", "PO4", "Pz"]
    with pytest.raises(ValueError, match="needs motor channels"):
        evaluate(occipital, {"usvm": csp_usvm}, ["U_nm"], WithinSession(3, 3, GRID),
                 progress=False)  # fmt: skip
    one_class_run = make_epochs()
    one_class_run.y[(one_class_run.runs == "R1") & (one_class_run.y == "right")] = "left"
    with pytest.raises(ValueError, match="train runs \\('R1',\\): class 'right' has 0"):
        evaluate(one_class_run, {"lda": csp_lda}, ["none"], CrossGroup("run"), progress=False)
    with pytest.raises(TypeError, match="not callable"):
        evaluate(data, {"usvm": "csp_usvm"}, ["none"], progress=False)


# --- reports ---------------------------------------------------------------------------------


def test_report_files_and_table(data, tmp_path):
    rows = evaluate(data, {"usvm": csp_usvm, "lda": csp_lda}, ["none", "U_C3"],
                    WithinSession(3, 3, GRID), progress=False)  # fmt: skip
    curve = evaluate(data[:1], {"usvm": csp_usvm}, ["none", "U_C3"],
                     LearningCurve((3, 6), 3, param_grid=GRID), progress=False)  # fmt: skip
    paths = write_report(rows + curve, tmp_path / "report")
    assert {"csv", "markdown", "boxplot", "learning_curve"} <= set(paths)
    assert_png_panels(paths["boxplot"], 2)  # usvm, lda
    assert_png_panels(paths["learning_curve"], 1, panel_width=5.0)  # one dataset
    back = read_csv(paths["csv"])
    assert _without_time(back) == _without_time(
        [{**r, "fit_time": 0} for r in rows + curve]
    )  # fmt: skip
    table = paths["markdown"].read_text()
    assert "| Pipeline | Universum | S1 | S2 |" in table
    row = next(line for line in table.splitlines() if line.startswith("| usvm | none |"))
    scores = [r["score"] for r in rows if r["pipeline"] == "usvm" and r["universum"] == "none"
              and r["subject"] == "S1" and r["metric"] == "accuracy"]  # fmt: skip
    assert f"{100 * np.mean(scores):.2f} ± {100 * np.std(scores, ddof=1):.2f}" in row
    assert "6 labelled training trials" in results_table(curve)


def _rows(subject, universum, scores, n_train=90, n_test=10):
    return [
        {"dataset": "d", "subject": subject, "session": "1", "pipeline": "p",
         "universum": universum, "protocol": "within-session", "split": f"fold{i}",
         "n_train": n_train, "n_test": n_test, "n_universum": 0, "metric": "accuracy",
         "score": s, "fit_time": 0.0, "params": "{}", "key": ""}
        for i, s in enumerate(scores)
    ]  # fmt: skip


def test_table_marks_corrected_and_plain_significance():
    base = [0.60, 0.70, 0.65, 0.75, 0.62, 0.68, 0.71, 0.66, 0.64, 0.69]
    rng = np.random.default_rng(0)
    big = [b + 0.10 + 0.01 * rng.standard_normal() for b in base]  # clear gain
    small = list(np.add(base, [0.04, 0.0, 0.02, 0.03, 0.01, 0.0, 0.03, 0.02, 0.0, 0.05]))
    rows = (_rows("S1", "none", base) + _rows("S1", "U_C3", big)
            + _rows("S2", "none", base, 20, 20) + _rows("S2", "U_C3", small, 20, 20))  # fmt: skip
    table = results_table(rows)
    line = next(x for x in table.splitlines() if x.startswith("| p | U_C3 |"))
    s1, s2 = line.split(" | ")[2:4]
    assert s1.endswith("*")
    # small gain: plain t = 3.59 (p = 0.006); corrected with n_test/n_train = 1:
    # t = 3.59 * sqrt(0.1 / 1.1) = 1.08 (p = 0.31)
    assert s2.rstrip(" |").endswith("†")
    baseline = next(x for x in table.splitlines() if x.startswith("| p | none |"))
    assert "*" not in baseline and "†" not in baseline
    assert f"{100 * np.mean(base):.2f} ± {100 * np.std(base, ddof=1):.2f}" in baseline


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
