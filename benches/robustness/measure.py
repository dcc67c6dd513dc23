#!/usr/bin/env python3
"""Measures `eqm check` (and `eqm run` of nested_ifs) on the shapes of generate.py at growing
sizes: wall time, CPU time (user + system: on a shared machine the steadier number), peak resident memory (from /usr/bin/time -v), exit code and the first line of
the diagnostics. Every size runs in its own process with a time limit, and the nested packages
run under a 4 GiB address-space limit (`ulimit -v 4194304`), as a user with such a limit would.

Usage: measure.py [--eqm PATH] [--timeout S] [SHAPE[=N,N,...] ...]
  e.g. measure.py neural=16,32,64,128,256 packages=30000 nested_ifs=10000,100000
  `msl` checks Modelica.Electrical.Spice3.Examples.Spice3BenchmarkFourBitBinaryAdder of the library in
  $MSL (default /work/shared/msl, the directory that holds Modelica/).

Timings on a shared machine are indicative only; no test asserts them.
"""

import os
import resource
import subprocess
import sys
import tempfile

import generate

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_SIZES = {
    "neural": [16, 32, 64, 128, 256],
    "packages": [1000, 10000, 30000],
    "components": [250, 500, 1000, 1001],
    "extends": [1000, 10000, 20000],
    "nested_ifs": [1000, 10000, 100000],
    "msl": [0],
}
ADDRESS_SPACE_LIMIT = {"packages": 4194304 * 1024}


def msl_dir() -> str:
    given = os.environ.get("MSL")
    if given:
        return given
    for candidate in ["/work/shared/msl", "/work/shared/msl/Modelica 4.1.0"]:
        if os.path.isdir(os.path.join(candidate, "Modelica")):
            return candidate
    sys.exit("no Modelica Standard Library found; set MSL")


def command(eqm: str, shape: str, n: int, path: str) -> list:
    if shape == "msl":
        return [eqm, "check", "--library", msl_dir(), "--model",
                "Modelica.Electrical.Spice3.Examples.Spice3BenchmarkFourBitBinaryAdder"]
    if shape == "nested_ifs":
        return [eqm, "run", path, "--model", "M", "--stop", "1e-4",
                "--out", os.path.join(os.path.dirname(path), "out.csv")]
    if shape == "packages":
        # The dotted name of the innermost model is longer than one argument may be; the
        # file's only model is the default.
        return [eqm, "check", path]
    return [eqm, "check", path, "--model", generate.model_name(shape, n)]


def measure(eqm: str, shape: str, n: int, timeout: float) -> str:
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, f"{shape}_{n}.mo")
        if shape != "msl":
            with open(path, "w") as f:
                f.write(generate.SHAPES[shape](n))
        limit = ADDRESS_SPACE_LIMIT.get(shape)

        def restrict():
            if limit:
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        args = ["/usr/bin/time", "-v"] + command(eqm, shape, n, path)
        try:
            done = subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                                  preexec_fn=restrict)
        except subprocess.TimeoutExpired:
            return f"{shape:>10} {n:>7}  TIMEOUT after {timeout:.0f} s"
        wall, peak, cpu = "?", "?", 0.0
        for line in done.stderr.splitlines():
            line = line.strip()
            if line.startswith("User time") or line.startswith("System time"):
                cpu += float(line.split(": ", 1)[1])
            if line.startswith("Elapsed (wall clock) time"):
                wall = line.split(": ", 1)[1].strip()
            elif line.startswith("Maximum resident set size"):
                peak = f"{int(line.split(': ', 1)[1]) // 1024} MiB"
        message = next((l.strip() for l in (done.stdout + done.stderr).splitlines()
                        if l.strip() and not l.startswith("\t")
                        and not l.startswith("Command ")), "")
        return (f"{shape:>10} {n:>7}  wall {wall:>8}  cpu {cpu:7.2f} s  peak {peak:>9}  exit {done.returncode}  "
                f"{message[:90]}")


def main() -> None:
    args = sys.argv[1:]
    eqm = os.path.join(ROOT, "target", "release", "eqm")
    timeout = 120.0
    wanted = []
    while args:
        arg = args.pop(0)
        if arg == "--eqm":
            eqm = args.pop(0)
        elif arg == "--timeout":
            timeout = float(args.pop(0))
        else:
            wanted.append(arg)
    if not wanted:
        wanted = list(DEFAULT_SIZES)
    for item in wanted:
        shape, _, sizes = item.partition("=")
        if shape not in DEFAULT_SIZES:
            sys.exit(f"unknown shape {shape}; known: {', '.join(DEFAULT_SIZES)}")
        ns = [int(s) for s in sizes.split(",")] if sizes else DEFAULT_SIZES[shape]
        for n in ns:
            print(measure(eqm, shape, n, timeout), flush=True)


if __name__ == "__main__":
    main()
