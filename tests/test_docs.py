"""The documentation: its code blocks run, its commands parse and run, and the site builds.

Python blocks of the user guide run one by one, each in its own namespace. A block may use data it
does not make (``X``, ``raw``, ``calibration_features``, ...): the fixtures below provide
them from the simulated subject, named as the page names them; a file named without a folder
is one of the bundled session ``recordings/sub-01_ses-01``. Blocks that need a live
amplifier stream or a downloaded file are listed in ``NEEDS_OUTSIDE``, each with the test
that runs the same calls on real streams.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from paradigms.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
GUIDE = sorted((DOCS / "user_guide").glob("*.rst"))

# Block (by a line it contains) -> where the same calls run against real streams or data.
NEEDS_OUTSIDE = {
    'StreamReceiver("eeg"': "an amplifier stream named 'eeg'; tests/acquisition/test_receiver.py",
    'MarkerOutlet("bci-markers")': "fixed LSL names on a shared machine; tests/acquisition",
    'Player("S001R04.edf"': "the PhysioNet file S001R04.edf; tests/acquisition/test_player.py",
    "StreamLSL(": "a stream sent by MNE-LSL's player; tests/acquisition/test_mne_lsl.py",
}
# Commands of other tools the docs show next to the project's (not the project's to check).
OTHER_TOOLS = ("mne-lsl",)


def rst_blocks(path: Path, language: str) -> list[str]:
    """Bodies of the ``.. code:: language`` / ``.. code-block:: language`` blocks of a page."""
    blocks, lines = [], path.read_text().splitlines()
    for i, line in enumerate(lines):
        if re.match(rf"\.\. (code|code-block|sourcecode):: {language}\s*$", line.strip()):
            body = []
            for nxt in lines[i + 1 :]:
                if nxt.strip() and not nxt.startswith((" ", "\t")):
                    break
                body.append(nxt)
            text = "\n".join(body)
            blocks.append(_dedent(text))
    return blocks


def _dedent(text: str) -> str:
    import textwrap

    return textwrap.dedent(text).strip("\n") + "\n"


def markdown_blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", path.read_text(), re.S)


def shell_commands(block: str) -> list[str]:
    """Commands of a shell block: continuation lines joined, comments dropped."""
    joined = block.replace("\\\n", " ")
    lines = [line.strip().removeprefix("$ ").removesuffix("&") for line in joined.splitlines()]
    return [
        " ".join(shlex.split(line, comments=True))
        for line in lines
        if shlex.split(line, comments=True)
    ]


def all_commands() -> list[tuple[str, str]]:
    found = [
        (page.name, c)
        for page in (README, CONTRIBUTING)
        for b in markdown_blocks(page, "bash")
        for c in shell_commands(b)
    ]
    for page in [*GUIDE, *DOCS.glob("*.rst")]:
        for block in rst_blocks(page, "bash") + rst_blocks(page, "console"):
            found += [(page.name, c) for c in shell_commands(block)]
    return found


COMMANDS = all_commands()


def test_the_docs_hold_commands_and_python_blocks():
    assert any(c.startswith("bci-universum ") for _, c in COMMANDS)
    assert sum(len(rst_blocks(p, "python")) for p in GUIDE) >= 10


@pytest.mark.parametrize(("page", "command"), COMMANDS, ids=[c for _, c in COMMANDS])
def test_commands_in_the_docs_are_valid(page, command):
    """Every ``bci-universum`` command parses; every script a command runs exists."""
    for part in command.split(" && "):
        argv = [w for w in shlex.split(part) if not re.match(r"^[A-Z_]+=", w)]
        if argv[0] == "bci-universum":
            try:
                build_parser().parse_args(argv[1:])
            except SystemExit as exc:
                pytest.fail(f"{page}: {part!r} does not parse (exit {exc.code})")
        elif argv[:3] == ["python", "-m", "pytest"]:
            continue  # the suite itself: .ci/run runs it (test_readme_quick_start_is_what_ci_runs)
        elif argv[:3] == ["python", "-m", "sphinx"]:
            continue  # the documentation build: test_documentation_builds_without_warnings
        elif argv[0] in ("python", "nice"):
            script = next(w for w in argv if w.endswith(".py"))
            assert (ROOT / script).is_file(), f"{page}: {script} does not exist"
        elif argv[0] in OTHER_TOOLS:
            continue
        elif argv[0] == "pip":
            assert argv[1] == "install"
        else:
            pytest.fail(f"{page}: a command the docs test does not know how to check: {part!r}")


def test_readme_quick_start_is_what_ci_runs():
    commands = [c for b in markdown_blocks(README, "bash") for c in shell_commands(b)]
    assert commands[:2] == [
        "pip install . && bci-universum demo",
        "pip install .[test] && python -m pytest",
    ]
    assert 'pip install ".[test]" && python -m pytest' in (ROOT / ".ci" / "run").read_text()


# --- Python blocks of the user guide --------------------------------------------------------


@pytest.fixture(scope="module")
def simulated():
    """Epochs, raw data and features of the simulated subject for blocks that use them."""
    from bci_universum import UNIVERSUM
    from bci_universum.datasets import epochset_from_raw
    from bci_universum.features import TangentSpace
    from bci_universum.pipelines import pipeline_factory
    from bci_universum.simulation.eeg import simulate_raw

    raw = simulate_raw(10, n_channels=8, universum_tasks=("rest",), seed=0, verbose="error")
    epoch_set = epochset_from_raw(
        raw,
        ["cue/left", "cue/right"],
        "universum/",
        tmin=0.5,
        tmax=2.5,
        band=(7.0, 30.0),
        verbose="error",
    )
    X = epoch_set.X
    y = np.where(epoch_set.y == "universum", UNIVERSUM, (epoch_set.y == "right").astype(int))
    features = TangentSpace().fit(X, epoch_set.y).transform(X)
    last = pipeline_factory("ts_usvm")(epoch_set)
    return {
        "raw": raw,
        "epochs": _epochs(raw),
        "X": X,
        "y": y,
        "features": features,
        "last_session_pipeline": last.fit(X, epoch_set.y),
        "epoch_set": epoch_set,
    }


def _epochs(raw):
    import mne

    events, event_id = mne.events_from_annotations(
        raw, {"cue/left": 1, "cue/right": 2}, verbose="error"
    )
    return mne.Epochs(
        raw, events, event_id, 0.0, 2.0, baseline=None, preload=True, verbose="error"
    )


def block_namespace(page: str, block: str, sim: dict) -> dict:
    """What a block uses without making it, from the simulated subject."""
    ns: dict = {}
    if "evaluate(" in block:
        pass  # it loads the example recordings itself, as a reader runs it
    elif "BayesPointMachine" in block:
        lab = sim["y"] != -2
        ns.update(X_train=sim["features"][lab][::2], y_train=sim["y"][lab][::2])
        ns.update(X_test=sim["features"][lab][1::2])
    elif "DriftMonitor" in block:
        features = np.vstack([sim["features"], sim["features"][::-1]])  # the monitor needs ≥ 46
        ns.update(calibration_features=features, feature_vector=sim["features"][0])
    elif "PriorDecision" in block:
        ns.update(last_session_pipeline=sim["last_session_pipeline"])
        ns.update(X_new_epochs=sim["X"], y_new=sim["epoch_set"].y)
    elif "TemporalKernelCCA" in block:
        rng = np.random.default_rng(1)
        power = rng.normal(size=(300, 3))
        ns.update(raw=sim["raw"], epochs=sim["epochs"], eeg_band_power=power)
        ns.update(bold=np.roll(power[:, :1], 4, axis=0) + 0.1 * rng.normal(size=(300, 1)))
    else:
        epochs = "CSP" in block or 'make_pipeline("' in block  # a registry pipeline: epochs
        ns.update(X=sim["X"] if epochs else sim["features"], y=sim["y"])
        ns.update(sfreq=sim["epoch_set"].sfreq)
    return ns


GUIDE_PAGES = [page for page in GUIDE if rst_blocks(page, "python")]


@pytest.mark.slow
@pytest.mark.parametrize("page", GUIDE_PAGES, ids=[page.name for page in GUIDE_PAGES])
def test_python_blocks_of_the_user_guide_run(page, simulated, tmp_path, monkeypatch):
    """A page's blocks run in order in one folder and namespace, as a reader runs them (a
    block may use what an earlier one wrote)."""
    monkeypatch.chdir(tmp_path)
    for recording in (ROOT / "recordings" / "sub-01_ses-01").iterdir():
        (tmp_path / recording.name).symlink_to(recording)  # files a block names by file name
    namespace: dict = {}
    skipped = []
    blocks = rst_blocks(page, "python")
    for k, block in enumerate(blocks):
        outside = [why for key, why in NEEDS_OUTSIDE.items() if key in block]
        if outside:
            skipped.append(f"block {k} needs {outside[0]}")
            continue
        namespace.update(block_namespace(page.name, block, simulated))
        if "evaluate(" in block:  # the thesis protocol takes minutes: run the call smaller
            block = block.replace("WithinSession()", "WithinSession(3, 2, {'C': (1.0,)})")
            block = block.replace('backend="joblib"', 'backend="serial"')
            block = block.replace('"U_nm"', '"U_C3"')
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)  # a documented call converges
            exec(compile(block, f"{page.name} block {k}", "exec"), namespace)
    if len(skipped) == len(blocks):
        pytest.skip("; ".join(skipped))


# --- The site -------------------------------------------------------------------------------


@pytest.mark.slow(seconds=150)
def test_documentation_builds_without_warnings(tmp_path):
    """``sphinx-build -W``: API reference, CLI reference, user guide, and the gallery runs,
    removing the temporary folders its examples write to."""
    out, scratch = tmp_path / "html", tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "docs", out],
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(scratch)},
        capture_output=True,
        text=True,
        timeout=1200,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-5000:]
    assert "WARNING" not in log and "ERROR" not in log, log[-5000:]
    examples = sorted((DOCS / "examples").glob("plot_*.py"))
    assert len(examples) >= 6
    for example in examples:
        figures = list((out / "_images").glob(f"sphx_glr_{example.stem}_*.png"))
        assert figures, f"{example.name} made no figure"
    assert not list(scratch.glob("bci-universum-*")), "an example left its folder behind"
    api = (out / "generated" / "bci_universum.classifiers.usvm.UniversumSVC.html").read_text()
    assert "C_universum" in api and "decision_function" in api
    cli = (out / "cli.html").read_text()
    for command in build_parser()._subparsers._group_actions[0].choices:
        assert command in cli


# --- Commands that run as printed -----------------------------------------------------------


@pytest.mark.slow(seconds=35)
@pytest.mark.lsl
def test_session_commands_of_the_user_guide_run(tmp_path, monkeypatch, capsys):
    """The session block of sessions.rst, line by line, with fewer trials and own stream names.

    The appended options only shorten the run (trials, speed) and keep its LSL streams apart
    from others on the machine; every option of the printed lines is used as printed.
    """
    import uuid

    from paradigms.cli import main

    block = next(b for b in rst_blocks(DOCS / "user_guide" / "sessions.rst", "bash"))
    commands = shell_commands(block)
    assert [c.split()[1] for c in commands] == ["calibrate", "record-universum", "train", "online"]
    tag = uuid.uuid4().hex[:8]
    shorter = [
        *("--set", "paradigm.trials_per_class=5", "--set", "paradigm.universum_trials=5"),
        *("--set", "online.trials_per_class=2", "--set", f"stream.name='docs-eeg-{tag}'"),
        *("--set", f"stream.markers='docs-markers-{tag}'", "--speed", "20"),
        *("--sim-channels", "8"),
    ]
    monkeypatch.chdir(tmp_path)
    for command in commands:
        argv = shlex.split(command)[1:]
        extra = ["--folds", "3"] if argv[0] == "train" else shorter
        assert main(argv + extra) == 0, command
    out = capsys.readouterr().out
    assert "hit rate:" in out
    folder = tmp_path / "build-session" / "sub-01_ses-01"
    # the plots of train and online: the CV summary beside the model, the online run's
    # decision values and confusion matrix beside its decisions file
    assert (tmp_path / "build-session" / "model_cv.png").is_file()
    for name in ("decisions", "confusion"):
        (plot,) = folder.glob(f"*_task-online_run-*_{name}.png")
        assert f"{name} plot: {plot.relative_to(tmp_path)}" in out  # the session's own path
    tasks = sorted(p.name.split("_task-")[1].split("_")[0] for p in folder.glob("*_raw.fif"))
    assert tasks == ["calibration", "online", "universum"]
    assert (tmp_path / "build-session" / "model.joblib").is_file()


@pytest.mark.slow(seconds=20)
@pytest.mark.lsl
def test_calibrate_and_train_of_the_command_line_guide_run(tmp_path, monkeypatch, capsys):
    """The "Where commands write" block of command_line.rst as printed, in a home folder of
    its own (``~`` expanded as the shell does).

    The appended options only keep the session's LSL streams apart from others on the machine.
    """
    import uuid

    from paradigms.cli import main

    page = DOCS / "user_guide" / "command_line.rst"
    block = next(b for b in rst_blocks(page, "bash") if "bci_universum_recordings" in b)
    commands = shell_commands(block)
    assert [c.split()[1] for c in commands] == ["calibrate", "train"]
    tag = uuid.uuid4().hex[:8]
    own_streams = ["--set", f"stream.name='docs-eeg-{tag}'"]
    own_streams += ["--set", f"stream.markers='docs-markers-{tag}'"]
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    for command in commands:
        argv = [os.path.expanduser(word) for word in shlex.split(command)[1:]]
        extra = own_streams if argv[0] == "calibrate" else []
        assert main(argv + extra) == 0, capsys.readouterr().err
    assert (tmp_path / "bci_universum_recordings" / "sub-01_ses-01").is_dir()
    assert (tmp_path / "model.joblib").is_file()


def test_bids_tree_of_the_user_guide_is_what_write_bids_writes(tmp_path):
    """The tree of bids_moabb.rst lists every file of a BIDS root holding one calibration run
    (sub-01, ses-01), as write_bids writes it; the recorder's folder is left out."""
    from bci_universum.datasets import write_bids

    page = (DOCS / "user_guide" / "bids_moabb.rst").read_text()
    tree = page.split("into the BIDS dataset rooted at")[1].split("BIDS EEG does not take FIF")[0]
    entries = re.findall(r"── (\S+)", tree)
    listed = {e for e in entries if not e.endswith("/") and e != "..."}  # "... other runs"
    session = ROOT / "recordings" / "sub-01_ses-01"
    recording = session / "sub-01_ses-01_task-calibration_run-01_raw.fif"
    write_bids(recording, tmp_path, subject="01", session="01", task="calibration", run=1)
    written = {p.name for p in tmp_path.rglob("*") if p.is_file()}
    assert listed == written


@pytest.mark.slow
@pytest.mark.lsl
def test_bids_commands_of_the_user_guide_run(tmp_path, monkeypatch, capsys):
    """The BIDS root commands of bids_moabb.rst run as printed on the root its first Python
    block writes, whose two runs are two different recordings (one recording written as both
    runs put the same trials in training and test folds of the MOABB example).

    The appended options only shorten the run (folds; replay speed, no consumer to wait for)
    and keep the replayed streams apart from others on the machine.
    """
    import uuid

    from bci_universum.datasets import bids_recordings, read_recording
    from paradigms.cli import main

    page = DOCS / "user_guide" / "bids_moabb.rst"
    monkeypatch.chdir(tmp_path)
    exec(compile(rst_blocks(page, "python")[0], f"{page.name} block 0", "exec"), {})
    first, second = (read_recording(f).get_data() for f in bids_recordings("bids"))
    assert first.shape != second.shape or not np.allclose(first, second)
    commands = [c for b in rst_blocks(page, "bash") for c in shell_commands(b) if " bids " in c]
    assert [c.split()[1] for c in commands] == ["train", "stream"]
    capsys.readouterr()
    for command in commands:
        argv = shlex.split(command)[1:]
        extra = ["--folds", "3"] if argv[0] == "train" else ["--speed", "1000"]
        if argv[0] == "stream":
            extra += ["--wait-for", "none", "--name", f"docs-replay-{uuid.uuid4().hex[:8]}"]
        assert main(argv + extra) == 0, command
    out = capsys.readouterr().out
    assert "Trials: left 20, right 20; universum: rest 20" in out
    assert "Replaying bids/sub-01/ses-01/eeg/sub-01_ses-01_task-imagery_run-02_eeg.vhdr" in out
    assert (tmp_path / "model.joblib").is_file()


def test_every_dependency_is_justified():
    """docs/dependencies.rst names every dependency and extra of pyproject.toml."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        requirements += extra
    page = (DOCS / "dependencies.rst").read_text()
    for requirement in requirements:
        name = re.match(r"[A-Za-z0-9_.\-]+(\[[a-z,]+\])?", requirement).group(0)
        if name.startswith(f"{project['name']}["):
            continue  # an extra of this project: its packages have their own lines
        assert name in page, f"{name} ({requirement}) is not justified in docs/dependencies.rst"


def test_dependencies_page_names_the_extras_that_ask_for_each_package():
    """The extras table of docs/dependencies.rst names, for each package, exactly the extras of
    pyproject.toml that list it (an extra pulled in through another, such as ``test`` taking
    ``docs``, is not named)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    table = (DOCS / "dependencies.rst").read_text().split("\nExtras\n")[1]
    rows = re.findall(r"^   \* - (.+)\n     - (.+)\n", table, flags=re.MULTILINE)
    assert len(rows) > 10
    for packages, named in rows[1:]:  # the first row is the header
        for package in packages.split(", "):
            asking = {
                extra
                for extra, requirements in extras.items()
                if any(re.match(rf"{re.escape(package)}(?![\w\-\[])", r) for r in requirements)
            }
            assert set(named.split(", ")) == asking, f"{package}: page says {named}"


def test_pipelines_page_states_the_band_and_window_train_uses():
    """``train`` without a session file uses the built-in session's [pipeline] band and
    window, not the registry's defaults: the page says which, with the values in force."""
    from paradigms.config import SessionConfig

    text = " ".join((DOCS / "user_guide" / "pipelines.rst").read_text().split())
    numbers = r"\*\*([\d.]+)–([\d.]+) Hz and ([\d.]+)–([\d.]+) s\*\*"
    stated = re.search(r"else the built-in session defaults, " + numbers, text)
    assert stated is not None
    pipeline = SessionConfig().pipeline
    assert [float(v) for v in stated.groups()] == [*pipeline.band, *pipeline.window]


def test_readme_tour_links_a_guide_for_every_topic_it_names():
    """Each row of the README's tour links a guide page that covers the acronyms it names
    (BIDS, MOABB, LSL, OCR): a reader who wants to run a MOABB evaluation lands on the page
    about it."""
    rows = [line for line in README.read_text().splitlines() if line.startswith("| ")]
    tour = rows[1 : rows.index(next(r for r in rows if r.startswith("| pipeline |")))]
    assert len(tour) >= 8
    for row in tour:
        want = row.split(" | ")[0]
        guides = [ROOT / link for link in re.findall(r"\]\((docs/[^)]+\.rst)\)", row)]
        text = " ".join(guide.read_text() for guide in guides)
        for acronym in re.findall(r"\b[A-Z]{3,}\b", want):
            assert acronym in text, f"no guide of the README row {want!r} mentions {acronym}"


def test_readme_is_short_and_its_pictures_exist():
    """The README stays a front page (≤ 200 lines) and shows the feedback screen, every other
    screen and an evaluation plot, all files in the checkout."""
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    pictures = re.findall(r'<img src="([^"]+)"', text) + re.findall(r"!\[[^]]*\]\(([^)]+)\)", text)
    assert all((ROOT / p).is_file() for p in pictures), pictures
    names = {Path(p).stem for p in pictures}
    screens = {"feedback-left", "fixation", "cue-left", "result-hit", "result-miss", "pause",
               "break", "start", "end"}  # fmt: skip
    assert {f"screen-{s}" for s in screens} <= names
    assert any(n.startswith("evaluation-") for n in names)
