"""``bci-universum evaluate``: config validation before computing, end to end on recordings."""

import csv
import json
import re
import shutil
from pathlib import Path

import distributed
import numpy as np
import pytest

import bci_universum.evaluation.backends as backends
import bci_universum.evaluation.jobs as jobs
from bci_universum.simulation.eeg import simulate_raw
from paradigms.cli import main
from paradigms.evaluation_config import load_evaluation_config
from tests.bci_universum.evaluation.helpers import assert_png_panels

CONFIGS = Path(__file__).resolve().parents[2] / "paradigms" / "configs"

BASE = """
universa = {universa}

[evaluation]
output = "{output}"
classes = {classes}

[[datasets]]
name = "sim"
kind = "recording"
path = "{data}"
files = ["sub-01_run-*_raw.fif"]
tmin = -0.5
tmax = 3.0

[pipelines.csp_lda]
window = [0.5, 2.5]
[pipelines.{pipeline}]
window = [0.5, 2.5]
{extra_pipeline}

[[protocol]]
name = "within-session"
n_splits = {n_splits}
inner_splits = 3
{extra}

[grid]
{grid}
"""


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    """Two runs of the project's recording format (FIF + sidecar) from the simulator."""
    folder = tmp_path_factory.mktemp("recordings")
    for run in (1, 2):
        raw = simulate_raw(
            8, universum_tasks=("rest",), n_channels=8, sfreq=100.0, seed=run, verbose=False
        )
        fname = folder / f"sub-01_run-{run:02d}_raw.fif"
        raw.save(fname, verbose=False)
        sidecar = {"subject": "01", "session": "01", "run": f"{run:02d}"}
        fname.with_suffix(".json").write_text(json.dumps(sidecar))
    return folder


def _config(tmp_path, recordings, **fields):
    values = {
        "universa": '["none", "U_C3:rest"]',
        "output": (tmp_path / "out").as_posix(),
        "classes": '["left", "right"]',
        "data": recordings.as_posix(),
        "pipeline": "csp_usvm",
        "extra_pipeline": "",
        "n_splits": 4,
        "extra": "",
        "grid": "C = [1, 10]\nC_universum = [0, 1]\nepsilon = [0.1]",
        **fields,
    }
    path = tmp_path / "evaluation.toml"
    path.write_text(BASE.format(**values))
    return path


@pytest.fixture
def no_fit(monkeypatch):
    """Fail the test if any job runs."""

    def refuse(*args, **kwargs):
        raise AssertionError("a job ran although the configuration is invalid")

    monkeypatch.setattr(backends, "run_job", refuse)
    monkeypatch.setattr(jobs, "select_and_fit", refuse)


def test_evaluate_end_to_end_and_resume(tmp_path, recordings, capsys):
    config = _config(
        tmp_path,
        recordings,
        extra='[[protocol]]\nname = "cross-run"\nuniversum_from = "test"\ninner_splits = 3',
    )
    assert main(["evaluate", str(config), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"; causal band-pass filter\(s\): \d+(\.\d+)?–\d+(\.\d+)? Hz$", printed, re.M)
    out = tmp_path / "out"
    for stem in ("within-session", "cross-run"):
        scores, tests = (out / f"{stem}.md").read_text().split("### Paired tests")
        assert scores.count("| csp_usvm |") == 2
        assert tests.count("| csp_usvm | U_C3:rest | csp_usvm + none |") == 1
        # csp_usvm (2 universa), csp_lda (1): 1.6 + 0.6 per box inches each
        assert_png_panels(out / f"{stem}_accuracy_scores.png", 1, panel_width=2.8 + 2.2)
        # the only universum variant against its baseline and against the peer
        paired = sorted(p.name for p in out.glob(f"{stem}_accuracy_paired_*.png"))
        assert paired == [
            f"{stem}_accuracy_paired_csp_lda-none_vs_csp_usvm-U_C3-rest.png",
            f"{stem}_accuracy_paired_csp_usvm-none_vs_csp_usvm-U_C3-rest.png",
        ]
        with (out / f"{stem}.csv").open() as fh:
            rows = list(csv.DictReader(fh))
        pipelines = {(r["pipeline"], r["universum"]) for r in rows}
        assert pipelines == {("csp_lda", "none"), ("csp_usvm", "none"), ("csp_usvm", "U_C3:rest")}
        assert {r["subject"] for r in rows} == {"01"}
    with (out / "cross-run.csv").open() as fh:
        splits = {r["split"] for r in csv.DictReader(fh)}
    assert splits == {"01->02", "02->01"}
    # the sidecar runs name the groups; the simulated ERD is learnable
    accuracy = [float(r["score"]) for r in rows if r["metric"] == "accuracy"]
    assert np.mean(accuracy) > 0.7
    n_cached = len(list((out / "cache").glob("*.json")))
    capsys.readouterr()

    # a second run recomputes nothing: every job comes from the cache
    def refuse(*args, **kwargs):
        raise AssertionError("a cached job was recomputed")

    engine_run_job, backends.run_job = backends.run_job, refuse
    try:
        assert main(["evaluate", str(config), "--no-progress"]) == 0
    finally:
        backends.run_job = engine_run_job
    assert len(list((out / "cache").glob("*.json"))) == n_cached

    # joblib workers give the same scores as the serial run
    parallel = tmp_path / "parallel"
    args = ["--backend", "joblib", "--n-jobs", "2", "--output", str(parallel), "--no-progress"]
    assert main(["evaluate", str(config), *args]) == 0
    for stem in ("within-session", "cross-run"):
        with (out / f"{stem}.csv").open() as a, (parallel / f"{stem}.csv").open() as b:
            serial_rows, joblib_rows = list(csv.DictReader(a)), list(csv.DictReader(b))
        assert [r["score"] for r in serial_rows] == [r["score"] for r in joblib_rows]


@pytest.mark.slow
def test_dask_scheduler_address_gives_the_serial_scores(tmp_path, recordings):
    config = _config(tmp_path, recordings)
    assert main(["evaluate", str(config), "--no-progress"]) == 0
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False) as cluster:
        args = ["--scheduler", cluster.scheduler_address, "--output", str(tmp_path / "dask")]
        assert main(["evaluate", str(config), "--no-progress", *args]) == 0
    with (tmp_path / "out" / "within-session.csv").open() as a:
        serial = [r["score"] for r in csv.DictReader(a)]
    with (tmp_path / "dask" / "within-session.csv").open() as b:
        assert [r["score"] for r in csv.DictReader(b)] == serial


def test_scheduler_needs_the_dask_backend(tmp_path, recordings, capsys):
    config = _config(tmp_path, recordings)
    assert main(["evaluate", str(config), "--backend", "joblib", "--scheduler", "x:1"]) == 1
    assert "--scheduler needs --backend dask" in capsys.readouterr().err


def test_a_report_replaces_its_plots_and_names_the_reports_it_leaves(tmp_path, recordings, capsys):
    """An output folder holding an earlier evaluation: the paired plot of other pipelines of
    the protocol rerun is gone, another protocol's report stays and is named as not rewritten."""
    config = _config(tmp_path, recordings, pipeline="ts_lr", n_splits=2, grid="C = [1, 10]")
    out = tmp_path / "out"
    out.mkdir()
    stale = out / "within-session_accuracy_paired_csp_lda-none_vs_x-none.png"
    stale.write_bytes(b"an earlier plot")
    (out / "cross-run.csv").write_text("an earlier report")
    assert main(["evaluate", str(config), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert f"note: {out} also holds the report of cross-run from an earlier evaluation" in err
    assert not stale.exists() and (out / "within-session.csv").exists()
    assert (out / "cross-run.csv").read_text() == "an earlier report"


def test_an_output_that_is_a_file_is_refused_before_loading(tmp_path, recordings, capsys):
    """-o or [evaluation] output naming an existing file: refused naming it, file untouched."""
    config = _config(tmp_path, recordings)
    afile = tmp_path / "afile"
    afile.write_text("keep")
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", str(config), "-o", str(afile)])
    assert exit_.value.code == 2
    assert f"--output/-o: {afile} is a file, not a folder" in capsys.readouterr().err
    config.write_text(config.read_text().replace((tmp_path / "out").as_posix(), afile.as_posix()))
    with pytest.raises(ValueError, match=r"\[evaluation\] output: .*afile is a file"):
        load_evaluation_config(config)
    assert afile.read_text() == "keep"


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"pipeline": "csp_qda"}, "Unknown pipeline 'csp_qda'"),
        ({"extra_pipeline": "n_filters = 3"}, r"no parameter \['n_filters'\]"),
        ({"universa": '["none", "U_x"]'}, "unknown universum 'U_x'"),
        ({"universa": '["U_C3:word"]'}, "kind 'word'"),
        ({"classes": '["left", "up"]'}, r"labels \['up'\] are missing"),
        ({"classes": '["left", "left", "right"]'},
         r"\[evaluation\] classes lists \['left'\] more than once"),
        ({"classes": "[]"}, r"\[evaluation\] classes is empty"),
        ({"extra": '[[protocol]]\nname = "cross-run"\npairs = []'},
         r"#2 \(cross-run\) pairs is empty: it selects nothing"),
        ({"extra": '[[protocol]]\nname = "learning-curve"\nn_per_class = []'},
         r"#2 \(learning-curve\) n_per_class is empty"),
        ({"extra": '[[protocol]]\nname = "cross-run"\npipelines = []'},
         r"#2 \(cross-run\): pipelines must be a non-empty list"),
        ({"n_splits": 20}, "fewer than 20"),
        ({"extra": "n_per_class = [3]"}, r"Unknown key\(s\) \['n_per_class'\]"),
        ({"extra": 'universum_from = "x"'}, r"Unknown key"),
        (
            {"extra": '[[protocol]]\nname = "cross-run"\npairs = [[["01", "02"], "02"]]'},
            r"#2 \(cross-run\): .*pair \(\['01', '02'\], '02'\) tests on run '02', which is "
            "also one of its training runs",
        ),
        ({"extra_pipeline": "C_universum = 0.0"},
         r"\[pipelines.csp_usvm\] sets \['C_universum'\], which \[grid\] also searches "
         r"\(C_universum = \[0.0, 1.0\]\)"),
        ({"extra": '[[protocol]]\nname = "cross-run"\ninner_splits = 1'},
         r"#2 \(cross-run\): inner_splits must be at least 2"),
        ({"classes": '["left", "right"]\nn_jobs = 0\nbackend = "joblib"'},
         r"\[evaluation\] n_jobs: expected a positive integer or -1, got 0"),
    ],
)  # fmt: skip
def test_bad_configs_fail_before_any_fit(tmp_path, recordings, no_fit, fields, match, capsys):
    config = _config(tmp_path, recordings, **fields)
    with pytest.raises(ValueError, match=match):
        load_evaluation_config(config).prepare()
    assert main(["evaluate", str(config), "--no-progress"]) == 1
    assert "error" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("edit", "error", "match"),
    [
        (("kind = \"recording\"", "kind = \"gdf\""), ValueError, "kind must be one of"),
        (("sub-01_run-*", "sub-02_run-*"), FileNotFoundError, "no file matches"),
        (("[grid]", "[grids]"), ValueError, r"Unknown section\(s\) \['grids'\]"),
        (("tmax = 3.0", "tmax = 3.0\nresample = -1"), ValueError,
         r"\[\[datasets\]\] sim: resample must be a rate in Hz \(> 0\), got -1.0"),
        (("n_splits = 4", 'n_splits = "4"'), ValueError, "n_splits must be int"),
        (('name = "within-session"', 'name = "leave-one-out"'), ValueError, "name must be"),
        (('files = ["sub-01_run-*_raw.fif"]', 'classes = ["cue/left", "cue/up"]'),
         ValueError, "needs files"),
        (('files = ["sub-01_run-*_raw.fif"]', "files = []"), ValueError,
         r"\[\[datasets\]\] #1 files is empty"),
        (('tmax = 3.0', 'tmax = 3.0\nchannels = []'), ValueError,
         r"\[\[datasets\]\] #1 channels is empty"),
        (("[pipelines.csp_lda]", '[[datasets]]\nname = "sim"\npath = "."\nfiles = ["x"]\n'
          "[pipelines.csp_lda]"), ValueError, r"names \['sim'\] are used more than once"),
        (('files = ["sub-01_run-*_raw.fif"]', 'files = ["sub-01_run-*_raw.fif"]\nruns = ["01"]'),
         ValueError, r"keys \['runs'\] do not apply to kind 'recording' \(they would be ignored"),
        (("[grid]", "[quick]\nprotocol = { nsplits = 2 }\n[grid]"), ValueError,
         r"Unknown key\(s\) \['nsplits'\] in \[quick\] protocol"),
        (('universa = ["none", "U_C3:rest"]', "universa = []"), ValueError,
         r"^[^ ]+ universa must be a non-empty list of names, got \[\]"),
        (('name = "within-session"\nn_splits = 4',
          'name = "learning-curve"\nn_per_class = [4.5, 8]'),
         ValueError, r"learning-curve\) n_per_class entries must be int, got 4.5"),
    ],
)  # fmt: skip
def test_malformed_files(tmp_path, recordings, no_fit, edit, error, match):
    config = _config(tmp_path, recordings)
    config.write_text(config.read_text().replace(*edit))
    with pytest.raises(error, match=match):
        load_evaluation_config(config).prepare()


def test_grid_names_no_job_searches_are_refused(tmp_path, recordings, no_fit):
    """A name of a grid the file sets that no job searches is refused (a typo would search
    nothing); the default grids name classifier parameters and pass without them."""
    config = _config(tmp_path, recordings)
    text = config.read_text()
    config.write_text(text.replace("epsilon = [0.1]", "epsilon = [0.1]\nCc = [1]"))
    with pytest.raises(ValueError, match=r"\[grid\] \['Cc'\]: no pipeline has a parameter"):
        load_evaluation_config(config).prepare()
    config.write_text(text.replace('universa = ["none", "U_C3:rest"]', 'universa = ["none"]'))
    with pytest.raises(ValueError, match=r"\['C_universum', 'epsilon'\]: no protocol searches"):
        load_evaluation_config(config).prepare()
    config.write_text(text.replace("[grid]", "[quick]\ngrid = { C = [1], Cx = [0.1] }\n[grid]"))
    with pytest.raises(ValueError, match=r"\[quick\] grid \['Cx'\]: no pipeline has"):
        load_evaluation_config(config, quick=True).prepare()
    load_evaluation_config(config).prepare()  # the full run's [grid] is searched
    lda_only = text.split("[grid]")[0].replace("[pipelines.csp_usvm]\nwindow = [0.5, 2.5]\n", "")
    config.write_text(lda_only)  # the default grids, which CSP + LDA does not search
    load_evaluation_config(config).prepare()
    load_evaluation_config(config, quick=True).prepare()


def test_missing_marker_names_the_file(tmp_path, recordings, no_fit):
    config = _config(tmp_path, recordings)
    text = config.read_text().replace(
        'files = ["sub-01_run-*_raw.fif"]',
        'files = ["sub-01_run-*_raw.fif"]\nclasses = ["cue/left", "cue/up"]',
    )
    config.write_text(text)
    with pytest.raises(ValueError, match=r"run-01_raw.fif.*'cue/up'"):
        load_evaluation_config(config).prepare()


def test_quick_and_command_line_overrides(tmp_path, recordings):
    config = _config(tmp_path, recordings, n_splits=10)
    quick = load_evaluation_config(
        config, quick=True, n_jobs=2, backend="joblib", output=tmp_path / "q"
    )
    assert quick.protocols[0].options["n_splits"] == 3
    assert quick.grid == {"C": (1.0, 10.0), "C_universum": (0.0, 1.0), "epsilon": (0.1,)}
    assert (quick.n_jobs, quick.backend, quick.output) == (2, "joblib", tmp_path / "q")
    assert load_evaluation_config(config).protocols[0].options["n_splits"] == 10


@pytest.mark.parametrize("name", ["eegmmidb_s001.toml", "bci4als.toml"])
def test_example_configs_are_valid(name, monkeypatch, tmp_path):
    monkeypatch.setenv("BCI_UNIVERSUM_DATA", str(tmp_path))
    config = load_evaluation_config(CONFIGS / name)
    assert {"csp_lda", "csp_usvm", "ts_lr", "thesis"} <= set(config.pipelines)
    assert [p.name for p in config.protocols] == ["within-session", "cross-run", "learning-curve"]


@pytest.mark.data
@pytest.mark.parametrize("name", ["eegmmidb_s001.toml", "bci4als.toml"])
def test_example_configs_plan_on_the_real_data(name, data_dir, monkeypatch, no_fit):
    monkeypatch.setenv("BCI_UNIVERSUM_DATA", str(data_dir))
    data, protocols = load_evaluation_config(CONFIGS / name).prepare()
    assert len(data) == 1 and len(protocols) == 3


SMALL = """
[evaluation]
output = "{output}"
classes = ["left", "right"]
{dataset}
[pipelines.csp_lda]
window = {window}
[pipelines.csp_usvm]
window = {window}
[pipelines.ts_lr]
window = {window}
universa = ["none", "U_C3:{kind}"]
[[protocol]]
name = "within-session"
[[protocol]]
name = "cross-run"
universum_from = "test"
[[protocol]]
name = "learning-curve"
n_per_class = [4, 8]
[quick]
protocol = {{ n_splits = 3, inner_splits = 2, n_repeats = 1 }}
grid = {{ C = [1], C_universum = [0, 1], epsilon = [0.1] }}
"""


def _small_run(tmp_path, capsys, dataset, window, kind):
    out = tmp_path / "out"
    config = tmp_path / "small.toml"
    text = SMALL.format(output=out.as_posix(), dataset=dataset, window=window, kind=kind)
    # universa must precede the tables: move the line to the top
    line = f'universa = ["none", "U_C3:{kind}"]'
    config.write_text(line + "\n" + text.replace(line, ""))
    code = main(["evaluate", str(config), "--quick", "--no-progress"])
    assert code == 0, capsys.readouterr().err
    for stem in ("within-session", "cross-run", "learning-curve"):
        with (out / f"{stem}.csv").open() as fh:
            rows = list(csv.DictReader(fh))
        assert {r["pipeline"] for r in rows} == {"csp_lda", "csp_usvm", "ts_lr"}
        assert ("csp_usvm", f"U_C3:{kind}") in {(r["pipeline"], r["universum"]) for r in rows}
        assert "| csp_usvm | U_C3:" in (out / f"{stem}.md").read_text()
    for stem in ("within-session", "cross-run"):
        # csp_lda (1 universum), csp_usvm (2), ts_lr (1): 1.6 + 0.6 per box inches each
        assert_png_panels(out / f"{stem}_accuracy_scores.png", 1, panel_width=2.2 + 2.8 + 2.2)
    assert_png_panels(out / "learning-curve_accuracy_learning_curve.png", 1, panel_width=6.5)
    return out


@pytest.mark.data
@pytest.mark.slow
def test_evaluate_eegmmidb_s001(data_dir, tmp_path, capsys):
    dataset = f"""
[[datasets]]
kind = "eegmmidb"
path = "{Path(data_dir).as_posix()}"
runs = [4, 8, 12]
universum = ["rest"]
tmin = -1.0
tmax = 4.0
channels = ["FC3", "FC1", "FC2", "FC4", "C3", "C1", "Cz", "C2", "C4", "CP3", "CP1", "CP2", "CP4"]
"""
    out = _small_run(tmp_path, capsys, dataset, "[1.0, 2.0]", "rest")
    with (out / "cross-run.csv").open() as fh:
        assert {r["split"] for r in csv.DictReader(fh)} == {"4+8->12", "12+4->8", "12+8->4"}


@pytest.mark.data
@pytest.mark.slow
def test_evaluate_bci4als(data_dir, tmp_path, capsys):
    text = (CONFIGS / "bci4als.toml").read_text()
    dataset = text[text.index("[[datasets]]") : text.index("[pipelines.csp_lda]")]
    dataset = dataset.replace(
        'kind = "xdf"', f'kind = "xdf"\npath = "{Path(data_dir).as_posix()}"'
    )
    out = _small_run(tmp_path, capsys, dataset, "[0.4, 4.4]", "idle")
    with (out / "cross-run.csv").open() as fh:
        tested = {r["split"].split("->")[1] for r in csv.DictReader(fh)}
    assert tested == {f"Test{i}" for i in range(1, 10)}


@pytest.mark.data
def test_csp_lda_on_s001_matches_the_data_readme(data_dir, tmp_path):
    """CSP(4) + LDA, 7-30 Hz, 1-2 s, stratified 5-fold on R04/R08/R12: README 0.69 ± 0.13."""
    config = tmp_path / "reference.toml"
    config.write_text(
        f"""
[evaluation]
output = "{(tmp_path / "out").as_posix()}"
[[datasets]]
kind = "eegmmidb"
path = "{Path(data_dir).as_posix()}"
subjects = [1]
runs = [4, 8, 12]
universum = []
tmin = -1.0
tmax = 4.0
[pipelines.csp_lda]
band = [7.0, 30.0]
window = [1.0, 2.0]
n_components = 4
[[protocol]]
name = "within-session"
n_splits = 5
"""
    )
    assert main(["evaluate", str(config), "--no-progress"]) == 0
    with (tmp_path / "out" / "within-session.csv").open() as fh:
        scores = [float(r["score"]) for r in csv.DictReader(fh) if r["metric"] == "accuracy"]
    assert len(scores) == 5
    # 45 trials, 5 folds: the standard error of the mean is about 0.13 / sqrt(5) ≈ 0.06
    assert abs(np.mean(scores) - 0.69) < 0.12
    shutil.rmtree(tmp_path / "out")


def test_seed_and_repeats_from_the_command_line(tmp_path, recordings):
    config = _config(tmp_path, recordings)
    assert load_evaluation_config(config).seed == 0
    loaded = load_evaluation_config(config, seed=7, repeats=3, quick=True)
    assert loaded.seed == 7
    (within,) = [p.build(loaded.grid) for p in loaded.protocols]
    assert within.n_repeats == 3 and within.n_splits == 3  # --quick caps the folds only
    assert load_evaluation_config(config, quick=True).protocols[0].build({}).n_repeats == 1
    with pytest.raises(ValueError, match="repeats must be a positive integer, got 0"):
        load_evaluation_config(config, repeats=0)


def test_evaluate_command_takes_seed_and_repeats(tmp_path, recordings, capsys):
    config = _config(tmp_path, recordings, pipeline="ts_lr", n_splits=2, grid="C = [1, 10]")
    args = ["evaluate", str(config), "--no-progress", "--seed", "5", "--repeats", "2"]
    assert main(args) == 0
    with (tmp_path / "out" / "within-session.csv").open() as fh:
        rows = [r for r in csv.DictReader(fh) if r["metric"] == "accuracy"]
    splits = {r["split"] for r in rows}
    assert splits == {"fold0", "fold1", "repeat1-fold0", "repeat1-fold1"}
    assert main([*args[:-1], "0"]) == 1
    assert "repeats must be a positive integer" in capsys.readouterr().err
