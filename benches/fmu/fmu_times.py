#!/usr/bin/env python3
"""EQM's FMU export and the FMUs' runs through FMPy, against `eqm run` of the same model.

Usage: python3 benches/fmu/fmu_times.py [EQM]

EQM is the `eqm` binary (default target/release/eqm; the FMU runtime `libeqm_fmu.so` is taken
from beside it: build both with `cargo build --release -p eqm-cli -p eqm-fmu`). For a small
model (the bouncing ball), the delayed logistic equation and a generated chain of 10^4
first-order equations (`der(x[i]) = x[i-1] - x[i]`), prints the time of `eqm fmu` (FMI 2,
both interfaces) and the FMU's size, then the whole run of `eqm run` and of FMPy's
`simulate_fmu` in Model Exchange (FMPy's CVode) and Co-Simulation (EQM's own solver), each
the median of five, in milliseconds. FMPy's figures include loading the FMU, whose runtime
compiles the model when it is instantiated. Needs `fmpy`; not part of CI.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

import fmpy

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHAIN = """model Chain "A chain of first-order lags, 10^4 equations"
  parameter Integer n = 10000;
  Real x[n](each start = 1, each fixed = true);
equation
  der(x[1]) = -x[1];
  for i in 2:n loop
    der(x[i]) = x[i - 1] - x[i];
  end for;
  annotation(experiment(StopTime = 1, Interval = 0.1));
end Chain;
"""


def median_ms(run, times=5):
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return 1000 * statistics.median(samples)


def main():
    eqm = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "target", "release", "eqm")
    work = tempfile.mkdtemp(prefix="eqm-fmu-times-")
    chain = os.path.join(work, "chain.eqm")
    with open(chain, "w") as f:
        f.write(CHAIN)
    models = [
        ("bouncing ball", os.path.join(REPO, "examples", "bouncing_ball.eqm")),
        ("delayed logistic", os.path.join(REPO, "examples", "delayed_logistic.eqm")),
        ("chain of 10^4", chain),
    ]
    print("| model | export | FMU size | `eqm run` | FMPy ME | FMPy CS |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, path in models:
        fmu = os.path.join(work, os.path.basename(path)[:-4] + ".fmu")
        export = median_ms(lambda: subprocess.run([eqm, "fmu", path, "--kind", "both", "--out", fmu], check=True, capture_output=True))
        size = os.path.getsize(fmu) / 1e6
        own = median_ms(lambda: subprocess.run([eqm, "run", path], check=True, capture_output=True))
        me = median_ms(lambda: fmpy.simulate_fmu(fmu, fmi_type="ModelExchange"))
        cs = median_ms(lambda: fmpy.simulate_fmu(fmu, fmi_type="CoSimulation"))
        print(f"| {name} | {export:.0f} ms | {size:.1f} MB | {own:.0f} ms | {me:.0f} ms | {cs:.0f} ms |")


if __name__ == "__main__":
    main()
