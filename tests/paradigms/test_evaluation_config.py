"""Evaluation files: datasets of plain recording files get their runs from the file names."""

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
