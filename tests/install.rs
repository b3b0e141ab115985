//! The command line installs as README.md and the first tutorial say: `cargo install --path .`
//! from the clone puts `stiction` into ROOT/bin (~/.cargo/bin by default), and the documented
//! commands then run with the bare name (tests/readme.rs runs them that way, with the binary
//! under test first on PATH).
//!
//! Always: the root package is what `cargo install --path .` installs, a binary target named
//! `stiction` (cargo metadata). With STICTION_TEST_INSTALL=1: the real `cargo install --path .
//! --root TMP --locked` (a release build of its own, several minutes on 2 cores), then
//! `stiction --version` and a run through PATH=TMP/bin.

use std::path::Path;
use std::process::Command;

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

#[test]
fn the_root_package_installs_a_binary_named_stiction() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(cargo())
        .args(["metadata", "--no-deps", "--format-version", "1", "--offline", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .output()
        .expect("cargo metadata");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let manifest = root.join("Cargo.toml").canonicalize().unwrap();
    let package = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| Path::new(p["manifest_path"].as_str().unwrap()).canonicalize().ok() == Some(manifest.clone()))
        .expect("the root package");
    let bins: Vec<&str> = package["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(bins, ["stiction"], "`cargo install --path .` installs exactly the `stiction` binary");

    if std::env::var_os("STICTION_TEST_INSTALL").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new(cargo())
        .args(["install", "--locked", "--path"])
        .arg(root)
        .arg("--root")
        .arg(dir.path())
        .arg("--target-dir")
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("install-target"))
        .status()
        .expect("cargo install");
    assert!(status.success(), "cargo install --path . failed");
    let bin = dir.path().join("bin");
    assert!(bin.join("stiction").is_file(), "no {}", bin.join("stiction").display());
    let path = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let run = |script: &str| {
        let o = Command::new("sh").arg("-c").arg(script).env("PATH", &path).current_dir(root).output().unwrap();
        assert!(o.status.success(), "{script}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert!(run("stiction --version").starts_with("stiction "));
    let csv = run("stiction run examples/ramp_block.json -o - --quiet");
    assert!(csv.starts_with("time,q,v,friction,hand_force,stuck\n"), "{csv}");
}
