//! An .fmu opened safely: its modelDescription.xml read into memory with a size cap and
//! parsed, and (for running it) only the parts a run needs, `binaries/<platform>/` and
//! `resources/`, unpacked into a private temporary directory that is removed when the last
//! [`Archive`] using it is dropped, or by [`remove_all`] (the CLI's signal handler).
//!
//! A crafted archive cannot make stiction read, write or load anything outside that
//! directory: every entry name is checked before anything is unpacked (no absolute paths,
//! no `..` components, no backslashes, no drive letters, no NUL or control characters; a name
//! listed twice only with byte-identical copies), symbolic links and every other non-regular entry type are refused, files are
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

/// (field, environment variable) of every limit, for messages and docs/reference/limits.md.
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

/// The start of every extraction directory's name.
pub const PREFIX: &str = "stiction-fmu-";

/// A process as the kernel knows it: its state letter and its start time in clock ticks
/// after boot (fields 3 and 22 of `/proc/<pid>/stat`). None if there is no such process
/// (or no /proc).
fn process_stat(pid: &str) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces or ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let start = fields.nth(18)?.parse().ok()?;
    Some((state, start))
}

/// The owner mark of this process's extraction directories, `p<pid>s<start ticks>-` (None
/// without /proc: the directories are then named `stiction-fmu-<random>` and never swept).
/// The start time tells a later process that reuses the PID from the owner.
fn owner_mark() -> Option<&'static str> {
    static MARK: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    MARK.get_or_init(|| process_stat("self").map(|(_, start)| format!("p{}s{start}-", std::process::id()))).as_deref()
}

/// Whether the extraction directory called `name` belongs to a process that is gone: its
/// mark names a PID that no longer runs, is a zombie, or now belongs to a process started
/// at another time. Unmarked names (and any doubt, e.g. no /proc) count as alive.
fn owner_is_gone(name: &str) -> bool {
    let Some(mark) = name.strip_prefix(PREFIX).and_then(|m| m.strip_prefix('p')) else { return false };
    let Some((pid, rest)) = mark.split_once('s') else { return false };
    let Some((start, _)) = rest.split_once('-') else { return false };
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) || start.parse::<u64>().is_err() {
        return false;
    }
    if process_stat("self").is_none() {
        return false;
    }
    match process_stat(pid) {
        None => true,
        Some((state, ticks)) => matches!(state, 'Z' | 'X' | 'x') || ticks.to_string() != start,
    }
}

/// Remove the extraction directories in the temporary directory whose owning process is gone
/// (it crashed, was killed with SIGKILL, or a foreign library ended it inside an FMU call),
/// never one whose owner lives (`owner_is_gone`). Returns how many were removed.
pub fn sweep() -> usize {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return 0 };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with(PREFIX) && owner_is_gone(name) && std::fs::remove_dir_all(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Wait until process `pid` has ended (gone or a zombie; at most `limit`), then [`sweep`]:
/// the reaper's job (the CLI starts one with its first unpack; it calls this when its pipe
/// from the owner closes, which happens only when the owner ends).
pub fn sweep_after(pid: u32, limit: std::time::Duration) -> usize {
    let until = std::time::Instant::now() + limit;
    let pid = pid.to_string();
    while std::time::Instant::now() < until {
        match process_stat(&pid) {
            Some((state, _)) if !matches!(state, 'Z' | 'X' | 'x') => {
                std::thread::sleep(std::time::Duration::from_millis(2))
            }
            _ => break,
        }
    }
    sweep()
}

/// [`sweep`] once per process (the first unpack runs it; the CLI also at the start of `run`).
pub fn sweep_once() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        sweep();
    });
}

/// Something to do when this process unpacks its first FMU: the CLI starts its reaper
/// there (a process that removes this process's directories after it dies, however it dies).
static ON_FIRST_UNPACK: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Register `f` to run once, when the first extraction directory of the process is made
/// (only the first registration counts).
pub fn on_first_unpack(f: fn()) {
    let _ = ON_FIRST_UNPACK.set(f);
}

/// The extraction directory: registered in [`LIVE`] while it exists, removed on drop. Its
/// name carries the owner mark ([`owner_mark`]) so that [`sweep`] can tell when the owner is gone.
struct Unpacked(tempfile::TempDir);

impl Unpacked {
    fn new() -> std::io::Result<Unpacked> {
        sweep_once();
        static FIRST: std::sync::Once = std::sync::Once::new();
        FIRST.call_once(|| {
            if let Some(f) = ON_FIRST_UNPACK.get() {
                f();
            }
        });
        let prefix = format!("{PREFIX}{}", owner_mark().unwrap_or(""));
        let dir = tempfile::Builder::new().prefix(&prefix).tempdir()?;
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
    /// Every entry name of the archive, in archive order (a name listed twice, once).
    pub entries: Vec<String>,
    /// `binaries/<platform>/` and `resources/` unpacked (None for [`Archive::describe`]).
    dir: Option<Dir>,
}

/// Where an archive's binaries and resources are: unpacked by this value (removed with it),
/// or by another process ([`Archive::unpacked_by_parent`]).
enum Dir {
    Own(Unpacked),
    Parent(PathBuf),
}

impl Dir {
    fn path(&self) -> &Path {
        match self {
            Dir::Own(u) => u.0.path(),
            Dir::Parent(p) => p,
        }
    }
}

impl std::fmt::Debug for Archive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Archive").field("file", &self.file).field("dir", &self.dir.as_ref().map(|d| d.path())).finish()
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

/// Where the central directory is, from the end-of-central-directory record (and its Zip64
/// form when the record holds placeholders).
#[derive(Clone, Copy, Debug)]
struct Directory {
    /// Records the directory lists (a name listed twice counts twice).
    records: u64,
    /// Its size in bytes and where it starts in the file.
    size: u64,
    start: u64,
    /// Bytes before the archive proper (a prefix): added to every offset the records give.
    shift: u64,
}

fn le16(b: &[u8], at: usize) -> u64 {
    u64::from(u16::from_le_bytes([b[at], b[at + 1]]))
}

fn le32(b: &[u8], at: usize) -> u64 {
    u64::from(u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]))
}

fn le64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// The central directory as the end-of-central-directory record (within the last 64 KiB +
/// 22 bytes) declares it, or its Zip64 record when it holds placeholders. `None` when no
/// record is found (the zip crate then refuses the file anyway).
fn directory(file: &mut std::fs::File, len: u64) -> Result<Option<Directory>, String> {
    use std::io::Seek;
    let tail = len.min(22 + 0xffff);
    let mut buf = vec![0u8; tail as usize];
    let io = |e: std::io::Error| format!("cannot read the archive's directory: {e}");
    file.seek(std::io::SeekFrom::Start(len - tail)).map_err(io)?;
    file.read_exact(&mut buf).map_err(io)?;
    file.seek(std::io::SeekFrom::Start(0)).map_err(io)?;
    let Some(at) = (0..buf.len().saturating_sub(21)).rev().find(|&i| buf[i..i + 4] == [0x50, 0x4b, 0x05, 0x06]) else {
        return Ok(None);
    };
    let (records, size, offset) = (le16(&buf, at + 10), le32(&buf, at + 12), le32(&buf, at + 16));
    let eocd = len - tail + at as u64;
    if records != 0xffff && size != 0xffff_ffff && offset != 0xffff_ffff {
        let start = eocd.checked_sub(size).ok_or("its directory is larger than the file")?;
        let shift = start.checked_sub(offset).ok_or("its directory is not where the archive says")?;
        return Ok(Some(Directory { records, size, start, shift }));
    }
    // Zip64: the locator (20 bytes) just before the record points at the Zip64 record.
    if at < 20 || buf[at - 20..at - 16] != [0x50, 0x4b, 0x06, 0x07] {
        return Err("its Zip64 directory locator is missing".to_string());
    }
    let at64 = le64(&buf, at - 20 + 8);
    let mut rec = [0u8; 56];
    file.seek(std::io::SeekFrom::Start(at64)).map_err(io)?;
    file.read_exact(&mut rec).map_err(|_| "its Zip64 directory record is not where the locator says".to_string())?;
    file.seek(std::io::SeekFrom::Start(0)).map_err(io)?;
    if rec[..4] != [0x50, 0x4b, 0x06, 0x06] {
        return Err("its Zip64 directory record is not where the locator says".to_string());
    }
    let (records, size, offset) = (le64(&rec, 32), le64(&rec, 40), le64(&rec, 48));
    let start = at64.checked_sub(size).ok_or("its directory is larger than the file")?;
    let shift = start.checked_sub(offset).ok_or("its directory is not where the archive says")?;
    Ok(Some(Directory { records, size, start, shift }))
}

/// One record of the central directory, as far as comparing two copies of a name needs it.
#[derive(Clone, Debug)]
struct Record {
    name: Vec<u8>,
    flags: u64,
    method: u64,
    crc: u64,
    compressed: u64,
    size: u64,
    /// The local header's offset in the file (shift included).
    header: u64,
    /// The Unix file type bits (S_IFMT) of a record made on Unix, else 0.
    kind: u32,
}

/// Every record of the central directory `d`, read straight from the file (the zip crate
/// keeps only the last record of a name). At most `d.records` records, each checked to lie
/// within the directory.
fn records(file: &mut std::fs::File, d: &Directory) -> Result<Vec<Record>, String> {
    use std::io::Seek;
    let bad = || "not a valid FMU (zip archive): its central directory is corrupt".to_string();
    file.seek(std::io::SeekFrom::Start(d.start)).map_err(|e| format!("cannot read the archive's directory: {e}"))?;
    let mut r = std::io::BufReader::new((&*file).take(d.size));
    let mut out = Vec::with_capacity(d.records.min(1 << 16) as usize);
    let mut fixed = [0u8; 46];
    for _ in 0..d.records {
        r.read_exact(&mut fixed).map_err(|_| bad())?;
        if fixed[..4] != [0x50, 0x4b, 0x01, 0x02] {
            return Err(bad());
        }
        let (n, x, c) = (le16(&fixed, 28) as usize, le16(&fixed, 30) as usize, le16(&fixed, 32) as usize);
        let mut var = vec![0u8; n + x + c];
        r.read_exact(&mut var).map_err(|_| bad())?;
        let mut rec = Record {
            name: var[..n].to_vec(),
            flags: le16(&fixed, 8),
            method: le16(&fixed, 10),
            crc: le32(&fixed, 16),
            compressed: le32(&fixed, 20),
            size: le32(&fixed, 24),
            header: le32(&fixed, 42),
            kind: if fixed[5] == 3 { (le32(&fixed, 38) as u32 >> 16) & S_IFMT } else { 0 },
        };
        // Zip64 extra field (id 1): the 8-byte values of the fields that hold 0xffffffff,
        // in the order size, compressed size, header offset.
        let mut extra = &var[n..n + x];
        while extra.len() >= 4 {
            let (id, len) = (le16(extra, 0), le16(extra, 2) as usize);
            let body = extra.get(4..4 + len).ok_or_else(bad)?;
            if id == 1 {
                let mut at = 0;
                for field in [&mut rec.size, &mut rec.compressed, &mut rec.header] {
                    if *field == 0xffff_ffff {
                        *field = le64(body.get(at..at + 8).ok_or_else(bad)?, 0);
                        at += 8;
                    }
                }
            }
            extra = &extra[4 + len..];
        }
        rec.header = rec.header.checked_add(d.shift).ok_or_else(bad)?;
        out.push(rec);
    }
    Ok(out)
}

/// The unpacked bytes of record `r`: its local header is read to find the data, which is
/// inflated (deflate) or taken as stored.
fn record_reader<'a>(file: &'a std::fs::File, r: &Record, what: &str) -> Result<Box<dyn Read + 'a>, String> {
    use std::io::Seek;
    let bad = |why: &str| format!("cannot unpack {what} (corrupt zip archive?): {why}");
    if r.flags & 1 != 0 {
        return Err(format!("refused: the archive entry {what} is encrypted"));
    }
    let mut f = file;
    let mut local = [0u8; 30];
    f.seek(std::io::SeekFrom::Start(r.header)).map_err(|e| bad(&e.to_string()))?;
    f.read_exact(&mut local).map_err(|_| bad("its local header is cut off"))?;
    if local[..4] != [0x50, 0x4b, 0x03, 0x04] {
        return Err(bad("no local header where the directory says"));
    }
    let skip = le16(&local, 26) + le16(&local, 28);
    f.seek(std::io::SeekFrom::Current(skip as i64)).map_err(|e| bad(&e.to_string()))?;
    let data = std::io::BufReader::new(f.take(r.compressed));
    match r.method {
        0 => Ok(Box::new(data)),
        8 => Ok(Box::new(flate2::bufread::DeflateDecoder::new(data))),
        m => Err(format!("refused: the archive entry {what} is listed twice and uses compression method {m}, which stiction does not compare")),
    }
}

/// Read up to `buf.len()` bytes (fewer only at the end).
fn read_full(r: &mut dyn Read, buf: &mut [u8], what: &str) -> Result<usize, String> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("cannot unpack {what} (corrupt zip archive?): {e}")),
        }
    }
    Ok(n)
}

/// Why two records of one name are not the same entry (None: byte-identical). Both are
/// unpacked side by side and compared, each counted against the limits on one entry and on
/// the compression ratio, the bytes read counted in `total` against the total limit; the
/// first record's bytes are checked against its size and CRC-32. `path` is the .fmu.
fn differ(
    path: &Path,
    a: &Record,
    b: &Record,
    what: &str,
    limits: &Limits,
    total: &mut u64,
) -> Result<Option<String>, String> {
    if a.name != b.name {
        return Ok(Some("one is a directory, the other a file".to_string()));
    }
    if a.kind != b.kind {
        return Ok(Some(format!("Unix file types {:o} and {:o}", a.kind, b.kind)));
    }
    if a.size != b.size {
        return Ok(Some(format!("{} and {} bytes", a.size, b.size)));
    }
    if a.crc != b.crc {
        return Ok(Some(format!("CRC-32 {:08x} and {:08x}", a.crc, b.crc)));
    }
    if a.header == b.header {
        return Err(format!(
            "refused: the archive entry {what} is listed twice for one stored file (two records for one local header)"
        ));
    }
    // Two handles of their own: the two copies are read side by side.
    let open = || std::fs::File::open(path).map_err(|e| format!("cannot read {what}: {e}"));
    let (fa, fb) = (open()?, open()?);
    let (mut ra, mut rb) = (record_reader(&fa, a, what)?, record_reader(&fb, b, what)?);
    let (mut ba, mut bb) = (vec![0u8; 64 << 10], vec![0u8; 64 << 10]);
    let mut crc = crc32fast::Hasher::new();
    let mut n: u64 = 0;
    loop {
        let ka = read_full(&mut ra, &mut ba, what)?;
        let kb = read_full(&mut rb, &mut bb, what)?;
        if ba[..ka.min(kb)] != bb[..ka.min(kb)] || ka != kb {
            let at = n + ba[..ka.min(kb)].iter().zip(&bb[..kb.min(ka)]).take_while(|(x, y)| x == y).count() as u64;
            return Ok(Some(format!("the same size and CRC-32, but the bytes differ from byte {at} on")));
        }
        if ka == 0 {
            break;
        }
        crc.update(&ba[..ka]);
        n += ka as u64;
        *total += 2 * ka as u64;
        if n > limits.entry {
            return Err(format!(
                "{what} unpacks to more than {} bytes, the limit for one entry (raise it with {}=<bytes>)",
                limits.entry,
                var_of("entry")
            ));
        }
        if *total > limits.total {
            return Err(format!(
                "comparing the copies of {what} unpacks more than {} bytes in total, the limit on an FMU's size \
                 (raise it with {}=<bytes>)",
                limits.total,
                var_of("total")
            ));
        }
        let smaller = a.compressed.min(b.compressed).max(1);
        if n > RATIO_FLOOR && n > limits.ratio.saturating_mul(smaller) {
            return Err(format!(
                "{what} unpacks to more than {} times its compressed size of {smaller} bytes, the limit on the \
                 compression ratio (a zip bomb?; raise it with {}=<ratio>)",
                limits.ratio,
                var_of("ratio")
            ));
        }
    }
    if n != a.size || u64::from(crc.finalize()) != a.crc {
        return Err(format!(
            "cannot unpack {what} (corrupt zip archive?): its bytes do not match the size and CRC-32 its directory gives"
        ));
    }
    Ok(None)
}

/// An archive whose directory lists some name more than once (`names` distinct names in
/// `d.records` records): accepted when every copy of a name is byte-identical to the first
/// (same name, file type, size, CRC-32 and bytes — the Reference FMUs' build lists their
/// `extra/` entries twice so), refused naming the entry when two differ (which copy an
/// unpacker keeps differs between tools).
fn check_duplicates(path: &Path, file: &mut std::fs::File, d: &Directory, limits: &Limits) -> Result<(), String> {
    let all = records(file, d)?;
    let mut first: std::collections::HashMap<&[u8], usize> = std::collections::HashMap::with_capacity(all.len());
    let mut total = 0;
    for (i, r) in all.iter().enumerate() {
        let key = r.name.strip_suffix(b"/").unwrap_or(&r.name);
        let Some(&j) = first.get(key) else {
            first.insert(key, i);
            continue;
        };
        let what = format!("{:?}", String::from_utf8_lossy(&r.name));
        if let Some(why) = differ(path, &all[j], r, &what, limits, &mut total)? {
            return Err(format!(
                "refused: the archive holds {what} twice with different contents (records {} and {} of its directory: {why})",
                j + 1,
                i + 1
            ));
        }
    }
    Ok(())
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

/// Open the zip archive at `path` and check every entry before anything is read: the count
/// within the limit, names that stay inside the archive's directory, no symbolic links,
/// devices, encrypted entries, a name listed twice or two names for one stored file.
/// Returns the archive and its entry names in archive order. Errors are messages for the
/// caller to name the file with.
fn checked_zip(path: &Path, limits: &Limits, kind: &str) -> Result<(ZipReader, Vec<String>), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot open the {kind}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("is not a file (an {} is a zip archive)", if kind == "FMU" { ".fmu" } else { ".ssp" }));
    }
    let mut file = std::fs::File::open(path).map_err(|e| format!("cannot open the {kind}: {e}"))?;
    let dir = directory(&mut file, meta.len()).map_err(|e| format!("not a valid {kind} (zip archive): {e}"))?;
    let records = dir.map_or(0, |d| d.records);
    if records > limits.entries {
        return Err(format!(
            "the archive has {records} entries, more than the limit of {} (raise it with {}=<count>)",
            limits.entries,
            var_of("entries")
        ));
    }
    let zip_file = std::fs::File::open(path).map_err(|e| format!("cannot open the {kind}: {e}"))?;
    let mut zip = zip::ZipArchive::new(std::io::BufReader::new(zip_file))
        .map_err(|e| format!("not a valid {kind} (zip archive): {e}"))?;
    // The zip crate keeps one entry per name (the last record's data): more records than
    // names means a name is listed twice, accepted only when the copies are identical.
    if let Some(d) = dir.filter(|d| d.records != zip.len() as u64) {
        check_duplicates(path, &mut file, &d, limits)?;
    }
    if zip.len() as u64 > limits.entries {
        return Err(format!(
            "the archive has {} entries, more than the limit of {} (raise it with {}=<count>)",
            zip.len(),
            limits.entries,
            var_of("entries")
        ));
    }
    // Check every entry before anything is read.
    let mut entries = Vec::with_capacity(zip.len());
    let mut seen = std::collections::HashSet::new();
    let mut starts = std::collections::HashMap::new();
    for i in 0..zip.len() {
        let e = zip.by_index_raw(i).map_err(|e| format!("not a valid {kind} (zip archive): {e}"))?;
        let raw = e.name_raw();
        let shown_name = String::from_utf8_lossy(raw).into_owned();
        if let Some(why) = bad_name(raw) {
            return Err(format!("refused: the archive entry {shown_name:?} has {why}"));
        }
        let kind = e.unix_mode().map(|m| m & S_IFMT);
        if e.is_symlink() || kind == Some(S_IFLNK) {
            return Err(format!("refused: the archive entry {shown_name:?} is a symbolic link"));
        }
        if let Some(k) = kind {
            if k != 0 && k != S_IFREG && k != S_IFDIR {
                return Err(format!(
                    "refused: the archive entry {shown_name:?} is not a regular file or directory (Unix file type {k:o})"
                ));
            }
        }
        if kind == Some(S_IFDIR) && (!e.is_dir() || e.size() > 0) {
            return Err(format!(
                "refused: the archive entry {shown_name:?} is a directory by its Unix mode but a file by its name or size"
            ));
        }
        if e.encrypted() {
            return Err(format!("refused: the archive entry {shown_name:?} is encrypted"));
        }
        // Zip has no hard-link entry type; the nearest thing, two directory records
        // pointing at one stored file (also the trick of overlapping-entry zip bombs),
        // is refused.
        if let Some(first) = starts.insert(e.header_start(), i) {
            let other = entries.get(first).cloned().unwrap_or_default();
            return Err(format!(
                "refused: the archive entry {shown_name:?} shares its data with {other:?} (two names for one stored file, like a hard link)"
            ));
        }
        let name = shown_name.trim_end_matches('/').to_string();
        if !seen.insert(name.clone()) {
            return Err(format!("refused: the archive holds {shown_name:?} twice"));
        }
        entries.push(shown_name);
    }
    Ok((zip, entries))
}

/// An opened zip archive.
type ZipReader = zip::ZipArchive<std::io::BufReader<std::fs::File>>;

/// Unpack the entries of `zip` (named `entries`, in archive order) that `wanted` selects
/// into `into`, within the limits on each entry, their compression ratio and their total.
fn unpack(
    zip: &mut ZipReader,
    entries: &[String],
    wanted: impl Fn(&str) -> bool,
    into: &Path,
    limits: &Limits,
) -> Result<(), String> {
    let mut total: u64 = 0;
    for (i, name) in entries.iter().enumerate() {
        if !wanted(name) {
            continue;
        }
        let mut e = zip.by_index(i).map_err(|e| format!("cannot unpack {name}: {e}"))?;
        let target = into.join(name.trim_end_matches('/'));
        if e.is_dir() {
            std::fs::create_dir_all(&target).map_err(|e| format!("cannot unpack {name}: {e}"))?;
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("cannot unpack {name}: {e}"))?;
        }
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
            .map_err(|e| format!("cannot unpack {name}: {e}"))?;
        let c = e.compressed_size();
        let budget = limits.total.saturating_sub(total);
        total += copy_limited(&mut e, &mut out, name, c, budget, limits, total)?;
    }
    Ok(())
}

/// An opened SSP package (System Structure and Parameterization, SSP 1.0 / 2.0): the text of
/// its SystemStructure.ssd in memory, and every other entry (the FMUs under `resources/`,
/// `.ssv` parameter files) unpacked into a private directory, removed with this value, where
/// the SSD's relative references point. The zip is checked as an .fmu is (entry names that
/// stay inside, no links or devices, size and ratio limits).
pub struct Package {
    /// The .ssp as the user named it (for messages).
    pub file: String,
    /// The text of SystemStructure.ssd.
    pub ssd: String,
    /// Every entry name, in archive order.
    pub entries: Vec<String>,
    dir: Unpacked,
}

impl Package {
    /// Open the .ssp at `path`; `shown` is how messages name it.
    pub fn open(path: &Path, shown: &str) -> Result<Package, FmiError> {
        let fail = |msg: String| FmiError::file(shown, msg);
        let limits = Limits::from_env().map_err(fail)?;
        let (mut zip, entries) = checked_zip(path, &limits, "SSP").map_err(fail)?;
        let Some(at) = entries.iter().position(|n| n == "SystemStructure.ssd") else {
            return Err(fail("SystemStructure.ssd is missing from the archive (an SSP holds its system there)".into()));
        };
        let mut ssd = Vec::new();
        {
            let mut e = zip.by_index(at).map_err(|e| fail(format!("cannot unpack SystemStructure.ssd: {e}")))?;
            let c = e.compressed_size();
            copy_limited(&mut e, &mut ssd, "SystemStructure.ssd", c, limits.xml, &limits, 0).map_err(fail)?;
        }
        let ssd = String::from_utf8(ssd).map_err(|_| fail("SystemStructure.ssd is not UTF-8 text".into()))?;
        let dir =
            Unpacked::new().map_err(|e| fail(format!("cannot create a temporary directory to unpack the SSP: {e}")))?;
        unpack(&mut zip, &entries, |n| n != "SystemStructure.ssd", dir.0.path(), &limits).map_err(fail)?;
        Ok(Package { file: shown.to_string(), ssd, entries, dir })
    }

    /// The directory the package is unpacked in (the SSD's relative references start here).
    pub fn dir(&self) -> &Path {
        self.dir.0.path()
    }
}

impl std::fmt::Debug for Package {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Package").field("file", &self.file).field("entries", &self.entries).finish()
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
        let (mut zip, entries) = checked_zip(path, limits, "FMU").map_err(fail)?;
        let md_index = entries.iter().position(|n| n == "modelDescription.xml");
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
        let wanted = |name: &str| name.starts_with(&platform) || name.starts_with("resources/");
        self::unpack(&mut zip, &archive.entries, wanted, dir.0.path(), limits).map_err(fail)?;
        archive.dir = Some(Dir::Own(dir));
        Ok(archive)
    }

    /// The archive another process opened and unpacked into `dir` (the process that runs
    /// an FMU isolated from its parent, which keeps and removes the directory): its
    /// modelDescription.xml text `xml` parsed here, `file` naming the .fmu in messages.
    pub fn unpacked_by_parent(file: &str, xml: String, dir: PathBuf) -> Result<Archive, FmiError> {
        let limits = Limits::from_env().map_err(|e| FmiError::file(file, e))?;
        let description = ModelDescription::parse_with(&xml, limits.xml_depth)
            .map_err(|e| FmiError::file(file, format!("modelDescription.xml does not parse: {e}")))?;
        Ok(Archive { file: file.to_string(), description, xml, entries: Vec::new(), dir: Some(Dir::Parent(dir)) })
    }

    /// The unpacked directory (empty for an archive opened with [`Archive::describe`]).
    pub fn dir(&self) -> &Path {
        self.dir.as_ref().map_or(Path::new(""), |d| d.path())
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
        let path = dir.path().join(&rel);
        if path.is_file() {
            let inside = std::fs::canonicalize(dir.path())
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

    /// A zip of stored entries (name, bytes) whose end record holds the Zip64 placeholders,
    /// with the Zip64 record and locator before it.
    fn zip64(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let crc = |d: &[u8]| {
            let mut h = crc32fast::Hasher::new();
            h.update(d);
            h.finalize()
        };
        let (mut out, mut central) = (Vec::new(), Vec::new());
        for (name, data) in entries {
            let offset = out.len() as u32;
            let head = |sig: u32, v: &mut Vec<u8>| {
                v.extend(sig.to_le_bytes());
                if sig == 0x0201_4b50 {
                    v.extend(20u16.to_le_bytes());
                }
                v.extend([20, 0, 0, 0, 0, 0, 0, 0, 0, 0]); // version, flags, stored, time, date
                v.extend(crc(data).to_le_bytes());
                v.extend((data.len() as u32).to_le_bytes());
                v.extend((data.len() as u32).to_le_bytes());
                v.extend((name.len() as u16).to_le_bytes());
            };
            head(0x0403_4b50, &mut out);
            out.extend([0, 0]);
            out.extend(name.as_bytes());
            out.extend(*data);
            head(0x0201_4b50, &mut central);
            central.extend([0u8; 12]);
            central.extend(offset.to_le_bytes());
            central.extend(name.as_bytes());
        }
        let (cd, n) = (out.len() as u64, entries.len() as u64);
        out.extend(&central);
        let at64 = out.len() as u64;
        out.extend(0x0606_4b50u32.to_le_bytes());
        out.extend(44u64.to_le_bytes());
        out.extend([45, 0, 45, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        out.extend(n.to_le_bytes());
        out.extend(n.to_le_bytes());
        out.extend((central.len() as u64).to_le_bytes());
        out.extend(cd.to_le_bytes());
        out.extend(0x0706_4b50u32.to_le_bytes());
        out.extend(0u32.to_le_bytes());
        out.extend(at64.to_le_bytes());
        out.extend(1u32.to_le_bytes());
        out.extend(0x0605_4b50u32.to_le_bytes());
        out.extend([0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        out.extend([0xff; 8]);
        out.extend([0, 0]);
        out
    }

    /// A Zip64 directory is read too (the check of duplicate names used to skip it): a name
    /// listed twice is accepted with identical copies and refused with different ones.
    #[test]
    fn zip64_directories_are_checked_for_duplicates() {
        let md = br#"<fmiModelDescription fmiVersion="2.0" modelName="M" guid="g"><CoSimulation modelIdentifier="M"/><ModelVariables/><ModelStructure/></fmiModelDescription>"#;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.fmu");
        let open = |bytes: Vec<u8>| {
            std::fs::write(&path, bytes).unwrap();
            Archive::open_with(&path, "m.fmu", &Limits::default(), false).map(|a| a.entries)
        };
        let same: &[(&str, &[u8])] = &[("modelDescription.xml", md), ("extra/a", b"1"), ("extra/a", b"1")];
        assert_eq!(open(zip64(same)).unwrap(), ["modelDescription.xml", "extra/a"]);
        let d = directory(&mut std::fs::File::open(&path).unwrap(), std::fs::metadata(&path).unwrap().len());
        assert_eq!(d.unwrap().map(|d| d.records), Some(3), "the Zip64 record's count");
        let differ: &[(&str, &[u8])] = &[("modelDescription.xml", md), ("extra/a", b"1"), ("extra/a", b"2")];
        let e = open(zip64(differ)).unwrap_err().to_string();
        assert!(e.contains("holds \"extra/a\" twice with different contents (records 2 and 3"), "{e}");
        // A locator that points nowhere is refused, not skipped.
        let mut bad = zip64(same);
        let at = bad.len() - 22 - 20 + 8;
        bad[at..at + 8].copy_from_slice(&7u64.to_le_bytes());
        let e = open(bad).unwrap_err().to_string();
        assert!(e.contains("Zip64 directory record is not where the locator says"), "{e}");
    }

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

    /// A directory is the owner's while the owner runs: this process's mark is alive; a PID
    /// that does not exist, or this PID with another start time (a reused PID), is gone;
    /// an unmarked or malformed name is never taken.
    #[test]
    fn owners_are_told_apart() {
        let Some(mark) = owner_mark() else { return };
        assert!(!owner_is_gone(&format!("{PREFIX}{mark}abc")));
        let (pid, start) = (std::process::id(), process_stat("self").map(|s| s.1).unwrap_or(0));
        assert!(owner_is_gone(&format!("{PREFIX}p{pid}s{}-abc", start + 1)));
        // PIDs are below 2^22 on Linux.
        assert!(owner_is_gone(&format!("{PREFIX}p999999999s1-abc")));
        for name in ["stiction-fmu-abc", "stiction-fmu-12-34", "stiction-fmu-pxs1-a", "stiction-fmu-p1s-a", "other"] {
            assert!(!owner_is_gone(name), "{name}");
        }
    }
}
