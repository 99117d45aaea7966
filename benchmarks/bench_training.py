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
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


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


def main() -> None:
    from paradigms.config import ParadigmSection, SessionConfig
    from paradigms.training import PIPELINES, train_model

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20, help="trials per class (default 20)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rows = []
    for n_channels in (16, 32):
        for universum in ("rest", "other"):
            with tempfile.TemporaryDirectory() as tmp:
                folder = Path(tmp)
                _session(folder, n_channels, universum, args.trials, args.seed)
                config = SessionConfig(paradigm=ParadigmSection(universum=[universum]))
                for name in PIPELINES:
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
    lines = [
        "# Training on simulated sessions",
        "",
        f"`PYTHONPATH=. python benchmarks/bench_training.py --trials {args.trials}` on "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores "
        f"(shared), Python {platform.python_version()}.",
        "",
        f"{args.trials} trials per class + {args.trials} universum trials, 250 Hz, band 8–30 Hz "
        "(causal), window 0.5–2.5 s; nested 5-fold CV accuracy (%) on the same outer folds.",
        "",
        "| channels | universum | pipeline | with U | without U | selected | time (s) |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    out = ROOT / "benchmarks" / "results" / "training.md"
    out.write_text("\n".join(lines))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
