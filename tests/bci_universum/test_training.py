"""The one training path: model selection, nested CV and final fit of registry pipelines."""

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV

from bci_universum.evaluation import with_universum
from bci_universum.model_selection import UniversumStratifiedKFold, universum_scorer
from bci_universum.pipelines import make_pipeline
from bci_universum.training import DEFAULT_GRID, resolve_grid, select_and_fit

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
    model, best = select_and_fit(estimator, grid, X, y, cv)
    reference = GridSearchCV(estimator, grid, cv=cv, scoring=universum_scorer("accuracy"))
    reference.fit(X, y)
    assert np.unique(reference.cv_results_["mean_test_score"]).size > 2
    assert best == reference.best_params_
    np.testing.assert_allclose(
        model.decision_function(X), reference.best_estimator_.decision_function(X), rtol=1e-10
    )


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
