//! Issue 33: an .fmu whose zip directory lists a name twice. The Reference FMUs as their
//! build packages them (Roberts.fmu, FMI 3.0) list their `extra/` entries twice, with
//! identical contents; FMPy and fmusim simulate them. stiction accepts such copies when they
//! are byte-identical (same name, file type, size, CRC-32 and bytes) and refuses, naming the
//! entry, copies that differ, since which copy an unpacker keeps differs between tools.
//!
//! The Reference FMUs cannot be downloaded here and their sources are not copied: the fixture
//! reproduces their packaging with the hand-written TimedMass test FMU
//! (tests/fixtures/timed_mass), repacked record by record with its `extra/` entries (a
//! directory, a deflated and a stored file) and its binary listed twice.

mod common;
use common::crc32;
#[path = "fixtures/timed_mass/mod.rs"]
mod timed_mass;

use serde_json::json;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One zip record as stored: name, compression method (0 stored, 8 deflate), CRC-32,
/// uncompressed size, the stored (compressed) bytes and the Unix mode.
#[derive(Clone)]
struct Rec {
    name: String,
    method: u16,
    crc: u32,
    size: u32,
    data: Vec<u8>,
    mode: u32,
}

/// The records of a zip archive as stored, read with the zip crate's raw access.
fn raw_records(bytes: &[u8]) -> Vec<Rec> {
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip archive");
    (0..z.len())
        .map(|i| {
            let mut e = z.by_index_raw(i).unwrap();
            let method = match e.compression() {
                zip::CompressionMethod::Stored => 0,
                zip::CompressionMethod::Deflated => 8,
                m => panic!("unexpected compression {m:?}"),
            };
            let mut data = Vec::new();
            e.read_to_end(&mut data).unwrap();
            Rec {
                name: e.name().to_string(),
                method,
                crc: e.crc32(),
                size: e.size() as u32,
                data,
                mode: e.unix_mode().unwrap_or(0o100644),
            }
        })
        .collect()
}

/// Write `recs` as a zip archive, record by record (names may repeat, which the zip crate's
/// writer refuses).
fn write_zip(path: &Path, recs: &[Rec]) {
    let (mut out, mut central) = (Vec::new(), Vec::new());
    for r in recs {
        let offset = out.len() as u32;
        let head = |sig: u32, v: &mut Vec<u8>| {
            v.extend(sig.to_le_bytes());
            if sig == 0x0201_4b50 {
                v.extend((0x0300u16 | 20).to_le_bytes()); // made by Unix
            }
            v.extend(20u16.to_le_bytes()); // version needed
            v.extend(0u16.to_le_bytes()); // flags
            v.extend(r.method.to_le_bytes());
            v.extend([0u8; 4]); // time, date
            v.extend(r.crc.to_le_bytes());
            v.extend((r.data.len() as u32).to_le_bytes());
            v.extend(r.size.to_le_bytes());
            v.extend((r.name.len() as u16).to_le_bytes());
        };
        head(0x0403_4b50, &mut out);
        out.extend(0u16.to_le_bytes()); // extra
        out.extend(r.name.as_bytes());
        out.extend(&r.data);
        head(0x0201_4b50, &mut central);
        central.extend([0u8; 8]); // extra, comment, disk, internal attributes
        central.extend((r.mode << 16).to_le_bytes());
        central.extend(offset.to_le_bytes());
        central.extend(r.name.as_bytes());
    }
    let cd_offset = out.len() as u32;
    out.extend(&central);
    out.extend(0x0605_4b50u32.to_le_bytes());
    out.extend([0u8; 4]);
    out.extend((recs.len() as u16).to_le_bytes());
    out.extend((recs.len() as u16).to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(cd_offset.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    std::fs::write(path, out).unwrap();
}

/// `extra/` as a build puts it into an FMU: a directory, a deflated text and a stored file.
fn extra_records(readme: &str, data: &[u8]) -> Vec<Rec> {
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let deflate = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    z.add_directory("extra/", stored).unwrap();
    z.start_file("extra/readme.txt", deflate).unwrap();
    z.write_all(readme.as_bytes()).unwrap();
    z.start_file("extra/data.bin", stored).unwrap();
    z.write_all(data).unwrap();
    raw_records(&z.finish().unwrap().into_inner())
}

const README: &str = "TimedMass, packaged as the Reference FMUs' build packages Roberts.fmu: extra/ listed twice.\n";

/// TimedMass (FMI `fmi`) repacked: its records, then `extra/`, then the copies `copies`
/// (the `extra/` records and the binary again, as a packager that adds a folder twice).
fn repacked(dir: &Path, fmi: u32, name: &str, copies: impl Fn(&[Rec], &[Rec]) -> Vec<Rec>) -> PathBuf {
    let plain = timed_mass::build(dir, fmi);
    let fmu = raw_records(&std::fs::read(&plain).unwrap());
    let extra = extra_records(README, &[7u8; 300]);
    let mut all: Vec<Rec> = fmu.iter().chain(&extra).cloned().collect();
    all.extend(copies(&fmu, &extra));
    let out = dir.join(format!("{name}-fmi{fmi}.fmu"));
    write_zip(&out, &all);
    out
}

/// The Reference-FMU packaging: every `extra/` record and the binary listed twice, the
/// copies byte-identical.
fn identical_copies(fmu: &[Rec], extra: &[Rec]) -> Vec<Rec> {
    let binary = fmu.iter().filter(|r| r.name.starts_with("binaries/")).cloned();
    extra.iter().cloned().chain(binary).collect()
}

/// `stiction args…` with TMPDIR set to `tmp`: (exit code, stdout, stderr).
fn stiction(tmp: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_stiction")).args(args).env("TMPDIR", tmp).output().expect("stiction");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// A network using `fmu` as the admittance `mass`, pushed by 1 N, stepped by RK4; writes
/// system.json into `dir` and returns its path.
fn network(dir: &Path, fmu: &Path) -> PathBuf {
    let system = json!({
        "name": "duplicates",
        "solver": {"method": "rk4", "step": 0.01, "stop_time": 1.0},
        "output": {"interval": 0.01, "signals": {"q": "mass.q", "v": "mass.v"}},
        "components": {
            "mass": {"type": "fmu", "path": fmu, "interface": "me", "role": "admittance",
                     "ports": {"body": {"force": "f", "position": "q", "velocity": "v"}}},
            "push": {"type": "force_source", "force": 1.0}
        },
        "connections": [{"from": "push.body", "to": "mass.body"}]
    });
    let path = dir.join("system.json");
    std::fs::write(&path, serde_json::to_string(&system).unwrap()).unwrap();
    path
}

/// What `fmu info`, an FMU-only run and a network run of `fmu` print: (code, stdout, stderr)
/// each, with the FMU's file name in stdout replaced by "FMU".
fn three_uses(dir: &Path, fmu: &Path) -> [(i32, String, String); 3] {
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let f = fmu.to_str().unwrap();
    let system = network(dir, fmu);
    let uses = [
        stiction(&tmp, &["fmu", "info", f]),
        stiction(&tmp, &["run", f, "--stop-time", "1", "--step", "0.01", "-o", "-", "--quiet"]),
        stiction(&tmp, &["run", system.to_str().unwrap(), "-o", "-", "--quiet"]),
    ];
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert!(left.is_empty(), "{}: extraction directories left behind: {left:?}", fmu.display());
    uses.map(|(c, o, e)| (c, o.replace(f, "FMU"), e))
}

/// Done when (issue 33): an FMU packaged like Roberts.fmu (its `extra/` entries, and here its
/// binary too, listed twice with identical contents) is described, run alone and run in a
/// network exactly as the same FMU packaged once: the same `fmu info`, the same CSV bytes,
/// and the network run follows the analytic motion (1 N on m = 2 kg plus the FMU's own
/// force pulse F = 3 N over [t1, t2)).
#[test]
fn identical_duplicate_entries_are_accepted_and_simulate() {
    let dir = tempfile::tempdir().unwrap();
    for fmi in [3, 2] {
        let once = repacked(dir.path(), fmi, "once", |_, _| Vec::new());
        let twice = repacked(dir.path(), fmi, "twice", identical_copies);
        let records = raw_records(&std::fs::read(&twice).unwrap()).len();
        let names = zip::ZipArchive::new(std::fs::File::open(&twice).unwrap()).unwrap().len();
        assert_eq!(records, names, "the zip crate sees one entry per name");
        let listed = std::fs::read(&twice).unwrap();
        let declared = u16::from_le_bytes([listed[listed.len() - 12], listed[listed.len() - 11]]) as usize;
        assert_eq!(declared, names + 4, "FMI {fmi}: the directory lists extra/ (3 records) and the binary twice");

        let a = three_uses(dir.path(), &once);
        let b = three_uses(dir.path(), &twice);
        for (what, (x, y)) in ["fmu info", "run X.fmu", "run system.json"].iter().zip(a.iter().zip(&b)) {
            assert_eq!(x.0, 0, "FMI {fmi}, {what}, packed once: exit {}:\n{}", x.0, x.2);
            assert_eq!(y.0, 0, "FMI {fmi}, {what}, duplicate entries: exit {}:\n{}", y.0, y.2);
            assert_eq!(x.1, y.1, "FMI {fmi}, {what}: the duplicate entries change the output");
            println!("FMI {fmi}, {what}: exit 0, {} lines, identical to the FMU packed once", y.1.lines().count());
        }
        // The network run: q, v at t = 1 s against the analytic motion.
        let last = b[2].1.lines().last().unwrap().split(',').map(|c| c.parse::<f64>().unwrap()).collect::<Vec<_>>();
        let (t, q, v) = (last[0], last[1], last[2]);
        let (eq, ev, ..) = timed_mass::exact(t);
        let (fq, fv) = (0.5 / timed_mass::M * t * t, 1.0 / timed_mass::M * t);
        assert!((t - 1.0).abs() < 1e-12, "ends at {t}");
        assert!((q - eq - fq).abs() < 1e-9 && (v - ev - fv).abs() < 1e-9, "FMI {fmi}: q = {q}, v = {v} at t = 1");
    }
}

/// `data` with some of its last 8 bytes changed so that the CRC-32 stays the same. For a
/// fixed length the CRC is affine in the bits: flipping the bit set D changes it by L(D),
/// linear, so any nonzero D in the kernel of L (64 bits mapped to 32) keeps it.
fn same_crc_other_bytes(data: &[u8]) -> Vec<u8> {
    let n = data.len();
    assert!(n >= 8);
    let zero = crc32(&vec![0; n]);
    let column = |i: usize| {
        let mut e = vec![0u8; n];
        e[n - 8 + i / 8] = 1 << (i % 8);
        crc32(&e) ^ zero
    };
    // Gaussian elimination over GF(2), each basis vector with the bits it combines.
    let mut basis: Vec<(u32, u64)> = Vec::new();
    for i in 0..64 {
        let (mut v, mut m) = (column(i), 1u64 << i);
        for &(b, bm) in &basis {
            if v ^ b < v {
                v ^= b;
                m ^= bm;
            }
        }
        if v == 0 {
            let mut out = data.to_vec();
            for bit in (0..64).filter(|b| m >> b & 1 == 1) {
                out[n - 8 + bit / 8] ^= 1 << (bit % 8);
            }
            return out;
        }
        basis.push((v, m));
        basis.sort_by_key(|b| std::cmp::Reverse(b.0));
    }
    unreachable!("64 vectors in 32 dimensions are dependent")
}

/// Copies that differ are refused by `fmu info`, an FMU-only run and a network run alike,
/// with exit code 2, a message naming the entry and no extraction directory left behind:
/// a different size, and (the contents compared, not only the CRC) the same size and
/// CRC-32 with other bytes.
#[test]
fn differing_duplicate_entries_are_refused_naming_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let text = README.as_bytes();
    let forged = same_crc_other_bytes(text);
    assert_ne!(forged, text);
    assert_eq!(crc32(&forged), crc32(text));
    let stored = |bytes: &[u8]| Rec {
        name: "extra/readme.txt".into(),
        method: 0,
        crc: crc32(bytes),
        size: bytes.len() as u32,
        data: bytes.to_vec(),
        mode: 0o100644,
    };
    let longer = [text, b"more\n"].concat();
    let cases: [(&str, Rec, &str); 3] = [
        ("longer", stored(&longer), "bytes)"),
        ("same-crc", stored(&forged), "the same size and CRC-32, but the bytes differ from byte"),
        ("symlink", Rec { mode: 0o120777, ..stored(text) }, "Unix file types"),
    ];
    for (name, copy, why) in cases {
        let fmu = repacked(dir.path(), 3, name, |_, _| vec![copy.clone()]);
        for (what, (code, _, stderr)) in
            ["fmu info", "run X.fmu", "run system.json"].iter().zip(three_uses(dir.path(), &fmu))
        {
            let needle = "refused: the archive holds \"extra/readme.txt\" twice with different contents";
            assert_eq!(code, 2, "{name}, {what}: exit {code}:\n{stderr}");
            assert!(
                stderr.contains(needle) && stderr.contains(why),
                "{name}, {what}: the message does not say so:\n{stderr}"
            );
            assert!(!stderr.contains("panicked"), "{name}, {what}:\n{stderr}");
            println!("{name}, {what}: exit 2: {}", stderr.lines().next().unwrap_or(""));
        }
    }
}
