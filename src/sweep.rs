//! `stiction sweep`: a parameter study (grid or Monte Carlo) on all cores, one run per
//! core, each run single-threaded; the summary table of [`stiction::study`].

use super::Failure;
use anyhow::{anyhow, Context};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use stiction::pipeline::Document;
use stiction::study::{self, RunStatus, Study};

#[derive(clap::Args)]
pub struct SweepArgs {
    /// The system file (JSON, with components or with "fmus"), read as `run` reads it.
    system: PathBuf,
    /// A parameter and its values: NAME=v1,v2,… or NAME=start:stop:count (grid, the outer
    /// product of all --vary), or NAME=uniform(a,b) / NAME=normal(mu,sigma) with --samples.
    /// NAME as for --set (m.mass, m.init.v[0], solver.step). Repeatable.
    #[arg(long, value_name = "NAME=VALUES", required = true)]
    vary: Vec<String>,
    /// Monte Carlo: this many runs, the --vary distributions sampled per run.
    #[arg(long, value_name = "N")]
    samples: Option<usize>,
    /// Seed of the Monte Carlo draws (run i's values depend only on the seed and i).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Statistics of an output signal: SIGNAL=final,min,max,mean,rms,std,absmax,ptp,initial
    /// (SIGNAL an output label or component.signal[i]). Repeatable. Default: the final
    /// value of every output signal.
    #[arg(long, value_name = "SIGNAL=STATS")]
    outputs: Vec<String>,
    /// A fixed override of the base system, as for `run --set`. Repeatable.
    #[arg(long, value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// The summary table (.csv, or '-' for standard output). Default: <system name>-study.csv
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Keep each run's full results as DIR/run-NNNN.csv.
    #[arg(long, value_name = "DIR")]
    save_runs: Option<PathBuf>,
    /// Runs at once (default: all cores). The table is the same for any number.
    #[arg(long)]
    threads: Option<usize>,
    /// No progress bar and no summary.
    #[arg(long)]
    quiet: bool,
}

pub fn sweep(a: SweepArgs) -> Result<(), Failure> {
    super::interrupt::phase("loading");
    let input = |e: anyhow::Error| Failure::Input(e);
    let shown = a.system.display().to_string();
    let mut base = Document::read(&a.system)?;
    // Indexed once: every run clones it and applies its --vary values.
    base.index()?;
    base.edit_sets(&a.set)?;
    // The base system itself must be valid (errors name the --set argument).
    let system = base.system()?.system;
    let name = system.name.clone();
    drop(system);
    let mut st = Study::parse(&a.vary, a.samples, a.seed, &a.outputs).map_err(|e| input(e.into()))?;
    st.prepare(&base).map_err(|e| {
        if e.0.starts_with(&shown) {
            input(anyhow!("{e}"))
        } else {
            input(anyhow!("{shown}: {e}"))
        }
    })?;
    let out = a.output.unwrap_or_else(|| PathBuf::from(format!("{name}-study.csv")));
    check_table_path(&out).map_err(input)?;
    // Targets stiction must not write (stiction::outfile): exit 4 before any run.
    if out.as_os_str() != "-" {
        stiction::outfile::replaceable(&out).map_err(|e| Failure::Output(anyhow!(e)))?;
    }
    if let Some(dir) = &a.save_runs {
        if std::fs::symlink_metadata(dir).is_ok_and(|m| !m.file_type().is_dir()) {
            return Err(Failure::Output(anyhow!(
                "--save-runs {}: is not a directory (a file, device or symbolic link)",
                dir.display()
            )));
        }
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create directory {}", dir.display()))
            .map_err(input)?;
        st.save_runs = Some(dir.clone());
    }
    let threads = match a.threads {
        Some(n) => stiction_framework::system::check_threads(n, "--threads")?,
        None => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    };
    let n = st.runs();
    let bar = (!a.quiet && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new(n as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} runs, ETA {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    });
    let started = std::time::Instant::now();
    let progress = |done: usize| {
        if let Some(b) = &bar {
            b.set_position(done as u64);
        }
    };
    super::interrupt::phase("sweeping");
    let rows = st.run_range(&base, 0..n, threads, &progress);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if let Some((sig, code)) = super::interrupt::received() {
        // The runs that ended before the signal, each a whole row; the others are left out.
        let done: Vec<study::Row> = rows.into_iter().filter(|r| r.status != RunStatus::Interrupted).collect();
        write_table(&st, &done, &out).map_err(Failure::Output)?;
        let to = if out.as_os_str() == "-" { "standard output".into() } else { out.display().to_string() };
        eprintln!(
            "{shown}: interrupted by {sig} while sweeping; the {} of {n} runs that ended are in {to}",
            done.len()
        );
        return Err(Failure::Interrupted(code));
    }
    write_table(&st, &rows, &out).map_err(Failure::Output)?;
    let failed = rows.iter().filter(|r| r.status == RunStatus::Failed).count();
    if !a.quiet {
        let to = if out.as_os_str() == "-" { "standard output".into() } else { out.display().to_string() };
        eprintln!(
            "{name}: {n} run(s) ({failed} failed) in {:.2} s on {threads} thread(s) -> {to}",
            started.elapsed().as_secs_f64()
        );
        if let Some(r) = rows.iter().find(|r| r.status == RunStatus::Failed) {
            eprintln!("first failure, run {}: {}", r.run, r.message);
        }
    }
    Ok(())
}

/// The table's format is known from its extension before any run.
fn check_table_path(out: &Path) -> anyhow::Result<()> {
    if out.as_os_str() == "-" {
        return Ok(());
    }
    match out.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("csv") => Ok(()),
        other => Err(anyhow!(
            "{}: the study table is written as .csv (or '-' for standard output), not {}",
            out.display(),
            other.map(|e| format!(".{e}")).unwrap_or_else(|| "a file without extension".into())
        )),
    }
}

fn write_table(st: &Study, rows: &[study::Row], out: &Path) -> anyhow::Result<()> {
    if out.as_os_str() == "-" {
        return Ok(study::write_csv(st, rows, std::io::stdout().lock())?);
    }
    // Whole or not at all, never over a device or link (stiction::outfile).
    let mut f = stiction::outfile::OutFile::create(out).map_err(|e| anyhow!(e))?;
    study::write_csv(st, rows, std::io::BufWriter::new(&mut f))
        .with_context(|| format!("cannot write {}", out.display()))?;
    f.commit().map_err(|e| anyhow!(e))
}
