//! FMU-only systems (a JSON file with a top-level `"fmus"` object) in the CLI: checked and
//! translated by `stiction_fmi_master` into a network of signal blocks, which `run`,
//! `check` and `graph` then treat as any network, with the errors' paths those of the file.

use std::path::Path;
use stiction_fmi_master::{is_fmu_system, Translation};
use stiction_framework::Error;

/// What a system file holds.
pub enum Detected {
    /// An FMU-only system as the network of signal blocks it translates into (`--set`
    /// overrides applied to the file first).
    Fmus(Translation),
    /// A network of components, with the file's text (`None` if it could not be read: the
    /// loader then reports why).
    Network(Option<String>),
}

impl Detected {
    /// The network's text, the overrides still to apply to it, and how to name the loader's
    /// errors (with the FMU-only file's paths for a translated system). The text is moved,
    /// not copied: a file of 10⁵ components is tens of megabytes.
    pub fn parts(self, sets: &[String]) -> (Option<String>, &[String], Relabel) {
        match self {
            Detected::Fmus(t) => (Some(t.text()), &[], Relabel(Some(t))),
            Detected::Network(text) => (text, sets, Relabel(None)),
        }
    }
}

/// Names an error of the loader or the engine with the paths of the file the user wrote.
pub struct Relabel(Option<Translation>);

impl Relabel {
    pub fn error(&self, e: Error) -> Error {
        match &self.0 {
            Some(t) => t.error(e),
            None => e,
        }
    }
}

/// Whether `path` holds an FMU-only system, translated (with the overrides `sets`) into a
/// network; otherwise its text, read once for the loader.
pub fn detect(path: &Path, sets: &[String]) -> stiction_framework::Result<Detected> {
    Ok(match stiction_framework::system::read_system_file(path) {
        Ok(text) if is_fmu_system(&text) => Detected::Fmus(stiction::set::translate_with_sets(path, sets)?),
        Ok(text) => Detected::Network(Some(text)),
        Err(_) => Detected::Network(None),
    })
}
