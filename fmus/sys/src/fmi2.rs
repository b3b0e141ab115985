//! FMI 2.0: types, constants, callback structs and [`Fmi2Binding`], generated from the
//! official FMI 2.0.4 headers.
#![allow(unsafe_code, non_upper_case_globals, non_camel_case_types, non_snake_case, dead_code, clippy::all)]

include!("fmi2_bindings.rs");

/// All flags false and `nextEventTime` 0, as fmi-sys provides it.
impl Default for fmi2EventInfo {
    fn default() -> Self {
        fmi2EventInfo {
            newDiscreteStatesNeeded: 0,
            terminateSimulation: 0,
            nominalsOfContinuousStatesChanged: 0,
            valuesOfContinuousStatesChanged: 0,
            nextEventTimeDefined: 0,
            nextEventTime: 0.0,
        }
    }
}
