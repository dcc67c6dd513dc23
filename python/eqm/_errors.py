"""The exceptions of the package: a model that does not compile, a parameter that cannot change
without compiling again, and a run that failed part way (with the rows computed before)."""

from typing import Any, List, Optional


class ModelError(Exception):
    """A model with errors. Its text is every diagnostic rendered with its source excerpt;
    ``code``, ``file``, ``line`` and ``column`` locate the first error, ``diagnostics`` holds
    them all as dictionaries (code, severity, message, file, line, column, rendered)."""

    def __init__(self, message: str, code: Optional[str] = None, file: Optional[str] = None,
                 line: Optional[int] = None, column: Optional[int] = None,
                 diagnostics: Optional[List[dict]] = None) -> None:
        super().__init__(message)
        self.code = code
        self.file = file
        self.line = line
        self.column = column
        self.diagnostics = diagnostics or []

    def __reduce__(self):  # so that an error crosses process boundaries (Dask workers)
        return (type(self), (str(self), self.code, self.file, self.line, self.column, self.diagnostics))


class StructuralParameterError(ModelError):
    """A parameter whose value shaped the compiled model (an array size, a range, a
    condition): it changes only by compiling again (``recompile=True``)."""


class SimulationError(Exception):
    """A run that failed. ``time`` is where; ``code``, ``file``, ``line``, ``column`` locate the
    equation involved when the library could; ``result`` holds the rows computed before the
    failure (an :class:`eqm.Result`)."""

    def __init__(self, message: str, code: Optional[str] = None, file: Optional[str] = None,
                 line: Optional[int] = None, column: Optional[int] = None,
                 time: Optional[float] = None, partial: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.file = file
        self.line = line
        self.column = column
        self.time = time
        self._partial = partial
        self.result: Any = None

    def __reduce__(self):
        return (type(self), (str(self), self.code, self.file, self.line, self.column, self.time, None))
