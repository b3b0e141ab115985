"""The step loop: :class:`Simulation`, made by :meth:`stiction.System.simulation`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from . import _core

if TYPE_CHECKING:  # pragma: no cover
    from . import Result


class Simulation(_core.CoreSimulation):
    """A simulation driven step by step from Python: a controller in the loop.

    Made by :meth:`System.simulation` (the system as loaded, with its ``set`` values)::

        with system.simulation() as sim:
            while sim.time < 2.0:
                q, v = sim.read("gear.q"), sim.read("gear.v")
                sim.inputs["tau"] = kp * (q_ref - q) - kd * v
                sim.step()
            result = sim.result()

    - ``sim.step(n=1)`` takes n steps of the solver's step T; ``sim.advance_to(t)`` the
      whole steps up to the first at or after t. The GIL is released while stepping and
      Ctrl-C stops at the next step (``KeyboardInterrupt``, the simulation at that step).
      Stepping may go on past the file's stop time.
    - ``sim.time`` (s), ``sim.steps``, ``sim.step_size``.
    - ``sim.inputs["u"] = value``: a system input (``"inputs"`` of the file), held at that
      value from the current step on, until set again (as ``stiction run --input`` would
      give it as a table that steps there).
    - ``sim.read("comp.signal[i]")``: any signal at the current step, as an output row at
      this instant would show it; ``sim.read_many([...])``: several at once, a numpy array;
      ``sim.outputs``: every output column, by label.
    - ``sim.result()``: the rows of the output interval recorded so far, a :class:`Result`
      equal to ``System.run``'s for the same inputs.
    - ``sim.save()`` -> bytes, ``sim.restore(bytes)``: the whole simulation's state (the
      format of ``stiction run --save-state``); continuing from a restored state gives the
      same bits as not having left it. Rows after the restored time are dropped.
    - Errors: :class:`InputError` (bad names, values, state bytes) and
      :class:`SimulationError` (``.time``, ``.component``) as for ``System.run``. After a
      SimulationError, restore a saved state before stepping on.
    - ``close()`` (or leaving a ``with`` block) frees it (FMU instances among others).
    """

    __slots__ = ()

    def read_many(self, names: Sequence[str]) -> np.ndarray:
        """The values of the signals ``names`` at the current step, in one call (float64)."""
        return np.frombuffer(self._read_many(list(names)), dtype="<f8")

    def result(self) -> "Result":
        """The rows recorded so far (one per output interval, from t = 0)."""
        from . import Result

        return Result(self._result())

    def __enter__(self) -> "Simulation":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.closed:
            return "<stiction.Simulation (closed)>"
        return f"<stiction.Simulation at t = {self.time} s, {self.steps} steps>"
