//! Tell the module where the FMU binary (the cdylib of `stiction-fmus`, built as a dependency
//! into the same `deps/` directory) is, so `export_fmu` can embed it with `include_bytes!`:
//! an installed wheel has no cargo target directory to find it in at run time.

use std::path::PathBuf;

fn main() {
    // OUT_DIR = <target>/<profile>/build/<package>-<hash>/out
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let profile_dir = out.ancestors().nth(3).expect("OUT_DIR is inside the target directory").to_path_buf();
    let lib = profile_dir.join("deps").join("libstiction_fmus.so");
    println!("cargo:rustc-env=STICTION_FMU_BINARY={}", lib.display());
    println!("cargo:rerun-if-changed=build.rs");
}
