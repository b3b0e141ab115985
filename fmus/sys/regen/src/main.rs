//! Regenerates the checked-in FMI bindings of `stiction-fmi-sys` with bindgen.
//!
//! `cargo run --manifest-path fmus/sys/regen/Cargo.toml -- write` rewrites
//! `fmus/sys/src/fmi2_bindings.rs` and `fmus/sys/src/fmi3_bindings.rs`; `-- check` generates
//! them in memory and exits with status 1 if a checked-in file differs. Needs libclang
//! (see `fmus/sys/README.md`). The headers are the official FMI 2.0.4 / 3.0 ones shipped in
//! the `fmi-sys` 0.6 crate's source, found with `cargo metadata`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};

/// The command that regenerates the bindings, quoted in each generated file's header.
const REGEN_COMMAND: &str = "cargo run --manifest-path fmus/sys/regen/Cargo.toml -- write";

/// One generated file: the FMI version, its top header, the bindgen item prefix and the
/// name of the dynamic-library struct.
struct Binding {
    /// Generated file name, in `fmus/sys/src`.
    file: &'static str,
    /// The standard's name and version, for the header comment.
    standard: &'static str,
    /// Header directory inside the `fmi-sys` source, and the header bindgen parses.
    headers: &'static str,
    header: &'static str,
    /// Items kept (regex) and the struct that loads the functions from a library.
    allowlist: &'static str,
    library: &'static str,
}

const BINDINGS: [Binding; 2] = [
    Binding {
        file: "fmi2_bindings.rs",
        standard: "FMI 2.0.4",
        headers: "fmi-standard2/headers",
        header: "fmi2Functions.h",
        allowlist: "fmi2.*",
        library: "Fmi2Binding",
    },
    Binding {
        file: "fmi3_bindings.rs",
        standard: "FMI 3.0",
        headers: "fmi-standard3/headers",
        header: "fmi3Functions.h",
        allowlist: "fmi3.*",
        library: "Fmi3Binding",
    },
];

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<ExitCode> {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let write = match mode.as_str() {
        "write" => true,
        "check" => false,
        _ => bail!("usage: stiction-fmi-sys-regen write|check"),
    };
    let fmi_sys = fmi_sys_dir()?;
    let out_dir = Path::new(env!("CARGO_MANIFEST_DIR")).parent().context("regen has no parent directory")?.join("src");
    let mut stale = Vec::new();
    for b in &BINDINGS {
        let text = generate(&fmi_sys, b)?;
        let path = out_dir.join(b.file);
        if write {
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
            println!("wrote {}", path.display());
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    if stale.is_empty() {
        if !write {
            println!("bindings up to date");
        }
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!("bindings differ from a fresh generation (run `{REGEN_COMMAND}`):");
    for path in stale {
        eprintln!("  {path}");
    }
    Ok(ExitCode::FAILURE)
}

/// The `fmi-sys` package's source directory, from `cargo metadata` on this crate.
fn fmi_sys_dir() -> Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(&manifest)
        .output()
        .context("running cargo metadata")?;
    if !out.status.success() {
        bail!("cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).context("parsing cargo metadata")?;
    let packages = meta["packages"].as_array().context("cargo metadata: no packages")?;
    let manifest_path = packages
        .iter()
        .find(|p| p["name"] == "fmi-sys")
        .and_then(|p| p["manifest_path"].as_str())
        .context("cargo metadata: no fmi-sys package")?;
    let dir = Path::new(manifest_path).parent().context("fmi-sys manifest path has no parent")?;
    Ok(dir.to_path_buf())
}

/// One binding file: the header comment, then bindgen's output with fmi-sys 0.6's options
/// plus a pinned Rust target and formatter, so the text depends only on the locked versions.
fn generate(fmi_sys: &Path, b: &Binding) -> Result<String> {
    let header = fmi_sys.join(b.headers).join(b.header);
    let header = header.to_str().context("non-UTF-8 path to the FMI headers")?;
    let target = bindgen::RustTarget::stable(85, 0).map_err(|e| anyhow::anyhow!("{e}"))?;
    let bindings = bindgen::Builder::default()
        .header(header)
        .dynamic_link_require_all(false)
        .dynamic_library_name(b.library)
        .allowlist_item(b.allowlist)
        .wrap_unsafe_ops(true)
        .rust_target(target)
        .rust_edition(bindgen::RustEdition::Edition2021)
        .formatter(bindgen::Formatter::Prettyplease)
        .generate()
        .with_context(|| format!("bindgen on {header} (is libclang found? see fmus/sys/README.md)"))?;
    Ok(format!(
        "// Generated by bindgen from the {standard} standard headers ({dir}/*.h in the fmi-sys 0.6\n\
         // crate; BSD-2-Clause, Copyright Modelica Association Project \"FMI\").\n\
         // Do not edit by hand: regenerate with `{REGEN_COMMAND}`\n\
         // (see fmus/sys/README.md).\n\n{bindings}",
        standard = b.standard,
        dir = b.headers,
    ))
}
