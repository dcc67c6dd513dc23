"""The ``%%eqm`` cell magic: a model typed in a notebook cell, compiled, run and plotted.

``%load_ext eqm`` registers it. ``%%eqm [--stop T] [--plot x,v] [--model NAME] [--name VAR]
[--library DIR]`` followed by model text compiles the cell's model (the only one, or
``--model``; with the library directories of ``--library``, repeatable, as for ``eqm run``), simulates it
with the run settings given, stores the :class:`eqm.Result` in the notebook's variable
``VAR`` (``eqm_result`` by default) and plots the variables named (every state when none).
A model with errors shows its diagnostics instead.
"""

import argparse
import shlex


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="%%eqm", add_help=False)
    p.add_argument("--model")
    p.add_argument("--name", default="eqm_result")
    p.add_argument("--plot", default=None)
    p.add_argument("--library", action="append", default=[])
    p.add_argument("--no-plot", action="store_true")
    for setting in ("start", "stop", "interval", "rtol", "atol", "step"):
        p.add_argument(f"--{setting}", type=float)
    p.add_argument("--solver")
    return p


def run_cell(line: str, cell: str, namespace: dict):
    """What ``%%eqm`` does, callable without IPython: returns the result (``None`` after a
    model error, whose text is printed)."""
    import eqm
    args = _parser().parse_args(shlex.split(line))
    settings = {k: getattr(args, k) for k in ("start", "stop", "interval", "rtol", "atol", "step", "solver")}
    try:
        model = eqm.Session(text=cell, libraries=args.library).model(args.model)
        result = model.simulate(**settings)
    except eqm.ModelError as e:
        print(e)
        return None
    namespace[args.name] = result
    if not args.no_plot:
        names = args.plot.split(",") if args.plot else []
        result.plot(*names)
    return result


def load_ipython_extension(ipython) -> None:
    """Registers ``%%eqm`` with IPython."""
    from IPython.core.magic import register_cell_magic

    def eqm(line, cell):
        run_cell(line, cell, ipython.user_ns)

    register_cell_magic(eqm)
