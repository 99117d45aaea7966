import dataclasses
import inspect

import numpy as np
import pytest
from pyriemann.geometry.geodesic import geodesic_riemann
from scipy import signal
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.pipeline import FeatureUnion, Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer

from bci_universum import UNIVERSUM_STR
from bci_universum.classifiers import UniversumLogisticRegression
from bci_universum.features import Recentring, TangentSpace
from bci_universum.features.tangent_space import regularized_covariances
from bci_universum.online import (
    Decision,
    OnlineDecoder,
    _trial_union,
    causal_filter,
    decision_indices,
    design_bandpass,
    filter_raw,
    offline_decisions,
    replay,
)
from bci_universum.pipelines import make_pipeline as registry_pipeline

SFREQ = 250.0
N_CH = 8


def _log_var(X):
    return np.log(np.var(X, axis=-1))


@pytest.fixture(scope="module")
def pipeline():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, N_CH, 250))
    y = np.repeat([0, 1], 30)
    X[y == 1, 0] *= 2.0  # class 1 has more power on channel 0
    return make_pipeline(FunctionTransformer(_log_var), LinearDiscriminantAnalysis()).fit(X, y)


def _stream(n, seed=1):
    return np.random.default_rng(seed).standard_normal((n, N_CH))


@pytest.mark.parametrize("max_chunk", [40, 700])
def test_online_equals_offline_for_any_chunking(pipeline, max_chunk):
    data = _stream(3000)
    dec = OnlineDecoder(pipeline, SFREQ, N_CH, window=1.0, update_rate=16, band=(8, 30))
    rng = np.random.default_rng(2)
    online = []
    pos = 0
    while pos < len(data):
        size = int(rng.integers(1, max_chunk))
        online += dec.push(data[pos : pos + size])
        pos += size
    idx, values = offline_decisions(dec, data)
    assert len(online) == len(idx) > 100
    assert [d.sample_index for d in online] == idx.tolist()
    np.testing.assert_allclose([d.value for d in online], values, rtol=0, atol=1e-9)
    assert all(d.valid for d in online)


@pytest.mark.parametrize(
    ("sfreq", "window", "update_rate", "band"),
    [
        (SFREQ, 0.2, 2.0, (8, 30)),  # a hop (125 samples) longer than the window (50)
        (0.5, 8.0, 0.5, None),  # a slow stream: below 1 Hz, a window of 4 samples
    ],
)
def test_online_equals_offline_for_any_window_and_hop(pipeline, sfreq, window, update_rate, band):
    data = _stream(1000)
    dec = OnlineDecoder(pipeline, sfreq, N_CH, window=window, update_rate=update_rate, band=band)
    rng = np.random.default_rng(4)
    online = []
    for chunk in np.split(data, np.cumsum(rng.integers(1, 300, size=20))):
        online += dec.push(chunk)
    idx, values = offline_decisions(dec, data)
    expected_idx = np.arange(dec.window_len - 1, len(data), dec.hop)
    assert idx.tolist() == expected_idx.tolist()
    assert [d.sample_index for d in online] == idx.tolist()
    np.testing.assert_allclose([d.value for d in online], values, rtol=0, atol=1e-9)
    np.testing.assert_allclose([d.timestamp for d in online], idx / sfreq, rtol=1e-12)
    with pytest.raises(dataclasses.FrozenInstanceError):
        online[0].value = 0.0  # decisions are records: a consumer cannot alter another's


def test_decision_schedule(pipeline):
    assert decision_indices(10, 4, 3).tolist() == [3, 6, 9]
    assert decision_indices(3, 4, 3).size == 0
    assert decision_indices(10, 4, 3, start=5).tolist() == [6, 9]
    assert decision_indices(10, 4, 3, start=10).size == 0
    assert OnlineDecoder(pipeline, SFREQ, N_CH, update_rate=16).hop == round(SFREQ / 16)


@pytest.mark.parametrize("band", [(8, 30), (None, 30), (1, None), None])
def test_causal_filter_equals_scipy(band):
    sos = design_bandpass(SFREQ, band)
    data = _stream(1000)
    ref = signal.sosfilt(sos, data, axis=0)
    np.testing.assert_allclose(causal_filter(data, sos), ref, rtol=1e-12, atol=1e-14)


def _butterworth_gain(freqs, band, order, sfreq=SFREQ):
    """Closed-form gain of the bilinear-transform Butterworth filter (pre-warped edges)."""

    def warp(f):
        return 2 * sfreq * np.tan(np.pi * np.asarray(f, dtype=float) / sfreq)

    omega = warp(freqs)
    low, high = band
    if low is None:
        ratio = omega / warp(high)
    elif high is None:
        ratio = warp(low) / omega
    else:
        w_low, w_high = warp(low), warp(high)
        ratio = (omega**2 - w_low * w_high) / (omega * (w_high - w_low))
    return 1.0 / np.sqrt(1.0 + ratio ** (2 * order))


@pytest.mark.parametrize("order", [2, 4])
@pytest.mark.parametrize("band", [(8, 30), (None, 30), (1, None)])
def test_bandpass_gain_in_and_out_of_the_pass_band(band, order):
    """The designed filter has the Butterworth gain: 1 inside the band, 1/√2 at its edges,
    falling off outside; measured on sines through the causal filter as well."""
    sos = design_bandpass(SFREQ, band, order=order)
    freqs = np.linspace(0.5, 124.5, 249)
    _, h = signal.sosfreqz(sos, worN=freqs, fs=SFREQ)
    np.testing.assert_allclose(np.abs(h), _butterworth_gain(freqs, band, order), atol=1e-9)
    edges = [edge for edge in band if edge is not None]
    _, h_edges = signal.sosfreqz(sos, worN=edges, fs=SFREQ)
    np.testing.assert_allclose(np.abs(h_edges), np.sqrt(0.5), atol=1e-9)

    t = np.arange(int(20 * SFREQ)) / SFREQ
    probes = np.array([2.0, 5.0, 15.0, 45.0, 80.0])  # whole periods in the last 5 s
    sines = np.sin(2 * np.pi * probes[None, :] * t[:, None])
    steady = causal_filter(sines, sos)[-int(5 * SFREQ) :]
    measured = np.sqrt(2) * steady.std(axis=0)
    np.testing.assert_allclose(measured, _butterworth_gain(probes, band, order), atol=1e-6)
    if band == (8, 30):
        assert measured[2] > 0.99 and measured[[0, 4]].max() < 0.05


def test_filter_state_is_kept_between_chunks(pipeline):
    sos = design_bandpass(SFREQ, (8, 30))
    data = _stream(1000)
    whole = signal.sosfilt(sos, data, axis=0)
    dec = OnlineDecoder(pipeline, SFREQ, N_CH, window=0.5)
    dec.push(data[:333])
    dec.push(data[333:])
    np.testing.assert_allclose(dec._window(), whole[-dec.window_len :].T, atol=1e-12)


def test_current_window_is_withheld_while_it_holds_a_non_finite_sample(pipeline):
    data = _stream(2000)
    data[1900, 2] = np.nan
    dec = OnlineDecoder(pipeline, SFREQ, N_CH, window=0.5)
    dec.push(data[:1800])
    expected = causal_filter(data[:1800], dec.sos)[-dec.window_len :].T
    np.testing.assert_allclose(dec.current_window(), expected, atol=1e-12)
    dec.push(data[1800:])  # sample 1900 lies in the newest 125
    assert dec.current_window() is None
    dec.push(_stream(dec.window_len, seed=2))
    window = dec.current_window()
    assert window is not None and np.isfinite(window).all()


def test_non_finite_input_withholds_then_recovers(pipeline):
    data = _stream(2000)
    data[600, 3] = np.nan
    data[601, 5] = np.inf
    dec = OnlineDecoder(pipeline, SFREQ, N_CH, window=1.0, update_rate=16)
    out = dec.push(data)
    bad = [d for d in out if not d.valid]
    assert bad, "a window with NaN/inf must be withheld"
    assert all("non-finite" in d.reason and np.isnan(d.value) for d in bad)
    # withheld exactly while the window holds a bad sample
    for d in out:
        holds_bad = d.sample_index - dec.window_len + 1 <= 601 and d.sample_index >= 600
        assert d.valid != holds_bad
    assert out[-1].valid and np.isfinite(out[-1].value)


def test_newest_only_decides_on_the_newest_window_and_counts_the_others(pipeline):
    """What a real-time loop that fell behind asks for: the newest window's decision (the
    offline one), the older windows of the chunk skipped and counted, the filter unbroken."""
    data = _stream(3000)
    dec = OnlineDecoder(pipeline, SFREQ, N_CH, window=1.0, update_rate=16)
    idx, values = offline_decisions(dec, data)
    behind = dec.push(data[:1000], newest_only=True)
    due = idx[idx < 1000]
    assert [d.sample_index for d in behind] == [due[-1]]
    assert behind[0].value == pytest.approx(values[due.size - 1], abs=1e-9)
    assert dec.n_skipped == due.size - 1 > 0
    caught_up = dec.push(data[1000:])
    assert [d.sample_index for d in caught_up] == idx[due.size :].tolist()
    np.testing.assert_allclose([d.value for d in caught_up], values[due.size :], atol=1e-9)
    # a chunk completing one window loses nothing
    assert len(dec.push(data[:16], newest_only=True)) == 1 and dec.n_skipped == due.size - 1
    dec.reset()
    assert dec.n_skipped == 0
    # a chunk completing two windows: the older one skipped (timestamps by keyword)
    n = idx[1] + 1
    two = dec.push(data[:n], timestamps=np.arange(n) / SFREQ, newest_only=True)
    assert [d.sample_index for d in two] == [idx[1]] and dec.n_skipped == 1


def test_a_feature_union_on_one_trial_equals_its_transform():
    """The lean path through a FeatureUnion: passthrough parts kept, dropped parts left out,
    every part weighted by ``transformer_weights``."""
    X = np.random.default_rng(0).normal(size=(20, 4))
    union = FeatureUnion(
        [("squared", FunctionTransformer(np.square)), ("same", "passthrough"), ("gone", "drop")],
        transformer_weights={"squared": 2.0, "same": 0.5},
    ).fit(X)
    trial = _trial_union(union)
    for x in X[:3]:
        np.testing.assert_allclose(trial(x), union.transform(x[np.newaxis])[0], rtol=1e-15)


def test_smoothing(pipeline):
    data = _stream(1500)
    raw = OnlineDecoder(pipeline, SFREQ, N_CH).push(data)
    smooth = OnlineDecoder(pipeline, SFREQ, N_CH, smoothing=0.8).push(data)
    expected = raw[0].value
    for r, s in zip(raw, smooth, strict=True):
        assert s.value == pytest.approx(r.value)
        expected = r.value if r is raw[0] else 0.8 * expected + 0.2 * r.value
        assert s.smoothed == pytest.approx(expected)


def test_warm_up_resets_state(pipeline):
    data = _stream(1200)
    cold = OnlineDecoder(pipeline, SFREQ, N_CH).push(data)
    dec = OnlineDecoder(pipeline, SFREQ, N_CH)
    dec.warm_up()
    assert dec.n_samples_seen == 0
    warm = dec.push(data)
    assert [d.value for d in warm] == [d.value for d in cold]


def test_warm_up_runs_the_documented_number_of_updates(pipeline):
    """``warm_up(n_updates)`` decides on a first full window, then ``n_updates`` more."""
    windows = []

    def log_var(X):
        windows.append(X.shape)
        return _log_var(X)

    counted = make_pipeline(FunctionTransformer(log_var), pipeline[-1])
    dec = OnlineDecoder(counted, SFREQ, N_CH)
    for n_updates, expected in ((None, 32 + 1), (3, 3 + 1)):
        windows.clear()
        dec.warm_up() if n_updates is None else dec.warm_up(n_updates)
        assert windows == [(1, N_CH, dec.window_len)] * expected


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sfreq": 0}, "sfreq must be positive, got 0"),
        ({"n_channels": 0}, "n_channels"),
        ({"window": -1}, "window"),
        ({"window": 0}, "window must be positive"),
        ({"update_rate": 1000}, "update_rate"),
        ({"update_rate": 0}, "update_rate must lie in"),
        ({"smoothing": 1.0}, "smoothing"),
        ({"smoothing": -0.5}, "smoothing must lie in \\[0, 1\\), got -0.5"),
        ({"band": (30, 8)}, "low < high"),
        ({"band": (8, 200)}, "edge"),
    ],
)
def test_bad_parameters(pipeline, kwargs, match):
    params = {"sfreq": SFREQ, "n_channels": N_CH} | kwargs
    with pytest.raises(ValueError, match=match):
        OnlineDecoder(pipeline, **params)


def test_bad_chunks(pipeline):
    dec = OnlineDecoder(pipeline, SFREQ, N_CH)
    with pytest.raises(ValueError, match="shape"):
        dec.push(np.zeros((10, N_CH + 1)))
    with pytest.raises(ValueError, match="chunk must have shape"):
        dec.push(np.zeros(10))
    with pytest.raises(ValueError, match="timestamps"):
        dec.push(np.zeros((10, N_CH)), np.zeros(9))
    assert dec.push(np.zeros((0, N_CH))) == [] and dec.n_samples_seen == 0
    with pytest.raises(ValueError, match="decision_function"):
        OnlineDecoder(object(), SFREQ, N_CH)
    with pytest.raises(ValueError, match="non-finite"):
        offline_decisions(dec, np.full((300, N_CH), np.nan))


@pytest.mark.parametrize("reference", [offline_decisions, replay])
def test_recording_in_the_mne_layout_is_refused(pipeline, reference):
    """``raw.get_data()`` is (n_channels, n_times): refused naming the layout, not read as
    N_CH samples of 300 channels (``offline_decisions`` returned no decisions, silently)."""
    dec = OnlineDecoder(pipeline, SFREQ, N_CH)
    with pytest.raises(ValueError, match=r"got \(8, 300\) \(the MNE layout .*pass data\.T\)"):
        reference(dec, _stream(300).T)
    with pytest.raises(ValueError, match=r"got \(300, 9\)\.$"):
        reference(dec, np.zeros((300, N_CH + 1)))


def _epochs(n_classes, n_per_class=20, n_universum=10, n_ch=N_CH, seed=3):
    """Trials whose class c has more power on channel c, plus universum trials."""
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.repeat(np.arange(n_classes), n_per_class), np.full(n_universum, -2)])
    X = rng.standard_normal((y.size, n_ch, 250))
    for c in range(n_classes):
        X[y == c, c] *= 2.0
    return X, y


def _lean_pipelines():
    from bci_universum.classifiers import (
        ECOCUniversumClassifier,
        LeastSquaresUniversumSVC,
        MulticlassUniversumSVC,
        UniversumSVC,
    )
    from bci_universum.features import CSP, TangentSpace

    return {
        "ts+usvm-rbf": (2, make_pipeline(TangentSpace(), UniversumSVC(C_universum=0.5))),
        "ts+usvm-linear": (
            2,
            make_pipeline(TangentSpace("lwf"), UniversumSVC(kernel="linear", C_universum=0.5)),
        ),
        "csp+usvm": (2, make_pipeline(CSP(4), UniversumSVC(C_universum=0.5))),
        "ts+ecoc": (3, make_pipeline(TangentSpace(), ECOCUniversumClassifier())),
        "csp+musvm-rbf": (
            3,
            make_pipeline(CSP(4, multiclass="ovr"), MulticlassUniversumSVC(kernel="rbf")),
        ),
        "ts+musvm-2class": (2, make_pipeline(TangentSpace(), MulticlassUniversumSVC())),
        "csp+ls-usvm": (2, make_pipeline(CSP(4), LeastSquaresUniversumSVC(C_universum=0.5))),
        "ts+ecoc-ls-usvm-rbf": (
            3,
            make_pipeline(
                TangentSpace(), ECOCUniversumClassifier(LeastSquaresUniversumSVC(kernel="rbf"))
            ),
        ),
        "csp+lda-3class": (
            3,
            make_pipeline(CSP(4, multiclass="ovr"), LinearDiscriminantAnalysis()),
        ),
    }


@pytest.mark.parametrize("name", list(_lean_pipelines()))
def test_lean_path_equals_pipeline_decision_function(name):
    n_classes, pipe = _lean_pipelines()[name]
    X, y = _epochs(n_classes)
    if "lda" in name:
        X, y = X[y >= 0], y[y >= 0]  # LDA takes no universum trials
    pipe.fit(X, y)
    data = _stream(3000, seed=4)
    for k in range(6):  # 2 s blocks of each class in turn, as in training (no filter)
        data[500 * k : 500 * (k + 1), k % n_classes] *= 2.0
    dec = OnlineDecoder(pipe, SFREQ, N_CH, window=1.0, update_rate=16, band=None)
    online = dec.push(data)
    idx, values = offline_decisions(dec, data)
    assert [d.sample_index for d in online] == idx.tolist()
    online_values = np.array([d.values for d in online])
    assert online_values.shape == (len(idx), dec.n_values)
    np.testing.assert_allclose(online_values, values.reshape(online_values.shape), atol=1e-9)
    # labels follow the classifier's own predict on the same windows
    filtered = causal_filter(data, dec.sos)
    windows = np.stack([filtered[i - dec.window_len + 1 : i + 1].T for i in idx])
    predicted = pipe.predict(windows)
    assert [d.label for d in online] == predicted.tolist()
    assert len(set(predicted)) == n_classes, "the blocks must move decisions across classes"
    if dec.n_values == 1:
        np.testing.assert_array_equal([d.value for d in online], online_values[:, 0])
    else:
        assert dec.n_values >= n_classes
        assert all(np.isnan(d.value) and np.isnan(d.smoothed) for d in online)


def test_lean_steps_are_used():
    """The project's steps answer through their single-trial methods, not the batch call."""
    from bci_universum.classifiers import UniversumSVC
    from bci_universum.features import TangentSpace

    X, y = _epochs(2)
    pipe = make_pipeline(TangentSpace(), UniversumSVC()).fit(X, y)
    dec = OnlineDecoder(pipe, SFREQ, N_CH)
    calls = []
    pipe[0].transform = lambda X: calls.append("transform")
    pipe[-1].decision_function = lambda X: calls.append("decision_function")
    out = dec.push(_stream(400))
    assert out and calls == []


@pytest.mark.parametrize(
    "scaler",
    [{}, {"with_mean": False}, {"with_std": False}, {"with_mean": False, "with_std": False}],
)
def test_a_standard_scaler_takes_the_lean_path(scaler):
    """The registry's CSP pipelines end in a StandardScaler and a classifier: the scaler is
    applied on one feature vector without scikit-learn's batch validation, and the decisions
    are the pipeline's (the decoder checks its lean path against decision_function)."""
    from sklearn.preprocessing import StandardScaler

    from bci_universum.classifiers import UniversumSVC
    from bci_universum.features import CSP

    X, y = _epochs(2)
    pipe = make_pipeline(CSP(4), StandardScaler(**scaler), UniversumSVC(kernel="linear"))
    pipe.fit(X, y)
    dec = OnlineDecoder(pipe, SFREQ, N_CH, band=None)
    data = _stream(600)
    _, expected = offline_decisions(dec, data)
    pipe[1].transform = lambda X: pytest.fail("the scaler's batch transform was called")
    online = dec.push(data)
    np.testing.assert_allclose([d.value for d in online], expected, rtol=1e-10, atol=1e-12)


def test_a_model_trained_with_a_prior_takes_the_lean_path_through_every_step():
    """``train --prior`` gives features and the prior's decision side by side in a
    FeatureUnion, then a BiasedSVC: no step may fall back to its validated batch call (it did,
    and such a model decoded 16 times slower than the model without a prior)."""
    from bci_universum.classifiers import UniversumSVC
    from bci_universum.features import TangentSpace
    from bci_universum.pipelines import with_prior

    X, y = _epochs(2)
    prior = make_pipeline(TangentSpace(), UniversumSVC(kernel="linear")).fit(X, y)
    X_new, y_new = _epochs(2, seed=4)
    base = make_pipeline(TangentSpace(), UniversumSVC(kernel="linear"))
    pipe = with_prior(base, prior).fit(X_new, y_new)
    dec = OnlineDecoder(pipe, SFREQ, N_CH)  # checks the lean path against decision_function
    union, clf = pipe.named_steps["features"], pipe.named_steps["clf"]
    features, prior_decision = (step for _, step in union.transformer_list)
    calls = []
    for obj, name in [
        (union, "transform"),
        (features[0], "transform"),
        (prior_decision, "transform"),
        (prior_decision.estimator_, "decision_function"),
        (prior, "decision_function"),
        (prior[0], "transform"),
        (prior[-1], "decision_function"),
        (prior[-1], "_expansion"),
        (clf, "decision_function"),
        (clf, "_expansion"),
    ]:
        setattr(obj, name, lambda *a, _name=name, **k: calls.append(_name))
    out = dec.push(_stream(400))
    assert out and calls == []


def test_foreign_steps_fall_back_to_batch_calls(pipeline):
    class Scaled(FunctionTransformer):
        """A transformer whose single-trial method is wrong: the decoder must notice."""

        def transform_trial(self, x):
            return 2 * self.transform(x[np.newaxis])[0]

    wrong = make_pipeline(Scaled(_log_var), LinearDiscriminantAnalysis())
    X, y = _epochs(2)
    wrong.fit(X[y >= 0], y[y >= 0])
    with pytest.raises(RuntimeError, match="disagrees with its decision_function"):
        OnlineDecoder(wrong, SFREQ, N_CH)
    # the module fixture's FunctionTransformer + LDA have no single-trial methods
    dec = OnlineDecoder(pipeline, SFREQ, N_CH)
    window = _stream(dec.window_len).T
    np.testing.assert_allclose(
        dec._path(window), pipeline.decision_function(window[np.newaxis]), atol=1e-12
    )


def test_decoder_refuses_unfitted_or_mismatched_pipelines(pipeline):
    unfitted = make_pipeline(FunctionTransformer(_log_var), LinearDiscriminantAnalysis())
    with pytest.raises(ValueError, match="not fitted"):
        OnlineDecoder(unfitted, SFREQ, N_CH)
    from bci_universum.features import TangentSpace

    X, y = _epochs(2)
    ts = make_pipeline(TangentSpace(), LinearDiscriminantAnalysis()).fit(X[y >= 0], y[y >= 0])
    with pytest.raises(ValueError, match=f"refuses windows of {N_CH + 1} channels"):
        OnlineDecoder(ts, SFREQ, N_CH + 1)


def test_withheld_multiclass_decision():
    from bci_universum.classifiers import MulticlassUniversumSVC

    X, y = _epochs(3)
    pipe = make_pipeline(
        FunctionTransformer(_log_var), MulticlassUniversumSVC(kernel="linear")
    ).fit(X, y)
    data = _stream(1000)
    data[700, 0] = np.nan
    out = OnlineDecoder(pipe, SFREQ, N_CH).push(data)
    bad = [d for d in out if not d.valid]
    assert bad and all(d.values.shape == (3,) and np.isnan(d.values).all() for d in bad)
    assert all(d.label is None for d in bad)
    assert all(d.label in (0, 1, 2) for d in out if d.valid)


def test_causal_filter_chunks_match_scipy_and_notch_removes_mains():
    from bci_universum.online import CausalFilter, design_notch

    sfreq = 250.0
    sos = np.vstack([design_bandpass(sfreq, (1.0, 40.0)), design_notch(sfreq, 50.0)])
    rng = np.random.default_rng(0)
    t = np.arange(5000) / sfreq
    x = rng.standard_normal((t.size, 3)) + 10 * np.sin(2 * np.pi * 50 * t)[:, None]
    filt = CausalFilter(sos, 3)
    chunks = [filt.push(c)[0] for c in np.array_split(x, [7, 8, 300, 1234])]
    np.testing.assert_allclose(np.vstack(chunks), signal.sosfilt(sos, x, axis=0), atol=1e-10)
    mains = signal.sosfilt(design_notch(sfreq, 50.0), np.sin(2 * np.pi * 50 * t))
    assert np.abs(mains[-500:]).max() < 0.03  # > 30 dB down at steady state
    with pytest.raises(ValueError, match="notch frequency 200"):
        design_notch(sfreq, 200.0)
    # any frequency strictly inside (0, Nyquist), below 1 Hz too: zero gain there
    _, h = signal.sosfreqz(design_notch(sfreq, 0.5), worN=[0.5], fs=sfreq)
    assert abs(h[0]) < 1e-6
    # and above a third of the sampling rate, up to Nyquist
    b, a = signal.iirnotch(100.0, 30.0, fs=sfreq)
    np.testing.assert_allclose(design_notch(sfreq, 100.0), signal.tf2sos(b, a), rtol=1e-12)


def test_band_edges_are_validated_and_none_means_no_filter():
    identity = [[1.0, 0.0, 0.0, 1.0, 0.0, 0.0]]
    assert design_bandpass(SFREQ, None).tolist() == identity
    assert design_bandpass(SFREQ, (None, None)).tolist() == identity
    assert design_bandpass(SFREQ, (0.1, 124.9)).shape == (4, 6)  # order 4 per edge
    assert design_bandpass(SFREQ, (8, None), order=3).shape == (2, 6)
    for band, match in [
        ((0, 30), r"low edge 0 Hz must lie in \(0, 125.0\)"),
        ((8, 125), "high edge 125 Hz"),
        ((None, 125), "high edge 125 Hz"),
        ((-1, None), "low edge -1 Hz"),
        ((30, 30), r"band \(30, 30\) must have low < high"),
    ]:
        with pytest.raises(ValueError, match=match):
            design_bandpass(SFREQ, band)


@pytest.mark.parametrize("quality", [10.0, None])
def test_notch_gain_and_bandwidth(quality):
    """Zero gain at the mains frequency, unit gain far from it, and a -3 dB band of width
    ``freq / quality`` (the definition of the quality factor; 30 by default: 1.7 Hz)."""
    from bci_universum.online import design_notch

    if quality is None:
        sos, quality = design_notch(SFREQ, 50.0), 30.0
    else:
        sos = design_notch(SFREQ, 50.0, quality)
    freqs = np.linspace(30.0, 70.0, 40001)
    _, h = signal.sosfreqz(sos, worN=freqs, fs=SFREQ)
    gain = np.abs(h)
    assert gain[np.argmin(np.abs(freqs - 50.0))] < 1e-6
    _, h_far = signal.sosfreqz(sos, worN=[1.0, 120.0], fs=SFREQ)
    np.testing.assert_allclose(np.abs(h_far), 1.0, atol=2e-3)
    stop = freqs[gain < np.sqrt(0.5)]
    assert stop.max() - stop.min() == pytest.approx(50.0 / quality, rel=0.02)
    for freq in (0.0, 125.0):
        with pytest.raises(ValueError, match=f"notch frequency {freq} Hz"):
            design_notch(SFREQ, freq)


def test_adapt_to_rest_updates_the_recentring_reference():
    """Online adaptation (rest windows of the feedback run) moves the re-centring reference."""
    rng = np.random.default_rng(0)
    n_ch, n_t, sfreq = 4, 50, 100.0
    X = rng.normal(size=(30, n_ch, n_t))
    y = np.array(["left", "right", UNIVERSUM_STR] * 10, dtype=object)
    X[y == "left", 0] *= 2.0
    labelled = y != UNIVERSUM_STR
    plain = make_pipeline(TangentSpace("oas"), LinearDiscriminantAnalysis())
    plain.fit(X[labelled], y[labelled])
    window_s = n_t / sfreq
    assert not OnlineDecoder(plain, sfreq, n_ch, window_s, band=None).adapt_to_rest(X[2])

    pipe = make_pipeline(Recentring(), TangentSpace("oas"), UniversumLogisticRegression())
    pipe.fit(X, y)
    decoder = OnlineDecoder(pipe, sfreq, n_ch, window_s, band=None)
    assert not decoder.adapt_to_rest()  # no window pushed yet
    drifted = 3.0 * rng.normal(size=(n_t, n_ch))
    decoder.push(drifted)
    before, count = pipe[0].reference_.copy(), pipe[0].n_reference_
    assert decoder.adapt_to_rest()
    step = decoder.pipeline[0]
    C = regularized_covariances(drifted.T[np.newaxis], "oas")[0]
    np.testing.assert_allclose(step.reference_, geodesic_riemann(before, C, 1 / (count + 1)))
    # The decoder switched to updated copies: the calibrated pipeline is as it was.
    np.testing.assert_array_equal(pipe[0].reference_, before)
    # The lean decision path reads the updated reference, as decision_function does.
    window = decoder.current_window()[np.newaxis].copy()
    expected = decoder.pipeline.decision_function(window)[0]
    assert decoder._path(window[0])[0] == pytest.approx(expected, abs=1e-9)
    assert not np.allclose(step.reference_, before)


def _adaptive_setup(online_universum=2, seed=0):
    """A fitted ``ats_ulr`` pipeline on 1 s windows (50 Hz, 4 channels), and a continuous
    stream whose rest windows carry power the calibration universum did not have."""
    rng = np.random.default_rng(seed)
    n_ch, sfreq, n_t = 4, 50.0, 50
    y = np.array(["left", "right", UNIVERSUM_STR] * 12, dtype=object)
    X = rng.standard_normal((y.size, n_ch, n_t))
    X[y == "left", 0] *= 2.0
    X[y == "right", 1] *= 2.0
    params = {"band": None, "window": (0.0, 1.0), "C_universum": 1.0}
    params["online_universum"] = online_universum
    pipe = registry_pipeline("ats_ulr", sfreq=sfreq, **params).fit(X, y)
    stream = rng.standard_normal((600, n_ch))
    stream[:, 2] *= 3.0  # the run's rest differs from the calibration's
    return pipe, X, y, stream, (sfreq, n_ch, params)


def _from_scratch(X, y, rest_windows, sfreq, params):
    """The same registry pipeline fitted on the training trials plus ``rest_windows`` as
    universum trials."""
    rest = np.asarray(rest_windows)
    labels = np.concatenate([y, np.full(len(rest), UNIVERSUM_STR, dtype=object)])
    return registry_pipeline("ats_ulr", sfreq=sfreq, **params).fit(np.vstack([X, rest]), labels)


def test_adaptive_universum_refit_equals_a_fit_from_scratch():
    """After k rest windows the decoder's model is the pipeline fitted from scratch on the
    training trials plus the newest ``online_universum`` windows as universum trials."""
    pipe, X, y, stream, (sfreq, n_ch, params) = _adaptive_setup(online_universum=2)
    decoder = OnlineDecoder(pipe, sfreq, n_ch, window=1.0, band=None)
    assert decoder.adaptive
    windows = [stream[k * 50 : (k + 1) * 50].T for k in range(3)]
    test = stream[300:350].T[np.newaxis]
    original = pipe.decision_function(test)
    for k, window in enumerate(windows, start=1):
        assert decoder.adapt_to_rest(window)
        reference = _from_scratch(X, y, windows[max(0, k - 2) : k], sfreq, params)
        adapted, scratch = decoder.pipeline[-1], reference[-1]
        assert adapted.universum_online_.shape == (min(k, 2), n_ch * (n_ch + 1) // 2)
        assert adapted.n_universum_ == scratch.n_universum_
        np.testing.assert_allclose(adapted.coef_, scratch.coef_, rtol=0, atol=1e-7)
        np.testing.assert_allclose(adapted.intercept_, scratch.intercept_, rtol=0, atol=1e-7)
        np.testing.assert_allclose(
            decoder._path(test[0]), reference.decision_function(test), rtol=0, atol=1e-7
        )
    # the rest moved the decision; the calibrated pipeline itself is untouched
    assert not np.allclose(decoder.pipeline.decision_function(test), original, atol=1e-3)
    np.testing.assert_array_equal(pipe.decision_function(test), original)
    assert pipe[-1].universum_online_.shape[0] == 0


def test_replay_adapts_only_after_each_rest_window_ends():
    """Causality: decisions up to a rest window's last sample are the static decoder's; the
    first one after it already uses the refitted model."""
    pipe, X, y, stream, (sfreq, n_ch, params) = _adaptive_setup(online_universum=10)
    static = OnlineDecoder(pipe, sfreq, n_ch, window=1.0, update_rate=10, band=None)
    adaptive = OnlineDecoder(pipe, sfreq, n_ch, window=1.0, update_rate=10, band=None)
    ends = np.array([204, 407])  # not on the decision grid (every 5 samples from 49)
    idx_s, static_values = replay(static, stream, chunk_size=7)
    idx_a, adaptive_values = replay(adaptive, stream, chunk_size=7, rest_ends=ends)
    np.testing.assert_array_equal(idx_s, idx_a)
    np.testing.assert_allclose(static_values, offline_decisions(static, stream)[1], atol=1e-9)
    before = idx_a <= ends[0]
    np.testing.assert_array_equal(adaptive_values[before], static_values[before])
    assert adaptive_values[np.argmax(~before)] != static_values[np.argmax(~before)]
    # after the last rest: the model fitted from scratch with both rest windows, on the
    # same windows (no filter: a decision is a function of its window alone)
    rests = [stream[e - 49 : e + 1].T for e in ends]
    reference = _from_scratch(X, y, rests, sfreq, params)
    after = idx_a > ends[1]
    windows = np.stack([stream[i - 49 : i + 1].T for i in idx_a[after]])
    np.testing.assert_allclose(
        adaptive_values[after], reference.decision_function(windows), rtol=0, atol=1e-7
    )
    assert len(adaptive.pipeline[-1].universum_online_) == 2


def test_adaptation_rejects_bad_input():
    pipe, X, y, stream, (sfreq, n_ch, _) = _adaptive_setup()
    decoder = OnlineDecoder(pipe, sfreq, n_ch, window=1.0, band=None)
    with pytest.raises(ValueError, match=r"window must have shape \(4, 50\)"):
        decoder.adapt_to_rest(np.zeros((4, 49)))
    with pytest.raises(ValueError, match="non-finite"):
        decoder.adapt_to_rest(np.full((4, 50), np.nan))
    with pytest.raises(ValueError, match=r"shape \(10,\)"):
        pipe[-1].update(np.zeros(9))
    with pytest.raises(ValueError, match="rest_ends must be sample indices"):
        replay(decoder, stream, rest_ends=[10])  # before the first full window
    with pytest.raises(ValueError, match="rest_ends must be sample indices"):
        replay(decoder, stream, rest_ends=[600])
    with pytest.raises(ValueError, match="chunk_size"):
        replay(decoder, stream, chunk_size=0)
    with pytest.raises(ValueError, match=r"data must have shape \(n_samples, 4\)"):
        replay(decoder, stream[:, :3])
    # a plain ts_ulr keeps no training features: no update, not adaptive
    plain = registry_pipeline("ts_ulr", sfreq=sfreq, band=None, window=(0.0, 1.0)).fit(X, y)
    assert not hasattr(plain[-1], "update")
    assert not OnlineDecoder(plain, sfreq, n_ch, window=1.0, band=None).adapt_to_rest(
        stream[:50].T
    )


def test_from_model_takes_the_window_band_and_order_of_the_model(pipeline):
    from bci_universum.model_io import ModelMetadata

    names = [f"EEG{k}" for k in range(N_CH)]
    meta = ModelMetadata(names, SFREQ, (1.0, 40.0), (0.5, 1.3), [0, 1], filter_order=2)
    dec = OnlineDecoder.from_model((pipeline, meta), names, SFREQ)
    assert dec.window_len == round(0.8 * SFREQ) and dec.metadata is meta
    reference = signal.butter(2, [1.0, 40.0], btype="bandpass", fs=SFREQ, output="sos")
    np.testing.assert_allclose(dec.sos, reference, rtol=1e-12)
    shorter = OnlineDecoder.from_model((pipeline, meta), names, SFREQ, window=0.4)
    assert shorter.window_len == round(0.4 * SFREQ)


def test_from_model_defaults_to_the_decoders_update_rate(pipeline):
    from bci_universum.model_io import ModelMetadata

    names = [f"EEG{k}" for k in range(N_CH)]
    meta = ModelMetadata(names, SFREQ, (8.0, 30.0), (0.5, 1.5), [0, 1])
    default = inspect.signature(OnlineDecoder).parameters["update_rate"].default
    dec = OnlineDecoder.from_model((pipeline, meta), names, SFREQ)
    assert dec.hop == round(SFREQ / default)


def test_a_single_channel_stream_is_decoded():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((40, 1, 250))
    y = np.repeat([0, 1], 20)
    X[y == 1] *= 2.0
    one = make_pipeline(FunctionTransformer(_log_var), LinearDiscriminantAnalysis()).fit(X, y)
    dec = OnlineDecoder(one, SFREQ, 1, window=1.0, band=(8, 30))
    data = rng.standard_normal((700, 1))
    online = dec.push(data)
    idx, values = offline_decisions(dec, data)
    assert [d.sample_index for d in online] == idx.tolist() and idx.size > 0
    np.testing.assert_allclose([d.value for d in online], values, rtol=0, atol=1e-9)


def test_a_recording_shorter_than_a_window_has_no_decision(pipeline):
    dec = OnlineDecoder(pipeline, SFREQ, N_CH, window=1.0)
    data = _stream(dec.window_len - 1)
    idx, values = offline_decisions(dec, data)
    assert idx.shape == values.shape == (0,)
    assert dec.push(data) == []


def test_a_withheld_decision_built_by_hand_is_the_decoders_binary_one(pipeline):
    dec = OnlineDecoder(pipeline, SFREQ, N_CH, window=0.5)
    withheld = dec.push(np.full((dec.window_len, N_CH), np.nan))[-1]
    assert not withheld.valid
    by_hand = Decision(withheld.sample_index, withheld.timestamp, np.nan, np.nan, False)
    np.testing.assert_array_equal(by_hand.values, withheld.values)


def test_the_current_window_is_read_only(pipeline):
    dec = OnlineDecoder(pipeline, SFREQ, N_CH, window=0.5)
    dec.push(_stream(dec.window_len))
    with pytest.raises(ValueError, match="read-only"):
        dec.current_window()[0, 0] = 1.0


def test_filter_raw_equals_scipy_with_non_finite_samples_zeroed_and_kept():
    import mne

    data = _stream(1000).T
    data[3, 200] = np.nan
    raw = mne.io.RawArray(data, mne.create_info(N_CH, SFREQ, "eeg"), verbose="error")
    sos = signal.butter(4, [8.0, 30.0], btype="bandpass", fs=SFREQ, output="sos")
    expected = signal.sosfilt(sos, np.nan_to_num(data, nan=0.0), axis=1)
    expected[3, 200] = np.nan
    np.testing.assert_allclose(filter_raw(raw, (8.0, 30.0)).get_data(), expected, atol=1e-12)
    np.testing.assert_array_equal(filter_raw(raw, None).get_data(), data)


def test_replay_in_chunks_of_one_sample_equals_offline(pipeline):
    data = _stream(400)
    dec = OnlineDecoder(pipeline, SFREQ, N_CH, window=0.5, update_rate=25)
    idx, values = replay(dec, data, chunk_size=1)
    ref_idx, ref_values = offline_decisions(dec, data)
    assert idx.tolist() == ref_idx.tolist() and idx.size > 0
    np.testing.assert_allclose(values, ref_values, rtol=0, atol=1e-9)


class _TwoScores(LinearDiscriminantAnalysis):
    """A binary LDA giving two decision values per trial (a score per class)."""

    def decision_function(self, X):
        d = super().decision_function(X)
        return np.stack([-d, d], axis=-1)


def test_replay_of_a_two_valued_pipeline_keeps_both_values():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((40, N_CH, 125))
    y = np.repeat([0, 1], 20)
    X[y == 1, 0] *= 2.0
    two = make_pipeline(FunctionTransformer(_log_var), _TwoScores()).fit(X, y)
    dec = OnlineDecoder(two, SFREQ, N_CH, window=0.5, band=None)
    assert dec.n_values == 2
    data = _stream(500)
    idx, values = replay(dec, data)
    ref_idx, ref_values = offline_decisions(dec, data)
    assert idx.tolist() == ref_idx.tolist() and ref_values.shape == (idx.size, 2)
    np.testing.assert_allclose(values, ref_values, rtol=0, atol=1e-9)


def test_a_cascade_of_seven_sections_equals_scipy():
    from bci_universum.online import CausalFilter

    sos = signal.butter(7, [8.0, 30.0], btype="bandpass", fs=SFREQ, output="sos")
    assert sos.shape == (7, 6)
    x = _stream(1500)
    filt = CausalFilter(sos, N_CH)
    out = np.vstack([filt.push(c)[0] for c in np.array_split(x, [5, 400, 401])])
    np.testing.assert_allclose(out, signal.sosfilt(sos, x, axis=0), rtol=0, atol=1e-10)


class _Scores(LinearDiscriminantAnalysis):
    """LDA on log-variances whose decision values are ``factor`` times LDA's."""

    def __init__(self, factor=1.0, lean_error=0.0):
        super().__init__()
        self.factor = factor
        self.lean_error = lean_error

    def decision_function(self, X):
        return self.factor * super().decision_function(X)

    def decision_trial(self, x):
        """The one-window path, off by ``lean_error`` (a lean path's round-off)."""
        return np.atleast_1d(self.decision_function(x[np.newaxis])) + self.lean_error


def _fit_scores(estimator, n_times=125):
    rng = np.random.default_rng(7)
    X = rng.standard_normal((40, N_CH, n_times))
    y = np.repeat([0, 1], 20)
    X[y == 1, 0] *= 2.0
    return make_pipeline(FunctionTransformer(_log_var), estimator).fit(X, y)


def test_labels_follow_predict_for_a_zero_decision_and_a_three_step_pipeline():
    zero = _fit_scores(_Scores(factor=0.0))
    dec = OnlineDecoder(zero, SFREQ, N_CH, window=0.5, band=None)
    data = _stream(dec.window_len)
    (decision,) = dec.push(data)
    assert decision.value == 0.0
    assert decision.label == zero.predict(data.T[np.newaxis])[0] == 0
    three = make_pipeline(FunctionTransformer(_log_var), FunctionTransformer(), _Scores())
    three.fit(*_windows_and_labels())
    dec = OnlineDecoder(three, SFREQ, N_CH, window=0.5, band=None)
    labels = [d.label for d in dec.push(_stream(1000))]
    windows = np.stack([w for w in _windows(_stream(1000), dec)])
    assert labels == three.predict(windows).tolist() and len(set(labels)) == 2


def _windows_and_labels():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((40, N_CH, 125))
    y = np.repeat([0, 1], 20)
    X[y == 1, 0] *= 1.2
    return X, y


def _windows(data, dec):
    return [data[i - dec.window_len + 1 : i + 1].T for i in decision_indices(
        data.shape[0], dec.window_len, dec.hop)]  # fmt: skip


def test_a_lean_path_within_round_off_passes_the_check_for_small_decisions():
    # decisions of order 1e-4: the check's tolerance is 1e-8 absolute below 1, not relative
    small = _fit_scores(_Scores(factor=1e-4, lean_error=5e-9))
    OnlineDecoder(small, SFREQ, N_CH, window=0.5, band=None)
    off = _fit_scores(_Scores(factor=1e-4, lean_error=1.5e-8))
    with pytest.raises(RuntimeError, match="disagrees"):
        OnlineDecoder(off, SFREQ, N_CH, window=0.5, band=None)


def test_the_lean_path_check_is_relative_for_large_decisions():
    large = _fit_scores(_Scores(factor=1e4))
    window = np.random.default_rng(0).standard_normal((1, N_CH, 125))
    scale = np.abs(large.decision_function(window)).max()
    assert scale > 100
    # off by a hundredth of the tolerance 1e-8 * scale: accepted; by twice it: refused
    large[-1].lean_error = 1e-10 * scale
    OnlineDecoder(large, SFREQ, N_CH, window=0.5, band=None)
    large[-1].lean_error = 2e-8 * scale
    with pytest.raises(RuntimeError, match="disagrees"):
        OnlineDecoder(large, SFREQ, N_CH, window=0.5, band=None)


class _RestOffset(LinearDiscriminantAnalysis):
    """A bare estimator on raw windows that adapts: decisions minus the last rest's value."""

    def fit(self, X, y):
        self.offset_ = 0.0
        return super().fit(_log_var(X), y)

    def decision_function(self, X):
        return super().decision_function(_log_var(X)) - self.offset_

    def update(self, x):
        self.offset_ = float(super().decision_function(_log_var(x[np.newaxis]))[0])


def test_a_bare_adaptive_estimator_adapts_from_the_first_full_window():
    bare = _RestOffset().fit(*_windows_and_labels())
    dec = OnlineDecoder(bare, SFREQ, N_CH, window=0.5, band=None)
    data = _stream(600)
    first = dec.window_len - 1
    idx, values = replay(dec, data, rest_ends=[first])
    assert dec.pipeline is not bare and bare.offset_ == 0.0
    window = data[: dec.window_len].T
    assert dec.pipeline.offset_ == bare.decision_function(window[np.newaxis])[0]
    # by hand: the first window's decision, then the adapted copy on the later windows
    expected = bare.decision_function(np.stack(_windows(data, dec)))
    expected[1:] -= dec.pipeline.offset_
    assert idx.tolist() == decision_indices(600, dec.window_len, dec.hop).tolist()
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-9)


def test_a_decision_every_sample_at_update_rate_equal_to_sfreq(pipeline):
    dec = OnlineDecoder(pipeline, SFREQ, N_CH, window=0.2, update_rate=SFREQ)
    data = _stream(200)
    online = dec.push(data)
    assert [d.sample_index for d in online] == list(range(dec.window_len - 1, 200))


def test_a_passthrough_step_does_not_stop_adaptation():
    X, y = _windows_and_labels()
    bare = _RestOffset().fit(X, y)
    piped = Pipeline([("skip", "passthrough"), ("clf", _RestOffset())]).fit(X, y)
    data = _stream(600)
    rest = [200, 400]
    expected, got = (
        replay(OnlineDecoder(est, SFREQ, N_CH, window=0.5, band=None), data, rest_ends=rest)[1]
        for est in (bare, piped)
    )
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_options_of_from_model_and_replay_are_keyword_only(pipeline):
    from bci_universum.model_io import ModelMetadata

    names = [f"EEG{k}" for k in range(N_CH)]
    meta = ModelMetadata(names, SFREQ, (8.0, 30.0), (0.5, 1.5), [0, 1])
    with pytest.raises(TypeError):
        OnlineDecoder.from_model((pipeline, meta), names, SFREQ, 10.0)
    dec = OnlineDecoder(pipeline, SFREQ, N_CH, window=0.5)
    with pytest.raises(TypeError):
        replay(dec, _stream(300), 7)


def test_causal_filter_of_fewer_samples_than_channels_equals_scipy():
    sos = design_bandpass(SFREQ, (8.0, 30.0))
    x = _stream(3)
    np.testing.assert_allclose(causal_filter(x, sos), signal.sosfilt(sos, x, axis=0), atol=1e-12)


def test_non_finite_samples_enter_the_filter_as_zeros():
    from bci_universum.online import CausalFilter

    sos = design_bandpass(SFREQ, (8.0, 30.0))
    x = _stream(300)
    x[[10, 11], 2] = [np.nan, np.inf]
    out, bad = CausalFilter(sos, N_CH).push(x)
    assert np.flatnonzero(bad).tolist() == [10, 11]
    expected = signal.sosfilt(sos, np.where(np.isfinite(x), x, 0.0), axis=0)
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-12)


def test_decisions_of_one_sample_windows_start_at_the_first_sample():
    # window_len - 1 + k * hop, k = 0, 1, ...
    assert decision_indices(10, 1, 3).tolist() == [0, 3, 6, 9]
    assert decision_indices(10, 1, 3, start=4).tolist() == [6, 9]


def test_replay_indices_count_from_the_first_sample_it_is_given(pipeline):
    data = _stream(900)
    dec = OnlineDecoder(pipeline, SFREQ, N_CH, window=0.5)
    dec.push(data[:300])
    idx, values = replay(dec, data[300:])
    ref_idx, ref_values = offline_decisions(dec, data)
    later = ref_idx >= 300
    assert idx.tolist() == (ref_idx[later] - 300).tolist()
    np.testing.assert_allclose(values, ref_values[later], rtol=0, atol=1e-9)


def test_labels_of_a_binary_ecoc_pipeline_follow_predict():
    # one-vs-one codes the second class -1: its one score must be read with that sign
    from bci_universum.classifiers import ECOCUniversumClassifier

    X, y = _windows_and_labels()
    ecoc = make_pipeline(FunctionTransformer(_log_var), ECOCUniversumClassifier()).fit(X, y)
    assert ecoc[-1].code_book_[1, 0] == -1
    dec = OnlineDecoder(ecoc, SFREQ, N_CH, window=0.5, band=None)
    data = _stream(1000)
    labels = [d.label for d in dec.push(data)]
    assert labels == ecoc.predict(np.stack(_windows(data, dec))).tolist()
    assert len(set(labels)) == 2


def test_rest_ends_must_be_integers_with_a_full_window_before_each(pipeline):
    dec = OnlineDecoder(pipeline, SFREQ, N_CH, window=0.5)
    data = _stream(600)
    with pytest.raises(ValueError, match="rest_ends must be sample indices"):
        replay(dec, data, rest_ends=[200.0])
    with pytest.raises(ValueError, match="rest_ends must be sample indices"):
        replay(dec, data, rest_ends=[dec.window_len - 2])
