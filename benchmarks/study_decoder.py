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

Every job is cached (one JSON file per job in ``--cache-dir``), so the study resumes where it
stopped and can be sharded by ``--subjects`` / ``--protocols`` across processes or machines
sharing the cache; the report covers every finished (subject, protocol) in the cache, and
``--report`` rebuilds it without fitting anything::

    python benchmarks/study_decoder.py                       # everything
    python benchmarks/study_decoder.py --subjects tomer --protocols loro
    python benchmarks/study_decoder.py --report              # tables from what is cached
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy.stats import wilcoxon

from bci_universum.datasets import load_bci4als, load_eegmmidb
from bci_universum.evaluation import (
    CrossGroup,
    LearningCurve,
    WithinSession,
    compare_to_pipeline,
    evaluate,
    write_csv,
)
from bci_universum.features import recentre_runs
from bci_universum.pipelines import pipeline_factory
from bci_universum.training import DEFAULT_GRID

RESULTS = Path(__file__).parent / "results"
SUBJECTS = ("S001", "assaf", "tomer")
PROTOCOLS = ("loro", "within", "curve")
BAND = (7.0, 30.0)
WINDOW = {"S001": (1.0, 2.0), "assaf": (0.4, 4.4), "tomer": (0.4, 4.4)}
# Tomer's headset has unconnected (flat) channels: CSP needs a shrunk covariance there.
CSP_COV = {"tomer": "oas"}
PEER = ("ts_lr", "none")
PRIMARY = ("ts_ulr", "U_C3")
# (pipeline, universa): peers without universum, universum pipelines with and without it (the
# latter gives the universum's own effect and the per-fold time without universum).
PLAN = {
    "within": [("ts_lr", ["none"]), ("csp_lda", ["none"]), ("ts_ulr", ["none", "U_C3"]),
               ("ts_ulda", ["U_C3"])],
    "loro": [("ts_lr", ["none"]), ("csp_lda", ["none"]), ("ts_ulr", ["none", "U_C3"]),
             ("ts_ulda", ["U_C3"]), ("rc+ts_lr", ["none"]), ("rc+ts_ulr", ["U_C3"]),
             ("rca+ts_lr", ["none"]), ("rca+ts_ulr", ["U_C3"])],
    "curve": [("ts_lr", ["none"]), ("csp_lda", ["none"]), ("ts_ulr", ["none", "U_C3"]),
              ("ts_ulda", ["U_C3"])],
}  # fmt: skip
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
    sizes = (5, 10, 15) if subject == "S001" else (5, 10, 20, 40)
    if subject == "assaf":
        sizes = (5, 10, 20, 30)  # 45 per class: a 25 % test set leaves 33–34 for training
    return LearningCurve(sizes, n_repeats=3 if quick else 20, inner_splits=5, param_grid=grid)


def run(subject: str, name: str, cache: Path, quick: bool) -> list[dict]:
    """Evaluate the plan of protocol ``name`` on ``subject``; rows tagged with the subject."""
    epochs = load(subject)
    by_variant: dict[str, list] = defaultdict(list)
    for pipeline, universa in PLAN[name]:
        variant, _, base = pipeline.rpartition("+")
        by_variant[variant].append((pipeline, base, universa))
    rows = []
    for variant, entries in by_variant.items():
        data = epochs if not variant else recentre_runs(epochs, **VARIANTS[variant])
        for pipeline, base, universa in entries:
            extra = {"cov_est": CSP_COV[subject]} if "csp" in base and subject in CSP_COV else {}
            factory = pipeline_factory(base, window=WINDOW[subject], band=BAND, **extra)
            out = evaluate(data, {pipeline: factory}, universa, protocol(name, subject, quick),
                           cache_dir=cache / subject / name, progress=False)  # fmt: skip
            rows += [{**r, "subject": subject} for r in out]
    return rows


def wilcoxon_rows(rows: list[dict], metric: str = "roc_auc") -> list[dict]:
    """Paired Wilcoxon signed-rank tests against the peer, per (subject, protocol, size)."""
    cells: dict = defaultdict(dict)
    for r in rows:
        if r["metric"] == metric:
            level = r["n_train"] if r["protocol"] == "learning-curve" else None
            cells[(r["subject"], r["protocol"], level, r["pipeline"], r["universum"])][
                (r["session"], r["split"])
            ] = r["score"]
    out = []
    for (subject, proto, level, pipeline, universum), scores in sorted(
        cells.items(), key=lambda kv: tuple(map(str, kv[0]))
    ):
        peer = cells.get((subject, proto, level, *PEER))
        if (pipeline, universum) == PEER or not peer:
            continue
        keys = sorted(set(scores) & set(peer))
        d = np.array([scores[k] - peer[k] for k in keys])
        p = wilcoxon(d).pvalue if len(keys) >= 2 and np.any(d != 0) else 1.0
        out.append({"subject": subject, "protocol": proto, "n_train": level,
                    "pipeline": pipeline, "universum": universum, "n_pairs": len(keys),
                    "mean_difference": float(d.mean()), "p": float(p)})  # fmt: skip
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


def _times(rows: list[dict]) -> list[str]:
    times: dict = defaultdict(list)
    for r in rows:
        if r["metric"] == "roc_auc":
            times[(r["protocol"], r["pipeline"], r["universum"])].append(r["fit_time"])
    lines = ["| protocol | pipeline | median fit s, no universum | with U_C3 | ratio |",
             "|---|---|---|---|---|"]  # fmt: skip
    for (proto, pipeline, universum), t in sorted(times.items()):
        if universum != "U_C3" or (proto, pipeline, "none") not in times:
            continue
        plain = np.median(times[(proto, pipeline, "none")])
        with_u = np.median(t)
        lines.append(f"| {proto} | {pipeline} | {plain:.2f} | {with_u:.2f} | "
                     f"{with_u / plain:.2f} |")  # fmt: skip
    return lines


def _verdict(rows: list[dict], proto: str) -> str:
    """Goal check: the primary pipeline's ROC-AUC ≥ the peer's on every subject, higher mean."""
    means: dict = defaultdict(list)
    for r in rows:
        if r["metric"] == "roc_auc" and r["protocol"] == proto:
            means[(r["pipeline"], r["universum"], r["subject"])].append(r["score"])
    subjects = sorted({k[2] for k in means if k[:2] in (PEER, PRIMARY)})
    pairs = [(np.mean(means[(*PRIMARY, s)]), np.mean(means[(*PEER, s)])) for s in subjects
             if means.get((*PRIMARY, s)) and means.get((*PEER, s))]  # fmt: skip
    if not pairs:
        return f"{proto}: no paired results yet."
    ours, peer = np.array(pairs).T
    met = bool(np.all(ours >= peer) and ours.mean() > peer.mean())
    return (f"{proto}: {'met' if met else 'NOT met'} — {PRIMARY[0]} + {PRIMARY[1]} "
            f"{' / '.join(f'{v:.3f}' for v in ours)} vs {PEER[0]} "
            f"{' / '.join(f'{v:.3f}' for v in peer)} ({', '.join(subjects)}); mean "
            f"{ours.mean():.3f} vs {peer.mean():.3f}.")  # fmt: skip


_TITLES = {"within-session": "Within-session (10 × 5-fold)", "cross-run": "Leave-one-run-out",
           "learning-curve": "Learning curve (all sizes pooled)"}  # fmt: skip


def report(rows: list[dict], command: str) -> str:
    """The Markdown results page."""
    names = _TITLES
    t_tests = [c for c in compare_to_pipeline(rows, PEER, metric="roc_auc")
               if c["protocol"] == "within-session"]  # fmt: skip
    w_tests = [c for c in wilcoxon_rows(rows) if c["protocol"] != "within-session"]
    n_tests = len(t_tests) + len(w_tests)
    out = ["# Decoder study: universum pipelines against pyRiemann TS + LR", "",
           f"Command: `{command}`", "",
           "ROC-AUC (two classes, decision values), every model selected by the one training "
           "path with the shipped grid (`DEFAULT_GRID`, inner 5-fold, balanced accuracy). "
           f"Declared before the study: the project's best universum pipeline is "
           f"`{PRIMARY[0]} + {PRIMARY[1]}`; the peer is `{PEER[0]}` (pyRiemann-style tangent "
           "space + logistic regression, same grid over C). `rc+`: each run re-centred on "
           "its rest trials; `rca+`: causally (running rest mean, as online).", ""]  # fmt: skip
    names = {
        "within-session": "Within-session (10 × 5-fold)",
        "cross-run": "Leave-one-run-out",
        "learning-curve": "Learning curve (all sizes)",
    }
    out += ["## Goal: best universum pipeline ≥ TS + LR on every subject, higher mean", ""]
    out += [f"- {_verdict(rows, proto)}" for proto in names if any(
        r["protocol"] == proto for r in rows)] + [""]  # fmt: skip
    for proto, title in names.items():
        if any(r["protocol"] == proto for r in rows):
            out += [f"## {title}: mean ROC-AUC", "", *_mean_table(rows, proto), ""]
    out += ["## Paired tests against the peer", "",
            f"{n_tests} comparisons in all; p-values are unadjusted — with Bonferroni over "
            f"them, significance at 0.05 needs p < {0.05 / max(n_tests, 1):.4f}.", "",
            "Within-session (corrected resampled t-test, Nadeau & Bengio):", "",
            "| subject | pipeline | universum | pairs | Δ AUC × 100 | p corrected |",
            "|---|---|---|---|---|---|"]  # fmt: skip
    for c in t_tests:
        out.append(f"| {c['subject']} | {c['pipeline']} | {c['universum']} | {c['n_pairs']} | "
                   f"{100 * c['mean_difference']:+.2f} | {c['p_corrected']:.3f} |")  # fmt: skip
    out += ["", "Leave-one-run-out and learning curve (paired Wilcoxon across runs / draws):",
            "",
            "| subject | protocol | n train | pipeline | universum | pairs | Δ AUC × 100 | p |",
            "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for c in w_tests:
        size = "" if c["n_train"] is None else c["n_train"]
        out.append(f"| {c['subject']} | {c['protocol']} | {size} | {c['pipeline']} | "
                   f"{c['universum']} | {c['n_pairs']} | {100 * c['mean_difference']:+.2f} | "
                   f"{c['p']:.3f} |")  # fmt: skip
    out += ["", "## Per-fold time with and without universum", "", *_times(rows), ""]
    return "\n".join(out)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subjects", nargs="+", choices=SUBJECTS, default=list(SUBJECTS))
    parser.add_argument("--protocols", nargs="+", choices=PROTOCOLS, default=list(PROTOCOLS))
    parser.add_argument("--cache-dir", type=Path, default=Path("decoder_study_cache"))
    parser.add_argument("--quick", action="store_true", help="2 repeats / 3 draws (checks)")
    parser.add_argument("--report", action="store_true", help="only tables from the cache")
    parser.add_argument("--output", type=Path, default=RESULTS / "decoder_study.md")
    args = parser.parse_args(argv)
    cache = args.cache_dir / ("quick" if args.quick else "full")
    if not args.report:
        for subject in args.subjects:
            for name in args.protocols:
                start = time.perf_counter()
                rows = run(subject, name, cache, args.quick)
                (cache / subject / name / "rows.json").write_text(json.dumps(rows))
                print(f"{subject} {name}: {time.perf_counter() - start:.0f} s", flush=True)
    # Every finished (subject, protocol), from this run or from other shards sharing the cache.
    rows = [r for f in sorted(cache.glob("*/*/rows.json")) for r in json.loads(f.read_text())]
    if not rows:
        raise SystemExit(f"No finished (subject, protocol) in {cache}.")
    write_csv(rows, args.output.with_suffix(".csv"))
    done = sorted({(r["subject"], r["protocol"]) for r in rows})
    command = "python benchmarks/study_decoder.py" + (" --quick" if args.quick else "")
    names = {"within": "within-session", "loro": "cross-run", "curve": "learning-curve"}
    missing = [(s, names[p]) for s in SUBJECTS for p in PROTOCOLS if (s, names[p]) not in done]
    text = report(rows, command) + (
        f"\nFinished (subject, protocol): {done}\n\nNot finished yet (run the command again; "
        f"cached jobs are reused): {missing}\n"
    )
    args.output.write_text(text)
    print(json.dumps({"rows": len(rows), "output": str(args.output)}))


if __name__ == "__main__":
    main()
