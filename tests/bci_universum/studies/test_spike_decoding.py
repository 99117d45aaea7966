"""Spike decoding study: losses, anchored kernels, nested CV on the simulator and on M1."""

import numpy as np
import pytest
from sklearn import config_context
from sklearn.multiclass import OneVsOneClassifier
from sklearn.svm import SVC

from bci_universum.features.spike_kernels import alignment_kernel
from bci_universum.simulation.spikes import simulate_v1_population
from bci_universum.studies.spike_decoding import (
    AnchoredGram,
    KernelSpec,
    _alignment,
    _rbf,
    _spikernel,
    angular_loss,
    decode_m1_reaching,
    default_estimators,
    results_to_markdown,
    run_spike_decoding,
)

SMALL_KERNELS = {
    "RBF": KernelSpec(_rbf, [{"gamma_factor": 1.0}]),
    "spikernel": KernelSpec(_spikernel, [{"mu": 0.99, "lam": 0.5, "normalize": True}]),
    "alignment": KernelSpec(_alignment, [{"gap_cost": 2.0}]),
}


def test_angular_loss_examples():
    np.testing.assert_allclose(angular_loss([0.0, 22.5, 90.0], [157.5, 22.5, 0.0]), [22.5, 0, 90])
    np.testing.assert_allclose(angular_loss([10.0, 0.0], [350.0, 180.0], period=360), [20, 180])
    np.testing.assert_allclose(angular_loss([10.0], [350.0], period=180), [20.0])
    with pytest.raises(ValueError, match="period"):
        angular_loss([0], [1], period=0)


def test_anchored_gram_uses_the_training_rows_as_anchors():
    X = np.random.default_rng(0).poisson(1.0, (12, 2, 5)).astype(float)
    gram = _alignment(X, gap_cost=1.0)
    rows, cols, train = np.array([0, 3, 5]), np.array([1, 2]), np.array([1, 2, 4, 7])
    np.testing.assert_allclose(
        gram(rows, cols, train), alignment_kernel(X[rows], X[cols], anchors=X[train])
    )
    assert isinstance(gram, AnchoredGram)


@pytest.fixture(scope="module")
def simulated():
    trains = simulate_v1_population(n_trials_per_class=15, random_state=0)
    return trains.bin(0.08), trains.labels


def small_estimators(*names):
    grids = default_estimators(C=(10.0,), C_universum=(0.0, 1.0), epsilon=(0.05,))
    return {name: grids[name] for name in names}


def test_simulator_decoding_beats_chance_by_far(simulated):
    counts, labels = simulated
    results = run_spike_decoding(
        counts,
        labels,
        kernels=SMALL_KERNELS,
        estimators=small_estimators("SVM", "U-SVM"),
        n_outer=5,
        n_inner=3,
        random_state=0,
    )
    keys = [(r["kernel"], r["estimator"], r["decoder"]) for r in results]
    assert keys == [
        (k, e, d)
        for k in ("RBF", "spikernel", "alignment")
        for e in ("SVM", "U-SVM")
        for d in ("l1", "hamming", "hinge")
    ]
    for row in results:
        assert row["zero_one"].shape == (5,) and row["angular"].shape == (5,)
        # chance is 87.5 % error and 45° mean angular loss; measured 5.8–15.0 % and 1.3–3.6°
        assert row["zero_one_mean"] < 30.0
        assert row["angular_mean"] < 10.0
        # an angular loss can only come from errors, each at most 90°
        assert np.all(row["angular"] <= row["zero_one"] / 100 * 90 + 1e-9)
        assert row["n_classes"] == 8 and row["n_examples"] == 120
        assert len(row["selected"]) == 5 and "C" in row["selected"][0]
        if row["estimator"] == "U-SVM":
            assert {s["C_universum"] for s in row["selected"]} <= {0.0, 1.0}
    table = results_to_markdown(results)
    # header, rule, one line per kernel × classifier; two loss columns per decoder
    assert table.count("\n") == 1 + 6 and "d_ham" in table and "spikernel | U-SVM" in table
    assert table.splitlines()[2].count("±") == 6


def test_every_kernel_and_classifier_runs_end_to_end():
    trains = simulate_v1_population(
        n_neurons=4, n_trials_per_class=4, orientations=[0.0, 45.0, 90.0], random_state=1
    )
    estimators = default_estimators(C=(1.0,), C_universum=(0.0, 1.0), epsilon=(0.1,))
    results = run_spike_decoding(
        trains.bin(0.08),
        trains.labels,
        kernels=SMALL_KERNELS,
        estimators=estimators,
        n_outer=2,
        n_inner=2,
    )
    assert len(results) == 3 * 5 * 3
    assert {r["estimator"] for r in results} == {"SVM", "LS-SVM", "U-SVM", "LS-U-SVM", "U_c-SVM"}
    for row in results:
        assert np.all(np.isfinite(row["zero_one"])) and np.all(np.isfinite(row["angular"]))
        # per outer split: the percentage of its 6 test trials (2 x 6 of 3 x 4 trials) missed
        assert row["zero_one"].shape == (2,)
        missed = row["zero_one"] * 6 / 100
        np.testing.assert_allclose(missed, np.round(missed), atol=1e-9)
        assert row["zero_one_mean"] == pytest.approx(row["zero_one"].mean())


def test_cone_universum_svm_equals_universum_svm_for_a_unit_diagonal_kernel(simulated):
    counts, labels = simulated
    results = run_spike_decoding(
        counts,
        labels,
        kernels={"RBF": SMALL_KERNELS["RBF"]},
        estimators=small_estimators("U-SVM", "U_c-SVM"),
        n_outer=3,
        n_inner=2,
    )
    plain, cone = results[:3], results[3:]
    for a, b in zip(plain, cone, strict=True):
        np.testing.assert_array_equal(a["zero_one"], b["zero_one"])


def test_default_estimators_are_the_registry_classifier():
    from bci_universum.classifiers import LeastSquaresUniversumSVC, UniversumSVC
    from bci_universum.pipelines import CLASSIFIER, make_pipeline

    estimators = default_estimators()
    expected = {  # name → (machine class, zero_as_universum, fixed parameters)
        "SVM": (UniversumSVC, False, {"C_universum": 0.0, "epsilon": 0.0}),
        "LS-SVM": (LeastSquaresUniversumSVC, False, {"C_universum": 0.0}),
        "U-SVM": (UniversumSVC, True, {"cone": False}),
        "LS-U-SVM": (LeastSquaresUniversumSVC, True, {}),
        "U_c-SVM": (UniversumSVC, True, {"cone": True}),
    }
    assert set(estimators) == set(expected)
    for name, (factory, grid) in estimators.items():
        machine, zero_as_universum, fixed = expected[name]
        ecoc = factory(**grid[-1])
        assert ecoc.coding == "ovo" and ecoc.zero_as_universum is zero_as_universum
        base = ecoc.estimator
        assert type(base) is machine and base.kernel == "precomputed"
        assert {k: base.get_params()[k] for k in {**fixed, **grid[-1]}} == {**fixed, **grid[-1]}
    registry = make_pipeline("spike_ecoc", sfreq=20.0, C=1.0, epsilon=0.5, C_universum=10.0)
    study = estimators["U-SVM"][0](C=1.0, epsilon=0.5, C_universum=10.0)
    with config_context(print_changed_only=False):
        assert repr(study) == repr(registry.named_steps[CLASSIFIER])


def test_estimators_plug_in_through_factories(simulated):
    counts, labels = simulated
    estimators = {
        "explicit OvO": (
            lambda C: OneVsOneClassifier(SVC(kernel="precomputed", C=C)),
            [{"C": 10.0}],
        ),
        "SVC": (lambda C: SVC(kernel="precomputed", C=C), [{"C": 10.0}]),
    }
    kernels = {"RBF": SMALL_KERNELS["RBF"]}
    results = run_spike_decoding(
        counts, labels, kernels=kernels, estimators=estimators, n_outer=3, n_inner=2
    )
    assert {r["decoder"] for r in results} == {None}
    by_name = {r["estimator"]: r for r in results}
    # scikit-learn's SVC is one-vs-one internally: both give the same predictions
    np.testing.assert_allclose(by_name["explicit OvO"]["zero_one"], by_name["SVC"]["zero_one"])


def test_bad_study_input(simulated):
    counts, labels = simulated
    with pytest.raises(ValueError, match="angles has shape"):
        run_spike_decoding(counts, labels[:-1])
    with pytest.raises(ValueError, match="two distinct"):
        run_spike_decoding(counts, np.zeros(len(counts)))
    with pytest.raises(ValueError, match="fewer than n_outer"):
        run_spike_decoding(counts, labels, n_outer=20)


@pytest.mark.data
def test_m1_reach_directions_are_decoded(data_dir, monkeypatch):
    monkeypatch.setenv("BCI_UNIVERSUM_DATA", str(data_dir))
    results = decode_m1_reaching(
        per_sector=20,
        kernels={"RBF": SMALL_KERNELS["RBF"]},
        estimators=small_estimators("SVM"),
        decoders=("l1",),
        n_outer=5,
        random_state=0,
    )
    (row,) = results
    assert row["period"] == 360.0 and row["n_examples"] == 160
    # chance: 87.5 % error, 90° mean angular loss (8 directions); measured 45.6 ± 9.3 %, 24.8°
    assert row["zero_one_mean"] < 60.0 and row["angular_mean"] < 40.0
    # the spread over the 5 outer splits is reported, as their sample standard deviation
    assert len(row["zero_one"]) == 5 and np.ptp(row["zero_one"]) > 0
    missed = row["zero_one"] * 32 / 100  # percent of each split's 160 / 5 test trials
    np.testing.assert_allclose(missed, np.round(missed), atol=1e-9)
    assert row["zero_one_std"] == pytest.approx(np.std(row["zero_one"], ddof=1), rel=1e-12)
    assert row["zero_one_mean"] == pytest.approx(np.mean(row["zero_one"]), rel=1e-12)
    assert np.all(row["angular"] <= row["zero_one"] / 100 * 180 + 1e-9)
