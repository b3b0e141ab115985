//! The FMU's shared library and one instance of it: the only `unsafe` code of the importer.
//!
//! Bindings: `libloading` plus the FMI 2.0 / FMI 3.0 C signatures the importer calls, written
//! out here and checked against fmi2FunctionTypes.h and fmi3FunctionTypes.h. The `fmi` crate
//! (0.8) was tried and not used, because of how it treats the FMU's messages and foreign
//! binaries:
//! * its logger callbacks pass every message to the global `log` facade with a NULL instance
//!   environment, so a message cannot be attached to the error of the instance that logged
//!   it when several FMUs step concurrently (here each instance has its own [`LogSink`]);
//! * those callbacks `unreachable!()` on a status outside the enumeration and read the
//!   instance name with `CStr::from_ptr` without a NULL check, inside `extern "C"`
//!   functions: one misbehaving foreign FMU would abort the whole process, and with it the
//!   rows not yet written;
//! * it cannot open a runtime library with RTLD_GLOBAL before the binary ([`preload`]);
//! * its `fmi-sys` runs bindgen at every build, which needs libclang on the build machine.
//!
//! Every call goes through [`Instance`], whose methods are safe: they pass slices of the
//! right lengths, check every returned status (anything but OK is an [`FmiError`] naming
//! the FMU and the function, with the FMU's log messages attached) and keep the library
//! loaded and the callbacks alive for as long as the instance exists.
#![allow(unsafe_code)]

use super::archive::Archive;
use super::description::{FmiVersion, Interface, VarType};
use super::FmiError;
use std::collections::VecDeque;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

type Handle = *mut c_void;
type Status = c_int;

// ---- FMI 2.0 (fmi2FunctionTypes.h) ----

/// fmi2CallbackLogger: `(env, instanceName, status, category, message, ...)`, variadic.
type Fmi2Logger = unsafe extern "C" fn(*mut c_void, *const c_char, c_int, *const c_char, *const c_char, ...);

extern "C" {
    /// csrc/fmi2_logger.c: formats the printf-style message with its arguments and calls
    /// [`stiction_fmi2_log_sink`] with the text.
    fn stiction_fmi2_logger(
        env: *mut c_void,
        instance: *const c_char,
        status: c_int,
        category: *const c_char,
        message: *const c_char,
        ...
    );
}

/// fmi2CallbackFunctions.
#[repr(C)]
struct Fmi2Callbacks {
    logger: Fmi2Logger,
    allocate_memory: unsafe extern "C" fn(usize, usize) -> *mut c_void,
    free_memory: unsafe extern "C" fn(*mut c_void),
    step_finished: Option<unsafe extern "C" fn(*mut c_void, c_int)>,
    component_environment: *mut c_void,
}

/// fmi2EventInfo.
#[repr(C)]
#[derive(Default)]
struct Fmi2EventInfo {
    new_discrete_states_needed: c_int,
    terminate_simulation: c_int,
    nominals_of_continuous_states_changed: c_int,
    values_of_continuous_states_changed: c_int,
    next_event_time_defined: c_int,
    next_event_time: f64,
}

extern "C" {
    fn calloc(n: usize, size: usize) -> *mut c_void;
    fn free(p: *mut c_void);
}

type Fmi2Instantiate = unsafe extern "C" fn(
    *const c_char,
    c_int,
    *const c_char,
    *const c_char,
    *const Fmi2Callbacks,
    c_int,
    c_int,
) -> Handle;
type FreeInstance = unsafe extern "C" fn(Handle);
type Fmi2SetupExperiment = unsafe extern "C" fn(Handle, c_int, f64, f64, c_int, f64) -> Status;
type Call = unsafe extern "C" fn(Handle) -> Status;
type Fmi2GetReal = unsafe extern "C" fn(Handle, *const u32, usize, *mut f64) -> Status;
type Fmi2GetInt = unsafe extern "C" fn(Handle, *const u32, usize, *mut c_int) -> Status;
type Fmi2SetReal = unsafe extern "C" fn(Handle, *const u32, usize, *const f64) -> Status;
type Fmi2SetInt = unsafe extern "C" fn(Handle, *const u32, usize, *const c_int) -> Status;
type Fmi2DoStep = unsafe extern "C" fn(Handle, f64, f64, c_int) -> Status;
type SetTime = unsafe extern "C" fn(Handle, f64) -> Status;
type SetStates = unsafe extern "C" fn(Handle, *const f64, usize) -> Status;
type GetArray = unsafe extern "C" fn(Handle, *mut f64, usize) -> Status;
type Fmi2NewDiscreteStates = unsafe extern "C" fn(Handle, *mut Fmi2EventInfo) -> Status;
type Fmi2CompletedIntegratorStep = unsafe extern "C" fn(Handle, c_int, *mut c_int, *mut c_int) -> Status;

// ---- FMI 3.0 (fmi3FunctionTypes.h) ----

type Fmi3Log = unsafe extern "C" fn(*mut c_void, c_int, *const c_char, *const c_char);
type Fmi3InstantiateCs = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const c_char,
    bool,
    bool,
    bool,
    bool,
    *const u32,
    usize,
    *mut c_void,
    Option<Fmi3Log>,
    Option<unsafe extern "C" fn()>,
) -> Handle;
type Fmi3EnterInit = unsafe extern "C" fn(Handle, bool, f64, f64, bool, f64) -> Status;
type Fmi3GetF64 = unsafe extern "C" fn(Handle, *const u32, usize, *mut f64, usize) -> Status;
type Fmi3GetI32 = unsafe extern "C" fn(Handle, *const u32, usize, *mut i32, usize) -> Status;
type Fmi3GetBool = unsafe extern "C" fn(Handle, *const u32, usize, *mut bool, usize) -> Status;
type Fmi3SetF64 = unsafe extern "C" fn(Handle, *const u32, usize, *const f64, usize) -> Status;
type Fmi3SetI32 = unsafe extern "C" fn(Handle, *const u32, usize, *const i32, usize) -> Status;
type Fmi3SetBool = unsafe extern "C" fn(Handle, *const u32, usize, *const bool, usize) -> Status;
type Fmi3DoStep = unsafe extern "C" fn(Handle, f64, f64, bool, *mut bool, *mut bool, *mut bool, *mut f64) -> Status;
type Fmi3InstantiateMe = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const c_char,
    bool,
    bool,
    *mut c_void,
    Option<Fmi3Log>,
) -> Handle;
type Fmi3UpdateDiscreteStates =
    unsafe extern "C" fn(Handle, *mut bool, *mut bool, *mut bool, *mut bool, *mut bool, *mut f64) -> Status;
type Fmi3CompletedIntegratorStep = unsafe extern "C" fn(Handle, bool, *mut bool, *mut bool) -> Status;

/// Resolve every listed symbol; the names that are missing are collected, so the error
/// lists them all at once.
macro_rules! table {
    ($lib:expr, $missing:expr, $name:ident { $($field:ident : $ty:ty = $sym:literal),* $(,)? }) => {{
        $(
            // SAFETY: `$ty` is the C signature of `$sym` in the FMI headers; the pointer is
            // only called while the library stays loaded (the Instance owns it).
            let $field: Option<$ty> = match unsafe { $lib.get::<$ty>($sym.as_bytes()) } {
                Ok(s) => Some(*s),
                Err(_) => {
                    $missing.push($sym);
                    None
                }
            };
        )*
        match ($($field,)*) {
            ($(Some($field),)*) => Some($name { $($field),* }),
            _ => None,
        }
    }};
}

/// Functions every FMI 2.0 instance needs.
struct Fmi2Common {
    instantiate: Fmi2Instantiate,
    free_instance: FreeInstance,
    setup_experiment: Fmi2SetupExperiment,
    enter_initialization_mode: Call,
    exit_initialization_mode: Call,
    terminate: Call,
    get_real: Fmi2GetReal,
    get_integer: Fmi2GetInt,
    get_boolean: Fmi2GetInt,
    set_real: Fmi2SetReal,
    set_integer: Fmi2SetInt,
    set_boolean: Fmi2SetInt,
}

/// FMI 2.0 Co-Simulation.
struct Fmi2Cs {
    do_step: Fmi2DoStep,
}

/// FMI 2.0 Model Exchange.
struct Fmi2Me {
    set_time: SetTime,
    set_continuous_states: SetStates,
    get_continuous_states: GetArray,
    get_derivatives: GetArray,
    get_event_indicators: GetArray,
    enter_event_mode: Call,
    new_discrete_states: Fmi2NewDiscreteStates,
    enter_continuous_time_mode: Call,
    completed_integrator_step: Fmi2CompletedIntegratorStep,
}

/// Functions every FMI 3.0 instance needs.
struct Fmi3Common {
    free_instance: FreeInstance,
    enter_initialization_mode: Fmi3EnterInit,
    exit_initialization_mode: Call,
    terminate: Call,
    get_float64: Fmi3GetF64,
    get_int32: Fmi3GetI32,
    get_boolean: Fmi3GetBool,
    set_float64: Fmi3SetF64,
    set_int32: Fmi3SetI32,
    set_boolean: Fmi3SetBool,
}

/// FMI 3.0 Co-Simulation.
struct Fmi3Cs {
    instantiate: Fmi3InstantiateCs,
    do_step: Fmi3DoStep,
}

/// FMI 3.0 Model Exchange. Same calls as FMI 2.0 ME but for their names, fmi3Boolean (C
/// bool) and the event iteration (fmi3UpdateDiscreteStates returns its flags through
/// pointers instead of an fmi2EventInfo struct).
struct Fmi3Me {
    instantiate: Fmi3InstantiateMe,
    set_time: SetTime,
    set_continuous_states: SetStates,
    get_continuous_states: GetArray,
    get_derivatives: GetArray,
    get_event_indicators: GetArray,
    enter_event_mode: Call,
    update_discrete_states: Fmi3UpdateDiscreteStates,
    enter_continuous_time_mode: Call,
    completed_integrator_step: Fmi3CompletedIntegratorStep,
}

/// The Model Exchange calls of either version, resolved for one instance.
enum MeFns<'a> {
    V2(&'a Fmi2Me),
    V3(&'a Fmi3Me),
}

/// fmi2GetFMUstate / fmi2FreeFMUstate, fmi3GetFMUState / fmi3FreeFMUState.
type GetState = unsafe extern "C" fn(Handle, *mut *mut c_void) -> Status;
/// fmi2SetFMUstate / fmi3SetFMUState.
type SetState = unsafe extern "C" fn(Handle, *mut c_void) -> Status;

/// The optional FMU-state functions (rollback of a Co-Simulation step).
struct StateFns {
    get_state: GetState,
    set_state: SetState,
    free_state: GetState,
}

enum Api {
    Fmi2 { common: Fmi2Common, cs: Option<Fmi2Cs>, me: Option<Fmi2Me> },
    Fmi3 { common: Fmi3Common, cs: Option<Fmi3Cs>, me: Option<Fmi3Me> },
}

/// The FMU's log messages, collected by the logger callback. Bounded: the oldest messages
/// are dropped beyond [`LogSink::KEEP`].
pub(crate) struct LogSink {
    messages: Mutex<VecDeque<String>>,
}

impl LogSink {
    const KEEP: usize = 64;

    fn push(&self, status: c_int, category: &str, message: &str) {
        if let Ok(mut m) = self.messages.lock() {
            if m.len() == Self::KEEP {
                m.pop_front();
            }
            m.push_back(format!("{} [{category}] {}", status_name(status), message));
        }
    }

    /// Every message logged since the last call.
    fn take(&self) -> Vec<String> {
        self.messages.lock().map(|mut m| m.drain(..).collect()).unwrap_or_default()
    }
}

/// A C string from the FMU as text ("" for NULL).
///
/// # Safety
/// `p` is NULL or a NUL-terminated string valid for the duration of the call.
unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: non-NULL and NUL-terminated by the caller's contract.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// The FMI 2.0 logger's message, already formatted by csrc/fmi2_logger.c, filed with the
/// instance whose componentEnvironment `env` is.
#[no_mangle]
extern "C" fn stiction_fmi2_log_sink(
    env: *mut c_void,
    _instance: *const c_char,
    status: c_int,
    category: *const c_char,
    message: *const c_char,
) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `env` is the componentEnvironment we passed: a `LogSink` that the Instance
        // keeps alive (boxed, never moved) until after fmi2FreeInstance.
        let Some(sink) = (unsafe { (env as *const LogSink).as_ref() }) else { return };
        // SAFETY: category is NULL or a NUL-terminated string (FMI 2.0); message is the
        // shim's NUL-terminated buffer.
        let (c, m) = unsafe { (text(category), text(message)) };
        sink.push(status, &c, &m);
    }));
}

/// fmi3LogMessageCallback.
unsafe extern "C" fn fmi3_logger(env: *mut c_void, status: c_int, category: *const c_char, message: *const c_char) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `env` is the instanceEnvironment we passed: a `LogSink` kept alive by the
        // Instance until after fmi3FreeInstance.
        let Some(sink) = (unsafe { (env as *const LogSink).as_ref() }) else { return };
        // SAFETY: NULL or NUL-terminated strings (FMI 3.0).
        let (c, m) = unsafe { (text(category), text(message)) };
        sink.push(status, &c, &m);
    }));
}

/// fmi2Status / fmi3Status by name.
pub fn status_name(s: c_int) -> &'static str {
    match s {
        0 => "OK",
        1 => "Warning",
        2 => "Discard",
        3 => "Error",
        4 => "Fatal",
        5 => "Pending",
        _ => "an unknown status",
    }
}

/// What fmi2NewDiscreteStates reported.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EventInfo {
    pub new_discrete_states_needed: bool,
    pub terminate_simulation: bool,
    pub values_of_continuous_states_changed: bool,
    pub next_event_time: Option<f64>,
}

/// Where an instance is in its life cycle (what Drop may still call).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Instantiated,
    Initialized,
    /// A call returned Fatal: only FreeInstance is allowed.
    Fatal,
}

/// Open shared libraries with RTLD_NOW | RTLD_GLOBAL, so that the FMU binaries loaded after
/// them resolve their undefined symbols there: a binary that expects its host process to
/// carry a runtime (PythonFMU's binary calls the CPython API but does not link libpython)
/// loads only then. An entry with a '/' is a file path; one without is a library name that
/// the dynamic loader searches for (LD_LIBRARY_PATH, the system directories). The libraries
/// stay loaded until the process exits: a language runtime cannot be unloaded and loaded
/// again safely, and loading one twice only raises its reference count.
pub fn preload(libraries: &[std::path::PathBuf]) -> Result<(), String> {
    for lib in libraries {
        // SAFETY: loading runs the library's initialisers; the user named it for this
        // purpose, as trusted as the FMU binary it serves.
        let l = unsafe {
            libloading::os::unix::Library::open(
                Some(lib.as_os_str()),
                libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_GLOBAL,
            )
        }
        .map_err(|e| format!("cannot preload {}: {e}", lib.display()))?;
        // Never unloaded (see above): the handle is leaked on purpose.
        let _ = l.into_raw();
    }
    Ok(())
}

/// The FMUs declaring canBeInstantiatedOnlyOncePerProcess="true" that have a live instance
/// in this process: (GUID / instantiation token and model identifier, instance name).
static ONCE_PER_PROCESS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// `file:///...` URI of a path (FMI 2.0 fmuResourceLocation), percent-encoding everything
/// but unreserved characters and '/'.
fn file_uri(path: &std::path::Path) -> String {
    let mut out = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// One instance of an FMU, with its library and unpacked archive. Dropping it terminates
/// and frees the instance, then unloads the library, then removes the temporary directory
/// (fields drop in declaration order after `Drop::drop`).
pub struct Instance {
    raw: Handle,
    api: Api,
    phase: Phase,
    /// "FMU 'StictionGear' (path.fmu)", for messages.
    pub label: String,
    pub version: FmiVersion,
    pub interface: Interface,
    log: Box<LogSink>,
    _callbacks: Option<Box<Fmi2Callbacks>>,
    /// The FMU-state functions, if the binary exports them.
    state_fns: Option<StateFns>,
    /// The one saved FMU state ([`Instance::save_state`]), NULL if none; freed on drop.
    saved: Handle,
    _lib: libloading::Library,
    pub archive: Archive,
    /// The key under which this instance is registered in [`ONCE_PER_PROCESS`], if its FMU
    /// may be instantiated only once per process.
    once: Option<String>,
}

// SAFETY: the FMI standards allow an instance to be used from any thread as long as its
// functions are not called concurrently. Every FMI call goes through `&mut self`, so Rust's
// borrow rules serialise them; the only shared data, the log sink, is a Mutex. The raw
// handle and the callback struct are owned and freed by this value alone.
unsafe impl Send for Instance {}

impl Instance {
    /// Load the binary of `interface` from `archive`, resolve the functions that interface
    /// needs and instantiate it as `name`. Missing binaries and symbols are errors naming
    /// the file; a NULL instance is an error carrying the FMU's log.
    pub fn new(archive: Archive, interface: Interface, name: &str) -> Result<Instance, FmiError> {
        let md = &archive.description;
        let id = md.identifier(interface).unwrap_or(&md.model_name).to_string();
        let label = format!("FMU '{id}' ({})", archive.file);
        let version = md.version;
        // canBeInstantiatedOnlyOncePerProcess: every instance loads its own copy of the binary
        // (from its own unpacked archive), which separates the binary's globals, but not
        // what the FMU shares outside it (a runtime it embeds, files, a tool): refuse a
        // second live instance of the same model in this process.
        let once = if md.capabilities(interface).once_per_process {
            let key = format!("{} {id}", md.token);
            let mut live = ONCE_PER_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((_, other)) = live.iter().find(|(k, _)| *k == key) {
                return Err(FmiError::new(
                    &label,
                    None,
                    format!(
                        "declares canBeInstantiatedOnlyOncePerProcess=\"true\" and is already instantiated in this \
                         process (as '{other}', same {} {}); use it once per system",
                        match version {
                            FmiVersion::V2 => "guid",
                            FmiVersion::V3 => "instantiationToken",
                        },
                        md.token
                    ),
                ));
            }
            live.push((key.clone(), name.to_string()));
            Some(key)
        } else {
            None
        };
        // From here on, an early return must unregister: `Unregister` does it on drop
        // unless the Instance (whose Drop then does it) is built.
        struct Unregister(Option<String>);
        impl Drop for Unregister {
            fn drop(&mut self) {
                if let Some(k) = self.0.take() {
                    let mut live = ONCE_PER_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
                    live.retain(|(key, _)| *key != k);
                }
            }
        }
        let mut guard = Unregister(once);
        let path = archive.binary(interface)?;
        let rel = format!("binaries/{}/{id}.so", version.platform());
        // SAFETY: loading runs the library's initialisers; an FMU binary is trusted code by
        // the nature of FMI (the user chose to run it). RTLD_NOW reports unresolved
        // dependencies here rather than at the first call.
        let lib = unsafe {
            libloading::os::unix::Library::open(
                Some(&path),
                libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL,
            )
        }
        .map_err(|e| {
            let e = e.to_string();
            // A binary that calls the CPython API without linking libpython (PythonFMU).
            let hint = if e.contains("undefined symbol: Py") || e.contains("undefined symbol: _Py") {
                "; the binary expects the Python runtime in the process: add \"preload\": [\"<LIBDIR>/<LDLIBRARY>\"] \
                 (python3 -c \"import sysconfig as s; print(s.get_config_var('LIBDIR'), s.get_config_var('LDLIBRARY'))\")"
            } else {
                ""
            };
            FmiError::new(&label, None, format!("cannot load {rel}: {e}{hint}"))
        })?;
        let lib: libloading::Library = lib.into();
        let mut missing: Vec<&str> = Vec::new();
        let api = match version {
            FmiVersion::V2 => {
                let common = table!(
                    lib,
                    missing,
                    Fmi2Common {
                        instantiate: Fmi2Instantiate = "fmi2Instantiate",
                        free_instance: FreeInstance = "fmi2FreeInstance",
                        setup_experiment: Fmi2SetupExperiment = "fmi2SetupExperiment",
                        enter_initialization_mode: Call = "fmi2EnterInitializationMode",
                        exit_initialization_mode: Call = "fmi2ExitInitializationMode",
                        terminate: Call = "fmi2Terminate",
                        get_real: Fmi2GetReal = "fmi2GetReal",
                        get_integer: Fmi2GetInt = "fmi2GetInteger",
                        get_boolean: Fmi2GetInt = "fmi2GetBoolean",
                        set_real: Fmi2SetReal = "fmi2SetReal",
                        set_integer: Fmi2SetInt = "fmi2SetInteger",
                        set_boolean: Fmi2SetInt = "fmi2SetBoolean",
                    }
                );
                let (cs, me) = match interface {
                    Interface::CoSimulation => {
                        (table!(lib, missing, Fmi2Cs { do_step: Fmi2DoStep = "fmi2DoStep" }), None)
                    }
                    Interface::ModelExchange => (
                        None,
                        table!(
                            lib,
                            missing,
                            Fmi2Me {
                                set_time: SetTime = "fmi2SetTime",
                                set_continuous_states: SetStates = "fmi2SetContinuousStates",
                                get_continuous_states: GetArray = "fmi2GetContinuousStates",
                                get_derivatives: GetArray = "fmi2GetDerivatives",
                                get_event_indicators: GetArray = "fmi2GetEventIndicators",
                                enter_event_mode: Call = "fmi2EnterEventMode",
                                new_discrete_states: Fmi2NewDiscreteStates = "fmi2NewDiscreteStates",
                                enter_continuous_time_mode: Call = "fmi2EnterContinuousTimeMode",
                                completed_integrator_step: Fmi2CompletedIntegratorStep = "fmi2CompletedIntegratorStep",
                            }
                        ),
                    ),
                };
                common.map(|common| Api::Fmi2 { common, cs, me })
            }
            FmiVersion::V3 => {
                let common = table!(
                    lib,
                    missing,
                    Fmi3Common {
                        free_instance: FreeInstance = "fmi3FreeInstance",
                        enter_initialization_mode: Fmi3EnterInit = "fmi3EnterInitializationMode",
                        exit_initialization_mode: Call = "fmi3ExitInitializationMode",
                        terminate: Call = "fmi3Terminate",
                        get_float64: Fmi3GetF64 = "fmi3GetFloat64",
                        get_int32: Fmi3GetI32 = "fmi3GetInt32",
                        get_boolean: Fmi3GetBool = "fmi3GetBoolean",
                        set_float64: Fmi3SetF64 = "fmi3SetFloat64",
                        set_int32: Fmi3SetI32 = "fmi3SetInt32",
                        set_boolean: Fmi3SetBool = "fmi3SetBoolean",
                    }
                );
                let (cs, me) = match interface {
                    Interface::CoSimulation => (
                        table!(
                            lib,
                            missing,
                            Fmi3Cs {
                                instantiate: Fmi3InstantiateCs = "fmi3InstantiateCoSimulation",
                                do_step: Fmi3DoStep = "fmi3DoStep",
                            }
                        ),
                        None,
                    ),
                    Interface::ModelExchange => (
                        None,
                        table!(
                            lib,
                            missing,
                            Fmi3Me {
                                instantiate: Fmi3InstantiateMe = "fmi3InstantiateModelExchange",
                                set_time: SetTime = "fmi3SetTime",
                                set_continuous_states: SetStates = "fmi3SetContinuousStates",
                                get_continuous_states: GetArray = "fmi3GetContinuousStates",
                                get_derivatives: GetArray = "fmi3GetContinuousStateDerivatives",
                                get_event_indicators: GetArray = "fmi3GetEventIndicators",
                                enter_event_mode: Call = "fmi3EnterEventMode",
                                update_discrete_states: Fmi3UpdateDiscreteStates = "fmi3UpdateDiscreteStates",
                                enter_continuous_time_mode: Call = "fmi3EnterContinuousTimeMode",
                                completed_integrator_step: Fmi3CompletedIntegratorStep = "fmi3CompletedIntegratorStep",
                            }
                        ),
                    ),
                };
                common.map(|common| Api::Fmi3 { common, cs, me })
            }
        };
        let api = match api {
            Some(a) if missing.is_empty() => a,
            _ => {
                return Err(FmiError::new(
                    &label,
                    None,
                    format!("{rel} does not export the FMI {} functions {}", version.label(), missing.join(", ")),
                ))
            }
        };
        // Optional: GetFMUstate / SetFMUstate / FreeFMUstate (absent ones are not an error).
        let mut optional: Vec<&str> = Vec::new();
        let state_fns = match version {
            FmiVersion::V2 => table!(
                lib,
                optional,
                StateFns {
                    get_state: GetState = "fmi2GetFMUstate",
                    set_state: SetState = "fmi2SetFMUstate",
                    free_state: GetState = "fmi2FreeFMUstate",
                }
            ),
            FmiVersion::V3 => table!(
                lib,
                optional,
                StateFns {
                    get_state: GetState = "fmi3GetFMUState",
                    set_state: SetState = "fmi3SetFMUState",
                    free_state: GetState = "fmi3FreeFMUState",
                }
            ),
        };
        let log = Box::new(LogSink { messages: Mutex::new(VecDeque::new()) });
        let env = &*log as *const LogSink as *mut c_void;
        let cname = CString::new(name.replace('\0', "")).unwrap_or_default();
        let token = CString::new(md.token.replace('\0', "")).unwrap_or_default();
        let resources = archive.resources();
        let mut callbacks = None;
        let (raw, function) = match &api {
            Api::Fmi2 { common, .. } => {
                let cb = Box::new(Fmi2Callbacks {
                    logger: stiction_fmi2_logger,
                    allocate_memory: calloc,
                    free_memory: free,
                    step_finished: None,
                    component_environment: env,
                });
                let uri = CString::new(file_uri(&resources)).unwrap_or_default();
                let kind = match interface {
                    Interface::ModelExchange => 0,
                    Interface::CoSimulation => 1,
                };
                // SAFETY: all strings are NUL-terminated and outlive the call; the callback
                // struct is boxed and kept in the Instance, as FMI 2.0 requires (the FMU may
                // keep the pointer); `env` points to the boxed LogSink, also kept.
                let raw =
                    unsafe { (common.instantiate)(cname.as_ptr(), kind, token.as_ptr(), uri.as_ptr(), &*cb, 0, 0) };
                callbacks = Some(cb);
                (raw, "fmi2Instantiate")
            }
            Api::Fmi3 { cs, me, .. } => {
                let mut dir = resources.to_string_lossy().into_owned();
                dir.push('/');
                let path = CString::new(dir.replace('\0', "")).unwrap_or_default();
                match (cs, me) {
                    (Some(f), _) => {
                        // SAFETY: NUL-terminated strings valid for the call; no intermediate
                        // variables (NULL, 0); `env` is the boxed LogSink kept by the Instance.
                        let raw = unsafe {
                            (f.instantiate)(
                                cname.as_ptr(),
                                token.as_ptr(),
                                path.as_ptr(),
                                false,
                                false,
                                false,
                                false,
                                std::ptr::null(),
                                0,
                                env,
                                Some(fmi3_logger),
                                None,
                            )
                        };
                        (raw, "fmi3InstantiateCoSimulation")
                    }
                    (None, Some(f)) => {
                        // SAFETY: as above; `env` is the boxed LogSink kept by the Instance.
                        let raw = unsafe {
                            (f.instantiate)(
                                cname.as_ptr(),
                                token.as_ptr(),
                                path.as_ptr(),
                                false,
                                false,
                                env,
                                Some(fmi3_logger),
                            )
                        };
                        (raw, "fmi3InstantiateModelExchange")
                    }
                    (None, None) => (std::ptr::null_mut(), "fmi3Instantiate"),
                }
            }
        };
        if raw.is_null() {
            return Err(
                FmiError::new(&label, Some(function), "returned NULL (instantiation failed)").with_log(log.take())
            );
        }
        Ok(Instance {
            raw,
            api,
            phase: Phase::Instantiated,
            label,
            version,
            interface,
            log,
            _callbacks: callbacks,
            state_fns,
            saved: std::ptr::null_mut(),
            _lib: lib,
            archive,
            once: guard.0.take(),
        })
    }

    /// Turn a status into a result: anything but OK is an error naming the function, with
    /// the log messages collected since the last error.
    fn check(&mut self, function: &'static str, status: Status) -> Result<(), FmiError> {
        if status == 0 {
            return Ok(());
        }
        if status == 4 {
            self.phase = Phase::Fatal;
        }
        Err(self.error(function, format!("returned {}", status_name(status))))
    }

    /// An error of `function` with the FMU's log so far.
    pub fn error(&self, function: &str, message: impl Into<String>) -> FmiError {
        FmiError::new(&self.label, Some(function), message).with_log(self.log.take())
    }

    /// The Model Exchange functions of either version, or an error naming `function`.
    fn me(&self, function: &'static str) -> Result<MeFns<'_>, FmiError> {
        match &self.api {
            Api::Fmi2 { me: Some(me), .. } => Ok(MeFns::V2(me)),
            Api::Fmi3 { me: Some(me), .. } => Ok(MeFns::V3(me)),
            _ => Err(self.error(function, "this instance is not a Model Exchange instance")),
        }
    }

    /// The name of an ME function in this instance's FMI version.
    fn me_name(&self, fmi2: &'static str, fmi3: &'static str) -> &'static str {
        match self.version {
            FmiVersion::V2 => fmi2,
            FmiVersion::V3 => fmi3,
        }
    }

    fn mismatch(&self, function: &str, a: usize, b: usize) -> FmiError {
        self.error(function, format!("{a} value references for {b} values"))
    }

    /// SetupExperiment (FMI 2.0) and EnterInitializationMode at `start` (no tolerance, no stop time).
    pub fn enter_initialization(&mut self, start: f64) -> Result<(), FmiError> {
        match &self.api {
            Api::Fmi2 { common, .. } => {
                let (setup, enter) = (common.setup_experiment, common.enter_initialization_mode);
                // SAFETY: a live instance handle; plain values.
                let s = unsafe { setup(self.raw, 0, 0.0, start, 0, 0.0) };
                self.check("fmi2SetupExperiment", s)?;
                // SAFETY: a live instance handle.
                let s = unsafe { enter(self.raw) };
                self.check("fmi2EnterInitializationMode", s)
            }
            Api::Fmi3 { common: f, .. } => {
                let enter = f.enter_initialization_mode;
                // SAFETY: a live instance handle; plain values.
                let s = unsafe { enter(self.raw, false, 0.0, start, false, 0.0) };
                self.check("fmi3EnterInitializationMode", s)
            }
        }
    }

    /// ExitInitializationMode.
    pub fn exit_initialization(&mut self) -> Result<(), FmiError> {
        let (f, name) = match &self.api {
            Api::Fmi2 { common, .. } => (common.exit_initialization_mode, "fmi2ExitInitializationMode"),
            Api::Fmi3 { common: f, .. } => (f.exit_initialization_mode, "fmi3ExitInitializationMode"),
        };
        // SAFETY: a live instance handle.
        let s = unsafe { f(self.raw) };
        self.check(name, s)?;
        self.phase = Phase::Initialized;
        Ok(())
    }

    /// Get Float64 (fmi2GetReal / fmi3GetFloat64) values.
    pub fn get_f64(&mut self, vrs: &[u32], out: &mut [f64]) -> Result<(), FmiError> {
        let (name, s) = match &self.api {
            Api::Fmi2 { common, .. } => {
                if vrs.len() != out.len() {
                    return Err(self.mismatch("fmi2GetReal", vrs.len(), out.len()));
                }
                // SAFETY: `vrs` and `out` have the same length n, passed as nvr.
                ("fmi2GetReal", unsafe { (common.get_real)(self.raw, vrs.as_ptr(), vrs.len(), out.as_mut_ptr()) })
            }
            // SAFETY: nvr = vrs.len(), nValues = out.len() (scalars: the FMU checks they match).
            Api::Fmi3 { common: f, .. } => ("fmi3GetFloat64", unsafe {
                (f.get_float64)(self.raw, vrs.as_ptr(), vrs.len(), out.as_mut_ptr(), out.len())
            }),
        };
        self.check(name, s)
    }

    /// Set Float64 (fmi2SetReal / fmi3SetFloat64) values.
    pub fn set_f64(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), FmiError> {
        let (name, s) = match &self.api {
            Api::Fmi2 { common, .. } => {
                if vrs.len() != values.len() {
                    return Err(self.mismatch("fmi2SetReal", vrs.len(), values.len()));
                }
                // SAFETY: `vrs` and `values` have the same length n.
                ("fmi2SetReal", unsafe { (common.set_real)(self.raw, vrs.as_ptr(), vrs.len(), values.as_ptr()) })
            }
            // SAFETY: nvr = vrs.len(), nValues = values.len().
            Api::Fmi3 { common: f, .. } => ("fmi3SetFloat64", unsafe {
                (f.set_float64)(self.raw, vrs.as_ptr(), vrs.len(), values.as_ptr(), values.len())
            }),
        };
        self.check(name, s)
    }

    /// Read one variable of type `ty` as f64 (Boolean: 0 or 1).
    pub fn get_value(&mut self, ty: VarType, vr: u32) -> Result<f64, FmiError> {
        let mut out = [0.0];
        self.get_values(ty, &[vr], &mut out)?;
        Ok(out[0])
    }

    /// Read variables of one type `ty` in one call, as f64 (Boolean: 0 or 1).
    pub fn get_values(&mut self, ty: VarType, vrs: &[u32], out: &mut [f64]) -> Result<(), FmiError> {
        if vrs.len() != out.len() {
            return Err(self.mismatch("get", vrs.len(), out.len()));
        }
        if vrs.is_empty() {
            return Ok(());
        }
        let n = vrs.len();
        match ty {
            VarType::Float64 => self.get_f64(vrs, out),
            VarType::Int32 | VarType::Boolean => {
                let (name, s, ints) = match (&self.api, ty) {
                    (Api::Fmi2 { common, .. }, VarType::Int32) => {
                        let mut v: Vec<c_int> = vec![0; n];
                        // SAFETY: n value references, n outputs.
                        let s = unsafe { (common.get_integer)(self.raw, vrs.as_ptr(), n, v.as_mut_ptr()) };
                        ("fmi2GetInteger", s, v)
                    }
                    (Api::Fmi2 { common, .. }, _) => {
                        let mut v: Vec<c_int> = vec![0; n];
                        // SAFETY: n value references, n outputs (fmi2Boolean is an int).
                        let s = unsafe { (common.get_boolean)(self.raw, vrs.as_ptr(), n, v.as_mut_ptr()) };
                        ("fmi2GetBoolean", s, v)
                    }
                    (Api::Fmi3 { common: f, .. }, VarType::Int32) => {
                        let mut v: Vec<i32> = vec![0; n];
                        // SAFETY: n value references, n outputs.
                        let s = unsafe { (f.get_int32)(self.raw, vrs.as_ptr(), n, v.as_mut_ptr(), n) };
                        ("fmi3GetInt32", s, v)
                    }
                    (Api::Fmi3 { common: f, .. }, _) => {
                        let mut v = vec![false; n];
                        // SAFETY: n value references, n outputs (fmi3Boolean is C bool).
                        let s = unsafe { (f.get_boolean)(self.raw, vrs.as_ptr(), n, v.as_mut_ptr(), n) };
                        ("fmi3GetBoolean", s, v.into_iter().map(i32::from).collect())
                    }
                };
                self.check(name, s)?;
                for (o, i) in out.iter_mut().zip(ints) {
                    *o = if ty == VarType::Boolean { f64::from(u8::from(i != 0)) } else { f64::from(i) };
                }
                Ok(())
            }
            VarType::Other => {
                Err(self.error("get", format!("value references {vrs:?} have a type this importer cannot read")))
            }
        }
    }

    /// Set one variable of type `ty` from an f64 (Int32: must be a whole number in range;
    /// Boolean: non-zero is true).
    pub fn set_value(&mut self, ty: VarType, vr: u32, x: f64) -> Result<(), FmiError> {
        let vrs = [vr];
        match ty {
            VarType::Float64 => self.set_f64(&vrs, &[x]),
            VarType::Int32 => {
                if x.fract() != 0.0 || x < f64::from(i32::MIN) || x > f64::from(i32::MAX) {
                    return Err(self.error("set", format!("{x} is not a 32-bit integer (value reference {vr})")));
                }
                let v = x as i32;
                let (name, s) = match &self.api {
                    // SAFETY: one value reference, one value.
                    Api::Fmi2 { common, .. } => {
                        ("fmi2SetInteger", unsafe { (common.set_integer)(self.raw, vrs.as_ptr(), 1, &v) })
                    }
                    // SAFETY: one value reference, one value.
                    Api::Fmi3 { common: f, .. } => {
                        ("fmi3SetInt32", unsafe { (f.set_int32)(self.raw, vrs.as_ptr(), 1, &v, 1) })
                    }
                };
                self.check(name, s)
            }
            VarType::Boolean => {
                let (name, s) = match &self.api {
                    Api::Fmi2 { common, .. } => {
                        let v = c_int::from(x != 0.0);
                        // SAFETY: one value reference, one value.
                        ("fmi2SetBoolean", unsafe { (common.set_boolean)(self.raw, vrs.as_ptr(), 1, &v) })
                    }
                    Api::Fmi3 { common: f, .. } => {
                        let v = x != 0.0;
                        // SAFETY: one value reference, one value.
                        ("fmi3SetBoolean", unsafe { (f.set_boolean)(self.raw, vrs.as_ptr(), 1, &v, 1) })
                    }
                };
                self.check(name, s)
            }
            VarType::Other => {
                Err(self.error("set", format!("value reference {vr} has a type this importer cannot set")))
            }
        }
    }

    /// Co-Simulation: DoStep from `t` over `h`. FMI 3.0: a requested termination or an
    /// early return is an error too.
    pub fn do_step(&mut self, t: f64, h: f64) -> Result<(), FmiError> {
        match &self.api {
            Api::Fmi2 { cs: Some(cs), .. } => {
                let f = cs.do_step;
                // SAFETY: a live instance handle; plain values.
                let s = unsafe { f(self.raw, t, h, 1) };
                self.check("fmi2DoStep", s)
            }
            Api::Fmi3 { cs: Some(f), .. } => {
                let step = f.do_step;
                let (mut event, mut terminate, mut early, mut last) = (false, false, false, t);
                // SAFETY: a live instance handle; the four out-pointers are valid locals.
                let s = unsafe { step(self.raw, t, h, true, &mut event, &mut terminate, &mut early, &mut last) };
                self.check("fmi3DoStep", s)?;
                if terminate {
                    return Err(self.error("fmi3DoStep", format!("requested termination at t = {last}")));
                }
                if early {
                    return Err(self.error("fmi3DoStep", format!("returned early at t = {last} (not requested)")));
                }
                Ok(())
            }
            Api::Fmi2 { cs: None, .. } => {
                Err(self.error("fmi2DoStep", "this instance is not a Co-Simulation instance"))
            }
            Api::Fmi3 { cs: None, .. } => {
                Err(self.error("fmi3DoStep", "this instance is not a Co-Simulation instance"))
            }
        }
    }

    /// Model Exchange: fmi2SetTime / fmi3SetTime.
    pub fn set_time(&mut self, t: f64) -> Result<(), FmiError> {
        let name = self.me_name("fmi2SetTime", "fmi3SetTime");
        let f = match self.me(name)? {
            MeFns::V2(m) => m.set_time,
            MeFns::V3(m) => m.set_time,
        };
        // SAFETY: a live instance handle.
        let s = unsafe { f(self.raw, t) };
        self.check(name, s)
    }

    /// Model Exchange: fmi2SetContinuousStates / fmi3SetContinuousStates.
    pub fn set_states(&mut self, x: &[f64]) -> Result<(), FmiError> {
        let name = self.me_name("fmi2SetContinuousStates", "fmi3SetContinuousStates");
        let f = match self.me(name)? {
            MeFns::V2(m) => m.set_continuous_states,
            MeFns::V3(m) => m.set_continuous_states,
        };
        // SAFETY: x.len() values.
        let s = unsafe { f(self.raw, x.as_ptr(), x.len()) };
        self.check(name, s)
    }

    /// Model Exchange: one of the calls that fill a state-sized (or indicator-sized) array.
    fn fill(&mut self, name: &'static str, pick: fn(MeFns<'_>) -> GetArray, out: &mut [f64]) -> Result<(), FmiError> {
        let f = pick(self.me(name)?);
        // SAFETY: out.len() writable values.
        let s = unsafe { f(self.raw, out.as_mut_ptr(), out.len()) };
        self.check(name, s)
    }

    /// Model Exchange: fmi2GetContinuousStates / fmi3GetContinuousStates.
    pub fn get_states(&mut self, x: &mut [f64]) -> Result<(), FmiError> {
        let name = self.me_name("fmi2GetContinuousStates", "fmi3GetContinuousStates");
        self.fill(
            name,
            |m| match m {
                MeFns::V2(m) => m.get_continuous_states,
                MeFns::V3(m) => m.get_continuous_states,
            },
            x,
        )
    }

    /// Model Exchange: fmi2GetDerivatives / fmi3GetContinuousStateDerivatives.
    pub fn get_derivatives(&mut self, dx: &mut [f64]) -> Result<(), FmiError> {
        let name = self.me_name("fmi2GetDerivatives", "fmi3GetContinuousStateDerivatives");
        self.fill(
            name,
            |m| match m {
                MeFns::V2(m) => m.get_derivatives,
                MeFns::V3(m) => m.get_derivatives,
            },
            dx,
        )
    }

    /// Model Exchange: fmi2GetEventIndicators / fmi3GetEventIndicators.
    pub fn get_event_indicators(&mut self, z: &mut [f64]) -> Result<(), FmiError> {
        if z.is_empty() {
            return Ok(());
        }
        let name = self.me_name("fmi2GetEventIndicators", "fmi3GetEventIndicators");
        self.fill(
            name,
            |m| match m {
                MeFns::V2(m) => m.get_event_indicators,
                MeFns::V3(m) => m.get_event_indicators,
            },
            z,
        )
    }

    /// Model Exchange: fmi2EnterEventMode / fmi3EnterEventMode.
    pub fn enter_event_mode(&mut self) -> Result<(), FmiError> {
        let name = self.me_name("fmi2EnterEventMode", "fmi3EnterEventMode");
        let f = match self.me(name)? {
            MeFns::V2(m) => m.enter_event_mode,
            MeFns::V3(m) => m.enter_event_mode,
        };
        // SAFETY: a live instance handle.
        let s = unsafe { f(self.raw) };
        self.check(name, s)
    }

    /// Model Exchange: fmi2EnterContinuousTimeMode / fmi3EnterContinuousTimeMode.
    pub fn enter_continuous_time_mode(&mut self) -> Result<(), FmiError> {
        let name = self.me_name("fmi2EnterContinuousTimeMode", "fmi3EnterContinuousTimeMode");
        let f = match self.me(name)? {
            MeFns::V2(m) => m.enter_continuous_time_mode,
            MeFns::V3(m) => m.enter_continuous_time_mode,
        };
        // SAFETY: a live instance handle.
        let s = unsafe { f(self.raw) };
        self.check(name, s)
    }

    /// The name of one event-iteration call: fmi2NewDiscreteStates / fmi3UpdateDiscreteStates.
    pub fn new_discrete_states_name(&self) -> &'static str {
        self.me_name("fmi2NewDiscreteStates", "fmi3UpdateDiscreteStates")
    }

    /// Model Exchange: one fmi2NewDiscreteStates / fmi3UpdateDiscreteStates call.
    pub fn new_discrete_states(&mut self) -> Result<EventInfo, FmiError> {
        let name = self.new_discrete_states_name();
        let (s, info) = match self.me(name)? {
            MeFns::V2(m) => {
                let mut info = Fmi2EventInfo::default();
                // SAFETY: a valid out-struct.
                let s = unsafe { (m.new_discrete_states)(self.raw, &mut info) };
                let info = EventInfo {
                    new_discrete_states_needed: info.new_discrete_states_needed != 0,
                    terminate_simulation: info.terminate_simulation != 0,
                    values_of_continuous_states_changed: info.values_of_continuous_states_changed != 0,
                    next_event_time: (info.next_event_time_defined != 0).then_some(info.next_event_time),
                };
                (s, info)
            }
            MeFns::V3(m) => {
                let (mut needed, mut terminate, mut nominals, mut values, mut defined, mut next) =
                    (false, false, false, false, false, 0.0);
                // SAFETY: six valid out-pointers to locals.
                let s = unsafe {
                    (m.update_discrete_states)(
                        self.raw,
                        &mut needed,
                        &mut terminate,
                        &mut nominals,
                        &mut values,
                        &mut defined,
                        &mut next,
                    )
                };
                let info = EventInfo {
                    new_discrete_states_needed: needed,
                    terminate_simulation: terminate,
                    values_of_continuous_states_changed: values,
                    next_event_time: defined.then_some(next),
                };
                (s, info)
            }
        };
        self.check(name, s)?;
        Ok(info)
    }

    /// fmi2CompletedIntegratorStep / fmi3CompletedIntegratorStep.
    pub fn completed_integrator_step_name(&self) -> &'static str {
        self.me_name("fmi2CompletedIntegratorStep", "fmi3CompletedIntegratorStep")
    }

    /// Model Exchange: fmi2CompletedIntegratorStep / fmi3CompletedIntegratorStep →
    /// (enterEventMode, terminateSimulation).
    pub fn completed_integrator_step(&mut self) -> Result<(bool, bool), FmiError> {
        let name = self.completed_integrator_step_name();
        let (s, enter, terminate) = match self.me(name)? {
            MeFns::V2(m) => {
                let (mut enter, mut terminate): (c_int, c_int) = (0, 0);
                // SAFETY: valid out-pointers.
                let s = unsafe { (m.completed_integrator_step)(self.raw, 1, &mut enter, &mut terminate) };
                (s, enter != 0, terminate != 0)
            }
            MeFns::V3(m) => {
                let (mut enter, mut terminate) = (false, false);
                // SAFETY: valid out-pointers.
                let s = unsafe { (m.completed_integrator_step)(self.raw, true, &mut enter, &mut terminate) };
                (s, enter, terminate)
            }
        };
        self.check(name, s)?;
        Ok((enter, terminate))
    }

    /// The FMI names of GetFMUstate, SetFMUstate, FreeFMUstate for this version.
    fn state_names(&self) -> [&'static str; 3] {
        match self.version {
            FmiVersion::V2 => ["fmi2GetFMUstate", "fmi2SetFMUstate", "fmi2FreeFMUstate"],
            FmiVersion::V3 => ["fmi3GetFMUState", "fmi3SetFMUState", "fmi3FreeFMUState"],
        }
    }

    /// True if the binary exports GetFMUstate, SetFMUstate and FreeFMUstate (whether the
    /// description declares canGetAndSetFMUstate is the caller's check).
    pub fn can_save_state(&self) -> bool {
        self.state_fns.is_some()
    }

    /// GetFMUstate into the instance's one saved-state slot (the FMU reuses the previous
    /// state's memory when there is one). The state is freed when the instance is dropped.
    pub fn save_state(&mut self) -> Result<(), FmiError> {
        let name = self.state_names()[0];
        let Some(f) = self.state_fns.as_ref().map(|s| s.get_state) else {
            return Err(self.error(name, "is not exported by the binary (no FMU state rollback)"));
        };
        let mut saved = self.saved;
        // SAFETY: a live instance handle; `saved` is NULL or a state this instance returned
        // earlier (which the FMU overwrites in place), and the out-pointer is a valid local.
        let s = unsafe { f(self.raw, &mut saved) };
        self.saved = saved;
        self.check(name, s)
    }

    /// SetFMUstate from the saved-state slot: the instance returns to the point of the last
    /// [`Instance::save_state`].
    pub fn restore_state(&mut self) -> Result<(), FmiError> {
        let name = self.state_names()[1];
        let Some(f) = self.state_fns.as_ref().map(|s| s.set_state) else {
            return Err(self.error(name, "is not exported by the binary (no FMU state rollback)"));
        };
        if self.saved.is_null() {
            return Err(self.error(name, "no FMU state was saved"));
        }
        // SAFETY: a live instance handle and a non-NULL state returned by this instance.
        let s = unsafe { f(self.raw, self.saved) };
        self.check(name, s)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let (terminate, free) = match &self.api {
            Api::Fmi2 { common, .. } => (common.terminate, common.free_instance),
            Api::Fmi3 { common: f, .. } => (f.terminate, f.free_instance),
        };
        if let (Some(fns), false) = (&self.state_fns, self.saved.is_null() || self.phase == Phase::Fatal) {
            let mut saved = self.saved;
            // SAFETY: a live instance handle and a state it returned, freed once, before
            // FreeInstance.
            let _ = unsafe { (fns.free_state)(self.raw, &mut saved) };
            self.saved = std::ptr::null_mut();
        }
        if self.phase == Phase::Initialized {
            // SAFETY: a live instance handle; the status does not matter any more.
            let _ = unsafe { terminate(self.raw) };
        }
        // SAFETY: the handle came from instantiate and is freed exactly once; the library
        // (dropped after this) is still loaded.
        unsafe { free(self.raw) };
        if let Some(k) = self.once.take() {
            let mut live = ONCE_PER_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
            live.retain(|(key, _)| *key != k);
        }
    }
}
