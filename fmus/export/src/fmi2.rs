//! The FMI 2.0 C API (Model Exchange and Co-Simulation), translated onto [`Instance`].
#![allow(unsafe_code)]
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::not_unsafe_ptr_arg_deref)]

use crate::ffi::{self, c_message, null, slice, string, with_instance};
use crate::instance::{resolve, resource_dir, Instance, Phase, Status, Version};
use crate::model::{Interface, VarType};
use std::ffi::{c_char, c_int, c_void};

type Component = *mut c_void;
type Fmi2Status = c_int;
type Fmi2Boolean = c_int;
type Vr = u32;

/// fmi2CallbackLogger: (env, instanceName, status, category, message, ...).
type Logger = unsafe extern "C" fn(*mut c_void, *const c_char, c_int, *const c_char, *const c_char, ...);

/// fmi2CallbackFunctions.
#[repr(C)]
pub struct CallbackFunctions {
    logger: Option<Logger>,
    allocate_memory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    free_memory: Option<unsafe extern "C" fn(*mut c_void)>,
    step_finished: Option<unsafe extern "C" fn(*mut c_void, c_int)>,
    component_environment: *mut c_void,
}

/// fmi2EventInfo.
#[repr(C)]
pub struct EventInfo {
    new_discrete_states_needed: Fmi2Boolean,
    terminate_simulation: Fmi2Boolean,
    nominals_of_continuous_states_changed: Fmi2Boolean,
    values_of_continuous_states_changed: Fmi2Boolean,
    next_event_time_defined: Fmi2Boolean,
    next_event_time: f64,
}

/// A Send wrapper for the host's environment pointer (the host owns it; we only pass it back).
struct Env(*mut c_void);
// SAFETY: the pointer is only handed back to the host's logger, never dereferenced here.
unsafe impl Send for Env {}

fn code(s: Status) -> Fmi2Status {
    s as c_int
}

#[no_mangle]
pub extern "C" fn fmi2GetTypesPlatform() -> *const c_char {
    c"default".as_ptr()
}

#[no_mangle]
pub extern "C" fn fmi2GetVersion() -> *const c_char {
    c"2.0".as_ptr()
}

#[no_mangle]
pub unsafe extern "C" fn fmi2Instantiate(
    instance_name: *const c_char,
    fmu_type: c_int,
    guid: *const c_char,
    resource_location: *const c_char,
    functions: *const CallbackFunctions,
    _visible: Fmi2Boolean,
    logging_on: Fmi2Boolean,
) -> Component {
    let result = std::panic::catch_unwind(|| {
        // SAFETY: NULL or a host-owned struct valid for the instance's lifetime (FMI 2.0).
        let callbacks = unsafe { functions.as_ref() };
        let logger = callbacks.and_then(|c| c.logger);
        let env = Env(callbacks.map_or(std::ptr::null_mut(), |c| c.component_environment));
        // SAFETY: NULL or NUL-terminated strings by the FMI contract.
        let name = unsafe { string(instance_name) }.unwrap_or("").to_string();
        let cname = c_message(&name);
        let log: crate::instance::Logger = Box::new(move |status, category, message| {
            let env = &env;
            match logger {
                Some(l) => {
                    let (cat, msg) = (c_message(category), c_message(message));
                    // SAFETY: the host's logger, called with valid NUL-terminated strings.
                    unsafe { l(env.0, cname.as_ptr(), status as c_int, cat.as_ptr(), msg.as_ptr()) };
                }
                None => eprintln!("[{category}] {message}"),
            }
        });
        let fail = |msg: String| {
            log(Status::Error, "logStatusError", &format!("fmi2Instantiate: {msg}"));
            std::ptr::null_mut()
        };
        if callbacks.is_none() || logger.is_none() {
            return fail("the callback functions (or their logger) are NULL".into());
        }
        if name.is_empty() {
            return fail("instanceName is NULL or empty".into());
        }
        let interface = match fmu_type {
            0 => Interface::ModelExchange,
            1 => Interface::CoSimulation,
            t => return fail(format!("unknown fmuType {t}")),
        };
        // SAFETY: as above.
        let Some(token) = (unsafe { string(guid) }) else { return fail("fmuGUID is NULL".into()) };
        // SAFETY: as above.
        let resources = unsafe { string(resource_location) }.and_then(resource_dir);
        let (model, starts) = match resolve(token, resources.as_deref()) {
            Ok(x) => x,
            Err(e) => return fail(e),
        };
        if interface == Interface::ModelExchange && !model.info().model_exchange {
            return fail(format!("{} has no Model Exchange interface", model.info().identifier));
        }
        let inst = Instance::new(name, model, starts, interface, Version::Fmi2, log, logging_on != 0);
        ffi::new_instance(inst)
    });
    result.unwrap_or(std::ptr::null_mut())
}

#[no_mangle]
pub unsafe extern "C" fn fmi2FreeInstance(c: Component) {
    // SAFETY: checked handle.
    unsafe { ffi::free_instance(c) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetDebugLogging(
    c: Component,
    logging_on: Fmi2Boolean,
    n: usize,
    categories: *const *const c_char,
) -> Fmi2Status {
    code(with_instance("fmi2SetDebugLogging", c, |i| {
        ffi::check_count(i, "fmi2SetDebugLogging", "nCategories", n)?;
        // SAFETY: n category strings by the FMI contract.
        let Some(cats) = (unsafe { slice(categories, n) }) else {
            return Err(null(i, "fmi2SetDebugLogging", "categories"));
        };
        for &cat in cats {
            // SAFETY: NUL-terminated strings.
            match unsafe { string(cat) } {
                Some(
                    "logEvents" | "logStatusWarning" | "logStatusDiscard" | "logStatusError" | "logStatusFatal"
                    | "logAll",
                ) => {}
                other => return i.error(format!("fmi2SetDebugLogging: unknown log category {other:?}")),
            }
        }
        i.logging_on = logging_on != 0;
        Ok(())
    }))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetupExperiment(
    c: Component,
    _tolerance_defined: Fmi2Boolean,
    _tolerance: f64,
    start_time: f64,
    _stop_time_defined: Fmi2Boolean,
    _stop_time: f64,
) -> Fmi2Status {
    code(with_instance("fmi2SetupExperiment", c, |i| i.setup_experiment(start_time)))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2EnterInitializationMode(c: Component) -> Fmi2Status {
    code(with_instance("fmi2EnterInitializationMode", c, |i| i.enter_initialization()))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2ExitInitializationMode(c: Component) -> Fmi2Status {
    code(with_instance("fmi2ExitInitializationMode", c, |i| i.exit_initialization()))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2Terminate(c: Component) -> Fmi2Status {
    code(with_instance("fmi2Terminate", c, |i| i.terminate()))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2Reset(c: Component) -> Fmi2Status {
    code(with_instance("fmi2Reset", c, |i| {
        i.reset();
        Ok(())
    }))
}

/// Typed getters and setters ([`ffi::get_values`], [`ffi::set_values`]).
unsafe fn get<T>(
    f: &'static str,
    c: Component,
    vr: *const Vr,
    n: usize,
    out: *mut T,
    ty: VarType,
    put: impl Fn(f64) -> T,
) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    code(unsafe { ffi::get_values(f, c, vr, n, out, ty, put) })
}

unsafe fn set<T: Copy>(
    f: &'static str,
    c: Component,
    vr: *const Vr,
    n: usize,
    v: *const T,
    ty: VarType,
    take: impl Fn(T) -> f64,
) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    code(unsafe { ffi::set_values(f, c, vr, n, v, ty, take) })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetReal(c: Component, vr: *const Vr, n: usize, value: *mut f64) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { get("fmi2GetReal", c, vr, n, value, VarType::Float64, |x| x) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetInteger(c: Component, vr: *const Vr, n: usize, value: *mut c_int) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { get("fmi2GetInteger", c, vr, n, value, VarType::Int32, |x| x as c_int) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetBoolean(c: Component, vr: *const Vr, n: usize, value: *mut Fmi2Boolean) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { get("fmi2GetBoolean", c, vr, n, value, VarType::Boolean, |x| c_int::from(x != 0.0)) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetString(
    c: Component,
    vr: *const Vr,
    n: usize,
    _value: *mut *const c_char,
) -> Fmi2Status {
    code(with_instance("fmi2GetString", c, |i| {
        if n == 0 {
            Ok(())
        } else {
            ffi::check_count(i, "fmi2GetString", "nvr", n)?;
            // SAFETY: n elements by the FMI contract.
            let first = unsafe { slice(vr, n) }.and_then(|v| v.first().copied());
            i.error(format!("fmi2GetString: the model has no String variables (value reference {first:?})"))
        }
    }))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetReal(c: Component, vr: *const Vr, n: usize, value: *const f64) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { set("fmi2SetReal", c, vr, n, value, VarType::Float64, |x| x) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetInteger(c: Component, vr: *const Vr, n: usize, value: *const c_int) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { set("fmi2SetInteger", c, vr, n, value, VarType::Int32, f64::from) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetBoolean(
    c: Component,
    vr: *const Vr,
    n: usize,
    value: *const Fmi2Boolean,
) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { set("fmi2SetBoolean", c, vr, n, value, VarType::Boolean, |x| f64::from(u8::from(x != 0))) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetString(
    c: Component,
    vr: *const Vr,
    n: usize,
    _value: *const *const c_char,
) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { fmi2GetString(c, vr, n, std::ptr::null_mut()) }
}

// ---- FMU state ----

#[no_mangle]
pub unsafe extern "C" fn fmi2GetFMUstate(c: Component, state: *mut *mut c_void) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    code(unsafe { ffi::get_fmu_state("fmi2GetFMUstate", "FMUstate", c, state) })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetFMUstate(c: Component, state: *mut c_void) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    code(unsafe { ffi::set_fmu_state("fmi2SetFMUstate", c, state) })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2FreeFMUstate(c: Component, state: *mut *mut c_void) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    code(unsafe { ffi::free_fmu_state("fmi2FreeFMUstate", "FMUstate", c, state) })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SerializedFMUstateSize(c: Component, state: *mut c_void, size: *mut usize) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    code(unsafe { ffi::serialized_size("fmi2SerializedFMUstateSize", c, state, size) })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SerializeFMUstate(
    c: Component,
    state: *mut c_void,
    bytes: *mut u8,
    size: usize,
) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    code(unsafe { ffi::serialize("fmi2SerializeFMUstate", c, state, bytes, size) })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2DeSerializeFMUstate(
    c: Component,
    bytes: *const u8,
    size: usize,
    state: *mut *mut c_void,
) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    code(unsafe { ffi::deserialize("fmi2DeSerializeFMUstate", "FMUstate", c, bytes, size, state) })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetDirectionalDerivative(
    c: Component,
    _unknown: *const Vr,
    _n_unknown: usize,
    _known: *const Vr,
    _n_known: usize,
    _dv_known: *const f64,
    _dv_unknown: *mut f64,
) -> Fmi2Status {
    code(with_instance("fmi2GetDirectionalDerivative", c, |i| {
        i.error("fmi2GetDirectionalDerivative: not provided (providesDirectionalDerivative=\"false\")")
    }))
}

// ---- Model Exchange ----

#[no_mangle]
pub unsafe extern "C" fn fmi2EnterEventMode(c: Component) -> Fmi2Status {
    code(with_instance("fmi2EnterEventMode", c, |i| i.enter_event_mode()))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2NewDiscreteStates(c: Component, info: *mut EventInfo) -> Fmi2Status {
    code(with_instance("fmi2NewDiscreteStates", c, |i| {
        if info.is_null() {
            return Err(null(i, "fmi2NewDiscreteStates", "fmi2EventInfo"));
        }
        let u = i.update_discrete_states()?;
        // SAFETY: non-NULL host struct.
        unsafe {
            *info = EventInfo {
                new_discrete_states_needed: 0,
                terminate_simulation: 0,
                nominals_of_continuous_states_changed: 0,
                values_of_continuous_states_changed: c_int::from(u.states_changed),
                next_event_time_defined: 0,
                next_event_time: 0.0,
            };
        }
        Ok(())
    }))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2EnterContinuousTimeMode(c: Component) -> Fmi2Status {
    code(with_instance("fmi2EnterContinuousTimeMode", c, |i| i.enter_continuous_time_mode()))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2CompletedIntegratorStep(
    c: Component,
    _no_set_prior: Fmi2Boolean,
    enter_event_mode: *mut Fmi2Boolean,
    terminate: *mut Fmi2Boolean,
) -> Fmi2Status {
    code(with_instance("fmi2CompletedIntegratorStep", c, |i| {
        if enter_event_mode.is_null() || terminate.is_null() {
            return Err(null(i, "fmi2CompletedIntegratorStep", "enterEventMode or terminateSimulation"));
        }
        i.completed_integrator_step()?;
        // SAFETY: non-NULL out pointers.
        unsafe {
            *enter_event_mode = 0;
            *terminate = 0;
        }
        Ok(())
    }))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetTime(c: Component, time: f64) -> Fmi2Status {
    code(with_instance("fmi2SetTime", c, |i| i.set_time(time)))
}

/// The state-vector calls ([`ffi::fill`]).
unsafe fn states_out(
    f: &'static str,
    c: Component,
    x: *mut f64,
    n: usize,
    g: impl FnOnce(&mut Instance, &mut [f64]) -> Result<(), Status>,
) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    code(unsafe { ffi::fill(f, c, x, n, g) })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetContinuousStates(c: Component, x: *const f64, n: usize) -> Fmi2Status {
    code(with_instance("fmi2SetContinuousStates", c, |i| {
        ffi::check_count(i, "fmi2SetContinuousStates", "nx", n)?;
        // SAFETY: n readable elements by the FMI contract.
        match unsafe { slice(x, n) } {
            Some(x) => i.set_states(x),
            None => Err(null(i, "fmi2SetContinuousStates", "x")),
        }
    }))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetDerivatives(c: Component, dx: *mut f64, n: usize) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { states_out("fmi2GetDerivatives", c, dx, n, |i, o| i.get_derivatives(o)) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetEventIndicators(c: Component, z: *mut f64, n: usize) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { states_out("fmi2GetEventIndicators", c, z, n, |i, o| i.get_event_indicators(o)) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetContinuousStates(c: Component, x: *mut f64, n: usize) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { states_out("fmi2GetContinuousStates", c, x, n, |i, o| i.get_states(o)) }
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetNominalsOfContinuousStates(c: Component, x: *mut f64, n: usize) -> Fmi2Status {
    // SAFETY: forwarded FMI arguments.
    unsafe { states_out("fmi2GetNominalsOfContinuousStates", c, x, n, |i, o| i.get_nominals(o)) }
}

// ---- Co-Simulation ----

#[no_mangle]
pub unsafe extern "C" fn fmi2SetRealInputDerivatives(
    c: Component,
    _vr: *const Vr,
    n: usize,
    _order: *const c_int,
    _value: *const f64,
) -> Fmi2Status {
    code(with_instance("fmi2SetRealInputDerivatives", c, |i| {
        if n == 0 {
            Ok(())
        } else {
            i.error("fmi2SetRealInputDerivatives: inputs are not interpolated (canInterpolateInputs=\"false\")")
        }
    }))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetRealOutputDerivatives(
    c: Component,
    _vr: *const Vr,
    n: usize,
    _order: *const c_int,
    _value: *mut f64,
) -> Fmi2Status {
    code(with_instance("fmi2GetRealOutputDerivatives", c, |i| {
        if n == 0 {
            Ok(())
        } else {
            i.error("fmi2GetRealOutputDerivatives: not provided (maxOutputDerivativeOrder=\"0\")")
        }
    }))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2DoStep(c: Component, t: f64, h: f64, _no_set_prior: Fmi2Boolean) -> Fmi2Status {
    code(with_instance("fmi2DoStep", c, |i| i.do_step(t, h)))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2CancelStep(c: Component) -> Fmi2Status {
    code(with_instance("fmi2CancelStep", c, |i| i.error("fmi2CancelStep: doStep never returns fmi2Pending")))
}

/// fmi2StatusKind values.
const DO_STEP_STATUS: c_int = 0;
const PENDING_STATUS: c_int = 1;
const LAST_SUCCESSFUL_TIME: c_int = 2;
const TERMINATED: c_int = 3;

#[no_mangle]
pub unsafe extern "C" fn fmi2GetStatus(c: Component, kind: c_int, value: *mut Fmi2Status) -> Fmi2Status {
    code(with_instance("fmi2GetStatus", c, |i| {
        if value.is_null() {
            return Err(null(i, "fmi2GetStatus", "value"));
        }
        let s = match kind {
            DO_STEP_STATUS => {
                if i.terminate_requested {
                    Status::Discard
                } else if i.last_step_failed {
                    Status::Error
                } else {
                    Status::Ok
                }
            }
            PENDING_STATUS => {
                return i.error("fmi2GetStatus: fmi2PendingStatus is only defined while a step is pending")
            }
            k => return i.error(format!("fmi2GetStatus: status kind {k} is not a fmi2Status")),
        };
        // SAFETY: non-NULL out pointer.
        unsafe { *value = code(s) };
        Ok(())
    }))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetRealStatus(c: Component, kind: c_int, value: *mut f64) -> Fmi2Status {
    code(with_instance("fmi2GetRealStatus", c, |i| {
        if value.is_null() {
            return Err(null(i, "fmi2GetRealStatus", "value"));
        }
        if kind != LAST_SUCCESSFUL_TIME {
            return i.error(format!("fmi2GetRealStatus: status kind {kind} is not fmi2LastSuccessfulTime"));
        }
        // SAFETY: non-NULL out pointer.
        unsafe { *value = i.time };
        Ok(())
    }))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetIntegerStatus(c: Component, kind: c_int, _value: *mut c_int) -> Fmi2Status {
    code(with_instance("fmi2GetIntegerStatus", c, |i| {
        i.error(format!("fmi2GetIntegerStatus: no integer status (kind {kind})"))
    }))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetBooleanStatus(c: Component, kind: c_int, value: *mut Fmi2Boolean) -> Fmi2Status {
    code(with_instance("fmi2GetBooleanStatus", c, |i| {
        if value.is_null() {
            return Err(null(i, "fmi2GetBooleanStatus", "value"));
        }
        if kind != TERMINATED {
            return i.error(format!("fmi2GetBooleanStatus: status kind {kind} is not fmi2Terminated"));
        }
        // SAFETY: non-NULL out pointer.
        unsafe { *value = c_int::from(i.phase == Phase::Failed || i.terminate_requested) };
        Ok(())
    }))
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetStringStatus(c: Component, kind: c_int, _value: *mut *const c_char) -> Fmi2Status {
    code(with_instance("fmi2GetStringStatus", c, |i| {
        i.error(format!("fmi2GetStringStatus: no string status (kind {kind})"))
    }))
}
