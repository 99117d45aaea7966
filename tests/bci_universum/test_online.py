import numpy as np
import pytest
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from bci_universum.online import (
    OnlineDecoder,
    causal_filter,
    decision_indices,
    design_bandpass,
    offline_decisions,
)

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


def test_online_equals_offline_for_any_chunking(pipeline):
    data = _stream(3000)
    dec = OnlineDecoder(pipeline, SFREQ, N_CH, window=1.0, update_rate=16, band=(8, 30))
    rng = np.random.default_rng(2)
    online = []
    pos = 0
    while pos < len(data):
        size = int(rng.integers(1, 40))
        online += dec.push(data[pos : pos + size])
        pos += size
    idx, values = offline_decisions(dec, data)
    assert len(online) == len(idx) > 100
    assert [d.sample_index for d in online] == idx.tolist()
    np.testing.assert_allclose([d.value for d in online], values, rtol=0, atol=1e-9)
    assert all(d.valid for d in online)


def test_decision_schedule():
    assert decision_indices(10, 4, 3).tolist() == [3, 6, 9]
    assert decision_indices(3, 4, 3).size == 0
    dec_hop = OnlineDecoder(
        make_pipeline(FunctionTransformer(_log_var), LinearDiscriminantAnalysis()),
        SFREQ,
        N_CH,
        update_rate=16,
    ).hop
    assert dec_hop == round(SFREQ / 16)


def test_filter_state_is_kept_between_chunks(pipeline):
    sos = design_bandpass(SFREQ, (8, 30))
    data = _stream(1000)
    whole = causal_filter(data, sos)
    dec = OnlineDecoder(pipeline, SFREQ, N_CH, window=0.5)
    dec.push(data[:333])
    dec.push(data[333:])
    np.testing.assert_allclose(dec._window(), whole[-dec.window_len :].T, atol=1e-12)


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


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sfreq": 0}, "sfreq"),
        ({"n_channels": 0}, "n_channels"),
        ({"window": -1}, "window"),
        ({"update_rate": 1000}, "update_rate"),
        ({"smoothing": 1.0}, "smoothing"),
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
    with pytest.raises(ValueError, match="timestamps"):
        dec.push(np.zeros((10, N_CH)), np.zeros(9))
    with pytest.raises(ValueError, match="decision_function"):
        OnlineDecoder(object(), SFREQ, N_CH)
    with pytest.raises(ValueError, match="non-finite"):
        offline_decisions(dec, np.full((300, N_CH), np.nan))
