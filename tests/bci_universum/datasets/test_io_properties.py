"""Property-based tests of read_recording's input validation (hypothesis).

Whatever bytes a file holds, the reader returns a Raw or raises a ValueError naming the file;
a valid recording cut anywhere is refused or read with a warning naming the file: never fewer
samples in silence (except a BCI2000 file cut exactly between samples, which its format cannot
tell from a shorter recording).
"""

import tempfile
import warnings
from pathlib import Path

import mne
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bci_universum.datasets import read_recording

from .writers import stream_header, write_bci2000, write_xdf

SUFFIXES = (".fif", ".edf", ".bdf", ".gdf", ".xdf", ".dat", ".set", ".vhdr", ".txt")
MAGIC = (b"", b"\x00\x00\x00\x64", b"0       ", b"\xffBIOSEMI", b"GDF 2.20", b"XDF:",
         b"HeaderLen= 100 SourceCh= 2 StatevectorLen= 1\r\n")  # fmt: skip
SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(
    suffix=st.sampled_from(SUFFIXES),
    magic=st.sampled_from(MAGIC),
    body=st.binary(min_size=0, max_size=600),
)
def test_any_bytes_give_a_raw_or_an_error_naming_the_file(suffix, magic, body):
    with tempfile.TemporaryDirectory() as folder:
        fname = Path(folder) / f"input{suffix}"
        fname.write_bytes(magic + body)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                raw = read_recording(fname, verbose="error")
        except ValueError as err:
            assert str(fname) in str(err)
        else:
            assert isinstance(raw, mne.io.BaseRaw) and raw.n_times > 0


def _valid_files(folder: Path) -> dict[str, int]:
    """One valid recording per format; name → number of samples."""
    rng = np.random.default_rng(0)
    info = mne.create_info(["C3", "C4"], 100.0, "eeg")
    raw = mne.io.RawArray(rng.standard_normal((2, 1000)) * 1e-5, info, verbose=False)
    raw.save(folder / "rec_raw.fif", verbose=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mne.export.export_raw(folder / "rec.edf", raw, verbose=False)
        mne.export.export_raw(folder / "rec.bdf", raw, verbose=False)
    stamps = np.arange(300) / 100
    header = stream_header("amp", "EEG", 2, 100, "float32")
    write_xdf(folder / "rec.xdf", [(header, stamps, rng.standard_normal((300, 2)))], chunk_size=25)
    counts = rng.integers(-99, 99, (300, 2))
    write_bci2000(folder / "rec.dat", counts, np.zeros(300), 100, ["a", "b"], gains=[1, 1])
    return {"rec_raw.fif": 1000, "rec.edf": 1000, "rec.bdf": 1000, "rec.xdf": 300, "rec.dat": 300}


@pytest.fixture(scope="module")
def valid(tmp_path_factory):
    folder = tmp_path_factory.mktemp("valid")
    return folder, _valid_files(folder)


@SETTINGS
@given(name=st.sampled_from(["rec_raw.fif", "rec.edf", "rec.bdf", "rec.xdf", "rec.dat"]),
       fraction=st.floats(0.0, 1.0))  # fmt: skip
@example(
    name="rec_raw.fif", fraction=0.52734375
)  # MNE reads the cut FIF, warns only at warning level
def test_a_cut_recording_is_refused_or_read_with_a_warning(valid, name, fraction):
    folder, n_samples = valid
    whole = (folder / name).read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        fname = Path(tmp) / name
        fname.write_bytes(whole[: round(len(whole) * fraction)])
        try:
            with warnings.catch_warnings(record=True) as record:
                warnings.simplefilter("always")
                raw = read_recording(fname, verbose="error")
        except ValueError as err:
            assert str(fname) in str(err)
            return
        truncated = [w for w in record if "is truncated" in str(w.message)]
        if fraction == 1.0:
            assert raw.n_times == n_samples[name] and not truncated
        elif raw.n_times < n_samples[name] and not (name == "rec.dat" and _on_a_frame(fname)):
            assert truncated and str(fname) in str(truncated[0].message)


def _on_a_frame(fname: Path) -> bool:
    """Whether a BCI2000 file ends on a sample boundary: its header has no sample count, so
    such a cut cannot be told from a shorter recording."""
    header_len = int(fname.read_bytes().split(b"HeaderLen=")[1].split()[0])
    return (fname.stat().st_size - header_len) % (2 * 2 + 2) == 0
