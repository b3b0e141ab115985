//! The FMI 3.0 C API, translated onto [`Instance`]. The models export Model Exchange and
//! Co-Simulation (Float64, Int32 and Boolean variables); every other function of the
//! standard is present, so hosts that bind the whole API load the binary, and answers Error
//! with a log message.
#![allow(unsafe_code)]
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use crate::ffi::{self, c_text, null, slice, string, with_instance};
use crate::instance::{resolve, resource_dir, Instance, Status, Version};
use crate::model::{Interface, VarType};
use std::ffi::{c_char, c_int, c_void};

type Inst = *mut c_void;
type Fmi3Status = c_int;
type Vr = u32;

/// fmi3LogMessageCallback: (instanceEnvironment, status, category, message).
type LogMessage = unsafe extern "C" fn(*mut c_void, c_int, *const c_char, *const c_char);

struct Env(*mut c_void);
// SAFETY: only handed back to the host's callback, never dereferenced here.
unsafe impl Send for Env {}

fn code(s: Status) -> Fmi3Status {
    s as c_int
}

#[no_mangle]
pub extern "C" fn fmi3GetVersion() -> *const c_char {
    c"3.0".as_ptr()
}

/// Shared body of the instantiate functions.
unsafe fn instantiate(
    function: &str,
    interface: Interface,
    instance_name: *const c_char,
    token: *const c_char,
    resource_path: *const c_char,
    logging_on: bool,
    env: *mut c_void,
    log_message: Option<LogMessage>,
) -> Inst {
    let env = Env(env);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let log: crate::instance::Logger = Box::new(move |status, category, message| {
            let env = &env;
            match log_message {
                Some(l) => {
                    let (cat, msg) = (c_text(category), c_text(message));
                    // SAFETY: the host's callback with valid NUL-terminated strings.
                    unsafe { l(env.0, status as c_int, cat.as_ptr(), msg.as_ptr()) };
                }
                None => eprintln!("[{category}] {message}"),
            }
        });
        let fail = |msg: String| {
            log(Status::Error, "logStatusError", &format!("{function}: {msg}"));
            std::ptr::null_mut()
        };
        // SAFETY: NULL or NUL-terminated strings by the FMI contract.
        let name = unsafe { string(instance_name) }.unwrap_or("").to_string();
        if name.is_empty() {
            return fail("instanceName is NULL or empty".into());
        }
        // SAFETY: as above.
        let Some(token) = (unsafe { string(token) }) else { return fail("instantiationToken is NULL".into()) };
        // SAFETY: as above.
        let resources = unsafe { string(resource_path) }.and_then(resource_dir);
        let (model, starts) = match resolve(token, resources.as_deref()) {
            Ok(x) => x,
            Err(e) => return fail(e),
        };
        if interface == Interface::ModelExchange && !model.info().model_exchange {
            return fail(format!("{} has no Model Exchange interface", model.info().identifier));
        }
        ffi::new_instance(Instance::new(name, model, starts, interface, Version::Fmi3, log, logging_on))
    }));
    result.unwrap_or(std::ptr::null_mut())
}

#[no_mangle]
pub unsafe extern "C" fn fmi3InstantiateModelExchange(
    instance_name: *const c_char,
    token: *const c_char,
    resource_path: *const c_char,
    _visible: bool,
    logging_on: bool,
    env: *mut c_void,
    log_message: Option<LogMessage>,
) -> Inst {
    // SAFETY: forwarded FMI arguments.
    unsafe {
        instantiate(
            "fmi3InstantiateModelExchange",
            Interface::ModelExchange,
            instance_name,
            token,
            resource_path,
            logging_on,
            env,
            log_message,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3InstantiateCoSimulation(
    instance_name: *const c_char,
    token: *const c_char,
    resource_path: *const c_char,
    _visible: bool,
    logging_on: bool,
    event_mode_used: bool,
    _early_return_allowed: bool,
    _required_intermediate: *const Vr,
    _n_required_intermediate: usize,
    env: *mut c_void,
    log_message: Option<LogMessage>,
    _intermediate_update: *mut c_void,
) -> Inst {
    if event_mode_used {
        if let Some(l) = log_message {
            let msg = c_text("fmi3InstantiateCoSimulation: eventModeUsed requested but hasEventMode=\"false\"");
            // SAFETY: the host's callback with valid strings.
            unsafe { l(env, Status::Error as c_int, c"logStatusError".as_ptr(), msg.as_ptr()) };
        }
        return std::ptr::null_mut();
    }
    // SAFETY: forwarded FMI arguments.
    unsafe {
        instantiate(
            "fmi3InstantiateCoSimulation",
            Interface::CoSimulation,
            instance_name,
            token,
            resource_path,
            logging_on,
            env,
            log_message,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3InstantiateScheduledExecution(
    _instance_name: *const c_char,
    _token: *const c_char,
    _resource_path: *const c_char,
    _visible: bool,
    _logging_on: bool,
    env: *mut c_void,
    log_message: Option<LogMessage>,
    _clock_update: *mut c_void,
    _lock: *mut c_void,
    _unlock: *mut c_void,
) -> Inst {
    if let Some(l) = log_message {
        let msg = c_text("fmi3InstantiateScheduledExecution: this FMU provides Model Exchange and Co-Simulation only");
        // SAFETY: the host's callback with valid strings.
        unsafe { l(env, Status::Error as c_int, c"logStatusError".as_ptr(), msg.as_ptr()) };
    }
    std::ptr::null_mut()
}

#[no_mangle]
pub unsafe extern "C" fn fmi3FreeInstance(c: Inst) {
    // SAFETY: checked handle.
    unsafe { ffi::free_instance(c) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetDebugLogging(
    c: Inst,
    logging_on: bool,
    n: usize,
    categories: *const *const c_char,
) -> Fmi3Status {
    code(with_instance("fmi3SetDebugLogging", c, |i| {
        ffi::check_count(i, "fmi3SetDebugLogging", "nCategories", n)?;
        // SAFETY: n strings by the FMI contract.
        let Some(cats) = (unsafe { slice(categories, n) }) else {
            return Err(null(i, "fmi3SetDebugLogging", "categories"));
        };
        for &cat in cats {
            // SAFETY: NUL-terminated strings.
            match unsafe { string(cat) } {
                Some(
                    "logEvents" | "logStatusWarning" | "logStatusDiscard" | "logStatusError" | "logStatusFatal"
                    | "logAll",
                ) => {}
                other => return i.error(format!("fmi3SetDebugLogging: unknown log category {other:?}")),
            }
        }
        i.logging_on = logging_on;
        Ok(())
    }))
}

#[no_mangle]
pub unsafe extern "C" fn fmi3EnterInitializationMode(
    c: Inst,
    _tolerance_defined: bool,
    _tolerance: f64,
    start_time: f64,
    _stop_time_defined: bool,
    _stop_time: f64,
) -> Fmi3Status {
    code(with_instance("fmi3EnterInitializationMode", c, |i| {
        i.setup_experiment(start_time)?;
        i.enter_initialization()
    }))
}

#[no_mangle]
pub unsafe extern "C" fn fmi3ExitInitializationMode(c: Inst) -> Fmi3Status {
    code(with_instance("fmi3ExitInitializationMode", c, |i| i.exit_initialization()))
}

#[no_mangle]
pub unsafe extern "C" fn fmi3EnterEventMode(c: Inst) -> Fmi3Status {
    code(with_instance("fmi3EnterEventMode", c, |i| i.enter_event_mode()))
}

#[no_mangle]
pub unsafe extern "C" fn fmi3Terminate(c: Inst) -> Fmi3Status {
    code(with_instance("fmi3Terminate", c, |i| i.terminate()))
}

#[no_mangle]
pub unsafe extern "C" fn fmi3Reset(c: Inst) -> Fmi3Status {
    code(with_instance("fmi3Reset", c, |i| {
        i.reset();
        Ok(())
    }))
}

/// Typed getters and setters ([`ffi::get_values`], [`ffi::set_values`]); FMI 3.0 also
/// passes nValues, which must equal nvr for scalar variables.
unsafe fn get<T>(
    f: &'static str,
    c: Inst,
    vr: *const Vr,
    n: usize,
    out: *mut T,
    nv: usize,
    ty: VarType,
    put: impl Fn(f64) -> T,
) -> Fmi3Status {
    if nv != n {
        return code(unsafe {
            with_instance(f, c, |i| i.error(format!("{f}: nValues = {nv} for {n} scalar variables")))
        });
    }
    // SAFETY: forwarded FMI arguments.
    code(unsafe { ffi::get_values(f, c, vr, n, out, ty, put) })
}

unsafe fn set<T: Copy>(
    f: &'static str,
    c: Inst,
    vr: *const Vr,
    n: usize,
    v: *const T,
    nv: usize,
    ty: VarType,
    take: impl Fn(T) -> f64,
) -> Fmi3Status {
    if nv != n {
        return code(unsafe {
            with_instance(f, c, |i| i.error(format!("{f}: nValues = {nv} for {n} scalar variables")))
        });
    }
    // SAFETY: forwarded FMI arguments.
    code(unsafe { ffi::set_values(f, c, vr, n, v, ty, take) })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetFloat64(c: Inst, vr: *const Vr, n: usize, v: *mut f64, nv: usize) -> Fmi3Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { get("fmi3GetFloat64", c, vr, n, v, nv, VarType::Float64, |x| x) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetFloat64(c: Inst, vr: *const Vr, n: usize, v: *const f64, nv: usize) -> Fmi3Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { set("fmi3SetFloat64", c, vr, n, v, nv, VarType::Float64, |x| x) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetInt32(c: Inst, vr: *const Vr, n: usize, v: *mut i32, nv: usize) -> Fmi3Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { get("fmi3GetInt32", c, vr, n, v, nv, VarType::Int32, |x| x as i32) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetInt32(c: Inst, vr: *const Vr, n: usize, v: *const i32, nv: usize) -> Fmi3Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { set("fmi3SetInt32", c, vr, n, v, nv, VarType::Int32, f64::from) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetBoolean(c: Inst, vr: *const Vr, n: usize, v: *mut bool, nv: usize) -> Fmi3Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { get("fmi3GetBoolean", c, vr, n, v, nv, VarType::Boolean, |x| x != 0.0) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetBoolean(c: Inst, vr: *const Vr, n: usize, v: *const bool, nv: usize) -> Fmi3Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { set("fmi3SetBoolean", c, vr, n, v, nv, VarType::Boolean, |x| f64::from(u8::from(x))) }
}

/// Getters and setters of types the models do not use: nvr = 0 is OK, anything else is an
/// unknown value reference.
macro_rules! absent_type {
    ($get:ident, $set:ident, $t:ty, $name:literal) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(c: Inst, _vr: *const Vr, n: usize, _v: *mut $t, nv: usize) -> Fmi3Status {
            code(with_instance(stringify!($get), c, |i| {
                if nv != n {
                    i.error(format!(concat!(stringify!($get), ": nValues = {} for {} value references"), nv, n))
                } else if n == 0 {
                    Ok(())
                } else {
                    i.error(concat!(stringify!($get), ": the model has no ", $name, " variables"))
                }
            }))
        }
        #[no_mangle]
        pub unsafe extern "C" fn $set(c: Inst, _vr: *const Vr, n: usize, _v: *const $t, nv: usize) -> Fmi3Status {
            code(with_instance(stringify!($set), c, |i| {
                if nv != n {
                    i.error(format!(concat!(stringify!($set), ": nValues = {} for {} value references"), nv, n))
                } else if n == 0 {
                    Ok(())
                } else {
                    i.error(concat!(stringify!($set), ": the model has no ", $name, " variables"))
                }
            }))
        }
    };
}

absent_type!(fmi3GetFloat32, fmi3SetFloat32, f32, "Float32");
absent_type!(fmi3GetInt8, fmi3SetInt8, i8, "Int8");
absent_type!(fmi3GetUInt8, fmi3SetUInt8, u8, "UInt8");
absent_type!(fmi3GetInt16, fmi3SetInt16, i16, "Int16");
absent_type!(fmi3GetUInt16, fmi3SetUInt16, u16, "UInt16");
absent_type!(fmi3GetUInt32, fmi3SetUInt32, u32, "UInt32");
absent_type!(fmi3GetInt64, fmi3SetInt64, i64, "Int64");
absent_type!(fmi3GetUInt64, fmi3SetUInt64, u64, "UInt64");
absent_type!(fmi3GetString, fmi3SetString, *const c_char, "String");

#[no_mangle]
pub unsafe extern "C" fn fmi3GetBinary(
    c: Inst,
    _vr: *const Vr,
    n: usize,
    _sizes: *mut usize,
    _v: *mut *const u8,
    nv: usize,
) -> Fmi3Status {
    code(with_instance("fmi3GetBinary", c, |i| {
        if nv != n {
            i.error(format!("fmi3GetBinary: nValues = {nv} for {n} value references"))
        } else if n == 0 {
            Ok(())
        } else {
            i.error("fmi3GetBinary: the model has no Binary variables")
        }
    }))
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetBinary(
    c: Inst,
    _vr: *const Vr,
    n: usize,
    _sizes: *const usize,
    _v: *const *const u8,
    nv: usize,
) -> Fmi3Status {
    code(with_instance("fmi3SetBinary", c, |i| {
        if nv != n {
            i.error(format!("fmi3SetBinary: nValues = {nv} for {n} value references"))
        } else if n == 0 {
            Ok(())
        } else {
            i.error("fmi3SetBinary: the model has no Binary variables")
        }
    }))
}

/// Functions for features the models do not have (clocks, configuration mode,
/// dependencies, derivatives): Error with a log message.
macro_rules! unsupported {
    ($name:ident ( $($arg:ident : $t:ty),* ), $why:literal) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name(c: Inst, $($arg: $t),*) -> Fmi3Status {
            $(let _ = $arg;)*
            code(with_instance(stringify!($name), c, |i| i.error(concat!(stringify!($name), ": ", $why))))
        }
    };
}

unsupported!(fmi3GetClock(vr: *const Vr, n: usize, v: *mut bool), "the model has no clocks");
unsupported!(fmi3SetClock(vr: *const Vr, n: usize, v: *const bool), "the model has no clocks");
unsupported!(fmi3GetIntervalDecimal(vr: *const Vr, n: usize, v: *mut f64, q: *mut c_int), "the model has no clocks");
unsupported!(fmi3GetIntervalFraction(vr: *const Vr, n: usize, a: *mut u64, b: *mut u64, q: *mut c_int), "the model has no clocks");
unsupported!(fmi3GetShiftDecimal(vr: *const Vr, n: usize, v: *mut f64), "the model has no clocks");
unsupported!(fmi3GetShiftFraction(vr: *const Vr, n: usize, a: *mut u64, b: *mut u64), "the model has no clocks");
unsupported!(fmi3SetIntervalDecimal(vr: *const Vr, n: usize, v: *const f64), "the model has no clocks");
unsupported!(fmi3SetIntervalFraction(vr: *const Vr, n: usize, a: *const u64, b: *const u64), "the model has no clocks");
unsupported!(fmi3SetShiftDecimal(vr: *const Vr, n: usize, v: *const f64), "the model has no clocks");
unsupported!(fmi3SetShiftFraction(vr: *const Vr, n: usize, a: *const u64, b: *const u64), "the model has no clocks");
unsupported!(fmi3EnterConfigurationMode(), "the model has no structural parameters");
unsupported!(fmi3ExitConfigurationMode(), "the model has no structural parameters");
unsupported!(fmi3GetNumberOfVariableDependencies(vr: Vr, n: *mut usize), "dependencies are not provided");
unsupported!(
    fmi3GetVariableDependencies(dep: Vr, a: *mut usize, b: *mut Vr, d: *mut usize, k: *mut c_int, n: usize),
    "dependencies are not provided"
);
unsupported!(
    fmi3GetDirectionalDerivative(u: *const Vr, nu: usize, k: *const Vr, nk: usize, s: *const f64, ns: usize, o: *mut f64, no: usize),
    "directional derivatives are not provided"
);
unsupported!(
    fmi3GetAdjointDerivative(u: *const Vr, nu: usize, k: *const Vr, nk: usize, s: *const f64, ns: usize, o: *mut f64, no: usize),
    "adjoint derivatives are not provided"
);
unsupported!(fmi3GetOutputDerivatives(vr: *const Vr, n: usize, o: *const i32, v: *mut f64, nv: usize), "maxOutputDerivativeOrder is 0");
unsupported!(fmi3EvaluateDiscreteStates(), "the model has no clocked partitions");
unsupported!(fmi3ActivateModelPartition(clock: Vr, t: f64), "the FMU has no Scheduled Execution interface");
unsupported!(fmi3EnterStepMode(), "hasEventMode is false: the instance is in step mode after initialization");

// ---- FMU state ----

#[no_mangle]
pub unsafe extern "C" fn fmi3GetFMUState(c: Inst, state: *mut *mut c_void) -> Fmi3Status {
    // SAFETY: forwarded FMI arguments.
    code(unsafe { ffi::get_fmu_state("fmi3GetFMUState", "FMUState", c, state) })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetFMUState(c: Inst, state: *mut c_void) -> Fmi3Status {
    // SAFETY: forwarded FMI arguments.
    code(unsafe { ffi::set_fmu_state("fmi3SetFMUState", c, state) })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3FreeFMUState(c: Inst, state: *mut *mut c_void) -> Fmi3Status {
    // SAFETY: forwarded FMI arguments.
    code(unsafe { ffi::free_fmu_state("fmi3FreeFMUState", "FMUState", c, state) })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SerializedFMUStateSize(c: Inst, state: *mut c_void, size: *mut usize) -> Fmi3Status {
    // SAFETY: forwarded FMI arguments.
    code(unsafe { ffi::serialized_size("fmi3SerializedFMUStateSize", c, state, size) })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SerializeFMUState(c: Inst, state: *mut c_void, bytes: *mut u8, size: usize) -> Fmi3Status {
    // SAFETY: forwarded FMI arguments.
    code(unsafe { ffi::serialize("fmi3SerializeFMUState", c, state, bytes, size) })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3DeserializeFMUState(
    c: Inst,
    bytes: *const u8,
    size: usize,
    state: *mut *mut c_void,
) -> Fmi3Status {
    // SAFETY: forwarded FMI arguments.
    code(unsafe { ffi::deserialize("fmi3DeserializeFMUState", "FMUState", c, bytes, size, state) })
}

// ---- Model Exchange ----

#[no_mangle]
pub unsafe extern "C" fn fmi3EnterContinuousTimeMode(c: Inst) -> Fmi3Status {
    code(with_instance("fmi3EnterContinuousTimeMode", c, |i| i.enter_continuous_time_mode()))
}

#[no_mangle]
pub unsafe extern "C" fn fmi3UpdateDiscreteStates(
    c: Inst,
    needs_update: *mut bool,
    terminate: *mut bool,
    nominals_changed: *mut bool,
    values_changed: *mut bool,
    next_defined: *mut bool,
    next_time: *mut f64,
) -> Fmi3Status {
    code(with_instance("fmi3UpdateDiscreteStates", c, |i| {
        if [needs_update, terminate, nominals_changed, values_changed, next_defined].iter().any(|p| p.is_null())
            || next_time.is_null()
        {
            return Err(null(i, "fmi3UpdateDiscreteStates", "an output argument"));
        }
        let u = i.update_discrete_states()?;
        // SAFETY: non-NULL out pointers.
        unsafe {
            *needs_update = false;
            *terminate = false;
            *nominals_changed = false;
            *values_changed = u.states_changed;
            *next_defined = false;
            *next_time = 0.0;
        }
        Ok(())
    }))
}

#[no_mangle]
pub unsafe extern "C" fn fmi3CompletedIntegratorStep(
    c: Inst,
    _no_set_prior: bool,
    enter_event: *mut bool,
    terminate: *mut bool,
) -> Fmi3Status {
    code(with_instance("fmi3CompletedIntegratorStep", c, |i| {
        if enter_event.is_null() || terminate.is_null() {
            return Err(null(i, "fmi3CompletedIntegratorStep", "enterEventMode or terminateSimulation"));
        }
        i.completed_integrator_step()?;
        // SAFETY: non-NULL out pointers.
        unsafe {
            *enter_event = false;
            *terminate = false;
        }
        Ok(())
    }))
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetTime(c: Inst, time: f64) -> Fmi3Status {
    code(with_instance("fmi3SetTime", c, |i| i.set_time(time)))
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetContinuousStates(c: Inst, x: *const f64, n: usize) -> Fmi3Status {
    code(with_instance("fmi3SetContinuousStates", c, |i| {
        ffi::check_count(i, "fmi3SetContinuousStates", "nContinuousStates", n)?;
        // SAFETY: n readable elements.
        match unsafe { slice(x, n) } {
            Some(x) => i.set_states(x),
            None => Err(null(i, "fmi3SetContinuousStates", "continuousStates")),
        }
    }))
}

/// The calls that fill a state-sized array ([`ffi::fill`]).
unsafe fn fill(
    f: &'static str,
    c: Inst,
    x: *mut f64,
    n: usize,
    g: impl FnOnce(&mut Instance, &mut [f64]) -> Result<(), Status>,
) -> Fmi3Status {
    // SAFETY: forwarded FMI arguments.
    code(unsafe { ffi::fill(f, c, x, n, g) })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetContinuousStateDerivatives(c: Inst, dx: *mut f64, n: usize) -> Fmi3Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { fill("fmi3GetContinuousStateDerivatives", c, dx, n, |i, o| i.get_derivatives(o)) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetEventIndicators(c: Inst, z: *mut f64, n: usize) -> Fmi3Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { fill("fmi3GetEventIndicators", c, z, n, |i, o| i.get_event_indicators(o)) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetContinuousStates(c: Inst, x: *mut f64, n: usize) -> Fmi3Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { fill("fmi3GetContinuousStates", c, x, n, |i, o| i.get_states(o)) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetNominalsOfContinuousStates(c: Inst, x: *mut f64, n: usize) -> Fmi3Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { fill("fmi3GetNominalsOfContinuousStates", c, x, n, |i, o| i.get_nominals(o)) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetNumberOfEventIndicators(c: Inst, n: *mut usize) -> Fmi3Status {
    code(with_instance("fmi3GetNumberOfEventIndicators", c, |i| {
        if n.is_null() {
            return Err(null(i, "fmi3GetNumberOfEventIndicators", "nEventIndicators"));
        }
        // SAFETY: non-NULL out pointer.
        unsafe { *n = i.info().event_indicators };
        Ok(())
    }))
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetNumberOfContinuousStates(c: Inst, n: *mut usize) -> Fmi3Status {
    code(with_instance("fmi3GetNumberOfContinuousStates", c, |i| {
        if n.is_null() {
            return Err(null(i, "fmi3GetNumberOfContinuousStates", "nContinuousStates"));
        }
        // SAFETY: non-NULL out pointer.
        unsafe { *n = i.info().states().len() };
        Ok(())
    }))
}

// ---- Co-Simulation ----

#[no_mangle]
pub unsafe extern "C" fn fmi3DoStep(
    c: Inst,
    t: f64,
    h: f64,
    _no_set_prior: bool,
    event_handling_needed: *mut bool,
    terminate: *mut bool,
    early_return: *mut bool,
    last_successful_time: *mut f64,
) -> Fmi3Status {
    code(with_instance("fmi3DoStep", c, |i| {
        if event_handling_needed.is_null()
            || terminate.is_null()
            || early_return.is_null()
            || last_successful_time.is_null()
        {
            return Err(null(i, "fmi3DoStep", "an output argument"));
        }
        let mut r = i.do_step(t, h);
        // A request of the model to end the simulation: terminateSimulation, with OK when
        // the whole step was made and Discard (lastSuccessfulTime) when it ended before.
        let requested = r == Err(Status::Discard) && i.terminate_requested;
        if requested && i.time >= t + h - 1e-9 * h {
            r = Ok(());
        }
        // SAFETY: non-NULL out pointers.
        unsafe {
            *event_handling_needed = false;
            *terminate = r.is_err() || requested;
            *early_return = false;
            *last_successful_time = i.time;
        }
        r
    }))
}
