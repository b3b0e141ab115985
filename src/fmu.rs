//! `stiction fmu ...`: export the gear and friction models as FMUs; describe any FMU.

use clap::{Subcommand, ValueEnum};
use std::path::PathBuf;
use stiction_fmus::find_library;

#[derive(Subcommand)]
pub enum FmuCommand {
    /// Write an .fmu: modelDescription.xml, the Linux x86-64 binary, documentation.
    Export {
        /// gear (StictionGear), friction (StictionFriction), friction-mass (StictionFrictionMass),
        /// or a system file (SYSTEM.json: any network, signal blocks and inputs included; or an
        /// .ssp: a Co-Simulation FMU of the whole system).
        model: String,
        /// FMI version: 2 or 3 (Model Exchange and/or Co-Simulation; friction-mass is Co-Simulation only).
        #[arg(long, default_value = "2", value_parser = ["2", "3"])]
        fmi: String,
        /// Interface(s) the FMU declares.
        #[arg(long, value_enum, default_value_t = Iface::Cs)]
        interface: Iface,
        /// Start value of a parameter, input or state: NAME=VALUE (repeatable). For a system:
        /// NAME=SETPATH exposes the `--set` path SETPATH as the FMU parameter NAME, its start
        /// value the file's value.
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
        /// The .fmu file to write.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Describe an .fmu: FMI version, interfaces, variables, default experiment.
    Info {
        /// The .fmu file to read.
        fmu: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Iface {
    Cs,
    Me,
    Both,
}

pub fn run(cmd: FmuCommand) -> anyhow::Result<()> {
    match cmd {
        FmuCommand::Info { fmu } => {
            super::interrupt::phase("reading the FMU");
            print!("{}", stiction_fmi_import::info(&fmu)?);
            Ok(())
        }
        FmuCommand::Export { model, fmi, interface, params, output } => {
            let iface = match interface {
                Iface::Cs => stiction::fmu_export::Interface::Cs,
                Iface::Me => stiction::fmu_export::Interface::Me,
                Iface::Both => stiction::fmu_export::Interface::Both,
            };
            let version = if fmi == "3" { 3 } else { 2 };
            let lower = model.to_ascii_lowercase();
            if lower.ends_with(".json") || lower.ends_with(".ssp") {
                if !matches!(interface, Iface::Cs) {
                    anyhow::bail!(
                        "{model}: a system is exported for Co-Simulation only (--interface cs): its implicit friction \
                         models need the stage step τ of the integrator, which a Model Exchange importer does not give"
                    );
                }
                super::interrupt::phase("exporting");
                stiction_fmi_schema::archive::sweep_once();
                let (identifier, guid) = stiction::fmu_system::export_system(
                    std::path::Path::new(&model),
                    version,
                    &params,
                    stiction::fmu_system::find_library,
                    &output,
                )
                .map_err(anyhow::Error::msg)?;
                eprintln!("wrote {} ({identifier}, FMI {fmi}, Co-Simulation, GUID {guid})", output.display());
                return Ok(());
            }
            // The .fmu is written under a temporary name and renamed when complete: a
            // signal leaves it whole or absent.
            super::interrupt::phase("exporting");
            let (identifier, guid) =
                stiction::fmu_export::export_fmu(&model, version, iface, &params, find_library, &output)
                    .map_err(anyhow::Error::msg)?;
            eprintln!(
                "wrote {} ({}, FMI {}, {}, GUID {})",
                output.display(),
                identifier,
                fmi,
                match interface {
                    Iface::Cs => "Co-Simulation",
                    Iface::Me => "Model Exchange",
                    Iface::Both => "Model Exchange + Co-Simulation",
                },
                guid
            );
            Ok(())
        }
    }
}
