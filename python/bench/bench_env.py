"""What the MuJoCo comparisons (vs_mujoco.py, step_loop.py) share: the pinned MuJoCo and its
venv, the stiction binary and package, and MuJoCo's settings for holding objects.

MuJoCo is not a dependency of the stiction package: it is installed from PyPI, at the one
version pinned here, into a venv of its own (target/py-bench-mujoco by default), created on
the first run. The scripts run their MuJoCo part in that venv, in a child process.
"""

import os
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# One pinned version for every script: a figure is MuJoCo's at this version.
MUJOCO = "mujoco==4.0.0"
VENV = ROOT / "target" / "py-bench-mujoco"
G = 9.81


@dataclass(frozen=True)
class Settings:
    """The MuJoCo options a comparison varies (MJCF <option>, MuJoCo's XML reference).

    The defaults are what MuJoCo's documentation recommends against slow slippage of a held
    object: the elliptic friction cone with impratio > 1 (friction "harder" than the normal
    direction; the reference advises against high impratio with pyramidal cones), the
    noslip post-processing solver (off by default, noslip_iterations 0) run without early
    termination (noslip_tolerance 0; at its default 1e-6, and even at 1e-12, the pinched box
    of vs_mujoco.py creeps at a constant 4.5e-10 m/s), and the implicitfast integrator the
    changelog recommends for new models. vs_mujoco.py --sweep varies each of them.
    """

    integrator: str = "implicitfast"
    cone: str = "elliptic"
    impratio: float = 10.0
    noslip_iterations: int = 100
    noslip_tolerance: float = 0.0
    timestep: float = 5e-4

    def option(self, gravity=True):
        """The MJCF <option> element of these settings."""
        g = "0 0 -9.81" if gravity else "0 0 0"
        return (
            f'<option timestep="{self.timestep}" integrator="{self.integrator}" cone="{self.cone}" '
            f'impratio="{self.impratio}" noslip_iterations="{self.noslip_iterations}" '
            f'noslip_tolerance="{self.noslip_tolerance}" gravity="{g}"/>'
        )

    def describe(self):
        return (
            f"integrator {self.integrator}, cone {self.cone}, impratio {self.impratio:g}, "
            f"noslip_iterations {self.noslip_iterations}, noslip_tolerance {self.noslip_tolerance:g}, "
            f"timestep {self.timestep:g} s"
        )

    def to_dict(self):
        return asdict(self)

    def with_(self, **kw):
        return replace(self, **kw)


def require_stiction():
    """Import the stiction package, or exit saying how to install it (before anything is built)."""
    try:
        import stiction  # noqa: F401
    except ImportError:
        sys.exit(
            "this benchmark needs the stiction Python package, which this interpreter "
            f"({sys.executable}) does not have. Install it first (it builds the Rust core, "
            "several minutes on 2 cores), for example:\n"
            "    python3 -m venv .venv && . .venv/bin/activate\n"
            "    python3 -m pip install ./python\n"
            f"then run: python3 {' '.join(sys.argv)}"
        )


def stiction_binary(arg=None):
    """The stiction CLI: ARG, else the release binary under target/ or $CARGO_TARGET_DIR,
    else `stiction` on PATH; exits saying how to build it."""
    if arg:
        return arg
    for d in [os.environ.get("CARGO_TARGET_DIR"), ROOT / "target"]:
        if d and (Path(d) / "release" / "stiction").exists():
            return str(Path(d) / "release" / "stiction")
    found = shutil.which("stiction")
    if not found:
        sys.exit("no stiction binary: build it (cargo build --release), install it "
                 "(cargo install --path .) or pass --stiction PATH")
    return found


def mujoco_python(venv=VENV):
    """The Python of the MuJoCo venv, created with the pinned MuJoCo on first use."""
    venv = Path(venv)
    py = venv / "bin" / "python"
    want = MUJOCO.split("==")[1]
    probe = [str(py), "-c", "import mujoco; print(mujoco.__version__)"]
    ok = py.exists() and subprocess.run(probe, capture_output=True, text=True).stdout.strip() == want
    if not ok:
        print(f"creating {venv} with {MUJOCO} (from PyPI) ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "--quiet", MUJOCO], check=True)
    return py


def in_mujoco_venv():
    """True when this interpreter has the pinned MuJoCo."""
    try:
        import mujoco
    except ImportError:
        return False
    return mujoco.__version__ == MUJOCO.split("==")[1]


def contact_mu(model, data):
    """The sliding friction coefficient of each active contact (MuJoCo combines two geoms'
    coefficients by their maximum, so both geoms must carry it)."""
    return sorted({float(data.contact[i].friction[0]) for i in range(data.ncon)})
