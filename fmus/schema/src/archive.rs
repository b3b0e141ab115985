//! An .fmu unpacked into a private temporary directory (removed when the [`Archive`] is
//! dropped), with its modelDescription.xml parsed.

use crate::description::ModelDescription;
use crate::vocab::{FmiVersion, Interface};
use crate::FmiError;
use std::path::{Path, PathBuf};

/// An unpacked FMU.
pub struct Archive {
    /// The .fmu as the user named it (for messages).
    pub file: String,
    pub description: ModelDescription,
    /// Removed on drop.
    dir: tempfile::TempDir,
}

impl std::fmt::Debug for Archive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Archive").field("file", &self.file).field("dir", &self.dir.path()).finish()
    }
}

impl Archive {
    /// Unzip `path` into a fresh temporary directory and parse its modelDescription.xml.
    /// `shown` is how messages name the file. Zip entries that would land outside the
    /// directory are rejected by the zip crate's `extract`.
    pub fn open(path: &Path, shown: &str) -> Result<Archive, FmiError> {
        let fail = |msg: String| FmiError::file(shown, msg);
        let file = std::fs::File::open(path).map_err(|e| fail(format!("cannot open the FMU: {e}")))?;
        let mut zip = zip::ZipArchive::new(file).map_err(|e| fail(format!("not a valid FMU (zip archive): {e}")))?;
        let dir = tempfile::Builder::new()
            .prefix("stiction-fmu-")
            .tempdir()
            .map_err(|e| fail(format!("cannot create a temporary directory to unpack the FMU: {e}")))?;
        zip.extract(dir.path()).map_err(|e| fail(format!("cannot unpack the FMU (corrupt zip archive?): {e}")))?;
        let md_path = dir.path().join("modelDescription.xml");
        let text = std::fs::read_to_string(&md_path)
            .map_err(|e| fail(format!("modelDescription.xml is missing or unreadable: {e}")))?;
        let description =
            ModelDescription::parse(&text).map_err(|e| fail(format!("modelDescription.xml does not parse: {e}")))?;
        Ok(Archive { file: shown.to_string(), description, dir })
    }

    /// The unpacked directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `resources/` of the unpacked FMU.
    pub fn resources(&self) -> PathBuf {
        self.dir.path().join("resources")
    }

    /// Path of the Linux x86-64 binary for `interface`, checked to exist. The error lists
    /// the binaries the archive does hold.
    pub fn binary(&self, interface: Interface) -> Result<PathBuf, FmiError> {
        let md = &self.description;
        let id = md.identifier(interface).ok_or_else(|| {
            FmiError::file(&self.file, format!("the FMU does not declare the {} interface", interface.label()))
        })?;
        let rel = format!("binaries/{}/{id}.so", md.version.platform());
        let path = self.dir.path().join(&rel);
        if path.is_file() {
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

    /// `<platform>/<file>` of every file under binaries/, or "none".
    pub fn binaries(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Ok(platforms) = std::fs::read_dir(self.dir.path().join("binaries")) {
            for p in platforms.flatten() {
                if let Ok(files) = std::fs::read_dir(p.path()) {
                    for f in files.flatten() {
                        out.push(format!("{}/{}", p.file_name().to_string_lossy(), f.file_name().to_string_lossy()));
                    }
                }
            }
        }
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
