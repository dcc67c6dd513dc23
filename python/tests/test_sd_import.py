"""System-dynamics files in Python: a Stella/XMILE or Vensim file given to a `Session` is
imported by the library, runs with its own specs and reports its variables under the names the
file writes (spaces kept)."""

import numpy as np

import eqm

TEACUP_XMILE = """<xmile xmlns="http://docs.oasis-open.org/xmile/ns/XMILE/v1.0" version="1.0">
<sim_specs method="Euler"><start>0</start><stop>30</stop><dt>0.125</dt></sim_specs>
<model><variables>
<stock name="Teacup Temperature"><eqn>180</eqn><outflow>Heat_Loss_to_Room</outflow></stock>
<flow name="Heat Loss to Room"><eqn>(Teacup_Temperature - Room_Temperature)/Characteristic_Time</eqn></flow>
<aux name="Room Temperature"><eqn>70</eqn></aux>
<aux name="Characteristic Time"><eqn>10</eqn></aux>
</variables></model>
</xmile>
"""

TEACUP_VENSIM = """{UTF-8}
Teacup Temperature = INTEG(-Heat Loss to Room, 180) ~ Degrees ~|
Heat Loss to Room = (Teacup Temperature - Room Temperature)/Characteristic Time ~ Degrees/Minute ~|
Room Temperature = 70 ~ Degrees ~|
Characteristic Time = 10 ~ Minutes ~|
INITIAL TIME = 0 ~ Minute ~|
FINAL TIME = 30 ~ Minute ~|
TIME STEP = 0.125 ~ Minute ~|
SAVEPER = TIME STEP ~ Minute ~|
"""


def euler_teacup(times):
    """Euler's recurrence T(k+1) = T(k) - DT (T(k) - 70)/10 with DT = 0.125, in closed form."""
    steps = np.rint(np.asarray(times) / 0.125)
    return 70 + 110 * (1 - 0.125 / 10) ** steps


def check_teacup(path):
    result = eqm.load(path).model().simulate()
    temperature = np.asarray(result["Teacup Temperature"])
    times = np.asarray(result["time"])
    assert times[0] == 0 and times[-1] == 30 and len(times) == 241
    np.testing.assert_allclose(temperature, euler_teacup(times), rtol=1e-12)
    np.testing.assert_allclose(result["Heat Loss to Room"], (temperature - 70) / 10, rtol=1e-12)


def test_an_xmile_file_runs_under_its_own_names(tmp_path):
    path = tmp_path / "teacup.xmile"
    path.write_text(TEACUP_XMILE)
    check_teacup(path)


def test_a_vensim_file_runs_under_its_own_names(tmp_path):
    path = tmp_path / "teacup.mdl"
    path.write_text(TEACUP_VENSIM)
    check_teacup(path)


def test_an_error_in_an_xmile_file_is_a_model_error_at_its_xml_line(tmp_path):
    path = tmp_path / "bad.xmile"
    path.write_text(TEACUP_XMILE.replace("Characteristic_Time</eqn>", "Characteristic_Tim</eqn>"))
    try:
        eqm.load(path).model()
    except eqm.ModelError as error:
        assert error.code == "E1004"
        assert error.line == 5
    else:
        raise AssertionError("the unknown name was not reported")
