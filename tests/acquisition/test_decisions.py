import ast
from pathlib import Path
from uuid import uuid4

import numpy as np
import pylsl
import pytest

from acquisition.decisions import DecisionOutlet, local_clock
from acquisition.streams import describe_channels, resolve_stream


@pytest.mark.lsl
def test_decisions_reach_an_inlet_with_their_timestamps():
    with DecisionOutlet(f"decisions-{uuid4().hex}") as outlet:
        inlet = pylsl.StreamInlet(resolve_stream(source_id=outlet.source_id), processing_flags=0)
        inlet.open_stream(5.0)
        stamps = local_clock() + np.arange(3) * 0.1
        for k, stamp in enumerate(stamps):
            outlet.push([k, -k / 2], stamp)
        values, got = inlet.pull_chunk(timeout=5.0)
        while len(got) < 3:
            more, more_stamps = inlet.pull_chunk(timeout=5.0)
            values, got = values + more, got + more_stamps
        info = inlet.info(5.0)
        inlet.close_stream()
    np.testing.assert_array_equal(values, [[0, 0], [1, -0.5], [2, -1]])
    np.testing.assert_allclose(got, stamps)
    assert info.type() == "Decisions" and info.nominal_srate() == 0
    assert [c.name for c in describe_channels(info)] == ["value", "smoothed"]
    with pytest.raises(ValueError, match=r"has 2 values \(\['value', 'smoothed'\]\), got 1"):
        DecisionOutlet(f"decisions-{uuid4().hex}").push([1.0], 0.0)
    with pytest.raises(RuntimeError, match="closed"):
        outlet.push([1.0, 2.0], 0.0)


def test_paradigms_never_import_pylsl():
    """Dependencies point paradigms -> acquisition: the LSL library stays below."""
    root = Path(__file__).parents[2] / "paradigms"
    offenders = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            if any(n.split(".")[0] in ("pylsl", "mne_lsl") for n in names):
                offenders.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    assert offenders == []
