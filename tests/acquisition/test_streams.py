from uuid import uuid4

import mne
import numpy as np
import pylsl
import pytest

from acquisition.markers import MarkerOutlet
from acquisition.simulator import SimulatedSource
from acquisition.streams import (
    counter_channel_index,
    describe_channels,
    list_streams,
    make_stream_info,
    mne_info_from_stream_info,
    resolve_stream,
    si_scalings,
    stream_info_from_mne_info,
    stream_query,
)


def _mne_info():
    info = mne.create_info(["C3", "Cz", "C4", "STI"], 250.0, ["eeg", "eeg", "eeg", "stim"])
    montage = mne.channels.make_standard_montage("biosemi64")
    info.set_montage(montage)
    return info


def test_mne_info_round_trip_keeps_names_types_units_and_positions():
    info = _mne_info()
    sinfo = stream_info_from_mne_info(info, "rt", source_id="abc")
    assert sinfo.channel_count() == 4 and sinfo.nominal_srate() == 250.0
    assert sinfo.source_id() == "abc" and sinfo.channel_format() == pylsl.cf_float32
    channels = describe_channels(sinfo)
    assert [c.unit for c in channels] == ["microvolts"] * 3 + ["n/a"]
    np.testing.assert_allclose(si_scalings(sinfo), [1e-6, 1e-6, 1e-6, 1.0])
    back = mne_info_from_stream_info(sinfo)
    assert back["ch_names"] == info["ch_names"]
    assert back.get_channel_types() == info.get_channel_types()
    assert back["sfreq"] == 250.0
    for a, b in zip(back["chs"][:3], info["chs"][:3], strict=True):
        np.testing.assert_allclose(a["loc"][:3], b["loc"][:3], atol=1e-9)


def test_counter_channel_and_unknown_types():
    sinfo = make_stream_info(
        "c", ["a", "b", "n"], 100.0, ch_types=["eeg", "weird", "counter"], units="volts"
    )
    assert counter_channel_index(sinfo) == 2
    back = mne_info_from_stream_info(sinfo)
    assert back.get_channel_types() == ["eeg", "misc", "misc"]


def test_undescribed_stream_gets_default_channels():
    sinfo = pylsl.StreamInfo("bare", "EEG", 3, 128.0, pylsl.cf_double64, "bare")
    assert [c.name for c in describe_channels(sinfo)] == ["0", "1", "2"]
    assert mne_info_from_stream_info(sinfo).get_channel_types() == ["eeg"] * 3
    np.testing.assert_array_equal(si_scalings(sinfo), 1.0)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"ch_names": []}, "at least one channel"),
        ({"ch_names": ["a", "a"]}, "Duplicate channel names"),
        ({"ch_types": ["eeg"]}, "ch_types has 1 entries for 2 channels"),
        ({"channel_format": "float16"}, "Unknown LSL channel format"),
        ({"sfreq": -1.0}, "sfreq"),
        ({"name": ""}, "An LSL stream name must be a non-empty string, got ''"),
        ({"name": None}, "An LSL stream name must be a non-empty string, got None"),
    ],
)
def test_make_stream_info_rejects_bad_input(kwargs, fragment):
    args = {"name": "x", "ch_names": ["a", "b"], "sfreq": 100.0} | kwargs
    with pytest.raises(ValueError, match=fragment):
        make_stream_info(**args)


def test_irregular_or_string_streams_have_no_mne_info():
    with pytest.raises(ValueError, match="irregular"):
        mne_info_from_stream_info(pylsl.StreamInfo("m", "Markers", 1, 0, pylsl.cf_string, "m"))
    with pytest.raises(ValueError, match="strings"):
        mne_info_from_stream_info(pylsl.StreamInfo("s", "x", 1, 10, pylsl.cf_string, "s"))


def test_stream_query_quotes_and_rejects_empty_selection():
    assert stream_query("a", "b") == "name='a' and source_id='b'"
    assert stream_query("it's") == 'name="it\'s"'
    with pytest.raises(ValueError, match="Select a stream"):
        stream_query()


@pytest.mark.lsl
def test_list_and_resolve_find_a_loopback_stream():
    name = f"list-{uuid4().hex}"
    sinfo = make_stream_info(name, ["a", "b"], 100.0, source_id=uuid4().hex)
    outlet = pylsl.StreamOutlet(sinfo)
    found = [s for s in list_streams(timeout=1.0) if s.name == name]
    assert len(found) == 1
    assert found[0].n_channels == 2 and found[0].sfreq == 100.0
    assert found[0].source_id == sinfo.source_id() and found[0].channel_format == "float32"
    assert name in str(found[0])
    assert resolve_stream(name, timeout=2.0).source_id() == sinfo.source_id()
    del outlet


@pytest.mark.lsl
def test_resolve_refuses_an_ambiguous_selection_listing_the_candidates():
    """Two streams of one name and type (2 and 3 channels): by name or by type, neither is
    picked silently; the error lists both with their source_id, which picks one."""
    name, stype = f"twin-{uuid4().hex}", f"type-{uuid4().hex}"
    infos = [
        make_stream_info(name, [f"c{k}" for k in range(n)], 100.0, stype=stype, source_id=sid)
        for n, sid in ((2, f"a-{uuid4().hex}"), (3, f"b-{uuid4().hex}"))
    ]
    outlets = [pylsl.StreamOutlet(info) for info in infos]
    for selection in ({"name": name}, {"stype": stype}):
        with pytest.raises(ValueError, match="is ambiguous, 2 streams match") as caught:
            resolve_stream(**selection, timeout=5.0)
        message = str(caught.value)
        for info, n in zip(infos, (2, 3), strict=True):
            assert f"{n} ch 100 Hz float32 source_id='{info.source_id()}'" in message
        assert "host=" in message
        assert "Choose one by its source_id (--source-id, or --marker-source-id" in message
    chosen = resolve_stream(name, source_id=infos[1].source_id(), timeout=5.0)
    assert chosen.channel_count() == 3
    del outlets


@pytest.mark.lsl
def test_the_type_matches_in_any_case():
    """MNE-LSL's player says 'eeg' where amplifiers say 'EEG': ``--type EEG`` finds both."""
    stype = f"EEG-{uuid4().hex}"
    sinfo = make_stream_info(f"lower-{uuid4().hex}", ["a"], 100.0, stype=stype.lower())
    outlet = pylsl.StreamOutlet(sinfo)
    assert resolve_stream(stype=stype, timeout=5.0).source_id() == sinfo.source_id()
    del outlet


@pytest.mark.lsl
def test_a_source_id_shared_by_several_streams_is_ambiguous():
    """MNE-LSL gives its data and annotation streams one source_id ('MNE-LSL'; a unique one
    here, for tests running side by side): selecting by it alone picked either, and the
    annotation stream was then refused as a marker stream. Both are named, and the way to
    choose: the name."""
    shared, name = f"MNE-LSL-{uuid4().hex}", f"player-{uuid4().hex}"
    data = make_stream_info(name, ["a", "b"], 100.0, source_id=shared)
    annotations = pylsl.StreamInfo(f"{name}-annotations", "annotations", 1, 0, "string", shared)
    outlets = [pylsl.StreamOutlet(info) for info in (data, annotations)]
    with pytest.raises(ValueError, match="is ambiguous, 2 streams match") as caught:
        resolve_stream(source_id=shared, timeout=5.0)
    message = str(caught.value)
    assert f"'{name}' type='EEG'" in message and f"'{name}-annotations'" in message
    assert (
        "choose one by its name (--stream NAME, --markers NAME for a marker stream, or "
        "view NAME)." in message
    )
    assert resolve_stream(name, source_id=shared, timeout=5.0).channel_count() == 2
    del outlets


@pytest.mark.lsl
def test_resolve_names_the_missing_stream():
    name = f"missing-{uuid4().hex}"
    with pytest.raises(TimeoutError, match=name):
        resolve_stream(name, timeout=0.2)
    with pytest.raises(ValueError, match="timeout"):
        list_streams(timeout=0)


@pytest.mark.parametrize("name", ["", "  ", None])
def test_outlets_refuse_a_blank_name_before_touching_lsl(name):
    # liblsl's own refusal is an unexplained RuntimeError
    with pytest.raises(ValueError, match="An LSL stream name must be a non-empty string"):
        MarkerOutlet(name)
    with pytest.raises(ValueError, match="An LSL stream name must be a non-empty string"):
        SimulatedSource(n_channels=3, name=name)
