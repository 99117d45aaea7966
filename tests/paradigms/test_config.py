import pytest

from paradigms.config import SessionConfig, load_session_config


def test_defaults_give_the_thesis_timeline():
    cfg = load_session_config(None)
    assert cfg.class_markers == ("cue/left", "cue/right")
    assert cfg.universum_markers == ("universum/rest",)
    tl = cfg.timeline_object()
    assert [p.onset for p in tl.phases] == [0.0, 2.0, 3.0, 3.5]
    assert tl.duration == 9.0
    assert cfg.timeline_object(feedback=True).phases[-1].screen == "feedback"


def test_file_overrides(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(
        '[session]\nsubject = "07"\n[paradigm]\nclasses = ["left", "right", "feet"]\n'
        "trials_per_class = 5\nspeed = 4\n[timeline]\nend = 8\npause = [1, 1]\n"
    )
    cfg = load_session_config(f)
    assert cfg.session.subject == "07"
    assert cfg.paradigm.classes == ["left", "right", "feet"]
    assert cfg.paradigm.speed == 4.0 and isinstance(cfg.paradigm.speed, float)
    assert cfg.timeline_object().duration == 8.0
    assert cfg.timeline_object().pause == (1, 1)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("[paradigm]\nclases = []\n", r"bad\.toml: Unknown key\(s\) \['clases'\] in \[paradigm\]"),
        ("[nonsense]\na = 1\n", "Unknown section"),
        (
            '[paradigm]\ntrials_per_class = "ten"\n',
            r"bad\.toml: \[paradigm\] trials_per_class must be int, got 'ten'",
        ),
        ("[paradigm]\nclasses = []\n", "classes must be distinct"),
        ('[paradigm]\nclasses = ["a", "a"]\n', "classes must be distinct"),
        ("[paradigm]\nspeed = 0\n", "speed must be positive"),
        ('[session]\nlsl_mode = "wan"\n', "lsl_mode"),
        ("[pipeline]\nband = [30, 8]\n", r"\[pipeline\] band"),
        ("[pipeline]\nwindow = [0.5]\n", r"\[pipeline\] window must be \[low, high\]"),
        ("[timeline]\ncue = 10\n", r"\[timeline\] cue \(10\.0 s\) must start before .*end = 9\.0"),
        ("[timeline]\ncue = 1\n", r"\[timeline\] cue \(1\.0 s\) starts before fixation"),
        ("[timeline]\ncue_duration = 6\n", r"\[timeline\] cue \+ cue_duration \(9\.0 s\)"),
        ("[timeline]\nfixation = -1\n", r"\[timeline\] fixation must be ≥ 0"),
        ("[paradigm\n", "not valid TOML"),
        ("[paradigm]\ntrials_per_class = 0\n", r"\[paradigm\] trials_per_class must be ≥ 1"),
        (
            '[paradigm]\nuniversum = ["rest", "words", "math"]\n',
            r"\[paradigm\] universum_trials must be ≥ 0 and a multiple of the 3 universum",
        ),
        ("[online]\ntrials_per_class = 0\n", r"\[online\] trials_per_class must be ≥ 1"),
        ("[online]\nwindow = nan\n", r"\[online\] window must be ≥ 0 s .*got nan"),
        ("[online]\nwindow = inf\n", r"\[online\] window must be ≥ 0 s .*got inf"),
        ("[online]\nupdate_rate = 0\n", r"\[online\] update_rate must be positive"),
        ("[online]\nsmoothing = 1\n", r"\[online\] smoothing must lie in \[0, 1\)"),
        ("[online]\nsmoothing = nan\n", r"\[online\] smoothing must lie in \[0, 1\)"),
        ('[stream]\nname = ""\n', r"\[stream\] name is empty and no \[stream\] source_id"),
        ("[stream]\nsource_id = 2\n", r"\[stream\] source_id must be str, got 2"),
    ],
)
def test_bad_files(tmp_path, text, match):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(ValueError, match=match):
        load_session_config(f)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_session_config(tmp_path / "nope.toml")
    # no file, an empty file and the dataclass's own defaults are one configuration
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    assert load_session_config(None) == SessionConfig() == load_session_config(empty)
    assert SessionConfig() != load_session_config(None, ["paradigm.speed=4"])


def test_a_source_id_without_a_name_matches_any_name(tmp_path):
    """A source_id set alone (file, --set or option) leaves the name empty: any name; with a
    name from any of them, the stream must match both."""
    assert load_session_config(None).stream.source_id == ""
    alone = load_session_config(None, [], [("--source-id amp", "stream.source_id='amp'")])
    assert (alone.stream.name, alone.stream.source_id) == ("", "amp")
    path = tmp_path / "session.toml"
    path.write_text('[stream]\nname = "eeg"\n')
    both = load_session_config(path, ["stream.source_id=amp"])
    assert (both.stream.name, both.stream.source_id) == ("eeg", "amp")
    typed = [("--stream x", "stream.name='x'"), ("--source-id amp", "stream.source_id='amp'")]
    assert load_session_config(None, [], typed).stream.name == "x"


def test_pipeline_names_are_checked_against_the_registry(tmp_path):
    path = tmp_path / "session.toml"
    path.write_text('[pipeline]\nname = "csp_lda"\n')
    assert load_session_config(path).pipeline.name == "csp_lda"
    path.write_text('[pipeline]\nname = "tangent-usvm"\n')
    with pytest.raises(ValueError, match=r"\[pipeline\]: .*now called 'ts_usvm'"):
        load_session_config(path)


def test_output_must_be_a_folder(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a folder")
    for output, where in ((notes, "is a file"), (notes / "sub", f"lies inside the file {notes}")):
        with pytest.raises(ValueError, match=rf"\[session\] output: \S+ {where}, not a folder"):
            load_session_config(None, [f"session.output={str(output)!r}"])
    assert load_session_config(None, [f"session.output={str(tmp_path / 'new')!r}"])


@pytest.mark.parametrize(
    ("settings", "mode", "match"),
    [
        (
            [],
            "rest_block",
            r"\[online\] rest_trials rest trials, which is 0.*online\.rest_trials=",
        ),
        (["paradigm.universum_trials=0"], "separate", r"\[paradigm\] universum_trials trials"),
        (["paradigm.universum_trials=0"], "interleaved", r"\[paradigm\] universum_trials"),
        (["paradigm.universum=[]"], None, r"universum_trials trials of \[paradigm\] universum"),
        ([], "sometimes", "Unknown universum mode 'sometimes'"),
    ],
)
def test_universum_runs_without_trials_name_the_setting(settings, mode, match):
    with pytest.raises(ValueError, match=match):
        load_session_config(None, settings).universum_groups(mode)


def test_universum_groups():
    config = load_session_config(None, ["online.rest_trials=4", "paradigm.trials_per_class=3"])
    rest, cue = ("universum/rest",), ("cue/left", "cue/right")
    assert config.universum_groups() == [(rest, 20)]
    assert config.universum_groups("interleaved") == [(cue, 6), (rest, 20)]
    assert config.universum_groups("rest_block") == [(rest, 4)]
