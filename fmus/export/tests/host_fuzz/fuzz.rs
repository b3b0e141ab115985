//! Fuzzing of FMI call sequences into the FMU binary (issue 16), part of the host harness.
//!
//! A sequence is a list of [`Call`]s drawn with `arbitrary` from random bytes: instances of
//! every model, FMI 2.0 and 3.0, CS and ME, created and freed in any order; every getter
//! and setter with random value references, counts (up to 2^40 and `usize::MAX`) and
//! nValues; doStep with random times and steps (NaN, 1e-300, 1e300); `substep` set to
//! anything; FMU states got, set, freed, serialized, corrupted and deserialized; stale,
//! foreign and made-up handles. The binary must never crash (a crash ends the test
//! process), answer a call in more than [`SLOW`], leak an object, answer OK where the
//! standard demands an error (a count mismatch, a count over the limit, a doStep at a wrong
//! time, a state with a non-finite time), or answer differently for the same sequence.
//!
//! Short campaign: `cargo test --release -p stiction-fmus --test host -- fuzz`.
//! Long campaign: `STICTION_FUZZ_SECS=600 cargo test --release -p stiction-fmus --test host
//! -- fuzz::fmi_call_sequences --nocapture` (prints the sequences and calls per second).
//! `STICTION_FUZZ_SEED` replays from a seed.

use super::*;
use arbitrary::{Arbitrary, Unstructured};
use std::time::{Duration, Instant};

/// The longest a single call may take.
const SLOW: Duration = Duration::from_secs(2);

/// Counts the FMU must refuse before touching the arrays (more than it accepts per call).
const HUGE: [usize; 3] = [1 << 40, usize::MAX, (1 << 16) + 1];

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Count {
    Exact,
    Zero,
    Off(u8),
    Huge(u8),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Number {
    Small(i8),
    Any(f64),
    Tiny,
    Nan,
    Inf,
}

impl Number {
    fn value(self) -> f64 {
        match self {
            Number::Small(x) => f64::from(x) * 0.01,
            Number::Any(x) => x,
            Number::Tiny => 1e-300,
            Number::Nan => f64::NAN,
            Number::Inf => f64::INFINITY,
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
enum Call {
    Instantiate { slot: u8, fmi3: bool, cs: bool, model: u8 },
    Free { slot: u8 },
    Init { slot: u8 },
    Terminate { slot: u8 },
    Reset { slot: u8 },
    Get { slot: u8, vrs: Vec<u8>, count: Count, nvalues: Count },
    Set { slot: u8, vrs: Vec<u8>, value: Number, count: Count, nvalues: Count },
    Strings { slot: u8, get: bool, n: u8, nv: u8 },
    DoStep { slot: u8, at_time: bool, t: Number, h: Number },
    Substep { slot: u8, value: Number },
    GetState { slot: u8 },
    SetState { slot: u8, state: u8, foreign: bool },
    FreeState { slot: u8, state: u8 },
    RoundTrip { slot: u8, state: u8, flip: Option<(u16, u8)>, truncate: Option<u16>, nan_time: bool },
    SetTime { slot: u8, t: Number },
    States { slot: u8, set: bool, count: Count },
}

const SLOTS: usize = 4;

/// One instance slot: the handle (possibly stale after Free), its API and time.
struct Slot {
    c: Handle,
    fmi3: bool,
    live: bool,
    time: f64,
    vars: usize,
    substep_vr: Option<u32>,
    name: CString,
}

/// What a call needs of a slot.
#[derive(Clone, Copy)]
struct View {
    c: Handle,
    fmi3: bool,
    live: bool,
    time: f64,
    vars: usize,
    substep_vr: Option<u32>,
}

struct Host {
    slots: Vec<Option<Slot>>,
    /// Live FMU states and the slot of the instance that made them.
    states: Vec<(Handle, usize)>,
    statuses: Vec<c_int>,
    calls: u64,
    /// The current call goes through a freed handle: whether the binary sees a live
    /// instance there depends on the allocator reusing the address, so its status is left
    /// out of the determinism check.
    masked: bool,
    /// The calls, for messages.
    log: Vec<String>,
    /// The first call made through a freed handle that aliased a live instance.
    tainted: Option<usize>,
}

fn models() -> [&'static ModelInfo; 3] {
    [&gear::INFO, &friction::INFO, &friction_mass::INFO]
}

type GetS = unsafe extern "C" fn(Handle, *const u32, usize, *mut *const c_char, usize) -> c_int;
type SetS = unsafe extern "C" fn(Handle, *const u32, usize, *const *const c_char, usize) -> c_int;

/// fmi3GetString / fmi3SetString (not in the host's table).
fn strings3() -> (GetS, SetS) {
    static F: OnceLock<(GetS, SetS)> = OnceLock::new();
    *F.get_or_init(|| {
        let lib = library();
        // SAFETY: the signatures of fmi3Functions.h.
        unsafe {
            let g = *lib.get::<GetS>(b"fmi3GetString\0").expect("fmi3GetString");
            let s = *lib.get::<SetS>(b"fmi3SetString\0").expect("fmi3SetString");
            (g, s)
        }
    })
}

impl Host {
    fn new() -> Host {
        Host {
            slots: (0..SLOTS).map(|_| None).collect(),
            states: Vec::new(),
            statuses: Vec::new(),
            calls: 0,
            masked: false,
            log: Vec::new(),
            tainted: None,
        }
    }

    /// The slot `s`, if it ever held an instance. A freed (stale) handle whose address was
    /// reused by a live instance counts as that live instance, whose time becomes unknown.
    fn slot(&mut self, s: u8) -> Option<View> {
        let i = s as usize % SLOTS;
        let c = self.slots[i].as_ref()?.c;
        let mut j = i;
        self.masked = !self.slots[i].as_ref()?.live;
        if !self.slots[i].as_ref()?.live {
            if let Some(k) = (0..SLOTS).find(|&k| self.slots[k].as_ref().is_some_and(|o| o.live && o.c == c)) {
                self.slots[k].as_mut()?.time = f64::NAN;
                // From here on the live instance was changed through a reused address,
                // which another run need not reuse: later answers are not comparable.
                self.tainted.get_or_insert(self.statuses.len());
                j = k;
            }
        }
        self.slots[j].as_ref().map(|x| View {
            c: x.c,
            fmi3: x.fmi3,
            live: x.live,
            time: x.time,
            vars: x.vars,
            substep_vr: x.substep_vr,
        })
    }

    /// Set the time of the instance behind slot `s` (after a call through its handle).
    fn set_time(&mut self, s: u8, t: f64) {
        let c = self.slots[s as usize % SLOTS].as_ref().map(|x| x.c);
        for x in self.slots.iter_mut().flatten() {
            if Some(x.c) == c && x.live {
                x.time = t;
            }
        }
    }

    /// Record a status with its invariants: a valid status, and `must_fail` never OK.
    fn record(&mut self, what: &Call, status: c_int, must_fail: bool, started: Instant) {
        self.calls += 1;
        assert!((0..=4).contains(&status), "{what:?}: status {status}");
        assert!(!(must_fail && status == OK), "{what:?} answered OK");
        assert!(started.elapsed() < SLOW, "{what:?} took {:?}", started.elapsed());
        self.statuses.push(if self.masked { -1 } else { status });
        self.log.push(format!("{what:?} -> {status}"));
        self.masked = false;
    }

    fn counts(n: usize, c: Count) -> (usize, bool) {
        match c {
            Count::Exact => (n, false),
            Count::Zero => (0, n != 0),
            Count::Off(k) => {
                let m = n + 1 + usize::from(k % 4);
                (m, true)
            }
            Count::Huge(k) => (HUGE[usize::from(k) % HUGE.len()], true),
        }
    }

    fn apply(&mut self, call: &Call) {
        let t0 = Instant::now();
        let api2 = Api2::get();
        let api3 = Api3::get();
        match call {
            Call::Instantiate { slot, fmi3, cs, model } => {
                let i = *slot as usize % SLOTS;
                if self.slots[i].as_ref().is_some_and(|s| s.live) {
                    return;
                }
                let info = models()[usize::from(*model) % 3];
                let cs = *cs || !info.model_exchange;
                let name = cstring(&format!("fuzz-{i}"));
                let token = default_guid(info);
                let c = if *fmi3 {
                    if cs {
                        instantiate3(&name, Some(&token), None, false)
                    } else {
                        instantiate3_me(&name, Some(&token), None)
                    }
                } else {
                    instantiate2(name.to_str().unwrap(), if cs { CS } else { ME }, Some(&token), None, &CALLBACKS)
                };
                assert!(!c.is_null(), "instantiate {:?}", take_log(name.to_str().unwrap()));
                let substep_vr = info.variables.iter().position(|v| v.name == "substep").map(|x| x as u32);
                self.slots[i] =
                    Some(Slot { c, fmi3: *fmi3, live: true, time: 0.0, vars: info.variables.len(), substep_vr, name });
                self.record(call, OK, false, t0);
            }
            Call::Free { slot } => {
                let i = *slot as usize % SLOTS;
                let Some((c, fmi3, was_live)) = self.slots[i].as_ref().map(|s| (s.c, s.fmi3, s.live)) else { return };
                // SAFETY: live or stale handles (recognised by the binary).
                unsafe {
                    if fmi3 {
                        (api3.fmi3FreeInstance)(c)
                    } else {
                        (api2.fmi2FreeInstance)(c)
                    }
                }
                // The instance freed (a stale handle may alias a live one); the binary frees
                // an instance's states with it.
                let freed = if was_live {
                    Some(i)
                } else {
                    self.masked = true;
                    let k = (0..SLOTS).find(|&k| self.slots[k].as_ref().is_some_and(|o| o.live && o.c == c));
                    if k.is_some() {
                        self.tainted.get_or_insert(self.statuses.len());
                    }
                    k
                };
                if let Some(k) = freed {
                    self.states.retain(|&(_, owner)| owner != k);
                    if let Some(s) = self.slots[k].as_mut() {
                        s.live = false;
                    }
                }
                self.record(call, OK, false, t0);
            }
            Call::Init { slot } => {
                let Some(s) = self.slot(*slot) else { return };
                // SAFETY: a live or stale handle.
                let st = unsafe {
                    if s.fmi3 {
                        match (api3.fmi3EnterInitializationMode)(s.c, false, 0.0, 0.0, false, 0.0) {
                            OK => (api3.fmi3ExitInitializationMode)(s.c),
                            e => e,
                        }
                    } else {
                        let a = (api2.fmi2SetupExperiment)(s.c, 0, 0.0, 0.0, 0, 0.0);
                        let b = (api2.fmi2EnterInitializationMode)(s.c);
                        let c = (api2.fmi2ExitInitializationMode)(s.c);
                        a.max(b).max(c)
                    }
                };
                let stale = !s.live;
                self.set_time(*slot, if st == OK { 0.0 } else { f64::NAN });
                self.record(call, st, stale, t0);
            }
            Call::Terminate { slot } | Call::Reset { slot } => {
                let Some(s) = self.slot(*slot) else { return };
                let reset = matches!(call, Call::Reset { .. });
                // SAFETY: a live or stale handle.
                let st = unsafe {
                    match (s.fmi3, reset) {
                        (true, false) => (api3.fmi3Terminate)(s.c),
                        (false, false) => (api2.fmi2Terminate)(s.c),
                        (true, true) => {
                            let f = *library()
                                .get::<unsafe extern "C" fn(Handle) -> c_int>(b"fmi3Reset\0")
                                .expect("fmi3Reset");
                            f(s.c)
                        }
                        (false, true) => {
                            let f = *library()
                                .get::<unsafe extern "C" fn(Handle) -> c_int>(b"fmi2Reset\0")
                                .expect("fmi2Reset");
                            f(s.c)
                        }
                    }
                };
                let stale = !s.live;
                if reset {
                    self.set_time(*slot, if st == OK { 0.0 } else { f64::NAN });
                }
                self.record(call, st, stale, t0);
            }
            Call::Get { slot, vrs, count, nvalues } | Call::Set { slot, vrs, count, nvalues, .. } => {
                let Some(s) = self.slot(*slot) else { return };
                let set = matches!(call, Call::Set { .. });
                let vr: Vec<u32> = vrs.iter().take(8).map(|&v| u32::from(v) % (s.vars as u32 + 3)).collect();
                let (n, bad_n) = Self::counts(vr.len(), *count);
                let (nv, bad_nv) = if s.fmi3 { Self::counts(n.min(1 << 16), *nvalues) } else { (n, false) };
                // Buffers as long as the count where it is accepted; short ones beyond it
                // (the FMU must refuse those counts before reading).
                let len = if n > (1 << 16) { vr.len() } else { n };
                let mut vr_buf = vr.clone();
                vr_buf.resize(len.max(1), 0);
                let mut vals = vec![0.5f64; len.max(nv.min(1 << 16)).max(1)];
                let value = if let Call::Set { value, .. } = call { value.value() } else { 0.0 };
                vals.iter_mut().for_each(|x| *x = value);
                // SAFETY: buffers of at least the accepted counts.
                let st = unsafe {
                    match (s.fmi3, set) {
                        (true, false) => (api3.fmi3GetFloat64)(s.c, vr_buf.as_ptr(), n, vals.as_mut_ptr(), nv),
                        (true, true) => (api3.fmi3SetFloat64)(s.c, vr_buf.as_ptr(), n, vals.as_ptr(), nv),
                        (false, false) => (api2.fmi2GetReal)(s.c, vr_buf.as_ptr(), n, vals.as_mut_ptr()),
                        (false, true) => (api2.fmi2SetReal)(s.c, vr_buf.as_ptr(), n, vals.as_ptr()),
                    }
                };
                let _ = (bad_n, bad_nv); // a longer list of valid references is a valid call
                let must_fail = !s.live || n > (1 << 16) || (s.fmi3 && nv != n);
                self.record(call, st, must_fail, t0);
            }
            Call::Strings { slot, get, n, nv } => {
                let Some(s) = self.slot(*slot) else { return };
                if !s.fmi3 {
                    return;
                }
                let (n, nv) = (usize::from(*n % 3), usize::from(*nv % 3));
                let vr = [0u32; 3];
                let mut ptrs: [*const c_char; 3] = [null(); 3];
                let (g, st) = strings3();
                // SAFETY: arrays of 3 elements, counts ≤ 2.
                let status = unsafe {
                    if *get {
                        g(s.c, vr.as_ptr(), n, ptrs.as_mut_ptr(), nv)
                    } else {
                        st(s.c, vr.as_ptr(), n, ptrs.as_ptr(), nv)
                    }
                };
                // The models have no String variables: only n = nv = 0 may be OK.
                let must_fail = !s.live || n != 0 || nv != 0;
                self.record(call, status, must_fail, t0);
            }
            Call::DoStep { slot, at_time, t, h } => {
                let Some(s) = self.slot(*slot) else { return };
                let t = if *at_time { s.time } else { t.value() };
                let h = h.value();
                let (mut a, mut b, mut e) = (false, false, false);
                let mut last = 0.0;
                // SAFETY: valid out pointers.
                let st = unsafe {
                    if s.fmi3 {
                        (api3.fmi3DoStep)(s.c, t, h, true, &mut a, &mut b, &mut e, &mut last)
                    } else {
                        (api2.fmi2DoStep)(s.c, t, h, 1)
                    }
                };
                // Only where this host knows the FMU's time (NaN: unknown).
                let wrong_time =
                    !t.is_finite() || (s.time.is_finite() && (t - s.time).abs() > 1e-9 * (1.0 + s.time.abs()));
                let must_fail = !s.live || wrong_time || !(h.is_finite() && h > 0.0);
                if st == OK {
                    self.set_time(*slot, t + h);
                }
                self.record(call, st, must_fail, t0);
            }
            Call::Substep { slot, value } => {
                let Some(s) = self.slot(*slot) else { return };
                let Some(vr) = s.substep_vr else { return };
                let x = value.value();
                // SAFETY: one element each.
                let st = unsafe {
                    if s.fmi3 {
                        (api3.fmi3SetFloat64)(s.c, &vr, 1, &x, 1)
                    } else {
                        (api2.fmi2SetReal)(s.c, &vr, 1, &x)
                    }
                };
                let must_fail = !s.live || !x.is_finite();
                self.record(call, st, must_fail, t0);
            }
            Call::GetState { slot } => {
                let Some(s) = self.slot(*slot) else { return };
                let mut h = null_mut();
                // SAFETY: a valid out pointer.
                let st = unsafe {
                    if s.fmi3 {
                        (api3.fmi3GetFMUState)(s.c, &mut h)
                    } else {
                        (api2.fmi2GetFMUstate)(s.c, &mut h)
                    }
                };
                let stale = !s.live;
                let owner = *slot as usize % SLOTS;
                if st == OK {
                    self.states.push((h, owner));
                }
                self.record(call, st, stale, t0);
            }
            Call::SetState { slot, state, foreign } => {
                let Some(s) = self.slot(*slot) else { return };
                // A made-up address, an instance handle, or a state of the pool.
                let h = if *foreign {
                    if state % 2 == 0 {
                        s.c
                    } else {
                        0x1000usize as Handle
                    }
                } else {
                    self.states.get(usize::from(*state) % self.states.len().max(1)).map_or(null_mut(), |x| x.0)
                };
                // SAFETY: handles are checked by the binary.
                let st = unsafe {
                    if s.fmi3 {
                        (api3.fmi3SetFMUState)(s.c, h)
                    } else {
                        (api2.fmi2SetFMUstate)(s.c, h)
                    }
                };
                let stale = !s.live || *foreign || h.is_null();
                if st == OK {
                    // The time of the state is unknown here: take it from the FMU (vr 0 = time).
                    let mut tm = f64::NAN;
                    let vr0 = 0u32;
                    // SAFETY: one element each.
                    unsafe {
                        if s.fmi3 {
                            (api3.fmi3GetFloat64)(s.c, &vr0, 1, &mut tm, 1);
                        } else {
                            (api2.fmi2GetReal)(s.c, &vr0, 1, &mut tm);
                        }
                    }
                    self.set_time(*slot, tm);
                }
                self.record(call, st, stale, t0);
            }
            Call::FreeState { slot, state } => {
                let Some(s) = self.slot(*slot) else { return };
                if self.states.is_empty() {
                    return;
                }
                let k = usize::from(*state) % self.states.len();
                let mut h = self.states[k].0;
                // SAFETY: a valid pointer to a handle (checked by the binary).
                let st = unsafe {
                    if s.fmi3 {
                        (api3.fmi3FreeFMUState)(s.c, &mut h)
                    } else {
                        (api2.fmi2FreeFMUstate)(s.c, &mut h)
                    }
                };
                if st == OK {
                    self.states.remove(k);
                }
                let stale = !s.live;
                self.record(call, st, stale, t0);
            }
            Call::RoundTrip { slot, state, flip, truncate, nan_time } => {
                let Some(s) = self.slot(*slot) else { return };
                if self.states.is_empty() || !s.live {
                    return;
                }
                let h = self.states[usize::from(*state) % self.states.len()].0;
                let mut size = 0usize;
                // SAFETY: valid out pointers and buffers of `size` bytes.
                let (st, bytes) = unsafe {
                    let st = if s.fmi3 {
                        (api3.fmi3SerializedFMUStateSize)(s.c, h, &mut size)
                    } else {
                        (api2.fmi2SerializedFMUstateSize)(s.c, h, &mut size)
                    };
                    if st != OK || size > 1 << 20 {
                        (st, Vec::new())
                    } else {
                        let mut b = vec![0u8; size];
                        let st = if s.fmi3 {
                            (api3.fmi3SerializeFMUState)(s.c, h, b.as_mut_ptr(), size)
                        } else {
                            (api2.fmi2SerializeFMUstate)(s.c, h, b.as_mut_ptr(), size)
                        };
                        (st, b)
                    }
                };
                self.record(call, st, false, t0);
                if st != OK {
                    return;
                }
                let mut bytes = bytes;
                let mut must_fail = false;
                if let Some((at, x)) = flip {
                    if !bytes.is_empty() {
                        let i = usize::from(*at) % bytes.len();
                        bytes[i] ^= x | 1;
                        // A flipped value byte may still be a valid number.
                    }
                }
                if *nan_time && bytes.len() >= 32 {
                    bytes[24..32].copy_from_slice(&f64::NAN.to_le_bytes());
                    must_fail = true;
                }
                if let Some(t) = truncate {
                    let keep = usize::from(*t) % (bytes.len() + 1);
                    must_fail |= keep < bytes.len();
                    bytes.truncate(keep);
                }
                let mut out = null_mut();
                let t1 = Instant::now();
                // SAFETY: a buffer of bytes.len() bytes and a valid out pointer.
                let st = unsafe {
                    if s.fmi3 {
                        (api3.fmi3DeserializeFMUState)(s.c, bytes.as_ptr(), bytes.len(), &mut out)
                    } else {
                        (api2.fmi2DeSerializeFMUstate)(s.c, bytes.as_ptr(), bytes.len(), &mut out)
                    }
                };
                if st == OK {
                    self.states.push((out, *slot as usize % SLOTS));
                }
                self.record(call, st, must_fail, t1);
            }
            Call::SetTime { slot, t } => {
                let Some(s) = self.slot(*slot) else { return };
                let x = t.value();
                // SAFETY: a live or stale handle.
                let st = unsafe {
                    if s.fmi3 {
                        (api3.fmi3SetTime)(s.c, x)
                    } else {
                        (api2.fmi2SetTime)(s.c, x)
                    }
                };
                let must_fail = !s.live || !x.is_finite();
                if st == OK {
                    self.set_time(*slot, x);
                }
                self.record(call, st, must_fail, t0);
            }
            Call::States { slot, set, count } => {
                let Some(s) = self.slot(*slot) else { return };
                let (n, _) = Self::counts(2, *count);
                let mut buf = vec![0.25f64; n.clamp(1, 1 << 16)];
                // SAFETY: buffers of n elements where n is accepted, else refused unread.
                let st = unsafe {
                    match (s.fmi3, set) {
                        (true, true) => (api3.fmi3SetContinuousStates)(s.c, buf.as_ptr(), n),
                        (true, false) => (api3.fmi3GetContinuousStates)(s.c, buf.as_mut_ptr(), n),
                        (false, true) => (api2.fmi2SetContinuousStates)(s.c, buf.as_ptr(), n),
                        (false, false) => (api2.fmi2GetContinuousStates)(s.c, buf.as_mut_ptr(), n),
                    }
                };
                let must_fail = !s.live || n > (1 << 16);
                self.record(call, st, must_fail, t0);
            }
        }
    }

    /// Free everything this sequence created.
    fn finish(mut self) -> (Vec<c_int>, u64, Vec<String>) {
        for s in self.slots.iter_mut().flatten() {
            if s.live {
                // SAFETY: live handles.
                unsafe {
                    if s.fmi3 {
                        (Api3::get().fmi3FreeInstance)(s.c)
                    } else {
                        (Api2::get().fmi2FreeInstance)(s.c)
                    }
                }
                take_log(s.name.to_str().unwrap());
            }
        }
        let mut statuses = self.statuses;
        statuses.truncate(self.tainted.unwrap_or(usize::MAX));
        (statuses, self.calls, self.log)
    }
}

/// Run the calls decoded from `bytes`; returns the statuses and the number of calls.
fn run_sequence(bytes: &[u8]) -> (Vec<c_int>, u64, Vec<String>) {
    let mut u = Unstructured::new(bytes);
    let mut calls: Vec<Call> = Vec::new();
    while !u.is_empty() && calls.len() < 80 {
        match Call::arbitrary(&mut u) {
            Ok(c) => calls.push(c),
            Err(_) => break,
        }
    }
    let mut host = Host::new();
    for c in &calls {
        host.apply(c);
    }
    let before = live();
    let out = host.finish();
    assert!(live() <= before, "objects leaked");
    let _ = take_log("");
    LOG.lock().unwrap_or_else(PoisonError::into_inner).clear();
    out
}

/// Random byte strings from a seed (fastrand: small, seedable, no dependencies).
fn bytes(rng: &mut fastrand::Rng) -> Vec<u8> {
    let n = rng.usize(16..2048);
    (0..n).map(|_| rng.u8(..)).collect()
}

#[test]
fn fmi_call_sequences() {
    let _serial = serial();
    super::expected_messages("called with an invalid or freed instance handle");
    let secs: f64 = std::env::var("STICTION_FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(0.0);
    let seed: u64 = std::env::var("STICTION_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(16);
    let mut rng = fastrand::Rng::with_seed(seed);
    let base = live();
    let started = Instant::now();
    let (mut sequences, mut calls) = (0u64, 0u64);
    loop {
        let b = bytes(&mut rng);
        let (statuses, n, log) = run_sequence(&b);
        // The same sequence answers the same (every 16th, to keep the campaign fast).
        if sequences % 16 == 0 {
            let again = run_sequence(&b).0;
            let common = statuses.len().min(again.len());
            if let Some(k) = (0..common).find(|&k| again[k] != statuses[k]) {
                panic!(
                    "non-deterministic answer (seed {seed}, sequence {sequences}) at call {k}: {} then {:?}\n{log:#?}",
                    statuses[k], again[k]
                );
            }
        }
        assert_eq!(live(), base, "objects leaked (seed {seed}, sequence {sequences})");
        sequences += 1;
        calls += n;
        let done = if secs > 0.0 { started.elapsed().as_secs_f64() >= secs } else { sequences >= 3000 };
        if done {
            break;
        }
    }
    let el = started.elapsed().as_secs_f64();
    eprintln!(
        "FMI fuzz: {sequences} sequences, {calls} calls in {el:.1} s: {:.0} sequences/s, {:.0} calls/s (seed {seed})",
        sequences as f64 / el,
        calls as f64 / el
    );
}

// ---- regression tests of what the campaign found (and the cases) ----

#[test]
fn fmi3_get_and_set_string_with_zero_references_and_values_is_an_error() {
    let _serial = serial();
    let f = Fmi3::new(&gear::INFO, "strings-zero");
    let (g, s) = strings3();
    let mut p: [*const c_char; 2] = [null(); 2];
    // SAFETY: arrays of 2 elements.
    unsafe {
        assert_ne!(g(f.c, [0u32].as_ptr(), 0, p.as_mut_ptr(), 2), OK);
        assert_ne!(s(f.c, [0u32].as_ptr(), 0, p.as_ptr(), 1), OK);
        assert_eq!(g(f.c, [0u32].as_ptr(), 0, p.as_mut_ptr(), 0), OK);
    }
    take_log("strings-zero");
}

#[test]
fn fmi2_get_real_with_2_pow_40_references_is_an_error_not_an_abort() {
    let _serial = serial();
    let f = Fmi2::new(&gear::INFO, CS, "huge-count");
    f.initialize();
    let (vr, mut out) = ([0u32; 4], [0.0f64; 4]);
    // SAFETY: the count is refused before the arrays are read.
    let st = unsafe { (f.api.fmi2GetReal)(f.c, vr.as_ptr(), 1 << 40, out.as_mut_ptr()) };
    rejected(st, Some("huge-count"), "fmi2GetReal", "nvr = 2^40");
    let f3 = Fmi3::new(&gear::INFO, "huge-count-3");
    // SAFETY: as above.
    let st = unsafe { (f3.api.fmi3GetFloat64)(f3.c, vr.as_ptr(), usize::MAX, out.as_mut_ptr(), usize::MAX) };
    rejected(st, Some("huge-count-3"), "fmi3GetFloat64", "nValueReferences = usize::MAX");
    // A serialized state claimed to be 2^40 bytes long is refused before it is read.
    let mut s = null_mut();
    // SAFETY: the size is refused before the buffer is read.
    let st = unsafe { (f.api.fmi2DeSerializeFMUstate)(f.c, [0u8; 8].as_ptr(), 1 << 40, &mut s) };
    rejected(st, Some("huge-count"), "fmi2DeSerializeFMUstate", "size = 2^40");
    assert!(s.is_null());
}

#[test]
fn a_do_step_beyond_the_substep_budget_is_refused_at_once() {
    use gear::vr::SUBSTEP;
    let _serial = serial();
    let f = Fmi2::new(&gear::INFO, CS, "tiny-substep");
    f.set(&[SUBSTEP], &[1e-300]);
    f.initialize();
    let t = Instant::now();
    let st = f.do_step(0.0, 1e-3);
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    rejected(st, Some("tiny-substep"), "fmi2DoStep", "substep 1e-300");
    let f = Fmi2::new(&friction::INFO, CS, "small-substep");
    f.set(&[friction::vr::SUBSTEP], &[1e-12]);
    f.initialize();
    let t = Instant::now();
    let st = f.do_step(0.0, 1e-3);
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    let log = take_log("small-substep");
    assert_eq!(st, ERROR);
    assert!(log.iter().any(|r| r.message.contains("budget")), "{log:#?}");
}

#[test]
fn a_deserialized_state_with_a_nan_time_is_rejected() {
    let _serial = serial();
    let f = Fmi2::new(&gear::INFO, CS, "nan-state");
    f.initialize();
    let s = f.get_state();
    let bytes = resealed(&f.serialize(s), TIME_AT, &f64::NAN.to_le_bytes());
    let (st, out) = f.deserialize(&bytes);
    assert!(out.is_null());
    let log = take_log("nan-state");
    assert_eq!(st, ERROR);
    assert!(log.iter().any(|r| r.message.contains("not finite")), "{log:#?}");
    // A non-finite value is refused too.
    let bytes = resealed(&f.serialize(s), VALUES_AT, &f64::INFINITY.to_le_bytes());
    let (st, out) = f.deserialize(&bytes);
    assert!(out.is_null() && st == ERROR);
    take_log("nan-state");
    f.free_state(s);
    // And DoStep keeps checking the communication point.
    assert_ne!(f.do_step(f64::NAN, 1e-3), OK);
    take_log("nan-state");
}
