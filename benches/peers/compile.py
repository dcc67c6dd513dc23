"""Compile time of EQM and Rumoca side by side, on the same Modelica sources.

Usage: python3 benches/peers/compile.py EQM_BINARY OUT_DIR [--runs N] [WORD ...]

Input: the `eqm` binary to time, a directory for the model files and results, the number of
runs of each measurement (default 5; the median is reported) and words that select models by
name (a model is measured when its name contains one of them). Output: one Markdown table on standard output and the same figures as `compile.csv` in
OUT_DIR. Rumoca is timed through its Python package (`rumoca`); when that is not installed its
columns say so and EQM is still measured. This script deliberately measures no simulation: it
times how long each tool takes to turn a source file into a model ready to run.

Columns:
- eqm check: wall time of the whole process `eqm check FILE --model M` (parse, flatten,
  structural analysis and code generation, and the report).
- eqm compile: the sum of the stage times `eqm run -v` prints, except the simulation itself:
  parse through code generation, the symbolic Jacobian and the JIT compilation.
- rumoca process: wall time of a Python process that imports `rumoca` and loads the model
  (`Session().load`), the nearest whole-process equivalent (Rumoca has no command-line binary
  on PyPI); most of it is the import.
- rumoca load: `Session().load` timed inside that process (parse, flatten, DAE).
- rumoca structure: `Model.structure()` after the load (matching, BLT and tearing).
"""

import csv
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")

RUMOCA_SNIPPET = """
import sys, time
import rumoca
path, model = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
m = rumoca.Session().load(path, model=model)
t1 = time.perf_counter()
m.structure()
t2 = time.perf_counter()
print(1e3 * (t1 - t0), 1e3 * (t2 - t1))
"""


def chain_source(n):
    """The chain of N masses of `eqm_testkit::chain::Chain::standard(n).eqm_source()`."""
    return f"""// A chain of N masses; mass 1 is tied to a wall, each further mass to the one before it,
// by a spring c with a parallel damper d. The last mass starts displaced by 1.
model Chain
  parameter Integer N = {n};
  parameter Real c = 100.0;
  parameter Real d = 0.1;
  parameter Real m = 1.0;
  Real s[N](start = {{if i == N then 1.0 else 0.0 for i in 1:N}}, each fixed = true);
  Real v[N](each start = 0, each fixed = true);
  Real f[N] "Force of spring and damper i, pulling mass i towards mass i - 1";
equation
  f[1] = c*s[1] + d*v[1];
  for i in 2:N loop
    f[i] = c*(s[i] - s[i - 1]) + d*(v[i] - v[i - 1]);
  end for;
  for i in 1:N loop
    der(s[i]) = v[i];
  end for;
  for i in 1:N - 1 loop
    m*der(v[i]) = f[i + 1] - f[i];
  end for;
  m*der(v[N]) = -f[N];
end Chain;
"""


def model_text(name):
    with open(os.path.join(MODELS, name)) as f:
        return f.read()


# (row name, file name, text, model name, what it is)
CASES = [
    (
        "FirstOrder",
        "FirstOrder.mo",
        lambda: model_text("FirstOrder.mo"),
        "Textbook.BasicEquations.SimpleExample.FirstOrder",
        "1 equation, a package that uses the MSL",
    ),
    ("Chain100", "Chain.mo", lambda: chain_source(100), "Chain", "chain of 100 masses, 300 equations"),
    ("HeatLine", "HeatLine.mo", lambda: model_text("HeatLine.mo"), "HeatLine", "1101 equations, arrays"),
    ("Ladder", "Ladder.mo", lambda: model_text("Ladder.mo"), "Ladder", "1120 equations, 160 loops"),
    ("DenseLoop", "DenseLoop.mo", lambda: model_text("DenseLoop.mo"), "DenseLoop", "80x80 dense loop"),
    ("Chain10000", "Chain.mo", lambda: chain_source(10000), "Chain", "chain of 10^4 masses, 3*10^4 equations"),
]


def wall(command):
    """The wall time of `command` in milliseconds, and its completed process."""
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    return 1e3 * (time.perf_counter() - start), done


def eqm_stages(stderr):
    """The sum of the stage times (ms) of `eqm run -v`'s report, the simulation left out."""
    total = 0.0
    for line in stderr.splitlines():
        name, sep, rest = line.rpartition(":")
        rest = rest.strip()
        if sep and rest.endswith(" ms") and name.strip() != "simulate":
            total += float(rest[:-3])
    return total


def median_or_none(values):
    return statistics.median(values) if values else None


def measure(eqm, path, model, runs, rumoca):
    """The medians of one case (see the module documentation for the columns)."""
    check, compile_, process, load, structure = [], [], [], [], []
    # The first run of each command warms the file cache and is not counted.
    for k in range(runs + 1):
        ms, done = wall([eqm, "check", path, "--model", model])
        if done.returncode != 0:
            sys.exit(f"eqm check failed on {path}:\n{done.stdout}{done.stderr}")
        _, done = wall([eqm, "run", "-v", path, "--model", model, "--stop", "1e-6", "--out", os.devnull])
        if done.returncode != 0:
            sys.exit(f"eqm run failed on {path}:\n{done.stdout}{done.stderr}")
        if k > 0:
            check.append(ms)
            compile_.append(eqm_stages(done.stderr))
        if rumoca:
            ms, done = wall([sys.executable, "-c", RUMOCA_SNIPPET, path, model])
            if done.returncode != 0:
                print(f"rumoca failed on {path}: {done.stderr.strip().splitlines()[-1]}", file=sys.stderr)
                rumoca = False
            elif k > 0:
                a, b = done.stdout.split()
                process.append(ms)
                load.append(float(a))
                structure.append(float(b))
    return [median_or_none(v) for v in (check, compile_, process, load, structure)]


def main():
    args = sys.argv[1:]
    runs = 5
    if "--runs" in args:
        k = args.index("--runs")
        runs = int(args[k + 1])
        del args[k : k + 2]
    if len(args) < 2:
        sys.exit(__doc__)
    eqm, out, words = os.path.abspath(args[0]), args[1], [w.lower() for w in args[2:]]
    rumoca = subprocess.run([sys.executable, "-c", "import rumoca"], capture_output=True).returncode == 0
    if not rumoca:
        print("rumoca is not installed (pip install rumoca): its columns are left empty", file=sys.stderr)
    os.makedirs(out, exist_ok=True)
    rows = []
    for name, file, text, model, what in CASES:
        if words and not any(w in name.lower() for w in words):
            continue
        # Rumoca reads every Modelica file of the directory a model is in: one directory each.
        directory = os.path.join(out, name)
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, file)
        with open(path, "w") as f:
            f.write(text())
        print(f"{name} ...", file=sys.stderr)
        rows.append([name, what] + measure(eqm, path, model, runs, rumoca))
    header = ["model", "size", "eqm check ms", "eqm compile ms", "rumoca process ms", "rumoca load ms", "rumoca structure ms"]
    with open(os.path.join(out, "compile.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for row in rows:
        cells = row[:2] + ["-" if v is None else f"{v:.1f}" for v in row[2:]]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
