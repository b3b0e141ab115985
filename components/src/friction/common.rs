//! What the Kikuuwe friction models A and D share: the initial state of the sliding mass.

use crate::ndim::vec_n_or_zero;
use nalgebra::Vector3;
use stiction_framework::system::{ParamDoc, Params};
use stiction_framework::Result;

/// `init` {"q", "v"} of a sliding mass of n dimensions (zeros if absent).
pub fn read_init(p: &mut Params, n: usize) -> Result<(Vector3<f64>, Vector3<f64>)> {
    let (mut q0, mut v0) = (Vector3::zeros(), Vector3::zeros());
    if let Some(mut init) = p.object("init")? {
        q0 = vec_n_or_zero(&mut init, "q", n)?;
        v0 = vec_n_or_zero(&mut init, "v", n)?;
        init.finish()?;
    }
    Ok((q0, v0))
}

/// Documentation of the keys [`read_init`] reads.
pub const INIT_PARAMS: &[ParamDoc] = &[
    ParamDoc { name: "init", unit: "", default: Some("{}"), doc: "initial state {\"q\", \"v\"}" },
    ParamDoc {
        name: "init.q",
        unit: "m",
        default: Some("0"),
        doc: "initial position (number, or array of dims numbers)",
    },
    ParamDoc {
        name: "init.v",
        unit: "m/s",
        default: Some("0"),
        doc: "initial velocity (number, or array of dims numbers)",
    },
];
