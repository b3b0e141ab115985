//! The FMU's shared library and one instance of it: the only `unsafe` code of the importer.
//!
//! Bindings: the C API as bindgen generates it from the official fmi2Functions.h /
//! fmi3Functions.h, checked in as `stiction-fmi-sys` (fmus/sys), loaded with `libloading`. The `fmi` crate's own import layer above them is not used, because of how it
//! treats the FMU's messages and foreign binaries:
//! * its logger callbacks pass every message to the global `log` facade with a NULL instance
//!   environment, so a message cannot be attached to the error of the instance that logged
//!   it when several FMUs step concurrently (here each instance has its own [`LogSink`]);
//! * those callbacks `unreachable!()` on a status outside the enumeration and read the
//!   instance name with `CStr::from_ptr` without a NULL check, inside `extern "C"`
//!   functions: one misbehaving foreign FMU would abort the whole process, and with it the
//!   rows not yet written;
//! * it cannot open a runtime library with RTLD_GLOBAL before the binary ([`preload`]).
//!
//! Every call goes through [`Local`], whose methods are safe: they pass slices of the
//! right lengths, check every returned status (anything but OK is an [`FmiError`] naming
//! the FMU and the function, with the FMU's log messages attached) and keep the library
//! loaded and the callbacks alive for as long as the instance exists.
#![allow(unsafe_code)]

use std::collections::VecDeque;
use std::ffi::{c_char, c_uint, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::sync::Mutex;
use stiction_fmi_schema::{Archive, FmiError, FmiVersion, Interface, VarType};
use stiction_fmi_sys::{fmi2, fmi3};

type Handle = *mut c_void;
/// fmi2Status / fmi3Status (both C enums, `unsigned int` as bindgen maps them).
type Status = c_uint;

extern "C" {
    /// csrc/fmi2_logger.c, an fmi2CallbackLogger: formats the printf-style message with its
    /// arguments and calls [`stiction_fmi2_log_sink`] with the text.
    fn stiction_fmi2_logger(
        env: fmi2::fmi2ComponentEnvironment,
        instance: fmi2::fmi2String,
        status: fmi2::fmi2Status,
        category: fmi2::fmi2String,
        message: fmi2::fmi2String,
        ...
    );
    fn calloc(n: usize, size: usize) -> *mut c_void;
    fn free(p: *mut c_void);
}

/// Record the names of `fields` that `binding` does not resolve.
macro_rules! require {
    ($binding:expr, $missing:expr, [$($field:ident),* $(,)?]) => {{
        $(
            if $binding.$field.is_err() {
                $missing.push(stringify!($field));
            }
        )*
    }};
}

/// The functions of an FMI 2.0 binary: those every instance needs and those of `interface`.
fn fmi2_missing(b: &fmi2::Fmi2Binding, interface: Interface) -> Vec<&'static str> {
    let mut missing = Vec::new();
    require!(
        b,
        missing,
        [
            fmi2Instantiate,
            fmi2FreeInstance,
            fmi2SetupExperiment,
            fmi2EnterInitializationMode,
            fmi2ExitInitializationMode,
            fmi2Terminate,
            fmi2GetReal,
            fmi2GetInteger,
            fmi2GetBoolean,
            fmi2SetReal,
            fmi2SetInteger,
            fmi2SetBoolean,
        ]
    );
    match interface {
        Interface::CoSimulation => require!(b, missing, [fmi2DoStep]),
        Interface::ModelExchange => require!(
            b,
            missing,
            [
                fmi2SetTime,
                fmi2SetContinuousStates,
                fmi2GetContinuousStates,
                fmi2GetDerivatives,
                fmi2GetEventIndicators,
                fmi2EnterEventMode,
                fmi2NewDiscreteStates,
                fmi2EnterContinuousTimeMode,
                fmi2CompletedIntegratorStep,
            ]
        ),
    }
    missing
}

/// The functions of an FMI 3.0 binary: those every instance needs and those of `interface`.
fn fmi3_missing(b: &fmi3::Fmi3Binding, interface: Interface) -> Vec<&'static str> {
    let mut missing = Vec::new();
    require!(
        b,
        missing,
        [
            fmi3FreeInstance,
            fmi3EnterInitializationMode,
            fmi3ExitInitializationMode,
            fmi3Terminate,
            fmi3GetFloat64,
            fmi3GetInt32,
            fmi3GetBoolean,
            fmi3SetFloat64,
            fmi3SetInt32,
            fmi3SetBoolean,
        ]
    );
    match interface {
        Interface::CoSimulation => require!(b, missing, [fmi3InstantiateCoSimulation, fmi3DoStep]),
        Interface::ModelExchange => require!(
            b,
            missing,
            [
                fmi3InstantiateModelExchange,
                fmi3SetTime,
                fmi3SetContinuousStates,
                fmi3GetContinuousStates,
                fmi3GetContinuousStateDerivatives,
                fmi3GetEventIndicators,
                fmi3EnterEventMode,
                fmi3UpdateDiscreteStates,
                fmi3EnterContinuousTimeMode,
                fmi3CompletedIntegratorStep,
            ]
        ),
    }
    missing
}

/// The loaded binary. Every function an instance calls was checked to resolve when it was
/// loaded (`fmi2_missing` / `fmi3_missing`; the FMU-state functions by `Local::state_fns`),
/// so the bindings' methods, which panic on an unresolved function, never do.
enum Api {
    Fmi2(Box<fmi2::Fmi2Binding>),
    Fmi3(Box<fmi3::Fmi3Binding>),
}

/// The FMU's log messages, collected by the logger callback. Bounded: the oldest messages
/// are dropped beyond [`LogSink::KEEP`].
pub(crate) struct LogSink {
    messages: Mutex<VecDeque<String>>,
}

impl LogSink {
    const KEEP: usize = 64;

    fn push(&self, status: Status, category: &str, message: &str) {
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

/// File one message with the instance whose environment pointer `env` is (both logger
/// callbacks end here; a panic never crosses back into the FMU).
///
/// # Safety
/// `env` is NULL or the `LogSink` an Instance passed as componentEnvironment /
/// instanceEnvironment, which it keeps alive (boxed, never moved) until after FreeInstance;
/// `category` and `message` are NULL or NUL-terminated strings.
unsafe fn file_message(env: *mut c_void, status: Status, category: *const c_char, message: *const c_char) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: see the function's contract.
        let Some(sink) = (unsafe { (env as *const LogSink).as_ref() }) else { return };
        // SAFETY: see the function's contract.
        let (c, m) = unsafe { (text(category), text(message)) };
        sink.push(status, &c, &m);
    }));
}

/// The FMI 2.0 logger's message, already formatted by csrc/fmi2_logger.c.
#[no_mangle]
extern "C" fn stiction_fmi2_log_sink(
    env: *mut c_void,
    _instance: *const c_char,
    status: Status,
    category: *const c_char,
    message: *const c_char,
) {
    // SAFETY: `env` is our componentEnvironment; category is NULL or NUL-terminated
    // (FMI 2.0); message is the shim's NUL-terminated buffer.
    unsafe { file_message(env, status, category, message) }
}

/// fmi3LogMessageCallback.
unsafe extern "C" fn fmi3_logger(env: *mut c_void, status: Status, category: *const c_char, message: *const c_char) {
    // SAFETY: `env` is our instanceEnvironment; NULL or NUL-terminated strings (FMI 3.0).
    unsafe { file_message(env, status, category, message) }
}

/// fmi2Status / fmi3Status by name.
pub fn status_name(s: Status) -> &'static str {
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
    /// A call returned Error: the instance is never called again except to free it (or to
    /// restore a saved FMU state, which FMI 2.0 and 3.0 allow after Error).
    Failed,
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
        FOREIGN.store(true, std::sync::atomic::Ordering::Relaxed);
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

/// Whether code from outside stiction has been loaded into this process: an FMU binary, or
/// a library named by `preload`.
static FOREIGN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// True once an FMU binary or a preloaded library has been loaded into this process: from
/// then on the process may end inside foreign code without unwinding (a crash, abort(),
/// exit()), and a results writer should write every row through
/// (`OutputSink::set_write_through`). An FMU run with `"isolation": "process"` loads
/// nothing here.
pub fn foreign_code_loaded() -> bool {
    FOREIGN.load(std::sync::atomic::Ordering::Relaxed)
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

/// The binaries loaded so far in this process (by path): the first instance of a binary
/// loads the unpacked file itself, every further one a copy next to it.
static LOADED: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());

/// `path` if no instance loaded it yet, else a fresh copy `<path>.<n>` in the same (private)
/// directory, removed with the directory.
fn private_copy(path: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    let n = loaded.iter().filter(|p| p.as_path() == path).count();
    loaded.push(path.to_path_buf());
    if n == 0 {
        return Ok(path.to_path_buf());
    }
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}"));
    let copy = std::path::PathBuf::from(name);
    std::fs::copy(path, &copy)?;
    Ok(copy)
}

/// The type of one variable of a mixed get or set and its number of values (an array: all
/// its elements).
pub type VarKind = (VarType, usize);

/// The variables of a mixed-type get grouped by type once (`Local::get_planned`), so that
/// a get repeated every step (a signal block's outputs) makes one call per type and no
/// allocation.
#[derive(Clone, Debug, Default)]
pub struct MixedPlan {
    vrs: Vec<u32>,
    kinds: Vec<VarKind>,
    /// Per type present: its variables (empty when every variable is Float64).
    groups: Vec<TypeGroup>,
    /// Scratch for one type's values.
    buf: Vec<f64>,
}

/// The variables of one type in a [`MixedPlan`].
#[derive(Clone, Debug)]
struct TypeGroup {
    ty: VarType,
    /// Their value references.
    vrs: Vec<u32>,
    /// The (offset, length) of each variable's values in the output.
    at: Vec<(usize, usize)>,
    /// The number of values.
    n: usize,
}

impl MixedPlan {
    /// The plan of a get of `vrs` with `kinds` (as `Local::get_mixed`).
    pub fn new(vrs: &[u32], kinds: &[VarKind]) -> MixedPlan {
        let offsets = Local::offsets(kinds);
        let mut groups = Vec::new();
        if !kinds.iter().all(|k| k.0 == VarType::Float64) {
            for ty in VarType::NUMERIC {
                let (tv, at) = Local::of_type(vrs, kinds, &offsets, ty);
                if !tv.is_empty() {
                    let n = at.iter().map(|a| a.1).sum();
                    groups.push(TypeGroup { ty, vrs: tv, at, n });
                }
            }
        }
        let most = groups.iter().map(|g| g.n).max().unwrap_or(0);
        MixedPlan { vrs: vrs.to_vec(), kinds: kinds.to_vec(), groups, buf: vec![0.0; most] }
    }
    /// The value references, in the order of the output.
    pub fn vrs(&self) -> &[u32] {
        &self.vrs
    }
    /// Their kinds.
    pub fn kinds(&self) -> &[VarKind] {
        &self.kinds
    }
}

/// Whether `x` is a value of type `ty` as a port or connection carries it: any number for
/// Float64/Float32, a whole number in the type's range for the integer types, exactly 0 or 1
/// for Boolean (see `Local::set_mixed`).
pub fn carries(ty: VarType, x: f64) -> bool {
    match ty {
        VarType::Boolean => x == 0.0 || x == 1.0,
        // hi + 1 is 2^63 / 2^64 for the 64-bit types (i64::MAX as f64 rounds up to 2^63), so
        // `x < hi + 1` keeps x inside the range for every type.
        _ => ty.integer_range().is_none_or(|(lo, hi)| x.is_finite() && x.fract() == 0.0 && x >= lo && x < hi + 1.0),
    }
}

/// The rule of [`carries`] in words, for messages.
pub fn carries_rule(ty: VarType) -> String {
    match (ty, ty.integer_range()) {
        (VarType::Boolean, _) => "a Boolean variable takes exactly 0 (false) or 1 (true)".into(),
        (_, Some((lo, hi))) => format!("an {ty:?} variable takes a whole number from {lo} to {hi}"),
        _ => format!("a {ty:?} variable takes any number"),
    }
}

/// One instance of an FMU in this process (`crate::Instance` holds it, or an isolated
/// child process holds it, see isolate.rs), with its library and unpacked archive. Dropping it terminates
/// and frees the instance, then unloads the library, then removes the temporary directory
/// (fields drop in declaration order after `Drop::drop`).
pub struct Local {
    raw: Handle,
    api: Api,
    phase: Phase,
    /// The phase to return to when a saved state is restored after Error.
    resume: Phase,
    /// The function that returned Error or Fatal.
    failed_in: &'static str,
    /// "FMU 'StictionGear' (path.fmu)", for messages.
    pub label: String,
    pub version: FmiVersion,
    pub interface: Interface,
    log: Box<LogSink>,
    _callbacks: Option<Box<fmi2::fmi2CallbackFunctions>>,
    /// Whether the binary exports Get/Set/FreeFMUstate.
    state_fns: bool,
    /// The one saved FMU state (`Local::save_state`), NULL if none; freed on drop.
    saved: Handle,
    /// Shared by every instance of the same .fmu file ([`Archive::shared`]).
    pub archive: Arc<Archive>,
    /// The key under which this instance is registered in [`ONCE_PER_PROCESS`], if its FMU
    /// may be instantiated only once per process.
    once: Option<String>,
}

// SAFETY: the FMI standards allow an instance to be used from any thread as long as its
// functions are not called concurrently. Every FMI call goes through `&mut self`, so Rust's
// borrow rules serialise them; the only shared data, the log sink, is a Mutex. The raw
// handle and the callback struct are owned and freed by this value alone.
unsafe impl Send for Local {}

impl Local {
    /// Load the binary of `interface` from `archive`, resolve the functions that interface
    /// needs and instantiate it as `name`. Missing binaries and symbols are errors naming
    /// the file; a NULL instance is an error carrying the FMU's log.
    pub fn new(archive: Arc<Archive>, interface: Interface, name: &str) -> Result<Local, FmiError> {
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
        // Refuse what the dynamic loader would choke on (a truncated ELF file can crash the
        // process inside dlopen) before loading it.
        crate::elf::check(&path).map_err(|e| FmiError::new(&label, None, format!("refused: {rel} {e}")))?;
        // Instances of one FMU share its unpacked archive; the dynamic loader would hand a
        // second instance the first one's copy of the library (and its globals), so every
        // further instance loads a private copy of the binary.
        let path = private_copy(&path).map_err(|e| FmiError::new(&label, None, format!("cannot copy {rel}: {e}")))?;
        FOREIGN.store(true, std::sync::atomic::Ordering::Relaxed);
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
        // SAFETY: the bindings resolve the FMI symbols of the library with the signatures of
        // the official headers; a symbol that is absent stays an Err (checked below).
        let (api, missing, state_fns) = match version {
            FmiVersion::V2 => {
                let b = unsafe { fmi2::Fmi2Binding::from_library(lib) }
                    .map_err(|e| FmiError::new(&label, None, format!("cannot bind {rel}: {e}")))?;
                let state = b.fmi2GetFMUstate.is_ok() && b.fmi2SetFMUstate.is_ok() && b.fmi2FreeFMUstate.is_ok();
                let missing = fmi2_missing(&b, interface);
                (Api::Fmi2(Box::new(b)), missing, state)
            }
            FmiVersion::V3 => {
                let b = unsafe { fmi3::Fmi3Binding::from_library(lib) }
                    .map_err(|e| FmiError::new(&label, None, format!("cannot bind {rel}: {e}")))?;
                let state = b.fmi3GetFMUState.is_ok() && b.fmi3SetFMUState.is_ok() && b.fmi3FreeFMUState.is_ok();
                let missing = fmi3_missing(&b, interface);
                (Api::Fmi3(Box::new(b)), missing, state)
            }
        };
        if !missing.is_empty() {
            return Err(FmiError::new(
                &label,
                None,
                format!("{rel} does not export the FMI {} functions {}", version.label(), missing.join(", ")),
            ));
        }
        let log = Box::new(LogSink { messages: Mutex::new(VecDeque::new()) });
        let env = &*log as *const LogSink as *mut c_void;
        let cname = CString::new(name.replace('\0', "")).unwrap_or_default();
        let token = CString::new(md.token.replace('\0', "")).unwrap_or_default();
        let resources = archive.resources();
        let mut callbacks = None;
        let (raw, function) = match &api {
            Api::Fmi2(b) => {
                let cb = Box::new(fmi2::fmi2CallbackFunctions {
                    logger: Some(stiction_fmi2_logger),
                    allocateMemory: Some(calloc),
                    freeMemory: Some(free),
                    stepFinished: None,
                    componentEnvironment: env,
                });
                let uri = CString::new(file_uri(&resources)).unwrap_or_default();
                let kind = match interface {
                    Interface::ModelExchange => fmi2::fmi2Type_fmi2ModelExchange,
                    Interface::CoSimulation => fmi2::fmi2Type_fmi2CoSimulation,
                };
                // SAFETY: all strings are NUL-terminated and outlive the call; the callback
                // struct is boxed and kept in the Instance, as FMI 2.0 requires (the FMU may
                // keep the pointer); `env` points to the boxed LogSink, also kept.
                let raw = unsafe { b.fmi2Instantiate(cname.as_ptr(), kind, token.as_ptr(), uri.as_ptr(), &*cb, 0, 0) };
                callbacks = Some(cb);
                (raw, "fmi2Instantiate")
            }
            Api::Fmi3(b) => {
                let mut dir = resources.to_string_lossy().into_owned();
                dir.push('/');
                let path = CString::new(dir.replace('\0', "")).unwrap_or_default();
                match interface {
                    // SAFETY: NUL-terminated strings valid for the call; no intermediate
                    // variables (NULL, 0); `env` is the boxed LogSink kept by the Instance.
                    Interface::CoSimulation => (
                        unsafe {
                            b.fmi3InstantiateCoSimulation(
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
                        },
                        "fmi3InstantiateCoSimulation",
                    ),
                    // SAFETY: as above.
                    Interface::ModelExchange => (
                        unsafe {
                            b.fmi3InstantiateModelExchange(
                                cname.as_ptr(),
                                token.as_ptr(),
                                path.as_ptr(),
                                false,
                                false,
                                env,
                                Some(fmi3_logger),
                            )
                        },
                        "fmi3InstantiateModelExchange",
                    ),
                }
            }
        };
        if raw.is_null() {
            return Err(
                FmiError::new(&label, Some(function), "returned NULL (instantiation failed)").with_log(log.take())
            );
        }
        Ok(Local {
            raw,
            api,
            phase: Phase::Instantiated,
            resume: Phase::Instantiated,
            failed_in: "",
            label,
            version,
            interface,
            log,
            _callbacks: callbacks,
            state_fns,
            saved: std::ptr::null_mut(),
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
        match status {
            4 => self.phase = Phase::Fatal,
            3 if !matches!(self.phase, Phase::Fatal | Phase::Failed) => {
                self.resume = self.phase;
                self.phase = Phase::Failed;
            }
            _ => {}
        }
        if matches!(status, 3 | 4) {
            self.failed_in = function;
        }
        Err(self.error(function, format!("returned {}", status_name(status))))
    }

    /// Refuse to call `function` once a call returned Error or Fatal: the standard allows no
    /// further calls then (but FreeInstance, and SetFMUstate after Error).
    fn usable(&self, function: &str) -> Result<(), FmiError> {
        match self.phase {
            Phase::Failed | Phase::Fatal => Err(FmiError::new(
                &self.label,
                Some(function),
                format!(
                    "not called: {} returned {} earlier, after which the FMI standard allows no further calls to the instance",
                    self.failed_in,
                    if self.phase == Phase::Fatal { "Fatal" } else { "Error" }
                ),
            )),
            _ => Ok(()),
        }
    }

    /// The names of the variables with value references `vrs` (for messages).
    pub fn names_of(&self, vrs: &[u32]) -> String {
        names_of(&self.archive.description, vrs)
    }

    /// The FMU's log messages since the last call.
    pub(crate) fn take_log(&self) -> Vec<String> {
        self.log.take()
    }

    /// An error of `function` with the FMU's log so far.
    pub fn error(&self, function: &str, message: impl Into<String>) -> FmiError {
        FmiError::new(&self.label, Some(function), message).with_log(self.log.take())
    }

    /// An error naming `function` unless this is a Model Exchange instance.
    fn me(&self, function: &'static str) -> Result<(), FmiError> {
        match self.interface {
            Interface::ModelExchange => Ok(()),
            Interface::CoSimulation => Err(self.error(function, "this instance is not a Model Exchange instance")),
        }
    }

    /// The name of an ME function in this instance's FMI version.
    pub fn me_name(&self, fmi2: &'static str, fmi3: &'static str) -> &'static str {
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
        self.usable(self.me_name("fmi2EnterInitializationMode", "fmi3EnterInitializationMode"))?;
        if let Api::Fmi2(b) = &self.api {
            // SAFETY: a live instance handle; plain values.
            let s = unsafe { b.fmi2SetupExperiment(self.raw, 0, 0.0, start, 0, 0.0) };
            self.check("fmi2SetupExperiment", s)?;
        }
        // SAFETY: a live instance handle; plain values.
        let (s, name) = match &self.api {
            Api::Fmi2(b) => (unsafe { b.fmi2EnterInitializationMode(self.raw) }, "fmi2EnterInitializationMode"),
            Api::Fmi3(b) => (
                unsafe { b.fmi3EnterInitializationMode(self.raw, false, 0.0, start, false, 0.0) },
                "fmi3EnterInitializationMode",
            ),
        };
        self.check(name, s)
    }

    /// ExitInitializationMode.
    pub fn exit_initialization(&mut self) -> Result<(), FmiError> {
        self.usable(self.me_name("fmi2ExitInitializationMode", "fmi3ExitInitializationMode"))?;
        // SAFETY: a live instance handle.
        let (s, name) = match &self.api {
            Api::Fmi2(b) => (unsafe { b.fmi2ExitInitializationMode(self.raw) }, "fmi2ExitInitializationMode"),
            Api::Fmi3(b) => (unsafe { b.fmi3ExitInitializationMode(self.raw) }, "fmi3ExitInitializationMode"),
        };
        self.check(name, s)?;
        self.phase = Phase::Initialized;
        Ok(())
    }

    /// Get Float64 (fmi2GetReal / fmi3GetFloat64) values.
    pub fn get_f64(&mut self, vrs: &[u32], out: &mut [f64]) -> Result<(), FmiError> {
        self.usable(self.me_name("fmi2GetReal", "fmi3GetFloat64"))?;
        let (name, s) = match &self.api {
            Api::Fmi2(b) => {
                if vrs.len() != out.len() {
                    return Err(self.mismatch("fmi2GetReal", vrs.len(), out.len()));
                }
                // SAFETY: `vrs` and `out` have the same length n, passed as nvr.
                ("fmi2GetReal", unsafe { b.fmi2GetReal(self.raw, vrs.as_ptr(), vrs.len(), out.as_mut_ptr()) })
            }
            // SAFETY: nvr = vrs.len(), nValues = out.len() (scalars: the FMU checks they match).
            Api::Fmi3(b) => ("fmi3GetFloat64", unsafe {
                b.fmi3GetFloat64(self.raw, vrs.as_ptr(), vrs.len(), out.as_mut_ptr(), out.len())
            }),
        };
        self.check(name, s)
    }

    /// Set Float64 (fmi2SetReal / fmi3SetFloat64) values.
    pub fn set_f64(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), FmiError> {
        self.usable(self.me_name("fmi2SetReal", "fmi3SetFloat64"))?;
        let (name, s) = match &self.api {
            Api::Fmi2(b) => {
                if vrs.len() != values.len() {
                    return Err(self.mismatch("fmi2SetReal", vrs.len(), values.len()));
                }
                // SAFETY: `vrs` and `values` have the same length n.
                ("fmi2SetReal", unsafe { b.fmi2SetReal(self.raw, vrs.as_ptr(), vrs.len(), values.as_ptr()) })
            }
            // SAFETY: nvr = vrs.len(), nValues = values.len().
            Api::Fmi3(b) => ("fmi3SetFloat64", unsafe {
                b.fmi3SetFloat64(self.raw, vrs.as_ptr(), vrs.len(), values.as_ptr(), values.len())
            }),
        };
        self.check(name, s)
    }

    /// Get the values of variables of mixed types in as few calls as the types need (one per
    /// type): `kinds[k]` = ([`VarKind`]) the type of `vrs[k]` and its number of values; `out` holds
    /// them in the order of `vrs`, as f64 (integers exactly, Boolean 0 or 1). All Float64: one
    /// fmi2GetReal / fmi3GetFloat64 call, as [`Local::get_f64`].
    pub fn get_mixed(&mut self, vrs: &[u32], kinds: &[VarKind], out: &mut [f64]) -> Result<(), FmiError> {
        if kinds.iter().all(|k| k.0 == VarType::Float64) {
            return self.get_f64(vrs, out);
        }
        let offsets = Self::offsets(kinds);
        for ty in VarType::NUMERIC {
            let (tv, at) = Self::of_type(vrs, kinds, &offsets, ty);
            if tv.is_empty() {
                continue;
            }
            let mut buf = vec![0.0; at.iter().map(|a| a.1).sum()];
            self.get_values(ty, &tv, &mut buf)?;
            let mut i = 0;
            for &(o, len) in &at {
                out[o..o + len].copy_from_slice(&buf[i..i + len]);
                i += len;
            }
        }
        Ok(())
    }

    /// `Local::get_mixed` by a plan made once ([`MixedPlan`]): the same calls, the same
    /// values, no allocation for Float64 and no regrouping per call.
    pub fn get_planned(&mut self, plan: &mut MixedPlan, out: &mut [f64]) -> Result<(), FmiError> {
        if plan.groups.is_empty() {
            return self.get_f64(&plan.vrs, out);
        }
        let MixedPlan { groups, buf, .. } = plan;
        for g in groups.iter() {
            let buf = &mut buf[..g.n];
            self.get_values(g.ty, &g.vrs, buf)?;
            let mut i = 0;
            for &(o, len) in &g.at {
                out[o..o + len].copy_from_slice(&buf[i..i + len]);
                i += len;
            }
        }
        Ok(())
    }

    /// Set variables of mixed types (`kinds` as in `Local::get_mixed`), one call per type.
    /// Every value is checked first against the type ([`carries`]): an integer variable takes
    /// a whole number in its range, a Boolean exactly 0 or 1; any other value is an error naming
    /// the variable, its type and the value, and nothing is set.
    pub fn set_mixed(&mut self, vrs: &[u32], kinds: &[VarKind], values: &[f64]) -> Result<(), FmiError> {
        if kinds.iter().all(|k| k.0 == VarType::Float64) {
            return self.set_f64(vrs, values);
        }
        let offsets = Self::offsets(kinds);
        for (k, &(ty, len)) in kinds.iter().enumerate() {
            let o = offsets[k];
            if let Some(x) = values.get(o..o + len).and_then(|v| v.iter().find(|&&x| !carries(ty, x))) {
                let set = if self.version == FmiVersion::V2 { "fmi2Set*" } else { "fmi3Set*" };
                return Err(self.error(
                    set,
                    format!(
                        "not called: {x} is not a value of {} ({})",
                        self.names_of(&vrs[k..k + 1]),
                        carries_rule(ty)
                    ),
                ));
            }
        }
        for ty in VarType::NUMERIC {
            let (tv, at) = Self::of_type(vrs, kinds, &offsets, ty);
            if tv.is_empty() {
                continue;
            }
            let buf: Vec<f64> = at.iter().flat_map(|&(o, len)| values[o..o + len].iter().copied()).collect();
            self.set_values(ty, &tv, &buf)?;
        }
        Ok(())
    }

    /// Where each variable's values start in a mixed list.
    fn offsets(kinds: &[VarKind]) -> Vec<usize> {
        let mut o = 0;
        kinds
            .iter()
            .map(|k| {
                o += k.1;
                o - k.1
            })
            .collect()
    }

    /// The value references of type `ty` in a mixed list, with (offset, length) of their values.
    fn of_type(vrs: &[u32], kinds: &[VarKind], offsets: &[usize], ty: VarType) -> (Vec<u32>, Vec<(usize, usize)>) {
        let (mut tv, mut at) = (Vec::new(), Vec::new());
        for ((&vr, &(t, len)), &o) in vrs.iter().zip(kinds).zip(offsets) {
            if t == ty {
                tv.push(vr);
                at.push((o, len));
            }
        }
        (tv, at)
    }

    /// Read variables of one type `ty` in one call, as f64 (Boolean: 0 or 1; integers
    /// exactly up to 2^53). FMI 3.0: `out` holds every element of the variables (arrays in
    /// row-major order), so it may be longer than `vrs`; FMI 2.0: one value per reference.
    pub fn get_values(&mut self, ty: VarType, vrs: &[u32], out: &mut [f64]) -> Result<(), FmiError> {
        self.usable(self.me_name("fmi2Get*", "fmi3Get*"))?;
        let arrays_ok = self.version == FmiVersion::V3 && out.len() >= vrs.len();
        if vrs.len() != out.len() && !arrays_ok {
            return Err(self.mismatch("get", vrs.len(), out.len()));
        }
        if vrs.is_empty() {
            return Ok(());
        }
        let (n, nv) = (vrs.len(), out.len());
        /// One typed FMI 3.0 getter into `out` (converted with `as f64`).
        macro_rules! get3 {
            ($b:expr, $field:ident, $t:ty) => {{
                let Ok(f) = &$b.$field else {
                    return Err(self.error(stringify!($field), "is not exported by the binary"));
                };
                let mut v: Vec<$t> = vec![<$t>::default(); nv];
                // SAFETY: n value references and nv writable values of the function's type.
                let s = unsafe { f(self.raw, vrs.as_ptr(), n, v.as_mut_ptr(), nv) };
                self.check_vars(stringify!($field), s, vrs)?;
                for (o, x) in out.iter_mut().zip(v) {
                    *o = x as f64;
                }
                Ok(())
            }};
            // A 64-bit integer type: a value that f64 cannot hold exactly (beyond ±2^53 and
            // not a multiple of the spacing there) is an error, not a rounded number.
            ($b:expr, $field:ident, $t:ty, exact) => {{
                let Ok(f) = &$b.$field else {
                    return Err(self.error(stringify!($field), "is not exported by the binary"));
                };
                let mut v: Vec<$t> = vec![<$t>::default(); nv];
                // SAFETY: n value references and nv writable values of the function's type.
                let s = unsafe { f(self.raw, vrs.as_ptr(), n, v.as_mut_ptr(), nv) };
                self.check_vars(stringify!($field), s, vrs)?;
                for (k, (o, x)) in out.iter_mut().zip(v).enumerate() {
                    *o = x as f64;
                    if *o as i128 != x as i128 {
                        // Scalars: the variable of value k; with arrays, the call's variables.
                        let who = if nv == n { self.names_of(&vrs[k..k + 1]) } else { self.names_of(vrs) };
                        return Err(self.error(
                            stringify!($field),
                            format!(
                                "{who} has the value {x}, which a 64-bit float cannot hold exactly (stiction carries integers exactly up to 2^53)"
                            ),
                        ));
                    }
                }
                Ok(())
            }};
        }
        match (&self.api, ty) {
            (_, VarType::Float64) => self.get_f64(vrs, out),
            (Api::Fmi2(b), VarType::Int32 | VarType::Boolean) => {
                let mut v: Vec<fmi2::fmi2Integer> = vec![0; n];
                // SAFETY: n value references, n outputs (fmi2Boolean is an int too).
                let (name, s) = if ty == VarType::Int32 {
                    ("fmi2GetInteger", unsafe { b.fmi2GetInteger(self.raw, vrs.as_ptr(), n, v.as_mut_ptr()) })
                } else {
                    ("fmi2GetBoolean", unsafe { b.fmi2GetBoolean(self.raw, vrs.as_ptr(), n, v.as_mut_ptr()) })
                };
                self.check_vars(name, s, vrs)?;
                for (o, i) in out.iter_mut().zip(v) {
                    *o = if ty == VarType::Boolean { f64::from(u8::from(i != 0)) } else { f64::from(i) };
                }
                Ok(())
            }
            (Api::Fmi3(b), VarType::Boolean) => {
                let mut v = vec![false; nv];
                // SAFETY: n value references, nv outputs (fmi3Boolean is C bool); the
                // function was checked to resolve when the binary was loaded.
                let s = unsafe { b.fmi3GetBoolean(self.raw, vrs.as_ptr(), n, v.as_mut_ptr(), nv) };
                self.check_vars("fmi3GetBoolean", s, vrs)?;
                for (o, x) in out.iter_mut().zip(v) {
                    *o = f64::from(u8::from(x));
                }
                Ok(())
            }
            (Api::Fmi3(b), VarType::Float32) => get3!(b, fmi3GetFloat32, f32),
            (Api::Fmi3(b), VarType::Int8) => get3!(b, fmi3GetInt8, i8),
            (Api::Fmi3(b), VarType::UInt8) => get3!(b, fmi3GetUInt8, u8),
            (Api::Fmi3(b), VarType::Int16) => get3!(b, fmi3GetInt16, i16),
            (Api::Fmi3(b), VarType::UInt16) => get3!(b, fmi3GetUInt16, u16),
            (Api::Fmi3(b), VarType::Int32) => get3!(b, fmi3GetInt32, i32),
            (Api::Fmi3(b), VarType::UInt32) => get3!(b, fmi3GetUInt32, u32),
            (Api::Fmi3(b), VarType::Int64) => get3!(b, fmi3GetInt64, i64, exact),
            (Api::Fmi3(b), VarType::UInt64) => get3!(b, fmi3GetUInt64, u64, exact),
            _ => Err(self.error(
                "get",
                format!(
                    "{} have a type this importer cannot read with FMI {}",
                    self.names_of(vrs),
                    self.version.label()
                ),
            )),
        }
    }

    /// `Local::check`, naming the variables of the call in the error.
    fn check_vars(&mut self, function: &'static str, status: Status, vrs: &[u32]) -> Result<(), FmiError> {
        self.check(function, status).map_err(|mut e| {
            e.message = format!("{} (variables {})", e.message, self.names_of(vrs));
            e
        })
    }

    /// Set variables of one type in one call (FMI 3.0: `values` holds every element of the
    /// variables, arrays in row-major order).
    pub fn set_values(&mut self, ty: VarType, vrs: &[u32], values: &[f64]) -> Result<(), FmiError> {
        self.usable(self.me_name("fmi2Set*", "fmi3Set*"))?;
        let arrays_ok = self.version == FmiVersion::V3 && values.len() >= vrs.len();
        if vrs.len() != values.len() && !arrays_ok {
            return Err(self.mismatch("set", vrs.len(), values.len()));
        }
        if ty.integer_range().is_some() {
            if let Some(x) = values.iter().find(|&&x| !carries(ty, x)) {
                return Err(
                    self.error("set", format!("{x} is not a value of type {ty:?} (variables {})", self.names_of(vrs)))
                );
            }
        }
        let (n, nv) = (vrs.len(), values.len());
        /// One typed FMI 3.0 setter from `values` (converted with `as`).
        macro_rules! set3 {
            ($b:expr, $field:ident, $t:ty) => {{
                let Ok(f) = &$b.$field else {
                    return Err(self.error(stringify!($field), "is not exported by the binary"));
                };
                let v: Vec<$t> = values.iter().map(|&x| x as $t).collect();
                // SAFETY: n value references and nv values of the function's type.
                let s = unsafe { f(self.raw, vrs.as_ptr(), n, v.as_ptr(), nv) };
                self.check_vars(stringify!($field), s, vrs)
            }};
        }
        match (&self.api, ty) {
            (_, VarType::Float64) => self.set_f64(vrs, values),
            (Api::Fmi2(b), VarType::Int32) => {
                let v: Vec<fmi2::fmi2Integer> = values.iter().map(|&x| x as i32).collect();
                // SAFETY: n value references, n values.
                let s = unsafe { b.fmi2SetInteger(self.raw, vrs.as_ptr(), n, v.as_ptr()) };
                self.check_vars("fmi2SetInteger", s, vrs)
            }
            (Api::Fmi2(b), VarType::Boolean) => {
                let v: Vec<fmi2::fmi2Boolean> = values.iter().map(|&x| fmi2::fmi2Boolean::from(x != 0.0)).collect();
                // SAFETY: n value references, n values.
                let s = unsafe { b.fmi2SetBoolean(self.raw, vrs.as_ptr(), n, v.as_ptr()) };
                self.check_vars("fmi2SetBoolean", s, vrs)
            }
            (Api::Fmi3(b), VarType::Boolean) => {
                let v: Vec<bool> = values.iter().map(|&x| x != 0.0).collect();
                // SAFETY: n value references, nv values (fmi3Boolean is C bool); the
                // function was checked to resolve when the binary was loaded.
                let s = unsafe { b.fmi3SetBoolean(self.raw, vrs.as_ptr(), n, v.as_ptr(), nv) };
                self.check_vars("fmi3SetBoolean", s, vrs)
            }
            (Api::Fmi3(b), VarType::Float32) => set3!(b, fmi3SetFloat32, f32),
            (Api::Fmi3(b), VarType::Int8) => set3!(b, fmi3SetInt8, i8),
            (Api::Fmi3(b), VarType::UInt8) => set3!(b, fmi3SetUInt8, u8),
            (Api::Fmi3(b), VarType::Int16) => set3!(b, fmi3SetInt16, i16),
            (Api::Fmi3(b), VarType::UInt16) => set3!(b, fmi3SetUInt16, u16),
            (Api::Fmi3(b), VarType::Int32) => set3!(b, fmi3SetInt32, i32),
            (Api::Fmi3(b), VarType::UInt32) => set3!(b, fmi3SetUInt32, u32),
            (Api::Fmi3(b), VarType::Int64) => set3!(b, fmi3SetInt64, i64),
            (Api::Fmi3(b), VarType::UInt64) => set3!(b, fmi3SetUInt64, u64),
            _ => Err(self.error(
                "set",
                format!(
                    "{} have a type this importer cannot set with FMI {}",
                    self.names_of(vrs),
                    self.version.label()
                ),
            )),
        }
    }

    /// Co-Simulation: DoStep from `t` over `h`. `Ok(None)`: the step was made; `Ok(Some(t))`:
    /// the FMU asked to end the simulation, its last successful time being `t` (FMI 2.0:
    /// fmi2DoStep returned Discard and fmi2GetBooleanStatus(fmi2Terminated) is true, the time
    /// from fmi2GetRealStatus(fmi2LastSuccessfulTime); FMI 3.0: terminateSimulation, with
    /// lastSuccessfulTime). An early return that was not requested is an error.
    pub fn do_step(&mut self, t: f64, h: f64) -> Result<Option<f64>, FmiError> {
        self.usable(self.me_name("fmi2DoStep", "fmi3DoStep"))?;
        if self.interface != Interface::CoSimulation {
            let name = self.me_name("fmi2DoStep", "fmi3DoStep");
            return Err(self.error(name, "this instance is not a Co-Simulation instance"));
        }
        match &self.api {
            Api::Fmi2(b) => {
                // SAFETY: a live instance handle; plain values.
                let s = unsafe { b.fmi2DoStep(self.raw, t, h, 1) };
                if s != 2 {
                    return self.check("fmi2DoStep", s).map(|()| None);
                }
                // Discard: a termination request, if fmi2Terminated says so.
                let (Ok(get_bool), Ok(get_real)) = (&b.fmi2GetBooleanStatus, &b.fmi2GetRealStatus) else {
                    return self.check("fmi2DoStep", s).map(|()| None);
                };
                let mut terminated: fmi2::fmi2Boolean = 0;
                // SAFETY: a live instance handle, a valid out-pointer.
                let q = unsafe { get_bool(self.raw, fmi2::fmi2StatusKind_fmi2Terminated, &mut terminated) };
                if q != 0 || terminated == 0 {
                    return self.check("fmi2DoStep", s).map(|()| None);
                }
                let mut last = t;
                // SAFETY: as above.
                let q = unsafe { get_real(self.raw, fmi2::fmi2StatusKind_fmi2LastSuccessfulTime, &mut last) };
                if q != 0 || !last.is_finite() {
                    last = t;
                }
                Ok(Some(last))
            }
            Api::Fmi3(b) => {
                let (mut event, mut terminate, mut early, mut last) = (false, false, false, t);
                // SAFETY: a live instance handle; the four out-pointers are valid locals.
                let s =
                    unsafe { b.fmi3DoStep(self.raw, t, h, true, &mut event, &mut terminate, &mut early, &mut last) };
                if terminate && matches!(s, 0..=2) {
                    return Ok(Some(if last.is_finite() { last } else { t }));
                }
                self.check("fmi3DoStep", s)?;
                if early {
                    return Err(self.error("fmi3DoStep", format!("returned early at t = {last} (not requested)")));
                }
                Ok(None)
            }
        }
    }

    /// Model Exchange: fmi2SetTime / fmi3SetTime.
    pub fn set_time(&mut self, t: f64) -> Result<(), FmiError> {
        self.usable(self.me_name("fmi2SetTime", "fmi3SetTime"))?;
        let name = self.me_name("fmi2SetTime", "fmi3SetTime");
        self.me(name)?;
        // SAFETY: a live instance handle.
        let s = match &self.api {
            Api::Fmi2(b) => unsafe { b.fmi2SetTime(self.raw, t) },
            Api::Fmi3(b) => unsafe { b.fmi3SetTime(self.raw, t) },
        };
        self.check(name, s)
    }

    /// Model Exchange: fmi2SetContinuousStates / fmi3SetContinuousStates.
    pub fn set_states(&mut self, x: &[f64]) -> Result<(), FmiError> {
        self.usable(self.me_name("fmi2SetContinuousStates", "fmi3SetContinuousStates"))?;
        let name = self.me_name("fmi2SetContinuousStates", "fmi3SetContinuousStates");
        self.me(name)?;
        // SAFETY: x.len() values.
        let s = match &self.api {
            Api::Fmi2(b) => unsafe { b.fmi2SetContinuousStates(self.raw, x.as_ptr(), x.len()) },
            Api::Fmi3(b) => unsafe { b.fmi3SetContinuousStates(self.raw, x.as_ptr(), x.len()) },
        };
        self.check(name, s)
    }

    /// Model Exchange: fmi2GetContinuousStates / fmi3GetContinuousStates.
    pub fn get_states(&mut self, x: &mut [f64]) -> Result<(), FmiError> {
        self.usable(self.me_name("fmi2GetContinuousStates", "fmi3GetContinuousStates"))?;
        let name = self.me_name("fmi2GetContinuousStates", "fmi3GetContinuousStates");
        self.me(name)?;
        // SAFETY: x.len() writable values.
        let s = match &self.api {
            Api::Fmi2(b) => unsafe { b.fmi2GetContinuousStates(self.raw, x.as_mut_ptr(), x.len()) },
            Api::Fmi3(b) => unsafe { b.fmi3GetContinuousStates(self.raw, x.as_mut_ptr(), x.len()) },
        };
        self.check(name, s)
    }

    /// Model Exchange: fmi2GetDerivatives / fmi3GetContinuousStateDerivatives.
    pub fn get_derivatives(&mut self, dx: &mut [f64]) -> Result<(), FmiError> {
        self.usable(self.me_name("fmi2GetDerivatives", "fmi3GetContinuousStateDerivatives"))?;
        let name = self.me_name("fmi2GetDerivatives", "fmi3GetContinuousStateDerivatives");
        self.me(name)?;
        // SAFETY: dx.len() writable values.
        let s = match &self.api {
            Api::Fmi2(b) => unsafe { b.fmi2GetDerivatives(self.raw, dx.as_mut_ptr(), dx.len()) },
            Api::Fmi3(b) => unsafe { b.fmi3GetContinuousStateDerivatives(self.raw, dx.as_mut_ptr(), dx.len()) },
        };
        self.check(name, s)
    }

    /// Model Exchange: fmi2GetEventIndicators / fmi3GetEventIndicators.
    pub fn get_event_indicators(&mut self, z: &mut [f64]) -> Result<(), FmiError> {
        self.usable(self.me_name("fmi2GetEventIndicators", "fmi3GetEventIndicators"))?;
        if z.is_empty() {
            return Ok(());
        }
        let name = self.me_name("fmi2GetEventIndicators", "fmi3GetEventIndicators");
        self.me(name)?;
        // SAFETY: z.len() writable values.
        let s = match &self.api {
            Api::Fmi2(b) => unsafe { b.fmi2GetEventIndicators(self.raw, z.as_mut_ptr(), z.len()) },
            Api::Fmi3(b) => unsafe { b.fmi3GetEventIndicators(self.raw, z.as_mut_ptr(), z.len()) },
        };
        self.check(name, s)
    }

    /// Model Exchange: fmi2EnterEventMode / fmi3EnterEventMode.
    pub fn enter_event_mode(&mut self) -> Result<(), FmiError> {
        self.usable(self.me_name("fmi2EnterEventMode", "fmi3EnterEventMode"))?;
        let name = self.me_name("fmi2EnterEventMode", "fmi3EnterEventMode");
        self.me(name)?;
        // SAFETY: a live instance handle.
        let s = match &self.api {
            Api::Fmi2(b) => unsafe { b.fmi2EnterEventMode(self.raw) },
            Api::Fmi3(b) => unsafe { b.fmi3EnterEventMode(self.raw) },
        };
        self.check(name, s)
    }

    /// Model Exchange: fmi2EnterContinuousTimeMode / fmi3EnterContinuousTimeMode.
    pub fn enter_continuous_time_mode(&mut self) -> Result<(), FmiError> {
        self.usable(self.me_name("fmi2EnterContinuousTimeMode", "fmi3EnterContinuousTimeMode"))?;
        let name = self.me_name("fmi2EnterContinuousTimeMode", "fmi3EnterContinuousTimeMode");
        self.me(name)?;
        // SAFETY: a live instance handle.
        let s = match &self.api {
            Api::Fmi2(b) => unsafe { b.fmi2EnterContinuousTimeMode(self.raw) },
            Api::Fmi3(b) => unsafe { b.fmi3EnterContinuousTimeMode(self.raw) },
        };
        self.check(name, s)
    }

    /// The name of one event-iteration call: fmi2NewDiscreteStates / fmi3UpdateDiscreteStates.
    pub fn new_discrete_states_name(&self) -> &'static str {
        self.me_name("fmi2NewDiscreteStates", "fmi3UpdateDiscreteStates")
    }

    /// Model Exchange: one fmi2NewDiscreteStates / fmi3UpdateDiscreteStates call.
    pub fn new_discrete_states(&mut self) -> Result<EventInfo, FmiError> {
        self.usable(self.me_name("fmi2NewDiscreteStates", "fmi3UpdateDiscreteStates"))?;
        let name = self.new_discrete_states_name();
        self.me(name)?;
        let (s, info) = match &self.api {
            Api::Fmi2(b) => {
                let mut info = fmi2::fmi2EventInfo::default();
                // SAFETY: a valid out-struct.
                let s = unsafe { b.fmi2NewDiscreteStates(self.raw, &mut info) };
                let info = EventInfo {
                    new_discrete_states_needed: info.newDiscreteStatesNeeded != 0,
                    terminate_simulation: info.terminateSimulation != 0,
                    values_of_continuous_states_changed: info.valuesOfContinuousStatesChanged != 0,
                    next_event_time: (info.nextEventTimeDefined != 0).then_some(info.nextEventTime),
                };
                (s, info)
            }
            Api::Fmi3(b) => {
                let (mut needed, mut terminate, mut nominals, mut values, mut defined, mut next) =
                    (false, false, false, false, false, 0.0);
                // SAFETY: six valid out-pointers to locals.
                let s = unsafe {
                    b.fmi3UpdateDiscreteStates(
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
        self.usable(self.me_name("fmi2CompletedIntegratorStep", "fmi3CompletedIntegratorStep"))?;
        let name = self.completed_integrator_step_name();
        self.me(name)?;
        let (s, enter, terminate) = match &self.api {
            Api::Fmi2(b) => {
                let (mut enter, mut terminate): (fmi2::fmi2Boolean, fmi2::fmi2Boolean) = (0, 0);
                // SAFETY: valid out-pointers.
                let s = unsafe { b.fmi2CompletedIntegratorStep(self.raw, 1, &mut enter, &mut terminate) };
                (s, enter != 0, terminate != 0)
            }
            Api::Fmi3(b) => {
                let (mut enter, mut terminate) = (false, false);
                // SAFETY: valid out-pointers.
                let s = unsafe { b.fmi3CompletedIntegratorStep(self.raw, true, &mut enter, &mut terminate) };
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
        self.state_fns
    }

    /// GetFMUstate into the instance's one saved-state slot (the FMU reuses the previous
    /// state's memory when there is one). The state is freed when the instance is dropped.
    pub fn save_state(&mut self) -> Result<(), FmiError> {
        self.usable(self.me_name("fmi2GetFMUstate", "fmi3GetFMUState"))?;
        let name = self.state_names()[0];
        if !self.state_fns {
            return Err(self.error(name, "is not exported by the binary (no FMU state rollback)"));
        }
        let mut saved = self.saved;
        // SAFETY: a live instance handle; `saved` is NULL or a state this instance returned
        // earlier (which the FMU overwrites in place), and the out-pointer is a valid local;
        // the function was checked to resolve (`state_fns`).
        let s = match &self.api {
            Api::Fmi2(b) => unsafe { b.fmi2GetFMUstate(self.raw, &mut saved) },
            Api::Fmi3(b) => unsafe { b.fmi3GetFMUState(self.raw, &mut saved) },
        };
        self.saved = saved;
        self.check(name, s)
    }

    /// SetFMUstate from the saved-state slot: the instance returns to the point of the last
    /// `Local::save_state`.
    pub fn restore_state(&mut self) -> Result<(), FmiError> {
        let name = self.state_names()[1];
        if !self.state_fns {
            return Err(self.error(name, "is not exported by the binary (no FMU state rollback)"));
        }
        if self.saved.is_null() {
            return Err(self.error(name, "no FMU state was saved"));
        }
        if self.phase == Phase::Fatal {
            return self.usable(name);
        }
        // SAFETY: a live instance handle and a non-NULL state returned by this instance.
        let s = match &self.api {
            Api::Fmi2(b) => unsafe { b.fmi2SetFMUstate(self.raw, self.saved) },
            Api::Fmi3(b) => unsafe { b.fmi3SetFMUState(self.raw, self.saved) },
        };
        let failed = self.phase == Phase::Failed;
        self.check(name, s)?;
        if failed {
            // Back to the state saved before the failing call.
            self.phase = self.resume;
        }
        Ok(())
    }
}

/// Largest serialized FMU state accepted from an FMU (its SerializedFMUstateSize).
pub const MAX_SERIALIZED_STATE: usize = 1 << 30;

impl Local {
    /// Whether the FMU declares canSerializeFMUstate for its interface and the binary
    /// exports the functions it needs (Get/Set/FreeFMUstate, SerializedFMUstateSize,
    /// SerializeFMUstate, DeSerializeFMUstate); if not, why not.
    pub fn serializable(&self) -> Result<(), String> {
        let caps = self.archive.description.capabilities(self.interface);
        let (flag, ser) = match &self.api {
            Api::Fmi2(b) => (
                "canSerializeFMUstate",
                b.fmi2SerializedFMUstateSize.is_ok()
                    && b.fmi2SerializeFMUstate.is_ok()
                    && b.fmi2DeSerializeFMUstate.is_ok(),
            ),
            Api::Fmi3(b) => (
                "canSerializeFMUState",
                b.fmi3SerializedFMUStateSize.is_ok()
                    && b.fmi3SerializeFMUState.is_ok()
                    && b.fmi3DeserializeFMUState.is_ok(),
            ),
        };
        if !caps.can_serialize_state {
            return Err(format!("{} does not declare {flag}=\"true\", so its state cannot be saved", self.label));
        }
        if !(self.state_fns && ser) {
            return Err(format!(
                "{} declares {flag} but its binary does not export the FMU state functions",
                self.label
            ));
        }
        Ok(())
    }

    /// The instance's state as bytes: GetFMUstate into a state of its own (the rollback slot
    /// of `Local::save_state` is left alone), SerializedFMUstateSize, SerializeFMUstate,
    /// FreeFMUstate.
    pub fn serialize_state(&mut self) -> Result<Vec<u8>, FmiError> {
        let names = match self.version {
            FmiVersion::V2 => ["fmi2GetFMUstate", "fmi2SerializedFMUstateSize", "fmi2SerializeFMUstate"],
            FmiVersion::V3 => ["fmi3GetFMUState", "fmi3SerializedFMUStateSize", "fmi3SerializeFMUState"],
        };
        self.usable(names[0])?;
        self.serializable().map_err(|m| self.error(names[2], m))?;
        let mut state: Handle = std::ptr::null_mut();
        // SAFETY: a live instance handle, a NULL state (the FMU allocates a new one) and a
        // valid out-pointer; the functions were checked to resolve (`serializable`).
        let s = match &self.api {
            Api::Fmi2(b) => unsafe { b.fmi2GetFMUstate(self.raw, &mut state) },
            Api::Fmi3(b) => unsafe { b.fmi3GetFMUState(self.raw, &mut state) },
        };
        self.check(names[0], s)?;
        let r = self.serialize_into(state, names);
        // SAFETY: the state this instance just returned, freed once.
        let _ = match &self.api {
            Api::Fmi2(b) => unsafe { b.fmi2FreeFMUstate(self.raw, &mut state) },
            Api::Fmi3(b) => unsafe { b.fmi3FreeFMUState(self.raw, &mut state) },
        };
        r
    }

    fn serialize_into(&mut self, state: Handle, names: [&'static str; 3]) -> Result<Vec<u8>, FmiError> {
        let mut size = 0usize;
        // SAFETY: a live instance, a state it returned, a valid out-pointer.
        let s = match &self.api {
            Api::Fmi2(b) => unsafe { b.fmi2SerializedFMUstateSize(self.raw, state, &mut size) },
            Api::Fmi3(b) => unsafe { b.fmi3SerializedFMUStateSize(self.raw, state, &mut size) },
        };
        self.check(names[1], s)?;
        if size > MAX_SERIALIZED_STATE {
            return Err(self.error(names[1], format!("a state of {size} bytes is more than {MAX_SERIALIZED_STATE}")));
        }
        let mut bytes = vec![0u8; size];
        // SAFETY: a buffer of exactly `size` bytes, as the FMU asked for.
        let s = match &self.api {
            Api::Fmi2(b) => unsafe { b.fmi2SerializeFMUstate(self.raw, state, bytes.as_mut_ptr().cast(), size) },
            Api::Fmi3(b) => unsafe { b.fmi3SerializeFMUState(self.raw, state, bytes.as_mut_ptr(), size) },
        };
        self.check(names[2], s)?;
        Ok(bytes)
    }

    /// Return the instance to the state `bytes` hold (from [`serialize_state`](Self::serialize_state)
    /// of an instance of the same FMU): DeSerializeFMUstate, SetFMUstate, FreeFMUstate. The
    /// FMU checks the bytes (FMI leaves that to it).
    pub fn deserialize_state(&mut self, bytes: &[u8]) -> Result<(), FmiError> {
        let names = match self.version {
            FmiVersion::V2 => ["fmi2DeSerializeFMUstate", "fmi2SetFMUstate"],
            FmiVersion::V3 => ["fmi3DeserializeFMUState", "fmi3SetFMUState"],
        };
        self.usable(names[0])?;
        self.serializable().map_err(|m| self.error(names[0], m))?;
        let mut state: Handle = std::ptr::null_mut();
        // SAFETY: a live instance, a buffer of `bytes.len()` bytes valid for the call, and a
        // valid out-pointer for the new state.
        let s = match &self.api {
            Api::Fmi2(b) => unsafe {
                b.fmi2DeSerializeFMUstate(self.raw, bytes.as_ptr().cast(), bytes.len(), &mut state)
            },
            Api::Fmi3(b) => unsafe { b.fmi3DeserializeFMUState(self.raw, bytes.as_ptr(), bytes.len(), &mut state) },
        };
        self.check(names[0], s)?;
        if state.is_null() {
            return Err(self.error(names[0], "returned OK but no state"));
        }
        // SAFETY: a live instance and the state it just returned.
        let s = match &self.api {
            Api::Fmi2(b) => unsafe { b.fmi2SetFMUstate(self.raw, state) },
            Api::Fmi3(b) => unsafe { b.fmi3SetFMUState(self.raw, state) },
        };
        let set = self.check(names[1], s);
        // SAFETY: that state, freed once.
        let _ = match &self.api {
            Api::Fmi2(b) => unsafe { b.fmi2FreeFMUstate(self.raw, &mut state) },
            Api::Fmi3(b) => unsafe { b.fmi3FreeFMUState(self.raw, &mut state) },
        };
        set
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        if self.state_fns && !self.saved.is_null() && self.phase == Phase::Initialized {
            let mut saved = self.saved;
            // SAFETY: a live instance handle and a state it returned, freed once, before
            // FreeInstance.
            let _ = match &self.api {
                Api::Fmi2(b) => unsafe { b.fmi2FreeFMUstate(self.raw, &mut saved) },
                Api::Fmi3(b) => unsafe { b.fmi3FreeFMUState(self.raw, &mut saved) },
            };
            self.saved = std::ptr::null_mut();
        }
        if self.phase == Phase::Initialized {
            // SAFETY: a live instance handle; the status does not matter any more.
            let _ = match &self.api {
                Api::Fmi2(b) => unsafe { b.fmi2Terminate(self.raw) },
                Api::Fmi3(b) => unsafe { b.fmi3Terminate(self.raw) },
            };
        }
        // SAFETY: the handle came from instantiate and is freed exactly once; the library
        // (dropped with `api`, after this) is still loaded.
        match &self.api {
            Api::Fmi2(b) => unsafe { b.fmi2FreeInstance(self.raw) },
            Api::Fmi3(b) => unsafe { b.fmi3FreeInstance(self.raw) },
        }
        if let Some(k) = self.once.take() {
            let mut live = ONCE_PER_PROCESS.lock().unwrap_or_else(|e| e.into_inner());
            live.retain(|(key, _)| *key != k);
        }
    }
}

/// The names of the variables of `md` with value references `vrs`, at most 8 (for messages).
pub(crate) fn names_of(md: &crate::ModelDescription, vrs: &[u32]) -> String {
    let mut names: Vec<String> = vrs
        .iter()
        .take(8)
        .map(|&vr| md.variable_with_vr(vr).map_or_else(|| format!("vr {vr}"), |v| format!("'{}'", v.name)))
        .collect();
    if vrs.len() > 8 {
        names.push(format!("and {} more", vrs.len() - 8));
    }
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a port or connection may set: whole numbers in range (the 64-bit bounds
    /// included), Boolean 0/1 only, any number for the float types.
    #[test]
    fn carries_values_of_the_type_only() {
        assert!(carries(VarType::Int16, 32767.0) && !carries(VarType::Int16, 32768.0));
        assert!(carries(VarType::Int16, -32768.0) && !carries(VarType::Int16, 2.5));
        assert!(carries(VarType::UInt8, 0.0) && !carries(VarType::UInt8, -1.0));
        assert!(carries(VarType::Int64, -(2f64.powi(63))) && !carries(VarType::Int64, 2f64.powi(63)));
        assert!(carries(VarType::UInt64, 2f64.powi(63)) && !carries(VarType::UInt64, 2f64.powi(64)));
        assert!(!carries(VarType::Int32, f64::NAN) && !carries(VarType::Int32, f64::INFINITY));
        assert!(carries(VarType::Boolean, 1.0) && carries(VarType::Boolean, 0.0) && !carries(VarType::Boolean, 3.0));
        assert!(carries(VarType::Float64, 2.5) && carries(VarType::Float32, -1e30));
        assert!(carries_rule(VarType::Int16).contains("from -32768 to 32767"));
    }
}
