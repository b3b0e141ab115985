"""Type stubs of the extension module (the Rust side); the documented API is `stiction`."""

from os import PathLike
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

__version__: str

class InputError(ValueError):
    file: Optional[str]
    path: Optional[str]
    message: str

class SimulationError(RuntimeError):
    time: float
    component: str
    message: str
    file: Optional[str]
    partial: Any

_Path = Union[str, PathLike[str]]

class CoreSystem:
    @staticmethod
    def from_file(path: _Path) -> CoreSystem: ...
    @staticmethod
    def from_json(text: str, file: _Path, base_dir: _Path) -> CoreSystem: ...
    def with_set(self, sets: List[str]) -> CoreSystem: ...
    def to_json(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def file(self) -> str: ...
    @property
    def base_dir(self) -> str: ...
    @property
    def component_names(self) -> List[Tuple[str, str]]: ...
    @property
    def columns(self) -> List[Tuple[str, str]]: ...
    def run(
        self,
        sets: List[str],
        threads: Optional[int] = None,
        stop_time: Optional[float] = None,
        inputs: Optional[Dict[str, Any]] = None,
    ) -> Dict[str, Any]: ...
    def check(self) -> List[Tuple[str, Optional[str], str]]: ...

def components() -> List[Dict[str, Any]]: ...
def export_fmu(model: str, fmi: int, interface: str, params: List[str], path: _Path) -> Tuple[str, str]: ...
def study_plan(
    system_json: str, file: _Path, base_dir: _Path, vary: List[str], samples: Optional[int], seed: int, outputs: List[str]
) -> Tuple[int, List[str]]: ...
def study_rows(
    system_json: str,
    file: _Path,
    base_dir: _Path,
    vary: List[str],
    samples: Optional[int],
    seed: int,
    outputs: List[str],
    start: int,
    stop: int,
    threads: int,
    progress: Optional[Callable[[int], None]] = None,
) -> List[Tuple[int, List[float], List[float], str, str]]: ...
