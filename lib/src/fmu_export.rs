//! Export the gear and friction models as FMUs: the steps of `stiction fmu export` as one
//! library call, for the Python package (`stiction.export_fmu`) and other embedders.

use std::path::{Path, PathBuf};
use stiction_fmus::{find_model, Export, FmiVersion, Interfaces};

/// Which FMI interfaces the exported FMU declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interface {
    /// Co-Simulation only.
    Cs,
    /// Model Exchange only.
    Me,
    /// Both.
    Both,
}

impl Interface {
    /// `"cs"`, `"me"` or `"both"` (the CLI's `--interface` values).
    pub fn parse(s: &str) -> Result<Interface, String> {
        match s {
            "cs" => Ok(Interface::Cs),
            "me" => Ok(Interface::Me),
            "both" => Ok(Interface::Both),
            other => Err(format!("interface {other:?}: expected \"cs\", \"me\" or \"both\"")),
        }
    }
}

/// Write `model` (`gear`, `friction`, `friction-mass` or its identifier) as an FMI `fmi`
/// (2 or 3) FMU to `out`, with the start values `params` (`NAME=VALUE`), taking the FMU
/// binary from the file `library` gives (asked only once the arguments are checked).
/// Returns the FMU's identifier and GUID. Every error names the argument that is wrong.
pub fn export_fmu(
    model: &str,
    fmi: u32,
    interface: Interface,
    params: &[String],
    library: impl FnOnce() -> Result<PathBuf, String>,
    out: &Path,
) -> Result<(String, String), String> {
    let info = find_model(model)
        .ok_or_else(|| format!("unknown model {model:?}: expected gear, friction or friction-mass"))?;
    let version = match fmi {
        2 => FmiVersion::V2,
        3 => FmiVersion::V3,
        other => return Err(format!("fmi {other}: expected 2 or 3")),
    };
    let interfaces = Interfaces {
        model_exchange: matches!(interface, Interface::Me | Interface::Both),
        co_simulation: matches!(interface, Interface::Cs | Interface::Both),
    };
    let mut export = Export::new(info, version, interfaces)?;
    for p in params {
        export.set(p)?;
    }
    export.validate().map_err(|e| format!("{}: {e}", info.identifier))?;
    export.write(&library()?, out)?;
    Ok((info.identifier.to_string(), export.guid()))
}
