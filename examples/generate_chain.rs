//! Writes the "chain-N" benchmark system as JSON:
//! N point masses (1 kg, gravity −9.81 z) in a row along x, consecutive masses joined by
//! spring–dampers (K = 1e4 N/m, B = 10 N·s/m, rest length 0.1 m), every mass on a plane
//! contact with Coulomb friction (K = 1e5 N/m, B = 100 N·s/m, μ = 0.5) resting at its
//! static penetration, mass 0 driven by [50 sin(2πt), 0, 0] N. RK4, T = 1e-4 s, 1000 steps;
//! output: positions of mass 0 and mass N−1 every 1e-3 s.
//!
//! Usage: `cargo run --release --example generate_chain -- N [OUT.json]`
//! (`--frictionless`: μ = 0, all damping 0 and no drive — mass 0 starts displaced by
//! −0.02 m instead — for energy-conservation checks.)

use serde_json::{json, Map, Value};

/// The chain-N system as JSON.
pub fn chain(n: usize, frictionless: bool) -> Value {
    let (mass, g, k_contact) = (1.0, 9.81, 1e5);
    let z0 = -mass * g / k_contact; // static penetration
    let (b_spring, b_contact, mu) = if frictionless { (0.0, 0.0, 0.0) } else { (10.0, 100.0, 0.5) };
    let mut comps = Map::new();
    let mut conns = Vec::new();
    for i in 0..n {
        comps.insert(
            format!("m{i}"),
            json!({"type": "point_mass", "mass": mass, "gravity": [0, 0, -g],
                   "init": {"p": [0.1 * i as f64 - if frictionless && i == 0 { 0.02 } else { 0.0 }, 0, z0]}}),
        );
        comps.insert(format!("c{i}"), json!({"type": "plane_contact", "K": k_contact, "B": b_contact, "mu": mu}));
        conns.push(json!({"from": format!("c{i}.body"), "to": format!("m{i}")}));
        if i > 0 {
            comps.insert(
                format!("s{i}"),
                json!({"type": "spring_damper", "domain": "point3", "K": 1e4, "B": b_spring, "rest_length": 0.1}),
            );
            conns.push(json!({"from": format!("s{i}.a"), "to": format!("m{}", i - 1)}));
            conns.push(json!({"from": format!("s{i}.b"), "to": format!("m{i}")}));
        }
    }
    if !frictionless {
        comps.insert(
            "drive".into(),
            json!({"type": "force_source", "domain": "point3", "force": ["50*sin(2*PI*t)", 0, 0]}),
        );
        conns.push(json!({"from": "drive.body", "to": "m0"}));
    }
    let last = n - 1;
    json!({
        "name": format!("chain_{n}"),
        "description": "chain-N benchmark: see examples/generate_chain.rs",
        "solver": {"method": "rk4", "step": 1e-4, "stop_time": 0.1},
        "output": {"interval": 1e-3, "signals": {
            "x0": "m0.p[0]", "y0": "m0.p[1]", "z0": "m0.p[2]",
            "x_last": format!("m{last}.p[0]"), "y_last": format!("m{last}.p[1]"), "z_last": format!("m{last}.p[2]")
        }},
        "components": comps,
        "connections": conns,
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let frictionless = args.iter().any(|a| a == "--frictionless");
    let pos: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let n: usize = match pos.first().and_then(|s| s.parse().ok()) {
        Some(n) if n >= 1 => n,
        _ => {
            eprintln!("usage: generate_chain N [OUT.json] [--frictionless]");
            std::process::exit(2);
        }
    };
    let text = serde_json::to_string(&chain(n, frictionless)).expect("JSON");
    match pos.get(1) {
        Some(path) => {
            if let Err(e) = std::fs::write(path, text) {
                eprintln!("cannot write {path}: {e}");
                std::process::exit(1);
            }
        }
        None => println!("{text}"),
    }
}
