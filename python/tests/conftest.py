"""Shared fixtures: the repository's paths and the `eqm` binary built by cargo (the reference
the package's results are compared with)."""

import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def eqm_binary() -> pathlib.Path:
    """The `eqm` binary: `$EQM_BIN`, else the newest of cargo's debug and release builds."""
    if os.environ.get("EQM_BIN"):
        return pathlib.Path(os.environ["EQM_BIN"])
    built = [REPO / "target" / p / "eqm" for p in ("debug", "release")]
    built = [p for p in built if p.exists()]
    if not built:
        raise RuntimeError("no eqm binary: run `cargo build -p eqm-cli` first or set EQM_BIN")
    return max(built, key=lambda p: p.stat().st_mtime)


# The FMU runtime library of the same build, for the exports of the tests and of the docs' tour
# (an installation finds it next to `eqm` on PATH instead).
if "EQM_FMU_RUNTIME" not in os.environ:
    try:
        _built = eqm_binary().parent
        for _runtime in (_built / "libeqm_fmu.so", _built / "deps" / "libeqm_fmu.so"):
            if _runtime.exists():
                os.environ["EQM_FMU_RUNTIME"] = str(_runtime)
                break
    except RuntimeError:
        pass


@pytest.fixture(scope="session")
def eqm_bin() -> pathlib.Path:
    return eqm_binary()


def cli_csv(binary, *args, timeout=600):
    """`eqm run ARGS` with its CSV on standard output: `(returncode, header, rows)`, each row
    parsed with `float`, which reads the shortest text of a double back to that double."""
    proc = subprocess.run([str(binary), "run", *map(str, args)], capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        return proc.returncode, proc.stderr, None
    lines = proc.stdout.splitlines()
    header = lines[0].split(",")
    rows = [[float(v) for v in line.split(",")] for line in lines[1:] if line]
    return 0, header, rows
