"""Evaluation files: datasets of plain recording files get their runs from the file names."""

import re
import textwrap

import numpy as np
import pytest

from paradigms.evaluation_config import load_evaluation_config


@pytest.mark.data
def test_cross_run_on_plain_files(data_dir, tmp_path):
    config = tmp_path / "evaluation.toml"
    config.write_text(
        f"""
[[datasets]]
name = "s001"
kind = "recording"
path = "{data_dir.as_posix()}"
files = ["MNE-eegbci-data/files/eegmmidb/1.0.0/S001/S001R0[48].edf",
         "MNE-eegbci-data/files/eegmmidb/1.0.0/S001/S001R12.edf"]
classes = {{ "T1" = "left", "T2" = "right" }}
universum = {{ "T0" = "rest" }}
tmin = 1.0
tmax = 2.0

[pipelines.csp_lda]
window = [1.0, 2.0]

[[protocol]]
name = "cross-run"
pairs = [[["S001R04", "S001R08"], "S001R12"]]
"""
    )
    data, protocols = load_evaluation_config(config).prepare()
    (variants,) = data  # one EpochSet per band of the pipelines: csp_lda's 7-30 Hz
    (epochs,) = variants.values()
    assert epochs.info["band"] == (7.0, 30.0)
    assert sorted(set(epochs.runs)) == ["S001R04", "S001R08", "S001R12"]
    assert epochs.subject == "S001" and protocols[0][0].name == "cross-run"
    config.write_text(config.read_text().replace('"S001R12"]]', '"R12"]]'))
    with pytest.raises(ValueError, match=r"evaluation\.toml \[\[protocol\]\] cross-run: .*R12"):
        load_evaluation_config(config).prepare()


_BCI4ALS = """
[[datasets]]
name = "b4"
kind = "bci4als"
path = "{path}"
subjects = ["assaf"]
runs = [2]
tmin = 0.5
tmax = 4.5
{highpass}
[pipelines.csp_lda]
window = [1.0, 2.0]

[[protocol]]
name = "within-session"
n_splits = 2
"""


@pytest.mark.data
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_bci4als_highpass_is_an_option_of_the_file(data_dir, tmp_path):
    config = tmp_path / "evaluation.toml"

    def dc_offset(highpass):
        config.write_text(_BCI4ALS.format(path=data_dir.as_posix(), highpass=highpass))
        (dataset,) = load_evaluation_config(config).datasets
        (epochs,) = dataset.load(band=None)
        return np.abs(epochs.X.mean(axis=2)).max()

    # the loader's default 1 Hz high-pass removes the stream's DC offset (~0.09 V) ...
    assert dc_offset("") < 1e-4 and dc_offset("highpass = 1") < 1e-4
    # ... and highpass = false keeps it (e.g. for the causal band-pass alone, as online)
    assert dc_offset("highpass = false") > 1e-2


@pytest.mark.parametrize("value", ["true", "-1.0", "0", '"1 Hz"'])
def test_bad_highpass_is_named(tmp_path, value):
    config = tmp_path / "evaluation.toml"  # refused while reading: no data needed
    config.write_text(_BCI4ALS.format(path=tmp_path.as_posix(), highpass=f"highpass = {value}"))
    with pytest.raises(ValueError, match=r"\[\[datasets\]\] (#1|b4)[: ]+highpass must be"):
        load_evaluation_config(config)


def test_eegmmidb_subjects_are_numbers(tmp_path):
    config = tmp_path / "evaluation.toml"
    config.write_text(
        '[[datasets]]\nkind = "eegmmidb"\npath = "."\nsubjects = ["S001"]\n[pipelines.csp_lda]\n'
    )
    with pytest.raises(ValueError, match=r"eegmmidb subjects entries \(1 for S001\) must be int"):
        load_evaluation_config(config)


@pytest.mark.parametrize(
    ("entries", "match"),
    [
        ("subjects = [1, 1]\n", r"\[\[datasets\]\] eegmmidb: subjects lists \['1'\] more than"),
        ('universa = ["none", "none"]\n', r"universa: universa lists \['none'\] more than once"),
    ],
)
def test_an_entry_listed_twice_is_refused_while_reading(tmp_path, entries, match):
    """Listed twice, a subject or universum would be evaluated twice and its rows counted twice
    in the tables and tests; refused before any data is read (the folder is empty)."""
    universa, subjects = (entries, "") if entries.startswith("universa") else ("", entries)
    config = tmp_path / "evaluation.toml"
    config.write_text(
        f'{universa}[[datasets]]\nkind = "eegmmidb"\npath = "."\n{subjects}[pipelines.csp_lda]\n'
    )
    with pytest.raises(ValueError, match=match):
        load_evaluation_config(config)


def test_the_module_example_puts_universa_at_the_top_level():
    """Below [pipelines.csp_usvm], as the example had it, TOML reads universa as a parameter
    of that pipeline."""
    import paradigms.evaluation_config as module
    from paradigms._toml import tomllib  # tomli on Python 3.10

    example = re.search(r"grid::\n\n(.*?)\n\nEach ", module.__doc__, re.S).group(1)
    data = tomllib.loads(textwrap.dedent(example))
    assert data["universa"] == ["none", "U_C3:rest", "centred:rest"]
    assert all("universa" not in params for params in data["pipelines"].values())


@pytest.mark.parametrize("header", ["[evaluation]", "[pipelines.csp_lda]", "[grid]"])
def test_universa_below_a_table_header_is_named_as_misplaced(tmp_path, header):
    config = tmp_path / "evaluation.toml"
    body = '[[datasets]]\nkind = "eegmmidb"\npath = "."\n[pipelines.csp_lda]\n'
    body = body if header == "[pipelines.csp_lda]" else body + f"{header}\n"
    config.write_text(body + 'universa = ["none"]\n')
    with pytest.raises(ValueError, match=re.escape(f"{header} holds universa: a top-level key")):
        load_evaluation_config(config)
