//! The one loading pipeline (lib/src/pipeline.rs): the dialect of a file is decided in one
//! place, the file is read once into a document, edits name their option, and every
//! command's entry (`stiction::open`) gives the same system as the document read by hand.

use std::path::{Path, PathBuf};
use stiction::pipeline::{Dialect, Document, FmuOptions, Opt, Source};
use stiction::Options;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(name)
}

#[test]
fn the_dialect_is_decided_from_the_file() {
    assert_eq!(Source::read(&example("karnopp_fig4.json")).unwrap().dialect(), Dialect::Network);
    assert_eq!(Source::read(&example("fmu_only_gear_contact.json")).unwrap().dialect(), Dialect::FmuOnly);
    // An .fmu is not read as text: its archive is opened when the document is made.
    assert_eq!(Source::read(Path::new("no/such/file.fmu")).unwrap().dialect(), Dialect::Fmu);
    assert_eq!(Dialect::of(Path::new("x.json"), Some(r#"{"fmus": {}}"#)), Dialect::FmuOnly);
    assert_eq!(Dialect::of(Path::new("x.json"), Some(r#"{"components": {"fmus": 1}}"#)), Dialect::Network);
}

#[test]
fn a_zip_that_is_not_named_fmu_is_said_to_be_a_zip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("system.zip");
    std::fs::write(&path, b"PK\x03\x04\x14\x00\x00\x00\x08\x00\xff\xfe").unwrap();
    let e = Source::read(&path).err().expect("refused").to_string();
    assert!(e.contains("system.zip") && e.contains("a zip archive, not a JSON system file"), "{e}");
    // Named .ssp, it is an SSP package, opened (and here refused) as one.
    let ssp = dir.path().join("system.ssp");
    std::fs::copy(&path, &ssp).unwrap();
    let source = Source::read(&ssp).unwrap();
    assert_eq!(source.dialect(), Dialect::Ssp);
    let e = source.document(&Default::default()).err().expect("refused").to_string();
    assert!(e.contains("system.ssp") && e.contains("not a valid SSP"), "{e}");
    // Bytes that are neither text nor a zip say so.
    let bin = dir.path().join("noise.json");
    std::fs::write(&bin, [0xffu8, 0xfe, 0x00, 0x81, 0x92]).unwrap();
    let e = Source::read(&bin).err().expect("refused").to_string();
    assert!(
        e.contains("noise.json") && e.contains("neither a JSON system file") && e.contains("nor a zip archive"),
        "{e}"
    );
}

#[test]
fn open_equals_the_stages_by_hand_and_sets_edit_the_document() {
    let path = example("karnopp_fig4.json");
    let options = Options { sets: vec!["spring1.K=300".into()], ..Default::default() };
    let opened = stiction::open(&path, &options).unwrap().system;
    let mut doc = Document::read(&path).unwrap();
    doc.edit(Opt::Set("spring1.K=300")).unwrap();
    assert!(doc.is_edited());
    let by_hand = doc.system().unwrap().system;
    assert_eq!(opened.name, by_hand.name);
    assert_eq!(opened.columns, by_hand.columns);
    // The edit is in the document's text, and the unedited file is not changed by it.
    assert!(doc.text().contains("300"));
    let plain = Document::read(&path).unwrap();
    assert!(!plain.is_edited());
    let run = |s: stiction::framework::system::System| {
        let (mut sim, plan) = s.into_simulator(1).unwrap();
        let mut rec = stiction::framework::Recorder::default();
        sim.run(&plan, &mut rec, &mut |_| {}).unwrap();
        rec.rows.last().unwrap().clone()
    };
    let edited_end = run(opened);
    let plain_end = run(plain.system().unwrap().system);
    assert_eq!(edited_end, run(by_hand));
    assert_ne!(edited_end, plain_end, "the --set changed the system");
}

#[test]
fn an_error_at_a_path_an_edit_set_names_the_option() {
    let path = example("karnopp_fig4.json");
    let e = stiction::open(&path, &Options { sets: vec!["spring1.K=-5".into()], ..Default::default() })
        .err()
        .expect("a negative stiffness is refused")
        .to_string();
    assert!(
        e.contains("karnopp_fig4.json") && e.contains("spring1.K") && e.contains("(from --set spring1.K=-5)"),
        "{e}"
    );
    let mut doc = Document::read(&path).unwrap();
    doc.edit(Opt::Vary("spring1.K=-5")).unwrap();
    let e = doc.system().err().expect("refused").to_string();
    assert!(e.contains("(from --vary spring1.K=-5)"), "{e}");
    // A misspelt component is refused at the edit, naming the argument.
    let e = doc.edit(Opt::Set("sprin1.K=3")).unwrap_err();
    assert_eq!(e.arg, "sprin1.K=3");
    assert!(e.message.contains("spring1"), "{e}");
}

#[test]
fn fmu_options_are_refused_for_a_system_file() {
    let fmu = FmuOptions { stop_time: Some(1.0), ..Default::default() };
    let e = Source::read(&example("karnopp_fig4.json")).unwrap().document(&fmu).err().expect("refused").to_string();
    assert!(e.contains("--stop-time, --step and --interface are for X.fmu"), "{e}");
}

#[test]
fn an_fmu_only_system_is_edited_and_read_as_its_network_with_the_files_paths() {
    let path = example("fmu_only_gear_contact.json");
    let mut doc = Document::read(&path).unwrap();
    assert_eq!(doc.dialect, Dialect::FmuOnly);
    let network = doc.network_value().unwrap();
    assert!(network.get("components").is_some(), "translated into a network of signal blocks");
    doc.edit(Opt::Set("master.step=-1")).unwrap();
    let e = doc.system().err().expect("refused").to_string();
    // The error is named with the FMU-only file's own path, and the option behind it.
    assert!(e.contains("master.step") && e.contains("(from --set master.step=-1)"), "{e}");
}
