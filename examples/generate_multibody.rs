//! Writes the "multibody-N" benchmark system as JSON: work like real multibody models, with
//! frames, offsets, friction and heavy admittances rather than the point masses of chain-N.
//!
//! - P pairs of rigid boxes (`rigid_body`, 1 kg, 0.2 × 0.2 × 0.1 m, gravity −9.81 z), each
//!   box on four `plane_contact`s at its bottom corners (K = 1e5 N/m, B = 100 N·s/m,
//!   μ = 0.5, attached with "at" offsets, resting at their static penetration), the two
//!   boxes of a pair joined by a `penalty_joint` about z (K = 1e6 N/m, B = 100 N·s/m,
//!   K_rot = 1e3 N·m/rad, B_rot = 0.05 N·m·s/rad, joint friction (19) with K = 5000 N·m/rad,
//!   B = 1 N·m·s/rad, F = 0.2 N·m) driven by 0.5 sin(2πt) N·m, so that the boxes turn
//!   against the corner friction, stick and slip: 11 components per pair;
//! - S stacks of two such boxes: the lower one on four `plane_contact`s, the upper one on
//!   four `body_contact`s on the lower one's top face (the same K, B, μ; issue 35), pushed
//!   sideways at its centre by 2 sin(2πt) N (`force_source`), below the friction limit, so
//!   that the contacts between the bodies hold: 11 components per stack;
//! - R independent six-joint `geared_robot`s under gravity (axes z, y, y, x, y, x; gears
//!   γu = 0.1, γv = 1.05, self-locking, m = 0.1 kg·m²), each holding a 2 kg load at its tip
//!   (a `gravity` impedance): 2 components per robot.
//!
//! RK4, T = 1e-4 s, 100 steps; output every 1e-3 s: the first box's position and joint
//! angle and the first robot's second joint angle.
//!
//! Usage: `cargo run --release --example generate_multibody -- COMPONENTS [OUT.json]`: about
//! 75 % of the components in box pairs, 15 % in stacks, the rest in robots (at least one
//! of each).

use serde_json::{json, Map, Value};

/// The parts of a multibody system: box pairs, two-box stacks and robots.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Parts {
    pub pairs: usize,
    pub stacks: usize,
    pub robots: usize,
}

/// Parts for about `components` components (75 % in box pairs, 15 % in stacks).
pub fn split(components: usize) -> Parts {
    let pairs = ((components as f64 * 0.75 / 11.0).round() as usize).max(1);
    let stacks = ((components as f64 * 0.15 / 11.0).round() as usize).max(1);
    let robots = (components.saturating_sub(11 * (pairs + stacks)) / 2).max(1);
    Parts { pairs, stacks, robots }
}

/// Number of components of `parts`.
pub fn components(parts: Parts) -> usize {
    11 * (parts.pairs + parts.stacks) + 2 * parts.robots
}

/// What the upper box of a stack stands on, for [`stacks`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Top {
    /// Four `body_contact`s on the lower box.
    Body,
    /// Four `plane_contact`s on the fixed plane at the lower box's top face.
    Plane,
    /// Nothing (it falls): the baseline without the upper contacts.
    None,
}

const MASS: f64 = 1.0;
const G: f64 = 9.81;
const K_CONTACT: f64 = 1e5;
const HALF: [f64; 3] = [0.1, 0.1, 0.05];

fn box_inertia() -> [f64; 3] {
    let [hx, hy, hz] = HALF;
    [
        MASS * (4.0 * hy * hy + 4.0 * hz * hz) / 12.0,
        MASS * (4.0 * hx * hx + 4.0 * hz * hz) / 12.0,
        MASS * (4.0 * hx * hx + 4.0 * hy * hy) / 12.0,
    ]
}

/// Stack `i` at (x0, y0): 11 components (two boxes, eight contacts, the push), or 10 without
/// the push.
fn add_stack(comps: &mut Map<String, Value>, conns: &mut Vec<Value>, i: usize, x0: f64, y0: f64, top: Top, push: bool) {
    let [hx, hy, hz] = HALF;
    // The lower box carries both weights on its corners, the upper one its own.
    let z_low = hz - 2.0 * MASS * G / (4.0 * K_CONTACT);
    let z_up = z_low + 2.0 * hz - MASS * G / (4.0 * K_CONTACT);
    for (b, z) in [("low", z_low), ("up", z_up)] {
        comps.insert(
            format!("stack{i}{b}"),
            json!({"type": "rigid_body", "mass": MASS, "inertia": box_inertia(), "gravity": [0, 0, -G], "init": {"p": [x0, y0, z]}}),
        );
    }
    let corners = [(1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)];
    for (c, (sx, sy)) in corners.into_iter().enumerate() {
        let name = format!("stack{i}low_c{c}");
        comps.insert(name.clone(), json!({"type": "plane_contact", "K": K_CONTACT, "B": 100.0, "mu": 0.5}));
        conns
            .push(json!({"from": format!("{name}.body"), "to": format!("stack{i}low"), "at": [sx * hx, sy * hy, -hz]}));
        let name = format!("stack{i}up_c{c}");
        let at = json!([sx * hx, sy * hy, -hz]);
        match top {
            Top::Body => {
                comps.insert(
                    name.clone(),
                    json!({"type": "body_contact", "K": K_CONTACT, "B": 100.0, "mu": 0.5, "plane": {"point": [0, 0, hz]}}),
                );
                conns.push(json!({"from": format!("{name}.a"), "to": format!("stack{i}up"), "at": at}));
                conns.push(json!({"from": format!("{name}.b"), "to": format!("stack{i}low")}));
            }
            Top::Plane => {
                comps.insert(
                    name.clone(),
                    json!({"type": "plane_contact", "K": K_CONTACT, "B": 100.0, "mu": 0.5, "height": z_low + hz}),
                );
                conns.push(json!({"from": format!("{name}.body"), "to": format!("stack{i}up"), "at": at}));
            }
            Top::None => {}
        }
    }
    if push {
        let name = format!("stack{i}push");
        comps.insert(
            name.clone(),
            json!({"type": "force_source", "domain": "point3", "force": ["2*sin(2*PI*t)", 0, 0]}),
        );
        conns.push(json!({"from": format!("{name}.body"), "to": format!("stack{i}up")}));
    }
}

/// `n` two-box stacks alone (no push), the upper boxes on `top`: the systems of the
/// per-contact cost of `body_contact` against `plane_contact` (benches/multibody.rs
/// `--contacts`).
pub fn stacks(n: usize, top: Top) -> Value {
    let side = ((n as f64).sqrt().ceil() as usize).max(1);
    let (mut comps, mut conns) = (Map::new(), Vec::new());
    for i in 0..n {
        add_stack(&mut comps, &mut conns, i, (i % side) as f64, (i / side) as f64, top, false);
    }
    json!({
        "name": format!("stacks_{n}"),
        "solver": {"method": "rk4", "step": 1e-4, "stop_time": 0.01},
        "components": comps,
        "connections": conns,
    })
}

/// The multibody system of `parts`, as JSON.
pub fn multibody(parts: Parts) -> Value {
    let Parts { pairs, stacks, robots } = parts;
    let (mass, g, k_contact) = (MASS, G, K_CONTACT);
    let [hx, hy, hz] = HALF;
    let inertia = box_inertia();
    // Each corner carries a quarter of the weight.
    let z0 = hz - mass * g / (4.0 * k_contact);
    let side = ((pairs as f64).sqrt().ceil() as usize).max(1);
    let mut comps = Map::new();
    let mut conns = Vec::new();
    for i in 0..pairs {
        let (x0, y0) = ((i % side) as f64, (i / side) as f64);
        for (b, dx) in [("a", 0.0), ("b", 0.3)] {
            let body = format!("box{i}{b}");
            comps.insert(
                body.clone(),
                json!({"type": "rigid_body", "mass": mass, "inertia": inertia, "gravity": [0, 0, -g],
                       "init": {"p": [x0 + dx, y0, z0]}}),
            );
            for (c, (sx, sy)) in [(1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)].into_iter().enumerate() {
                let name = format!("box{i}{b}_c{c}");
                comps.insert(name.clone(), json!({"type": "plane_contact", "K": k_contact, "B": 100.0, "mu": 0.5}));
                conns.push(json!({"from": format!("{name}.body"), "to": body, "at": [sx * hx, sy * hy, -hz]}));
            }
        }
        let joint = format!("joint{i}");
        comps.insert(
            joint.clone(),
            json!({"type": "penalty_joint", "axis": [0, 0, 1], "K": 1e6, "B": 100.0, "K_rot": 1e3, "B_rot": 0.05,
                   "friction_K": 5000.0, "friction_B": 1.0, "friction_F": 0.2, "torque": "0.5*sin(2*PI*t)"}),
        );
        conns.push(json!({"from": format!("{joint}.a"), "to": format!("box{i}a"), "at": [0.15, 0, 0]}));
        conns.push(json!({"from": format!("{joint}.b"), "to": format!("box{i}b"), "at": [-0.15, 0, 0]}));
    }
    // The stacks in a row beyond the pairs' grid.
    for i in 0..stacks {
        add_stack(&mut comps, &mut conns, i, i as f64, -2.0, Top::Body, true);
    }
    let links = json!([
        {"origin": [0, 0, 0], "axis": [0, 0, 1], "mass": 4.0, "com": [0, 0, 0.15], "inertia": [0.03, 0.03, 0.01], "damping": 1.0},
        {"origin": [0, 0, 0.3], "axis": [0, 1, 0], "mass": 3.0, "com": [0.2, 0, 0], "inertia": [0.005, 0.04, 0.04], "damping": 1.0},
        {"origin": [0.4, 0, 0], "axis": [0, 1, 0], "mass": 2.0, "com": [0.15, 0, 0], "inertia": [0.003, 0.015, 0.015], "damping": 1.0},
        {"origin": [0.3, 0, 0], "axis": [1, 0, 0], "mass": 1.0, "com": [0.05, 0, 0], "inertia": [0.001, 0.001, 0.001], "damping": 1.0},
        {"origin": [0.1, 0, 0], "axis": [0, 1, 0], "mass": 0.5, "com": [0.05, 0, 0], "inertia": [5e-4, 5e-4, 5e-4], "damping": 1.0},
        {"origin": [0.1, 0, 0], "axis": [1, 0, 0], "mass": 0.3, "com": [0.03, 0, 0], "inertia": [2e-4, 2e-4, 2e-4], "damping": 1.0}
    ]);
    let gears: Vec<Value> = (0..6).map(|_| json!({"m": 0.1, "gamma_u": 0.1, "gamma_v": 1.05})).collect();
    for r in 0..robots {
        let robot = format!("robot{r}");
        comps.insert(
            robot.clone(),
            json!({"type": "geared_robot", "links": links, "tip": [0.08, 0, 0], "gears": gears,
                   "gravity": [0, 0, -g], "init": {"q": [0.0, 0.3, -0.6, 0.0, 0.3, 0.0]}}),
        );
        let load = format!("load{r}");
        comps.insert(load.clone(), json!({"type": "gravity", "mass": 2.0, "g": [0, 0, -g]}));
        conns.push(json!({"from": format!("{load}.body"), "to": format!("{robot}.tip")}));
    }
    let mut signals = Map::new();
    if pairs > 0 {
        for (k, e) in ["x", "y", "z"].iter().enumerate() {
            signals.insert(format!("box0a_{e}"), json!(format!("box0a.p[{k}]")));
        }
        signals.insert("joint0_angle".into(), json!("joint0.angle"));
    }
    if robots > 0 {
        signals.insert("robot0_q1".into(), json!("robot0.q[1]"));
    }
    json!({
        "name": format!("multibody_{}", components(parts)),
        "description": "multibody-N benchmark: see examples/generate_multibody.rs",
        "solver": {"method": "rk4", "step": 1e-4, "stop_time": 0.01},
        "output": {"interval": 1e-3, "signals": signals},
        "components": comps,
        "connections": conns,
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = match args.first().and_then(|s| s.parse().ok()) {
        Some(n) if n >= 24 => n,
        _ => {
            eprintln!("usage: generate_multibody COMPONENTS [OUT.json]   (COMPONENTS ≥ 24)");
            std::process::exit(2);
        }
    };
    let text = serde_json::to_string(&multibody(split(n))).expect("JSON");
    match args.get(1) {
        Some(path) => {
            if let Err(e) = std::fs::write(path, text) {
                eprintln!("cannot write {path}: {e}");
                std::process::exit(1);
            }
        }
        None => println!("{text}"),
    }
}
