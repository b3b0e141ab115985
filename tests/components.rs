//! Physics checks of individual components through small JSON systems.

mod common;
use serde_json::{json, Value};
use stiction::framework::{Recorder, Simulator};

fn simulate(v: Value) -> (Simulator, Recorder) {
    let (mut sim, plan) = common::build_value(&v);
    let mut rec = Recorder::default();
    sim.run(&plan, &mut rec, &mut |_| {}).unwrap();
    (sim, rec)
}

/// Torque-free rigid body with three different principal moments, spinning near its
/// intermediate axis (the tumbling case): (26) conserves energy and world angular momentum,
/// and the quaternion stays unit.
#[test]
fn rigid_body_torque_free_conserves_energy_and_angular_momentum() {
    let (i1, i2, i3) = (1.0, 2.0, 3.0);
    let w0 = [0.01, 3.0, 0.02];
    let v = json!({
        "solver": {"step": 1e-3, "stop_time": 10.0},
        "output": {"interval": 0.01, "signals": ["b.w[0]", "b.w[1]", "b.w[2]", "b.q[0]", "b.q[1]", "b.q[2]", "b.q[3]",
                                                 "b.w_body[0]", "b.w_body[1]", "b.w_body[2]"]},
        "components": {
            "b": {"type": "rigid_body", "mass": 1, "inertia": [i1, i2, i3], "init": {"w": w0}},
            "nothing": {"type": "force_source", "domain": "frame", "force": [0, 0, 0]}
        },
        "connections": [{"from": "nothing.body", "to": "b"}]
    });
    let (_, rec) = simulate(v);
    let mut tumbled = false;
    let e0 = 0.5 * (i1 * w0[0] * w0[0] + i2 * w0[1] * w0[1] + i3 * w0[2] * w0[2]);
    let l0 = [i1 * w0[0], i2 * w0[1], i3 * w0[2]];
    for r in &rec.rows {
        let (wb, q) = ([r[7], r[8], r[9]], [r[3], r[4], r[5], r[6]]);
        let e = 0.5 * (i1 * wb[0] * wb[0] + i2 * wb[1] * wb[1] + i3 * wb[2] * wb[2]);
        assert!((e - e0).abs() < 1e-6 * e0, "energy {e} vs {e0}");
        // World angular momentum R J ω_body.
        let lb = stiction::framework::nalgebra::Vector3::new(i1 * wb[0], i2 * wb[1], i3 * wb[2]);
        let rot = stiction::framework::nalgebra::UnitQuaternion::from_quaternion(
            stiction::framework::nalgebra::Quaternion::new(q[0], q[1], q[2], q[3]),
        );
        let lw = rot * lb;
        for k in 0..3 {
            assert!((lw[k] - l0[k]).abs() < 1e-6 * 6.0, "L[{k}] = {} vs {}", lw[k], l0[k]);
        }
        let qn = (q.iter().map(|x| x * x).sum::<f64>()).sqrt();
        assert!((qn - 1.0).abs() < 1e-12);
        if wb[1] < 0.0 {
            tumbled = true;
        }
    }
    assert!(tumbled, "the intermediate-axis spin never flipped (Dzhanibekov effect expected)");
}

/// A force at a body-fixed offset produces the moment r × f (Φ of an offset attachment).
#[test]
fn force_at_an_offset_turns_the_body() {
    let v = json!({
        "solver": {"step": 1e-4, "stop_time": 0.01},
        "output": {"interval": 0.01, "signals": ["b.w[2]", "b.v[1]"]},
        "components": {
            "b": {"type": "rigid_body", "mass": 2, "inertia": [0.3, 0.3, 0.5]},
            "push": {"type": "force_source", "domain": "point3", "force": [0, 1, 0]}
        },
        "connections": [{"from": "push.body", "to": "b", "at": [1, 0, 0]}]
    });
    let (_, rec) = simulate(v);
    let last = rec.rows.last().unwrap();
    // Over 0.01 s the body turns by < 2e-4 rad: ω_z ≈ t·(r × f)_z / Izz = 0.02, v_y = t/m.
    assert!((last[0] - 0.01 * 1.0 / 0.5).abs() < 1e-6, "w_z = {}", last[0]);
    assert!((last[1] - 0.01 / 2.0).abs() < 1e-9, "v_y = {}", last[1]);
}

/// A mass resting on a plane contact under a horizontal force below μ m g that changes
/// direction: after settling, its position does not drift at all (I_fricKN keeps p − e
/// constant in RK4).
#[test]
fn plane_contact_holds_a_pushed_mass_without_drift() {
    let v = json!({
        "solver": {"step": 1e-4, "stop_time": 6.5},
        "output": {"interval": 1e-2, "signals": {"x": "m.p[0]", "y": "m.p[1]", "fx": "floor.f[0]"}},
        "components": {
            "m": {"type": "point_mass", "mass": 1, "gravity": [0, 0, -9.81], "init": {"p": [0, 0, -9.81e-5]}},
            "floor": {"type": "plane_contact", "K": 1e5, "B": 300, "mu": 0.5},
            "push": {"type": "force_source", "domain": "point3", "force": ["4*cos(PI*t)", "4*sin(PI*t)", 0]}
        },
        "connections": [{"from": "floor.body", "to": "m"}, {"from": "push.body", "to": "m"}]
    });
    let (_, rec) = simulate(v);
    let (x, y) = (common::col(&rec, "x"), common::col(&rec, "y"));
    // The push (4 N < μ m g = 4.9 N) rotates with period 2 s; the elastic deflection
    // follows it exactly, so positions one period apart agree to round-off.
    let period = 2.0;
    let at = |t: f64| rec.time.iter().position(|s| (s - t).abs() < 5e-3).unwrap();
    let (i1, i2) = (at(2.0), at(2.0 + 2.0 * period));
    let (dx, dy) = (x[i2] - x[i1], y[i2] - y[i1]);
    eprintln!("plane contact: drift over 2 periods: ({dx:e}, {dy:e}) m; deflection amplitude {:e} m", x[i1].abs());
    assert!(x.iter().chain(&y).all(|v| v.abs() < 1e-4), "the mass slid");
    assert!(dx.abs() < 1e-12 && dy.abs() < 1e-12, "drift ({dx}, {dy})");
}
