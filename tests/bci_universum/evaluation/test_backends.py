"""Backends (serial, joblib, Dask) and the job cache: identical results, resume after a stop."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import distributed
import pytest

from bci_universum.evaluation import WithinSession, evaluate

from .helpers import GRID, ROOT, Counting, _fits, _without_time, csp_lda, csp_usvm, make_epochs

pytestmark = pytest.mark.filterwarnings("ignore:pipelines without a universum classifier")


def test_serial_joblib_dask_give_identical_results(data, tmp_path):
    args = (data, {"usvm": csp_usvm, "lda": csp_lda}, ["none", "U_C3"],
            WithinSession(3, 3, GRID))  # fmt: skip
    serial = evaluate(*args, progress=False)
    parallel = evaluate(*args, backend="joblib", n_jobs=2, progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False) as cluster:
        address = cluster.scheduler_address  # as `--scheduler ADDRESS` passes it
        on_dask = evaluate(*args, backend="dask", scheduler=address, progress=False)
    assert _without_time(serial) == _without_time(parallel) == _without_time(on_dask)


# --- cache and resume ------------------------------------------------------------------------


def test_interrupted_run_resumes_without_recomputing(data, tmp_path):
    log, cache = tmp_path / "fits.log", tmp_path / "cache"
    protocol = WithinSession(3, 3, GRID)  # CountingLDA has no grid: one fit per job
    log.with_suffix(".stop").write_text("4")
    with pytest.raises(RuntimeError, match="interrupted"):
        evaluate(data, {"lda": Counting(log)}, "none", protocol, cache_dir=cache, progress=False)
    assert _fits(log) == 4
    cached = sorted(cache.glob("*.json"))
    assert len(cached) == 4 and not list(cache.glob("*.tmp"))
    mtimes = {p: p.stat().st_mtime_ns for p in cached}
    log.with_suffix(".stop").unlink()
    rows = evaluate(data, {"lda": Counting(log)}, "none", protocol, cache_dir=cache,
                    progress=False)  # fmt: skip
    assert _fits(log) == 6  # 2 subjects x 3 folds: only the 2 unfinished jobs ran
    assert {p: p.stat().st_mtime_ns for p in cached} == mtimes  # finished files untouched
    fresh = evaluate(data, {"lda": Counting(log)}, "none", protocol, progress=False)
    assert _fits(log) == 12
    assert _without_time(rows) == _without_time(fresh)
    evaluate(data, {"lda": Counting(log)}, "none", protocol, cache_dir=cache, progress=False)
    assert _fits(log) == 12  # everything cached


@pytest.mark.slow
def test_sigkilled_run_resumes_from_its_cache(tmp_path):
    log, cache = tmp_path / "fits.log", tmp_path / "cache"
    log.with_suffix(".stop").write_text("3 block")
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from tests.bci_universum.evaluation.helpers import Counting, make_epochs, GRID
        from bci_universum.evaluation import WithinSession, evaluate
        evaluate([make_epochs("S1", seed=1)], {{"lda": Counting({str(log)!r})}},
                 "none", WithinSession(5, 3, GRID), cache_dir={str(cache)!r}, progress=False)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while len(list(cache.glob("*.json"))) < 3:  # the child then blocks in its 4th fit
            assert proc.poll() is None, "the evaluation ended before it was killed"
            assert time.monotonic() < deadline, "the evaluation did not reach 3 cached jobs"
            time.sleep(0.05)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert _fits(log) == 3
    log.with_suffix(".stop").unlink()
    evaluate([make_epochs("S1", seed=1)], {"lda": Counting(log)}, "none",
             WithinSession(5, 3, GRID), cache_dir=cache, progress=False)  # fmt: skip
    assert _fits(log) == 5  # only the 2 unfinished folds were fitted
