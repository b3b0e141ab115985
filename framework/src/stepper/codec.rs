//! The bytes of a saved state (stepper/checkpoint.rs): little-endian numbers and
//! length-prefixed byte strings, written by [`Writer`] and read back by [`Reader`], whose
//! every read checks what is left of the input, so a truncated or corrupted state is an
//! error, never a panic. Shared by the checkpoint and the parts of the stepper that save
//! their own records (stepper/events.rs), which do not import each other.

use crate::error::{Error, Result};

/// An error about the saved state's bytes.
pub(crate) fn bad(message: impl Into<String>) -> Error {
    Error::invalid("saved state", message)
}

/// The bytes of a state being written.
#[derive(Default)]
pub(crate) struct Writer(pub(super) Vec<u8>);

impl Writer {
    pub(crate) fn u8(&mut self, x: u8) -> &mut Self {
        self.0.push(x);
        self
    }
    pub(crate) fn u64(&mut self, x: u64) -> &mut Self {
        self.0.extend_from_slice(&x.to_le_bytes());
        self
    }
    pub(crate) fn f64(&mut self, x: f64) -> &mut Self {
        self.0.extend_from_slice(&x.to_bits().to_le_bytes());
        self
    }
    /// The values, without their count (the reader knows it from the fingerprint).
    pub(crate) fn f64s(&mut self, x: &[f64]) -> &mut Self {
        self.0.reserve(8 * x.len());
        for v in x {
            self.f64(*v);
        }
        self
    }
    pub(crate) fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
        self
    }
    pub(crate) fn str(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }
}

/// The bytes of a state being read: every read checks what is left.
pub(crate) struct Reader<'a>(pub(super) &'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(bad("the data ends early"));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u64(&mut self) -> Result<u64> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(b))
    }
    pub(crate) fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_bits(self.u64()?))
    }
    /// `n` values (n from the fingerprint, checked against what is left before allocating).
    pub(crate) fn f64s(&mut self, n: usize) -> Result<Vec<f64>> {
        if n.checked_mul(8).is_none_or(|b| b > self.0.len()) {
            return Err(bad("the data ends early"));
        }
        (0..n).map(|_| self.f64()).collect()
    }
    /// A count of items of at least `each` bytes, bounded by what is left.
    pub(super) fn count(&mut self, each: usize) -> Result<usize> {
        let n = self.u64()?;
        if n.saturating_mul(each.max(1) as u64) > self.0.len() as u64 {
            return Err(bad("a count beyond the end of the data"));
        }
        Ok(n as usize)
    }
    pub(crate) fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.count(1)?;
        self.take(n)
    }
    pub(super) fn str(&mut self) -> Result<String> {
        std::str::from_utf8(self.bytes()?).map(str::to_string).map_err(|_| bad("a name is not UTF-8"))
    }
}
