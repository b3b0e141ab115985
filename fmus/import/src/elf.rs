//! Is a file a shared object the dynamic loader of this platform can map? Checked from the
//! ELF header (System V ABI, ELF-64 object file format) before `dlopen`, because `dlopen`
//! maps the file's segments as the headers describe them: a segment that extends past the
//! end of a truncated file is mapped anyway and the loader's first touch of it kills the
//! process with SIGBUS. Checked: a regular file; the ELF magic; 64-bit, little-endian,
//! version 1; type ET_DYN; the machine of this build; program headers inside the file; every
//! PT_LOAD and PT_DYNAMIC segment's file bytes inside the file; section headers (if any)
//! inside the file.

use std::io::Read;
use std::path::Path;

/// e_machine of the platform whose binaries stiction loads (the platform directories are
/// x86_64-linux / linux64).
const EM_X86_64: u16 = 62;
const ET_DYN: u16 = 3;
const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
/// Program headers read at most (the header's e_phnum is 16 bits).
const MAX_PHNUM: u64 = 0xffff;

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// `Ok` if `path` looks loadable, else why not ("is not ...", to follow the file's name).
pub fn check(path: &Path) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("cannot be read: {e}"))?;
    if !meta.file_type().is_file() {
        return Err("is not a regular file".to_string());
    }
    let len = meta.len();
    let mut f = std::fs::File::open(path).map_err(|e| format!("cannot be read: {e}"))?;
    let mut h = [0u8; 64];
    let got = read_up_to(&mut f, &mut h).map_err(|e| format!("cannot be read: {e}"))?;
    if got < 4 || h[..4] != *b"\x7fELF" {
        let what = if h.starts_with(b"#!") { "a script" } else { "not an ELF file" };
        return Err(format!("is {what}, not a shared library for Linux x86-64"));
    }
    if got < 64 {
        return Err(format!("is a truncated ELF file ({len} bytes, shorter than its header)"));
    }
    if h[4] != 2 {
        return Err("is a 32-bit ELF file; stiction loads 64-bit (x86-64) binaries".to_string());
    }
    if h[5] != 1 {
        return Err("is a big-endian ELF file; stiction loads little-endian x86-64 binaries".to_string());
    }
    if h[6] != 1 {
        return Err(format!("has ELF version {}, not 1", h[6]));
    }
    let e_type = u16_at(&h, 16);
    if e_type != ET_DYN {
        return Err(format!("is an ELF file of type {e_type}, not a shared object (ET_DYN)"));
    }
    let machine = u16_at(&h, 18);
    if machine != EM_X86_64 {
        return Err(format!("is built for ELF machine {machine}, not x86-64 (62)"));
    }
    let (phoff, shoff) = (u64_at(&h, 32), u64_at(&h, 40));
    let (phentsize, phnum) = (u64::from(u16_at(&h, 54)), u64::from(u16_at(&h, 56)));
    let (shentsize, shnum) = (u64::from(u16_at(&h, 58)), u64::from(u16_at(&h, 60)));
    let inside = |off: u64, size: u64| off.checked_add(size).is_some_and(|end| end <= len);
    let truncated =
        |what: &str| format!("is a truncated or damaged ELF file ({len} bytes): its {what} lie past the end");
    if phnum == 0 || phentsize < 56 || phnum > MAX_PHNUM || !inside(phoff, phnum * phentsize) {
        return Err(truncated("program headers"));
    }
    if shnum > 0 && (shentsize < 64 || !inside(shoff, shnum * shentsize)) {
        return Err(truncated("section headers"));
    }
    // The program headers (at most 64 KiB entries × their size: bounded by the file size,
    // checked above).
    let mut ph = vec![0u8; (phnum * phentsize) as usize];
    use std::io::Seek;
    f.seek(std::io::SeekFrom::Start(phoff)).map_err(|e| format!("cannot be read: {e}"))?;
    f.read_exact(&mut ph).map_err(|e| format!("cannot be read: {e}"))?;
    let mut loads = 0;
    for k in 0..phnum as usize {
        let p = &ph[k * phentsize as usize..];
        let p_type = u32_at(p, 0);
        let (offset, filesz) = (u64_at(p, 8), u64_at(p, 32));
        if p_type == PT_LOAD || p_type == PT_DYNAMIC {
            if !inside(offset, filesz) {
                return Err(truncated("loadable segments"));
            }
            loads += usize::from(p_type == PT_LOAD);
        }
    }
    if loads == 0 {
        return Err("has no loadable segment".to_string());
    }
    Ok(())
}

fn read_up_to(f: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_directories_and_short_files_are_refused() {
        let dir = tempfile_dir();
        let script = dir.join("s.so");
        std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
        assert!(check(&script).unwrap_err().contains("script"));
        assert!(check(&dir).unwrap_err().contains("not a regular file"));
        let short = dir.join("t.so");
        std::fs::write(&short, b"\x7fELF\x02\x01\x01").unwrap();
        assert!(check(&short).unwrap_err().contains("truncated"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("stiction-elf-test-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
