"""The README's self-contained example runs as printed."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_universum_svm_example_runs(capsys):
    section = README.read_text().split("## Universum SVMs", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("[0 1]")
    assert float(printed[0].split()[-1]) > 0.9
