//! `Schedule::compile` refuses a network with unconnected impedance ports exactly as
//! `Network::validate` does (the check is made while compiling).

use stiction::components::bodies::Mass;
use stiction::components::couplings::SpringDamper;
use stiction::framework::port::Domain;
use stiction::framework::{Network, Schedule, Target};

fn spring() -> Box<SpringDamper> {
    Box::new(SpringDamper { domain: Domain::Scalar, k: 100.0, b: 1.0, rest_length: 0.0 })
}

#[test]
fn compile_names_the_unconnected_ports_in_network_order_as_validate_does() {
    let mut net = Network::new();
    let m = net.add_admittance("m", Box::new(Mass { mass: 1.0, force: 0.0, q0: 0.0, v0: 0.0 })).unwrap();
    let s1 = net.add_impedance("s1", spring()).unwrap();
    let s2 = net.add_impedance("s2", spring()).unwrap();
    net.add_impedance("s3", spring()).unwrap();
    net.try_connect(s1, "a", Target::Ground { at: None }).unwrap();
    net.try_connect(s1, "b", Target::Port { adm: m, port: "body", offset: None }).unwrap();
    net.try_connect(s2, "b", Target::Ground { at: None }).unwrap();
    let expected = net.validate().unwrap_err().to_string();
    assert!(expected.contains("s2.a, s3.a, s3.b"), "{expected}");
    let compiled = Schedule::compile(net).err().expect("refused").to_string();
    assert_eq!(compiled, expected);
}

#[test]
fn a_fully_connected_network_compiles() {
    let mut net = Network::new();
    let m = net.add_admittance("m", Box::new(Mass { mass: 1.0, force: 0.0, q0: 0.0, v0: 0.0 })).unwrap();
    let s = net.add_impedance("s", spring()).unwrap();
    net.try_connect(s, "b", Target::Port { adm: m, port: "body", offset: None }).unwrap();
    net.try_connect(s, "a", Target::Ground { at: None }).unwrap();
    net.validate().unwrap();
    let sched = Schedule::compile(net).unwrap();
    assert_eq!(sched.counts(), (1, 1));
    assert_eq!(sched.impedance_attachments(0), vec![None, Some((0, 0))]);
}

#[test]
fn a_large_network_lists_its_unconnected_ports_in_network_order() {
    // More impedances than `validate` checks serially: the worker threads check them.
    let mut net = Network::new();
    let m = net.add_admittance("m", Box::new(Mass { mass: 1.0, force: 0.0, q0: 0.0, v0: 0.0 })).unwrap();
    let open = [7, 4100, 4101, 6999];
    for k in 0..7000 {
        let s = net.add_impedance(&format!("s{k}"), spring()).unwrap();
        net.try_connect(s, "a", Target::Ground { at: None }).unwrap();
        if !open.contains(&k) {
            net.try_connect(s, "b", Target::Port { adm: m, port: "body", offset: None }).unwrap();
        }
    }
    let message = net.validate().unwrap_err().to_string();
    assert!(message.contains(": s7.b, s4100.b, s4101.b, s6999.b ("), "{message}");
    assert_eq!(Schedule::compile(net).err().expect("refused").to_string(), message);
}
