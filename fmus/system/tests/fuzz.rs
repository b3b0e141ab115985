//! FMI 2.0 and 3.0 call sequences into an exported system (the generic system binary), in the manner
//! of stiction-fmus's harness (fmus/export/tests/host_fuzz): seeded random sequences of
//! instantiate (right and wrong tokens), setup, initialization, get/set with random value
//! references, counts and values (NaN, ±∞, 1e300), doStep with random times and steps (a
//! whole number of solver steps, 1.5 steps, 0, negative, NaN, 1e300), FMU states (got, serialized, bit-flipped,
//! read back, set and freed; made-up handles and garbage bytes), reset, terminate and free, on two instances at once.
//!
//! The binary must never crash, answer a call in more than [`SLOW`], leak an object, answer
//! OK where the standard or the FMU's contract demands an error, or answer the same
//! sequence differently.
//!
//! `cargo test --release -p stiction-fmu-system --test fuzz` (env `STICTION_FUZZ_SEQUENCES`,
//! default 2000, and `STICTION_FUZZ_SEED`).
#![allow(unsafe_code)]

use libloading::Library;
use std::ffi::{c_char, c_int, c_void, CString};
use std::path::{Path, PathBuf};
use std::ptr::null_mut;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use stiction::fmi_import::Archive;

const SLOW: Duration = Duration::from_secs(2);
const OK: c_int = 0;

type Handle = *mut c_void;
type Logger = unsafe extern "C" fn(*mut c_void, *const c_char, c_int, *const c_char, *const c_char);

#[repr(C)]
struct Callbacks {
    logger: Option<Logger>,
    allocate_memory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    free_memory: Option<unsafe extern "C" fn(*mut c_void)>,
    step_finished: Option<unsafe extern "C" fn(*mut c_void, c_int)>,
    component_environment: *mut c_void,
}
// SAFETY: function pointers and a NULL pointer, never written.
unsafe impl Sync for Callbacks {}

extern "C" {
    fn calloc(n: usize, size: usize) -> *mut c_void;
    fn free(p: *mut c_void);
}

/// fmi2CallbackLogger without its variadic tail (the FMU passes no format arguments: its
/// messages have `%` escaped).
unsafe extern "C" fn logger(_: *mut c_void, _: *const c_char, _: c_int, _: *const c_char, _: *const c_char) {}

static CALLBACKS: Callbacks = Callbacks {
    logger: Some(logger),
    allocate_memory: Some(calloc),
    free_memory: Some(free),
    step_finished: None,
    component_environment: null_mut(),
};

#[allow(non_snake_case)]
struct Api {
    fmi2Instantiate: unsafe extern "C" fn(
        *const c_char,
        c_int,
        *const c_char,
        *const c_char,
        *const Callbacks,
        c_int,
        c_int,
    ) -> Handle,
    fmi2FreeInstance: unsafe extern "C" fn(Handle),
    fmi2SetupExperiment: unsafe extern "C" fn(Handle, c_int, f64, f64, c_int, f64) -> c_int,
    fmi2EnterInitializationMode: unsafe extern "C" fn(Handle) -> c_int,
    fmi2ExitInitializationMode: unsafe extern "C" fn(Handle) -> c_int,
    fmi2Terminate: unsafe extern "C" fn(Handle) -> c_int,
    fmi2Reset: unsafe extern "C" fn(Handle) -> c_int,
    fmi2GetReal: unsafe extern "C" fn(Handle, *const u32, usize, *mut f64) -> c_int,
    fmi2SetReal: unsafe extern "C" fn(Handle, *const u32, usize, *const f64) -> c_int,
    fmi2DoStep: unsafe extern "C" fn(Handle, f64, f64, c_int) -> c_int,
    fmi2GetFMUstate: unsafe extern "C" fn(Handle, *mut Handle) -> c_int,
    fmi2SetFMUstate: unsafe extern "C" fn(Handle, Handle) -> c_int,
    fmi2FreeFMUstate: unsafe extern "C" fn(Handle, *mut Handle) -> c_int,
    fmi2DeSerializeFMUstate: unsafe extern "C" fn(Handle, *const u8, usize, *mut Handle) -> c_int,
    fmi2SerializedFMUstateSize: unsafe extern "C" fn(Handle, Handle, *mut usize) -> c_int,
    fmi2SerializeFMUstate: unsafe extern "C" fn(Handle, Handle, *mut u8, usize) -> c_int,
    live: unsafe extern "C" fn() -> isize,
    v3: Api3,
}

/// The FMI 3.0 functions whose shape differs from FMI 2.0's, and the others by their FMI 3.0 name.
#[allow(non_snake_case)]
struct Api3 {
    fmi3InstantiateCoSimulation: unsafe extern "C" fn(
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
        Option<Logger3>,
        *mut c_void,
    ) -> Handle,
    fmi3FreeInstance: unsafe extern "C" fn(Handle),
    fmi3EnterInitializationMode: unsafe extern "C" fn(Handle, bool, f64, f64, bool, f64) -> c_int,
    fmi3ExitInitializationMode: unsafe extern "C" fn(Handle) -> c_int,
    fmi3Terminate: unsafe extern "C" fn(Handle) -> c_int,
    fmi3Reset: unsafe extern "C" fn(Handle) -> c_int,
    fmi3GetFloat64: unsafe extern "C" fn(Handle, *const u32, usize, *mut f64, usize) -> c_int,
    fmi3SetFloat64: unsafe extern "C" fn(Handle, *const u32, usize, *const f64, usize) -> c_int,
    fmi3DoStep: unsafe extern "C" fn(Handle, f64, f64, bool, *mut bool, *mut bool, *mut bool, *mut f64) -> c_int,
    fmi3GetFMUState: unsafe extern "C" fn(Handle, *mut Handle) -> c_int,
    fmi3SetFMUState: unsafe extern "C" fn(Handle, Handle) -> c_int,
    fmi3FreeFMUState: unsafe extern "C" fn(Handle, *mut Handle) -> c_int,
    fmi3DeserializeFMUState: unsafe extern "C" fn(Handle, *const u8, usize, *mut Handle) -> c_int,
    fmi3SerializedFMUStateSize: unsafe extern "C" fn(Handle, Handle, *mut usize) -> c_int,
    fmi3SerializeFMUState: unsafe extern "C" fn(Handle, Handle, *mut u8, usize) -> c_int,
}

/// fmi3LogMessageCallback.
type Logger3 = unsafe extern "C" fn(*mut c_void, c_int, *const c_char, *const c_char);

unsafe extern "C" fn logger3(_: *mut c_void, _: c_int, _: *const c_char, _: *const c_char) {}

/// The exported pi_gear_hold system (input w_ref, outputs q, v, u, mode; T = 1e-3 s),
/// unpacked, its binary loaded once for the test process.
struct Fmu {
    api: Api,
    uri: String,
    token: String,
    _lib: Library,
    _archive: Archive,
}

fn fmu() -> &'static Fmu {
    static F: OnceLock<Fmu> = OnceLock::new();
    F.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let dir = std::env::temp_dir().join(format!("stiction-system-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("pi.fmu");
        let (_, token) = stiction::fmu_system::export_system(
            &root.join("examples/pi_gear_hold.json"),
            2,
            &[],
            stiction::fmu_system::find_library,
            &out,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let archive = Archive::open(&out, "pi.fmu").unwrap_or_else(|e| panic!("{e}"));
        let _ = std::fs::remove_dir_all(&dir);
        let binary: PathBuf =
            archive.binary(stiction::fmi_import::Interface::CoSimulation).unwrap_or_else(|e| panic!("{e}"));
        let uri = format!("file://{}", archive.resources().display());
        // SAFETY: the FMU binary this crate builds; its constructor installs the resolver.
        let lib = unsafe { Library::new(&binary) }.unwrap_or_else(|e| panic!("{e}"));
        // SAFETY: the signatures of fmi2Functions.h (and the live-object counter).
        let api = unsafe {
            Api {
                fmi2Instantiate: *lib.get(b"fmi2Instantiate\0").unwrap(),
                fmi2FreeInstance: *lib.get(b"fmi2FreeInstance\0").unwrap(),
                fmi2SetupExperiment: *lib.get(b"fmi2SetupExperiment\0").unwrap(),
                fmi2EnterInitializationMode: *lib.get(b"fmi2EnterInitializationMode\0").unwrap(),
                fmi2ExitInitializationMode: *lib.get(b"fmi2ExitInitializationMode\0").unwrap(),
                fmi2Terminate: *lib.get(b"fmi2Terminate\0").unwrap(),
                fmi2Reset: *lib.get(b"fmi2Reset\0").unwrap(),
                fmi2GetReal: *lib.get(b"fmi2GetReal\0").unwrap(),
                fmi2SetReal: *lib.get(b"fmi2SetReal\0").unwrap(),
                fmi2DoStep: *lib.get(b"fmi2DoStep\0").unwrap(),
                fmi2GetFMUstate: *lib.get(b"fmi2GetFMUstate\0").unwrap(),
                fmi2SetFMUstate: *lib.get(b"fmi2SetFMUstate\0").unwrap(),
                fmi2FreeFMUstate: *lib.get(b"fmi2FreeFMUstate\0").unwrap(),
                fmi2DeSerializeFMUstate: *lib.get(b"fmi2DeSerializeFMUstate\0").unwrap(),
                fmi2SerializedFMUstateSize: *lib.get(b"fmi2SerializedFMUstateSize\0").unwrap(),
                fmi2SerializeFMUstate: *lib.get(b"fmi2SerializeFMUstate\0").unwrap(),
                live: *lib.get(b"stiction_fmu_live_objects\0").unwrap(),
                v3: Api3 {
                    fmi3InstantiateCoSimulation: *lib.get(b"fmi3InstantiateCoSimulation\0").unwrap(),
                    fmi3FreeInstance: *lib.get(b"fmi3FreeInstance\0").unwrap(),
                    fmi3EnterInitializationMode: *lib.get(b"fmi3EnterInitializationMode\0").unwrap(),
                    fmi3ExitInitializationMode: *lib.get(b"fmi3ExitInitializationMode\0").unwrap(),
                    fmi3Terminate: *lib.get(b"fmi3Terminate\0").unwrap(),
                    fmi3Reset: *lib.get(b"fmi3Reset\0").unwrap(),
                    fmi3GetFloat64: *lib.get(b"fmi3GetFloat64\0").unwrap(),
                    fmi3SetFloat64: *lib.get(b"fmi3SetFloat64\0").unwrap(),
                    fmi3DoStep: *lib.get(b"fmi3DoStep\0").unwrap(),
                    fmi3GetFMUState: *lib.get(b"fmi3GetFMUState\0").unwrap(),
                    fmi3SetFMUState: *lib.get(b"fmi3SetFMUState\0").unwrap(),
                    fmi3FreeFMUState: *lib.get(b"fmi3FreeFMUState\0").unwrap(),
                    fmi3DeserializeFMUState: *lib.get(b"fmi3DeserializeFMUState\0").unwrap(),
                    fmi3SerializedFMUStateSize: *lib.get(b"fmi3SerializedFMUStateSize\0").unwrap(),
                    fmi3SerializeFMUState: *lib.get(b"fmi3SerializeFMUState\0").unwrap(),
                },
            }
        };
        Fmu { api, uri, token, _lib: lib, _archive: archive }
    })
}

/// One slot: a live handle and its time.
#[derive(Clone, Copy)]
struct Slot {
    c: Handle,
    /// Instantiated through FMI 3.0 (else 2.0).
    v3: bool,
    time: f64,
    stepping: bool,
}

/// A step size, and whether the FMU takes it: a positive finite step within the budget (a
/// whole number of solver steps or not), or something it must refuse.
fn step(rng: &mut fastrand::Rng) -> (f64, bool) {
    match rng.u8(..12) {
        0..=2 => (1e-3, true),
        3..=4 => (1e-2, true),
        5 => (0.25, true),
        6 => (5e-3, true),
        // Between two grid points: reached with a shortened last step.
        7 => (1.5e-3, true),
        8 => (0.0, false),
        9 => (-1e-3, false),
        10 => (f64::NAN, false),
        _ => (1e300, false),
    }
}

fn number(rng: &mut fastrand::Rng) -> f64 {
    match rng.u8(..6) {
        0 => f64::NAN,
        1 => f64::INFINITY,
        2 => 1e300,
        _ => rng.f64() * 4.0 - 2.0,
    }
}

/// doSteps answered OK (the campaign must reach step mode, not only refusals).
static STEPPED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Run one sequence of `n` calls from `seed`; the statuses.
fn sequence(seed: u64, n: usize) -> Vec<c_int> {
    let Fmu { api, uri, token, .. } = fmu();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut slots: [Option<Slot>; 2] = [None, None];
    let mut statuses = Vec::new();
    let (c_uri, c_token, c_bad) = (
        CString::new(uri.as_str()).unwrap(),
        CString::new(token.as_str()).unwrap(),
        CString::new("{00000000-0000-0000-0000-000000000000}").unwrap(),
    );
    for _ in 0..n {
        let s = rng.usize(..2);
        let started = Instant::now();
        // (status, whether it must not be OK)
        let (status, must_fail): (c_int, bool) = match (slots[s], rng.u8(..16)) {
            (None, k) => {
                let good = k != 0;
                let name = CString::new(format!("fuzz{s}")).unwrap();
                let v3 = rng.bool();
                let tok = if good { c_token.as_ptr() } else { c_bad.as_ptr() };
                // SAFETY: valid strings, static callbacks, no required intermediate variables.
                let c = if v3 {
                    let path = CString::new(uri.trim_start_matches("file://")).unwrap();
                    unsafe {
                        (api.v3.fmi3InstantiateCoSimulation)(
                            name.as_ptr(),
                            tok,
                            path.as_ptr(),
                            false,
                            false,
                            false,
                            false,
                            null_mut(),
                            0,
                            null_mut(),
                            Some(logger3),
                            null_mut(),
                        )
                    }
                } else {
                    // SAFETY: as above.
                    unsafe { (api.fmi2Instantiate)(name.as_ptr(), 1, tok, c_uri.as_ptr(), &CALLBACKS, 0, 0) }
                };
                assert_eq!(c.is_null(), !good, "instantiate with a {} token", if good { "right" } else { "wrong" });
                if good {
                    slots[s] = Some(Slot { c, v3, time: 0.0, stepping: false });
                }
                (if c.is_null() { 3 } else { OK }, false)
            }
            (Some(sl), 0) => {
                // SAFETY: a live handle, dropped from the slot.
                unsafe {
                    if sl.v3 {
                        (api.v3.fmi3FreeInstance)(sl.c)
                    } else {
                        (api.fmi2FreeInstance)(sl.c)
                    }
                };
                slots[s] = None;
                (OK, false)
            }
            (Some(sl), 1) => {
                let t0 = if rng.bool() { 0.0 } else { number(&mut rng) };
                // SAFETY: a live handle.
                let st = unsafe {
                    if sl.v3 {
                        // FMI 3.0 sets the start time on entering initialization mode.
                        (api.v3.fmi3EnterInitializationMode)(sl.c, false, 0.0, t0, false, 0.0)
                    } else {
                        (api.fmi2SetupExperiment)(sl.c, 0, 0.0, t0, 0, 0.0)
                    }
                };
                (st, !t0.is_finite())
            }
            (Some(sl), 2 | 14) => {
                // SAFETY: a live handle.
                let (a, b) = unsafe {
                    if sl.v3 {
                        let a = (api.v3.fmi3EnterInitializationMode)(sl.c, false, 0.0, 0.0, false, 0.0);
                        (a, (api.v3.fmi3ExitInitializationMode)(sl.c))
                    } else {
                        ((api.fmi2EnterInitializationMode)(sl.c), (api.fmi2ExitInitializationMode)(sl.c))
                    }
                };
                if b == OK {
                    slots[s] = Some(Slot { stepping: true, ..sl });
                }
                (a.max(b), false)
            }
            (Some(sl), 3..=7) => {
                let (h, whole) = step(&mut rng);
                let at = if rng.u8(..4) == 0 { sl.time + 0.5 } else { sl.time };
                // SAFETY: a live handle.
                let st = unsafe {
                    if sl.v3 {
                        let (mut event, mut terminate, mut early, mut last) = (false, false, false, 0.0);
                        (api.v3.fmi3DoStep)(sl.c, at, h, true, &mut event, &mut terminate, &mut early, &mut last)
                    } else {
                        (api.fmi2DoStep)(sl.c, at, h, 1)
                    }
                };
                if st == OK {
                    STEPPED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    slots[s] = Some(Slot { time: sl.time + h, ..sl });
                } else if sl.stepping && whole && at == sl.time {
                    // A failed step leaves the instance failed: only reset helps.
                    slots[s] = Some(Slot { stepping: false, ..sl });
                }
                (st, !whole || at != sl.time || !sl.stepping)
            }
            (Some(sl), 8 | 9) => {
                let m = rng.usize(..4);
                let vrs: Vec<u32> = (0..m).map(|_| rng.u32(..8)).collect();
                let mut out = vec![0.0; m];
                // SAFETY: arrays of m elements.
                let st = unsafe {
                    if sl.v3 {
                        (api.v3.fmi3GetFloat64)(sl.c, vrs.as_ptr(), m, out.as_mut_ptr(), m)
                    } else {
                        (api.fmi2GetReal)(sl.c, vrs.as_ptr(), m, out.as_mut_ptr())
                    }
                };
                (st, vrs.iter().any(|&v| v > 5))
            }
            (Some(sl), 10 | 11) => {
                let vr = rng.u32(..8);
                let x = number(&mut rng);
                // SAFETY: one value reference and one value.
                let st = unsafe {
                    if sl.v3 {
                        (api.v3.fmi3SetFloat64)(sl.c, &vr, 1, &x, 1)
                    } else {
                        (api.fmi2SetReal)(sl.c, &vr, 1, &x)
                    }
                };
                // Only the input w_ref (vr 1) may be set, with a finite value.
                (st, vr != 1 || !x.is_finite())
            }
            (Some(sl), 12) => {
                let (get_state, set_state, free_state, deserialize, size_of, serialize) = if sl.v3 {
                    let a = &api.v3;
                    (
                        a.fmi3GetFMUState,
                        a.fmi3SetFMUState,
                        a.fmi3FreeFMUState,
                        a.fmi3DeserializeFMUState,
                        a.fmi3SerializedFMUStateSize,
                        a.fmi3SerializeFMUState,
                    )
                } else {
                    (
                        api.fmi2GetFMUstate,
                        api.fmi2SetFMUstate,
                        api.fmi2FreeFMUstate,
                        api.fmi2DeSerializeFMUstate,
                        api.fmi2SerializedFMUstateSize,
                        api.fmi2SerializeFMUstate,
                    )
                };
                let mut state: Handle = null_mut();
                // SAFETY: a live handle and a pointer to a NULL state.
                let st = unsafe { get_state(sl.c, &mut state) };
                assert_eq!(st == OK, !state.is_null(), "GetFMUstate: status {st} and state {state:p}");
                if st == OK {
                    // Serialized, corrupted or not, read back, set, freed.
                    let mut size = 0usize;
                    // SAFETY: a state of this instance; buffers of the stated sizes.
                    unsafe {
                        assert_eq!(size_of(sl.c, state, &mut size), OK);
                        let mut bytes = vec![0u8; size];
                        assert_eq!(serialize(sl.c, state, bytes.as_mut_ptr(), size), OK);
                        // Whole, one bit flipped, cut or extended (the seal refuses the last three).
                        let (whole, original) = (bytes.len(), bytes.clone());
                        match rng.u8(..4) {
                            0 if whole > 0 => {
                                let k = rng.usize(..whole);
                                bytes[k] ^= 1 << rng.u8(..8);
                            }
                            1 => bytes.truncate(rng.usize(..whole.max(1))),
                            2 => bytes.push(rng.u8(..)),
                            _ => {}
                        }
                        let mut back: Handle = null_mut();
                        let d = deserialize(sl.c, bytes.as_ptr(), bytes.len(), &mut back);
                        assert_eq!(d == OK, !back.is_null());
                        let tampered = bytes != original;
                        assert!(!(tampered && d == OK), "a tampered state of {} bytes was read", bytes.len());
                        let set = set_state(sl.c, if d == OK { back } else { state });
                        assert!((0..=4).contains(&set));
                        if set != OK {
                            // A refused state (a flipped bit the checks caught) may leave the
                            // simulation gone: whether a step then succeeds is not asserted.
                            slots[s] = Some(Slot { stepping: true, ..sl });
                        }
                        assert_eq!(free_state(sl.c, &mut back), OK);
                        assert_eq!(free_state(sl.c, &mut state), OK);
                        assert!(state.is_null() && back.is_null());
                    }
                }
                // SAFETY: a made-up state handle, which the binary must not trust.
                let st2 = unsafe { set_state(sl.c, 0x1000 as Handle) };
                let bytes = vec![rng.u8(..); rng.usize(..200)];
                let mut junk: Handle = null_mut();
                // SAFETY: `bytes.len()` readable bytes.
                let st4 = unsafe { deserialize(sl.c, bytes.as_ptr(), bytes.len(), &mut junk) };
                assert!(junk.is_null(), "garbage deserialized into a state");
                assert!(st2 != OK && st4 != OK, "a made-up state or garbage answered OK");
                (st, false)
            }
            (Some(sl), 13) => {
                // SAFETY: a live handle.
                let st = unsafe {
                    if sl.v3 {
                        (api.v3.fmi3Reset)(sl.c)
                    } else {
                        (api.fmi2Reset)(sl.c)
                    }
                };
                slots[s] = Some(Slot { time: 0.0, stepping: false, ..sl });
                (st, false)
            }
            (Some(sl), _) => {
                // SAFETY: a live handle.
                let st = unsafe {
                    if sl.v3 {
                        (api.v3.fmi3Terminate)(sl.c)
                    } else {
                        (api.fmi2Terminate)(sl.c)
                    }
                };
                slots[s] = Some(Slot { stepping: false, ..sl });
                (st, false)
            }
        };
        assert!((0..=4).contains(&status), "status {status}");
        assert!(!(must_fail && status == OK), "seed {seed}: a call that must fail answered OK");
        assert!(started.elapsed() < SLOW, "seed {seed}: a call took {:?}", started.elapsed());
        statuses.push(status);
    }
    for sl in slots.into_iter().flatten() {
        // SAFETY: live handles.
        unsafe {
            if sl.v3 {
                (api.v3.fmi3FreeInstance)(sl.c)
            } else {
                (api.fmi2FreeInstance)(sl.c)
            }
        };
    }
    statuses
}

/// The tests share the binary's live-object count: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn fmi_call_sequences_into_a_system_fmu() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let api = &fmu().api;
    let count: u64 = std::env::var("STICTION_FUZZ_SEQUENCES").ok().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let seed: u64 = std::env::var("STICTION_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(31);
    // SAFETY: the counter takes no arguments.
    let base = unsafe { (api.live)() };
    let started = Instant::now();
    for k in 0..count {
        let a = sequence(seed + k, 60);
        // SAFETY: as above.
        assert_eq!(unsafe { (api.live)() }, base, "objects leaked (seed {})", seed + k);
        if k % 8 == 0 {
            assert_eq!(a, sequence(seed + k, 60), "seed {}: another answer the second time", seed + k);
        }
    }
    let stepped = STEPPED.load(std::sync::atomic::Ordering::Relaxed);
    eprintln!(
        "system FMU fuzz: {count} sequences of 60 calls in {:.1} s, {stepped} doSteps answered OK",
        started.elapsed().as_secs_f64()
    );
    assert!(stepped > count, "the sequences rarely reach step mode: {stepped} doSteps in {count} sequences");
}

/// A step from an instance that is stepping, then the same from a reset one: the outputs
/// after a reset start again from the start values (the simulation is rebuilt).
#[test]
fn reset_starts_the_simulation_again() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let Fmu { api, uri, token, .. } = fmu();
    let (name, uri, token) =
        (CString::new("reset").unwrap(), CString::new(uri.as_str()).unwrap(), CString::new(token.as_str()).unwrap());
    // SAFETY: valid strings, static callbacks; arrays of the stated lengths.
    unsafe {
        let c = (api.fmi2Instantiate)(name.as_ptr(), 1, token.as_ptr(), uri.as_ptr(), &CALLBACKS, 0, 0);
        assert!(!c.is_null());
        let run = || {
            assert_eq!((api.fmi2SetupExperiment)(c, 0, 0.0, 0.0, 0, 0.0), OK);
            assert_eq!((api.fmi2EnterInitializationMode)(c), OK);
            assert_eq!((api.fmi2ExitInitializationMode)(c), OK);
            let mut t = 0.0;
            for _ in 0..10 {
                assert_eq!((api.fmi2DoStep)(c, t, 0.01, 1), OK);
                t += 0.01;
            }
            let mut q = [0.0; 2];
            assert_eq!((api.fmi2GetReal)(c, [2u32, 3].as_ptr(), 2, q.as_mut_ptr()), OK);
            q
        };
        let first = run();
        assert_eq!((api.fmi2Reset)(c), OK);
        let second = run();
        assert_eq!(first.map(f64::to_bits), second.map(f64::to_bits));
        assert!(first[0] > 0.0, "the gear did not turn: {first:?}");
        (api.fmi2FreeInstance)(c);
    }
}

/// A master that adds its steps (t += h, as OMSimulator does) reaches the grid points k·T
/// within rounding: each of its steps ends at the grid point it names, and the residue step
/// such a master takes to its stop time (here 1.1e-16 s) is no step at all. The outputs are
/// those of steps given on the exact grid, bit for bit; an end between two solver steps is
/// reached with a shortened last step.
#[test]
fn communication_points_are_counted_from_absolute_time() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let Fmu { api, uri, token, .. } = fmu();
    let (name, uri, token) =
        (CString::new("grid").unwrap(), CString::new(uri.as_str()).unwrap(), CString::new(token.as_str()).unwrap());
    // SAFETY: valid strings, static callbacks; arrays of the stated lengths.
    unsafe {
        let c = (api.fmi2Instantiate)(name.as_ptr(), 1, token.as_ptr(), uri.as_ptr(), &CALLBACKS, 0, 0);
        assert!(!c.is_null());
        let start = || {
            assert_eq!((api.fmi2SetupExperiment)(c, 0, 0.0, 0.0, 0, 0.0), OK);
            assert_eq!((api.fmi2EnterInitializationMode)(c), OK);
            assert_eq!((api.fmi2ExitInitializationMode)(c), OK);
        };
        let outputs = || {
            let mut q = [0.0; 2];
            assert_eq!((api.fmi2GetReal)(c, [2u32, 3].as_ptr(), 2, q.as_mut_ptr()), OK);
            q
        };
        // Added: 0.1 ten times is 0.9999999999999999, then the residue to 1.
        start();
        let mut t = 0.0;
        for _ in 0..10 {
            assert_eq!((api.fmi2DoStep)(c, t, 0.1, 1), OK, "t = {t}");
            t += 0.1;
        }
        assert!(t != 1.0 && (1.0 - t) < 1e-15);
        assert_eq!((api.fmi2DoStep)(c, t, 1.0 - t, 1), OK, "the residue step {} s", 1.0 - t);
        let added = outputs();
        // On the exact grid.
        assert_eq!((api.fmi2Reset)(c), OK);
        start();
        for k in 0..10 {
            assert_eq!((api.fmi2DoStep)(c, k as f64 / 10.0, 0.1, 1), OK);
        }
        let exact = outputs();
        assert_eq!(added.map(f64::to_bits), exact.map(f64::to_bits));
        assert!(exact[0] > 0.0, "the gear did not turn: {exact:?}");
        // Half a solver step past the grid: reached with a shortened last step, then the grid
        // goes on from there.
        assert_eq!((api.fmi2DoStep)(c, 1.0, 1.5e-3, 1), OK);
        assert_eq!((api.fmi2DoStep)(c, 1.0015, 1e-3, 1), OK);
        (api.fmi2FreeInstance)(c);
    }
}
