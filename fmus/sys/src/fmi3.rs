//! FMI 3.0: types, constants, callback types and [`Fmi3Binding`], generated from the
//! official FMI 3.0 headers.
#![allow(unsafe_code, non_upper_case_globals, non_camel_case_types, non_snake_case, dead_code, clippy::all)]

include!("fmi3_bindings.rs");
