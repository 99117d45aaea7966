"""Units on LSL streams: resolved when reading, warned about when unknown, in the sidecar."""

import json
from uuid import uuid4

import mne
import numpy as np
import pylsl
import pytest

from acquisition.receiver import StreamReceiver
from acquisition.recorder import Recorder
from acquisition.streams import (
    channel_units,
    make_stream_info,
    si_scalings,
    stream_info_from_mne_info,
)

from .lsl_helpers import wait_until


def test_unknown_unit_warns_with_channel_and_value_and_keeps_factor_one():
    info = make_stream_info(
        f"units-{uuid4().hex}", ["C3", "GSR"], 100.0, ch_types=["eeg", "gsr"], units=["uV", "µS"]
    )
    with pytest.warns(RuntimeWarning, match=r"Channel 'GSR' .* unknown unit 'µS'") as record:
        scalings = si_scalings(info)
    assert len(record) == 1
    np.testing.assert_allclose(scalings, [1e-6, 1.0])
    assert [u.known for u in channel_units(info, warn=False)] == [True, False]


def test_outlet_voltage_unit_must_be_a_voltage():
    info = mne.create_info(["C3"], 100.0, "eeg")
    with pytest.raises(ValueError, match="Unknown voltage_unit 'fT'"):
        stream_info_from_mne_info(info, "x", voltage_unit="fT")
    sinfo = stream_info_from_mne_info(info, "x", voltage_unit="volts")
    np.testing.assert_array_equal(si_scalings(sinfo), [1.0])


@pytest.mark.lsl
def test_recording_scales_codes_to_si_and_the_sidecar_names_the_unit(tmp_path):
    info = make_stream_info(
        f"codes-{uuid4().hex}",
        ["A", "B", "C", "D", "E"],
        100.0,
        ch_types=["eeg", "eeg", "eeg", "stim", "misc"],
        units=["0", "-6", "uV", "0", "furlongs"],
        channel_format="double64",
        source_id=uuid4().hex,
    )
    outlet = pylsl.StreamOutlet(info)
    receiver = StreamReceiver(info.name(), source_id=info.source_id(), timeout=5.0)
    with (
        pytest.warns(RuntimeWarning, match="Channel 'E' .* unknown unit 'furlongs'"),
        Recorder(receiver, None, tmp_path, task="units") as recorder,
    ):
        assert outlet.wait_for_consumers(5.0)
        outlet.push_chunk(np.tile([1.0, 2.0, 3.0, 4.0, 5.0], (20, 1)))
        wait_until(lambda: receiver.n_samples == 20, what="20 samples")
    del outlet
    raw = mne.io.read_raw_fif(recorder.fname, preload=True, verbose="error")
    # FIF stores single precision
    np.testing.assert_allclose(raw.get_data()[:, 0], [1.0, 2e-6, 3e-6, 4.0, 5.0], rtol=1e-6)
    sidecar = json.loads(recorder.fname.with_suffix(".json").read_text())
    assert sidecar["units"] == ["V", "µV", "µV", "n/a", "furlongs"]
    assert sidecar["stream_units"] == ["0", "-6", "uV", "0", "furlongs"]
    np.testing.assert_allclose(sidecar["unit_scalings"], [1.0, 1e-6, 1e-6, 1.0, 1.0])
