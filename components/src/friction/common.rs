//! Helpers the Kikuuwe friction models (A–D) share: the friction-law keys in their tables
//! and the initial state of a sliding mass.

use super::law::LAW_PARAMS;
use crate::ndim::vec_n_or_zero;
use nalgebra::Vector3;
use std::sync::OnceLock;
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

/// Component parameters followed by the friction-law keys, built once per type.
pub fn with_law(cell: &'static OnceLock<Vec<ParamDoc>>, own: &[ParamDoc]) -> &'static [ParamDoc] {
    cell.get_or_init(|| {
        let mut v = own.to_vec();
        v.extend_from_slice(LAW_PARAMS);
        v
    })
}
