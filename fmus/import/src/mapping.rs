//! How FMU variables become the ports of a network component (the JSON `inputs`/`outputs`
//! or `ports` of an `fmu` component), checked against the model description.
//!
//! Every port is a scalar port. A mapped variable is written `"name"` or `"-name"` (the
//! minus flips the sign); `force_sign: -1` on a port flips its force as well. The sign
//! converts between the network's convention and the FMU's: network value = sign × FMU value
//! (equivalently FMU value = sign × network value).
//!
//! **Types.** A port maps a variable of any numeric type or Boolean (FMI 2.0 Real, Integer,
//! Enumeration, Boolean; FMI 3.0 Float64, Float32, Int8…UInt64, Enumeration, Boolean); the
//! network's values are f64. An output converts exactly (integers up to 2^53 in magnitude; a
//! 64-bit integer beyond that which f64 cannot hold exactly is an error; Boolean: 0 or 1). An
//! input must receive a value of its type: an integer input a whole number in its type's range,
//! a Boolean input exactly 0 (false) or 1 (true); anything else (2.5 N on an Int16 input, say)
//! stops the run with an error naming the component, the variable, the value and the time —
//! integer and Boolean values are never rounded or clamped on their way into an FMU.
//!
//! * admittance (force in, motion out): `force` names an FMU **input** that receives the
//!   sum of the forces on the port; `position`, `velocity` name FMU **outputs** (Model
//!   Exchange: continuous **states**) that give the port's motion. A port without a motion
//!   mapping reports q = 0, v = 0 (a force-only port such as an actuator input).
//! * impedance (motion in, force out): `position`, `velocity` name FMU **inputs** fed with
//!   the motion of whatever the port is connected to; `force` names an FMU **output**, the
//!   force the impedance applies to it.

use serde_json::{Map, Value};
use stiction_fmi_schema::{Causality, Interface, ModelDescription, VarType};
use stiction_framework::{Error, Result};

/// Whether the FMU is wired as an admittance or an impedance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Admittance,
    Impedance,
}

/// One mapped FMU variable.
#[derive(Clone, Debug, PartialEq)]
pub struct VarRef {
    /// Index into the description's variables.
    pub index: usize,
    pub vr: u32,
    /// +1 or −1: network value = sign × FMU value.
    pub sign: f64,
    pub name: String,
    /// Model Exchange admittance: the position of this variable in the state vector.
    pub state: Option<usize>,
    /// For an element `name[e]` of an FMI 3.0 array output: e (row-major); else 0.
    pub elem: usize,
    /// The number of values a get of `vr` returns: the array's elements, or 1.
    pub len: usize,
    /// The variable's type: a port carries any numeric type or Boolean (see the module
    /// documentation for the rule).
    pub ty: VarType,
}

/// The variables behind one scalar port.
#[derive(Clone, Debug, PartialEq)]
pub struct PortMap {
    pub name: String,
    pub force: Option<VarRef>,
    pub position: Option<VarRef>,
    pub velocity: Option<VarRef>,
}

/// Which port quantity a variable carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    Force,
    Position,
    Velocity,
}

impl PortMap {
    /// The mapped variables of this port with their quantity.
    pub fn vars(&self) -> impl Iterator<Item = (Quantity, &VarRef)> {
        [(Quantity::Force, &self.force), (Quantity::Position, &self.position), (Quantity::Velocity, &self.velocity)]
            .into_iter()
            .filter_map(|(q, v)| v.as_ref().map(|v| (q, v)))
    }
}

/// Where the ports are read from: the `ports` object, or the `inputs`/`outputs` shorthand
/// (one port called `port`).
pub struct MappingSpec<'a> {
    pub ports: Option<&'a Value>,
    pub inputs: Option<&'a Value>,
    pub outputs: Option<&'a Value>,
}

/// The keys an FMU input/output object may use for `role`.
fn allowed(role: Role, input: bool) -> &'static [&'static str] {
    match (role, input) {
        (Role::Admittance, true) | (Role::Impedance, false) => &["force"],
        (Role::Admittance, false) | (Role::Impedance, true) => &["position", "velocity"],
    }
}

fn object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>> {
    v.as_object().ok_or_else(|| Error::invalid(path, format!("expected an object, got {v}")))
}

/// Parse and check the port mapping of an FMU component at JSON path `path`.
pub fn parse(
    spec: &MappingSpec,
    path: &str,
    md: &ModelDescription,
    interface: Interface,
    role: Role,
    fmu: &str,
) -> Result<Vec<PortMap>> {
    let mut ports = Vec::new();
    match (spec.ports, spec.inputs.is_some() || spec.outputs.is_some()) {
        (Some(_), true) => {
            return Err(Error::invalid(path, "give either 'ports' or 'inputs'/'outputs', not both"));
        }
        (None, false) => {
            return Err(Error::invalid(
                path,
                "map the FMU's variables to ports: 'inputs' and 'outputs' (one port called 'port') or 'ports'",
            ));
        }
        (Some(p), false) => {
            let ppath = format!("{path}.ports");
            let map = object(p, &ppath)?;
            for (name, v) in map {
                let at = format!("{ppath}.{name}");
                if name.is_empty() {
                    return Err(Error::invalid(at, "a port needs a name"));
                }
                let keys = object(v, &at)?;
                let mut port = PortMap { name: name.clone(), force: None, position: None, velocity: None };
                let mut force_sign = 1.0;
                for (k, val) in keys {
                    let kp = format!("{at}.{k}");
                    match k.as_str() {
                        "force_sign" => {
                            force_sign = match val.as_f64() {
                                Some(s) if s == 1.0 || s == -1.0 => s,
                                _ => return Err(Error::invalid(kp, format!("must be 1 or -1, got {val}"))),
                            }
                        }
                        "force" | "position" | "velocity" => {
                            let input = match (role, k.as_str()) {
                                (Role::Admittance, "force") => true,
                                (Role::Admittance, _) => false,
                                (Role::Impedance, "force") => false,
                                (Role::Impedance, _) => true,
                            };
                            let r = var_ref(val, &kp, md, interface, role, input, fmu)?;
                            set(&mut port, k, r);
                        }
                        _ => {
                            return Err(Error::invalid(
                                kp,
                                "unknown key (a port maps 'force', 'position', 'velocity', and 'force_sign')",
                            ))
                        }
                    }
                }
                if let Some(f) = &mut port.force {
                    f.sign *= force_sign;
                }
                ports.push(port);
            }
        }
        (None, true) => {
            let mut port = PortMap { name: "port".into(), force: None, position: None, velocity: None };
            for (key, value, input) in [("inputs", spec.inputs, true), ("outputs", spec.outputs, false)] {
                let Some(v) = value else { continue };
                let at = format!("{path}.{key}");
                for (k, val) in object(v, &at)? {
                    let kp = format!("{at}.{k}");
                    let ok = allowed(role, input);
                    if !ok.contains(&k.as_str()) {
                        let kind = if role == Role::Admittance { "an admittance" } else { "an impedance" };
                        return Err(Error::invalid(
                            kp,
                            format!(
                                "the FMU {key} of {kind} are {}",
                                ok.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(" and ")
                            ),
                        ));
                    }
                    let r = var_ref(val, &kp, md, interface, role, input, fmu)?;
                    set(&mut port, k, r);
                }
            }
            ports.push(port);
        }
    }
    // Every port carries a force; an FMU input (an element of an array input) is fed from one
    // place only. By value reference: an FMI 3.0 <Alias> or an FMI 2.0 alias is the same input.
    let mut fed: Vec<(u32, usize)> = Vec::new();
    for p in &ports {
        if p.force.is_none() {
            return Err(Error::invalid(
                format!("{path}.ports.{}", p.name),
                "the port maps no 'force' (an admittance needs the force on it, an impedance the force it applies)",
            ));
        }
        for (q, v) in p.vars() {
            let is_input = (role == Role::Admittance) == (q == Quantity::Force);
            if is_input {
                if fed.contains(&(v.vr, v.elem)) {
                    let why = if v.len > 1 { "the same element of an array input" } else { "by its name or an alias" };
                    return Err(Error::invalid(path, format!("FMU input '{}' is mapped twice ({why})", v.name)));
                }
                fed.push((v.vr, v.elem));
            }
        }
    }
    Ok(ports)
}

fn set(port: &mut PortMap, key: &str, r: VarRef) {
    match key {
        "force" => port.force = Some(r),
        "position" => port.position = Some(r),
        _ => port.velocity = Some(r),
    }
}

/// `"name"` or `"-name"`, checked to be a Float64 variable of the right causality.
fn var_ref(
    v: &Value,
    path: &str,
    md: &ModelDescription,
    interface: Interface,
    role: Role,
    input: bool,
    fmu: &str,
) -> Result<VarRef> {
    let s = v.as_str().ok_or_else(|| Error::invalid(path, format!("expected an FMU variable name, got {v}")))?;
    let (sign, name) = match s.strip_prefix('-') {
        Some(rest) => (-1.0, rest.trim()),
        None => (1.0, s.trim()),
    };
    // An element of an FMI 3.0 array output: "y[2]" (0-based, row-major).
    let element = match md.find(name) {
        Some(_) => None,
        None => name.strip_suffix(']').and_then(|x| x.split_once('[')).and_then(|(base, idx)| {
            let i = md.find(base.trim())?;
            Some((i, idx.trim().parse::<usize>().ok()))
        }),
    };
    let (found, elem) = match element {
        Some((i, e)) => (Some(i), Some(e)),
        None => (md.find(name), None),
    };
    let Some(index) = found else {
        let want = if input { Causality::Input } else { Causality::Output };
        return Err(Error::invalid(
            path,
            format!(
                "{fmu} has no variable '{name}'{} (its {want}s: {})",
                stiction_framework::error::suggestion(name, md.variables.iter().map(|v| v.name.as_str())),
                md.names_with(want)
            ),
        ));
    };
    let var = &md.variables[index];
    let (mut elem_at, mut len) = (0, 1);
    if !var.dimensions.is_empty() {
        let n = md.shape(index).map_err(|e| Error::invalid(path, e))?.iter().product::<u64>() as usize;
        let vname = &var.name;
        match elem {
            None => {
                return Err(Error::invalid(
                    path,
                    format!("'{name}' is an array of {n} elements; a port maps one of them: '{vname}[0]' .. '{vname}[{}]'", n.saturating_sub(1)),
                ))
            }
            Some(_) if !input && interface == Interface::ModelExchange && role == Role::Admittance => {
                return Err(Error::invalid(
                    path,
                    format!(
                        "'{name}': a Model Exchange admittance reads its motion from continuous states, not array elements"
                    ),
                ))
            }
            Some(Some(e)) if e < n => (elem_at, len) = (e, n),
            Some(_) => {
                return Err(Error::invalid(
                    path,
                    format!("'{name}': '{vname}' has {n} elements (indices 0 to {})", n.saturating_sub(1)),
                ))
            }
        }
    } else if elem.is_some() {
        return Err(Error::invalid(path, format!("'{name}': '{}' is not an array", var.name)));
    }
    if var.ty == VarType::Other {
        return Err(Error::invalid(
            path,
            format!("'{name}' is a {} variable; ports map numeric and Boolean variables", var.type_name),
        ));
    }
    let mut state = None;
    if input {
        if var.causality != Causality::Input {
            return Err(Error::invalid(
                path,
                format!(
                    "'{name}' has causality '{}'; this mapping needs an FMU input (inputs: {})",
                    var.causality,
                    md.names_with(Causality::Input)
                ),
            ));
        }
    } else if interface == Interface::ModelExchange && role == Role::Admittance {
        // The port's motion is read from the network's state vector.
        state = md.states.iter().position(|&s| s == index);
        if state.is_none() {
            let states: Vec<&str> = md.states.iter().map(|&s| md.variables[s].name.as_str()).collect();
            return Err(Error::invalid(
                path,
                format!(
                    "a Model Exchange admittance reads its motion from the FMU's continuous states, and '{name}' is not one (states: {})",
                    if states.is_empty() { "none".to_string() } else { states.join(", ") }
                ),
            ));
        }
    } else if var.causality != Causality::Output {
        return Err(Error::invalid(
            path,
            format!(
                "'{name}' has causality '{}'; this mapping needs an FMU output (outputs: {})",
                var.causality,
                md.names_with(Causality::Output)
            ),
        ));
    }
    Ok(VarRef { index, vr: var.vr, sign, name: name.to_string(), state, elem: elem_at, len, ty: var.ty })
}
