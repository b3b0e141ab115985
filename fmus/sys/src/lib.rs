#![doc = include_str!("../README.md")]
#![deny(unsafe_code)]

pub mod fmi2;
pub mod fmi3;
