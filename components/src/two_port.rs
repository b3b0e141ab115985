//! Two-port elements (springs, I_fricK, …): the ports `a` and `b` and the `domain` key.

use stiction_framework::port::{Domain, PortInfo};
use stiction_framework::system::Params;
use stiction_framework::Result;

/// Ports `a` and `b` of a two-port element in `domain`. The element sees the motion of
/// b relative to a and applies its force to b, the reaction to a.
pub fn two_ports(domain: Domain) -> Vec<PortInfo> {
    vec![PortInfo::new("a", domain), PortInfo::new("b", domain)]
}

/// The `domain` parameter of a two-port element: "scalar" (default) or "point3".
pub fn domain_param(p: &mut Params) -> Result<Domain> {
    Ok(match p.choice("domain", &["scalar", "point3"])? {
        "point3" => Domain::Point3,
        _ => Domain::Scalar,
    })
}

/// Number of vector components an element of `domain` works on.
pub fn dims(domain: Domain) -> usize {
    match domain {
        Domain::Scalar => 1,
        _ => 3,
    }
}
