"""Ctrl-C (SIGINT) stops a long run with KeyboardInterrupt while the GIL is released."""

import signal
import subprocess
import sys
import time

SCRIPT = r"""
import sys, time, eqm
model = eqm.Session(text="model D\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -1e-9*x;\nend D;\n").model()
model.simulate(stop=1)
print("ready", flush=True)
started = time.perf_counter()
try:
    model.simulate(stop=9e6, interval=1, solver="euler", step=1)
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted %.2f" % (time.perf_counter() - started), flush=True)
"""


def test_sigint_stops_a_run():
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    sent = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    stopped_after = time.perf_counter() - sent
    assert out.startswith("interrupted"), out
    # The run stops at its next row, well before the nine million rows are done.
    assert stopped_after < 5, stopped_after
