"""Library directories from Python (``libraries=``, as ``eqm --library``): a small library
written by each test as Modelica stores packages (``package.mo``, ``package.order``, a class
per file, a sub-package directory, a single-file package), used by a model of the user's and
loaded by class name, searched in the command line's order, read only as far as the lookups
reach; and the installed Modelica Standard Library, where this machine has it, against the
``eqm`` command's results and the library's reference results."""

import math
import os
import pathlib

import numpy as np
import pytest

import eqm
from conftest import REPO, cli_csv

LIBRARY = {
    "Lib/package.mo": 'within;\npackage Lib "a test library"\n  constant Real base = 2;\nend Lib;\n',
    "Lib/package.order": "Blocks\nExamples\nBroken\nbase\n",
    "Lib/Blocks/package.mo": "within Lib;\npackage Blocks\nend Blocks;\n",
    "Lib/Blocks/package.order": "Decay\n",
    "Lib/Blocks/Decay.mo": (
        "within Lib.Blocks;\nmodel Decay \"x' = -k x\"\n  parameter Real k = base;\n"
        "  Real x(start = 1, fixed = true);\nequation\n  der(x) = -k*x;\nend Decay;\n"),
    "Lib/Examples/package.mo": "within Lib;\npackage Examples\nend Examples;\n",
    "Lib/Examples/Run.mo": (
        "within Lib.Examples;\nmodel Run\n  Lib.Blocks.Decay d(k = 3 * Single.c);\n"
        "  annotation(experiment(StopTime = 2, Interval = 0.5));\nend Run;\n"),
    # Never reached by the models below: its syntax error must not be reported, nor the file read.
    "Lib/Broken/package.mo": "within Lib;\npackage Broken\n  model Bad\n    Real = ;\n  end Bad;\nend Broken;\n",
    "Single.mo": "package Single\n  constant Real c = 0.5;\nend Single;\n",
}

USER = "model M\n  Lib.Blocks.Decay d;\nend M;\n"


def write_library(root: pathlib.Path, files=LIBRARY) -> pathlib.Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture(autouse=True)
def no_library_environment(monkeypatch):
    """The tests choose their library directories; the caller's environment adds none."""
    monkeypatch.delenv("EQMPATH", raising=False)
    monkeypatch.delenv("MODELICAPATH", raising=False)


def test_a_user_model_uses_a_class_of_a_library_directory(tmp_path):
    lib = write_library(tmp_path / "libs")
    model = eqm.Session(text=USER, libraries=[lib]).model()
    result = model.simulate(stop=1, interval=0.25, rtol=1e-10, atol=1e-12)
    # k = Lib.base = 2, found through the package's constant.
    assert np.max(np.abs(result["d.x"] - np.exp(-2.0 * result.time))) < 1e-8
    assert model.parameters["d.k"].value == 2.0


def test_a_library_class_is_loaded_by_name_with_its_experiment(tmp_path):
    lib = write_library(tmp_path / "libs")
    for session in (eqm.load(model="Lib.Examples.Run", libraries=[str(lib)]),
                    eqm.Session(libraries=lib, model="Lib.Examples.Run")):
        model = session.model()
        assert model.name == "Lib.Examples.Run"
        result = model.simulate(rtol=1e-10, atol=1e-12)
        # The experiment annotation: stop at 2 with rows every 0.5; k = 3 * Single.c = 1.5.
        assert list(result.time) == [0.0, 0.5, 1.0, 1.5, 2.0]
        assert np.max(np.abs(result["d.x"] - np.exp(-1.5 * result.time))) < 1e-8


def test_a_package_directory_itself_is_a_library(tmp_path):
    lib = write_library(tmp_path / "libs")
    model = eqm.Session(text=USER, libraries=[lib / "Lib"]).model()
    assert model.parameters["d.k"].value == 2.0


def test_the_first_directory_holding_a_package_provides_it(tmp_path, monkeypatch):
    first = write_library(tmp_path / "first")
    changed = dict(LIBRARY)
    changed["Lib/package.mo"] = changed["Lib/package.mo"].replace("base = 2", "base = 5")
    second = write_library(tmp_path / "second", changed)
    assert eqm.Session(text=USER, libraries=[first, second]).model().parameters["d.k"].value == 2.0
    assert eqm.Session(text=USER, libraries=[second, first]).model().parameters["d.k"].value == 5.0
    # As on the command line: the directories given first, then EQMPATH, then MODELICAPATH.
    monkeypatch.setenv("MODELICAPATH", str(first))
    assert eqm.Session(text=USER).model().parameters["d.k"].value == 2.0
    assert eqm.Session(text=USER, libraries=[second]).model().parameters["d.k"].value == 5.0
    monkeypatch.setenv("EQMPATH", str(second))
    assert eqm.Session(text=USER).model().parameters["d.k"].value == 5.0


def test_only_the_files_a_lookup_reaches_are_read(tmp_path, monkeypatch):
    lib = write_library(tmp_path / "libs")
    read = []
    original = eqm._FileSystem.read_file

    def recording(path):
        read.append(pathlib.Path(path).relative_to(lib).as_posix())
        return original(path)

    monkeypatch.setattr(eqm._FileSystem, "read_file", staticmethod(recording))
    eqm.Session(text=USER, libraries=[lib]).model().simulate(stop=1)
    assert "Lib/Blocks/Decay.mo" in read
    assert not [p for p in read if "Broken" in p or "Examples" in p or p == "Single.mo"], read


def test_an_error_in_a_library_file_names_that_file(tmp_path):
    files = dict(LIBRARY)
    files["Lib/Blocks/Decay.mo"] = files["Lib/Blocks/Decay.mo"].replace("-k*x", "-k*y")
    lib = write_library(tmp_path / "libs", files)
    with pytest.raises(eqm.ModelError) as info:
        eqm.Session(text=USER, libraries=[lib]).model()
    e = info.value
    assert e.code == "E0205"
    assert pathlib.Path(e.file) == lib / "Lib" / "Blocks" / "Decay.mo"
    assert e.line == 6


def test_a_directory_that_cannot_be_listed_is_a_warning(tmp_path):
    lib = write_library(tmp_path / "libs")
    check = eqm.Session(text=USER, libraries=[tmp_path / "missing", lib]).model().check()
    warnings = [w for w in check.warnings if w["code"] == "W0240"]
    assert len(warnings) == 1 and "missing" in warnings[0]["message"], check.warnings


def test_load_needs_a_source_or_a_model():
    with pytest.raises(TypeError):
        eqm.load()


def installed_msl():
    """The Modelica Standard Library beside the repository (as CI lays it out) or on this
    machine, else None."""
    for candidate in (os.environ.get("EQM_MSL"), REPO.parent / "shared" / "msl", "/work/shared/msl"):
        if candidate and (pathlib.Path(candidate) / "Modelica" / "package.mo").is_file():
            return pathlib.Path(candidate)
    return None


MSL = installed_msl()
needs_msl = pytest.mark.skipif(MSL is None, reason="the Modelica Standard Library is not installed")


def reference_dir(name):
    return MSL.parent / "msl-reference" / pathlib.Path(*name.split("."))


def against_the_command_line(name, eqm_bin):
    """Runs the library example ``name`` from Python and with ``eqm run --model``: the same
    rows bit for bit (or the same first error code when neither can run it); returns the
    Python result, or None when it cannot run."""
    code, header, rows = cli_csv(eqm_bin, "--model", name, "--library", MSL)
    try:
        result = eqm.load(model=name, libraries=[MSL]).model().simulate()
    except eqm.ModelError as e:
        assert code != 0, f"the command line runs {name}, Python says {e}"
        assert f"[{e.code}]" in header, header
        return None
    assert code == 0, f"Python runs {name}, the command line says {header}"
    assert header == ["time"] + result.names
    assert np.array_equal(np.array(rows), result.to_numpy())
    return result


def against_the_reference(name, result):
    folder = reference_dir(name)
    trajectory = folder / (name.rsplit(".", 1)[1] + ".csv.gz")
    if not trajectory.is_file():
        pytest.skip(f"no reference result for {name}")
    comparison = eqm.compare(result, trajectory, signals=folder / "comparisonSignals.txt")
    assert comparison.passed, comparison.signals


@needs_msl
def test_an_example_of_the_standard_library_matches_its_reference(eqm_bin):
    name = "Modelica.Thermal.HeatTransfer.Examples.TwoMasses"
    result = against_the_command_line(name, eqm_bin)
    assert result is not None
    # Its experiment: StopTime = 1, Interval = 1e-3.
    assert result.time[-1] == 1.0 and len(result) == 1001
    against_the_reference(name, result)


@needs_msl
def test_the_pid_controller_example_runs_as_on_the_command_line(eqm_bin):
    name = "Modelica.Blocks.Examples.PID_Controller"
    result = against_the_command_line(name, eqm_bin)
    if result is None:
        pytest.skip(f"{name} does not compile yet, from Python as from the command line")
    against_the_reference(name, result)


def test_the_cell_magic_takes_library_directories(tmp_path):
    pytest.importorskip("matplotlib").use("Agg")
    from eqm.magic import run_cell
    lib = write_library(tmp_path / "libs")
    namespace = {}
    result = run_cell(f"--library {lib} --no-plot --stop 1 --rtol 1e-10 --atol 1e-12", USER, namespace)
    assert result is not None and abs(result["d.x"][-1] - math.exp(-2.0)) < 1e-8
