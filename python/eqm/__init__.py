"""EQM from Python: compile, explain, analyse and simulate equation-based models.

A :class:`Session` holds source texts; :meth:`Session.model` compiles a model once into a
:class:`Model`, which runs any number of simulations with changed parameters and start values
without compiling again (:meth:`Model.simulate`, :meth:`Model.simulate_many`). Results are
:class:`Result` objects whose numpy array owns the buffer the library's run wrote (no copy),
viewed by pandas without one either. Every error of a model is an :class:`ModelError` with its code and location;
a run that fails is a :class:`SimulationError` with the rows computed before. Every decision
(defaults, stop time, which parameters are structural) is the ``eqm`` library's; this package
only converts.
"""

import itertools
import os
import shutil
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native
from ._errors import ModelError, SimulationError, StructuralParameterError
from ._views import Analysis, Check, Comparison, Explanation, Flat, Result

__all__ = [
    "Session", "Model", "Result", "Parameter", "load", "compilations",
    "ModelError", "SimulationError", "StructuralParameterError",
    "Check", "Flat", "Explanation", "Analysis", "Comparison", "compare",
]
__version__ = _native.__version__

_SETTINGS = ("start", "stop", "interval", "rtol", "atol", "step", "solver", "interpreter", "max_rows")


def compilations() -> Dict[str, int]:
    """How many models (``models``) and native programs (``native``) this process compiled."""
    models, native = _native.compilations()
    return {"models": models, "native": native}


class Parameter:
    """A parameter of a compiled model: its value in the next run (``None`` when computed from
    other parameters), unit, description, and whether it is ``settable`` without compiling
    and ``structural`` (its value shaped the compiled model)."""

    __slots__ = ("name", "value", "settable", "structural", "unit", "description")

    def __init__(self, name, value, settable, structural, unit, description):
        self.name, self.value, self.settable = name, value, settable
        self.structural, self.unit, self.description = structural, unit, description

    def __repr__(self) -> str:
        unit = f" [{self.unit}]" if self.unit else ""
        kind = " structural" if self.structural else ""
        return f"Parameter({self.name} = {self.value}{unit}{kind})"


class Parameters(Mapping[str, Parameter]):
    """The parameters of a model by full name; ``model.parameters["k"].value``."""

    def __init__(self, items: List[Parameter]) -> None:
        self._items = {p.name: p for p in items}

    def __getitem__(self, name: str) -> Parameter:
        return self._items[name]

    def __iter__(self):
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return "Parameters(" + ", ".join(repr(p) for p in self._items.values()) + ")"

    def _repr_html_(self) -> str:
        from ._views import html_table
        rows = [(p.name, p.value, p.unit or "", p.description or "", "yes" if p.structural else "")
                for p in self._items.values()]
        return html_table(("name", "value", "unit", "description", "structural"), rows)


PathLike = Union[str, os.PathLike]


class _FileSystem:
    """How the library reads library directories and the data files models name: through
    Python (this package reads every file). The library decides what to read and when, and asks only for the classes its
    lookups reach; a method that raises ``OSError`` tells it the reason."""

    @staticmethod
    def list_dir(path: PathLike) -> List[Tuple[str, bool]]:
        """The entries of a directory as ``(name, is_dir)``, a symbolic link counted as what
        it points to; a name that is not text (no class can have it) is left out."""
        entries = []
        with os.scandir(path) as it:
            for entry in it:
                try:
                    entry.name.encode("utf-8")
                    is_dir = entry.is_dir()
                except (UnicodeEncodeError, OSError):
                    continue
                entries.append((entry.name, is_dir))
        return entries

    @staticmethod
    def read_file(path: PathLike) -> str:
        """The text of a file. Library files are UTF-8 as Modelica requires; a stray byte is
        read as U+FFFD rather than refusing the whole library."""
        with open(path, "rb") as f:
            return f.read().decode("utf-8", errors="replace")

    @staticmethod
    def is_file(path: PathLike) -> bool:
        return os.path.isfile(path)

    @staticmethod
    def read_data(path: PathLike) -> bytes:
        """The bytes of a data file a model names: a Vensim model's spreadsheet or text file
        (``GET XLS DATA``, ``GET DIRECT CONSTANTS``), a Modelica model's ``readMatrix`` file."""
        with open(path, "rb") as f:
            return f.read()


def _library_directories(libraries: Union[PathLike, Sequence[PathLike]]) -> Tuple[List[str], List[str]]:
    """The library directories in the library's search order (the directories of
    ``libraries``, as ``--library``, then those of ``EQMPATH``, then those of ``MODELICAPATH``),
    and the directories whose ``.eqm`` files the library reads in full (those of ``EQMPATH``),
    as the ``eqm`` command finds them."""
    if isinstance(libraries, (str, os.PathLike)):
        libraries = [libraries]
    named = [os.fspath(d) for d in libraries]
    return _native.library_directories(named, os.environ.get("EQMPATH"), os.environ.get("MODELICAPATH"))


class Session:
    """The sources of one compilation: ``files`` (paths, read here), ``text`` (a model typed
    in, named ``<text>``) and the library directories ``libraries`` (as ``eqm --library``:
    each holds top-level packages stored as Modelica stores them, ``Name/package.mo`` or
    ``Name.mo``, or is a package directory or a single-file package), searched before those of
    ``EQMPATH`` and ``MODELICAPATH``; a library class is read only when a lookup reaches it.
    ``model`` is the class :meth:`model` compiles when given no name, which may be a class of
    a library (``Modelica.Blocks.Examples.PID_Controller``), with no file of your own. Every
    model is compiled on request, once."""

    def __init__(self, files: Sequence[PathLike] = (), text: Optional[str] = None,
                 libraries: Union[PathLike, Sequence[PathLike]] = (), model: Optional[str] = None) -> None:
        sources: List[Tuple[str, bytes]] = []
        for path in files:
            with open(path, "rb") as f:
                sources.append((os.fspath(path), f.read()))
        if text is not None:
            sources.append(("<text>", text.encode("utf-8")))
        directories, eqm_file_directories = _library_directories(libraries)
        self._sources = sources
        self._default_model = model
        self._native = _native.NativeSession(sources, directories, _FileSystem, eqm_file_directories)
        self._models: Dict[Optional[str], "Model"] = {}

    def models(self) -> List[str]:
        """The names of the models of the user's sources, in file order."""
        return [name for name, _, _ in self._native.models()]

    def model(self, name: Optional[str] = None) -> "Model":
        """The model ``name`` (the session's ``model`` when ``None``, else the only model of
        the user's sources), compiled once; ``ModelError`` when it has errors."""
        if name is None:
            name = self._default_model
        if name not in self._models:
            self._models[name] = Model(self, name, self._native.compile(name, []))
        return self._models[name]

    def diagnostics(self) -> List[dict]:
        """The diagnostics of the sources themselves (syntax)."""
        return self._native.diagnostics()


def load(path_or_text: Optional[PathLike] = None, *, model: Optional[str] = None,
         libraries: Union[PathLike, Sequence[PathLike]] = ()) -> Session:
    """A session of one file, or of model text when the argument is not a file's path, with
    the library directories ``libraries`` (see :class:`Session`). Without a file or text,
    ``model`` names a class of the libraries: ``eqm.load(model="Modelica.Blocks.Examples.
    PID_Controller", libraries=["/opt/msl"]).model()`` compiles it, as ``eqm run --model``
    does."""
    if path_or_text is None:
        if model is None:
            raise TypeError("load() needs a file, a model text or model=")
        return Session(libraries=libraries, model=model)
    text = os.fspath(path_or_text)
    if "\n" not in text and os.path.exists(text):
        return Session(files=[text], libraries=libraries, model=model)
    return Session(text=text, libraries=libraries, model=model)


def _pairs(values: Optional[Mapping[str, float]]) -> List[Tuple[str, float]]:
    return [(str(k), float(v)) for k, v in (values or {}).items()]


def _settings(kwargs: Dict[str, Any], vars: Optional[Sequence[str]]) -> Dict[str, Any]:
    unknown = set(kwargs) - set(_SETTINGS)
    if unknown:
        raise TypeError(f"unknown run setting(s): {', '.join(sorted(unknown))}")
    settings = dict(kwargs)
    if vars is not None:
        settings["vars"] = [str(v) for v in vars]
    return settings


class Model:
    """A compiled model. Parameters and start values change without compiling again;
    a structural parameter raises :class:`StructuralParameterError` unless
    ``recompile=True``, which compiles the model for its value (once per value)."""

    def __init__(self, session: Session, name: Optional[str], native: Any) -> None:
        self._session = session
        self._name = name
        self._native = native
        self._structural_models: Dict[Tuple[Tuple[str, float], ...], Any] = {}
        self._params: Dict[str, float] = {}
        self._starts: Dict[str, float] = {}

    @property
    def name(self) -> str:
        return self._native.name

    @property
    def parameters(self) -> Parameters:
        """Every parameter with its value in the next run, unit and description."""
        items = [Parameter(*p) for p in self._native.parameters()]
        for p in items:
            if p.name in self._params:
                p.value = self._params[p.name]
        return Parameters(items)

    @property
    def variables(self) -> List[Tuple[str, str, Optional[str], Optional[str]]]:
        """Every variable: ``(name, kind, unit, description)``."""
        return self._native.variables()

    def set_parameter(self, name: str, value: float) -> None:
        """Sets parameter ``name`` for every later run (checked now, never recompiled)."""
        self._native.check_values([(name, float(value))], [])
        self._params[name] = float(value)

    def set_start(self, name: str, value: float) -> None:
        """Sets the start value of variable ``name`` for every later run (checked now)."""
        self._native.check_values([], [(name, float(value))])
        self._starts[name] = float(value)

    def _check_settable(self, params: Mapping[str, float]) -> None:
        # The library decides: an unknown name is a ModelError, a structural parameter a
        # StructuralParameterError (E0707).
        self._native.check_values(_pairs(params), [])

    def _native_for(self, params: Mapping[str, float], recompile: bool) -> Tuple[Any, Dict[str, float]]:
        """The compiled model for ``params`` and the parameters left to set at run time: with
        ``recompile``, the structural ones are compiled in (once per combination)."""
        if not recompile:
            # The run itself refuses an unknown or structural parameter, as this check would.
            return self._native, dict(params)
        structural = {p[0] for p in self._native.parameters() if p[3]}
        key = tuple(sorted((k, float(v)) for k, v in params.items() if k in structural))
        rest = {k: v for k, v in params.items() if k not in structural}
        if not key:
            return self._native, rest
        if key not in self._structural_models:
            self._structural_models[key] = self._session._native.compile(self._name, list(key))
        return self._structural_models[key], rest

    def simulate(self, start: Optional[float] = None, stop: Optional[float] = None,
                 solver: Optional[str] = None, rtol: Optional[float] = None,
                 atol: Optional[float] = None, step: Optional[float] = None,
                 interval: Optional[float] = None, params: Optional[Mapping[str, float]] = None,
                 starts: Optional[Mapping[str, float]] = None, vars: Optional[Sequence[str]] = None,
                 recompile: bool = False, interpreter: bool = False,
                 max_rows: Optional[int] = None) -> Result:
        """Simulates once; every setting left ``None`` is the model's or EQM's default (as for
        ``eqm run``). ``params`` and ``starts`` hold for this run only, on top of those set
        with :meth:`set_parameter` and :meth:`set_start`. The GIL is released while the run
        goes; Ctrl-C stops it (``KeyboardInterrupt``)."""
        settings = _settings(dict(start=start, stop=stop, solver=solver, rtol=rtol, atol=atol,
                                  step=step, interval=interval, interpreter=interpreter,
                                  max_rows=max_rows), vars)
        merged = {**self._params, **(params or {})}
        native, rest = self._native_for(merged, recompile)
        all_starts = {**self._starts, **(starts or {})}
        try:
            out = native.simulate(_pairs(rest), _pairs(all_starts), settings)
        except SimulationError as e:
            if e._partial is not None:
                e.result = Result(*e._partial, summary={}, notes=[])
            raise
        names, units, descriptions, rows, count, summary, notes = out
        return Result(names, units, descriptions, rows, count, summary=summary, notes=notes)

    def simulate_many(self, points: Union[Sequence[Mapping[str, float]], Mapping[str, Sequence[float]]],
                      workers: Optional[int] = None, vars: Optional[Sequence[str]] = None,
                      starts: Optional[Mapping[str, float]] = None, on_error: str = "raise",
                      **settings: Any):
        """Simulates at every point (a list of parameter dictionaries, or a grid: a dictionary
        of value lists, every combination with the first name changing slowest) on
        ``workers`` threads (all cores by default), compiled once. Returns one pandas
        DataFrame: the parameter columns, then ``time`` and the variables, every point's rows
        one after another (``attrs["units"]``, ``attrs["rows_per_point"]``,
        ``attrs["failures"]``). A failed point raises :class:`SimulationError` (its
        ``result`` the DataFrame) unless ``on_error="keep"``."""
        import pandas as pd
        table = _point_table(points)
        names = list(table.keys())
        values = np.column_stack([np.asarray(table[n], dtype=float) for n in names]) if names else np.zeros((0, 0))
        if len(values):
            self._check_settable(dict(zip(names, values[0])))
        merged_params = {k: v for k, v in self._params.items() if k not in names}
        if merged_params:
            names = names + list(merged_params)
            extra = np.tile(np.array(list(merged_params.values())), (len(values), 1))
            values = np.hstack([values, extra]) if values.size else extra
        run_settings = _settings(settings, vars)
        all_starts = {**self._starts, **(starts or {})}
        out = self._native.simulate_points(names, values.tolist(), _pairs(all_starts), run_settings, workers)
        all_names, units, descriptions, rows, count, counts, failures = out
        array = rows.reshape(count, len(all_names))
        frame = pd.DataFrame(array, columns=all_names, copy=False)
        frame.attrs["units"] = dict(zip(all_names[len(names) + 1:], units))
        frame.attrs["descriptions"] = dict(zip(all_names[len(names) + 1:], descriptions))
        frame.attrs["rows_per_point"] = list(counts)
        frame.attrs["failures"] = [(i, str(e)) for i, e in failures]
        if failures and on_error == "raise":
            i, error = failures[0]
            message = f"{len(failures)} of {len(counts)} points failed; the first, point {i}: {error}"
            err = SimulationError(message, getattr(error, "code", None), getattr(error, "file", None),
                                  getattr(error, "line", None), getattr(error, "column", None),
                                  getattr(error, "time", None))
            err.result = frame
            err.failures = failures
            raise err
        return frame

    def check(self) -> Check:
        """``eqm check``: the model's size and warnings (``ModelError`` when it has errors)."""
        return Check(self._session._native.check(self._name, []))

    def flatten(self) -> Flat:
        """The flat model as ``eqm flatten`` prints it."""
        return Flat(self._session._native.flatten(self._name, []))

    def explain(self, keep_aliases: bool = False) -> Explanation:
        """``eqm explain``: the text, the sorting table, the bipartite graph and the component
        diagram (SVG); with ``keep_aliases`` every equation as written, alias equations too."""
        native = self._session._native
        parts = native.explain(self._name, [], keep_aliases)
        try:
            diagram = native.diagram(self._name, [])
        except ModelError:
            diagram = None
        return Explanation(parts, diagram)

    def analyze(self, at: Optional[float] = None) -> Analysis:
        """``eqm analyze``: steady state, linearisation (``A`` as numpy), eigenvalues, time
        scales and the advice on method and step."""
        return Analysis(self._session._native.analyze(self._name, _pairs(self._params), at))

    def export_fmu(self, path: Optional[PathLike] = None, fmi: int = 2, kind: str = "both") -> Path:
        """``eqm fmu``: writes the model as an FMU (FMI ``fmi`` 2 or 3, interfaces ``kind``
        ``"me"``, ``"cs"`` or ``"both"``) to ``path`` (default: the model identifier with
        ``.fmu`` in the current directory) and returns the path. EQM's runtime library is found
        as the command line finds it: ``EQM_FMU_RUNTIME``, else next to the ``eqm`` executable
        on ``PATH``. ``ModelError`` when the model cannot be exported."""
        eqm_exe = shutil.which("eqm")
        near = [os.path.dirname(os.path.realpath(eqm_exe))] if eqm_exe else []
        identifier, data = self._session._native.fmu(self._name, _pairs(self._params), fmi, kind, near)
        target = Path(path) if path is not None else Path(f"{identifier}.fmu")
        target.write_bytes(data)
        return target

    def __repr__(self) -> str:
        return f"<eqm.Model {self.name}>"


def _point_table(points) -> Dict[str, List[float]]:
    """The points as columns by parameter name: a grid expanded (first name slowest), a list
    of dictionaries with every name in each."""
    if isinstance(points, Mapping):
        names = list(points.keys())
        combos = list(itertools.product(*[list(points[n]) for n in names]))
        return {n: [float(c[i]) for c in combos] for i, n in enumerate(names)}
    try:
        import pandas as pd
        if isinstance(points, pd.DataFrame):
            return {str(c): points[c].astype(float).tolist() for c in points.columns}
    except ImportError:
        pass
    points = list(points)
    names: List[str] = []
    for p in points:
        for n in p:
            if n not in names:
                names.append(n)
    for i, p in enumerate(points):
        missing = [n for n in names if n not in p]
        if missing:
            raise ValueError(f"point {i} gives no value for {', '.join(missing)}")
    return {n: [float(p[n]) for p in points] for n in names}


def _read_text(path: Union[str, os.PathLike]) -> str:
    """The text of a file, decompressed when it starts with gzip's magic bytes."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        import gzip
        data = gzip.decompress(data)
    return data.decode("utf-8")


def _table(value: Any, what: str) -> Tuple[List[str], List[float], List[List[float]]]:
    """A ``Result``, a DataFrame (time as its index named ``time`` or as a column ``time``) or
    the path of a CSV file (plain or gzip) as ``(names, time, columns)``."""
    if isinstance(value, Result):
        array = value.to_numpy()
        return list(value.names), array[:, 0].tolist(), [array[:, k + 1].tolist() for k in range(len(value.names))]
    if isinstance(value, (str, os.PathLike)):
        return _native.parse_csv(_read_text(value))
    if hasattr(value, "columns") and hasattr(value, "index"):
        if "time" in value.columns:
            time = value["time"]
            names = [str(c) for c in value.columns if c != "time"]
        elif value.index.name == "time":
            time = value.index
            names = [str(c) for c in value.columns]
        else:
            raise ValueError(f"the {what} DataFrame has no column `time` and no index named `time`")
        columns = [np.asarray(value[c], dtype=np.float64).tolist() for c in value.columns if str(c) in names]
        return names, np.asarray(time, dtype=np.float64).tolist(), columns
    raise TypeError(f"the {what} is a {type(value).__name__}; expected a Result, a DataFrame or a path")


def compare(result: Any, reference: Any, signals: Optional[Union[Sequence[str], str, os.PathLike]] = None,
            tolerance: float = 0.002) -> Comparison:
    """Compares ``result`` with ``reference`` by the tube method of the Modelica Association's
    reference results, as ``eqm compare`` does. Each may be a ``Result``, a DataFrame or the
    path of a CSV file (``.csv`` or ``.csv.gz``). ``signals`` names the signals to compare (a
    list, or the path of a ``comparisonSignals.txt``); default every signal of the reference."""
    if isinstance(signals, (str, os.PathLike)):
        signals = _native.parse_signal_list(_read_text(signals))
    elif signals is not None:
        signals = [str(s) for s in signals]
    rows = _native.compare(_table(result, "result"), _table(reference, "reference"), signals, float(tolerance))
    return Comparison(rows, float(tolerance))


def load_ipython_extension(ipython) -> None:
    """``%load_ext eqm``: registers the ``%%eqm`` cell magic."""
    from .magic import load_ipython_extension as load_magic
    load_magic(ipython)
