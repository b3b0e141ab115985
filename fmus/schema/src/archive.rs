//! An .fmu opened safely: its modelDescription.xml read into memory with a size cap and
//! parsed, and (for running it) only the parts a run needs, `binaries/<platform>/` and
//! `resources/`, unpacked into a private temporary directory that is removed when the last
//! [`Archive`] using it is dropped, or by [`remove_all`] (the CLI's signal handler).
//!
//! A crafted archive cannot make stiction read, write or load anything outside that
//! directory: every entry name is checked before anything is unpacked (no absolute paths,
//! no `..` components, no backslashes, no drive letters, no NUL or control characters, no
//! duplicates), symbolic links and every other non-regular entry type are refused, files are
//! created exclusively (`create_new`), and every entry, the total and the compression ratio
//! are counted while decompressing, whatever the archive's headers claim ([`Limits`]).

use crate::description::ModelDescription;
use crate::vocab::{FmiVersion, Interface};
use crate::FmiError;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

/// Limits on what an .fmu may hold, each with an environment variable that raises it for
/// the rare huge FMU (a plain number of bytes / entries / levels).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Entries in the archive (`STICTION_FMU_MAX_ENTRIES`, default 10 000).
    pub entries: u64,
    /// Bytes unpacked in total (`STICTION_FMU_MAX_BYTES`, default 1 GiB).
    pub total: u64,
    /// Bytes unpacked from one entry (`STICTION_FMU_MAX_ENTRY_BYTES`, default 512 MiB).
    pub entry: u64,
    /// Uncompressed / compressed size of an entry, checked once an entry has unpacked more
    /// than 1 MiB (`STICTION_FMU_MAX_RATIO`, default 200; deflate reaches about 1000 on
    /// repeated bytes, real binaries and XML 3 to 30).
    pub ratio: u64,
    /// Bytes of modelDescription.xml (`STICTION_FMU_MAX_XML_BYTES`, default 256 MiB, about
    /// 1.5 million variables).
    pub xml: u64,
    /// Nesting depth of modelDescription.xml's elements (`STICTION_FMU_MAX_XML_DEPTH`,
    /// default 64; the FMI schemas need 6).
    pub xml_depth: u64,
}

/// Entries below this size are never refused for their compression ratio.
const RATIO_FLOOR: u64 = 1 << 20;

impl Default for Limits {
    fn default() -> Limits {
        Limits { entries: 10_000, total: 1 << 30, entry: 512 << 20, ratio: 200, xml: 256 << 20, xml_depth: 64 }
    }
}

/// (field, environment variable) of every limit, for messages and the README.
pub const LIMIT_VARIABLES: [(&str, &str); 6] = [
    ("entries", "STICTION_FMU_MAX_ENTRIES"),
    ("total", "STICTION_FMU_MAX_BYTES"),
    ("entry", "STICTION_FMU_MAX_ENTRY_BYTES"),
    ("ratio", "STICTION_FMU_MAX_RATIO"),
    ("xml", "STICTION_FMU_MAX_XML_BYTES"),
    ("xml_depth", "STICTION_FMU_MAX_XML_DEPTH"),
];

impl Limits {
    /// The defaults, raised (or lowered) by the environment variables that are set. A value
    /// that is not a positive whole number is an error naming the variable.
    pub fn from_env() -> Result<Limits, String> {
        let mut l = Limits::default();
        for (field, var) in LIMIT_VARIABLES {
            let Ok(text) = std::env::var(var) else { continue };
            let n = match text.trim().parse::<u64>() {
                Ok(n) if n > 0 => n,
                _ => return Err(format!("{var}=\"{text}\" is not a positive whole number")),
            };
            match field {
                "entries" => l.entries = n,
                "total" => l.total = n,
                "entry" => l.entry = n,
                "ratio" => l.ratio = n,
                "xml" => l.xml = n,
                _ => l.xml_depth = n,
            }
        }
        Ok(l)
    }
}

/// The name of the environment variable that raises limit `field`.
fn var_of(field: &str) -> &'static str {
    LIMIT_VARIABLES.iter().find(|(f, _)| *f == field).map_or("", |(_, v)| v)
}

/// Private directories of the archives unpacked in this process and not yet removed.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// How many extraction directories of this process are alive (an FMU is unpacked).
pub fn live() -> usize {
    LIVE.lock().map_or(0, |l| l.len())
}

/// Remove every extraction directory of this process now (for a SIGINT/SIGTERM handler that
/// is about to exit; the `Archive`s still alive find their directory gone). Returns how many
/// were removed.
pub fn remove_all() -> usize {
    let dirs: Vec<PathBuf> = LIVE.lock().map(|mut l| std::mem::take(&mut *l)).unwrap_or_default();
    dirs.iter().filter(|d| std::fs::remove_dir_all(d).is_ok()).count()
}

/// The extraction directory: registered in [`LIVE`] while it exists, removed on drop.
struct Unpacked(tempfile::TempDir);

impl Unpacked {
    fn new() -> std::io::Result<Unpacked> {
        let dir = tempfile::Builder::new().prefix("stiction-fmu-").tempdir()?;
        if let Ok(mut l) = LIVE.lock() {
            l.push(dir.path().to_path_buf());
        }
        Ok(Unpacked(dir))
    }
}

impl Drop for Unpacked {
    fn drop(&mut self) {
        if let Ok(mut l) = LIVE.lock() {
            l.retain(|d| d != self.0.path());
        }
        // TempDir's own drop removes the directory.
    }
}

/// An opened FMU.
pub struct Archive {
    /// The .fmu as the user named it (for messages).
    pub file: String,
    pub description: ModelDescription,
    /// The text of modelDescription.xml.
    pub xml: String,
    /// Every entry name of the archive, in archive order.
    pub entries: Vec<String>,
    /// `binaries/<platform>/` and `resources/` unpacked (None for [`Archive::describe`]).
    dir: Option<Unpacked>,
}

impl std::fmt::Debug for Archive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Archive")
            .field("file", &self.file)
            .field("dir", &self.dir.as_ref().map(|d| d.0.path()))
            .finish()
    }
}

/// Why an entry name is refused, if it is.
fn bad_name(name: &[u8]) -> Option<&'static str> {
    if name.is_empty() {
        return Some("an empty name");
    }
    if name.contains(&b'\\') {
        return Some("a backslash (a Windows path separator)");
    }
    if name.iter().any(|&b| b < 0x20 || b == 0x7f) {
        return Some("a control character");
    }
    if name[0] == b'/' {
        return Some("an absolute path");
    }
    if name.len() >= 2 && name[1] == b':' && name[0].is_ascii_alphabetic() {
        return Some("a drive letter");
    }
    if std::str::from_utf8(name).is_err() {
        return Some("bytes that are not UTF-8");
    }
    if name.split(|&b| b == b'/').any(|c| c == b"..") {
        return Some("a '..' component");
    }
    None
}

/// The entry count of the end-of-central-directory record (None if it is not found within
/// the last 64 KiB + 22 bytes, or is a Zip64 placeholder).
fn declared_entries(file: &mut std::fs::File, len: u64) -> Option<u64> {
    use std::io::Seek;
    let tail = len.min(22 + 0xffff);
    let mut buf = vec![0u8; tail as usize];
    file.seek(std::io::SeekFrom::Start(len - tail)).ok()?;
    file.read_exact(&mut buf).ok()?;
    file.seek(std::io::SeekFrom::Start(0)).ok()?;
    let at = (0..buf.len().saturating_sub(21)).rev().find(|&i| buf[i..i + 4] == [0x50, 0x4b, 0x05, 0x06])?;
    let total = u16::from_le_bytes([buf[at + 10], buf[at + 11]]);
    (total != 0xffff).then_some(u64::from(total))
}

/// The Unix file type bits of a mode.
const S_IFMT: u32 = 0o170000;
const S_IFREG: u32 = 0o100000;
const S_IFDIR: u32 = 0o040000;
const S_IFLNK: u32 = 0o120000;

/// Copy `from` into `to`, refusing once `limit` bytes would be exceeded or, past
/// [`RATIO_FLOOR`], once the bytes exceed `ratio` × `compressed`; `what` names the entry.
/// Returns the number of bytes copied.
fn copy_limited(
    from: &mut dyn Read,
    to: &mut dyn Write,
    what: &str,
    compressed: u64,
    budget: u64,
    limits: &Limits,
    total_so_far: u64,
) -> Result<u64, String> {
    let mut buf = vec![0u8; 64 << 10];
    let mut n: u64 = 0;
    loop {
        let k = from.read(&mut buf).map_err(|e| format!("cannot unpack {what} (corrupt zip archive?): {e}"))?;
        if k == 0 {
            return Ok(n);
        }
        n += k as u64;
        if n > budget.min(limits.entry) {
            return Err(if budget < limits.entry {
                budget_message(what, budget, limits, total_so_far)
            } else {
                format!(
                    "{what} unpacks to more than {} bytes, the limit for one entry (raise it with {}=<bytes>)",
                    limits.entry,
                    var_of("entry")
                )
            });
        }
        if n > RATIO_FLOOR && n > limits.ratio.saturating_mul(compressed.max(1)) {
            return Err(format!(
                "{what} unpacks to more than {} times its compressed size of {compressed} bytes, the limit on the \
                 compression ratio (a zip bomb?; raise it with {}=<ratio>)",
                limits.ratio,
                var_of("ratio")
            ));
        }
        to.write_all(&buf[..k]).map_err(|e| format!("cannot write {what}: {e}"))?;
    }
}

fn budget_message(what: &str, budget: u64, limits: &Limits, total_so_far: u64) -> String {
    if budget == limits.xml {
        format!(
            "{what} is larger than {} bytes, the limit on modelDescription.xml (raise it with {}=<bytes>)",
            limits.xml,
            var_of("xml")
        )
    } else {
        format!(
            "the archive unpacks to more than {} bytes in total ({total_so_far} before {what}), the limit on an FMU's \
             size (raise it with {}=<bytes>)",
            limits.total,
            var_of("total")
        )
    }
}

impl Archive {
    /// Open `path` for running: read and parse modelDescription.xml, then unpack
    /// `binaries/<platform>/` and `resources/` into a private directory. `shown` is how
    /// messages name the file. Limits come from [`Limits::from_env`].
    pub fn open(path: &Path, shown: &str) -> Result<Archive, FmiError> {
        let limits = Limits::from_env().map_err(|e| FmiError::file(shown, e))?;
        Archive::open_with(path, shown, &limits, true)
    }

    /// Open `path` only to describe it: modelDescription.xml is read into memory (with the
    /// size cap), nothing is written to disk.
    pub fn describe(path: &Path, shown: &str) -> Result<Archive, FmiError> {
        let limits = Limits::from_env().map_err(|e| FmiError::file(shown, e))?;
        Archive::open_with(path, shown, &limits, false)
    }

    /// [`Archive::open`] once per FMU file and process: components that name the same .fmu
    /// (the same file, unchanged) share one unpacked copy while any of them is alive.
    pub fn shared(path: &Path, shown: &str) -> Result<Arc<Archive>, FmiError> {
        type Key = (PathBuf, u64, Option<std::time::SystemTime>);
        static CACHE: Mutex<Vec<(Key, Weak<Archive>)>> = Mutex::new(Vec::new());
        let key: Option<Key> = std::fs::canonicalize(path)
            .ok()
            .and_then(|p| std::fs::metadata(&p).ok().map(|m| (p, m.len(), m.modified().ok())));
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        cache.retain(|(_, w)| w.strong_count() > 0);
        if let Some(k) = &key {
            if let Some(a) = cache.iter().find(|(c, _)| c == k).and_then(|(_, w)| w.upgrade()) {
                return Ok(a);
            }
        }
        let a = Arc::new(Archive::open(path, shown)?);
        if let Some(k) = key {
            cache.push((k, Arc::downgrade(&a)));
        }
        Ok(a)
    }

    /// Open with explicit limits; `unpack`: also unpack the binaries and resources.
    pub fn open_with(path: &Path, shown: &str, limits: &Limits, unpack: bool) -> Result<Archive, FmiError> {
        let fail = |msg: String| FmiError::file(shown, msg);
        let meta = std::fs::metadata(path).map_err(|e| fail(format!("cannot open the FMU: {e}")))?;
        if !meta.is_file() {
            return Err(fail("is not a file (an .fmu is a zip archive)".to_string()));
        }
        let mut file = std::fs::File::open(path).map_err(|e| fail(format!("cannot open the FMU: {e}")))?;
        let declared = declared_entries(&mut file, meta.len());
        let mut zip = zip::ZipArchive::new(std::io::BufReader::new(file))
            .map_err(|e| fail(format!("not a valid FMU (zip archive): {e}")))?;
        // The zip crate keeps one entry per name: more records than names means a name
        // appears twice (which copy an unpacker keeps differs between tools).
        if declared.is_some_and(|n| n != zip.len() as u64) {
            return Err(fail(format!(
                "refused: the archive's directory lists {} entries under {} names (a name appears twice)",
                declared.unwrap_or(0),
                zip.len()
            )));
        }
        if zip.len() as u64 > limits.entries {
            return Err(fail(format!(
                "the archive has {} entries, more than the limit of {} (raise it with {}=<count>)",
                zip.len(),
                limits.entries,
                var_of("entries")
            )));
        }
        // Check every entry before anything is read.
        let mut entries = Vec::with_capacity(zip.len());
        let mut seen = std::collections::HashSet::new();
        let mut starts = std::collections::HashMap::new();
        let mut md_index = None;
        for i in 0..zip.len() {
            let e = zip.by_index_raw(i).map_err(|e| fail(format!("not a valid FMU (zip archive): {e}")))?;
            let raw = e.name_raw();
            let shown_name = String::from_utf8_lossy(raw).into_owned();
            if let Some(why) = bad_name(raw) {
                return Err(fail(format!("refused: the archive entry {shown_name:?} has {why}")));
            }
            let kind = e.unix_mode().map(|m| m & S_IFMT);
            if e.is_symlink() || kind == Some(S_IFLNK) {
                return Err(fail(format!("refused: the archive entry {shown_name:?} is a symbolic link")));
            }
            if let Some(k) = kind {
                if k != 0 && k != S_IFREG && k != S_IFDIR {
                    return Err(fail(format!(
                        "refused: the archive entry {shown_name:?} is not a regular file or directory (Unix file type {k:o})"
                    )));
                }
            }
            if kind == Some(S_IFDIR) && (!e.is_dir() || e.size() > 0) {
                return Err(fail(format!(
                    "refused: the archive entry {shown_name:?} is a directory by its Unix mode but a file by its name or size"
                )));
            }
            if e.encrypted() {
                return Err(fail(format!("refused: the archive entry {shown_name:?} is encrypted")));
            }
            // Zip has no hard-link entry type; the nearest thing, two directory records
            // pointing at one stored file (also the trick of overlapping-entry zip bombs),
            // is refused.
            if let Some(first) = starts.insert(e.header_start(), i) {
                let other = entries.get(first).cloned().unwrap_or_default();
                return Err(fail(format!(
                    "refused: the archive entry {shown_name:?} shares its data with {other:?} (two names for one stored file, like a hard link)"
                )));
            }
            let name = shown_name.trim_end_matches('/').to_string();
            if !seen.insert(name.clone()) {
                return Err(fail(format!("refused: the archive holds {shown_name:?} twice")));
            }
            if name == "modelDescription.xml" && !e.is_dir() {
                md_index = Some(i);
            }
            entries.push(shown_name);
        }
        let Some(md_index) = md_index else {
            return Err(fail("modelDescription.xml is missing from the archive".to_string()));
        };
        // modelDescription.xml, into memory with its cap.
        let mut xml = Vec::new();
        {
            // The declared size, within the cap, saves the copies of a growing buffer.
            let declared = zip.by_index_raw(md_index).map(|e| e.size()).unwrap_or(0);
            xml.reserve(declared.min(limits.xml) as usize);
            let mut e = zip.by_index(md_index).map_err(|e| fail(format!("cannot unpack modelDescription.xml: {e}")))?;
            let c = e.compressed_size();
            copy_limited(&mut e, &mut xml, "modelDescription.xml", c, limits.xml, limits, 0).map_err(fail)?;
        }
        let xml = String::from_utf8(xml).map_err(|_| fail("modelDescription.xml is not UTF-8 text".to_string()))?;
        let description = ModelDescription::parse_with(&xml, limits.xml_depth)
            .map_err(|e| fail(format!("modelDescription.xml does not parse: {e}")))?;
        let mut archive = Archive { file: shown.to_string(), description, xml, entries, dir: None };
        if !unpack {
            return Ok(archive);
        }
        let dir =
            Unpacked::new().map_err(|e| fail(format!("cannot create a temporary directory to unpack the FMU: {e}")))?;
        let platform = format!("binaries/{}/", archive.description.version.platform());
        let mut total: u64 = 0;
        for i in 0..zip.len() {
            let name = archive.entries[i].clone();
            if !(name.starts_with(&platform) || name.starts_with("resources/")) {
                continue;
            }
            let mut e = zip.by_index(i).map_err(|e| fail(format!("cannot unpack {name}: {e}")))?;
            let target = dir.0.path().join(name.trim_end_matches('/'));
            if e.is_dir() {
                std::fs::create_dir_all(&target).map_err(|e| fail(format!("cannot unpack {name}: {e}")))?;
                continue;
            }
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|e| fail(format!("cannot unpack {name}: {e}")))?;
            }
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&target)
                .map_err(|e| fail(format!("cannot unpack {name}: {e}")))?;
            let c = e.compressed_size();
            let budget = limits.total.saturating_sub(total);
            let n = copy_limited(&mut e, &mut out, &name, c, budget, limits, total).map_err(fail)?;
            total += n;
        }
        archive.dir = Some(dir);
        Ok(archive)
    }

    /// The unpacked directory (empty for an archive opened with [`Archive::describe`]).
    pub fn dir(&self) -> &Path {
        self.dir.as_ref().map_or(Path::new(""), |d| d.0.path())
    }

    /// `resources/` of the unpacked FMU.
    pub fn resources(&self) -> PathBuf {
        self.dir().join("resources")
    }

    /// Path of the Linux x86-64 binary for `interface`, checked to be a file inside the
    /// extraction directory (canonicalised). The error lists the binaries the archive holds.
    pub fn binary(&self, interface: Interface) -> Result<PathBuf, FmiError> {
        let md = &self.description;
        let id = md.identifier(interface).ok_or_else(|| {
            FmiError::file(&self.file, format!("the FMU does not declare the {} interface", interface.label()))
        })?;
        let Some(dir) = &self.dir else {
            return Err(FmiError::file(&self.file, "the FMU was opened to be described, not run"));
        };
        let rel = format!("binaries/{}/{id}.so", md.version.platform());
        let path = dir.0.path().join(&rel);
        if path.is_file() {
            let inside = std::fs::canonicalize(dir.0.path())
                .and_then(|d| std::fs::canonicalize(&path).map(|p| p.starts_with(&d)))
                .unwrap_or(false);
            if !inside {
                return Err(FmiError::file(&self.file, format!("refused: {rel} resolves outside the unpacked FMU")));
            }
            return Ok(path);
        }
        Err(FmiError::file(
            &self.file,
            format!(
                "{rel} is not in the archive: no Linux x86-64 binary for FMI {} (the archive's binaries: {})",
                md.version.label(),
                self.binaries().join(", ")
            ),
        ))
    }

    /// `<platform>/<file>` of every file under binaries/ in the archive, or "none".
    pub fn binaries(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .entries
            .iter()
            .filter_map(|e| e.strip_prefix("binaries/"))
            .filter(|rest| rest.contains('/') && !rest.ends_with('/'))
            .map(str::to_string)
            .collect();
        out.sort();
        if out.is_empty() {
            out.push("none".to_string());
        }
        out
    }

    /// The version-specific platform directory name, for messages.
    pub fn platform(&self) -> &'static str {
        let v: FmiVersion = self.description.version;
        v.platform()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_names_are_checked() {
        for (name, why) in [
            ("/etc/passwd", "absolute"),
            ("../x", "'..'"),
            ("resources/../../x", "'..'"),
            ("binaries\\..\\x.so", "backslash"),
            ("C:/x", "drive"),
            ("a\0b", "control"),
            ("", "empty"),
        ] {
            assert!(bad_name(name.as_bytes()).is_some_and(|w| w.contains(why)), "{name:?}");
        }
        for ok in ["modelDescription.xml", "resources/a..b", "binaries/linux64/M.so", "resources/./x"] {
            assert_eq!(bad_name(ok.as_bytes()), None, "{ok}");
        }
    }
}
