//! The loader builds components on the worker threads: the network (names, order) and the
//! first error (in file order, naming its JSON path) must not depend on the thread count.

#[path = "../examples/generate_chain.rs"]
#[allow(dead_code)]
mod generate_chain;

use serde_json::{json, Value};

/// Load `system` (written to a file) on a pool of `threads` threads: the components in
/// file order, or the error message.
fn load_on(system: &Value, threads: usize) -> Result<Vec<(String, String)>, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chain.json");
    std::fs::write(&path, system.to_string()).unwrap();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| match stiction::load(&path) {
        Ok(s) => {
            let comps = s.components().map(|(n, t)| (n.to_string(), t.to_string())).collect();
            // It compiles (every connection resolved to the right nodes).
            s.into_simulator(1).map_err(|e| e.to_string())?;
            Ok(comps)
        }
        Err(e) => Err(e.to_string().replace(&path.display().to_string(), "FILE")),
    })
}

#[test]
fn chain_loads_the_same_on_one_and_three_threads() {
    // 3 × 2000 components: more than one chunk of the parallel build.
    let sys = generate_chain::chain(2000, false);
    let one = load_on(&sys, 1).unwrap();
    assert_eq!(one.len(), 6000);
    assert_eq!(one[0], ("m0".to_string(), "point_mass".to_string()));
    assert_eq!(one[1], ("c0".to_string(), "plane_contact".to_string()));
    assert_eq!(one[4], ("s1".to_string(), "spring_damper".to_string()));
    assert_eq!(load_on(&sys, 3).unwrap(), one);
}

#[test]
fn the_first_bad_component_in_file_order_is_reported_for_any_thread_count() {
    let mut sys = generate_chain::chain(2000, false);
    let comps = sys["components"].as_object_mut().unwrap();
    // Late in the file (another chunk) and early: the early one is reported.
    comps["m1900"]["mass"] = json!("heavy");
    comps["m700"]["mass"] = json!(-1.0);
    comps["s1500"]["K"] = json!(null);
    let one = load_on(&sys, 1).unwrap_err();
    assert!(one.contains("components.m700.mass"), "{one}");
    assert!(one.starts_with("FILE"), "{one}");
    for threads in [2, 3] {
        assert_eq!(load_on(&sys, threads).unwrap_err(), one);
    }
    // A malformed component text (a number where an object is) is reported the same way.
    sys["components"]["c5"] = json!(5);
    let one = load_on(&sys, 1).unwrap_err();
    assert!(one.contains("components.c5"), "{one}");
    assert_eq!(load_on(&sys, 2).unwrap_err(), one);
}

#[test]
fn the_first_bad_connection_in_file_order_is_reported_for_any_thread_count() {
    let mut sys = generate_chain::chain(2000, false);
    let conns = sys["connections"].as_array_mut().unwrap();
    assert!(conns.len() > 5000, "more than one chunk of connections");
    conns[100]["to"] = json!("ghost");
    conns[5000]["to"] = json!("m1.nowhere");
    let one = load_on(&sys, 1).unwrap_err();
    assert!(one.contains("connections[100]") && one.contains("ghost"), "{one}");
    assert_eq!(load_on(&sys, 2).unwrap_err(), one);
    // A malformed element later in the file does not hide the earlier wrong connection.
    sys["connections"][5000] = json!(5);
    assert_eq!(load_on(&sys, 1).unwrap_err(), one);
    assert_eq!(load_on(&sys, 2).unwrap_err(), one);
    // Alone, the malformed element is reported with its path.
    sys["connections"][100]["to"] = json!("m0");
    let bad = load_on(&sys, 2).unwrap_err();
    assert!(bad.contains("connections[5000]"), "{bad}");
    assert_eq!(load_on(&sys, 1).unwrap_err(), bad);
}

/// `system` with its top-level keys in the order `keys` (the others dropped).
fn reordered(system: &Value, keys: &[&str]) -> Value {
    let mut m = serde_json::Map::new();
    for k in keys {
        m.insert(k.to_string(), system[*k].clone());
    }
    Value::Object(m)
}

/// (name, type) of each component.
type Named = Vec<(String, String)>;

/// Load `system` outside any pool (the CLI's case: the file is read once, each chunk of
/// components built on the global pool while the next is read): the components and the
/// initial state of the compiled system, or the error message.
fn load_outside_pools(system: &Value) -> Result<(Named, Vec<f64>), String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chain.json");
    std::fs::write(&path, system.to_string()).unwrap();
    match stiction::load(&path) {
        Ok(s) => {
            let comps = s.components().map(|(n, t)| (n.to_string(), t.to_string())).collect();
            let (sim, _) = s.into_simulator(1).map_err(|e| e.to_string())?;
            Ok((comps, sim.state().to_vec()))
        }
        Err(e) => Err(e.to_string().replace(&path.display().to_string(), "FILE")),
    }
}

#[test]
fn any_order_of_the_top_level_keys_loads_the_same_system() {
    // The single-pass loader reads solver, components, connections in that order; any other
    // order is loaded by the two-pass loader: the same components, states and errors.
    let sys = generate_chain::chain(1500, false);
    let usual = load_outside_pools(&sys).unwrap();
    assert_eq!(usual.0.len(), 4500);
    assert_eq!(usual.0, load_on(&sys, 1).unwrap());
    for keys in [
        ["components", "connections", "solver", "output", "name"],
        ["connections", "solver", "components", "name", "output"],
        ["name", "output", "solver", "connections", "components"],
    ] {
        assert_eq!(load_outside_pools(&reordered(&sys, &keys)).unwrap(), usual, "{keys:?}");
    }
    // A bad component is reported the same whichever loader meets it first.
    let mut bad = sys.clone();
    bad["components"]["m1200"]["mass"] = json!(0.0);
    let err = load_outside_pools(&bad).unwrap_err();
    assert!(err.contains("components.m1200.mass"), "{err}");
    let late = reordered(&bad, &["components", "connections", "solver", "output", "name"]);
    assert_eq!(load_outside_pools(&late).unwrap_err(), err);
    assert_eq!(load_on(&bad, 1).unwrap_err(), err);
    // A key given twice is refused by both.
    let twice = sys.to_string().replacen("\"solver\":", "\"solver\":{\"step\":1e-4,\"stop_time\":1},\"solver\":", 1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("twice.json");
    std::fs::write(&path, twice).unwrap();
    let e = stiction::load(&path).err().expect("a key given twice is an error").to_string();
    assert!(e.contains("duplicate field `solver`"), "{e}");
}

#[test]
fn loads_from_several_threads_at_once_share_the_global_pool_without_waiting_on_each_other() {
    // Called from outside any pool, the loader reads on a thread of the global pool and
    // builds and connects on its jobs. Several such loads at once (more than the pool has
    // threads) must each finish with the network a serial load makes.
    let sys = generate_chain::chain(2000, false);
    let one = load_on(&sys, 1).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chain.json");
    std::fs::write(&path, sys.to_string()).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    for _ in 0..3 {
        let (tx, path) = (tx.clone(), path.clone());
        std::thread::spawn(move || {
            let got = stiction::load(&path)
                .map(|s| s.components().map(|(n, t)| (n.to_string(), t.to_string())).collect::<Vec<_>>());
            let _ = tx.send(got.map_err(|e| e.to_string()));
        });
    }
    for _ in 0..3 {
        let got = rx.recv_timeout(std::time::Duration::from_secs(120)).expect("a load never finished");
        assert_eq!(got.unwrap(), one);
    }
}
