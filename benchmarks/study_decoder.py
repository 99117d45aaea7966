"""Decoder study: does a universum pipeline beat pyRiemann's TS + LR on real recordings?

Subjects: eegmmidb S001 (imagined left/right fist, runs 4/8/12, T0 rest as universum), BCI4ALS
Assaf (Test1–9) and Tomer (Test1–8) (left/right imagery, idle as universum). Two-class ROC-AUC
(MOABB's LeftRightImagery score) on paired splits, every model selected by the one training
path (``bci_universum.training.select_and_fit``, the shipped ``DEFAULT_GRID``, inner 5-fold):

* within-session: 10 × 5-fold (repeated stratified k-fold; corrected resampled t-test);
* leave-one-run-out (paired Wilcoxon across runs);
* learning curve: 5, 10, 20, 40 labelled trials per class (S001: 5, 10, 15), 20 random test
  sets (paired Wilcoxon across draws).

The pipeline declared before the study as the project's best universum pipeline is
``ts_ulr + U_C3`` (tangent space + universum-indifferent logistic regression, recorded
universum); the others are reported beside it. Rest re-centring (``rc+``: each run whitened by
its rest trials' Riemannian mean; ``rca+``: causally, by the running mean of the rest trials
recorded so far in the run, as the online decoder's ``adapt_to_rest`` does) is evaluated
leave-one-run-out, where runs differ.

Online replay (``--protocols replay``, its own page ``decoder_study_replay.md``): leave one
run out, the model trained on the other runs (their rest trials as universum), then the
held-out run's continuous signal pushed through the online decoder chunk by chunk
(``bci_universum.online.replay``); with ``ats_ulr`` adaptive, each rest window of the run
joins the classifier's universum (refit) as soon as it ends. Compared with the same model
without adaptation and with ``ts_lr`` replayed the same way.

Every job is cached (one JSON file per job in ``--cache-dir``), so the study resumes where it
stopped and can be sharded by ``--subjects`` / ``--protocols`` across processes or machines
sharing the cache; the report covers every finished (subject, protocol) in the cache, and
``--report`` rebuilds it without fitting anything::

    python benchmarks/study_decoder.py                       # everything
    python benchmarks/study_decoder.py --subjects tomer --protocols loro
    python benchmarks/study_decoder.py --report              # tables from what is cached
    python benchmarks/study_decoder.py --protocols replay    # the online replay only

The committed ``results/decoder_study.csv`` is the durable record (the cache is not): with
``--merge`` the report starts from its rows and every (subject, protocol, pipeline, universum)
cell found in the cache replaces that cell's rows, so a few stale cells can be rerun alone
(``--pipelines`` restricts the plan) and merged in::

    python benchmarks/study_decoder.py --subjects tomer --protocols within --pipelines ts_ulr \
        --merge benchmarks/results/decoder_study.csv
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from report import write_results
from scipy.stats import wilcoxon
from sklearn.metrics import roc_auc_score

from bci_universum import UNIVERSUM_STR
from bci_universum.datasets import (
    epochs_from_raw,
    load_bci4als,
    load_eegmmidb,
    read_bci4als_run,
    read_eegmmidb_run,
    resolve_markers,
)
from bci_universum.evaluation import (
    CrossGroup,
    LearningCurve,
    WithinSession,
    evaluate,
    read_csv,
    write_csv,
)
from bci_universum.features import recentre_runs
from bci_universum.model_selection import UniversumStratifiedKFold, corrected_paired_ttest
from bci_universum.online import OnlineDecoder, filter_raw, replay
from bci_universum.pipelines import make_pipeline, pipeline_factory
from bci_universum.training import DEFAULT_GRID, resolve_grid, select_and_fit

RESULTS = Path(__file__).parent / "results"
SUBJECTS = ("S001", "assaf", "tomer")
PROTOCOLS = ("loro", "within", "curve")
BAND = (7.0, 30.0)
WINDOW = {"S001": (1.0, 2.0), "assaf": (0.4, 4.4), "tomer": (0.4, 4.4)}
PEER = ("ts_lr", "none")
PRIMARY = ("ts_ulr", "U_C3")
# (pipeline, universa): peers without universum, universum pipelines with and without it (the
# latter gives the universum's own effect and the per-fold time without universum).
PLAN = {
    "within": [("ts_lr", ["none"]), ("csp_lda", ["none"]), ("ts_ulr", ["none", "U_C3"]),
               ("csp_ulda", ["U_C3"])],
    "loro": [("ts_lr", ["none"]), ("csp_lda", ["none"]), ("ts_ulr", ["none", "U_C3"]),
             ("rc+ts_lr", ["none"]), ("rc+ts_ulr", ["U_C3"]), ("rca+ts_lr", ["none"]),
             ("rca+ts_ulr", ["U_C3"]), ("ts_ulda", ["U_C3"])],
    "curve": [("ts_lr", ["none"]), ("csp_lda", ["none"]), ("ts_ulr", ["none", "U_C3"]),
              ("csp_ulda", ["U_C3"])],
}  # fmt: skip
# Labelled trials per class of the learning curve: 25 % of the trials are held out for testing
# (S001 has 22–23 per class, Assaf 45).
CURVE_SIZES = {"S001": (5, 10, 15), "assaf": (5, 10, 20, 30), "tomer": (5, 10, 20, 40)}
VARIANTS = {"rc": {"causal": False}, "rca": {"causal": True}}


def load(subject: str):
    """Causally band-passed trials of one subject (the online decoder's filter)."""
    if subject == "S001":
        return load_eegmmidb(1, band=BAND, verbose="error")
    return load_bci4als(subject, band=BAND, verbose="error")


def protocol(name: str, subject: str, quick: bool):
    grid = dict(DEFAULT_GRID)
    if name == "within":
        return WithinSession(5, 5, grid, n_repeats=2 if quick else 10)
    if name == "loro":
        return CrossGroup("run", universum_from="both", inner_splits=5, param_grid=grid)
    return LearningCurve(CURVE_SIZES[subject], n_repeats=3 if quick else 20, inner_splits=5,
                         param_grid=grid)  # fmt: skip


def run(subject: str, name: str, cache: Path, quick: bool, pipelines=None,
        command: str = "") -> None:  # fmt: skip
    """Evaluate the plan of protocol ``name`` on ``subject``, in the plan's order.

    After each pipeline, the failed evaluations, with their error, go to ``failed.json``
    (reported, not hidden, and retried by the next run); the finished protocol's rows, tagged
    with the subject, to ``rows.json``. ``pipelines``: only these of the plan; the rows and
    failures of the others already in the folder are kept, and ``runs.json`` records which
    pipelines each ``command`` ran.
    """
    epochs = load(subject)
    folder = cache / subject / name
    folder.mkdir(parents=True, exist_ok=True)
    plan = [(p, u) for p, u in PLAN[name] if pipelines is None or p in pipelines]
    kept, kept_failed = [], []
    if pipelines is not None and (folder / "rows.json").exists():
        kept = [r for r in json.loads((folder / "rows.json").read_text())
                if r["pipeline"] not in pipelines]  # fmt: skip
        failures = folder / "failed.json"
        kept_failed = [f for f in json.loads(failures.read_text())
                       if f["pipeline"] not in pipelines] if failures.exists() else []  # fmt: skip
    recentred: dict[str, object] = {}
    rows, failed = kept, kept_failed
    for pipeline, universa in plan:
        variant, _, base = pipeline.rpartition("+")
        if variant not in recentred:
            recentred[variant] = recentre_runs(epochs, **VARIANTS[variant]) if variant else epochs
        factory = pipeline_factory(base, window=WINDOW[subject], band=BAND)
        try:
            out = evaluate(recentred[variant], {pipeline: factory}, universa,
                           protocol(name, subject, quick), cache_dir=folder,
                           progress=False)  # fmt: skip
        except (ValueError, np.linalg.LinAlgError) as err:
            failed.append({"subject": subject, "protocol": _NAMES[name],
                           "pipeline": pipeline, "universa": universa,
                           "error": f"{type(err).__name__}: {err}"})  # fmt: skip
            print(f"{subject} {name} {pipeline}: failed ({err})", flush=True)
        else:
            rows += [{**r, "subject": subject} for r in out]
        (folder / "failed.json").write_text(json.dumps(failed))
    (folder / "rows.json").write_text(json.dumps(rows))
    log = folder / "runs.json"
    runs = json.loads(log.read_text()) if log.exists() else []
    runs.append({"command": command, "pipelines": [p for p, _ in plan]})
    log.write_text(json.dumps(runs))


def _cell(row: dict) -> tuple:
    return row["subject"], row["protocol"], row["pipeline"], row["universum"]


def merge_rows(base: list[dict], fresh: list[dict]) -> list[dict]:
    """``base`` (the committed CSV's rows) with every (subject, protocol, pipeline, universum)
    cell that ``fresh`` (the cache's rows) holds replaced by ``fresh``'s rows of that cell."""
    replaced = {_cell(r) for r in fresh}
    return [r for r in base if _cell(r) not in replaced] + fresh


def _reruns(cache: Path, fresh: list[dict]) -> list[str]:
    """Markdown lines: the cells whose rows come from the cache, with the command that ran them."""
    lines = []
    for path in sorted(cache.glob("*/*/runs.json")):
        subject, proto = path.parent.parent.name, _NAMES[path.parent.name]
        for run_ in json.loads(path.read_text()):
            cells = sorted({_cell(r)[2:] for r in fresh if _cell(r)[:2] == (subject, proto)
                            and r["pipeline"] in run_["pipelines"]})  # fmt: skip
            if cells:
                lines.append(f"- {subject} {proto}: {', '.join(' + '.join(c) for c in cells)} "
                             f"(`{run_['command']}`)")  # fmt: skip
    return lines


def _cached_rows(folder: Path) -> list[dict]:
    """Rows of one (subject, protocol) folder: ``rows.json`` once the protocol finished, else
    the plan's jobs cached so far (a protocol still running, or stopped, shows what it has)."""
    if (folder / "rows.json").exists():
        return json.loads((folder / "rows.json").read_text())
    plan = {(p, u) for p, universa in PLAN[folder.name] for u in universa}
    jobs = [json.loads(f.read_text()) for f in sorted(folder.glob("*.json"))]
    return [{**r, "subject": folder.parent.name} for job in jobs if "key" in job
            for r in job["rows"] if (r["pipeline"], r["universum"]) in plan]  # fmt: skip


BASELINE = ("ts_ulr", "none")
# The comparisons declared before any within-session or learning-curve result was seen (their
# number sets the Bonferroni threshold); every other comparison is exploratory.
DECLARED = (PEER, BASELINE)
MOONSHOT = (10, 20)  # "10 labelled trials per class + rest ≈ 20 per class", in AUC
MARGIN = 0.02  # "≈": non-inferior by at most this much ROC-AUC (one-sided Wilcoxon)
# Per-fold time of each universum fit against the plain fit it replaces.
TIME_PAIRS = {("ts_ulr", "U_C3"): ("ts_ulr", "none"), ("csp_ulda", "U_C3"): ("csp_lda", "none"),
              ("ts_ulda", "U_C3"): ("ts_lr", "none"), ("rc+ts_ulr", "U_C3"): ("rc+ts_lr", "none"),
              ("rca+ts_ulr", "U_C3"): ("rca+ts_lr", "none")}  # fmt: skip
# Pre-declared tests: the primary against both references per subject within-session,
# leave-one-run-out and per learning-curve size, and the moonshot where both sizes exist.
N_DECLARED = len(DECLARED) * (
    2 * len(SUBJECTS)
    + sum(len(CURVE_SIZES[s]) for s in SUBJECTS)
    + sum(set(MOONSHOT) <= set(CURVE_SIZES[s]) for s in SUBJECTS)
)
_NAMES = {"within": "within-session", "loro": "cross-run", "curve": "learning-curve"}


def _cells(rows: list[dict], metric: str = "roc_auc") -> dict:
    """(subject, protocol, labelled trials per class or None, pipeline, universum) → rows by
    (session, split)."""
    cells: dict = defaultdict(dict)
    for r in rows:
        if r["metric"] == metric:
            level = r["n_train"] // 2 if r["protocol"] == "learning-curve" else None
            cells[(r["subject"], r["protocol"], level, r["pipeline"], r["universum"])][
                (r["session"], r["split"])
            ] = r
    return cells


def _pairs(a: dict, b: dict) -> tuple[np.ndarray, np.ndarray]:
    keys = sorted(set(a) & set(b))
    return np.array([a[k]["score"] for k in keys]), np.array([b[k]["score"] for k in keys])


def _wilcoxon(d: np.ndarray, alternative: str = "two-sided") -> float:
    return float(wilcoxon(d, alternative=alternative).pvalue) if np.any(d != 0) else 1.0


def paired_tests(rows: list[dict]) -> list[dict]:
    """Every (pipeline, universum) against the peer and against the primary's baseline.

    Within-session: corrected resampled t-test (overlapping folds); leave-one-run-out and the
    learning curve: paired Wilcoxon across runs / draws. ``declared`` marks the comparisons
    of the primary pipeline against :data:`DECLARED`.
    """
    cells = _cells(rows)
    out = []
    for (subject, proto, level, *model), scored in sorted(cells.items(), key=str):
        for ref in DECLARED:
            base = cells.get((subject, proto, level, *ref))
            if tuple(model) == ref or not base or (ref == BASELINE and tuple(model) != PRIMARY):
                continue
            a, b = _pairs(scored, base)
            if a.size < 2:
                continue
            if proto == "within-session":
                some = next(iter(scored.values()))
                p = corrected_paired_ttest(a, b, some["n_train"], some["n_test"]).pvalue
            else:
                p = _wilcoxon(a - b)
            out.append({"subject": subject, "protocol": proto, "per_class": level,
                        "model": tuple(model), "reference": ref, "n_pairs": a.size,
                        "mean_difference": float((a - b).mean()), "p": float(p),
                        "declared": tuple(model) == PRIMARY})  # fmt: skip
    return out


def moonshot_tests(rows: list[dict]) -> list[dict]:
    """The primary with 10 labelled trials per class + rest against the references with 20.

    Same test draws; mean difference and one-sided Wilcoxon for non-inferiority (Δ > −MARGIN).
    """
    cells = _cells(rows)
    few, many = MOONSHOT
    out = []
    for subject in SUBJECTS:
        ours = cells.get((subject, "learning-curve", few, *PRIMARY))
        for ref in DECLARED:
            base = cells.get((subject, "learning-curve", many, *ref))
            if not ours or not base:
                continue
            a, b = _pairs(ours, base)
            out.append({"subject": subject, "reference": ref, "n_pairs": a.size,
                        "mean_difference": float((a - b).mean()),
                        "p_noninferior": _wilcoxon(a - b + MARGIN, "greater")})  # fmt: skip
    return out


def _mean_table(rows: list[dict], proto: str) -> list[str]:
    scores: dict = defaultdict(list)
    for r in rows:
        if r["metric"] == "roc_auc" and r["protocol"] == proto:
            scores[(r["pipeline"], r["universum"], r["subject"])].append(r["score"])
    subjects = [s for s in SUBJECTS if any(k[2] == s for k in scores)]
    models = sorted({k[:2] for k in scores}, key=lambda m: (m != PEER, m != PRIMARY, m))
    lines = [f"| pipeline | universum | {' | '.join(subjects)} | mean |",
             "|---|---|" + "---|" * (len(subjects) + 1)]  # fmt: skip
    for m in models:
        means = [np.mean(scores[(*m, s)]) if scores.get((*m, s)) else np.nan for s in subjects]
        cells = " | ".join("–" if np.isnan(v) else f"{v:.3f}" for v in means)
        lines.append(f"| {m[0]} | {m[1]} | {cells} | {np.nanmean(means):.3f} |")
    return lines


def _curve_table(rows: list[dict]) -> list[str]:
    """Mean ROC-AUC and accuracy per subject, pipeline and labelled trials per class."""
    cells = _cells(rows)
    acc = _cells(rows, "accuracy")
    levels = sorted({k[2] for k in cells if k[1] == "learning-curve"})
    lines = ["| subject | pipeline | universum | " + " | ".join(f"{n}/class" for n in levels)
             + " |", "|---|---|---|" + "---|" * len(levels)]  # fmt: skip
    models = sorted(
        {(k[0], *k[3:]) for k in cells if k[1] == "learning-curve"},
        key=lambda m: (SUBJECTS.index(m[0]), m[1:] != PEER, m[1:] != PRIMARY, m),
    )
    for subject, *model in models:
        row = []
        for n in levels:
            key = (subject, "learning-curve", n, *model)
            if key not in cells:
                row.append("–")
                continue
            auc = np.mean([r["score"] for r in cells[key].values()])
            accuracy = np.mean([r["score"] for r in acc[key].values()])
            row.append(f"{auc:.3f} ({100 * accuracy:.0f} %)")
        lines.append(f"| {subject} | {model[0]} | {model[1]} | {' | '.join(row)} |")
    return lines


def _times(rows: list[dict]) -> list[str]:
    """Per-fold fit time of each universum fit over the plain fit on the same split; cap hits."""
    cells = _cells(rows)
    lines = ["| protocol | subject | universum fit | plain fit | folds | median s (U / plain) | "
             "median ratio | max ratio | folds with cap hits (U / plain) |",
             "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    by_proto = sorted({(k[1], k[0], k[3], k[4]) for k in cells},
                      key=lambda k: (k[0], k[2:], SUBJECTS.index(k[1])))  # fmt: skip
    for proto, subject, *model in by_proto:
        plain = TIME_PAIRS.get(tuple(model))
        keys_u = [k for k in cells if k[:2] == (subject, proto) and k[3:] == tuple(model)]
        ratios, t_u, t_p, caps_u, caps_p = [], [], [], [], []
        for k in keys_u:
            base = cells.get((*k[:3], *plain)) if plain else None
            for split in set(cells[k]) & set(base or {}):
                u, b = cells[k][split], base[split]
                ratios.append(u["fit_time"] / b["fit_time"])
                t_u.append(u["fit_time"])
                t_p.append(b["fit_time"])
                caps_u.append(u.get("n_cap_hits"))
                caps_p.append(b.get("n_cap_hits"))
        if not ratios:
            continue

        def hits(caps):
            known = [c for c in caps if c is not None]
            return f"{sum(c > 0 for c in known)}/{len(known)}" if known else "not recorded"

        lines.append(f"| {proto} | {subject} | {' + '.join(model)} | {' + '.join(plain)} | "
                     f"{len(ratios)} | "
                     f"{np.median(t_u):.2f} / {np.median(t_p):.2f} | {np.median(ratios):.2f} | "
                     f"{np.max(ratios):.2f} | {hits(caps_u)} / {hits(caps_p)} |")  # fmt: skip
    return lines


def _verdict(rows: list[dict], proto: str) -> str:
    """Goal check: the primary pipeline's ROC-AUC ≥ the peer's on every subject, higher mean."""
    means: dict = defaultdict(list)
    for r in rows:
        if r["metric"] == "roc_auc" and r["protocol"] == proto:
            means[(r["pipeline"], r["universum"], r["subject"])].append(r["score"])
    subjects = [s for s in SUBJECTS if means.get((*PRIMARY, s)) and means.get((*PEER, s))]
    if not subjects:
        return f"{proto}: no paired results yet."
    ours, peer = np.array([(np.mean(means[(*PRIMARY, s)]), np.mean(means[(*PEER, s)]))
                           for s in subjects]).T  # fmt: skip
    met = bool(np.all(ours >= peer) and ours.mean() > peer.mean())
    return (f"{proto}: {'met' if met else 'NOT met'} — {PRIMARY[0]} + {PRIMARY[1]} "
            f"{' / '.join(f'{v:.3f}' for v in ours)} vs {PEER[0]} "
            f"{' / '.join(f'{v:.3f}' for v in peer)} ({', '.join(subjects)}); mean "
            f"{ours.mean():.3f} vs {peer.mean():.3f}.")  # fmt: skip


_TITLES = {"within-session": "Within-session (10 × 5-fold)", "cross-run": "Leave-one-run-out",
           "learning-curve": "Learning curve (all sizes pooled)"}  # fmt: skip


def _test_line(c: dict, alpha: float) -> str:
    size = "" if c["per_class"] is None else c["per_class"]
    mark = " *" if c["declared"] and c["p"] < alpha else ""
    return (f"| {c['subject']} | {c['protocol']} | {size} | {' + '.join(c['model'])} | "
            f"{' + '.join(c['reference'])} | {c['n_pairs']} | "
            f"{100 * c['mean_difference'] + 0.0:+.2f} | {c['p']:.4f}{mark} |")  # fmt: skip


def report(rows: list[dict], command: str, reruns: tuple[str, ...] = ()) -> str:
    """The Markdown results page; ``reruns``: the lines listing the cells merged in."""
    tests = paired_tests(rows)
    moon = moonshot_tests(rows)
    declared = [c for c in tests if c["declared"]]
    alpha = 0.05 / N_DECLARED
    out = ["# Decoder study: universum pipelines against pyRiemann TS + LR", "",
           f"Command: `{command}`", "",
           *(["Rows: those of the committed results CSV (`--merge`) from that "
              "command, except these cells, rerun with the command beside them and merged in "
              "(the other cells keep the rows of their original run):", "",
              *reruns, ""] if reruns else []),
           "ROC-AUC (two classes, decision values), every model selected by the one training "
           "path with the shipped grid (`DEFAULT_GRID`, inner 5-fold, balanced accuracy). "
           f"Declared before the study: the project's best universum pipeline is "
           f"`{PRIMARY[0]} + {PRIMARY[1]}`; the peer is `{PEER[0]}` (pyRiemann-style tangent "
           "space + logistic regression, same grid over C). `rc+`: each run re-centred on "
           "its rest trials; `rca+`: causally (running rest mean, as online).", "",
           "Pre-declared comparisons: the primary against the peer and against its own "
           f"no-universum fit (`{' + '.join(BASELINE)}`), per subject, within-session "
           "(corrected resampled t-test), leave-one-run-out and per learning-curve size "
           f"(paired Wilcoxon), and the moonshot (primary with {MOONSHOT[0]} trials per class "
           f"+ rest non-inferior by at most {MARGIN} AUC to both with {MOONSHOT[1]}; "
           f"one-sided Wilcoxon across draws): {N_DECLARED} tests, Bonferroni "
           f"threshold p < {alpha:.5f} (marked *; S001 leave-one-run-out has 3 runs, so its "
           "Wilcoxon p is at least 0.25). Other rows are exploratory (unadjusted)."
           "", ""]  # fmt: skip
    out += ["## Goal: best universum pipeline ≥ TS + LR on every subject, higher mean", ""]
    out += [f"- {_verdict(rows, proto)}" for proto in _TITLES if any(
        r["protocol"] == proto for r in rows)] + [""]  # fmt: skip
    for proto, title in _TITLES.items():
        if any(r["protocol"] == proto for r in rows):
            out += [f"## {title}: mean ROC-AUC", "", *_mean_table(rows, proto), ""]
    if any(r["protocol"] == "learning-curve" for r in rows):
        out += ["## Learning curve: mean ROC-AUC (accuracy) per labelled trials per class", "",
                *_curve_table(rows), ""]  # fmt: skip
    header = ["| subject | protocol | per class | model | against | pairs | Δ AUC × 100 | p |",
              "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    out += ["## Pre-declared paired tests", "", *header,
            *[_test_line(c, alpha) for c in declared], ""]  # fmt: skip
    if moon:
        out += [f"Moonshot: `{' + '.join(PRIMARY)}` with {MOONSHOT[0]} trials per class + rest "
                f"against {MOONSHOT[1]} per class (same test draws).", "",
                "| subject | against (20/class) | draws | Δ AUC × 100 | p non-inferior "
                f"(Δ > −{MARGIN}) |", "|---|---|---|---|---|"]  # fmt: skip
        star = {id(m): " *" if m["p_noninferior"] < alpha else "" for m in moon}
        out += [f"| {m['subject']} | {' + '.join(m['reference'])} | {m['n_pairs']} | "
                f"{100 * m['mean_difference'] + 0.0:+.2f} | {m['p_noninferior']:.4f}"
                f"{star[id(m)]} |" for m in moon] + [""]  # fmt: skip
    out += ["## Exploratory paired tests against the peer (unadjusted)", "", *header,
            *[_test_line(c, alpha) for c in tests if not c["declared"]], ""]  # fmt: skip
    out += ["## Per-fold time with and without universum; iteration-cap hits", "",
            "Ratio of each fold's fit time (selection + refit) with the universum over the "
            "plain fit on the same split; cap hits: folds where a solver fit stopped at its "
            "iteration cap (`ConvergenceWarning`; not recorded for jobs cached before the "
            "count existed). The plain fits `ts_ulr + none` and `ts_lr` select `C` by the same "
            "inner 5-fold CV (3 grid points; the universum fits 9 or 3); `csp_lda` has no "
            "parameter, hence no selection (one CSP fit against the universum fit's six). The "
            "same selection without universum, timed fold by fold under one load: "
            "`benchmarks/results/universum_fit.md`.", "", *_times(rows), ""]  # fmt: skip
    return "\n".join(out)


# --- Online replay: the universum adapted from the rest periods of the held-out run itself ---
REPLAY = "replay"
# subject → (runs, class markers → labels, rest marker, trial length in s from the cue: the
# imagery period, 4.1–4.2 s in eegmmidb, 5 s in BCI4ALS)
REPLAY_RUNS = {
    "S001": ((4, 8, 12), {"T1": "left", "T2": "right"}, "T0", 4.0),
    "assaf": (tuple(range(1, 10)), {"2": "left", "3": "right"}, "1", 5.0),
    "tomer": (tuple(range(1, 9)), {"2": "left", "3": "right"}, "1", 5.0),
}
# (pipeline, adapt to the run's rests): the adaptive decoder, the same fitted model without
# adaptation, and the peer
REPLAY_MODELS = (("ats_ulr", True), ("ats_ulr", False), ("ts_lr", False))
ADAPTIVE, STATIC, REPLAY_PEER = (f"{p}{' adaptive' if a else ''}" for p, a in REPLAY_MODELS)
CHUNKS_PER_SECOND = 16  # LSL chunks the decoder receives per second
# ``trial``: mean decision over every window inside the trial's imagery period (the primary
# aggregate, what an online run has); ``cue``: the one window the model was trained on
AGGREGATES = ("trial", "cue")


def replay_run_data(subject: str) -> list[dict]:
    """Every run of ``subject``: the continuous signal as the loaders prepare it and its
    trials cut at the decision window (through the decoder's causal filter)."""
    runs, classes, rest, _ = REPLAY_RUNS[subject]
    w0, w1 = WINDOW[subject]
    out = []
    for run in runs:
        if subject == "S001":
            raw = read_eegmmidb_run(1, run, verbose="error")
        else:
            raw = read_bci4als_run(subject, run, verbose="error")
        sfreq = raw.info["sfreq"]
        names = resolve_markers([*classes, rest], sorted(set(raw.annotations.description)))
        X, y, epochs = epochs_from_raw(
            filter_raw(raw, BAND, verbose="error"),
            {names[k]: label for k, label in classes.items()},
            [names[rest]],
            tmin=w0,
            tmax=w1 - 1 / sfreq,
            verbose="error",
        )
        data = raw.get_data(picks=epochs.ch_names).T
        onsets = epochs.events[:, 0] - raw.first_samp + round(w0 * sfreq)  # window starts
        out.append({"run": str(run), "data": data, "X": X, "y": y.astype(str).astype(object),
                    "starts": onsets, "sfreq": sfreq})  # fmt: skip
    return out


def _fit_replay_model(name: str, train: list[dict], subject: str):
    """Model selection and refit on the training runs, as the evaluation's jobs do."""
    X = np.concatenate([r["X"] for r in train])
    y = np.concatenate([r["y"] for r in train])
    if name == "ts_lr":  # the peer runs without universum, as in the other protocols
        X, y = X[y != UNIVERSUM_STR], y[y != UNIVERSUM_STR]
    sfreq = train[0]["sfreq"]
    estimator = make_pipeline(name, sfreq=sfreq, window=WINDOW[subject], band=BAND)
    grid = resolve_grid(estimator, DEFAULT_GRID, has_universum=name != "ts_lr")
    cv = UniversumStratifiedKFold(5, shuffle=True, random_state=0)
    return select_and_fit(estimator, grid, X, y, cv)


def replay_one_run(subject: str, runs: list[dict], test: dict) -> list[dict]:
    """Train on the other runs, replay ``test`` through each model of :data:`REPLAY_MODELS`."""
    _, _, _, trial_length = REPLAY_RUNS[subject]
    sfreq, data, y, starts = test["sfreq"], test["data"], test["y"], test["starts"]
    n = round((WINDOW[subject][1] - WINDOW[subject][0]) * sfreq)
    is_rest = y == UNIVERSUM_STR
    rest_ends = starts[is_rest] + n - 1
    labelled = ~is_rest
    rows, fitted = [], {}
    for name, adapt in REPLAY_MODELS:
        start = time.perf_counter()
        if name not in fitted:
            fitted[name] = _fit_replay_model(name, [r for r in runs if r is not test], subject)
        model, params = fitted[name]
        fit_time = time.perf_counter() - start
        # a decision at every sample: the trial windows and the cue window are all on the grid
        decoder = OnlineDecoder(copy.deepcopy(model), sfreq, data.shape[1],
                                window=n / sfreq, update_rate=sfreq, band=BAND)  # fmt: skip
        start = time.perf_counter()
        index, values = replay(decoder, data, chunk_size=round(sfreq / CHUNKS_PER_SECOND),
                               rest_ends=rest_ends if adapt else None)  # fmt: skip
        replay_time = time.perf_counter() - start
        assert np.array_equal(index, np.arange(n - 1, data.shape[0]))
        # values[i]: the decision of the window starting at sample i
        cue = values[starts[labelled]]
        cues = starts[labelled] - round(WINDOW[subject][0] * sfreq)
        last = round(trial_length * sfreq) - n  # the last window start inside the trial
        trial = np.array([values[c : c + last + 1].mean() for c in cues])
        checks = {}
        if not adapt:
            # the online path gives the offline pipeline's decision on the trained-on window
            offline = model.decision_function(test["X"][labelled])
            checks["online_vs_offline"] = float(np.abs(cue - offline).max())
        else:
            # the adapted model is the fit from scratch with the run's rest windows added
            X_train = np.concatenate(
                [r["X"] for r in runs if r is not test] + [test["X"][is_rest]]
            )
            y_train = np.concatenate([r["y"] for r in runs if r is not test] + [y[is_rest]])
            scratch = copy.deepcopy(model).fit(X_train, y_train)
            checks["adapted_vs_scratch"] = float(
                np.abs(decoder.pipeline[-1].coef_ - scratch[-1].coef_).max()
                / np.abs(scratch[-1].coef_).max()
            )
        positive = y[labelled] == model.classes_[1]
        for aggregate, scores in zip(AGGREGATES, (trial, cue), strict=True):
            rows.append({"subject": subject, "run": test["run"],
                         "model": f"{name}{' adaptive' if adapt else ''}",
                         "aggregate": aggregate, "roc_auc": float(roc_auc_score(positive, scores)),
                         "n_trials": int(labelled.sum()), "n_rest": int(is_rest.sum()),
                         "params": json.dumps({k.rsplit("__", 1)[-1]: v
                                               for k, v in sorted(params.items())}),
                         "fit_time": fit_time, "replay_time": replay_time,
                         "n_decisions": int(index.size), **checks})  # fmt: skip
    return rows


def run_replay(subject: str, cache: Path) -> None:
    """The online replay of every run of ``subject``; one cached JSON file per held-out run."""
    folder = cache / subject
    folder.mkdir(parents=True, exist_ok=True)
    runs = replay_run_data(subject)
    for test in runs:
        path = folder / f"{test['run']}.json"
        if path.exists():
            continue
        start = time.perf_counter()
        rows = replay_one_run(subject, runs, test)
        path.write_text(json.dumps(rows))
        print(f"{subject} replay run {test['run']}: {time.perf_counter() - start:.0f} s",
              flush=True)  # fmt: skip


def replay_tests(rows: list[dict]) -> list[dict]:
    """Paired Wilcoxon across held-out runs (``trial`` aggregate): the adaptive decoder
    against the same model without adaptation and against the peer; per subject and pooled."""
    scores = {(r["subject"], r["run"], r["model"]): r["roc_auc"] for r in rows
              if r["aggregate"] == "trial"}  # fmt: skip
    out = []
    for scope in (*SUBJECTS, "all"):
        for ref in (STATIC, REPLAY_PEER):
            keys = sorted(
                (s, run)
                for s, run, m in scores
                if m == ADAPTIVE and scope in (s, "all") and (s, run, ref) in scores
            )
            if not keys:
                continue
            d = np.array([scores[(*k, ADAPTIVE)] - scores[(*k, ref)] for k in keys])
            out.append({"scope": scope, "reference": ref, "n_runs": len(keys),
                        "mean_difference": float(d.mean()), "wins": int((d > 0).sum()),
                        "losses": int((d < 0).sum()), "p": _wilcoxon(d)})  # fmt: skip
    return out


def replay_report(rows: list[dict], command: str) -> str:
    """The Markdown page of the online replay."""
    tests = replay_tests(rows)
    alpha = 0.05 / max(1, len(tests))
    models = [ADAPTIVE, STATIC, REPLAY_PEER]
    subjects = [s for s in SUBJECTS if any(r["subject"] == s for r in rows)]
    out = ["# Decoder study: online replay with the universum adapted from the run's rests", "",
           f"Command: `{command}`", "",
           "Leave one run out. The model is selected (shipped grid, inner 5-fold) and fitted "
           "on the other runs, their rest trials as universum; the held-out run's continuous "
           "signal is then pushed through `OnlineDecoder` in chunks of 1/"
           f"{CHUNKS_PER_SECOND} s (`bci_universum.online.replay`, the decoder's causal "
           f"{BAND[0]:g}–{BAND[1]:g} Hz filter from the run's first sample, one decision per "
           "sample). "
           f"`{ADAPTIVE}`: each rest period's window (the decision window placed after the "
           "rest marker as the training universum trials are) joins the classifier's "
           "universum and the classifier is refitted, warm-started, the moment the window's "
           "last sample arrives (`OnlineDecoder.adapt_to_rest`), so a rest changes only the "
           f"decisions after it. `{STATIC}`: the same fitted model, never adapted. "
           f"`{REPLAY_PEER}`: pyRiemann-style tangent space + logistic regression, replayed "
           "the same way.", "",
           "Score of a task trial: the mean decision value over every window inside its "
           "imagery period (4 s from the cue for S001, 5 s for BCI4ALS; `trial`, the primary "
           "aggregate); `cue`: the single window the models were trained on (1–2 s after the "
           "cue for S001, 0.4–4.4 s for BCI4ALS). ROC-AUC per held-out run.", "",
           f"Exploratory (not among the study's {N_DECLARED} declared tests): paired Wilcoxon "
           f"across runs, `{ADAPTIVE}` against `{STATIC}` and against `{REPLAY_PEER}`, per "
           f"subject and pooled over all runs: {len(tests)} tests, Bonferroni threshold "
           f"p < {alpha:.4f} (marked *). S001 has 3 runs: its p is at least 0.25.",
           ""]  # fmt: skip
    for aggregate in AGGREGATES:
        out += [f"## Mean ROC-AUC over held-out runs ({aggregate} aggregate)", "",
                f"| model | {' | '.join(subjects)} | mean of subjects |",
                "|---|" + "---|" * (len(subjects) + 1)]  # fmt: skip
        for m in models:
            means = [np.mean([r["roc_auc"] for r in rows if r["subject"] == s
                              and r["model"] == m and r["aggregate"] == aggregate])
                     for s in subjects]  # fmt: skip
            out.append(f"| {m} | {' | '.join(f'{v:.3f}' for v in means)} | "
                       f"{np.mean(means):.3f} |")  # fmt: skip
        out.append("")
    out += ["## Paired tests (trial aggregate)", "",
            "| subject | against | runs | Δ AUC × 100 | wins / losses | p |",
            "|---|---|---|---|---|---|"]  # fmt: skip
    out += [f"| {t['scope']} | {t['reference']} | {t['n_runs']} | "
            f"{100 * t['mean_difference'] + 0.0:+.2f} | {t['wins']} / {t['losses']} | "
            f"{t['p']:.4f}{' *' if t['p'] < alpha else ''} |" for t in tests] + [""]  # fmt: skip
    out += ["## Per run (trial aggregate ROC-AUC)", "",
            f"| subject | run | rest windows | {' | '.join(models)} | selected C, C_universum |",
            "|---|---|---|" + "---|" * (len(models) + 1)]  # fmt: skip
    trial = {(r["subject"], r["run"], r["model"]): r for r in rows if r["aggregate"] == "trial"}
    for subject, run in sorted({k[:2] for k in trial},
                               key=lambda k: (SUBJECTS.index(k[0]), int(k[1]))):  # fmt: skip
        cells = " | ".join(f"{trial[(subject, run, m)]['roc_auc']:.3f}" for m in models)
        params = json.loads(trial[(subject, run, ADAPTIVE)]["params"])
        out.append(f"| {subject} | {run} | {trial[(subject, run, ADAPTIVE)]['n_rest']} | "
                   f"{cells} | {params.get('C')}, {params.get('C_universum')} |")  # fmt: skip
    adaptive = [r for r in trial.values() if r["model"] == ADAPTIVE]
    static = [r for r in trial.values() if r["model"] == STATIC]
    per_refit = [(a["replay_time"] - trial[(a["subject"], a["run"], STATIC)]["replay_time"])
                 / a["n_rest"] for a in adaptive]  # fmt: skip
    out += ["", "## Checks and cost", "",
            "- online path = offline pipeline: largest |decision of the replayed cue window − "
            "`decision_function` of the same trial| over the non-adaptive replays: "
            f"{max(r['online_vs_offline'] for r in static):.1e}.",
            "- adapted = fitted from scratch: largest relative difference between the "
            "adaptive classifier's coefficients at the end of a run and a fit from scratch of "
            "the same pipeline on the training trials plus that run's rest windows: "
            f"{max(r['adapted_vs_scratch'] for r in adaptive):.1e}.",
            "- cost of one rest update (adaptive minus static replay time, per rest window; "
            f"median over runs): {1e3 * np.median(per_refit):.0f} ms; replays of "
            f"{np.median([r['n_decisions'] for r in adaptive]):.0f} decisions (median) took "
            f"{np.median([r['replay_time'] for r in static]):.1f} s without adaptation.",
            ""]  # fmt: skip
    return "\n".join(out)


def _tidy(row: dict, rows: list[dict]) -> dict:
    """A replay row in the evaluation's tidy CSV columns (``split``: the held-out run)."""
    runs = {r["run"]: r for r in rows if r["subject"] == row["subject"]
            and r["model"] == row["model"] and r["aggregate"] == row["aggregate"]}  # fmt: skip
    others = [r for run, r in runs.items() if run != row["run"]]
    n_universum = 0 if row["model"] == REPLAY_PEER else sum(r["n_rest"] for r in others)
    # the adaptive and the static replay share one fitted model, timed once
    base = row["model"].split()[0]
    fit_time = max(r["fit_time"] for r in rows if r["subject"] == row["subject"]
                   and r["run"] == row["run"] and r["model"].split()[0] == base)  # fmt: skip
    return {"dataset": "eegmmidb" if row["subject"] == "S001" else "bci4als",
            "subject": row["subject"], "session": "1", "pipeline": row["model"],
            "universum": "none" if row["model"] == REPLAY_PEER else "U_C3",
            "protocol": f"online-replay-{row['aggregate']}", "split": row["run"],
            "n_train": sum(r["n_trials"] for r in others), "n_test": row["n_trials"],
            "n_universum": n_universum + (row["n_rest"] if row["model"] == ADAPTIVE else 0),
            "metric": "roc_auc", "score": row["roc_auc"], "fit_time": fit_time,
            "params": row["params"]}  # fmt: skip


def write_replay_results(cache: Path, output: Path, command: str) -> bool:
    """Tables from every cached replay run: ``output`` (Markdown) and its CSV; False when the
    cache holds none."""
    rows = [r for f in sorted(cache.glob("*/*.json")) for r in json.loads(f.read_text())]
    if not rows:
        return False
    write_csv([_tidy(r, rows) for r in rows], output.with_suffix(".csv"))
    write_results(output, [replay_report(rows, command)])
    return True


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subjects", nargs="+", choices=SUBJECTS, default=list(SUBJECTS))
    parser.add_argument("--protocols", nargs="+", choices=[*PROTOCOLS, REPLAY],
                        default=[*PROTOCOLS, REPLAY])  # fmt: skip
    parser.add_argument("--cache-dir", type=Path, default=Path("decoder_study_cache"))
    parser.add_argument("--quick", action="store_true", help="2 repeats / 3 draws (checks)")
    parser.add_argument("--report", action="store_true", help="only tables from the cache")
    parser.add_argument("--pipelines", nargs="+", help="only these pipelines of the plan")
    parser.add_argument("--merge", type=Path, help="results CSV the cached cells are merged into")
    parser.add_argument("--output", type=Path, default=RESULTS / "decoder_study.md")
    args = parser.parse_args(argv)
    unknown = set(args.pipelines or ()) - {p for plan in PLAN.values() for p, _ in plan}
    if unknown:
        parser.error(f"--pipelines: {sorted(unknown)} are in no protocol's plan.")
    # the command of this run, as recorded beside the cells it refreshes
    command = " ".join(["python benchmarks/study_decoder.py", *(argv if argv is not None
                                                                  else sys.argv[1:])])  # fmt: skip
    cache = args.cache_dir / ("quick" if args.quick else "full")
    replay_cache = args.cache_dir / REPLAY  # no repeats: --quick does not apply
    if not args.report:
        for subject in args.subjects:
            for name in args.protocols:
                start = time.perf_counter()
                if name == REPLAY:
                    run_replay(subject, replay_cache)
                else:
                    run(subject, name, cache, args.quick, args.pipelines, command)
                print(f"{subject} {name}: {time.perf_counter() - start:.0f} s", flush=True)
    replay_output = args.output.with_name(f"{args.output.stem}_replay.md")
    if write_replay_results(replay_cache, replay_output,
                            "python benchmarks/study_decoder.py --protocols replay"):  # fmt: skip
        print(json.dumps({"output": str(replay_output)}))
    if args.protocols == [REPLAY] and not args.report:
        return
    # Every finished (subject, protocol), from this run or from other shards sharing the cache.
    folders = sorted({f.parent for f in cache.glob("*/*/*.json")})
    done = {(f.parent.name, _NAMES[f.name]) for f in folders if (f / "rows.json").exists()}
    rows = [r for folder in folders for r in _cached_rows(folder)]
    reruns = []
    if args.merge:
        base = read_csv(args.merge)
        done |= {(r["subject"], r["protocol"]) for r in base}
        reruns = _reruns(cache, rows)
        rows = merge_rows(base, rows)
    if not rows:
        raise SystemExit(f"No finished (subject, protocol) in {cache}.")
    write_csv(rows, args.output.with_suffix(".csv"))
    done = sorted(done)
    command = "python benchmarks/study_decoder.py" + (" --quick" if args.quick else "")
    missing = [(s, _NAMES[p]) for s in SUBJECTS for p in PROTOCOLS if (s, _NAMES[p]) not in done]
    failed = [f for path in sorted(cache.glob("*/*/failed.json"))
              for f in json.loads(path.read_text())]  # fmt: skip
    text = (
        report(rows, command, tuple(reruns))
        + "".join(
            f"\nFailed: {f['subject']} {f['protocol']} {f['pipeline']} "
            f"({', '.join(f['universa'])}): {f['error'][:300]}\n"
            for f in failed
        )
        + (
            f"\nFinished (subject, protocol): {done}\n\nNot finished yet (run the command again; "
            f"cached jobs are reused): {missing}\n"
        )
    )
    write_results(args.output, [text])
    print(json.dumps({"rows": len(rows), "output": str(args.output)}))


if __name__ == "__main__":
    main()
