"""Every example simulated through the package equals `eqm run`'s CSV bit for bit, with the
same defaults (the library decides them for both); an example the CLI refuses is refused by
the package with an exception."""

import numpy as np
import pytest

import eqm
from conftest import EXAMPLES, cli_csv

EXAMPLE_FILES = sorted(p for p in EXAMPLES.glob("*.eqm"))


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=[p.stem for p in EXAMPLE_FILES])
def test_example_equals_cli_bit_for_bit(path, eqm_bin):
    code, header, rows = cli_csv(eqm_bin, path)
    session = eqm.Session(files=[path])
    if code != 0:
        with pytest.raises((eqm.ModelError, eqm.SimulationError, ValueError)):
            session.model().simulate()
        return
    result = session.model().simulate()
    assert ["time"] + result.names == header
    expected = np.array(rows, dtype=np.float64).reshape(len(rows), len(header))
    got = result.to_numpy()
    assert got.shape == expected.shape
    # Bit for bit: the same doubles, NaN and signed zeros included.
    assert np.array_equal(got.view(np.uint64), expected.view(np.uint64))


def test_settings_equal_cli_bit_for_bit(eqm_bin):
    path = EXAMPLES / "decay.eqm"
    _, header, rows = cli_csv(eqm_bin, path, "--stop", "3", "--interval", "0.25", "--solver", "rk4", "--step", "0.01")
    result = eqm.load(path).model().simulate(stop=3, interval=0.25, solver="rk4", step=0.01)
    expected = np.array(rows)
    assert np.array_equal(result.to_numpy().view(np.uint64), expected.view(np.uint64))


INLINE_C = """
function scaled "an external C function whose C text is given inline"
  input Real x;
  input Real k;
  output Real y;
  external "C" y = eqm_test_scaled(x, k)
    annotation(Include = "static double eqm_test_scaled(double x, double k) { return k * x * x; }");
end scaled;
model InlineC
  Real x(start = 1, fixed = true);
  Real y = scaled(x, 3);
equation
  der(x) = -x;
end InlineC;
"""


def test_an_external_c_function_is_compiled_as_on_the_command_line(eqm_bin, tmp_path):
    path = tmp_path / "inline_c.eqm"
    path.write_text(INLINE_C)
    code, header, rows = cli_csv(eqm_bin, path)
    assert code == 0
    result = eqm.Session(files=[path]).model().simulate()
    expected = np.array(rows, dtype=np.float64).reshape(len(rows), len(header))
    assert np.array_equal(result.to_numpy().view(np.uint64), expected.view(np.uint64))
    # y = 3 x^2 with x = exp(-t), by hand at the last row.
    t, x, y = (result.to_numpy()[-1, header.index(n)] for n in ("time", "x", "y"))
    assert abs(y - 3 * x * x) <= 1e-12 * y
    assert abs(x - np.exp(-t)) <= 1e-4 * x
