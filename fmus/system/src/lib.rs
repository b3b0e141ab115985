#![doc = include_str!("../README.md")]
#![deny(unsafe_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use stiction::fmu_system::{Manifest, Running, TokenHasher, MANIFEST};
use stiction_fmus::instance::Resolved;
use stiction_fmus::model::{Engine, EventUpdate, Interface, ModelInfo, Role, VarType, Variable};

/// Magic of the engine's part of an FMU state.
const MAGIC: &[u8; 8] = b"STSYSFMU";
/// The largest engine part a deserialized FMU state may carry.
const MAX_STATE_BYTES: usize = 256 << 20;

/// The largest manifest read (its size is proportional to the number of variables).
const MAX_MANIFEST_BYTES: u64 = 64 << 20;

/// One exported system's instance: the manifest, and the simulation once initialized.
struct SystemEngine {
    info: &'static ModelInfo,
    dir: PathBuf,
    manifest: Manifest,
    run: Option<Running>,
}

impl SystemEngine {
    fn ranges(&self) -> (std::ops::Range<usize>, std::ops::Range<usize>, std::ops::Range<usize>) {
        let m = &self.manifest;
        (1..m.first_input(), m.first_input()..m.first_output(), m.first_output()..m.len())
    }
}

impl Engine for SystemEngine {
    fn info(&self) -> &'static ModelInfo {
        self.info
    }

    /// Build the system with the parameters' values (again only when they changed), start it
    /// at the experiment's start time `time`, hold the inputs, and read the outputs there
    /// (at t = 0: `stiction run`'s first row).
    fn initialize(&mut self, time: f64, v: &mut [f64], interface: Interface) -> Result<(), String> {
        if interface != Interface::CoSimulation {
            return Err("a system FMU is Co-Simulation only".into());
        }
        if !time.is_finite() {
            return Err(format!("the start time {time} s is not finite"));
        }
        let (p, i, o) = self.ranges();
        let same = |r: &Running| r.params.iter().zip(&v[p.clone()]).all(|(a, b)| a.to_bits() == b.to_bits());
        if !self.run.as_ref().is_some_and(same) {
            self.run = None;
            self.run = Some(Running::build(&self.dir, &self.manifest, &v[p])?);
        }
        let Some(run) = self.run.as_mut() else { return Err("the system is not built".into()) };
        // The experiment's start time: the solver's grid and the time functions start there.
        run.start_at(time)?;
        run.set_inputs(&self.manifest, &v[i])?;
        let (_, out) = v.split_at_mut(o.start);
        run.outputs(out)
    }

    /// Hold the inputs over `h`, take the solver steps from `time` to the grid point of
    /// `time + h` (Running::advance), read the outputs.
    fn do_step(&mut self, time: f64, v: &mut [f64], h: f64) -> Result<(), String> {
        let (_, i, o) = self.ranges();
        let Some(run) = self.run.as_mut() else { return Err("the system is not initialized".into()) };
        run.set_inputs(&self.manifest, &v[i])?;
        run.advance(time, h)?;
        let (_, out) = v.split_at_mut(o.start);
        run.outputs(out)
    }

    /// A component's request to end the run, seen by the last doStep (Running::advance).
    fn stop_request(&self) -> Option<(f64, String)> {
        let run = self.run.as_ref()?;
        run.stopped.as_ref().map(|why| (run.time(), why.clone()))
    }

    /// Outputs with the inputs just set (direct feedthrough), without stepping.
    fn outputs(&mut self, v: &mut [f64]) -> Result<(), String> {
        let (_, i, o) = self.ranges();
        let Some(run) = self.run.as_mut() else { return Err("the system is not initialized".into()) };
        run.set_inputs(&self.manifest, &v[i])?;
        let (_, out) = v.split_at_mut(o.start);
        run.outputs(out)
    }

    fn derivatives(&mut self, _v: &mut [f64]) -> Result<(), String> {
        Err("a system FMU has no Model Exchange form".into())
    }
    fn event_indicators(&self, _v: &[f64], _z: &mut [f64]) {}
    fn nominals(&self, _v: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = 1.0);
    }
    fn event_update(&mut self, _v: &mut [f64]) -> EventUpdate {
        EventUpdate::default()
    }

    /// The whole simulation (`Simulator::save_state`: step count, states, events, held
    /// inputs, block outputs, nested FMUs' own states) with the parameters it was built
    /// with; nothing before initialization (the value array is the whole state then).
    fn save(&mut self) -> Result<Vec<u8>, String> {
        let Some(run) = self.run.as_mut() else { return Ok(Vec::new()) };
        let sim = run.sim.save_state().map_err(|e| e.to_string())?;
        let mut out = Vec::with_capacity(32 + 8 * run.params.len() + sim.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(run.params.len() as u64).to_le_bytes());
        for p in &run.params {
            out.extend_from_slice(&p.to_le_bytes());
        }
        // The time the solver's grid is shifted by (start time, shortened steps).
        out.extend_from_slice(&run.sim.time_shift().to_le_bytes());
        out.extend_from_slice(&(sim.len() as u64).to_le_bytes());
        out.extend_from_slice(&sim);
        Ok(out)
    }

    /// Back to what [`save`](Engine::save) gave, taken at the FMU's time `time`: the system
    /// rebuilt if it was built with other parameters (or not at all), then its state restored
    /// (checked by `Simulator::restore_state`: a state of another system is refused) and its
    /// time k·T + shift compared with `time`. A refused state leaves the instance as it was
    /// (the simulation it had is put back).
    fn restore(&mut self, bytes: &[u8], time: f64) -> Result<(), String> {
        if bytes.is_empty() {
            self.run = None;
            return Ok(());
        }
        let word = |i: usize| -> Result<u64, String> {
            bytes
                .get(i..i + 8)
                .and_then(|w| w.try_into().ok())
                .map(u64::from_le_bytes)
                .ok_or_else(|| format!("the system state is truncated ({} bytes)", bytes.len()))
        };
        if bytes.get(..8) != Some(&MAGIC[..]) {
            return Err("the FMU state does not hold a stiction system state".into());
        }
        let n = self.manifest.parameters.len();
        if word(8)? != n as u64 {
            return Err(format!("the system state has {} parameters, this FMU {n}", word(8)?));
        }
        let params = (0..n).map(|k| word(16 + 8 * k).map(f64::from_bits)).collect::<Result<Vec<_>, _>>()?;
        let shift = f64::from_bits(word(16 + 8 * n)?);
        if !shift.is_finite() {
            return Err("the system state's time shift is not finite".into());
        }
        let at = 24 + 8 * n;
        let len = word(at)?;
        if len != (bytes.len() - at - 8) as u64 {
            return Err(format!("the system state has {} bytes for a simulation of {len}", bytes.len()));
        }
        let same =
            self.run.as_ref().is_some_and(|r| r.params.iter().zip(&params).all(|(a, b)| a.to_bits() == b.to_bits()));
        // What to put back if the state is refused: the simulation as it is (or the one
        // built for other parameters, kept aside whole).
        let (mut run, back) = if same {
            let Some(mut run) = self.run.take() else { return Err("the system is not built".into()) };
            let back = run.sim.save_state().ok().map(|b| (b, run.sim.time_shift(), run.stopped.clone()));
            (run, back)
        } else {
            (Running::build(&self.dir, &self.manifest, &params)?, None)
        };
        let restored = run.sim.restore_state(&bytes[at + 8..]).map_err(|e| e.to_string()).and_then(|()| {
            run.sim.set_time_shift(shift);
            run.at_time(time)
        });
        match restored {
            Ok(()) => {
                run.forget_inputs();
                // A request to end the run seen after the saved state is not in it.
                run.stopped = None;
                self.run = Some(run);
                Ok(())
            }
            Err(e) => {
                if same {
                    // The same simulation back; if even that fails it is not continued.
                    self.run = back.and_then(|(b, shift, stopped)| {
                        run.sim.restore_state(&b).ok()?;
                        run.sim.set_time_shift(shift);
                        run.stopped = stopped;
                        Some(run)
                    });
                }
                Err(e)
            }
        }
    }

    fn max_saved_bytes(&self) -> usize {
        MAX_STATE_BYTES
    }

    fn reset(&mut self) {
        self.run = None;
    }
}

/// The variable table of each system loaded in this process, by token (made once each; a
/// model's table lives as long as the process, as the hand-written models' tables do).
static INFOS: Mutex<Option<HashMap<String, &'static ModelInfo>>> = Mutex::new(None);

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

/// The [`ModelInfo`] of a manifest.
fn info_of(token: &str, m: &Manifest) -> Result<&'static ModelInfo, String> {
    let mut guard = INFOS.lock().map_err(|_| "the model table lock is poisoned")?;
    let map = guard.get_or_insert_with(HashMap::new);
    if let Some(info) = map.get(token) {
        return Ok(info);
    }
    let mut vars = Vec::with_capacity(m.len());
    for v in stiction::fmu_system::variables(m) {
        let role = match m.slot(v.vr as usize) {
            Some(stiction::fmu_system::Slot::Time) => Role::Time,
            Some(stiction::fmu_system::Slot::Parameter(_)) => Role::Parameter,
            Some(stiction::fmu_system::Slot::Input(_)) => Role::Input,
            _ => Role::Output,
        };
        vars.push(Variable {
            name: leak(&v.name),
            ty: VarType::Float64,
            role,
            start: v.start.unwrap_or(0.0),
            unit: leak(&v.unit),
            description: leak(&v.description),
        });
    }
    let info: &'static ModelInfo = Box::leak(Box::new(ModelInfo {
        identifier: leak(&m.identifier),
        cli_name: "",
        description: leak(&m.description),
        variables: Box::leak(vars.into_boxed_slice()),
        event_indicators: 0,
        model_exchange: false,
        default_stop: m.stop_time,
        default_step: m.interval,
        documentation: "",
    }));
    map.insert(token.to_string(), info);
    Ok(info)
}

/// Read a resource file of the FMU in `dir`, at most `max` bytes.
fn read(dir: &Path, name: &str, max: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let p = dir.join(name);
    let f = std::fs::File::open(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    let mut data = Vec::new();
    f.take(max.saturating_add(1)).read_to_end(&mut data).map_err(|e| format!("{}: {e}", p.display()))?;
    if data.len() as u64 > max {
        return Err(format!("{}: more than {max} bytes", p.display()));
    }
    Ok(data)
}

/// Hash the resource file `name` of `dir` into `h` as [`stiction::fmu_system::token`] does.
fn hash_file(h: &mut TokenHasher, dir: &Path, name: &str) -> Result<(), String> {
    use std::io::Read;
    let p = dir.join(name);
    let shown = |e: std::io::Error| format!("{}: {e}", p.display());
    let mut f = std::fs::File::open(&p).map_err(shown)?;
    let len = f.metadata().map_err(shown)?.len();
    h.file(name, len);
    let (mut buf, mut read) = (vec![0u8; 1 << 16], 0u64);
    loop {
        let n = f.read(&mut buf).map_err(shown)?;
        if n == 0 {
            break;
        }
        h.bytes(&buf[..n]);
        read += n as u64;
    }
    if read != len {
        return Err(format!("{}: {read} bytes read, {len} expected (the file changed)", p.display()));
    }
    Ok(())
}

/// The [`Resolver`](stiction_fmus::instance::Resolver) of exported systems: `None` when
/// `dir` holds no manifest (a hand-written model's FMU).
fn resolve(tok: &str, dir: &Path) -> Option<Resolved> {
    if !dir.join(MANIFEST).is_file() {
        return None;
    }
    Some((|| {
        let text = String::from_utf8(read(dir, MANIFEST, MAX_MANIFEST_BYTES)?)
            .map_err(|_| format!("{MANIFEST} is not UTF-8"))?;
        let m = Manifest::parse(&text)?;
        // Each file is hashed as it is read, a block at a time: memory stays bounded
        // whatever the FMU holds.
        let mut h = TokenHasher::default();
        h.file(MANIFEST, text.len() as u64);
        h.bytes(text.as_bytes());
        for f in &m.files {
            hash_file(&mut h, dir, f)?;
        }
        let expected = h.finish();
        if expected != tok {
            return Err(format!(
                "GUID/instantiation token {tok} does not match this FMU's resources ({expected}): \
                 modelDescription.xml and resources/ come from different exports"
            ));
        }
        let info = info_of(tok, &m)?;
        let starts = m.starts();
        let engine = SystemEngine { info, dir: dir.to_path_buf(), manifest: m, run: None };
        Ok((Box::new(engine) as Box<dyn Engine>, starts))
    })())
}

extern "C" fn install() {
    stiction_fmus::instance::set_resolver(resolve);
}

/// Runs when the host loads the library (an ELF constructor), before any FMI call.
#[allow(unsafe_code)]
#[used]
#[link_section = ".init_array"]
static INSTALL: extern "C" fn() = install;
