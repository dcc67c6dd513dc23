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
