//! A generated corpus of crafted FMUs (what a hostile or careless supplier could send): every
//! case must end with exit code 2 and a message saying what was refused, read nothing outside
//! the archive (a secret file next to it never shows up in the output), write nothing outside
//! the private extraction directory, load no library from outside (a library whose
//! constructor would leave a marker file stays unloaded), stay within a memory cap
//! (`ulimit -v`) and a time bound, and leave no extraction directory behind (every run gets
//! its own empty TMPDIR, checked empty afterwards).
//!
//! The archives are written byte by byte by [`RawZip`] (stored entries, any name, any Unix
//! mode), so that names and entry types the zip crate's writer would refuse can be made; the
//! zip bombs use the zip crate's deflate.

#[path = "fixtures/many_variables.rs"]
mod many_variables;
use many_variables::many_variables;
use serde_json::json;
use std::io::Write;
mod common;
use common::crc32;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A zip archive of stored (uncompressed) entries with raw names and Unix modes; an entry
/// may share the data of an earlier one (`shares`).
#[derive(Default)]
struct RawZip {
    entries: Vec<(Vec<u8>, Vec<u8>, u32)>,
    /// Per entry: the earlier entry whose local header and data its directory record points
    /// at (no bytes of its own), if any.
    shares: Vec<Option<usize>>,
}

impl RawZip {
    fn add(mut self, name: impl AsRef<[u8]>, data: impl AsRef<[u8]>, mode: u32) -> RawZip {
        self.entries.push((name.as_ref().to_vec(), data.as_ref().to_vec(), mode));
        self.shares.push(None);
        self
    }

    /// A directory record `name` pointing at entry `target`'s local header and data: two
    /// names for one stored file, the nearest a zip comes to a hard link (and the trick of
    /// overlapping-entry zip bombs).
    fn hard_link(mut self, name: impl AsRef<[u8]>, target: usize) -> RawZip {
        let data = self.entries[target].1.clone();
        self.entries.push((name.as_ref().to_vec(), data, 0o100644));
        self.shares.push(Some(target));
        self
    }

    fn file(self, name: impl AsRef<[u8]>, data: impl AsRef<[u8]>) -> RawZip {
        self.add(name, data, 0o100644)
    }

    fn write(&self, path: &Path) {
        let mut out = Vec::new();
        let mut central = Vec::new();
        let mut offsets = Vec::new();
        for (k, (name, data, mode)) in self.entries.iter().enumerate() {
            let shared = self.shares.get(k).copied().flatten();
            let offset = match shared {
                Some(j) => offsets[j],
                None => out.len() as u32,
            };
            offsets.push(offset);
            let crc = crc32(data);
            let n = data.len() as u32;
            let mut local = Vec::new();
            local.extend(0x0403_4b50u32.to_le_bytes());
            local.extend(20u16.to_le_bytes()); // version needed
            local.extend(0u16.to_le_bytes()); // flags
            local.extend(0u16.to_le_bytes()); // stored
            local.extend([0u8; 4]); // time, date
            local.extend(crc.to_le_bytes());
            local.extend(n.to_le_bytes());
            local.extend(n.to_le_bytes());
            local.extend((name.len() as u16).to_le_bytes());
            local.extend(0u16.to_le_bytes());
            local.extend(name);
            if shared.is_none() {
                out.extend(&local);
                out.extend(data);
            }
            central.extend(0x0201_4b50u32.to_le_bytes());
            central.extend((0x0300u16 | 20).to_le_bytes()); // made by Unix
            central.extend(20u16.to_le_bytes());
            central.extend(0u16.to_le_bytes());
            central.extend(0u16.to_le_bytes());
            central.extend([0u8; 4]);
            central.extend(crc.to_le_bytes());
            central.extend(n.to_le_bytes());
            central.extend(n.to_le_bytes());
            central.extend((name.len() as u16).to_le_bytes());
            central.extend([0u8; 8]); // extra, comment, disk, internal attributes
            central.extend((mode << 16).to_le_bytes());
            central.extend(offset.to_le_bytes());
            central.extend(name);
        }
        let cd_offset = out.len() as u32;
        out.extend(&central);
        out.extend(0x0605_4b50u32.to_le_bytes());
        out.extend([0u8; 4]);
        let count = self.entries.len() as u16;
        out.extend(count.to_le_bytes());
        out.extend(count.to_le_bytes());
        out.extend((central.len() as u32).to_le_bytes());
        out.extend(cd_offset.to_le_bytes());
        out.extend(0u16.to_le_bytes());
        std::fs::write(path, out).unwrap();
    }
}

/// A valid FMI 2.0 Co-Simulation description with model identifier `id`: input f, output x.
fn description(id: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<fmiModelDescription fmiVersion="2.0" modelName="M" guid="g">
  <CoSimulation modelIdentifier="{id}"/>
  <ModelVariables>
    <ScalarVariable name="f" valueReference="0" causality="input"><Real start="0"/></ScalarVariable>
    <ScalarVariable name="x" valueReference="1" causality="output"><Real/></ScalarVariable>
  </ModelVariables>
  <ModelStructure><Outputs><Unknown index="2"/></Outputs></ModelStructure>
</fmiModelDescription>"#
    )
}

/// The work directory of one case: `tmp/` (the run's TMPDIR), `secret.txt` (must never be
/// read), `outside/` (must stay empty) and `evil.so` (must never be loaded: its constructor
/// writes `outside/loaded`).
struct Work {
    root: tempfile::TempDir,
}

impl Work {
    fn new() -> Work {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("tmp")).unwrap();
        std::fs::create_dir(root.path().join("outside")).unwrap();
        std::fs::write(root.path().join("secret.txt"), "SECRET-CONTENT-42").unwrap();
        let w = Work { root };
        let marker = w.path("outside/loaded");
        let src = w.path("evil.c");
        std::fs::write(
            &src,
            format!(
                "#include <stdio.h>\n__attribute__((constructor)) static void mark(void) {{ FILE *f = fopen(\"{}\", \"w\"); if (f) fclose(f); }}\nint fmi2GetVersion(void) {{ return 0; }}\n",
                marker.display()
            ),
        )
        .unwrap();
        cc(&src, &w.path("evil.so"));
        w
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    /// `stiction ARGS` with TMPDIR = tmp/ and an address-space cap of 2 GiB; returns (exit
    /// code, stdout + stderr, wall time).
    fn stiction(&self, args: &[&str]) -> (i32, String, Duration) {
        self.stiction_env(args, &[])
    }

    /// [`Work::stiction`] with extra environment variables.
    fn stiction_env(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, String, Duration) {
        let bin = env!("CARGO_BIN_EXE_stiction");
        let mut script = format!("ulimit -v 2097152; exec '{bin}'");
        for a in args {
            script.push_str(&format!(" '{a}'"));
        }
        let t = Instant::now();
        let out = Command::new("sh")
            .arg("-c")
            .arg(&script)
            .env("TMPDIR", self.path("tmp"))
            .envs(env.iter().copied())
            .current_dir(self.root.path())
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        (out.status.code().unwrap_or(-1), text, t.elapsed())
    }

    /// Run `case` as `fmu info` and, with a system using it as a component, as `run`; both
    /// must refuse with exit code 2 and a message containing `needle`, within `limit`.
    fn refuse(&self, fmu: &Path, needle: &str, info_too: bool) {
        self.refuse_env(fmu, needle, info_too, &[])
    }

    /// [`Work::refuse`] with extra environment variables (lowered limits).
    fn refuse_env(&self, fmu: &Path, needle: &str, info_too: bool, env: &[(&str, &str)]) {
        let fmu_s = fmu.to_str().unwrap();
        if info_too {
            let (code, text, took) = self.stiction_env(&["fmu", "info", fmu_s], env);
            self.assert_refused("fmu info", fmu, code, &text, took, needle);
        }
        let system = json!({
            "solver": {"method": "euler", "step": 1e-3, "stop_time": 0.01},
            "components": {
                "m": {"type": "fmu", "path": fmu_s, "role": "admittance",
                      "inputs": {"force": "f"}, "outputs": {"position": "x"}},
                "g": {"type": "force_source", "force": 1.0}
            },
            "connections": [{"from": "g.body", "to": "m.port"}]
        });
        let json_path = self.path("system.json");
        std::fs::write(&json_path, serde_json::to_string(&system).unwrap()).unwrap();
        let csv = self.path("out.csv");
        let (code, text, took) =
            self.stiction_env(&["run", json_path.to_str().unwrap(), "-o", csv.to_str().unwrap(), "--quiet"], env);
        self.assert_refused("run", fmu, code, &text, took, needle);
    }

    fn assert_refused(&self, what: &str, fmu: &Path, code: i32, text: &str, took: Duration, needle: &str) {
        let case = fmu.file_name().unwrap().to_string_lossy();
        assert_eq!(code, 2, "{case} ({what}): exit code {code}, expected 2:\n{text}");
        assert!(text.contains(needle), "{case} ({what}): the message does not say {needle:?}:\n{text}");
        assert!(!text.contains("SECRET-CONTENT"), "{case} ({what}): a file outside the FMU was read:\n{text}");
        assert!(!text.contains("panicked"), "{case} ({what}): panic:\n{text}");
        assert!(took < Duration::from_secs(20), "{case} ({what}): took {took:?}");
        let outside: Vec<_> = std::fs::read_dir(self.path("outside")).unwrap().collect();
        assert!(outside.is_empty(), "{case} ({what}): something was written or loaded outside: {outside:?}");
        let left: Vec<_> = std::fs::read_dir(self.path("tmp")).unwrap().collect();
        assert!(left.is_empty(), "{case} ({what}): leftover in TMPDIR: {left:?}");
        println!("{case} ({what}): exit 2 in {:.3} s: {}", took.as_secs_f64(), text.lines().next().unwrap_or(""));
    }
}

/// Compile `src` into the shared library `out`.
fn cc(src: &Path, out: &Path) {
    let o = Command::new("cc").args(["-shared", "-fPIC", "-O1", "-o"]).arg(out).arg(src).output().expect("cc");
    assert!(o.status.success(), "cc failed: {}", String::from_utf8_lossy(&o.stderr));
}

/// A real, loadable shared library that is not an FMU (what the crafted binaries start from).
fn plain_library(w: &Work) -> Vec<u8> {
    let src = w.path("plain.c");
    std::fs::write(&src, "int plain_value = 3;\nint plain(void) { return plain_value; }\n").unwrap();
    let so = w.path("plain.so");
    cc(&src, &so);
    std::fs::read(so).unwrap()
}

#[test]
fn crafted_archives_are_refused_cleanly() {
    let w = Work::new();
    let md = description("M");
    let secret = w.path("secret.txt");
    let secret = secret.to_str().unwrap();
    let lib = plain_library(&w);
    let bin = "binaries/linux64/M.so";
    let cases: Vec<(&str, RawZip, &str, bool)> = vec![
        (
            "symlinked-description",
            RawZip::default().add("modelDescription.xml", secret, 0o120777),
            "is a symbolic link",
            true,
        ),
        (
            "description-to-dev-zero",
            RawZip::default().add("modelDescription.xml", "/dev/zero", 0o120777),
            "is a symbolic link",
            true,
        ),
        (
            "symlinked-binary",
            RawZip::default().file("modelDescription.xml", &md).add(bin, w.path("evil.so").to_str().unwrap(), 0o120777),
            "is a symbolic link",
            true,
        ),
        (
            "absolute-path",
            RawZip::default().file("modelDescription.xml", &md).file(w.path("outside/abs").to_str().unwrap(), "x"),
            "an absolute path",
            true,
        ),
        (
            "dot-dot",
            RawZip::default().file("modelDescription.xml", &md).file("resources/../../outside/dotdot", "x"),
            "a '..' component",
            true,
        ),
        (
            "backslash",
            RawZip::default().file("modelDescription.xml", &md).file("resources\\..\\..\\outside\\bs", "x"),
            "a backslash",
            true,
        ),
        (
            "fifo-entry",
            RawZip::default().file("modelDescription.xml", &md).add("resources/pipe", "", 0o010644),
            "not a regular file or directory",
            true,
        ),
        (
            "duplicate-entry",
            RawZip::default().file("modelDescription.xml", &md).file("resources/a", "1").file("resources/a", "2"),
            "holds \"resources/a\" twice with different contents (records 2 and 3 of its directory: CRC-32",
            true,
        ),
        (
            "duplicate-description",
            RawZip::default().file("modelDescription.xml", &md).file("modelDescription.xml", description("Other")),
            "holds \"modelDescription.xml\" twice with different contents",
            true,
        ),
        (
            "identifier-with-path",
            RawZip::default()
                .file("modelDescription.xml", description("../../../../../../../../../../.."))
                .file(bin, &lib),
            "not a plain file name",
            true,
        ),
        (
            "identifier-to-evil",
            RawZip::default()
                .file("modelDescription.xml", description(w.path("evil").to_str().unwrap()))
                .file(bin, &lib),
            "not a plain file name",
            true,
        ),
        (
            "truncated-elf",
            RawZip::default().file("modelDescription.xml", &md).file(bin, &lib[..lib.len() / 2]),
            "truncated",
            false,
        ),
        (
            "elf-header-only",
            RawZip::default().file("modelDescription.xml", &md).file(bin, &lib[..40]),
            "truncated",
            false,
        ),
        (
            "elf-32-bit",
            RawZip::default().file("modelDescription.xml", &md).file(bin, {
                let mut b = lib.clone();
                b[4] = 1;
                b
            }),
            "32-bit",
            false,
        ),
        (
            "elf-wrong-machine",
            RawZip::default().file("modelDescription.xml", &md).file(bin, {
                let mut b = lib.clone();
                b[18] = 183; // AArch64
                b[19] = 0;
                b
            }),
            "not x86-64",
            false,
        ),
        (
            "binary-is-a-directory",
            RawZip::default()
                .file("modelDescription.xml", &md)
                .add(format!("{bin}/"), "", 0o040755)
                .file(format!("{bin}/inner"), "x"),
            "not in the archive",
            false,
        ),
        (
            "binary-is-a-script",
            RawZip::default().file("modelDescription.xml", &md).file(bin, "#!/bin/sh\ntouch outside/script\n"),
            "is a script",
            false,
        ),
        (
            "deeply-nested-xml",
            RawZip::default().file(
                "modelDescription.xml",
                format!(
                    "<fmiModelDescription fmiVersion=\"2.0\" guid=\"g\">{}{}</fmiModelDescription>",
                    "<a>".repeat(20_000),
                    "</a>".repeat(20_000)
                ),
            ),
            "STICTION_FMU_MAX_XML_DEPTH",
            true,
        ),
        (
            "many-entries",
            {
                let mut z = RawZip::default().file("modelDescription.xml", &md);
                for i in 0..10_001 {
                    z = z.file(format!("resources/{i}"), "");
                }
                z
            },
            "STICTION_FMU_MAX_ENTRIES",
            true,
        ),
        ("no-description", RawZip::default().file("resources/x", "x"), "modelDescription.xml is missing", true),
        // Zip has no hard-link entry type (tar's '1'); what comes closest, and every Unix
        // file type a mode can claim besides regular files and directories, is refused.
        (
            "hard-link-to-description",
            RawZip::default().file("modelDescription.xml", &md).hard_link("resources/copy.xml", 0),
            "shares its data with \"modelDescription.xml\"",
            true,
        ),
        (
            "hard-link-binary",
            RawZip::default().file("modelDescription.xml", &md).file("resources/lib", &lib).hard_link(bin, 1),
            "shares its data with \"resources/lib\"",
            true,
        ),
        (
            "char-device",
            RawZip::default().file("modelDescription.xml", &md).add("resources/tty", "", 0o020644),
            "not a regular file or directory (Unix file type 20000)",
            true,
        ),
        (
            "block-device",
            RawZip::default().file("modelDescription.xml", &md).add("resources/sda", "", 0o060644),
            "not a regular file or directory (Unix file type 60000)",
            true,
        ),
        (
            "socket",
            RawZip::default().file("modelDescription.xml", &md).add("resources/sock", "", 0o140644),
            "not a regular file or directory (Unix file type 140000)",
            true,
        ),
        (
            "unknown-file-type",
            RawZip::default().file("modelDescription.xml", &md).add("resources/odd", "x", 0o050644),
            "not a regular file or directory (Unix file type 50000)",
            true,
        ),
        (
            "directory-mode-with-data",
            RawZip::default().file("modelDescription.xml", &md).add(bin, &lib, 0o040755),
            "a directory by its Unix mode",
            true,
        ),
        (
            "billion-laughs-dtd",
            RawZip::default().file(
                "modelDescription.xml",
                format!(
                    "<?xml version=\"1.0\"?><!DOCTYPE d [<!ENTITY a \"aaaaaaaaaa\">{}]>{}",
                    (1..10).map(|k| format!("<!ENTITY a{k} \"{}\">", "&a;".repeat(10))).collect::<String>(),
                    description("M")
                        .replacen("<?xml version=\"1.0\"?>", "", 1)
                        .replace("modelName=\"M\"", "modelName=\"&a9;\"")
                ),
            ),
            "a DTD (<!DOCTYPE>), which is not allowed",
            true,
        ),
        (
            "unclosed-attribute",
            RawZip::default().file(
                "modelDescription.xml",
                description("M").replace("</fmiModelDescription>", &format!("<a b=\"{}", "x".repeat(100_000))),
            ),
            "syntax error: attribute value not closed",
            true,
        ),
        (
            "hostile-attributes",
            RawZip::default().file(
                "modelDescription.xml",
                description("M").replace("valueReference=\"1\"", "valueReference=\"99999999999999999999999\""),
            ),
            "valueReference",
            true,
        ),
    ];
    for (name, zip, needle, info_too) in cases {
        let fmu = w.path(&format!("{name}.fmu"));
        zip.write(&fmu);
        w.refuse(&fmu, needle, info_too);
    }
    assert!(!w.path("outside/loaded").exists(), "the library outside the FMU was loaded");
}

/// A deflated entry of `size` zero bytes (level 9: about 1000:1).
fn bomb(path: &Path, entries: &[(&str, &[u8])], bomb_name: &str, size: usize) {
    let f = std::fs::File::create(path).unwrap();
    let mut z = zip::ZipWriter::new(f);
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(9))
        .large_file(size > u32::MAX as usize);
    for (name, data) in entries {
        z.start_file(*name, opts).unwrap();
        z.write_all(data).unwrap();
    }
    z.start_file(bomb_name, opts).unwrap();
    let chunk = vec![0u8; 1 << 20];
    for _ in 0..size >> 20 {
        z.write_all(&chunk).unwrap();
    }
    z.finish().unwrap();
}

/// A 1 GiB-expanding zip (about 1 MB) is refused by the ratio limit long before 1 GiB is
/// written, for `fmu info` (bomb in modelDescription.xml) and `run` (bomb in resources/);
/// raising the ratio limit moves the refusal to the size limit, named with its variable.
#[test]
fn zip_bombs_are_refused_by_their_limits() {
    let w = Work::new();
    let md = description("M");
    let xml_bomb = w.path("xml-bomb.fmu");
    bomb(&xml_bomb, &[], "modelDescription.xml", 1 << 30);
    let size = std::fs::metadata(&xml_bomb).unwrap().len();
    println!("xml-bomb.fmu: {size} bytes, unpacks to 1 GiB");
    w.refuse(&xml_bomb, "STICTION_FMU_MAX_RATIO", true);
    let res_bomb = w.path("resource-bomb.fmu");
    bomb(&res_bomb, &[("modelDescription.xml", md.as_bytes())], "resources/zeros", 1 << 30);
    w.refuse(&res_bomb, "STICTION_FMU_MAX_RATIO", false);
    // With the ratio limit raised, the per-entry and XML size limits still hold.
    let (code, text, _) =
        w.stiction_env(&["fmu", "info", xml_bomb.to_str().unwrap()], &[("STICTION_FMU_MAX_RATIO", "100000")]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("STICTION_FMU_MAX_XML_BYTES"), "{text}");
    let left: Vec<_> = std::fs::read_dir(w.path("tmp")).unwrap().collect();
    assert!(left.is_empty(), "leftover in TMPDIR: {left:?}");
}

/// The size limits other than the ratio, lowered through their variables so that small
/// archives of incompressible (stored) data reach them: one entry larger than
/// STICTION_FMU_MAX_ENTRY_BYTES, entries that together pass STICTION_FMU_MAX_BYTES (each under
/// the per-entry limit), and a modelDescription.xml over STICTION_FMU_MAX_XML_BYTES (for `fmu
/// info` too). Each is counted while unpacking and named with its variable.
#[test]
fn size_limits_are_counted_while_unpacking() {
    let w = Work::new();
    let md = description("M");
    // Pseudo-random bytes (an LCG): stored, they do not compress.
    let noise = |n: usize, seed: u64| -> Vec<u8> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                (x >> 56) as u8
            })
            .collect()
    };
    let entry = w.path("entry-limit.fmu");
    RawZip::default().file("modelDescription.xml", &md).file("resources/big", noise(200_000, 1)).write(&entry);
    w.refuse_env(&entry, "STICTION_FMU_MAX_ENTRY_BYTES", false, &[("STICTION_FMU_MAX_ENTRY_BYTES", "100000")]);
    let total = w.path("total-limit.fmu");
    let mut z = RawZip::default().file("modelDescription.xml", &md);
    for k in 0..3 {
        z = z.file(format!("resources/part{k}"), noise(150_000, k + 2));
    }
    z.write(&total);
    w.refuse_env(&total, "STICTION_FMU_MAX_BYTES", false, &[("STICTION_FMU_MAX_BYTES", "300000")]);
    let xml = w.path("xml-limit.fmu");
    let padded = md.replace("<ModelVariables>", &format!("<!-- {} --><ModelVariables>", "p".repeat(5000)));
    RawZip::default().file("modelDescription.xml", padded).write(&xml);
    w.refuse_env(&xml, "STICTION_FMU_MAX_XML_BYTES", true, &[("STICTION_FMU_MAX_XML_BYTES", "2000")]);
}

/// `fmu info` on huge but legal descriptions: a 70 000-character variable name, and 300 000
/// variables (the time bound here is only against the old quadratic line lookup, minutes;
/// the figure is measured by the bench `fmu_info`).
#[test]
fn huge_descriptions_are_described() {
    let w = Work::new();
    let long = "v".repeat(70_000);
    let md = description("M").replace("name=\"x\"", &format!("name=\"{long}\""));
    let fmu = w.path("long-name.fmu");
    RawZip::default().file("modelDescription.xml", &md).write(&fmu);
    let (code, text, _) = w.stiction(&["fmu", "info", fmu.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains(&long));

    let fmu = w.path("many-variables.fmu");
    RawZip::default().file("modelDescription.xml", many_variables(300_000)).write(&fmu);
    let (code, text, took) = w.stiction(&["fmu", "info", fmu.to_str().unwrap()]);
    assert_eq!(code, 0, "{}", &text[..text.len().min(2000)]);
    assert!(text.contains("variables (300000)"));
    assert!(took < Duration::from_secs(30), "fmu info on 300 000 variables took {took:?}");
    println!("fmu info, 300 000 variables: {:.2} s", took.as_secs_f64());
    let left: Vec<_> = std::fs::read_dir(w.path("tmp")).unwrap().collect();
    assert!(left.is_empty(), "fmu info wrote to TMPDIR: {left:?}");
}
