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


SERIES_CSV = "t,supply\n0,10\n2,14\n4,6\n"

DATA_VENSIM = """{UTF-8}
supply := GET DIRECT DATA('series.csv', ',', 'A', 'B2') ~ Widgets ~|
held :HOLD BACKWARD: := GET DIRECT DATA('series.csv', ',', 'A', 'B2') ~ Widgets ~|
scale = GET DIRECT CONSTANTS('series.csv', ',', 'B3') ~ Widgets ~|
INITIAL TIME = 0 ~ Month ~|
FINAL TIME = 4 ~ Month ~|
TIME STEP = 0.5 ~ Month ~|
SAVEPER = TIME STEP ~ Month ~|
"""


def test_a_vensim_file_reads_the_data_file_beside_it(tmp_path):
    # The file is given by its path from another working directory: its data file is found
    # beside it, read by the package like the model file itself.
    (tmp_path / "series.csv").write_text(SERIES_CSV)
    path = tmp_path / "supply.mdl"
    path.write_text(DATA_VENSIM)
    result = eqm.load(path).model().simulate()
    times = np.asarray(result["time"])
    np.testing.assert_allclose(times, np.arange(0, 4.5, 0.5))
    # By hand: straight lines through (0, 10), (2, 14), (4, 6); held, the value of the last
    # time at or before; the constant is the cell B3.
    np.testing.assert_allclose(result["supply"], [10, 11, 12, 13, 14, 12, 10, 8, 6], rtol=1e-12)
    np.testing.assert_allclose(result["held"], [10, 10, 10, 10, 14, 14, 14, 14, 6], rtol=1e-12)
    np.testing.assert_allclose(result["scale"], 14.0, rtol=1e-12)


def test_a_missing_data_file_is_a_model_error_naming_it(tmp_path):
    path = tmp_path / "supply.mdl"
    path.write_text(DATA_VENSIM)
    try:
        eqm.load(path).model()
    except eqm.ModelError as error:
        assert error.code == "E1008"
        assert "series.csv" in str(error)
    else:
        raise AssertionError("the missing data file was not reported")
