"""The API against closed-form solutions and the library's own counters: parameters change
without compiling, errors carry their locations, a failed run keeps its rows, conversions keep
names, units and dtypes, and simulate_many equals single runs bit for bit."""

import math

import numpy as np
import pytest

import eqm
from conftest import EXAMPLES

DECAY = """model Decay
  parameter Real k(unit = "1/s") = 2 "rate";
  Real x(start = 1, fixed = true, unit = "m") "amount";
equation
  der(x) = -k*x;
end Decay;
"""


def test_decay_matches_closed_form():
    model = eqm.Session(text=DECAY).model()
    result = model.simulate(stop=1, interval=0.1, rtol=1e-10, atol=1e-12)
    exact = np.exp(-2.0 * result.time)
    assert np.max(np.abs(result["x"] - exact)) < 1e-8
    assert result.time[0] == 0.0 and result.time[-1] == 1.0


def test_parameter_changes_do_not_recompile():
    model = eqm.Session(text=DECAY).model()
    model.simulate(stop=1)
    before = eqm.compilations()
    for k in (0.5, 1.0, 3.0):
        r = model.simulate(stop=1, params={"k": k}, rtol=1e-10, atol=1e-12)
        assert abs(r["x"][-1] - math.exp(-k)) < 1e-8
    model.set_parameter("k", 4.0)
    r = model.simulate(stop=1, starts={"x": 2.0}, rtol=1e-10, atol=1e-12)
    assert abs(r["x"][-1] - 2 * math.exp(-4.0)) < 1e-8
    assert eqm.compilations() == before
    assert model.parameters["k"].value == 4.0


def test_parameters_mapping_has_values_units_descriptions():
    p = eqm.Session(text=DECAY).model().parameters
    assert list(p) == ["k"]
    assert (p["k"].value, p["k"].unit, p["k"].description, p["k"].structural) == (2.0, "1/s", "rate", False)


def test_model_error_carries_location():
    text = "model M\n  Real x;\nequation\n  der(x) = -y;\nend M;\n"
    with pytest.raises(eqm.ModelError) as info:
        eqm.Session(text=text).model()
    e = info.value
    assert (e.code, e.file, e.line) == ("E0205", "<text>", 4)
    assert e.column == 13
    assert "<text>:4:" in str(e) and "E0205" in str(e)


def test_unknown_parameter_is_a_model_error():
    model = eqm.Session(text=DECAY).model()
    with pytest.raises(eqm.ModelError) as info:
        model.simulate(params={"kk": 1.0})
    assert info.value.code is not None and info.value.line is not None


STRUCTURAL = """model S
  parameter Integer n = 3;
  Real x[n](each start = 1, each fixed = true);
equation
  for i in 1:n loop
    der(x[i]) = -i*x[i];
  end for;
end S;
"""


def test_structural_parameter_needs_recompile():
    model = eqm.Session(text=STRUCTURAL).model()
    assert model.parameters["n"].structural
    with pytest.raises(eqm.StructuralParameterError) as info:
        model.simulate(stop=1, params={"n": 4})
    assert info.value.code == "E0707"
    before = eqm.compilations()["models"]
    r = model.simulate(stop=1, params={"n": 4}, recompile=True, rtol=1e-10, atol=1e-12)
    assert eqm.compilations()["models"] == before + 1
    assert abs(r["x[4]"][-1] - math.exp(-4.0)) < 1e-8
    model.simulate(stop=1, params={"n": 4}, recompile=True)
    assert eqm.compilations()["models"] == before + 1


FAILS = """model F
  Real x(start = 0, fixed = true);
  Real y;
equation
  der(x) = 1;
  y = sqrt(1 - x);
end F;
"""


def test_simulation_error_keeps_rows_before_failure():
    model = eqm.Session(text=FAILS).model()
    with pytest.raises(eqm.SimulationError) as info:
        model.simulate(stop=2, interval=0.1)
    e = info.value
    assert e.time is not None and 0.9 <= e.time <= 1.1
    assert e.result is not None and len(e.result) >= 9
    assert np.all(e.result.time < e.time + 1e-12)
    # The rows computed are right: y = sqrt(1 - t).
    assert np.max(np.abs(e.result["y"] - np.sqrt(1 - e.result.time))) < 1e-6


def test_conversions_keep_names_units_dtypes():
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    r = eqm.Session(text=DECAY).model().simulate(stop=1, interval=0.5)
    a = r.to_numpy()
    assert a.dtype == np.float64 and a.shape == (3, 2)
    df = r.to_pandas()
    assert df.index.name == "time" and list(df.columns) == ["x"]
    assert df["x"].dtype == np.float64 and df.attrs["units"] == {"x": "m"}
    assert np.array_equal(df["x"].to_numpy(), r["x"]) and np.array_equal(df.index.to_numpy(), r.time)
    t = r.to_arrow()
    assert t.column_names == ["time", "x"] and t.schema.field("x").type == pa.float64()
    assert t.schema.field("x").metadata == {b"unit": b"m", b"description": b"amount"}
    assert np.array_equal(t.column("x").to_numpy(), r["x"])


def test_pandas_frame_shares_the_buffer():
    r = eqm.Session(text=DECAY).model().simulate(stop=1)
    df = r.to_pandas()
    assert np.shares_memory(df["x"].to_numpy(), r.to_numpy())


def test_simulate_many_equals_single_runs():
    model = eqm.load(EXAMPLES / "population.eqm").model()
    grid = {"g": [0.02, 0.03, 0.04], "Nk": [200.0, 225.0]}
    frame = model.simulate_many(grid, workers=2, stop=50, interval=5)
    assert list(frame.columns[:3]) == ["g", "Nk", "time"]
    assert frame.attrs["rows_per_point"] == [11] * 6
    at = 0
    for g in grid["g"]:
        for nk in grid["Nk"]:
            single = model.simulate(stop=50, interval=5, params={"g": g, "Nk": nk}).to_numpy()
            part = frame.iloc[at:at + len(single)]
            assert np.all(part["g"] == g) and np.all(part["Nk"] == nk)
            got = part[["time"] + [c for c in frame.columns[3:]]].to_numpy()
            assert np.array_equal(got.view(np.uint64), single.view(np.uint64))
            at += len(single)
    assert at == len(frame)


def test_simulate_many_reports_failed_points():
    model = eqm.Session(text=FAILS.replace("sqrt(1 - x)", "sqrt(c - x)").replace(
        "  Real y;", "  parameter Real c = 1;\n  Real y;")).model()
    with pytest.raises(eqm.SimulationError) as info:
        model.simulate_many([{"c": 5.0}, {"c": 0.5}, {"c": 5.0}], stop=2, interval=0.5)
    frame = info.value.result
    assert [i for i, _ in frame.attrs["failures"]] == [1]
    kept = model.simulate_many([{"c": 5.0}, {"c": 0.5}], stop=2, interval=0.5, on_error="keep")
    assert kept.attrs["rows_per_point"][0] == 5 and len(kept.attrs["failures"]) == 1


def test_explain_and_analyze_render_and_hold_numbers():
    model = eqm.load(EXAMPLES / "spring_mass.eqm").model()
    explanation = model.explain()
    assert "<svg" in explanation._repr_html_() and explanation.sorting
    assert explanation.diagram_svg is None or "<svg" in explanation.diagram_svg
    assert model.check().equations > 0
    assert "der(" in str(model.flatten())
    decay = eqm.Session(text=DECAY).model().analyze()
    assert decay.A.shape == (1, 1) and decay.A[0, 0] == -2.0
    assert decay.eigenvalues.dtype == np.complex128 and decay.eigenvalues[0] == -2.0
    assert "Eigenvalues" in decay._repr_html_()


def test_simulate_releases_gil_and_runs_in_threads():
    import threading
    model = eqm.Session(text=DECAY).model()
    results = []

    def run():
        results.append(eqm.Session(text=DECAY).model().simulate(stop=1)["x"][-1])

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    single = model.simulate(stop=1)["x"][-1]
    assert results == [single] * 3
