//! MATLAB v4 results in the "binTrans" layout of OpenModelica and Dymola (what their result
//! readers expect; tested with `scipy.io.loadmat`):
//!
//! | matrix | MATLAB size | contents |
//! |---|---|---|
//! | `Aclass` | 4 × 11 char | rows `Atrajectory`, `1.1`, ``, `binTrans` |
//! | `name` | maxlen × n char | one variable name per column (`time` first) |
//! | `description` | maxlen × n char | per column `doc [unit]` |
//! | `dataInfo` | 4 × n int32 | per column: matrix (0 time, 1 data_1, 2 data_2), 1-based row, interpolation 0, extrapolation |
//! | `data_1` | 1 × 2 double | start and stop time |
//! | `data_2` | n × rows double | one column per sample: time, then the signals |
//!
//! Every matrix has a 20-byte header (type MOPT, rows, columns, imaginary flag, name
//! length) followed by its name and its elements in column order; `data_2`'s column count
//! is rewritten when the run ends (also on failure, so the rows up to it are kept).

use super::ColumnInfo;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::Path;
use stiction_framework::OutputSink;

/// MOPT type codes: little-endian (M=0), P = double 0 / int32 2 / uint8 5, T = 1 for text.
const DOUBLE: u32 = 0;
const INT32: u32 = 20;
const TEXT: u32 = 51;

/// Streams rows into the `data_2` matrix of a MATLAB v4 file.
pub struct MatSink {
    out: BufWriter<File>,
    columns: Vec<ColumnInfo>,
    /// Byte offset of `data_2`'s header.
    data2_at: u64,
    rows: u32,
    first_time: Option<f64>,
    last_time: f64,
    /// Byte offset of `data_1`'s elements (start and stop time, written again at the end).
    data1_at: u64,
    /// Write-through: each row is written and the header's row count and stop time updated
    /// in place at once ([`OutputSink::set_write_through`]).
    write_through: bool,
}

fn header(w: &mut impl Write, ty: u32, rows: u32, cols: u32, name: &str) -> io::Result<()> {
    for x in [ty, rows, cols, 0, name.len() as u32 + 1] {
        w.write_all(&x.to_le_bytes())?;
    }
    w.write_all(name.as_bytes())?;
    w.write_all(&[0])
}

/// A char matrix with one string per column (binTrans), padded with NUL.
fn strings(w: &mut impl Write, name: &str, items: &[&str]) -> io::Result<()> {
    let len = items.iter().map(|s| s.len()).max().unwrap_or(0).max(1);
    header(w, TEXT, len as u32, items.len() as u32, name)?;
    for s in items {
        w.write_all(s.as_bytes())?;
        w.write_all(&vec![0u8; len - s.len()])?;
    }
    Ok(())
}

fn too_big(what: &str) -> io::Error {
    io::Error::other(format!("too many {what} for a MATLAB v4 file"))
}

impl MatSink {
    /// Create (truncate) `path`; `columns` describe the signals after `time`.
    pub fn create(path: &Path, columns: Vec<ColumnInfo>) -> io::Result<MatSink> {
        Ok(MatSink::new(crate::outfile::in_place(path)?, columns))
    }

    /// Write into `file` (opened for it, empty); `columns` describe the signals after `time`.
    pub fn new(file: File, columns: Vec<ColumnInfo>) -> MatSink {
        let out = BufWriter::new(file);
        MatSink {
            out,
            columns,
            data2_at: 0,
            rows: 0,
            first_time: None,
            last_time: 0.0,
            data1_at: 0,
            write_through: false,
        }
    }
}

impl OutputSink for MatSink {
    fn begin(&mut self, labels: &[String]) -> io::Result<()> {
        // Columns the caller did not describe get their label only.
        let info: Vec<ColumnInfo> = labels
            .iter()
            .map(|l| {
                self.columns.iter().find(|c| c.label == *l).cloned().unwrap_or_else(|| ColumnInfo {
                    label: l.clone(),
                    unit: String::new(),
                    description: String::new(),
                })
            })
            .collect();
        self.columns = info;
        let n = u32::try_from(self.columns.len() + 1).map_err(|_| too_big("columns"))?;
        let w = &mut self.out;
        // Aclass: the four rows stored column by column.
        let rows = ["Atrajectory", "1.1", "", "binTrans"];
        header(w, TEXT, 4, 11, "Aclass")?;
        for c in 0..11 {
            for r in rows {
                w.write_all(&[*r.as_bytes().get(c).unwrap_or(&0)])?;
            }
        }
        let mut names = vec!["time"];
        names.extend(self.columns.iter().map(|c| c.label.as_str()));
        strings(w, "name", &names)?;
        let desc: Vec<String> = std::iter::once("Simulation time [s]".to_string())
            .chain(self.columns.iter().map(|c| {
                if c.unit.is_empty() {
                    c.description.clone()
                } else {
                    format!("{} [{}]", c.description, c.unit)
                }
            }))
            .collect();
        strings(w, "description", &desc.iter().map(String::as_str).collect::<Vec<_>>())?;
        header(w, INT32, 4, n, "dataInfo")?;
        for j in 0..n as i32 {
            // time: the abscissa (matrix 0, row 1 of data_2, undefined outside the range);
            // signals: data_2 row j+1, linear interpolation, constant outside.
            let info: [i32; 4] = if j == 0 { [0, 1, 0, -1] } else { [2, j + 1, 0, 0] };
            for x in info {
                w.write_all(&x.to_le_bytes())?;
            }
        }
        header(w, DOUBLE, 1, 2, "data_1")?;
        w.flush()?;
        self.data1_at = w.stream_position()?;
        w.write_all(&0f64.to_le_bytes())?;
        w.write_all(&0f64.to_le_bytes())?;
        self.data2_at = w.stream_position()?;
        header(w, DOUBLE, n, 0, "data_2")
    }

    fn row(&mut self, t: f64, values: &[f64]) -> io::Result<()> {
        self.rows = self.rows.checked_add(1).ok_or_else(|| too_big("rows"))?;
        self.first_time.get_or_insert(t);
        self.last_time = t;
        // One whole sample per write call.
        let mut buf = Vec::with_capacity(8 * (values.len() + 1));
        buf.extend_from_slice(&t.to_le_bytes());
        for v in values {
            buf.extend_from_slice(&v.to_le_bytes());
        }
        self.out.write_all(&buf)?;
        if self.write_through {
            // The sample first, then the header that counts it (positioned writes, the
            // file offset untouched): a file cut off at any moment is complete up to its count.
            use std::os::unix::fs::FileExt;
            self.out.flush()?;
            let file = self.out.get_ref();
            let mut times = [0u8; 16];
            times[..8].copy_from_slice(&self.first_time.unwrap_or(t).to_le_bytes());
            times[8..].copy_from_slice(&t.to_le_bytes());
            file.write_all_at(&times, self.data1_at)?;
            file.write_all_at(&self.rows.to_le_bytes(), self.data2_at + 8)?;
        }
        Ok(())
    }

    fn set_write_through(&mut self, on: bool) {
        self.write_through = on;
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.data2_at == 0 {
            // Never begun: nothing to complete.
            return self.out.flush();
        }
        let n = self.columns.len() as u32 + 1;
        let end = self.out.stream_position()?;
        self.out.seek(SeekFrom::Start(self.data1_at))?;
        self.out.write_all(&self.first_time.unwrap_or(0.0).to_le_bytes())?;
        self.out.write_all(&self.last_time.to_le_bytes())?;
        self.out.seek(SeekFrom::Start(self.data2_at))?;
        header(&mut self.out, DOUBLE, n, self.rows, "data_2")?;
        self.out.seek(SeekFrom::Start(end))?;
        self.out.flush()
    }
}
