"""A grasp that slips, rolls back and grips harder: the load on a held object grows; when the
object starts to slide on the finger pad, the loop restores the state it saved last and
retries from there with a larger grip force, until the whole motion is held.

    python python/examples/grasp_retry.py

The system is grasp.json beside this file (inputs ``grip`` and ``pull``).
"""

from pathlib import Path

import stiction

HERE = Path(__file__).resolve().parent

SAVE_EVERY = 50  # steps between saved states
SLIP = 1e-3  # m/s: the object slides along the pad (held, the pad's elastic element creeps at 1.6e-4)
MAX_RETRIES = 8
STOP = 1.0  # s


def pull_at(t):
    """The tangential load of the motion (N): it grows as the hand accelerates."""
    return 1.6 * t


def grasp(system=None, grip=1.0, factor=2.0):
    """Run the loop; returns (Result, grip force at each step of the final run, retries)."""
    system = system or stiction.load(HERE / "grasp.json")
    grips, retries = [], []
    with system.simulation() as sim:
        T = sim.step_size
        saved, saved_k = sim.save(), 0
        while sim.steps * T < STOP - 0.5 * T:
            k = sim.steps
            if abs(sim.read("object.v[0]")) > SLIP:
                if len(retries) == MAX_RETRIES:
                    raise RuntimeError(f"still slipping at t = {k * T} s with grip {grip} N")
                # Slipped: back to the last saved state, grip harder.
                sim.restore(saved)
                del grips[saved_k:]
                grip *= factor
                retries.append((k * T, grip))
                continue
            if k % SAVE_EVERY == 0:
                saved, saved_k = sim.save(), k
            sim.inputs["grip"] = grip
            sim.inputs["pull"] = pull_at(k * T)
            grips.append(grip)
            sim.step()
        # The inputs at the last row's instant.
        sim.inputs["grip"] = grip
        sim.inputs["pull"] = pull_at(sim.steps * T)
        return sim.result(), grips, retries


def main():
    result, grips, retries = grasp()
    for t, g in retries:
        print(f"slipped at t = {t:.3f} s: back to the last saved state, retry with grip {g:g} N")
    print(f"held to t = {result.time[-1]} s with grip {grips[-1]:g} N: x = {result['x'][-1]:.3e} m, "
          f"friction {result['fx'][-1]:.3f} N against a pull of {pull_at(result.time[-1]):.3f} N")


if __name__ == "__main__":
    main()
