"""Benchmarks of the Python package (run with a release build: `pip install ./python`, and
`cargo build --release -p eqm-cli` for the CLI comparison):

    python python/benchmarks/bench.py [--points 10000] [--cli-points 200]

1. The overhead of `Model.simulate` from Python: the wall time of the call minus the time the
   library measured for the same run inside Rust (`summary["simulate_seconds"]`).
2. Handing over 10^6 rows x 10 variables: the wall time of `simulate` + `to_pandas` minus the
   run's own time, against `numpy.copy` of the same array.
3. A sweep of N points of the population model: `simulate_many` on all cores, a 2-worker Dask
   LocalCluster, Ray on 2 CPUs (where it is installed), and one `eqm run` process per point
   (measured on a sample, scaled to N).
"""

import argparse
import os
import pathlib
import subprocess
import tempfile
import time

import numpy as np

import eqm

REPO = pathlib.Path(__file__).resolve().parents[2]
SMALL = "model D\n  parameter Real k = 1;\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -k*x;\nend D;\n"
WIDE = ("model W\n  Real x[10](each start = 1, each fixed = true);\nequation\n"
        "  for i in 1:10 loop\n    der(x[i]) = -i*1e-6*x[i];\n  end for;\nend W;\n")


def overhead(repeats: int = 2000) -> None:
    model = eqm.Session(text=SMALL).model()
    model.simulate(stop=1, interval=0.5)
    walls, inside = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        r = model.simulate(stop=1, interval=0.5)
        walls.append(time.perf_counter() - t0)
        inside.append(r.summary["simulate_seconds"])
    walls, inside = np.array(walls), np.array(inside)
    print(f"simulate (small model): wall {np.median(walls) * 1e6:.1f} us, inside Rust {np.median(inside) * 1e6:.1f} us, "
          f"overhead {np.median(walls - inside) * 1e6:.1f} us (median of {repeats})")


def handover(repeats: int = 5) -> None:
    model = eqm.Session(text=WIDE).model()
    settings = dict(stop=1e6 - 1, interval=1.0, solver="rk4", step=1.0)
    handed, copies, runs = [], [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        r = model.simulate(**settings)
        frame = r.to_pandas()
        wall = time.perf_counter() - t0
        inside = r.summary["simulate_seconds"]
        assert frame.shape == (10 ** 6, 10)
        a = r.to_numpy()
        t1 = time.perf_counter()
        np.copy(a)
        copies.append(time.perf_counter() - t1)
        handed.append(wall - inside)
        runs.append(inside)
        del r, frame, a
    h, c = np.median(handed), np.median(copies)
    print(f"10^6 rows x 10 columns: handed to pandas in {h * 1e3:.1f} ms (run {np.median(runs) * 1e3:.0f} ms); "
          f"numpy.copy of the same data {c * 1e3:.1f} ms; ratio {h / c:.2f} (medians of {repeats})")


def sweeps(points: int, cli_points: int) -> None:
    path = REPO / "examples" / "population.eqm"
    text = path.read_text()
    g = np.linspace(0.02, 0.05, points).tolist()
    grid = [{"g": v} for v in g]
    model = eqm.Session(text=text).model()
    t0 = time.perf_counter()
    frame = model.simulate_many(grid, stop=300, interval=1)
    local = time.perf_counter() - t0
    print(f"{points} points, simulate_many on {os.cpu_count()} cores: {local:.2f} s ({len(frame)} rows)")
    try:
        import distributed
        import eqm.distributed as eqm_distributed
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            eqm_distributed.sweep(text, grid[:10], client, stop=300, interval=1)  # workers compile
            t0 = time.perf_counter()
            dframe = eqm_distributed.sweep(text, grid, client, stop=300, interval=1)
            dask_time = time.perf_counter() - t0
        assert np.array_equal(dframe.to_numpy(), frame.to_numpy())
        print(f"{points} points, Dask LocalCluster of 2 workers: {dask_time:.2f} s (equal to simulate_many)")
    except ImportError:
        print("dask not installed: no LocalCluster sweep")
    try:
        import ray
        import eqm.distributed as eqm_distributed
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            eqm_distributed.sweep(text, grid[:10], ray, stop=300, interval=1)  # workers compile
            t0 = time.perf_counter()
            rframe = eqm_distributed.sweep(text, grid, ray, stop=300, interval=1)
            ray_time = time.perf_counter() - t0
        finally:
            ray.shutdown()
        assert np.array_equal(rframe.to_numpy(), frame.to_numpy())
        print(f"{points} points, Ray on 2 CPUs: {ray_time:.2f} s (equal to simulate_many)")
    except ImportError:
        print("ray not installed: no Ray sweep")
    binary = REPO / "target" / "release" / "eqm"
    if binary.exists():
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            for v in g[:cli_points]:
                subprocess.run([str(binary), "run", str(path), "--param", f"g={v}", "--stop", "300",
                                "--interval", "1", "--out", os.path.join(d, "out.csv")], check=True,
                               capture_output=True)
            per = (time.perf_counter() - t0) / cli_points
        print(f"{points} points, one `eqm run` per point: {per * points:.1f} s "
              f"({per * 1e3:.1f} ms per run, measured on {cli_points})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=10000)
    parser.add_argument("--cli-points", type=int, default=200)
    args = parser.parse_args()
    overhead()
    handover()
    sweeps(args.points, args.cli_points)
