"""Run time of system-dynamics files side by side: EQM, PySD and pysimlin.

    python benches/sd_peers/sd_peers.py EQM_BINARY SUITE_DIR [--repeat 5]

Run by `benches/sd_peers/run`, which builds EQM and installs the peers. For each model (the
test suite's largest files and a generated model of 1000 arrayed stocks, written as Vensim
and as XMILE) it measures

- the whole process: `eqm run FILE --out tmp.csv` against a fresh Python process that imports
  PySD (or pysimlin), reads the file and runs it, each the median of `--repeat` runs;
- in-process: reading and running the file inside this Python process (EQM through its Python
  package, `eqm.load(path).simulate()`; PySD `read_vensim`/`read_xmile` then `run`; pysimlin
  `load` then `run`), and the run alone once the model is read, each the median of
  `--repeat` runs after one warm-up.

Each tool runs the file with its own simulation specs; a tool that cannot read or run a file
shows what it said instead of a time. Prints one Markdown table; times in milliseconds.
"""

import argparse
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

SUITE_FILES = [
    "vector_select/test_vector_select.mdl",
    "subscript_aggregation/test_subscript_aggregation.mdl",
    "subscripted_delays/test_subscripted_delays.mdl",
    "subscripted_trig/test_subscripted_trig.xmile",
    "delay_xmile/test_delay_xmile.xmile",
    "special_characters_xmile/test_special_variable_names.xmile",
]

N = 1000


def arrayed_mdl() -> str:
    """1000 stocks, each filled at a rate that steps up at t = 10 and drained over 5 time
    units, and their sum: 1600 Euler steps of DT 1/16, saved once per time unit."""
    lines = [
        "{UTF-8}",
        f"d: (e1-e{N}) ~ ~|",
        "level[d] = INTEG(inflow[d] - outflow[d], 10) ~ widgets ~|",
        "inflow[d] = 2 + STEP(1, 10) ~ widgets/Month ~|",
        "outflow[d] = level[d] / lifetime ~ widgets/Month ~|",
        "lifetime = 5 ~ Month ~|",
        "total = SUM(level[d!]) ~ widgets ~|",
        "FINAL TIME = 100 ~ Month ~|",
        "INITIAL TIME = 0 ~ Month ~|",
        "SAVEPER = 1 ~ Month ~|",
        "TIME STEP = 0.0625 ~ Month ~|",
    ]
    return "\n".join(lines) + "\n"


def arrayed_xmile() -> str:
    """The same model as XMILE."""
    return f"""<xmile xmlns="http://docs.oasis-open.org/xmile/ns/XMILE/v1.0" version="1.0">
<header><name>arrayed</name></header>
<sim_specs method="Euler"><start>0</start><stop>100</stop><dt>0.0625</dt><save_step>1</save_step></sim_specs>
<dimensions><dim name="d" size="{N}"/></dimensions>
<model><variables>
<stock name="level"><dimensions><dim name="d"/></dimensions><eqn>10</eqn><inflow>inflow</inflow><outflow>outflow</outflow></stock>
<flow name="inflow"><dimensions><dim name="d"/></dimensions><eqn>2 + STEP(1, 10)</eqn></flow>
<flow name="outflow"><dimensions><dim name="d"/></dimensions><eqn>level / lifetime</eqn></flow>
<aux name="lifetime"><eqn>5</eqn></aux>
<aux name="total"><eqn>SUM(level[*])</eqn></aux>
</variables></model>
</xmile>
"""


def median_ms(action, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def process(command, repeat: int):
    def once():
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError((done.stderr or done.stdout).strip().splitlines()[-1][:60])
    try:
        once()
        return f"{median_ms(once, repeat):.0f}"
    except Exception as e:  # noqa: BLE001 - a peer's failure is shown, not fatal
        return f"fails: {str(e)[:60]}"


def pysd_read(path: pathlib.Path):
    import pysd
    if path.suffix == ".mdl":
        return pysd.read_vensim(str(path))
    return pysd.read_xmile(str(path))


def in_process(read, run, repeat: int):
    """(read and run, run alone) in ms, or the failure."""
    try:
        model = read()
        run(model)
        both = median_ms(lambda: run(read()), repeat)
        alone = median_ms(lambda: run(model), repeat)
        return f"{both:.1f}", f"{alone:.1f}"
    except Exception as e:  # noqa: BLE001
        text = f"fails: {str(e).splitlines()[0][:60] if str(e) else type(e).__name__}"
        return text, text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("eqm")
    parser.add_argument("suite", type=pathlib.Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = pathlib.Path(tempfile.mkdtemp())
    models = [args.suite / f for f in SUITE_FILES]
    for name, text in [("arrayed_1000.mdl", arrayed_mdl()), ("arrayed_1000.xmile", arrayed_xmile())]:
        (work / name).write_text(text)
        models.append(work / name)
    import eqm
    import simlin
    rows = []
    for path in models:
        # PySD and pysimlin write files beside the model (PySD its Python translation).
        local = work / path.name
        if local != path:
            local.write_bytes(path.read_bytes())
        out = work / "out.csv"
        whole = [
            process([args.eqm, "run", str(local), "--out", str(out)], args.repeat),
            process([sys.executable, "-c", "import pysd, sys; f = sys.argv[1]; "
                     "(pysd.read_vensim(f) if f.endswith('.mdl') else pysd.read_xmile(f)).run()", str(local)],
                    args.repeat),
            process([sys.executable, "-c", "import simlin, sys; simlin.load(sys.argv[1]).run(analyze_loops=False)",
                     str(local)], args.repeat),
        ]
        inside = [
            in_process(lambda: eqm.load(local).model(), lambda m: m.simulate(), args.repeat),
            in_process(lambda: pysd_read(local), lambda m: m.run(), args.repeat),
            in_process(lambda: simlin.load(local), lambda m: m.run(analyze_loops=False), args.repeat),
        ]
        rows.append([path.name, *whole, *(t for pair in inside for t in pair)])
    print("| model | EQM process | PySD process | pysimlin process | EQM in-process | EQM run | "
          "PySD in-process | PySD run | pysimlin in-process | pysimlin run |")
    print("|" + " --- |" * 10)
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
