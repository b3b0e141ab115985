//! Helpers shared by the FMI 2.0 and FMI 3.0 C entry points: handle validation, panic
//! containment and conversion of C arrays. This module and `fmi2.rs`/`fmi3.rs` hold all of
//! the crate's `unsafe` code.
#![allow(unsafe_code)]

use crate::instance::{Instance, Snapshot, Status};
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

/// What a handle handed to a host points to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Instance,
    State,
}

/// Addresses and kinds of the live instances and FMU states handed to hosts, so a stale,
/// foreign or NULL handle — or an instance passed as an FMU state and vice versa — is
/// answered with an error instead of undefined behaviour.
static HANDLES: Mutex<Option<HashMap<usize, Kind>>> = Mutex::new(None);

pub fn register(p: *mut c_void, kind: Kind) {
    if let Ok(mut h) = HANDLES.lock() {
        h.get_or_insert_with(HashMap::new).insert(p as usize, kind);
    }
}

/// Forget a handle of this kind; false if `p` is not a live handle of that kind.
pub fn unregister(p: *mut c_void, kind: Kind) -> bool {
    let Ok(mut h) = HANDLES.lock() else { return false };
    let map = h.get_or_insert_with(HashMap::new);
    if map.get(&(p as usize)) == Some(&kind) {
        map.remove(&(p as usize));
        true
    } else {
        false
    }
}

pub fn is_live(p: *const c_void, kind: Kind) -> bool {
    !p.is_null()
        && HANDLES.lock().map(|h| h.as_ref().and_then(|m| m.get(&(p as usize))) == Some(&kind)).unwrap_or(false)
}

/// Run `f` on the instance behind `c`. An unknown handle returns Error (reported on stderr,
/// as there is no logger to use); a panic is contained and reported as Fatal.
///
/// # Safety
/// `c` must be NULL or a pointer previously returned by an instantiate function (checked).
pub unsafe fn with_instance(
    function: &'static str,
    c: *mut c_void,
    f: impl FnOnce(&mut Instance) -> Result<(), Status>,
) -> Status {
    if !is_live(c, Kind::Instance) {
        eprintln!("stiction FMU: {function} called with an invalid or freed instance handle {c:p}");
        return Status::Error;
    }
    // SAFETY: `c` is a live `Box<Instance>` created by instantiate (checked above), and the
    // FMI standard gives the host exclusive use of an instance during a call.
    let inst = unsafe { &mut *(c as *mut Instance) };
    inst.call = function;
    match catch_unwind(AssertUnwindSafe(|| f(inst))) {
        Ok(Ok(())) => Status::Ok,
        Ok(Err(s)) => s,
        Err(_) => {
            inst.log(Status::Fatal, &format!("{function}: internal panic"));
            Status::Fatal
        }
    }
}

/// A C string argument as &str.
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string.
pub unsafe fn string<'a>(p: *const c_char) -> Option<&'a str> {
    if p.is_null() {
        None
    } else {
        // SAFETY: non-NULL, NUL-terminated by the FMI contract.
        unsafe { CStr::from_ptr(p) }.to_str().ok()
    }
}

/// A C array argument as a slice; `None` for a NULL pointer with n > 0.
///
/// # Safety
/// `p` must be NULL or point to `n` readable elements.
pub unsafe fn slice<'a, T>(p: *const T, n: usize) -> Option<&'a [T]> {
    if n == 0 {
        Some(&[])
    } else if p.is_null() {
        None
    } else {
        // SAFETY: non-NULL, n elements by the FMI contract.
        Some(unsafe { std::slice::from_raw_parts(p, n) })
    }
}

/// A writable C array argument as a slice; `None` for a NULL pointer with n > 0.
///
/// # Safety
/// `p` must be NULL or point to `n` writable elements.
pub unsafe fn slice_mut<'a, T>(p: *mut T, n: usize) -> Option<&'a mut [T]> {
    if n == 0 {
        Some(&mut [])
    } else if p.is_null() {
        None
    } else {
        // SAFETY: non-NULL, n elements by the FMI contract.
        Some(unsafe { std::slice::from_raw_parts_mut(p, n) })
    }
}

/// Most values one get/set call may pass (value references, values, states, categories):
/// far more than any exported model has, small enough that nothing sized by a count
/// can exhaust memory. A larger count is refused before the arrays are touched.
pub const MAX_VALUES: usize = 1 << 16;

/// Error unless `n` ≤ [`MAX_VALUES`] (`what` names the count as the standard does).
pub fn check_count(inst: &Instance, function: &str, what: &str, n: usize) -> Result<(), Status> {
    if n <= MAX_VALUES {
        Ok(())
    } else {
        inst.log(Status::Error, &format!("{function}: {what} = {n} is more than the {MAX_VALUES} this FMU accepts"));
        Err(Status::Error)
    }
}

/// Error for a NULL array argument.
pub fn null(inst: &Instance, function: &str, what: &str) -> Status {
    inst.log(Status::Error, &format!("{function}: argument {what} is NULL"));
    Status::Error
}

/// The instance each live FMU state was made by (freed with it, as FMI 2.0 requires of
/// fmi2FreeInstance).
static OWNERS: Mutex<Option<HashMap<usize, usize>>> = Mutex::new(None);

/// Box a snapshot made by instance `owner` and register its address.
pub fn new_state(owner: &Instance, s: Snapshot) -> *mut c_void {
    let p = Box::into_raw(Box::new(s)) as *mut c_void;
    register(p, Kind::State);
    if let Ok(mut o) = OWNERS.lock() {
        o.get_or_insert_with(HashMap::new).insert(p as usize, owner as *const Instance as usize);
    }
    p
}

/// The snapshot behind a host's FMU-state handle.
///
/// # Safety
/// `p` must be NULL or a handle from [`new_state`] (checked).
pub unsafe fn state<'a>(p: *mut c_void) -> Option<&'a Snapshot> {
    if is_live(p, Kind::State) {
        // SAFETY: registered snapshots are live boxes.
        Some(unsafe { &*(p as *const Snapshot) })
    } else {
        None
    }
}

/// Free a snapshot handle; false if it was not one of ours.
///
/// # Safety
/// `p` must be NULL or a handle from [`new_state`] (checked).
pub unsafe fn free_state(p: *mut c_void) -> bool {
    if unregister(p, Kind::State) {
        if let Ok(mut o) = OWNERS.lock() {
            o.get_or_insert_with(HashMap::new).remove(&(p as usize));
        }
        // SAFETY: it was registered as a state, so it is a live snapshot box we created.
        drop(unsafe { Box::from_raw(p as *mut Snapshot) });
        true
    } else {
        false
    }
}

/// Box an instance and register its address.
pub fn new_instance(inst: Instance) -> *mut c_void {
    let p = Box::into_raw(Box::new(inst)) as *mut c_void;
    register(p, Kind::Instance);
    p
}

/// Free an instance handle (ignores unknown handles).
///
/// # Safety
/// `p` must be NULL or a handle from [`new_instance`] (checked).
pub unsafe fn free_instance(p: *mut c_void) {
    if unregister(p, Kind::Instance) {
        let owned: Vec<usize> = OWNERS
            .lock()
            .map(|o| o.as_ref().map(|m| m.iter().filter(|(_, i)| **i == p as usize).map(|(s, _)| *s).collect()))
            .ok()
            .flatten()
            .unwrap_or_default();
        for s in owned {
            // SAFETY: a registered state (checked again by free_state).
            unsafe { free_state(s as *mut c_void) };
        }
        // SAFETY: registered as an instance, so a live instance box we created.
        drop(unsafe { Box::from_raw(p as *mut Instance) });
    }
}

/// Escape a message for hosts that pass it through printf-style formatting (FMI 2.0).
pub fn c_message(msg: &str) -> std::ffi::CString {
    c_text(&msg.replace('%', "%%"))
}

/// A message as a C string, unescaped (FMI 3.0 messages are not format strings).
pub fn c_text(msg: &str) -> std::ffi::CString {
    std::ffi::CString::new(msg.replace('\0', " ")).unwrap_or_default()
}

/// Number of instances and FMU states alive in this process (for leak checks).
#[no_mangle]
pub extern "C" fn stiction_fmu_live_objects() -> isize {
    crate::instance::LIVE.load(std::sync::atomic::Ordering::SeqCst)
}

/// Store a snapshot into a host's `FMUstate*`: overwrite ours in place when `*out` is a
/// live state of this binary, else allocate a new one.
///
/// # Safety
/// `out` must be a valid, non-NULL pointer to a handle (NULL or one of ours, checked).
pub unsafe fn store_state(owner: &Instance, out: *mut *mut c_void, snap: Snapshot) {
    // SAFETY: `out` is valid by the caller's contract; a live handle is a box we created.
    unsafe {
        if is_live(*out, Kind::State) {
            *(*out as *mut Snapshot) = snap;
        } else {
            *out = new_state(owner, snap);
        }
    }
}

// ---- bodies shared by the FMI 2.0 and FMI 3.0 entry points ----
//
// `function` is the C function's name (for messages), `state_arg` the standard's name of
// the FMU-state argument ("FMUstate" in FMI 2.0, "FMUState" in FMI 3.0).

/// Typed getters: read the values as f64 and convert each with `put`.
///
/// # Safety
/// `vr` and `out` must be NULL or hold `n` elements (checked for NULL).
pub unsafe fn get_values<T>(
    function: &'static str,
    c: *mut c_void,
    vr: *const u32,
    n: usize,
    out: *mut T,
    ty: crate::model::VarType,
    put: impl Fn(f64) -> T,
) -> Status {
    // SAFETY: forwarded; `with_instance` checks the handle.
    unsafe {
        with_instance(function, c, |i| {
            check_count(i, function, "nValueReferences", n)?;
            let (Some(vrs), Some(out)) = (slice(vr, n), slice_mut(out, n)) else {
                return Err(null(i, function, "value references or values"));
            };
            let mut buf = vec![0.0; n];
            i.get(function, vrs, ty, &mut buf)?;
            for (o, b) in out.iter_mut().zip(buf) {
                *o = put(b);
            }
            Ok(())
        })
    }
}

/// Typed setters: convert each value with `take` and set them as f64.
///
/// # Safety
/// `vr` and `values` must be NULL or hold `n` elements (checked for NULL).
pub unsafe fn set_values<T: Copy>(
    function: &'static str,
    c: *mut c_void,
    vr: *const u32,
    n: usize,
    values: *const T,
    ty: crate::model::VarType,
    take: impl Fn(T) -> f64,
) -> Status {
    // SAFETY: forwarded; `with_instance` checks the handle.
    unsafe {
        with_instance(function, c, |i| {
            check_count(i, function, "nValueReferences", n)?;
            let (Some(vrs), Some(vals)) = (slice(vr, n), slice(values, n)) else {
                return Err(null(i, function, "value references or values"));
            };
            let buf: Vec<f64> = vals.iter().map(|&v| take(v)).collect();
            i.set(function, vrs, ty, &buf)
        })
    }
}

/// Calls that fill a state-sized array (states, derivatives, indicators, nominals).
///
/// # Safety
/// `x` must be NULL or hold `n` writable elements (checked for NULL).
pub unsafe fn fill(
    function: &'static str,
    c: *mut c_void,
    x: *mut f64,
    n: usize,
    f: impl FnOnce(&mut Instance, &mut [f64]) -> Result<(), Status>,
) -> Status {
    // SAFETY: forwarded; `with_instance` checks the handle.
    unsafe {
        with_instance(function, c, |i| {
            check_count(i, function, "the array length", n)?;
            match slice_mut(x, n) {
                Some(out) => f(i, out),
                None => Err(null(i, function, "array")),
            }
        })
    }
}

/// Get(FMU)state: a snapshot into `*state` (a previous state of ours is overwritten).
///
/// # Safety
/// `state` must be NULL (checked) or a valid pointer to a handle.
pub unsafe fn get_fmu_state(
    function: &'static str,
    state_arg: &str,
    c: *mut c_void,
    state: *mut *mut c_void,
) -> Status {
    // SAFETY: forwarded; handles are checked.
    unsafe {
        with_instance(function, c, |i| {
            if state.is_null() {
                return Err(null(i, function, state_arg));
            }
            let snap = i.snapshot()?;
            store_state(i, state, snap);
            Ok(())
        })
    }
}

/// Set(FMU)state.
///
/// # Safety
/// `state` is checked against the registry.
pub unsafe fn set_fmu_state(function: &'static str, c: *mut c_void, state: *mut c_void) -> Status {
    // SAFETY: forwarded; handles are checked.
    unsafe {
        with_instance(function, c, |i| match self::state(state) {
            Some(s) => i.restore(s),
            None => i.error(format!("{function}: {state:p} is not an FMU state of this binary")),
        })
    }
}

/// Free(FMU)state: frees `*state` and sets it to NULL (a NULL `*state` is a no-op).
///
/// # Safety
/// `state` must be NULL (checked) or a valid pointer to a handle (checked).
pub unsafe fn free_fmu_state(
    function: &'static str,
    state_arg: &str,
    c: *mut c_void,
    state: *mut *mut c_void,
) -> Status {
    // SAFETY: forwarded; handles are checked.
    unsafe {
        with_instance(function, c, |i| {
            if state.is_null() {
                return Err(null(i, function, state_arg));
            }
            if (*state).is_null() {
                return Ok(());
            }
            if !free_state(*state) {
                return i.error(format!("{function}: {:p} is not an FMU state of this binary", *state));
            }
            *state = std::ptr::null_mut();
            Ok(())
        })
    }
}

/// Serialized(FMU)stateSize.
///
/// # Safety
/// `size` must be NULL (checked) or writable.
pub unsafe fn serialized_size(function: &'static str, c: *mut c_void, state: *mut c_void, size: *mut usize) -> Status {
    // SAFETY: forwarded; handles are checked.
    unsafe {
        with_instance(function, c, |i| {
            let Some(s) = self::state(state) else { return i.error(format!("{function}: unknown FMU state")) };
            if size.is_null() {
                return Err(null(i, function, "size"));
            }
            *size = s.serialize().len();
            Ok(())
        })
    }
}

/// Serialize(FMU)state into the host's buffer of `size` bytes.
///
/// # Safety
/// `bytes` must be NULL (checked) or hold `size` writable bytes.
pub unsafe fn serialize(
    function: &'static str,
    c: *mut c_void,
    state: *mut c_void,
    bytes: *mut u8,
    size: usize,
) -> Status {
    // SAFETY: forwarded; handles are checked.
    unsafe {
        with_instance(function, c, |i| {
            let Some(s) = self::state(state) else { return i.error(format!("{function}: unknown FMU state")) };
            let data = s.serialize();
            if size < data.len() {
                return i.error(format!("{function}: buffer of {size} bytes, {} needed", data.len()));
            }
            let Some(out) = slice_mut(bytes, data.len()) else {
                return Err(null(i, function, "serializedState"));
            };
            out.copy_from_slice(&data);
            Ok(())
        })
    }
}

/// De(S)serialize(FMU)state from `size` bytes into `*state`.
///
/// # Safety
/// `bytes` must be NULL (checked) or hold `size` bytes; `state` NULL (checked) or valid.
pub unsafe fn deserialize(
    function: &'static str,
    state_arg: &str,
    c: *mut c_void,
    bytes: *const u8,
    size: usize,
    state: *mut *mut c_void,
) -> Status {
    // SAFETY: forwarded; handles are checked.
    unsafe {
        with_instance(function, c, |i| {
            // A state is its envelope, 8 bytes per value and what the engine saves (at most
            // its own bound): refuse larger sizes unread.
            let most = Snapshot::max_serialized(i.values.len(), i.model.max_saved_bytes());
            if size > most {
                return i.error(format!("{function}: {size} bytes, a state of this FMU has at most {most}"));
            }
            let Some(data) = slice(bytes, size) else { return Err(null(i, function, "serializedState")) };
            if state.is_null() {
                return Err(null(i, function, state_arg));
            }
            match Snapshot::deserialize(i.info(), data, i.model.max_saved_bytes()) {
                Ok(s) => {
                    store_state(i, state, s);
                    Ok(())
                }
                Err(e) => i.error(format!("{function}: {e}")),
            }
        })
    }
}
