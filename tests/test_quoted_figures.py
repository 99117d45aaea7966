"""Figures the README and the user guide quote from ``benchmarks/results/``: each is the one
of its committed results file, to the digits quoted, so that a rerun of a benchmark (or an edit
of the docs) that leaves the other behind fails here."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
BENCHMARKS = "docs/user_guide/benchmarks.rst"
SESSIONS = "docs/user_guide/sessions.rst"
NUMBER = r"(\d+(?:\.\d+)?)"
SCORE = r"(\d\.\d+ ± \d\.\d+)"  # mean ± SD, compared as printed


def _row(first_cells: str, column: int, pattern: str = NUMBER) -> str:
    """The cell ``column`` (0 = first) of the table row starting with ``first_cells``."""
    before = r"[^|]*\|" * (column - first_cells.count("|") - 1)
    return rf"\| {re.escape(first_cells)} \|{before} {pattern}"


# the model without a prior: the row before the prior's (the first table's rows hold ts_usvm too)
NO_PRIOR = r"\| ts_usvm \| {} \| {} \| \| ts_usvm \+ prior"

# (page, pattern with one group in the page, results file, pattern with one group in it)
QUOTED = [
    # features.md
    ("README.md", rf"{NUMBER}× and [\d.]+× faster", "features.md", _row("CSP fit, 200 trials", 3)),
    (
        "README.md",
        rf"[\d.]+× and {NUMBER}× faster",
        "features.md",
        _row("tangent space, 1 trial (lean path)", 3),
    ),
    (BENCHMARKS, rf"CSP fit {NUMBER} ms vs MNE", "features.md", _row("CSP fit, 200 trials", 1)),
    (BENCHMARKS, rf"vs MNE {NUMBER} ms \(", "features.md", _row("CSP fit, 200 trials", 2)),
    (BENCHMARKS, rf"\({NUMBER}× faster; both", "features.md", _row("CSP fit, 200 trials", 3)),
    (
        BENCHMARKS,
        rf"\({NUMBER}× faster, max difference",
        "features.md",
        _row("tangent space, 1 trial (lean path)", 3),
    ),
    (BENCHMARKS, rf"``csp_lda`` {SCORE}, with", "features.md", _row("csp_lda", 1, SCORE)),
    # "fold scores identical to MNE's": the peer's row says the same
    (
        BENCHMARKS,
        rf"``csp_lda`` {SCORE}, with fold scores identical",
        "features.md",
        _row("CSP(4)+LDA (MNE)", 1, SCORE),
    ),
    (BENCHMARKS, rf"``ts_lr`` {SCORE}", "features.md", _row("ts_lr", 1, SCORE)),
    (
        BENCHMARKS,
        rf"``C_universum=0`` {SCORE}",
        "features.md",
        _row("ts_usvm (C_universum=0)", 1, SCORE),
    ),
    # online.md: the tangent-space decoder's paced wall-clock p99
    (
        "README.md",
        rf"{NUMBER} ms paced",
        "online.md",
        _row("filter + ts_usvm | lean path, paced at 15.6 Hz", 3),
    ),
    # universum_fit.md: csp_ulda against the same selection without universum (medians)
    (
        BENCHMARKS,
        rf"``csp_ulda`` takes {NUMBER}–",
        "universum_fit.md",
        _row("assaf | csp_ulda + U_C3 | csp_ulda + same selection, no universum", 6),
    ),
    (
        BENCHMARKS,
        rf"``csp_ulda`` takes [\d.]+–{NUMBER}× \(median\)",
        "universum_fit.md",
        _row("S001 | csp_ulda + U_C3 | csp_ulda + same selection, no universum", 6),
    ),
    # training.md: the decoder's update time with and without a prior model (p50, p99)
    (
        SESSIONS,
        rf"{NUMBER} vs [\d.]+ ms per update",
        "training.md",
        _row("ts_usvm + prior (BiasedSVC)", 1),
    ),
    (
        SESSIONS,
        rf"[\d.]+ vs {NUMBER} ms per update",
        "training.md",
        NO_PRIOR.format(NUMBER, r"[\d.]+"),
    ),
    (
        SESSIONS,
        rf"{NUMBER} vs [\d.]+ ms at p99",
        "training.md",
        _row("ts_usvm + prior (BiasedSVC)", 2),
    ),
    (
        SESSIONS,
        rf"[\d.]+ vs {NUMBER} ms at p99",
        "training.md",
        NO_PRIOR.format(r"[\d.]+", NUMBER),
    ),
    # solver_scaling.md: the machine the run had
    (
        BENCHMARKS,
        r"wall-clock seconds in one run on 2 cores (shared with other jobs)",
        "solver_scaling.md",
        r"2 cores (shared with other jobs)",
    ),
]


def _find(pattern: str, path: Path) -> str:
    text = " ".join(path.read_text(encoding="utf-8").split())  # the docs wrap their lines
    match = re.search(pattern, text)
    assert match, f"{pattern!r} not found in {path.relative_to(ROOT)}"
    return match.group(1)


@pytest.mark.parametrize(
    ("page", "quoted", "results", "measured"), QUOTED, ids=[f"{q[0]}: {q[1]}" for q in QUOTED]
)
def test_quoted_figure_is_the_results_files(page, quoted, results, measured):
    in_docs = _find(quoted, ROOT / page)
    in_results = _find(measured, RESULTS / results)
    if re.fullmatch(NUMBER, in_docs):  # a number: the results file's, rounded as quoted
        digits = len(in_docs.partition(".")[2])
        assert f"{float(in_results):.{digits}f}" == in_docs, (in_docs, in_results)
    else:
        assert in_docs == in_results


CLASSIFIERS = ROOT / "docs" / "user_guide" / "classifiers.rst"


def _transfer_rows(section: str) -> dict[int, list[str]]:
    """The accuracy rows of ``biased_transfer.md``'s ``section``, rounded as the guide prints."""
    text = (RESULTS / "biased_transfer.md").read_text().split(section, 1)[1]
    rows = {}
    for line in text.splitlines():
        first = re.match(r"\| (\d+) \| \d\.\d+ ± ", line)
        if first and int(first[1]) in rows:
            break  # the fit-time table's rows follow
        if first:
            cells = re.findall(r"(\d\.\d+) ± (\d\.\d+)", line)
            rows[int(first[1])] = [f"{float(m):.2f} ± {float(s):.2f}" for m, s in cells]
    return rows


@pytest.mark.parametrize(
    ("label", "section"), [("tangent space", "## Tangent space"), ("CSP (4)", "## CSP")]
)
def test_the_biased_transfer_table_is_the_results_file(label, section):
    """classifiers.rst's study table: every cell is its results file's, to two decimals."""
    rows = _transfer_rows(section)
    quoted = re.findall(rf"^{re.escape(label)} +(\d+) +(.+)$", CLASSIFIERS.read_text(), re.M)
    assert len(quoted) == 3
    for n, cells in quoted:
        assert re.findall(r"\d\.\d\d ± \d\.\d\d", cells) == rows[int(n)], n


def test_the_mutation_budget_is_the_reports():
    """testing.rst's size and cost of the whole mutation set, against the report's shard table."""
    report = (RESULTS / "mutation.md").read_text(encoding="utf-8")
    table = report[report.index("| shard |") :].split("\n\n")[0].splitlines()[2:]
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in table]
    mutants = [int(row[2]) for row in cells]
    hours = sum(n * float(row[10]) for n, row in zip(mutants, cells, strict=True)) / 3600
    page = ROOT / "docs" / "user_guide" / "testing.rst"
    quoted = float(_find(r"The full set is about ([\d,]+) mutants", page).replace(",", ""))
    assert abs(quoted - sum(mutants)) <= 0.1 * sum(mutants), (quoted, sum(mutants))
    assert int(_find(r"mutants in (\d+) shards", page)) == len(cells)
    assert abs(float(_find(r"costs about (\d+) core-hours", page)) - hours) <= 0.2 * hours, hours
