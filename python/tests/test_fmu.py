"""`Model.export_fmu`: the FMU the library exports, simulated by FMPy (an independent importer)
and compared with the package's own run of the same model; a model that cannot be exported is a
`ModelError` with the export's code."""

import os

import numpy as np
import pytest

import eqm

from conftest import EXAMPLES, eqm_binary

fmpy = pytest.importorskip("fmpy")


@pytest.fixture
def runtime():
    """The runtime library cargo built next to the `eqm` binary the tests use (conftest names
    it in EQM_FMU_RUNTIME)."""
    path = os.environ.get("EQM_FMU_RUNTIME")
    if not path or not os.path.exists(path):
        pytest.fail(f"the FMU runtime is not built next to {eqm_binary()}: `cargo build -p eqm-fmu`")
    return path


def test_an_exported_fmu_runs_in_fmpy_as_the_model_runs_here(tmp_path, runtime):
    model = eqm.load(EXAMPLES / "fmi" / "VanDerPol.eqm").model()
    path = model.export_fmu(tmp_path / "vdp.fmu", fmi=3, kind="cs")
    assert path == tmp_path / "vdp.fmu" and path.exists()
    from fmpy.validation import validate_fmu

    assert validate_fmu(str(path)) == []
    result = fmpy.simulate_fmu(str(path), stop_time=5.0, output_interval=0.1, relative_tolerance=1e-8,
                               output=["x0", "x1"])
    own = model.simulate(stop=5.0, interval=0.1, rtol=1e-10, atol=1e-10)
    assert len(result) == len(own["x0"])
    np.testing.assert_allclose(result["x0"], own["x0"], atol=1e-5)
    np.testing.assert_allclose(result["x1"], own["x1"], atol=1e-5)


def test_a_model_that_cannot_be_exported_is_a_model_error(tmp_path, runtime):
    model = eqm.load(
        "model Clutch\n  Real v1(start = 0, fixed = true);\n  Real v2(start = 0);\n  Real f;\n"
        "  Boolean locked = time < 1;\nequation\n  der(v1) = 1 - f;\n  der(v2) = f;\n"
        "  if locked then\n    v1 = v2;\n  else\n    f = 0;\n  end if;\nend Clutch;\n"
    ).model()
    with pytest.raises(eqm.ModelError) as error:
        model.export_fmu(tmp_path / "d.fmu", kind="me")
    assert "E0902" in str(error.value)
    assert not (tmp_path / "d.fmu").exists()
    with pytest.raises(ValueError):
        model.export_fmu(tmp_path / "d.fmu", fmi=4)
