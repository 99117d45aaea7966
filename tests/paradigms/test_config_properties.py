"""Property-based tests of the session and evaluation files' validation (hypothesis).

Whatever tables and values a file holds, loading gives a config whose values are the file's, or
a ValueError that names the file and the section at fault.
"""

import json
import re
import tempfile
from dataclasses import fields
from pathlib import Path

from hypothesis import event, given, settings
from hypothesis import strategies as st

from paradigms.config import SessionConfig, load_session_config
from paradigms.evaluation_config import load_evaluation_config

SETTINGS = settings(max_examples=60, deadline=None)
SECTIONS = {f.name: f.default_factory() for f in fields(SessionConfig)}

scalars = st.one_of(
    st.booleans(),
    st.integers(-5, 30),
    st.floats(-5.0, 30.0, allow_nan=False),
    st.text(alphabet="abcxyz/._-", max_size=6),
)
values = st.one_of(scalars, st.lists(scalars, max_size=3))


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    return "[" + ", ".join(_toml(v) for v in value) + "]"


def _write(tables: dict) -> str:
    return "".join(
        f"[{name}]\n" + "".join(f"{key} = {_toml(v)}\n" for key, v in table.items())
        for name, table in tables.items()
    )


@st.composite
def session_tables(draw):
    """Mostly known sections and keys, sometimes misspelt ones, with values of any type."""
    names = draw(st.lists(st.sampled_from([*SECTIONS, "paradigms"]), unique=True, max_size=3))
    tables = {}
    for name in names:
        known = [f.name for f in fields(SECTIONS[name])] if name in SECTIONS else ["x"]
        keys = draw(st.lists(st.sampled_from([*known, "typo"]), unique=True, max_size=3))
        defaults = SECTIONS.get(name)
        tables[name] = {
            key: draw(st.one_of(_like(getattr(defaults, key, None)), values)) for key in keys
        }
    return tables


def _like(default):
    """Values of the default's type, often valid."""
    if isinstance(default, bool):
        return st.booleans()
    if isinstance(default, int):
        return st.integers(0, 30)
    if isinstance(default, float):
        return st.floats(0.1, 30.0)
    return st.just(default) if default is not None else values


def _same(given_value, loaded) -> bool:
    if isinstance(given_value, list):
        return list(loaded) == given_value
    return loaded == given_value and (
        type(loaded) is type(given_value) or isinstance(loaded, float)
    )


@SETTINGS
@given(tables=session_tables())
def test_session_file_loads_as_written_or_names_file_and_section(tables):
    with tempfile.TemporaryDirectory() as folder:
        fname = Path(folder) / "session.toml"
        fname.write_text(_write(tables))
        try:
            config = load_session_config(fname)
        except ValueError as err:
            message = str(err)
            assert message.startswith(f"{fname}: ")
            unknown = re.search(r"Unknown section\(s\) \['(\w+)'", message)
            named = {unknown.group(1)} if unknown else set(re.findall(r"\[(\w+)\]", message))
            assert named & set(tables), message
            event("refused")
            return
    event("loaded")
    for name, table in tables.items():
        for key, value in table.items():
            if (name, key) == ("session", "output"):
                # the folder sessions are written to: ``~`` expanded, spelt as pathlib does
                value = str(Path(value).expanduser())
            assert _same(value, getattr(getattr(config, name), key)), (name, key)


@SETTINGS
@given(
    evaluation=st.fixed_dictionaries(
        {},
        optional={
            "n_jobs": st.one_of(st.integers(1, 4), values),
            "seed": st.one_of(st.integers(0, 9), values),
            "backend": st.one_of(st.sampled_from(["serial", "joblib"]), values),
            "typo": values,
        },
    ),
    protocol=st.fixed_dictionaries(
        {"name": st.sampled_from(["within-session", "learning-curve", "cross-run", "x"])},
        optional={
            "n_splits": st.one_of(st.integers(2, 10), values),
            "inner_splits": st.one_of(st.integers(2, 10), values),
            "n_repeats": st.one_of(st.integers(1, 5), values),
        },
    ),
)
def test_evaluation_file_loads_or_names_file_and_section(evaluation, protocol):
    with tempfile.TemporaryDirectory() as folder:
        fname = Path(folder) / "evaluation.toml"
        text = _write({"evaluation": evaluation}) if evaluation else ""
        text += "[[datasets]]\nkind = 'recording'\npath = '.'\nfiles = ['*.fif']\n"
        text += "[pipelines.csp_lda]\n[[protocol]]\n"
        text += "".join(f"{key} = {_toml(v)}\n" for key, v in protocol.items())
        fname.write_text(text)
        try:
            config = load_evaluation_config(fname)
        except ValueError as err:
            message = str(err)
            assert message.startswith(f"{fname}: ")
            assert "[evaluation]" in message or "[[protocol]]" in message, message
            event("refused")
            return
    event("loaded")
    assert config.seed == evaluation.get("seed", 0) and config.n_jobs == evaluation.get(
        "n_jobs", 1
    )
    assert config.protocols[0].name == protocol["name"]
