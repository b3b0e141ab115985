//! Where stiction writes what a user asked for (`-o`, `--plot`, `--save-state`, sweep and
//! study tables, `--save-runs`): never over something that is not a file of its own.
//!
//! Whole files ([`OutFile`], [`write()`]) are written beside their target under a temporary
//! name and renamed onto it once complete, so the target is never half written; the rename
//! is allowed only onto a new name or a regular file ([`replaceable`]): a device, FIFO,
//! socket, directory or symbolic link would be replaced by the rename itself (`/dev/null`
//! would become a regular file), so it is refused naming the path.
//!
//! Streamed results (`run -o X.csv|X.mat`) are written in place instead, row by row, so that
//! the rows computed so far are in the file whatever ends the process (a crash in foreign
//! code, SIGKILL): [`in_place`] refuses a directory or a symbolic link and opens a regular
//! file, a new name, a device or a FIFO without replacing it (a pipe to another program and
//! `/dev/null` are what the user asked for there; `-` is standard output).

use std::fs::File;
use std::io::Write;
use std::path::Path;

pub use stiction_fmi_schema::write::{replaceable, OutFile};

/// `bytes` written to `target` whole or not at all ([`OutFile`]).
pub fn write(target: &Path, bytes: &[u8]) -> Result<(), String> {
    let mut f = OutFile::create(target)?;
    f.write_all(bytes).map_err(|e| format!("{}: {e}", target.display()))?;
    f.commit()
}

/// Whether results may be streamed into `target` in place: not a directory, not a symbolic
/// link (which would write somewhere else than the path given).
pub fn check_in_place(target: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(target) {
        Ok(m) if m.file_type().is_dir() => Err(format!("{}: is a directory", target.display())),
        Ok(m) if m.file_type().is_symlink() => Err(format!(
            "{}: is a symbolic link; give the path of the file itself (stiction does not write through links)",
            target.display()
        )),
        _ => Ok(()),
    }
}

/// Open `target` for streamed results ([`check_in_place`]), creating its directory: a
/// regular file is truncated (not replaced), a device or FIFO written as it is.
pub fn in_place(target: &Path) -> std::io::Result<File> {
    check_in_place(target).map_err(std::io::Error::other)?;
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    File::create(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_file_appears_only_when_committed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("sub/out.csv");
        let mut f = OutFile::create(&target).unwrap();
        f.write_all(b"a,b\n").unwrap();
        assert!(!target.exists() && f.partial_path().exists());
        assert!(f.partial_path().extension().is_some_and(|e| e == "csv"));
        f.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"a,b\n");
        // Dropped uncommitted: nothing is left, the old file is unchanged.
        let mut f = OutFile::create(&target).unwrap();
        f.write_all(b"x").unwrap();
        let partial = f.partial_path().to_path_buf();
        drop(f);
        assert!(!partial.exists());
        assert_eq!(std::fs::read(&target).unwrap(), b"a,b\n");
    }

    #[test]
    fn nodes_that_are_not_files_are_refused_or_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &link).unwrap();
        for target in [Path::new("/dev/null"), dir.path(), link.as_path()] {
            let e = write(target, b"x").unwrap_err();
            assert!(e.starts_with(&target.display().to_string()), "{e}");
        }
        assert!(check_in_place(dir.path()).is_err() && check_in_place(&link).is_err());
        assert!(in_place(Path::new("/dev/null")).is_ok());
        assert!(!dir.path().join("elsewhere").exists());
    }
}
