"""``bci-universum demo`` and ``bci-universum digits`` through the real CLI entry point."""

import re

import pytest

from paradigms.cli import main


def _table_rows(text: str, universum: str) -> list[str]:
    section = text.split(f"### Universum {universum}")[1].split("###")[0]
    return [line for line in section.splitlines() if line.startswith("|")]


def test_demo_prints_the_quick_study(capsys):
    assert main(["demo", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## OCR study: digits 5 vs 8")
    for universum in ("U_3", "U_mean"):
        rows = _table_rows(out, universum)
        assert len(rows) == 2 + 2  # header, rule, |L| = 10 and 40
        for row in rows[2:]:
            means = [float(m) for m in re.findall(r"(\d+\.\d\d) ± ", row)]
            assert len(means) == 4  # SVM, U-SVM, LS-SVM, U_ls-SVM
            assert all(0 <= m < 15 for m in means)  # percent; observed ≤ 6 %


def test_digits_command_writes_the_table(tmp_path, capsys):
    output = tmp_path / "ocr.md"
    argv = ["digits", "--quick", "--train-sizes", "10", "--universum-sizes", "20"]
    argv += ["--splits", "2", "--seed", "2", "--output", str(output)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    written = output.read_text(encoding="utf-8")
    assert written.strip() == printed.strip()
    assert "U-SVM \\|U\\|=20" in written
    assert [row.split("|")[1].strip() for row in _table_rows(written, "U_3")[2:]] == ["10"]


def test_digits_command_bad_input(tmp_path, capsys):
    missing = tmp_path / "no" / "such" / "folder" / "ocr.md"
    assert main(["digits", "--quick", "--output", str(missing)]) == 1
    assert "--output: folder" in capsys.readouterr().err
    assert main(["digits", "--quick", "--train-sizes", "11", "--splits", "2"]) == 1
    assert "train_sizes must be even" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["digits", "--splits", "0"])
    assert "expected a positive integer, got 0" in capsys.readouterr().err
