"""stiction: co-simulation of mechanical systems with dry friction, from Python.

The simulation core is the Rust crate of the same name (modular RK4 of Kikuuwe & Yamamoto
with implicit-Euler friction models); this package drives it without files or a command
line::

    import stiction
    system = stiction.load("examples/rolling_sphere.json")
    result = system.run()
    result.time, result["center_vx"]          # numpy arrays: s, m/s

Units are SI throughout (N, m, s, rad); ``Result.units`` gives each column's unit.

Errors are exceptions: :class:`InputError` (a ``ValueError``) for a bad system description
or argument, carrying the file and the JSON path (``err.path == "components.block.mass"``),
and :class:`SimulationError` (a ``RuntimeError``) when a component fails during a run,
carrying the time (s) and the component.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._core import InputError, SimulationError

__version__: str = _core.__version__

__all__ = [
    "InputError",
    "SimulationError",
    "System",
    "Simulation",
    "Result",
    "Finding",
    "ComponentType",
    "load",
    "components",
    "export_fmu",
    "study",
]

PathLike = Union[str, "os.PathLike[str]"]


def _assignments(values: Optional[Mapping[str, Any]], what: str) -> List[str]:
    """``{"block.mass": 2.0}`` -> ``["block.mass=2.0"]``: the CLI's ``--set`` strings.

    Values are written as JSON (floats by their shortest round-trip text, so the Rust side
    reads back the very same number; strings quoted; lists and dicts as JSON).
    """
    if values is None:
        return []
    if not isinstance(values, Mapping):
        raise TypeError(f"{what} must be a dict of 'component.parameter' -> value, got {type(values).__name__}")
    out = []
    for key, value in values.items():
        if not isinstance(key, str):
            raise TypeError(f"{what}: keys must be strings like 'block.mass', got {key!r}")
        if isinstance(value, np.generic):
            value = value.item()
        elif isinstance(value, np.ndarray):
            value = value.tolist()
        try:
            text = json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise InputError(f"{what}[{key!r}]: {e}") from None
        out.append(f"{key}={text}")
    return out


class System:
    """A validated system description (the JSON of ``stiction run``), immutable.

    Create it with :func:`load`. It holds the JSON document, so it can be copied with
    changes (:meth:`with_set`), pickled and sent to other processes (Dask workers).
    """

    __slots__ = ("_core",)

    def __init__(self, core: "_core.CoreSystem") -> None:
        self._core = core

    @property
    def name(self) -> str:
        """The system's name (its ``"name"``, else the file's stem)."""
        return self._core.name

    @property
    def file(self) -> str:
        """The file it was loaded from (``"<dict>"`` for a dict)."""
        return str(self._core.file)

    @property
    def base_dir(self) -> str:
        """Directory that relative paths in the system (tables, FMUs) are taken from."""
        return str(self._core.base_dir)

    @property
    def components(self) -> Dict[str, str]:
        """Component name -> type name, in file order."""
        return dict(self._core.component_names)

    @property
    def signals(self) -> Dict[str, str]:
        """Output column label -> signal (``"sphere.v[0]"``), in column order."""
        return dict(self._core.columns)

    def to_dict(self) -> Dict[str, Any]:
        """The JSON document as Python objects (a copy)."""
        return json.loads(self._core.to_json())

    def to_json(self) -> str:
        """The JSON document as text."""
        return self._core.to_json()

    def with_set(self, set: Mapping[str, Any]) -> "System":
        """A new, validated System with ``--set`` assignments applied.

        ``set`` maps ``"component.parameter"`` (also ``"m.init.v[0]"``, ``"solver.step"``,
        ``"output.interval"``) to a value in the parameter's unit. Raises :class:`InputError`
        naming the assignment or the JSON path.
        """
        return System(self._core.with_set(_assignments(set, "set")))

    def run(
        self,
        set: Optional[Mapping[str, Any]] = None,
        threads: Optional[int] = None,
        stop_time: Optional[float] = None,
        inputs: Optional[Mapping[str, Any]] = None,
    ) -> "Result":
        """Simulate and return the sampled output signals.

        :param set: ``--set`` assignments for this run only (see :meth:`with_set`).
        :param threads: worker threads (default: the solver's ``threads``, else all cores).
            Results are bit-identical for any number.
        :param stop_time: end time in s (default: the file's ``solver.stop_time``).
        :param inputs: values of the system's ``"inputs"`` by name: a number, a callable
            ``f(t)`` (read at every RK4 stage time) or rows ``(t, value)`` (a table,
            interpolated linearly, held outside); inputs not given keep their start value.
        :raises InputError: bad assignment or argument (with ``.path`` when in the JSON).
        :raises SimulationError: a component failed (``.time`` in s, ``.component``;
            ``.partial`` is the :class:`Result` of the rows before the failure).
        :raises KeyboardInterrupt: Ctrl-C; the run stops at its next output row and this
            System is unchanged.

        The GIL is released while the simulation runs.
        """
        try:
            d = self._core.run(_assignments(set, "set"), threads, stop_time, dict(inputs) if inputs else None)
        except SimulationError as e:
            # The rows computed before the failure (the CLI keeps them in its CSV).
            if isinstance(getattr(e, "partial", None), dict):
                e.partial = Result(e.partial)
            raise
        return Result(d)

    def simulation(self, threads: Optional[int] = None) -> "Simulation":
        """A :class:`Simulation` of this system to step from Python (a controller in the
        loop), at t = 0 with its first output row recorded.

        :param threads: worker threads (default: the solver's ``threads``, else all cores).
        """
        return Simulation(self._core, threads)

    def check(self) -> List["Finding"]:
        """The findings of ``stiction check``: stability and well-posedness of every
        element, and output sampling that does not fall on steps."""
        return [Finding(level, comp, msg) for level, comp, msg in self._core.check()]

    def __reduce__(self):
        return (_system_from_json, (self.to_json(), self.file, self.base_dir))

    def __repr__(self) -> str:
        return f"<stiction.System {self.name!r} from {self.file!r}: {len(self.components)} components>"


def _system_from_json(text: str, file: str, base_dir: str) -> System:
    return System(_core.CoreSystem.from_json(text, file, base_dir))


class Result:
    """The sampled output of a run: one row per output interval.

    ``result.time`` is the time column (s); ``result["label"]`` is a column (a float64
    numpy array, in ``result.units["label"]``); ``result.labels`` lists the columns.
    """

    def __init__(self, d: Dict[str, Any]) -> None:
        self.name: str = d["name"]
        #: Column labels (without ``time``), in the order of the system's ``output.signals``.
        self.labels: List[str] = list(d["labels"])
        #: Unit of every column and of ``time`` ("" when unknown, e.g. raw states).
        self.units: Dict[str, str] = {"time": "s", **dict(zip(self.labels, d["units"]))}
        #: Sample times, s: k·T as the exact decimal read back (0.009, not 0.009000000000000001),
        #: as in the CLI's CSV.
        self.time: np.ndarray = np.frombuffer(d["time"], dtype="<f8")
        self._columns: Dict[str, np.ndarray] = {
            label: np.frombuffer(col, dtype="<f8") for label, col in zip(self.labels, d["columns"])
        }
        #: Steps taken.
        self.steps: int = d["steps"]

    def __getitem__(self, label: str) -> np.ndarray:
        if label == "time":
            return self.time
        try:
            return self._columns[label]
        except KeyError:
            raise KeyError(f"no column {label!r}; columns: {', '.join(self.labels)}") from None

    def __contains__(self, label: object) -> bool:
        return label == "time" or label in self._columns

    def __iter__(self) -> Iterator[str]:
        return iter(["time", *self.labels])

    def keys(self) -> List[str]:
        """``["time", *labels]``."""
        return ["time", *self.labels]

    def __len__(self) -> int:
        """Number of rows."""
        return len(self.time)

    def to_numpy(self) -> np.ndarray:
        """A structured array with fields ``time`` and every label (float64)."""
        out = np.empty(len(self.time), dtype=[(k, "<f8") for k in self.keys()])
        for k in self.keys():
            out[k] = self[k]
        return out

    def to_pandas(self):
        """A ``pandas.DataFrame`` with columns ``time`` and every label (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError("Result.to_pandas() needs pandas: pip install pandas (or use to_numpy())") from e
        return pd.DataFrame({k: self[k] for k in self.keys()})

    def __repr__(self) -> str:
        return f"<stiction.Result {self.name!r}: {len(self)} rows x {', '.join(self.keys())}>"


@dataclass(frozen=True)
class Finding:
    """One finding of :meth:`System.check`."""

    #: ``"info"`` or ``"warning"``.
    level: str
    #: The component it is about, or None for the whole system.
    component: Optional[str]
    message: str

    def __str__(self) -> str:
        where = f"{self.component}: " if self.component else ""
        return f"{self.level}: {where}{self.message}"


@dataclass(frozen=True)
class ComponentType:
    """A component type of :func:`components` (``stiction components``)."""

    name: str
    #: ``"admittance"`` (force in, motion out) or ``"impedance"`` (motion in, force out).
    kind: str
    summary: str
    #: (name, unit, default or None when required, doc) per parameter.
    params: Tuple[Tuple[str, str, Optional[str], str], ...]
    #: (name, domain, doc) per port.
    ports: Tuple[Tuple[str, str, str], ...]
    #: (name, length (0: depends on the parameters), unit, doc) per signal.
    signals: Tuple[Tuple[str, int, str, str], ...]


def load(path_or_dict: Union[PathLike, Mapping[str, Any]], base_dir: Optional[PathLike] = None) -> System:
    """Load and validate a system: a JSON file's path, or the same document as a dict.

    :param base_dir: for a dict, the directory relative paths (tables, FMUs) are taken from
        (default: the current directory); a file's own directory otherwise.
    :raises InputError: with ``.file`` and ``.path`` (the JSON path) of the problem.
    """
    if isinstance(path_or_dict, Mapping):
        try:
            text = json.dumps(path_or_dict, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise InputError(f"<dict>: not JSON: {e}") from None
        return System(_core.CoreSystem.from_json(text, "<dict>", os.fspath(base_dir or os.getcwd())))
    return System(_core.CoreSystem.from_file(os.fspath(path_or_dict)))


def components() -> List[ComponentType]:
    """Every component type: parameters (with units and defaults), ports and signals."""
    return [
        ComponentType(
            d["name"],
            d["kind"],
            d["summary"],
            tuple(tuple(p) for p in d["params"]),
            tuple(tuple(p) for p in d["ports"]),
            tuple(tuple(s) for s in d["signals"]),
        )
        for d in _core.components()
    ]


def export_fmu(
    model: str,
    fmi: int = 2,
    interface: str = "cs",
    params: Optional[Mapping[str, float]] = None,
    path: Optional[PathLike] = None,
) -> Path:
    """Export the gear or a friction model as an FMU, as ``stiction fmu export`` does.

    :param model: ``"gear"`` (StictionGear), ``"friction"`` (StictionFriction) or
        ``"friction-mass"`` (StictionFrictionMass, Co-Simulation only).
    :param fmi: FMI version, 2 or 3.
    :param interface: ``"cs"`` (Co-Simulation), ``"me"`` (Model Exchange) or ``"both"``.
    :param params: start values of parameters, inputs or states by name (SI units, see the
        FMU's modelDescription.xml).
    :param path: the .fmu to write (default: ``<Identifier>.fmu`` in the current directory).
    :returns: the path written.
    :raises InputError: unknown model, parameter or value.
    """
    if fmi not in (2, 3):
        raise InputError(f"fmi={fmi!r}: expected 2 or 3")
    plist = []
    for k, v in (params or {}).items():
        try:
            plist.append(f"{k}={float(v)!r}")
        except (TypeError, ValueError):
            raise InputError(f"params[{k!r}]: expected a number, got {v!r}") from None
    target = os.fspath(path) if path is not None else None
    if target is None:
        ident = {"gear": "StictionGear", "friction": "StictionFriction", "friction-mass": "StictionFrictionMass"}
        target = f"{ident.get(model, model)}.fmu"
    _core.export_fmu(model, fmi, interface, plist, target)
    return Path(target)


from ._simulation import Simulation  # noqa: E402
from ._study import study  # noqa: E402  (needs the names above)
