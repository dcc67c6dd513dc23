"""eqm.compare against hand-made signals: a run of the decay model against its closed form given
as a Result, a DataFrame and a gzip-compressed CSV file; a step shifted by more than the time
tolerance; a missing signal; a signal list; usage errors as exceptions."""

import gzip

import numpy as np
import pytest

import eqm

DECAY = """model Decay
  Real x(start = 1, fixed = true);
equation
  der(x) = -x;
end Decay;
"""


def _csv(names, time, columns):
    lines = ['"time",' + ",".join(f'"{n}"' for n in names)]
    for i, t in enumerate(time):
        lines.append(",".join(repr(float(v)) for v in [t] + [c[i] for c in columns]))
    return "\n".join(lines) + "\n"


def test_a_run_matches_its_closed_form_in_every_form(tmp_path):
    result = eqm.Session(text=DECAY).model().simulate(stop=2)
    time = np.linspace(0.0, 2.0, 301)
    exact = np.exp(-time)
    path = tmp_path / "Decay.csv.gz"
    path.write_bytes(gzip.compress(_csv(["x"], time, [exact]).encode()))
    comparison = eqm.compare(result, path)
    assert comparison.passed and bool(comparison)
    assert comparison.signals[0]["verdict"] == "pass"
    # The tube is 0.002 of the span in time and of the range (1 - e^-2) in value.
    assert comparison.signals[0]["tube_time"] == pytest.approx(0.004)
    assert comparison.signals[0]["tube_value"] == pytest.approx(0.002 * (1 - np.exp(-2.0)))
    pd = pytest.importorskip("pandas")
    assert eqm.compare(result.to_pandas(), str(path)).passed
    frame = pd.DataFrame({"time": time, "x": exact * 1.01})
    off = eqm.compare(result, frame)
    assert not off.passed
    failure = off.failures()[0]
    assert failure["verdict"] == "leaves" and failure["time"] == 0.0 and failure["value"] == 1.0
    assert "leaves the tube at time 0" in repr(off)


def test_a_shifted_step_fails_where_the_window_passes_the_step(tmp_path):
    # Over 10 s the tube is 0.02 s wide on each side: a step 0.05 s late fails from 5.02 on.
    time = np.arange(1001) / 100.0
    reference = tmp_path / "reference.csv"
    reference.write_text(_csv(["s"], time, [(time >= 5.0).astype(float)]))
    result = tmp_path / "result.csv"
    result.write_text(_csv(["s"], time, [(time >= 5.05).astype(float)]))
    comparison = eqm.compare(result, reference)
    signal = comparison.signals[0]
    assert signal["time"] == 5.02 and signal["outside"] == 3 and signal["checked"] == 1001
    near = tmp_path / "near.csv"
    near.write_text(_csv(["s"], time, [(time >= 5.015).astype(float)]))
    assert eqm.compare(near, reference).passed


def test_missing_signals_lists_and_errors(tmp_path):
    reference = tmp_path / "reference.csv"
    reference.write_text("time,a,b\n0,1,2\n1,1,2\n")
    result = tmp_path / "result.csv"
    result.write_text("time,a\n0,1\n1,1\n")
    comparison = eqm.compare(result, reference)
    assert [s["verdict"] for s in comparison.signals] == ["pass", "missing"]
    signals = tmp_path / "comparisonSignals.txt"
    signals.write_text("time\na\n")
    assert eqm.compare(result, reference, signals=signals).passed
    assert eqm.compare(result, reference, signals=["a"]).passed
    with pytest.raises(ValueError, match="the signal `c` is not in the reference"):
        eqm.compare(result, reference, signals=["c"])
    with pytest.raises(ValueError, match="tolerance"):
        eqm.compare(result, reference, tolerance=2.0)
    broken = tmp_path / "broken.csv"
    broken.write_text("time,a\n0,x\n")
    with pytest.raises(ValueError, match="line 2: `x` is not a number"):
        eqm.compare(broken, reference)
    with pytest.raises(TypeError):
        eqm.compare(42, reference)
