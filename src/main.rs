//! The `stiction` command line: run, check, list components, draw the network.

use anyhow::Context;
use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use stiction_framework::system::{diagnostics, Kind};
use stiction_framework::Tee;
use stiction_framework::{Diagnostic, OutputSink, Recorder};

mod exit;
mod fmu;
mod help_markdown;
mod interrupt;
mod plot;
mod ssp;
mod sweep;
mod warnings;

use exit::Failure;

#[derive(Parser)]
#[command(
    name = "stiction",
    version,
    about = "Co-simulation of mechanical systems with dry friction",
    after_long_help = exit::help()
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a system and write its output signals as CSV or MATLAB .mat.
    Run {
        /// What to run: a system file (JSON, with components or with "fmus"), or one FMU
        /// (.fmu, FMI 2.0/3.0, Co-Simulation or Model Exchange) run alone.
        system: PathBuf,
        /// Results file, its format by extension: .csv, or .mat (MATLAB v4, the layout
        /// OpenModelica writes); '-' for CSV on standard output. Default: <system name>.csv
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Units in a CSV file: none (the header is `time,q`), header (`time [s],q [m]`) or
        /// row (a second row `s,m` under the header). A .mat file always has them.
        #[arg(long, value_enum, default_value_t = UnitsArg::None, value_name = "WHERE")]
        units: UnitsArg,
        /// Also plot every output column against time (PNG or SVG by extension).
        #[arg(long)]
        plot: Option<PathBuf>,
        /// Worker threads (default: the solver's "threads", else all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Run the phases of a step in parallel from this many components on (default
        /// 4096, a contact between bodies or another frame-port impedance counting 10;
        /// smaller networks run serially, as forking costs more than it saves).
        /// Results are bit-identical either way.
        #[arg(long, value_name = "COMPONENTS")]
        parallel_threshold: Option<usize>,
        /// No progress bar and no summary (warnings are still printed).
        #[arg(long)]
        quiet: bool,
        /// Do not print `stiction check`'s warnings before the run (--strict still refuses
        /// a system that has any).
        #[arg(long)]
        no_warnings: bool,
        /// Override a value of the system: NAME=VALUE (m.mass=2, m.init.v[0]=1.5,
        /// solver.step=1e-4, output.interval=0.01); VALUE is JSON or a bare string. Repeatable.
        #[arg(long, value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// Plot only these output columns (comma-separated labels).
        #[arg(long, value_delimiter = ',', value_name = "LABELS", requires = "plot")]
        plot_signals: Vec<String>,
        /// Plot the columns on one shared axis (with a legend) instead of one panel each.
        #[arg(long, requires = "plot")]
        plot_overlay: bool,
        /// X.fmu only: stop time in s (default: the FMU's DefaultExperiment, else 1).
        #[arg(long, value_name = "SECONDS")]
        stop_time: Option<f64>,
        /// X.fmu only: step in s (default: the DefaultExperiment's, else stop time / 500).
        #[arg(long, value_name = "SECONDS")]
        step: Option<f64>,
        /// X.fmu only: cs (doStep each step) or me (modular RK4); default cs when declared.
        #[arg(long)]
        interface: Option<String>,
        /// Refuse to run a system that `stiction check` warns about (exit status 2).
        #[arg(long)]
        strict: bool,
        /// Drive a system input: NAME=FILE.csv[:COLUMN] (a table of time and value,
        /// interpolated; COLUMN defaults to NAME) or NAME=EXPR (an expression of t).
        /// Without it an input keeps its start value. Repeatable.
        #[arg(long, value_name = "NAME=FILE.csv[:COLUMN]|EXPR")]
        input: Vec<String>,
        /// Save the whole simulation's state at the end of the run (or where it was
        /// interrupted) to FILE, for --resume.
        #[arg(long, value_name = "FILE")]
        save_state: Option<PathBuf>,
        /// Continue a run from the state saved in FILE by --save-state (same system; its
        /// stop time may differ): rows continue from the saved time to the stop time.
        #[arg(long, value_name = "FILE")]
        resume: Option<PathBuf>,
    },
    /// A parameter study: grid or Monte Carlo runs on all cores, one summary row per run.
    Sweep(sweep::SweepArgs),
    /// Validate a system, summarise it and print well-posedness and stability warnings.
    Check {
        /// The system file (JSON, with components or with "fmus").
        system: PathBuf,
        /// Exit with status 2 when there are warnings.
        #[arg(long)]
        strict: bool,
        /// Override a value of the system, as for `run --set`. Repeatable.
        #[arg(long, value_name = "NAME=VALUE")]
        set: Vec<String>,
    },
    /// List every component type with its parameters, ports and signals.
    Components {
        /// Show only this type.
        name: Option<String>,
        /// Print every type as one Markdown page, by family (docs/reference/components.md).
        #[arg(long, conflicts_with = "name")]
        markdown: bool,
    },
    /// Print the JSON Schema (draft 2020-12) of system files, for editors ("$schema").
    Schema,
    /// Print the network as Graphviz DOT.
    Graph {
        /// The system file (JSON, with components or with "fmus").
        system: PathBuf,
    },
    /// Export models as FMUs (FMI 2.0 / 3.0); describe an FMU (`fmu info`).
    #[command(subcommand)]
    Fmu(fmu::FmuCommand),
    /// Write systems as SSP packages (`ssp export`); run or check an .ssp with `run`/`check`.
    #[command(subcommand)]
    Ssp(ssp::SspCommand),
    /// Internal: run one FMU instance for the stiction process that started this one
    /// (`"isolation": "process"`; stiction_fmi_import::isolate).
    #[command(name = "fmu-host", hide = true)]
    FmuHost,
    /// Internal: once process PID has ended, remove its FMU extraction directories (the
    /// reaper started with the first unpacked FMU; see `start_reaper`).
    #[command(name = "fmu-reap", hide = true)]
    FmuReap { pid: u32 },
    /// Print the `--help` of every subcommand and the exit codes as one Markdown page
    /// (docs/reference/cli.md).
    #[command(name = "help-markdown", hide = true)]
    HelpMarkdown,
}

/// Start the reaper: a `stiction fmu-reap <this pid>` process whose standard input is a pipe
/// this process holds open until it ends, however it ends (a crash, abort() or exit() inside
/// an FMU's code, SIGKILL); the reaper then removes the extraction directories this process
/// left. Its standard error is this process's, so whoever waits for that stream's end waits
/// for the clean-up too. Best effort: if it cannot start, the next run's sweep removes them.
fn start_reaper() {
    let Ok(exe) = std::env::current_exe() else { return };
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["fmu-reap", &std::process::id().to_string()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit());
    // Its own process group: a Ctrl-C at the terminal does not end it before its work.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    if let Ok(mut child) = cmd.spawn() {
        // The write end stays open until this process ends.
        std::mem::forget(child.stdin.take());
    }
}

/// The reaper's side of [`start_reaper`]: wait for the end of standard input, then for
/// process `pid` to end, then remove the directories of owners that are gone.
fn reap(pid: u32) -> ExitCode {
    let mut sink = Vec::new();
    let _ = std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut sink);
    stiction_fmi_schema::archive::sweep_after(pid, std::time::Duration::from_secs(10));
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    exit::catch_panics(main_inner)
}

/// The command; exit codes in src/exit.rs (and docs/reference/exit-codes.md).
fn main_inner() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::FmuHost => return ExitCode::from(stiction_fmi_import::isolate::serve().clamp(0, 255) as u8),
        Command::FmuReap { pid } => return reap(pid),
        _ => {}
    }
    stiction_fmi_schema::archive::on_first_unpack(start_reaper);
    // The only way to exercise the internal-error path from a test (tests/hardening.rs).
    if std::env::var_os("STICTION_TEST_INTERNAL_PANIC").is_some() {
        panic!("STICTION_TEST_INTERNAL_PANIC is set");
    }
    // SIGINT/SIGTERM stop every command in every phase (src/interrupt.rs).
    interrupt::install();
    let result = match cli.command {
        Command::Run {
            system,
            output,
            units,
            plot,
            threads,
            parallel_threshold,
            quiet,
            no_warnings,
            set,
            plot_signals,
            plot_overlay,
            stop_time,
            step,
            interface,
            strict,
            input,
            save_state,
            resume,
        } => {
            let fmu =
                stiction::Options { sets: set, fmu: stiction::pipeline::FmuOptions { stop_time, step, interface } };
            let opts = plot::Options { signals: plot_signals, overlay: plot_overlay, units: Vec::new() };
            let run_opts = RunOptions {
                threads,
                parallel_threshold,
                quiet,
                warnings: !no_warnings,
                strict,
                inputs: &input,
                save_state: save_state.as_deref(),
                resume: resume.as_deref(),
                units: units.into(),
            };
            run(&system, output, plot.map(|p| (p, opts)), &run_opts, &fmu)
        }
        Command::Sweep(args) => sweep::sweep(args),
        Command::Check { system, strict, set } => check(&system, strict, &set),
        Command::Components { markdown: true, .. } => {
            print!("{}", stiction::reference::components_markdown(&stiction::families()));
            Ok(())
        }
        Command::Components { name, .. } => components(name.as_deref()),
        Command::HelpMarkdown => {
            print!("{}", help_markdown::cli_markdown(<Cli as clap::CommandFactory>::command(), exit::CODES));
            Ok(())
        }
        Command::Graph { system } => graph(&system),
        Command::Schema => {
            println!("{:#}", stiction::schema::system_schema(&stiction::registry()));
            Ok(())
        }
        Command::Fmu(cmd) => {
            // An output the export would replace but must not (a device, FIFO, directory,
            // symbolic link): an output error (exit 4) before anything is built.
            let target = match &cmd {
                fmu::FmuCommand::Export { output, .. } => stiction::outfile::replaceable(output),
                _ => Ok(()),
            };
            match target {
                Err(e) => Err(Failure::Output(anyhow::anyhow!(e))),
                Ok(()) => fmu::run(cmd).map_err(Failure::Input),
            }
        }
        Command::Ssp(cmd) => {
            let ssp::SspCommand::Export { output, .. } = &cmd;
            match stiction::outfile::replaceable(output) {
                Err(e) => Err(Failure::Output(anyhow::anyhow!(e))),
                Ok(()) => ssp::run(cmd).map_err(Failure::Input),
            }
        }
        Command::FmuHost | Command::FmuReap { .. } => Ok(()),
    };
    exit::report(result)
}

/// The results sink of `run` by the extension of `out_path` (stiction::results): .csv,
/// .mat, or CSV on standard output for `-`; the directory is created. `step` prints CSV
/// times as exact k·T; `columns` give the units, which a CSV file states where `units` says.
fn open_csv(
    out_path: &Path,
    step: Option<f64>,
    columns: Vec<stiction::results::ColumnInfo>,
    units: stiction_framework::UnitsIn,
) -> Result<Box<dyn OutputSink>, Failure> {
    let format = stiction::results::Format::of(out_path).map_err(|e| Failure::Input(anyhow::anyhow!(e)))?;
    stiction::results::open_with_units(out_path, format, step, columns, units)
        .with_context(|| format!("cannot create {}", out_path.display()))
        .map_err(Failure::Output)
}

/// Refuse an output or plot file of an unknown format (exit 2), or one stiction must not
/// write (stiction::outfile: `-o` through a directory or link, `--plot` onto anything but a
/// new name or a regular file; exit 4), before anything runs.
fn check_out_paths(out_path: &Path, plot: Option<&Path>) -> Result<(), Failure> {
    stiction::results::Format::of(out_path).map_err(|e| Failure::Input(anyhow::anyhow!(e)))?;
    if out_path.as_os_str() != "-" {
        stiction::outfile::check_in_place(out_path).map_err(|e| Failure::Output(anyhow::anyhow!("-o {e}")))?;
    }
    if let Some(p) = plot {
        plot::check_path(p).map_err(Failure::Input)?;
        stiction::outfile::replaceable(p).map_err(|e| Failure::Output(anyhow::anyhow!("--plot {e}")))?;
    }
    Ok(())
}

/// A progress bar on standard error when it is a terminal (and not `--quiet`).
fn progress_bar(quiet: bool) -> Option<indicatif::ProgressBar> {
    (!quiet && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new(1000);
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {percent}% t = {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    })
}

/// Where `run` writes its CSV, for messages.
fn shown(out_path: &Path) -> String {
    if out_path.as_os_str() == "-" {
        "standard output".to_string()
    } else {
        out_path.display().to_string()
    }
}

/// After a run: clear the progress bar; on failure say where the rows already written are;
/// else draw the plot, if asked.
fn finish_run(
    result: stiction_framework::Result<stiction_framework::RunSummary>,
    bar: Option<indicatif::ProgressBar>,
    shown: &str,
    file: String,
    rec: &Recorder,
    name: &str,
    plot_to: Option<&(PathBuf, plot::Options)>,
) -> Result<stiction_framework::RunSummary, Failure> {
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let summary = match result {
        Ok(s) => s,
        Err(e) => {
            // A call cut short by the signal (an isolated FMU's child killed): the signal ended
            // the run, the failure is how.
            if let Some((sig, code)) = interrupt::received() {
                eprintln!("{file}: interrupted by {sig} while running: {e}; the complete rows so far are in {shown}");
                return Err(Failure::Interrupted(code));
            }
            let note = format!("{file}: rows up to the failure are in {shown}");
            return Err(Failure::from(e.in_file(file)).context(note));
        }
    };
    if let Some((sig, code)) = interrupt::received() {
        eprintln!(
            "{file}: interrupted by {sig} at t = {} s (after {} steps); {} complete rows are in {shown}",
            summary.final_time, summary.steps, summary.rows
        );
        return Err(Failure::Interrupted(code));
    }
    if let Some((p, opts)) = plot_to {
        plot::plot(rec, name, p, opts)
            .with_context(|| format!("cannot write plot {}", p.display()))
            .map_err(Failure::Output)?;
    }
    Ok(summary)
}

/// The `run` subcommand's options besides the files.
struct RunOptions<'a> {
    threads: Option<usize>,
    parallel_threshold: Option<usize>,
    /// No progress bar and no summary.
    quiet: bool,
    /// Print `check`'s warnings (not with `--no-warnings`).
    warnings: bool,
    strict: bool,
    /// `--input NAME=...`, as given.
    inputs: &'a [String],
    /// `--save-state FILE`, `--resume FILE`.
    save_state: Option<&'a Path>,
    resume: Option<&'a Path>,
    /// `--units`: where a CSV file states its columns' units.
    units: stiction_framework::UnitsIn,
}

/// The values of `run --units`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum UnitsArg {
    None,
    Header,
    Row,
}

impl From<UnitsArg> for stiction_framework::UnitsIn {
    fn from(u: UnitsArg) -> Self {
        match u {
            UnitsArg::None => stiction_framework::UnitsIn::None,
            UnitsArg::Header => stiction_framework::UnitsIn::Header,
            UnitsArg::Row => stiction_framework::UnitsIn::Row,
        }
    }
}

/// Largest state file `--resume` reads (a state is the state vector and the components' own
/// states: a few bytes per state).
const MAX_STATE_FILE: u64 = 1 << 32;

/// Read a state file for `--resume`, bounded by [`MAX_STATE_FILE`].
fn read_state(path: &Path) -> Result<Vec<u8>, Failure> {
    let fail = |e: String| Failure::Input(anyhow::anyhow!("--resume {}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    let len = file.metadata().map_err(|e| fail(e.to_string()))?.len();
    if len > MAX_STATE_FILE {
        return Err(fail(format!("{len} bytes is more than a saved state can be ({MAX_STATE_FILE})")));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_STATE_FILE + 1), &mut bytes)
        .map_err(|e| fail(e.to_string()))?;
    Ok(bytes)
}

/// Write `bytes` to `path` whole or not at all (stiction::outfile: a temporary file renamed
/// onto a new name or a regular file).
fn write_state(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    stiction::outfile::write(path, bytes).map_err(|e| Failure::Output(anyhow::anyhow!("--save-state {e}")))
}

/// `--save-state PATH` may be written (a new name or a regular file, replaced through a
/// temporary file): checked before the run, so a refused target costs no simulation.
fn check_state_target(path: &Path) -> Result<(), Failure> {
    stiction::outfile::replaceable(path).map_err(|e| Failure::Output(anyhow::anyhow!("--save-state {e}")))
}

/// What `run` prints on standard error besides errors: progress and summary (not with
/// `--quiet`), `check`'s warnings (not with `--no-warnings`).
#[derive(Clone, Copy)]
pub struct Talk {
    pub quiet: bool,
    pub warnings: bool,
}

fn run(
    path: &Path,
    output: Option<PathBuf>,
    mut plot: Option<(PathBuf, plot::Options)>,
    o: &RunOptions,
    fmu: &stiction::Options,
) -> Result<(), Failure> {
    let (threads, parallel_threshold, quiet, strict) = (o.threads, o.parallel_threshold, o.quiet, o.strict);
    let talk = Talk { quiet, warnings: o.warnings };
    interrupt::phase("loading");
    // Extraction directories left by stiction processes that are gone.
    stiction_fmi_schema::archive::sweep_once();
    // The loader builds components on rayon's global pool: with --threads, that many.
    if let Some(n) = threads {
        let n = stiction_framework::system::check_threads(n, "--threads")?;
        let _ = rayon::ThreadPoolBuilder::new().num_threads(n).build_global();
    }
    let loaded = stiction::open(path, fmu)?;
    let (system, relabel) = (loaded.system, loaded.relabel);
    // Test hook (tests/fmu_interrupt.rs): a panic with the FMU leaked, so that only the panic
    // path's `archive::remove_all()` (src/exit.rs) can remove its extraction directory.
    if stiction::pipeline::is_fmu_path(path) && std::env::var_os("STICTION_TEST_PANIC_WITH_FMU").is_some() {
        std::mem::forget(system);
        panic!("STICTION_TEST_PANIC_WITH_FMU is set");
    }
    let out_path = output.unwrap_or_else(|| PathBuf::from(format!("{}.csv", system.name)));
    check_out_paths(&out_path, plot.as_ref().map(|p| p.0.as_path()))?;
    if let Some(to) = o.save_state {
        check_state_target(to)?;
    }
    let step = system.step;
    let threads = match (threads, system.threads) {
        (Some(n), _) => stiction_framework::system::check_threads(n, "--threads")?,
        (None, Some(n)) => n,
        (None, None) => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    };
    let name = system.name.clone();
    let file = path.display().to_string();
    interrupt::phase("compiling");
    let (mut sim, plan) =
        system.into_simulator(threads).map_err(|e| Failure::from(relabel.error(e.in_file(file.clone()))))?;
    for arg in o.inputs {
        let (name, f) = stiction::inputs::parse_input_arg(arg).map_err(Failure::Input)?;
        sim.set_input(&name, f).map_err(|e| Failure::Input(anyhow::anyhow!("--input {arg}: {e}")))?;
    }
    if let Some(from) = o.resume {
        let bytes = read_state(from)?;
        sim.restore_state(&bytes).map_err(|e| Failure::from(relabel.error(e).in_file(from.display().to_string())))?;
    }
    exit::stop_here(&file)?;
    if let Some(n) = parallel_threshold {
        sim.set_parallel_threshold(n);
    }
    let phases = if sim.is_parallel() { "parallel phases" } else { "serial phases" };
    // What `stiction check` warns about (stability, well-posedness, imported FMUs), before
    // stepping: printed (also with --quiet: a warning that the results may be wrong is not
    // chatter), or (--strict) refused; with --no-warnings and without --strict nothing
    // reads them, so they are not computed.
    interrupt::phase("checking");
    let findings = if talk.warnings || strict { diagnostics(&sim, &plan) } else { Vec::new() };
    // Findings cut short by a signal are not printed as if they were all.
    exit::stop_here(&file)?;
    let warned = match (talk.warnings, strict) {
        (false, false) => 0,
        (false, true) => warnings::warnings(&findings).len(),
        (true, _) => warnings::print_before_run(&findings),
    };
    interrupt::phase("running");
    if strict && warned > 0 {
        return Err(Failure::Input(warnings::strict_refusal(&file, warned, "run", &fmu.sets)));
    }
    let columns = stiction::results::column_info(&sim, &plan);
    if let Some((_, opts)) = &mut plot {
        let labels: Vec<String> = plan.columns.iter().map(|c| c.0.clone()).collect();
        opts.columns(&labels).map_err(Failure::Input)?;
        opts.units = columns.iter().map(|c| (c.label.clone(), c.unit.clone())).collect();
    }
    let mut csv = open_csv(&out_path, Some(step), columns, o.units)?;
    // An FMU's code in this process can end it without unwinding: every row goes to the
    // operating system as it is written (docs/reference/fmu-import.md, "Crashes and hangs inside an FMU").
    csv.set_write_through(stiction_fmi_import::foreign_code_loaded());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start worker threads")
        .map_err(Failure::Input)?;
    let bar = progress_bar(quiet);
    let stop = plan.stop_time;
    let mut progress = |f: f64| {
        if let Some(b) = &bar {
            b.set_position((f * 1000.0) as u64);
            b.set_message(format!("{:.4} s", f * stop));
        }
    };
    let mut rec = Recorder::default();
    let started = std::time::Instant::now();
    let result = pool.install(|| {
        if plot.is_some() {
            let mut tee = Tee(csv.as_mut(), &mut rec);
            sim.run_until(&plan, &mut tee, &mut progress, &interrupt::requested)
        } else {
            sim.run_until(&plan, csv.as_mut(), &mut progress, &interrupt::requested)
        }
    });
    let shown = shown(&out_path);
    // The state where the run ended (the stop time, a component's stop or an interrupt).
    if let (Some(to), Ok(_)) = (o.save_state, &result) {
        let bytes = sim.save_state().map_err(|e| Failure::from(relabel.error(e.in_file(file.clone()))))?;
        write_state(to, &bytes)?;
    }
    let summary = finish_run(result, bar, &shown, file, &rec, &name, plot.as_ref())?;
    if let Some(why) = &summary.stopped {
        // A component (an FMU) asked to end the run: a normal end at its last row.
        eprintln!("{name}: stopped at {why}");
    }
    if !quiet {
        // Each located switch costs the whole network a few trial sub-steps: said, so that a
        // slow run tells why.
        let located = sim
            .contact_events()
            .filter(|c| c.located + c.unlocated > 0)
            .map(|c| {
                let whole = if c.unlocated > 0 { format!(", {} steps taken whole", c.unlocated) } else { String::new() };
                let s = if c.located == 1 { "" } else { "es" };
                format!("; {} switch{s} located ({} trial sub-steps{whole})", c.located, c.trials)
            })
            .unwrap_or_default();
        eprintln!(
            "{name}: {} steps to t = {} s in {:.2} s on {threads} thread(s), {phases}{located}; {} rows -> {shown}{}",
            summary.steps,
            summary.final_time,
            started.elapsed().as_secs_f64(),
            summary.rows,
            plot.map(|p| format!(", plot -> {}", p.0.display())).unwrap_or_default()
        );
    }
    // The run is over and its output written and closed: the process exits next, and
    // freeing the simulator piece by piece (one allocation per component and more) costs
    // more than its load did on large systems. It is left to the exit, unless an FMU is
    // unpacked: an FMU instance is freed and its extraction directory removed by `Drop`.
    drop(csv);
    if stiction_fmi_schema::archive::live() == 0 {
        std::mem::forget(sim);
    }
    Ok(())
}

fn check(path: &Path, strict: bool, sets: &[String]) -> Result<(), Failure> {
    interrupt::phase("loading");
    // An FMU-only system is checked as the network of signal blocks it translates into.
    let options = stiction::Options { sets: sets.to_vec(), ..Default::default() };
    let stiction::pipeline::Loaded { system, relabel, .. } = stiction::open(path, &options)?;
    let file = path.display().to_string();
    let mut by_type: std::collections::BTreeMap<&str, usize> = Default::default();
    for (_, t) in system.components() {
        *by_type.entry(t).or_default() += 1;
    }
    let (name, method, step, stop, interval) =
        (system.name.clone(), system.method, system.step, system.stop_time, system.interval);
    let inputs = system.inputs.clone();
    interrupt::phase("compiling");
    let (sim, plan) = system.into_simulator(1).map_err(|e| Failure::from(relabel.error(e.in_file(file.clone()))))?;
    exit::stop_here(&file)?;
    let sched = sim.schedule();
    let (na, ni) = sched.counts();
    println!("{file}: system '{name}'");
    println!("  solver: {method:?}, step {step} s, stop time {stop} s ({} steps)", (stop / step).round());
    println!("  {na} admittance(s), {ni} impedance(s), {} state(s)", sched.state_len());
    let types: Vec<String> = by_type.iter().map(|(t, n)| format!("{t} ×{n}")).collect();
    println!("  types: {}", types.join(", "));
    // Each column with its unit, as `run --units header` and the .mat file state it.
    let columns: Vec<String> = stiction::results::column_info(&sim, &plan)
        .iter()
        .map(|c| stiction_framework::units::column_label(&c.label, &c.unit))
        .collect();
    println!("  output: every {interval} s: {}", columns.join(", "));
    for (name, spec) in &inputs {
        let unit = spec.unit.as_deref().map(|u| format!(" [{u}]")).unwrap_or_default();
        let doc = spec.description.as_deref().map(|d| format!(": {d}")).unwrap_or_default();
        println!("  input: {name}{unit}, start {}{doc}", spec.start);
    }
    for (from, to) in sched.signal_connections() {
        println!("  signal connection: {from} -> {to}");
    }
    if !sched.block_names().is_empty() {
        match sim.block_order() {
            None => println!("  signal blocks: jacobi: all step from the values at t_k"),
            Some((order, cut)) => {
                println!("  signal blocks: gauss-seidel, order: {}", order.join(", "));
                for c in cut {
                    println!(
                        "  feedback: {c} carries the value of the previous communication point (its target steps first)"
                    );
                }
            }
        }
        let o = sim.block_options();
        for l in sim.block_loops() {
            println!(
                "  algebraic loop {l}: fixed-point iteration with rollback (tolerance {}, at most {} iterations)",
                o.tolerance, o.max_iterations
            );
        }
    }
    for (name, when) in sim.signals_read() {
        let when = match when {
            stiction_framework::When::Input => "a system input, at every stage",
            stiction_framework::When::Stage => "from the state, at every stage",
            stiction_framework::When::Held => "at the beginning of each step, held over it",
            stiction_framework::When::Block => "a signal block's output: exchanged at each step's beginning, held",
        };
        println!("  signal read: {name} ({when})");
    }
    interrupt::phase("checking");
    let findings = diagnostics(&sim, &plan);
    // Findings cut short by a signal are not printed as if they were all.
    exit::stop_here(&file)?;
    let mut warnings = 0;
    for d in &findings {
        match d {
            Diagnostic::Info(s) => println!("  info: {s}"),
            Diagnostic::Warning(s) => {
                warnings += 1;
                println!("  warning: {s}")
            }
        }
    }
    if warnings == 0 {
        println!("  no warnings");
    } else if strict {
        return Err(Failure::Input(warnings::strict_refusal(&file, warnings, "check", sets)));
    }
    Ok(())
}

fn components(only: Option<&str>) -> Result<(), Failure> {
    let reg = stiction::registry();
    if let Some(n) = only {
        if reg.get(n).is_none() {
            let known: Vec<&str> = reg.types().map(|t| t.name).collect();
            return Err(Failure::Input(anyhow::anyhow!("unknown component type '{n}' (known: {})", known.join(", "))));
        }
    }
    for t in reg.types().filter(|t| only.is_none_or(|n| n == t.name)) {
        let kind = match t.kind {
            Kind::Admittance => "admittance",
            Kind::Impedance => "impedance",
        };
        println!("{} ({kind}): {}", t.name, t.summary);
        println!("  parameters:");
        for p in t.params {
            let d = p.default.map(|d| format!(" = {d}")).unwrap_or_else(|| " (required)".into());
            let u = if p.unit.is_empty() { String::new() } else { format!(" [{}]", p.unit) };
            println!("    {}{u}{d}: {}", p.name, p.doc);
        }
        println!("  ports:");
        for p in t.ports {
            println!("    {} ({}): {}", p.name, p.domain, p.doc);
        }
        println!("  signals:");
        for s in t.signals {
            let len = if s.len == 0 {
                "[n]".to_string()
            } else if s.len == 1 {
                String::new()
            } else {
                format!("[{}]", s.len)
            };
            let u = if s.unit.is_empty() { String::new() } else { format!(" [{}]", s.unit) };
            let state = if s.state { " (from the state: readable at every stage)" } else { "" };
            println!("    {}{len}{u}: {}{state}", s.name, s.doc);
        }
        println!();
    }
    Ok(())
}

fn graph(path: &Path) -> Result<(), Failure> {
    let system = stiction::open(path, &stiction::Options::default())?.system;
    print!("{}", system.network.to_dot(&system.name));
    Ok(())
}
