"""The %%eqm cell magic runs a cell's model, stores its result and plots it."""

import pytest

from eqm.magic import run_cell

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def test_cell_magic_runs_and_plots(capsys):
    cell = "model D\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -x;\nend D;\n"
    namespace = {}
    result = run_cell("--stop 1 --plot x --name r", cell, namespace)
    assert namespace["r"] is result and abs(result["x"][-1] - 0.36787944) < 1e-5
    assert run_cell("", "model E\n  Real x;\nequation\n  der(x) = -y;\nend E;\n", {}) is None
    assert "E0205" in capsys.readouterr().out


def test_extension_registers_magic():
    IPython = pytest.importorskip("IPython")
    from IPython.testing.globalipapp import get_ipython
    ip = get_ipython()
    ip.run_line_magic("load_ext", "eqm")
    ip.run_cell_magic("eqm", "--stop 1 --no-plot", "model D\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -x;\nend D;\n")
    assert "eqm_result" in ip.user_ns
