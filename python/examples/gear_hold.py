"""A PI position controller (with velocity feedback) in Python holding a load with a self-locking geared joint, then
letting go of the motor: the gear holds the load by itself (speed exactly 0).

    python python/examples/gear_hold.py

The system is gear_hold.json beside this file: the motor torque ``tau`` is a system input
set at every step from the controller; the gear angle and speed are read back.
"""

from pathlib import Path

import stiction

HERE = Path(__file__).resolve().parent

KP, KI, KD = 200.0, 100.0, 40.0  # N·m/rad, N·m/(rad·s), N·m·s/rad
Q_REF = 1.0  # rad: lift the load to this angle (a ramp over the first second)
RELEASE = 2.0  # s: the controller lets go of the motor
STOP = 3.0  # s


def control(system=None):
    """Run the loop; returns (Result, the torque applied at each step)."""
    system = system or stiction.load(HERE / "gear_hold.json")
    torques = []
    with system.simulation() as sim:
        T = sim.step_size
        integral = 0.0
        while sim.steps * T < STOP - 0.5 * T:
            t = sim.steps * T
            q, v = sim.read("gear.q"), sim.read("gear.v")
            if t < RELEASE:
                e = min(t, 1.0) * Q_REF - q
                integral += e * T
                tau = KP * e + KI * integral - KD * v
            else:
                tau = 0.0
            sim.inputs["tau"] = tau
            torques.append(tau)
            sim.step()
        sim.inputs["tau"] = 0.0  # the last row's instant
        return sim.result(), torques


def main():
    result, _ = control()
    for t in (0.5, 1.0, 1.99, 2.5, 3.0):
        i = int(round(t / 0.01))
        print(f"t = {result.time[i]:4.2f} s   q = {result['q'][i]:.6f} rad   v = {result['v'][i]:+.6f} rad/s   "
              f"tau = {result['tau'][i]:+8.3f} N·m")


if __name__ == "__main__":
    main()
