//! Bench binary (harness = false, no extra dependency): one step (69) of the geared robot
//! for n = 2, 6, 12 joints, and the axproj solvers alone with their iteration counts.
//!
//! Run: cargo bench -p stiction-components --bench gear_step

use nalgebra::DVector;
use std::hint::black_box;
use std::time::Instant;
use stiction_components::gear::GearModel;
use stiction_components::robot::axproj::{axproj, axproj_active_set, axproj_projection};
use stiction_components::robot::GearedRobot;
use stiction_components::robot::SerialRobot;

struct Lcg(u64);
impl Lcg {
    fn next(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        lo + (hi - lo) * ((self.0 >> 11) as f64 / (1u64 << 53) as f64)
    }
}

/// Mean time per call (µs) over at least `min_time` seconds.
fn time<F: FnMut()>(mut f: F, min_time: f64) -> (f64, usize) {
    for _ in 0..10 {
        f();
    }
    let start = Instant::now();
    let mut n = 0;
    while start.elapsed().as_secs_f64() < min_time {
        for _ in 0..10 {
            f();
        }
        n += 10;
    }
    (start.elapsed().as_secs_f64() / n as f64 * 1e6, n)
}

fn main() {
    let h = 1e-3;
    println!(
        "n  | step (69) µs | axproj active-set µs (patterns) | projection baseline µs (sweeps) | cases stuck/slip"
    );
    for n in [2usize, 6, 12] {
        let mut rng = Lcg(n as u64);
        let lengths = vec![1.0 / n as f64 * 2.0; n];
        let masses = vec![1.0; n];
        let robot = SerialRobot::planar(&lengths, &masses);
        let gears = (0..n).map(|i| GearModel::direct(0.1, if i % 2 == 0 { 0.3 } else { 1.1 })).collect();
        let gr = GearedRobot::new(robot, gears, vec![1.0; n]).expect("robot");
        // A mix of moving and resting joints under loads.
        let q: Vec<f64> = (0..n).map(|_| rng.next(-1.0, 1.0)).collect();
        let v: Vec<f64> = (0..n).map(|i| if i % 3 == 0 { 0.0 } else { rng.next(-0.5, 0.5) }).collect();
        let tu = DVector::from_fn(n, |_, _| rng.next(-20.0, 20.0));
        let tv = DVector::from_fn(n, |_, _| rng.next(-20.0, 20.0));
        let (step_us, _) = time(
            || {
                black_box(gr.step(black_box(&q), &v, &tu, &tv, h).expect("step"));
            },
            1.0,
        );
        // The axproj problem of that step.
        let (_, minv, p) = gr.matrices(&q);
        let ta = &tu - &tv;
        let mut phi = -(&p * &ta);
        for i in 0..n {
            phi[i] += gr.gears[i].gamma_u * tu[i] + gr.gears[i].gamma_v * tv[i];
        }
        let vstar = DVector::from_column_slice(&v) + (&minv * &ta) * h;
        let a = &minv * h;
        let r = axproj(&vstar, &a, &phi, &p, Some(&v)).expect("axproj");
        let stuck = r.stuck.iter().filter(|s| **s).count();
        let (as_us, _) = time(
            || {
                black_box(axproj_active_set(&vstar, &a, &phi, &p, Some(&v), 50, &[]));
            },
            1.0,
        );
        let cold = axproj_active_set(&vstar, &a, &phi, &p, None, 50, &[]).map(|r| r.iterations);
        let proj = axproj_projection(&vstar, &a, &phi, &p, 1_000_000);
        let (pr_us, _) = time(
            || {
                black_box(axproj_projection(&vstar, &a, &phi, &p, 1_000_000));
            },
            1.0,
        );
        println!(
            "{n:2} | {step_us:12.2} | {as_us:10.2} ({} warm, {:?} cold) | {pr_us:12.1} ({:?}) | {stuck}/{} | σmax(P) = {:.3}",
            r.iterations,
            cold,
            proj.as_ref().map(|p| p.iterations),
            n - stuck,
            p.singular_values().max()
        );
        if let Some(pj) = &proj {
            assert!((&pj.y - &r.y).amax() < 1e-9, "solvers agree");
        }
    }
}
