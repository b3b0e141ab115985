//! `stiction ssp ...`: systems out as SSP packages (System Structure and Parameterization),
//! the format of OpenModelica's OMSimulator and OMEdit. An .ssp is read by `stiction run
//! X.ssp` and `stiction check X.ssp` (the loading pipeline).

use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum SspCommand {
    /// Write a system as an .ssp: an FMU-only system's FMUs as components with their
    /// connections and an .ssv of start values each; a network as its system FMU (as `fmu
    /// export SYSTEM.json` writes it) with the system's inputs and outputs as connectors and
    /// its "parameters" as an .ssv. OMSimulator runs it with `OMSimulator X.ssp`.
    Export {
        /// The system file (JSON, with components or with "fmus"; or an .ssp).
        system: PathBuf,
        /// FMI version of a network's system FMU: 2 or 3.
        #[arg(long, default_value = "2", value_parser = ["2", "3"])]
        fmi: String,
        /// Edit an FMU-only system before it is written: PATH=VALUE, as `run --set` (repeatable).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<String>,
        /// The .ssp file to write.
        #[arg(short, long)]
        output: PathBuf,
    },
}

pub fn run(cmd: SspCommand) -> anyhow::Result<()> {
    match cmd {
        SspCommand::Export { system, fmi, sets, output } => {
            super::interrupt::phase("exporting");
            stiction_fmi_schema::archive::sweep_once();
            let version = if fmi == "3" { 3 } else { 2 };
            let said = stiction::ssp::export(&system, version, &sets, stiction::fmu_system::find_library, &output)
                .map_err(anyhow::Error::msg)?;
            eprintln!("{said}");
            Ok(())
        }
    }
}
