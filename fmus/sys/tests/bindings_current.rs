//! The checked-in bindings equal a fresh bindgen run on the headers (`regen -- check`).

use std::path::Path;
use std::process::Command;

#[test]
#[ignore = "needs libclang (pip install libclang; see fmus/sys/README.md) and the regen crate's dependencies"]
fn checked_in_bindings_match_the_headers() {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("regen/Cargo.toml");
    // A target directory of its own: the outer `cargo test` holds the lock on the workspace's.
    let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fmi-sys-regen");
    let status = Command::new(cargo)
        .args(["run", "--quiet", "--locked", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target_dir)
        .args(["--", "check"])
        .status()
        .expect("cannot run cargo");
    assert!(
        status.success(),
        "fmus/sys/src/*_bindings.rs differ from a fresh generation (or regen failed; see stderr)"
    );
}
