"""Evaluation protocols: folds, transfers and learning curves, paired across universa."""

import numpy as np
import pytest

from bci_universum.evaluation import CrossGroup, LearningCurve, WithinSession, plan_jobs

from .helpers import GRID, csp_usvm

pytestmark = pytest.mark.filterwarnings("ignore:pipelines without a universum classifier")


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


def test_repeated_within_session_cv(data):
    once = list(WithinSession(3, 3, GRID).splits(data[0], ("left", "right"), seed=0))
    twice = list(WithinSession(3, 3, GRID, n_repeats=2).splits(data[0], ("left", "right"), 0))
    assert [s.name for s in twice] == ["fold0", "fold1", "fold2"] + [
        f"repeat1-fold{k}" for k in range(3)
    ]
    for a, b in zip(once, twice[:3], strict=True):  # the first repeat is the plain CV
        np.testing.assert_array_equal(a.test, b.test)
    second = twice[3:]
    tested = np.sort(np.concatenate([s.test for s in second]))
    np.testing.assert_array_equal(tested, np.sort(np.concatenate([s.test for s in once])))
    assert any(not np.array_equal(a.test, b.test) for a, b in zip(once, second, strict=True))
    with pytest.raises(ValueError, match="n_repeats"):
        list(WithinSession(3, 3, GRID, n_repeats=0).splits(data[0], ("left", "right"), 0))


def test_cross_group_refuses_a_test_run_among_its_training_runs():
    with pytest.raises(ValueError, match=r"pair \(\['4', '8'\], '8'\) tests on run '8'"):
        CrossGroup("run", pairs=((("4", "8"), "8"),))


def test_cross_group_refuses_empty_pairs():
    with pytest.raises(ValueError, match=r"CrossGroup.pairs is empty: it would score nothing"):
        CrossGroup("run", pairs=())


@pytest.mark.parametrize(
    ("pairs", "match"),
    [
        (((("4", "8"), "12"), (("4", "8"), "12")), r"pair \(\['4', '8'\], '12'\) is listed more"),
        (((("4", "4"), "12"),), r"names training runs \['4'\] more than once"),
    ],
)
def test_cross_group_refuses_a_pair_or_run_listed_twice(pairs, match):
    """A pair twice was scored twice (its rows counted twice in the tables and tests)."""
    with pytest.raises(ValueError, match=match):
        CrossGroup("run", pairs=pairs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_per_class": (4, 4)}, r"n_per_class lists \[4\] more than once"),
        ({"n_per_class": ()}, r"n_per_class must all be integers >= 2, got \(\)"),
        ({"n_per_class": (4, 1.5)}, r"n_per_class must all be integers >= 2"),
        ({"n_repeats": 0}, r"n_repeats must be a positive integer, got 0"),
        ({"n_universum": -1}, r"n_universum must be a positive integer .*got -1"),
    ],
)
def test_learning_curve_checks_its_parameters_when_built(kwargs, match):
    """Refused when built, not at the first split (n_repeats=0 planned no job at all;
    n_universum=-1 failed inside numpy with "negative dimensions are not allowed")."""
    with pytest.raises(ValueError, match=match):
        LearningCurve(**kwargs)
