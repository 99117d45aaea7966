"""Running the planned jobs: serial, joblib or Dask, and :func:`evaluate`, the entry point.

An evaluation crosses data sets (one :class:`~bci_universum.datasets.EpochSet` per
subject and data set, or one per filter band), pipelines (name → factory), universa (by name)
and a protocol (:mod:`.protocols`); :func:`~.jobs.plan_jobs` lists the jobs, which one of the
backends runs; every backend gives the same scores for the same seed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from .jobs import Job, _load_cached, _store, data_variants, plan_jobs, run_job
from .protocols import WithinSession

__all__ = ["BACKENDS", "evaluate"]

BACKENDS = ("serial", "joblib", "dask")


def _run_serial(todo, datasets, pipelines, n_jobs, scheduler) -> Iterator[tuple[Job, list]]:
    for job in todo:
        yield job, run_job(job, datasets[job.data_index, job.band], pipelines[job.pipeline])


def _run_and_tag(job, epochs, factory):
    return job, run_job(job, epochs, factory)


def _run_joblib(todo, datasets, pipelines, n_jobs, scheduler) -> Iterator[tuple[Job, list]]:
    from joblib import Parallel, delayed

    parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    yield from parallel(
        delayed(_run_and_tag)(job, datasets[job.data_index, job.band], pipelines[job.pipeline])
        for job in todo
    )


def _run_dask(todo, datasets, pipelines, n_jobs, scheduler) -> Iterator[tuple[Job, list]]:
    from distributed import Client, LocalCluster, as_completed

    own = None
    if isinstance(scheduler, Client):
        client = scheduler
    elif scheduler is None:
        own = LocalCluster(n_workers=max(n_jobs, 1), threads_per_worker=1)
        client = Client(own)
    else:
        client = Client(scheduler)
    try:
        used = list(dict.fromkeys((job.data_index, job.band) for job in todo))
        scattered = dict(zip(used, client.scatter([datasets[u] for u in used]), strict=True))
        futures = [
            client.submit(
                _run_and_tag,
                job,
                scattered[job.data_index, job.band],
                pipelines[job.pipeline],
                key=f"bci-universum-{job.key}",
                pure=False,
            )
            for job in todo
        ]
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            client.cancel(futures)
    finally:
        if client is not scheduler:
            client.close()
        if own is not None:
            own.close()


_BACKEND_RUNNERS = {"serial": _run_serial, "joblib": _run_joblib, "dask": _run_dask}


def evaluate(
    datasets,
    pipelines: Mapping[str, Callable],
    universa: Iterable[str] | str = ("none",),
    protocol=None,
    *,
    cache_dir: str | os.PathLike | None = None,
    n_jobs: int = 1,
    backend: str = "serial",
    scheduler=None,
    seed: int = 0,
    progress: bool = True,
    classes: Iterable[str] | None = None,
) -> list[dict]:
    """Evaluate pipelines × universa on data sets under a protocol.

    Everything is validated and every job planned before the first fit, so a bad configuration
    (unknown universum, missing labels, too few trials for the folds) fails at once.

    Parameters
    ----------
    datasets : EpochSet, mapping or iterable of them
        One per (data set, subject); see :mod:`bci_universum.datasets`. A mapping
        ``band -> EpochSet`` holds the same trials causally filtered with each band that the
        pipelines need (see :mod:`.jobs`).
    pipelines : mapping of str to callable
        ``name -> factory(epochs)`` returning an unfitted estimator (picklable for joblib/Dask),
        e.g. :func:`bci_universum.pipelines.pipeline_factory`; a factory with a ``band``
        attribute runs on the data set's variant of that band.
    universa : str or iterable of str
        Names from :data:`UNIVERSA` (``"U_C3:rest"`` selects a recorded kind).
    protocol : WithinSession, CrossGroup or LearningCurve
        Default ``WithinSession()`` (the thesis protocol).
    cache_dir : path or None
        One JSON file per finished job, written atomically; jobs found there are not rerun.
    n_jobs : int
        Parallel workers (joblib processes; Dask workers of a LocalCluster it starts itself).
    backend : {"serial", "joblib", "dask"}
        Execution backend; all give identical scores for the same ``seed``.
    scheduler : str, distributed.Client or None
        Dask scheduler address or client (``None``: a LocalCluster with ``n_jobs`` workers).
    seed : int
        Seed of all splits, inner folds and random universa.
    progress : bool
        Show a tqdm progress bar over jobs.
    classes : iterable of str or None
        Labelled classes to use (default: all labelled classes of each data set).

    Returns
    -------
    rows : list of dict
        Tidy rows ``dataset, subject, session, pipeline, universum, protocol, split, n_train,
        n_test, n_universum, metric, score, fit_time, params, key`` in planning order.
        ``n_train`` counts labelled training trials, ``n_universum`` the recorded universum
        trials added to them (generated universa, U_mean and U_nm, are not counted); ``params``
        is the JSON of the selected grid point; ``fit_time`` (s) covers model selection and
        refit; ``key`` names the job's cache file.
    """
    from tqdm.auto import tqdm

    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}.")
    if backend == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError as err:  # pragma: no cover - depends on the environment
            raise ImportError(
                "backend='dask' needs dask[distributed] (pip install 'bci-universum[dask]')."
            ) from err
    single = hasattr(datasets, "X") or isinstance(datasets, Mapping)
    datasets = [datasets] if single else list(datasets)
    protocol = WithinSession() if protocol is None else protocol
    jobs = plan_jobs(
        datasets,
        pipelines,
        universa,
        protocol,
        seed=seed,
        classes=None if classes is None else list(classes),
    )
    cache = None
    if cache_dir is not None:
        cache = Path(cache_dir)
        cache.mkdir(parents=True, exist_ok=True)
    results = {job.key: _load_cached(cache, job.key) for job in jobs}
    todo = [job for job in jobs if results[job.key] is None]
    with tqdm(
        total=len(jobs),
        initial=len(jobs) - len(todo),
        disable=not progress,
        desc="evaluate",
        unit="job",
    ) as bar:
        if todo:
            runner = _BACKEND_RUNNERS[backend]
            variants = {
                (d, band): epochs
                for d, dataset in enumerate(datasets)
                for band, epochs in data_variants(dataset).items()
            }
            for job, rows in runner(todo, variants, dict(pipelines), n_jobs, scheduler):
                _store(cache, job.key, rows)
                results[job.key] = rows
                bar.update()
    return [row for job in jobs for row in results[job.key]]
