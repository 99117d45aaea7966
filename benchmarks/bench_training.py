"""Training benchmark: ``bci-universum train`` on simulated sessions, accuracy and time.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_training.py [--trials 20]

For each channel count and universum condition, the simulated subject
(:func:`bci_universum.simulation.eeg.simulate_raw`) records a calibration run (``--trials``
imagined left and right hand trials, 4 s each) and a universum run (as many trials of the
condition) as FIF files; :func:`paradigms.training.train_model` then runs its nested
universum-aware CV (5 outer folds, 3 × 3 grid) for both pipelines and fits the final model.
Reports the nested CV accuracy with and without universum (same folds) and the wall time of the
whole call.

Writes ``benchmarks/results/training.md``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from report import LoadAverage, add_output_option, run_line, write_results

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from paradigms.commands._types import non_negative_int, positive_int  # noqa: E402


def _session(folder: Path, n_channels: int, universum: str, trials: int, seed: int) -> None:
    from bci_universum.simulation.eeg import simulate_raw

    calibration = simulate_raw(
        trials, universum_tasks=(), n_channels=n_channels, seed=seed, verbose="error"
    )
    run = simulate_raw(
        1,
        n_universum_per_task=trials,
        universum_tasks=(universum,),
        n_channels=n_channels,
        seed=seed + 1,
        verbose="error",
    )
    keep = [i for i, d in enumerate(run.annotations.description) if not d.startswith("cue/")]
    run.set_annotations(run.annotations[keep])
    calibration.save(folder / "sub-01_ses-01_task-calibration_run-01_raw.fif", verbose="error")
    run.save(folder / "sub-01_ses-01_task-universum_run-01_raw.fif", verbose="error")


def _update_times(model: Path, ch_names: list[str], n_updates: int = 1000) -> np.ndarray:
    """Seconds per decoder update (16 Hz, 250 Hz stream) for a saved model."""
    from threadpoolctl import threadpool_limits

    from bci_universum.online import OnlineDecoder

    decoder = OnlineDecoder.from_model(model, ch_names, 250.0, update_rate=16.0)
    decoder.warm_up()
    data = np.random.default_rng(0).standard_normal((decoder.window_len, len(ch_names)))
    decoder.push(data * 1e-5)
    hop = np.random.default_rng(1).standard_normal((decoder.hop, len(ch_names))) * 1e-5
    times = np.empty(n_updates)
    # One BLAS thread, as in training: on a shared machine more threads only add jitter.
    with threadpool_limits(limits=1, user_api="blas"):
        for k in range(n_updates):
            start = time.perf_counter()
            decoder.push(hop)
            times[k] = time.perf_counter() - start
    return times


def _prior_rows(trials: int, seed: int) -> list[str]:
    """Train a 32-channel model, then a later session's model with it as prior; time both."""
    from bci_universum.simulation.eeg import simulate_raw
    from paradigms.training import train_model

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        old, new = Path(tmp) / "old.joblib", Path(tmp) / "new.joblib"
        first = simulate_raw(
            trials, n_channels=32, universum_tasks=("rest",), seed=seed, verbose="error"
        )
        later = simulate_raw(
            6, n_channels=32, universum_tasks=("rest",), seed=seed + 7, verbose="error"
        )
        train_model([first], output=old, verbose="error")
        result = train_model([later], output=new, prior=old, n_splits=3, verbose="error")
        for label, model in (("ts_usvm", old), ("ts_usvm + prior (BiasedSVC)", new)):
            times = 1e3 * _update_times(model, first.ch_names)
            rows.append(
                f"| {label} | {np.percentile(times, 50):.2f} | {np.percentile(times, 99):.2f} |"
            )
        rows.append("")
        rows.append(
            f"Later session (6 trials per class) with the prior: nested 3-fold CV accuracy "
            f"{100 * result.accuracy_with_universum:.1f} % with universum, "
            f"{100 * result.accuracy_without_universum:.1f} % without; selected "
            f"{result.metadata.params['selected']}."
        )
    return rows


def main() -> None:
    from paradigms.config import ParadigmSection, SessionConfig
    from paradigms.training import train_model

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--trials", type=positive_int, default=20, help="trials per class (default 20)"
    )
    parser.add_argument("--seed", type=non_negative_int, default=0)
    add_output_option(parser, "training.md")
    args = parser.parse_args()

    load = LoadAverage()
    rows = []
    for n_channels in (16, 32):
        for universum in ("rest", "other"):
            with tempfile.TemporaryDirectory() as tmp:
                folder = Path(tmp)
                _session(folder, n_channels, universum, args.trials, args.seed)
                config = SessionConfig(paradigm=ParadigmSection(universum=[universum]))
                for name in ("ts_usvm", "csp_usvm"):
                    start = time.perf_counter()
                    result = train_model(folder, config, pipeline=name, verbose="error")
                    seconds = time.perf_counter() - start
                    rows.append(
                        f"| {n_channels} | {universum} | {name} | "
                        f"{100 * result.accuracy_with_universum:.1f} | "
                        f"{100 * result.accuracy_without_universum:.1f} | "
                        f"{result.metadata.params['selected']} | {seconds:.1f} |"
                    )
                    print(rows[-1], flush=True)
    prior_rows = _prior_rows(args.trials, args.seed)
    load.sample()
    lines = [
        "# Training on simulated sessions",
        "",
        run_line(parser, args, load=load),
        "",
        f"{args.trials} trials per class + {args.trials} universum trials, 250 Hz, band 8–30 Hz "
        "(causal), window 0.5–2.5 s; nested 5-fold CV accuracy (%) on the same outer folds.",
        "",
        "| channels | universum | pipeline | with U | without U | selected | time (s) |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "## Decoder update time with and without a prior model",
        "",
        "32 channels, 250 Hz, 2 s window, 16 Hz updates, 1000 updates after warm-up "
        "(`OnlineDecoder.from_model`, one BLAS thread); ms.",
        "",
        "| model | p50 | p99 |",
        "|---|---|---|",
        *prior_rows,
    ]
    write_results(args.output, lines)


if __name__ == "__main__":
    main()
