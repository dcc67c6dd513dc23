"""Ctrl-C (SIGINT) stops a long run with KeyboardInterrupt while the GIL is released, also
between two steps when the next output row is far away."""

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
    model.simulate(stop=STOP, interval=INTERVAL, solver="euler", step=1)
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted %.2f" % (time.perf_counter() - started), flush=True)
"""


def interrupted_after(stop, interval):
    """Starts a run of `stop` steps with a row every `interval`, sends SIGINT after half a
    second, and returns what the script printed and how long the run went on after it."""
    script = SCRIPT.replace("STOP", repr(stop)).replace("INTERVAL", repr(interval))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    sent = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    return out, time.perf_counter() - sent


def test_sigint_stops_a_run():
    out, stopped_after = interrupted_after(9e6, 1)
    assert out.startswith("interrupted"), out
    # The run stops at its next row, well before the nine million rows are done.
    assert stopped_after < 5, stopped_after


def test_sigint_stops_a_run_between_rows():
    # One row at the start and the next at the end, a trillion steps later: the run stops
    # before its next step.
    out, stopped_after = interrupted_after(1e12, 1e12)
    assert out.startswith("interrupted"), out
    assert stopped_after < 5, stopped_after
