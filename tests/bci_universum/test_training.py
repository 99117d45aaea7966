"""The one training path: model selection, nested CV and final fit of registry pipelines."""

import mne
import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, ParameterGrid

from bci_universum.datasets import load_recordings
from bci_universum.evaluation import CrossGroup, plan_jobs, with_universum
from bci_universum.evaluation.jobs import fit_job
from bci_universum.features import CSP
from bci_universum.model_selection import UniversumStratifiedKFold, universum_scorer
from bci_universum.online import OnlineDecoder
from bci_universum.pipelines import make_pipeline, pipeline_factory
from bci_universum.simulation.eeg import simulate_raw
from bci_universum.training import DEFAULT_GRID, resolve_grid, select_and_fit, train
from bci_universum.universa import ThirdCondition, WithUniversum

from .evaluation.helpers import csp_usvm, make_epochs


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
    model, best, (points, scores) = select_and_fit(estimator, grid, X, y, cv, return_scores=True)
    scoring = universum_scorer("balanced_accuracy")
    reference = GridSearchCV(estimator, grid, cv=cv, scoring=scoring)
    reference.fit(X, y)
    assert np.unique(reference.cv_results_["mean_test_score"]).size > 2
    assert best == reference.best_params_
    assert points == reference.cv_results_["params"]
    splits = [reference.cv_results_[f"split{k}_test_score"] for k in range(3)]
    np.testing.assert_allclose(scores, np.column_stack(splits), rtol=1e-12)
    np.testing.assert_allclose(
        model.decision_function(X), reference.best_estimator_.decision_function(X), rtol=1e-10
    )


def test_select_and_fit_scores_only_the_classes_a_relabelling_builder_keeps():
    """Rest trials labelled "rest" and made universum by ThirdCondition: the inner folds score
    the two classes only, as GridSearchCV with the universum scorer does."""
    epochs = make_epochs(effect=0.25, seed=1)
    y = np.where(epochs.y == "universum", "rest", epochs.y)
    estimator = WithUniversum(csp_usvm(epochs), ThirdCondition(["rest"]))
    grid = {"estimator__universumsvc__C": [0.001, 0.1, 10.0]}
    cv = UniversumStratifiedKFold(3, shuffle=True, random_state=0)
    _, best, (_, scores) = select_and_fit(estimator, grid, epochs.X, y, cv, return_scores=True)
    reference = GridSearchCV(estimator, grid, cv=cv, scoring=universum_scorer("balanced_accuracy"))
    reference.fit(epochs.X, y)
    splits = [reference.cv_results_[f"split{k}_test_score"] for k in range(3)]
    np.testing.assert_allclose(scores, np.column_stack(splits), rtol=1e-12)
    assert best == reference.best_params_


@pytest.mark.parametrize(("name", "params"), [("ts_ulr", {}), ("csp_ulda", {"n_components": 2})])
def test_grid_fitted_classifiers_select_as_grid_search(name, params):
    """The universum LR/LDA fit the grid of an inner fold in one call (``fit_grid``): same
    split scores, selection and refit as GridSearchCV fitting every point alone."""
    epochs = make_epochs(effect=0.25, seed=5)  # a seed where the grid points score differently
    estimator = make_pipeline(name, sfreq=epochs.sfreq, window=(0.0, 0.4), **params)
    grid = resolve_grid(estimator, DEFAULT_GRID, has_universum=True)
    assert "clf__C_universum" in grid
    cv = UniversumStratifiedKFold(3, shuffle=True, random_state=0)
    model, best, (points, scores) = select_and_fit(
        estimator, grid, epochs.X, epochs.y, cv, return_scores=True
    )
    reference = GridSearchCV(estimator, grid, cv=cv, scoring=universum_scorer("balanced_accuracy"))
    reference.fit(epochs.X, epochs.y)
    assert np.unique(reference.cv_results_["mean_test_score"]).size > 1
    assert points == reference.cv_results_["params"]
    splits = [reference.cv_results_[f"split{k}_test_score"] for k in range(3)]
    np.testing.assert_allclose(scores, np.column_stack(splits), rtol=1e-12)
    assert best == reference.best_params_
    np.testing.assert_allclose(
        model.decision_function(epochs.X),
        reference.best_estimator_.decision_function(epochs.X),
        rtol=1e-9,
    )
    np.testing.assert_array_equal(
        model.predict(epochs.X), reference.best_estimator_.predict(epochs.X)
    )


def test_csp_inner_folds_and_refit_share_their_trial_statistics(monkeypatch):
    """csp_ulda's inner folds and refit take CSP.fit_transform_folds after the trial-wise
    window: CSP's per-trial statistics are computed once (``fit`` is never called), the refit
    fits only the final step on the shared features; the scores, selection and refitted
    model equal GridSearchCV's (test_grid_fitted_classifiers_select_as_grid_search)."""
    epochs = make_epochs(effect=0.25, seed=5)
    estimator = make_pipeline("csp_ulda", sfreq=epochs.sfreq, window=(0.0, 0.4), n_components=2)
    grid = resolve_grid(estimator, DEFAULT_GRID, has_universum=True)
    calls = []
    fit, shared = CSP.fit, CSP.fit_transform_folds
    monkeypatch.setattr(CSP, "fit", lambda self, X, y: calls.append("fit") or fit(self, X, y))
    monkeypatch.setattr(
        CSP,
        "fit_transform_folds",
        lambda self, X, y, folds: calls.append(len(X)) or shared(self, X, y, folds),
    )
    cv = UniversumStratifiedKFold(3, shuffle=True, random_state=0)
    model, _ = select_and_fit(estimator, grid, epochs.X, epochs.y, cv)
    assert calls == [len(epochs.X)]
    assert model.named_steps["csp"] is not estimator.named_steps["csp"]


def test_select_and_fit_returns_the_grid_scores_of_a_feature_step_search():
    """A grid over a feature step goes through GridSearchCV: its split scores are returned."""
    epochs = make_epochs(effect=0.25, seed=2)
    grid = {"csp__n_components": [2, 4], "universumsvc__C": [0.1, 10.0]}
    cv = UniversumStratifiedKFold(3, shuffle=True, random_state=0)
    _, best, (points, scores) = select_and_fit(
        csp_usvm(epochs), grid, epochs.X, epochs.y, cv, return_scores=True
    )
    assert len(points) == 4 and scores.shape == (4, 3)
    assert best == points[int(np.argmax(scores.mean(axis=1)))]
    scorer = universum_scorer("balanced_accuracy")
    alone = []
    for fit, test in cv.split(epochs.X, epochs.y):  # an independent loop, point by point
        fitted = [
            csp_usvm(epochs).set_params(**p).fit(epochs.X[fit], epochs.y[fit]) for p in points
        ]
        alone.append([scorer(m, epochs.X[test], epochs.y[test]) for m in fitted])
    np.testing.assert_allclose(scores, np.array(alone).T, rtol=1e-12)


def test_grid_names_resolve_to_the_classifier_step():
    usvm = make_pipeline("ts_usvm", sfreq=100.0)
    assert resolve_grid(usvm, DEFAULT_GRID, has_universum=True) == {
        "clf__C": [0.1, 1.0, 10.0],
        "clf__C_universum": [0.01, 0.1, 1.0],
    }
    assert resolve_grid(usvm, DEFAULT_GRID, has_universum=False) == {"clf__C": [0.1, 1.0, 10.0]}
    assert resolve_grid(make_pipeline("csp_lda", sfreq=100.0), DEFAULT_GRID, True) == {}
    # the peers' wrapped classifiers are found too
    lr = make_pipeline("ts_lr", sfreq=100.0)
    assert resolve_grid(lr, DEFAULT_GRID, has_universum=True) == {
        "clf__estimator__C": [0.1, 1.0, 10.0]
    }


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Two simulated calibration runs (left/right + rest) of one subject, as BIDS-named FIF."""
    folder = tmp_path_factory.mktemp("sub-01_ses-01")
    files = []
    # the test run is short: the online decoder decides at every one of its samples
    for run, n_trials, seed in (("01", 8, 21), ("02", 4, 22)):
        raw = simulate_raw(
            n_trials, universum_tasks=("rest",), n_universum_per_task=3, n_channels=8,
            sfreq=125.0, seed=seed, verbose="error",
        )  # fmt: skip
        files.append(folder / f"sub-01_ses-01_task-calibration_run-{run}_raw.fif")
        raw.save(files[-1], verbose="error")
    return files


@pytest.mark.parametrize(
    ("name", "universum"), [("ts_usvm", "U_C3"), ("csp_usvm", "none"), ("ts_lr", "none")]
)
def test_evaluation_describes_deployment(two_runs, name, universum):
    """evaluate (train run 01 → test run 02) = train on run 01 + the online decoder on run 02.

    The evaluation's held-out decision values equal, to 1e-9, the decisions of the model that
    ``train`` fits on the same trials when run 02 is replayed chunk by chunk through
    :class:`OnlineDecoder` and read at the end of each trial window: same causal filter (from
    each recording's first sample), same samples, same model selection, same fit.
    """
    first, second = two_runs
    window, grid, inner = (0.4, 2.4), {"C": (0.1, 1.0, 10.0), "C_universum": (0.1, 1.0)}, 3
    factory = pipeline_factory(name, window=window)
    (epochs,) = load_recordings(two_runs, tmin=0.0, tmax=3.0, band=factory.band, verbose="error")
    assert sorted(set(epochs.runs)) == ["01", "02"]
    protocol = CrossGroup("run", pairs=((("01",), "02"),), inner_splits=inner, param_grid=grid)
    (job,) = plan_jobs([epochs], {name: factory}, universum, protocol, seed=3)
    model, selected = fit_job(job, epochs, factory)
    evaluated = model.decision_function(epochs.X[job.split.test])

    trained = train(
        [first], ["left", "right"], ["rest"] if universum != "none" else [], pipeline=name,
        params={"window": window}, param_grid=grid, n_splits=inner, random_state=job.seed,
        verbose="error",
    )  # fmt: skip
    assert trained.metadata.params["selected"] == selected
    assert trained.metadata.band == factory.band == (7.0, 30.0)

    raw = mne.io.read_raw_fif(second, preload=True, verbose="error")
    sfreq = raw.info["sfreq"]
    decoder = OnlineDecoder.from_model(
        (trained.pipeline, trained.metadata), raw.ch_names, sfreq, update_rate=sfreq
    )
    cues = raw.annotations.onset[np.isin(raw.annotations.description, ["cue/left", "cue/right"])]
    ends = [round(onset * sfreq) + round(window[1] * sfreq) - 1 for onset in cues]
    data = raw.get_data().T[: ends[-1] + 1]
    chunks = range(0, len(data), 97)  # LSL-like chunks, not aligned with the windows
    by_sample = {d.sample_index: d.value for c in chunks for d in decoder.push(data[c : c + 97])}
    online = np.array([by_sample[i] for i in ends])
    assert online.shape == evaluated.shape == (8,)
    np.testing.assert_allclose(online, evaluated, rtol=0, atol=1e-9)
    assert np.ptp(evaluated) > 0.5  # the decision values do vary with the imagery


def test_train_does_not_use_universum_for_a_pipeline_that_ignores_it(two_runs):
    """ts_lr's classifier (LabelledOnly) drops universum trials: train says so, reports one
    cross-validation (not the same model twice) and records no universum in the metadata
    (conditions "used in training")."""
    result = train(
        [two_runs[0]], ["left", "right"], ["rest"], pipeline="ts_lr",
        params={"window": (0.4, 2.4)}, n_splits=3, verbose="error",
    )  # fmt: skip
    assert result.n_universum["rest"] > 0
    assert result.metadata.universum == []
    assert list(result.fold_accuracies) == ["without_universum"]
    assert result.accuracy_with_universum is None
    assert result.metadata.cv["with_universum"] is None
    summary = result.summary()
    assert "(not used: the ts_lr pipeline ignores universum trials)" in summary
    assert "with universum           n/a" in summary


def _weak_imbalanced(seed):
    """14 vs 10 trials, one weakly informative feature among noise."""
    rng = np.random.default_rng(seed)
    y = np.array(["left"] * 14 + ["right"] * 10, dtype=object)
    X = rng.normal(size=(24, 6))
    X[:, 0] += np.where(y == "right", 0.9, 0.0)
    return X, y


def test_selection_never_prefers_a_constant_decision():
    """The flat learning curve: a grid point that always predicts the majority class wins
    accuracy-based selection on imbalanced inner folds, and then every training size scores
    the test majority fraction (S001, csp_usvm + U_C3:rest: 58.3 % = 7/12 at every size).
    Balanced accuracy scores a constant decision at chance, so it is never preferred over a
    grid point that ranks the classes better."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    estimator = Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression())])
    grid = {"clf__C": [1e-6, 1.0]}  # 1e-6: w ≈ 0, the offset alone decides (majority class)
    flat, fixed = [], []
    for seed in range(6):
        X, y = _weak_imbalanced(seed)
        cv = UniversumStratifiedKFold(3, shuffle=True, random_state=seed)
        by_accuracy = GridSearchCV(estimator, grid, cv=cv, scoring=universum_scorer("accuracy"))
        flat.append(by_accuracy.fit(X, y).best_estimator_.predict(X))
        model, _ = select_and_fit(estimator, grid, X, y, cv)
        fixed.append(model.predict(X))
    # Before: the constant (majority) decision is selected on most draws.
    assert sum(len(set(p)) == 1 for p in flat) >= 2
    # After: never a constant decision.
    assert all(len(set(p)) == 2 for p in fixed)


@pytest.mark.data
@pytest.mark.slow
def test_s001_constant_candidate_loses_selection_to_a_better_one(data_dir):
    """The flat learning curve's mechanism on S001 folds (eegmmidb runs 4/8/12, 21
    sensorimotor channels, rest as universum, csp_usvm as in the old configuration).

    The 58.3 % of the old protocol no longer reproduces on this trunk, so the mechanism is
    shown instead: a grid point with C = 1e-6 (w ≈ 0, the offset decides) gives one class to
    every test trial of the folds whose training classes are unequal. Selection may return it
    only when the non-constant candidate scores no better in inner cross-validation
    (balanced accuracy: a constant decision scores chance)."""
    from sklearn.base import clone

    from bci_universum.datasets import load_eegmmidb
    from bci_universum.evaluation import WithinSession

    sensorimotor = [f"{row}{site}" for row in ("FC", "C", "CP") for site in "531z246"]
    epochs = load_eegmmidb(1, path=data_dir, picks=sensorimotor, verbose="error")
    estimator = pipeline_factory("csp_usvm", window=(1.0, 2.0))(epochs)
    grid = {"clf__C": [1e-6, 1.0], "clf__C_universum": [1.0]}
    X, y = epochs.X, np.asarray(epochs.y).astype(str).astype(object)
    exercised = 0
    for split in WithinSession(5, 4, grid, n_repeats=1).splits(epochs, ("left", "right"), 0):
        train = np.sort(np.concatenate([split.train, split.universum]))
        cv = UniversumStratifiedKFold(4, shuffle=True, random_state=0)
        scorer = universum_scorer("balanced_accuracy")
        inner = GridSearchCV(estimator, grid, cv=cv, scoring=scorer, refit=False)
        inner = inner.fit(X[train], y[train]).cv_results_["mean_test_score"]
        n_labels = [
            np.unique(
                clone(estimator).set_params(**p).fit(X[train], y[train]).predict(X[split.test])
            ).size
            for p in ParameterGrid(grid)
        ]
        assert n_labels[1] == 2
        model, best = select_and_fit(estimator, grid, X[train], y[train], cv)
        # C = 1e-6 gives a constant decision on the folds whose training classes are unequal.
        if n_labels[0] == 1 and inner[1] > inner[0]:
            exercised += 1
            assert best["clf__C"] == 1.0
            assert np.unique(model.predict(X[split.test])).size == 2
    assert exercised >= 2
