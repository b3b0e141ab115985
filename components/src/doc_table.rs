//! Parameter tables assembled from shared parts (a component's own keys, the friction-law
//! keys, the link keys of a chain, …), built once per type.

use std::sync::OnceLock;
use stiction_framework::system::ParamDoc;

/// The concatenation of `parts`, kept in `cell` for the life of the program.
pub fn table(cell: &'static OnceLock<Vec<ParamDoc>>, parts: &[&[ParamDoc]]) -> &'static [ParamDoc] {
    cell.get_or_init(|| parts.concat())
}
