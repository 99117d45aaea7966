"""Unit spellings of LSL producers and files: names, symbols, mne-lsl's power-of-ten codes."""

import numpy as np
import pytest

from bci_universum.datasets import read_recording
from bci_universum.datasets.units import UNIT_SCALES, resolve_unit

from .writers import stream_header as _header
from .writers import write_xdf


@pytest.mark.parametrize(
    ("declared", "ch_type", "name", "scale"),
    [
        # names, any case, with or without separators
        ("volts", "eeg", "V", 1.0),
        ("Volt", "eeg", "V", 1.0),
        ("millivolts", "emg", "mV", 1e-3),
        ("microvolts", "eeg", "µV", 1e-6),
        ("MicroVolt", "eeg", "µV", 1e-6),
        ("micro-volts", "eeg", "µV", 1e-6),
        ("micro volts", "eeg", "µV", 1e-6),
        ("nanovolts", "eeg", "nV", 1e-9),
        ("femtotesla", "mag", "fT", 1e-15),
        # symbols: micro sign, Greek mu, ASCII u
        ("V", "eeg", "V", 1.0),
        ("mV", "eog", "mV", 1e-3),
        ("µV", "eeg", "µV", 1e-6),
        ("μV", "eeg", "µV", 1e-6),
        ("uV", "eeg", "µV", 1e-6),
        ("UV", "eeg", "µV", 1e-6),
        (" uV ", "eeg", "µV", 1e-6),
        ("nV", "eeg", "nV", 1e-9),
        ("kV", "eeg", "kV", 1e3),
        ("T", "mag", "T", 1.0),
        ("fT", "mag", "fT", 1e-15),
        ("T/m", "grad", "T/m", 1.0),
        ("fT/cm", "grad", "fT/cm", 1e-13),
        # mne-lsl codes: the power of ten of the channel type's SI unit
        ("0", "eeg", "V", 1.0),
        ("-3", "eeg", "mV", 1e-3),
        ("-6", "eeg", "µV", 1e-6),
        ("-6.0", "ecog", "µV", 1e-6),
        ("-9", "eeg", "nV", 1e-9),
        ("-15", "mag", "fT", 1e-15),
        ("-13", "grad", "-13", 1.0),  # not a code MNE names (unknown, below)
        ("-1", "eeg", "1e-1 V", 1e-1),
        ("0", "stim", "n/a", 1.0),
        ("0", "misc", "n/a", 1.0),
        ("-6", "misc", "1e-6", 1e-6),
        # no physical unit
        ("n/a", "stim", "n/a", 1.0),
        ("none", "misc", "n/a", 1.0),
        ("", "eeg", "n/a", 1.0),
        (None, "eeg", "n/a", 1.0),
        ("a.u.", "misc", "n/a", 1.0),
    ],
)
def test_resolve_unit(declared, ch_type, name, scale):
    unit = resolve_unit(declared, ch_type)
    assert unit.name == name
    assert unit.scale == pytest.approx(scale, rel=1e-12)
    assert unit.known == (declared != "-13")


def test_unit_table_holds_codes_and_both_micro_signs():
    for text, scale in (("-6", 1e-6), ("0", 1.0), ("µv", 1e-6), ("μv", 1e-6), ("uv", 1e-6)):
        assert UNIT_SCALES[text] == pytest.approx(scale)
    assert "n/a" not in UNIT_SCALES  # "no unit" has no factor of its own


@pytest.mark.parametrize(
    ("unit", "factor"), [("0", 1.0), ("-6", 1e-6), ("uV", 1e-6), ("n/a", 1e-6)]
)
def test_xdf_reader_resolves_codes_and_keeps_the_microvolt_convention(tmp_path, unit, factor):
    raw = read_recording(_xdf_with_unit(tmp_path, unit))
    np.testing.assert_allclose(raw.get_data()[0], np.arange(10) * factor, rtol=1e-6)


def test_xdf_reader_warns_about_an_unknown_unit(tmp_path):
    with pytest.warns(RuntimeWarning, match=r"Channel 'C3' .* unknown unit 'furlongs'"):
        raw = read_recording(_xdf_with_unit(tmp_path, "furlongs"))
    np.testing.assert_allclose(raw.get_data()[0], np.arange(10) * 1e-6, rtol=1e-6)


def _xdf_with_unit(tmp_path, unit):
    header = _header("amp", "EEG", 1, 50, "float32")
    header["desc"] = (
        f"<channels><channel><label>C3</label><unit>{unit}</unit></channel></channels>"
    )
    values = np.arange(10, dtype=np.float32).reshape(10, 1)
    return write_xdf(tmp_path / "one.xdf", [(header, 100 + np.arange(10) / 50, values)])
