//! Sealed bytes: the one envelope of every saved state stiction writes (a run's checkpoint,
//! `stiction run --save-state`, Python's `save()`, and the serialized FMU states of the
//! exported FMUs), and the one checker that opens it.
//!
//! ```text
//! magic (16 bytes) | version u32 | body length u64 | body | CRC-32 u32
//! ```
//! All numbers little-endian; the CRC-32 (IEEE) covers everything before it. [`open`]
//! checks the magic, the version, the length against the bytes given (a cut or extended
//! state is refused before anything else is read) and the checksum (an edited one), and
//! only then hands the body to its reader.

/// Magic, version, body length.
pub const HEAD: usize = 16 + 4 + 8;
/// The envelope's size beyond the body.
pub const OVERHEAD: usize = HEAD + 4;

/// A buffer that begins a sealed record: write the body after it, then [`finish`].
pub fn begin(magic: &[u8; 16], version: u32, capacity: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(OVERHEAD + capacity);
    out.extend_from_slice(magic);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    out
}

/// Close a record [`begin`] started: the body's length into the header, the checksum after.
pub fn finish(mut out: Vec<u8>) -> Vec<u8> {
    let body = out.len().saturating_sub(HEAD) as u64;
    out[HEAD - 8..HEAD].copy_from_slice(&body.to_le_bytes());
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The body of a sealed record, once its magic, version, length and checksum are right;
/// `what` names the record where the magic is wrong ("saved state", "FMU state"); the
/// caller names it in front of the other errors.
pub fn open<'a>(what: &str, magic: &[u8; 16], version: u32, bytes: &'a [u8]) -> Result<&'a [u8], String> {
    if bytes.get(..16) != Some(&magic[..]) {
        return Err(format!("not a stiction {what} (it does not begin with the magic bytes)"));
    }
    if bytes.len() < OVERHEAD {
        return Err(format!("truncated: {} bytes, too short for the header", bytes.len()));
    }
    let version_read = u32::from_le_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
    if version_read != version {
        return Err(format!("format version {version_read}; this stiction reads version {version}"));
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&bytes[HEAD - 8..HEAD]);
    let want = (OVERHEAD as u64).saturating_add(u64::from_le_bytes(len));
    if want != bytes.len() as u64 {
        let how = if want > bytes.len() as u64 { "truncated" } else { "trailing bytes" };
        return Err(format!("{how}: {} bytes, the header says {want}", bytes.len()));
    }
    let (data, crc) = bytes.split_at(bytes.len() - 4);
    if crc32fast::hash(data).to_le_bytes() != crc {
        return Err("the checksum does not match: the data is corrupted".into());
    }
    Ok(&data[HEAD..])
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: &[u8; 16] = b"stiction-test\n\0\0";

    fn record() -> Vec<u8> {
        let mut b = begin(M, 3, 5);
        b.extend_from_slice(b"hello");
        finish(b)
    }

    #[test]
    fn a_whole_record_opens_to_its_body() {
        assert_eq!(open("x", M, 3, &record()).unwrap(), b"hello");
    }

    #[test]
    fn every_cut_extension_and_single_bit_edit_is_refused() {
        let r = record();
        for n in 0..r.len() {
            assert!(open("x", M, 3, &r[..n]).is_err(), "cut to {n}");
        }
        let mut longer = r.clone();
        longer.push(0);
        assert!(open("x", M, 3, &longer).unwrap_err().contains("trailing"));
        for i in 0..r.len() {
            for bit in 0..8 {
                let mut e = r.clone();
                e[i] ^= 1 << bit;
                assert!(open("x", M, 3, &e).is_err(), "byte {i} bit {bit}");
            }
        }
        assert!(open("x", M, 4, &r).unwrap_err().contains("version 3"));
    }
}
