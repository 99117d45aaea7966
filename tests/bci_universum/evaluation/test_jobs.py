"""Evaluation jobs: rows, determinism, universa by name, fail-fast planning, filter bands."""

import json

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.pipeline import make_pipeline

from bci_universum.classifiers import ECOCUniversumClassifier, UniversumSVC
from bci_universum.evaluation import (
    CrossGroup,
    LearningCurve,
    WithinSession,
    accepts_universum,
    evaluate,
    plan_jobs,
    with_universum,
)
from bci_universum.features import FilterBank
from bci_universum.features.csp import CSP
from bci_universum.pipelines import pipeline_factory
from bci_universum.training import check_class_count

from .helpers import GRID, Counting, _fits, _without_time, csp_lda, csp_usvm, make_epochs

pytestmark = pytest.mark.filterwarnings("ignore:pipelines without a universum classifier")


def test_evaluate_rows_metrics_and_selected_params(data):
    with pytest.warns(UserWarning, match=r"skipping \[\('lda', 'U_C3'\), \('lda', 'centred'\)\]"):
        rows = evaluate(data, {"usvm": csp_usvm, "lda": csp_lda}, ["none", "U_C3", "centred"],
                        WithinSession(3, 3, GRID), progress=False)  # fmt: skip
    # lda has no universum classifier: none only; 2 subjects x 3 folds x (3 + 1) x 2 metrics
    assert len(rows) == 2 * 3 * 4 * 2
    assert {r["metric"] for r in rows} == {"accuracy", "roc_auc"}
    acc = [r["score"] for r in rows if r["metric"] == "accuracy"]
    assert np.mean(acc) > 0.7  # the synthetic classes are separable above chance
    auc = [r["score"] for r in rows if r["metric"] == "roc_auc"]
    assert np.mean(auc) > 0.7  # chance: 0.5
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


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"universa": ["U_C4"]}, "unknown universum 'U_C4'"),
        ({"universa": ["U_C3:feet"]}, "no universum trials of kind 'feet'"),
        ({"universa": ["U_mean:rest"]}, "a kind"),
        ({"classes": ["left", "feet"]}, r"labels \['feet'\] are missing"),
        ({"classes": ["left", "left", "right"]}, r"classes lists \['left'\] more than once"),
        ({"classes": []}, r"classes is empty"),
        ({"universa": ["none", "U_C3", "none"]}, r"universa lists \['none'\] more than once"),
        ({"datasets": "twice"}, r"subject '\w+' is given more than once"),
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
    if config.pop("datasets", None) == "twice":  # one subject's rows would be counted twice
        data = [data[0], data[1], data[0]]
    with pytest.raises(ValueError, match=message):
        evaluate(data, {"lda": Counting(log)}, progress=False, **config)
    assert _fits(log) == 0


def test_pipeline_parameters_grid_window_and_classes_are_checked_before_any_fit(data):
    """What a fit would refuse late (after other pipelines were fitted) is refused up front."""
    plan = {"universa": ["none"], "protocol": WithinSession(3, 3, GRID)}
    binary_lda = pipeline_factory("csp_lda", window=(0.0, 0.3), band=None)
    with pytest.raises(ValueError, match=r"pipeline 'usvm', grid C: The 'C' parameter"):
        plan_jobs(data, {"usvm": csp_usvm}, protocol=WithinSession(3, 3, {"C": (1.0, -1.0)}),
                  universa=["none"])  # fmt: skip
    bad = pipeline_factory("csp_lda", n_components="four", window=(0.0, 0.3), band=None)
    with pytest.raises(ValueError, match=r"pipeline 'csp_lda': The 'n_components' parameter"):
        plan_jobs(data, {"csp_lda": bad}, **plan)
    wide = pipeline_factory("csp_lda", n_components=7, window=(0.0, 0.3), band=None)
    with pytest.raises(ValueError, match=r"'csp_lda', step 'csp': n_components=7 .* \(6\)"):
        plan_jobs(data, {"csp_lda": wide}, **plan)  # 6 channels
    grid = WithinSession(3, 3, {"n_components": (2, 8)})
    with pytest.raises(ValueError, match=r"grid n_components, step 'csp': n_components=8 exc"):
        plan_jobs(data, {"csp_lda": binary_lda}, protocol=grid, universa=["none"])
    mean = {"universa": ["U_mean"], "protocol": WithinSession(3, 3, GRID)}  # WithUniversum
    wide_u = pipeline_factory("csp_usvm", n_components=9, window=(0.0, 0.3), band=None)
    with pytest.raises(ValueError, match=r"step 'csp': n_components=9 exceeds the number of"):
        plan_jobs(data, {"csp_usvm": wide_u}, **mean)
    late = pipeline_factory("csp_lda", window=(0.2, 0.6), band=None)  # the epochs span [0, 0.4) s
    with pytest.raises(ValueError, match=r"step 'window': window \(0.2, 0.6\) s is not inside"):
        plan_jobs(data, {"csp_lda": late}, **plan)
    three = make_epochs()
    three.y[: len(three.y) // 8] = "feet"
    binary = pipeline_factory("csp_usvm", window=(0.0, 0.3), band=None)
    with pytest.raises(ValueError, match=r"'csp_usvm': The csp_usvm pipeline is binary; got 3"):
        plan_jobs([three], {"csp_usvm": binary}, **plan)
    assert plan_jobs([three], {"csp_lda": binary_lda}, **plan)  # CSP + LDA takes 3 classes
    with pytest.raises(ValueError, match=r"binary; got 3 classes: \['a', 'b', 'c'\]\.$"):
        check_class_count("csp_usvm", np.array(["a", "b", "c"]))


def test_channel_checks_reach_the_extractor_of_a_filter_bank(data):
    def fbcsp(epochs):
        bank = FilterBank(epochs.sfreq, bands=((8.0, 12.0),), estimator=CSP(7))
        return make_pipeline(bank, LinearDiscriminantAnalysis())

    with pytest.raises(ValueError, match=r"step 'filterbank': n_components=7 exceeds .* \(6\)"):
        plan_jobs(data, {"fbcsp": fbcsp}, universa=["none"], protocol=WithinSession(3, 3, GRID))


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


def _filtered(epochs, band, scale):
    """The same trials as if filtered with ``band`` (here: scaled, to tell them apart)."""
    out = epochs.subset(np.arange(epochs.n_trials))
    out.X = out.X * scale
    out.info["band"] = band
    return out


def test_each_pipeline_runs_on_the_epochs_of_its_band(data):
    epochs = data[0]
    variants = {(7.0, 30.0): _filtered(epochs, (7.0, 30.0), 1.0), None: _filtered(epochs, None, 3)}
    seen = {}

    class Recording:
        """A factory with a band that records the epochs it was built for."""

        def __init__(self, band):
            self.band = band

        def __call__(self, e):
            seen[self.band] = e
            return csp_lda(e)

    pipelines = {"wide": Recording((7, 30)), "raw": Recording(None)}
    jobs = plan_jobs([variants], pipelines, "none", WithinSession(3, 3, GRID))
    assert seen[(7, 30)] is variants[(7.0, 30.0)] and seen[None] is variants[None]
    assert {job.band for job in jobs if job.pipeline == "raw"} == {None}
    rows = evaluate([variants], pipelines, "none", WithinSession(3, 3, GRID), progress=False)
    assert {r["pipeline"] for r in rows} == {"wide", "raw"}
    with pytest.raises(ValueError, match=r"band \(8.0, 30.0\) Hz .*filter_raw"):
        plan_jobs([variants], {"other": Recording((8, 30))}, "none", WithinSession(3, 3, GRID))
    with pytest.raises(ValueError, match="band"):  # an unfiltered EpochSet for a band pipeline
        plan_jobs([epochs], {"wide": Recording((7, 30))}, "none", WithinSession(3, 3, GRID))
    shuffled = _filtered(epochs, None, 1.0)
    shuffled.y = shuffled.y[::-1].copy()
    with pytest.raises(ValueError, match="other trials"):
        plan_jobs(
            [{(7, 30): variants[(7.0, 30.0)], None: shuffled}],
            pipelines,
            "none",
            WithinSession(3, 3, GRID),
        )


def test_rows_count_the_fits_that_hit_the_iteration_cap(data):
    from bci_universum.classifiers import UniversumLogisticRegression
    from bci_universum.features import TangentSpace

    def ts_ulr(max_iter):
        return lambda epochs: make_pipeline(
            TangentSpace("oas"), UniversumLogisticRegression(max_iter=max_iter)
        )

    grid = {"C": (0.1, 1.0)}
    with pytest.warns(Warning):
        rows = evaluate(data[:1], {"capped": ts_ulr(1), "free": ts_ulr(100)}, ["U_C3"],
                        WithinSession(2, 2, grid), progress=False)  # fmt: skip
    hits = {r["pipeline"]: [] for r in rows}
    for r in rows:
        hits[r["pipeline"]].append(r["n_cap_hits"])
    # Each job: 2 grid points x 2 inner folds + the refit, every one capped at 1 iteration.
    assert hits["capped"] == [5] * len(hits["capped"])
    assert hits["free"] == [0] * len(hits["free"])
