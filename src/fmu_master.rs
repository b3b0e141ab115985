//! `stiction run` / `stiction check` on an FMU-only system (a JSON file with a top-level
//! `"fmus"` object): Co-Simulation FMUs stepped by the master of
//! `stiction_fmi_master`.

use super::Failure;
use std::path::{Path, PathBuf};
use stiction_fmi_master::{is_fmu_system, Algorithm, FmuSystem, Translated};
use stiction_framework::Recorder;
use stiction_framework::Tee;

/// What a system file holds.
pub enum Detected {
    /// An FMU-only system (a top-level `"fmus"` object) that the master runs
    /// (stiction_fmi_master::translate says why).
    Fmus,
    /// An FMU-only system as the equivalent network of signal blocks (its text, `--set`
    /// overrides applied), which the engine runs.
    Translated(String),
    /// A network of components, with the file's text (`None` if it could not be read: the
    /// loader then reports why).
    Network(Option<String>),
}

/// Whether `path` holds an FMU-only system (translated into a network when it can be,
/// with the overrides `sets` applied); otherwise its text, read once for the loader.
pub fn detect(path: &Path, sets: &[String]) -> Detected {
    match stiction_framework::system::read_system_file(path) {
        Ok(text) if is_fmu_system(&text) => match translated(path, &text, sets) {
            Some(net) => Detected::Translated(net),
            None => Detected::Fmus,
        },
        Ok(text) => Detected::Network(Some(text)),
        Err(_) => Detected::Network(None),
    }
}

/// The FMU-only system `text` of `path` with `sets` applied, as a network's text, if it
/// translates ([`stiction_fmi_master::translate`]).
fn translated(path: &Path, text: &str, sets: &[String]) -> Option<String> {
    let mut doc: serde_json::Value = serde_json::from_str(text).ok()?;
    stiction::set::apply_all(&mut doc, sets).ok()?;
    let base = stiction::set::base_dir(path);
    match stiction_fmi_master::translate(&doc, &base) {
        Translated::Network(net) => serde_json::to_string(&net).ok(),
        Translated::Master(_) => None,
    }
}

pub fn run(
    path: &Path,
    output: Option<PathBuf>,
    plot_to: Option<(PathBuf, super::plot::Options)>,
    threads: Option<usize>,
    talk: super::Talk,
    sets: &[String],
    strict: bool,
) -> Result<(), Failure> {
    if let Some((p, _)) = &plot_to {
        super::plot::check_path(p).map_err(Failure::Input)?;
    }
    super::interrupt::phase("loading and instantiating the FMUs");
    let mut system = stiction::set::load_fmu_system_with_sets(path, sets)?;
    super::interrupt::stop_here(&path.display().to_string())?;
    super::interrupt::phase("running");
    let quiet = talk.quiet;
    if talk.warnings {
        for w in system.warnings() {
            eprintln!("warning: {w}");
        }
    }
    let warned = system.warnings().len();
    if strict && warned > 0 {
        return Err(Failure::Input(super::warnings::strict_refusal(&path.display().to_string(), warned, "run")));
    }
    let threads = match (threads, system.threads) {
        (Some(n), _) => stiction_framework::system::check_threads(n, "--threads")?,
        (None, Some(n)) => stiction_framework::system::check_threads(n, "master.threads")?,
        (None, None) => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    };
    let name = system.name.clone();
    let file = path.display().to_string();
    let out_path = output.unwrap_or_else(|| PathBuf::from(format!("{name}.csv")));
    super::check_out_paths(&out_path, plot_to.as_ref().map(|p| p.0.as_path()))?;
    if let Some((_, opts)) = &plot_to {
        opts.columns(system.labels()).map_err(Failure::Input)?;
    }
    let mut csv = super::open_csv(&out_path, Some(system.step), Vec::new())?;
    csv.set_write_through(stiction_fmi_import::foreign_code_loaded());
    let bar = super::progress_bar(quiet);
    let stop = system.stop_time;
    let mut progress = |f: f64| {
        if let Some(b) = &bar {
            b.set_position((f * 1000.0) as u64);
            b.set_message(format!("{:.4} s", f * stop));
        }
    };
    let mut rec = Recorder::default();
    let started = std::time::Instant::now();
    let result = if plot_to.is_some() {
        let mut tee = Tee(csv.as_mut(), &mut rec);
        system.run_until(threads, &mut tee, &mut progress, &super::interrupt::requested)
    } else {
        system.run_until(threads, csv.as_mut(), &mut progress, &super::interrupt::requested)
    };
    let shown = super::shown(&out_path);
    let summary = super::finish_run(result, bar, &shown, file, &rec, &name, plot_to.as_ref())?;
    if let Some(why) = &summary.stopped {
        // A component (an FMU) asked to end the run: a normal end at its last row.
        eprintln!("{name}: stopped at {why}");
    }
    if !quiet {
        // Gauss-Seidel steps the FMUs one after the other.
        let threads = if system.algorithm == Algorithm::Jacobi { threads } else { 1 };
        eprintln!(
            "{name}: {} communication steps ({}) to t = {} s in {:.2} s on {threads} thread(s); {} rows -> {shown}{}",
            summary.steps,
            system.algorithm.label(),
            summary.final_time,
            started.elapsed().as_secs_f64(),
            summary.rows,
            plot_to.map(|p| format!(", plot -> {}", p.0.display())).unwrap_or_default()
        );
    }
    Ok(())
}

pub fn check(path: &Path, strict: bool, sets: &[String]) -> Result<(), Failure> {
    super::interrupt::phase("loading and instantiating the FMUs");
    let system = stiction::set::load_fmu_system_with_sets(path, sets)?;
    super::interrupt::stop_here(&path.display().to_string())?;
    println!("{}: FMU-only system '{}'", path.display(), system.name);
    for line in system.describe() {
        println!("  {line}");
    }
    let warned = system.warnings().len();
    if strict && warned > 0 {
        return Err(Failure::Input(super::warnings::strict_refusal(&path.display().to_string(), warned, "check")));
    }
    Ok(())
}

pub fn graph(path: &Path) -> Result<(), Failure> {
    let system = FmuSystem::load(path)?;
    print!("{}", system.to_dot());
    Ok(())
}
