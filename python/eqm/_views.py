"""The objects the API returns: a run's :class:`Result` and the products of the compiler
(:class:`Check`, :class:`Flat`, :class:`Explanation`, :class:`Analysis`), each rendering itself
in Jupyter (``_repr_html_``/``_repr_svg_``) and holding its numbers as numpy arrays.

The rows of a result arrive as one numpy array of row-major doubles (time first in each row)
that owns the buffer the library's run wrote them into: nothing is copied between the library
and Python, and numpy and pandas view that buffer without copying either.
"""

import html
import json
from typing import Any, Dict, List, Optional, Sequence

import numpy as np


def html_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A small HTML table, every cell escaped."""
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape('' if c is None else str(c))}</td>" for c in row) + "</tr>"
        for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class Result:
    """The rows of a run: ``time`` and one column per variable (full names), with units and
    descriptions, and the run's ``summary`` (steps, events, timings)."""

    def __init__(self, names: List[str], units: List[Optional[str]], descriptions: List[Optional[str]],
                 rows: np.ndarray, count: int, summary: Optional[Dict[str, Any]] = None,
                 notes: Optional[List[str]] = None) -> None:
        self.names = list(names)
        self.units = dict(zip(names, units))
        self.descriptions = dict(zip(names, descriptions))
        # A view: the one-dimensional rows as a table, without a copy.
        self._array = rows.reshape(count, len(names) + 1)
        self.summary: Dict[str, Any] = summary or {}
        self.notes: List[str] = notes or []

    def __len__(self) -> int:
        return self._array.shape[0]

    @property
    def time(self) -> np.ndarray:
        """The time of each row (a view)."""
        return self._array[:, 0]

    def __getitem__(self, name: str) -> np.ndarray:
        """The values of variable ``name``, one per row (a view); ``result["time"]`` the times."""
        if name == "time":
            return self.time
        try:
            k = self.names.index(name)
        except ValueError:
            raise KeyError(f"the result has no column `{name}`") from None
        return self._array[:, k + 1]

    def __contains__(self, name: str) -> bool:
        return name == "time" or name in self.names

    def to_numpy(self) -> np.ndarray:
        """Every row as a 2-D float64 array (a view): time in column 0, then the variables in
        the order of ``names``."""
        return self._array

    def to_pandas(self):
        """A DataFrame indexed by ``time``, one column per variable, over the same buffer (no
        copy); ``attrs["units"]`` and ``attrs["descriptions"]`` by column."""
        import pandas as pd
        index = pd.Index(self._array[:, 0], name="time", copy=False)
        frame = pd.DataFrame(self._array[:, 1:], index=index, columns=self.names, copy=False)
        frame.attrs["units"] = dict(self.units)
        frame.attrs["descriptions"] = dict(self.descriptions)
        return frame

    def to_arrow(self):
        """A pyarrow Table with ``time`` and the variables, each field's unit and description
        in its metadata (pyarrow wraps the numpy columns it is given)."""
        import pyarrow as pa
        fields = [pa.field("time", pa.float64())]
        arrays = [pa.array(self._array[:, 0])]
        for k, name in enumerate(self.names):
            meta = {}
            if self.units.get(name):
                meta["unit"] = self.units[name]
            if self.descriptions.get(name):
                meta["description"] = self.descriptions[name]
            fields.append(pa.field(name, pa.float64(), metadata=meta or None))
            arrays.append(pa.array(self._array[:, k + 1]))
        return pa.Table.from_arrays(arrays, schema=pa.schema(fields))

    def plot(self, *names: str, ax=None):
        """Plots ``names`` (every column when none) against time with matplotlib; returns the
        axes."""
        import matplotlib.pyplot as plt
        if ax is None:
            _, ax = plt.subplots()
        for name in names or self.names:
            unit = self.units.get(name)
            ax.plot(self.time, self[name], label=f"{name} [{unit}]" if unit else name)
        ax.set_xlabel("time")
        ax.legend()
        return ax

    def __repr__(self) -> str:
        return f"<eqm.Result {len(self)} rows x {len(self.names)} variables: {', '.join(self.names[:6])}{'...' if len(self.names) > 6 else ''}>"

    def _repr_html_(self) -> str:
        shown = self._array[: min(len(self), 10)]
        header = ["time"] + [f"{n} [{self.units[n]}]" if self.units.get(n) else n for n in self.names]
        rows = [[repr(float(v)) for v in row] for row in shown]
        more = f"<p>{len(self)} rows</p>"
        return html_table(header, rows) + more


class Check:
    """What ``eqm check`` says of a model without errors: its name, numbers of variables and
    equations, the branches chosen at translation, the unknowns dropped from equations because
    their coefficient is zero by the parameters' values, and the warnings."""

    def __init__(self, data: Dict[str, Any]) -> None:
        self.model: str = data["model"]
        self.variables: int = data["variables"]
        self.equations: int = data["equations"]
        self.branch_choices: List[str] = data["branch_choices"]
        self.zero_coefficients: List[str] = data["zero_coefficients"]
        self.warnings: List[dict] = data["warnings"]

    def __repr__(self) -> str:
        return f"<eqm.Check {self.model}: {self.variables} variables, {self.equations} equations, {len(self.warnings)} warnings>"

    def _repr_html_(self) -> str:
        rows = [("model", self.model), ("variables", self.variables), ("equations", self.equations)]
        rows += [("branch", b) for b in self.branch_choices]
        rows += [("zero coefficient", z) for z in self.zero_coefficients]
        rows += [("warning", w["rendered"]) for w in self.warnings]
        return html_table(("", ""), rows)


class Flat(str):
    """The flat model as ``eqm flatten`` prints it (a ``str``)."""

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(str(self))}</pre>"


class Explanation:
    """``eqm explain``: ``text``, the ``sorting`` (rows of block, equation, text, the unknown it
    solves for, in a loop), the bipartite graph (``graph_svg``) and the component diagram
    (``diagram_svg``)."""

    def __init__(self, data: Dict[str, Any], diagram: Optional[str]) -> None:
        self.text: str = data["text"]
        self.sorting: List[tuple] = data["sorting"]
        self.graph_svg: Optional[str] = data.get("graph_svg")
        self.graph_note: Optional[str] = data.get("graph_note")
        self.diagram_svg: Optional[str] = diagram

    def __str__(self) -> str:
        return self.text

    def sorting_frame(self):
        """The sorting as a pandas DataFrame."""
        import pandas as pd
        return pd.DataFrame(self.sorting, columns=["block", "equation", "text", "solves", "in_loop"])

    def _repr_svg_(self) -> Optional[str]:
        return self.graph_svg

    def _repr_html_(self) -> str:
        parts = ["<h4>Sorting</h4>", html_table(("block", "equation", "text", "solves", "in loop"), self.sorting)]
        if self.graph_svg:
            parts += ["<h4>Equations and unknowns</h4>", self.graph_svg]
        elif self.graph_note:
            parts.append(f"<p>{html.escape(self.graph_note)}</p>")
        if self.diagram_svg:
            parts += ["<h4>Components</h4>", self.diagram_svg]
        parts += ["<details><summary>explanation</summary><pre>", html.escape(self.text), "</pre></details>"]
        return "".join(parts)


class Analysis:
    """``eqm analyze``: ``states``, the matrix ``A`` of the linearisation (numpy, rows and
    columns in the order of ``states``), the ``eigenvalues`` (complex numpy array, slowest
    first), the whole report as ``data`` (its JSON form parsed) and ``text``, and the
    stability picture of the recommended method (``stability_svg``)."""

    def __init__(self, data: Dict[str, Any]) -> None:
        n = data["n"]
        self.states: List[str] = data["states"]
        self.A = np.frombuffer(data["a"], dtype=np.float64).reshape(n, n).copy()
        self.eigenvalues = np.array(data["eig_re"], dtype=float) + 1j * np.array(data["eig_im"], dtype=float)
        self.data: Dict[str, Any] = json.loads(data["json"])
        self.text: str = data["text"]
        self.stability_svg: Optional[str] = data["stability_svg"]

    @property
    def advice(self) -> Optional[Dict[str, Any]]:
        """The advice on stop time, step and method (from the JSON form)."""
        return self.data.get("advice")

    def __str__(self) -> str:
        return self.text

    def _repr_svg_(self) -> Optional[str]:
        return self.stability_svg

    def _repr_html_(self) -> str:
        eig = [(i + 1, f"{e.real:.6g}", f"{e.imag:.6g}") for i, e in enumerate(self.eigenvalues)]
        parts = ["<h4>Eigenvalues</h4>", html_table(("mode", "real", "imaginary"), eig)]
        advice = self.advice
        if isinstance(advice, dict):
            rows = [(k, json.dumps(v) if isinstance(v, (dict, list)) else v) for k, v in advice.items()]
            parts += ["<h4>Advice</h4>", html_table(("", ""), rows)]
        if self.stability_svg:
            parts += ["<h4>Eigenvalues in the stability region</h4>", self.stability_svg]
        parts += ["<details><summary>report</summary><pre>", html.escape(self.text), "</pre></details>"]
        return "".join(parts)


class Comparison:
    """The comparison of a result with a reference (``eqm.compare``): ``passed`` when every
    signal stays inside its tube, and ``signals``, one dictionary per signal (``name``,
    ``passed``, ``verdict``, ``reason``, the tube's half-widths ``tube_time`` and ``tube_value``,
    and for a signal that leaves its tube the first ``time`` outside with ``value``, ``lower``,
    ``upper`` and the counts ``outside`` of ``checked`` rows)."""

    def __init__(self, signals: List[Dict[str, Any]], tolerance: float) -> None:
        self.signals = signals
        self.tolerance = tolerance
        self.passed = all(s["passed"] for s in signals)

    def __bool__(self) -> bool:
        return self.passed

    def failures(self) -> List[Dict[str, Any]]:
        """The signals that fail, in order."""
        return [s for s in self.signals if not s["passed"]]

    def __repr__(self) -> str:
        lines = [("pass  " if s["passed"] else "FAIL  ") + s["name"] + ("" if s["passed"] else "  " + s["reason"])
                 for s in self.signals]
        passed = sum(s["passed"] for s in self.signals)
        lines.append(f"{passed} of {len(self.signals)} signals inside their tubes (tolerance {self.tolerance})")
        return "\n".join(lines)
