"""Parameter sweeps on a Dask or Ray cluster: each worker process compiles the model once and
runs many points of it.

:func:`sweep` splits the points into chunks and sends each to a worker with the model's text;
a worker compiles the text the first time it sees it (a cache per process, since compiled
native code cannot be pickled) and runs its chunk with :meth:`eqm.Model.simulate_many`. The
chunks come back as DataFrames joined into the same long table ``simulate_many`` returns (or
are written as Parquet partitions by the workers). A point that fails is reported with its
index and error in ``attrs["failures"]``, also when a whole chunk failed (say on a worker
that died): no point is lost silently.

On a cluster, start a scheduler and workers (``dask scheduler``, ``dask worker
tcp://host:8786 --nworkers 4 --nthreads 1``, or ``dask_jobqueue.SLURMCluster(cores=..,
memory=..).scale(jobs=10)``), install this package on every worker, and pass
``distributed.Client(address)`` here. With Ray, call ``ray.init()`` (or ``ray.init(address=
"auto")`` on a Ray cluster) and pass the ``ray`` module itself as the client: each chunk is a
Ray task, and Ray's worker processes, kept between tasks, compile the model once each.
"""

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

_MODELS: Dict[Tuple[str, Optional[str], Tuple[str, ...]], Any] = {}


def _compiled(model_text: str, model: Optional[str], libraries: Tuple[str, ...]):
    """The model of ``model_text`` with the library directories ``libraries`` (paths on the
    worker's machine), compiled once per worker process."""
    key = (model_text, model, libraries)
    if key not in _MODELS:
        import eqm
        _MODELS[key] = eqm.Session(text=model_text, libraries=list(libraries)).model(model)
    return _MODELS[key]


def _run_chunk(model_text: str, model: Optional[str], libraries: Tuple[str, ...], first: int,
               points: List[Dict[str, float]], settings: Dict[str, Any], threads: Optional[int],
               parquet: Optional[str]):
    """Runs one chunk of points on a worker: ``(frame or Parquet path, failures)`` with
    the failures' point indices counted from the whole sweep's first point."""
    try:
        frame = _compiled(model_text, model, libraries).simulate_many(points, workers=threads, on_error="keep",
                                                                       **settings)
    except Exception as e:  # a chunk that cannot run at all: every point reports why
        return None, [(first + i, f"{type(e).__name__}: {e}") for i in range(len(points))]
    failures = [(first + i, message) for i, message in frame.attrs.get("failures", [])]
    if parquet is not None:
        path = os.path.join(parquet, f"part-{first:08d}.parquet")
        frame.to_parquet(path, index=False)
        return path, failures
    return frame, failures


def _is_ray(client) -> bool:
    """Whether ``client`` is the ``ray`` module (Ray has no client object)."""
    return getattr(client, "__name__", None) == "ray" and hasattr(client, "remote")


def _submit_all(client, tasks):
    """Submits every task ``(arguments)`` of :func:`_run_chunk`; returns a function that gives
    the outcome of task ``k`` (raising when the task itself was lost)."""
    if _is_ray(client):
        remote = client.remote(_run_chunk)
        refs = [remote.remote(*args) for args in tasks]
        return lambda k: client.get(refs[k])
    futures = [client.submit(_run_chunk, *args, pure=False) for args in tasks]
    return lambda k: futures[k].result()


def _worker_count(client) -> int:
    if _is_ray(client):
        return max(1, int(client.cluster_resources().get("CPU", 1)))
    return max(1, len(client.scheduler_info().get("workers", {})))


def sweep(model_text: str, points: Union[Sequence[Mapping[str, float]], Mapping[str, Sequence[float]]],
          client, model: Optional[str] = None, chunks: Optional[int] = None,
          threads: Optional[int] = 1, parquet: Optional[str] = None,
          libraries: Sequence[Union[str, os.PathLike]] = (), **settings: Any):
    """Runs ``model`` of ``model_text`` at every point (a list of parameter dictionaries or a
    grid, as :meth:`eqm.Model.simulate_many` takes) on the workers of ``client``: a Dask
    ``distributed.Client``, or the ``ray`` module after ``ray.init()``. ``libraries`` are
    library directories as :class:`eqm.Session` takes them, paths on the workers' machines
    (each worker also searches its own ``EQMPATH`` and ``MODELICAPATH``).

    ``chunks`` is the number of tasks (default: four per worker, or per CPU of a Ray
    cluster); each worker runs its chunk on ``threads`` threads (one by default: Dask and Ray
    run a task per worker process or thread). Returns the
    long DataFrame of ``simulate_many`` with every point in order (``attrs["failures"]`` as
    ``(point index, message)``), or with ``parquet`` (a directory) the list of Parquet files
    the workers wrote, one per chunk, and the failures: ``(paths, failures)``."""
    from . import _point_table
    table = _point_table(points)
    count = len(next(iter(table.values()), []))
    if chunks is None:
        chunks = 4 * _worker_count(client)
    chunks = max(1, min(chunks, count)) if count else 0
    bounds = [(count * k) // chunks for k in range(chunks + 1)]
    if parquet is not None:
        os.makedirs(parquet, exist_ok=True)
    if isinstance(libraries, (str, os.PathLike)):
        libraries = [libraries]
    library_dirs = tuple(os.fspath(d) for d in libraries)
    tasks = []
    for k in range(chunks):
        lo, hi = bounds[k], bounds[k + 1]
        # A list of points, not a dictionary of columns (which simulate_many reads as a grid).
        part = [{name: values[i] for name, values in table.items()} for i in range(lo, hi)]
        tasks.append((model_text, model, library_dirs, lo, part, settings, threads, parquet))
    outcome = _submit_all(client, tasks)
    results = []
    failures: List[Tuple[int, str]] = []
    for k in range(chunks):
        try:
            value, failed = outcome(k)
        except Exception as e:  # the task itself was lost (a worker died): its points report it
            value, failed = None, [(i, f"{type(e).__name__}: {e}") for i in range(bounds[k], bounds[k + 1])]
        results.append(value)
        failures.extend(failed)
    failures.sort()
    if parquet is not None:
        return [r for r in results if r is not None], failures
    import pandas as pd
    frames = [r for r in results if r is not None]
    if not frames:
        frame = pd.DataFrame(columns=list(table.keys()) + ["time"])
    else:
        frame = pd.concat(frames, ignore_index=True)
        frame.attrs["units"] = frames[0].attrs.get("units", {})
        frame.attrs["descriptions"] = frames[0].attrs.get("descriptions", {})
    frame.attrs["failures"] = failures
    return frame
