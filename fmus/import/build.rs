//! Compiles the FMI 2.0 logger shim (csrc/fmi2_logger.c): fmi2CallbackLogger is a C variadic
//! function, which stable Rust cannot define.

fn main() {
    println!("cargo:rerun-if-changed=csrc/fmi2_logger.c");
    cc::Build::new().file("csrc/fmi2_logger.c").warnings(true).compile("stiction_fmi2_logger");
}
