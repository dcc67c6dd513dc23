"""A sweep of 240 points on a Dask LocalCluster of two worker processes equals the same
points run serially, bit for bit, and a point that fails is reported, not lost."""

import numpy as np
import pytest

import eqm
import eqm.distributed
from conftest import EXAMPLES

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_local_cluster_sweep_equals_serial(client):
    text = (EXAMPLES / "population.eqm").read_text()
    grid = {"g": np.linspace(0.02, 0.05, 20).tolist(), "t0": np.linspace(0.005, 0.015, 12).tolist()}
    frame = eqm.distributed.sweep(text, grid, client, stop=100, interval=10)
    assert frame.attrs["failures"] == []
    serial = eqm.Session(text=text).model().simulate_many(grid, workers=1, stop=100, interval=10)
    assert len(frame) == len(serial) == 240 * 11
    assert list(frame.columns) == list(serial.columns)
    assert np.array_equal(frame.to_numpy().view(np.uint64), serial.to_numpy().view(np.uint64))


def test_failures_reported_per_point(client, tmp_path):
    text = """model F
  parameter Real c = 1;
  Real x(start = 0, fixed = true);
  Real y;
equation
  der(x) = 1;
  y = sqrt(c - x);
end F;
"""
    points = [{"c": 5.0}] * 5 + [{"c": 0.5}] + [{"c": 5.0}] * 4
    frame = eqm.distributed.sweep(text, points, client, chunks=3, stop=2, interval=0.5)
    assert [i for i, _ in frame.attrs["failures"]] == [5]
    paths, failures = eqm.distributed.sweep(text, points, client, chunks=3, stop=2, interval=0.5,
                                            parquet=str(tmp_path))
    assert len(paths) == 3 and [i for i, _ in failures] == [5]
    pd = pytest.importorskip("pandas")
    joined = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
    assert np.array_equal(joined.to_numpy(), frame.to_numpy())



def test_workers_find_classes_in_library_directories(client, tmp_path):
    # A single-file package in a directory the workers (on this machine) read.
    (tmp_path / "Growth.mo").write_text(
        "package Growth\n  model Exp\n    parameter Real r = 1;\n    Real x(start = 1, fixed = true);\n"
        "  equation\n    der(x) = r*x;\n  end Exp;\nend Growth;\n")
    text = "model G\n  Growth.Exp e;\nend G;\n"
    points = {"e.r": [0.5, 1.0, 1.5]}
    frame = eqm.distributed.sweep(text, points, client, libraries=[tmp_path], stop=1, interval=0.5,
                                  rtol=1e-10, atol=1e-12)
    assert frame.attrs["failures"] == []
    last = frame.groupby("e.r").last()["e.x"]
    assert np.allclose(last.to_numpy(), np.exp([0.5, 1.0, 1.5]), rtol=1e-8)
