"""A sweep on Ray (two CPUs of a local Ray instance) equals the same points run serially, bit
for bit, and a point that fails is reported with its index. Skipped where Ray is not installed."""

import numpy as np
import pytest

import eqm
import eqm.distributed
from conftest import EXAMPLES

ray = pytest.importorskip("ray")

FAILING = """model F
  parameter Real c = 1;
  Real x(start = 0, fixed = true);
  Real y;
equation
  der(x) = 1;
  y = sqrt(c - x);
end F;
"""


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_ray_sweep_equals_serial(local_ray):
    text = (EXAMPLES / "population.eqm").read_text()
    grid = {"g": np.linspace(0.02, 0.05, 10).tolist(), "t0": [0.005, 0.01, 0.015]}
    frame = eqm.distributed.sweep(text, grid, local_ray, stop=100, interval=10)
    serial = eqm.Session(text=text).model().simulate_many(grid, workers=1, stop=100, interval=10)
    assert frame.attrs["failures"] == []
    assert len(frame) == 30 * 11
    assert list(frame.columns) == list(serial.columns)
    assert np.array_equal(frame.to_numpy().view(np.uint64), serial.to_numpy().view(np.uint64))


def test_ray_failures_reported_per_point(local_ray):
    points = [{"c": 5.0}] * 5 + [{"c": 0.5}] + [{"c": 5.0}] * 4
    frame = eqm.distributed.sweep(FAILING, points, local_ray, chunks=3, stop=2, interval=0.5)
    assert [i for i, _ in frame.attrs["failures"]] == [5]
