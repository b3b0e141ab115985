//! The state an imported FMU component keeps outside the network's state vector, as bytes for
//! a whole-simulation checkpoint (framework `Admittance::save_hidden` and kin): the FMU's own
//! state (FMI's serialized FMU state) and the importer's bookkeeping around it (cs.rs, me.rs,
//! block.rs). Reading is checked: lengths against what is left and against the component's
//! own sizes, so foreign or damaged bytes are an error, never a panic.

/// The bytes being written.
#[derive(Default)]
pub(crate) struct Out(pub Vec<u8>);

impl Out {
    pub fn u8(&mut self, x: u8) -> &mut Self {
        self.0.push(x);
        self
    }
    pub fn u64(&mut self, x: u64) -> &mut Self {
        self.0.extend_from_slice(&x.to_le_bytes());
        self
    }
    pub fn f64(&mut self, x: f64) -> &mut Self {
        self.u64(x.to_bits())
    }
    /// The values with their count.
    pub fn f64s(&mut self, x: &[f64]) -> &mut Self {
        self.u64(x.len() as u64);
        for v in x {
            self.f64(*v);
        }
        self
    }
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
        self
    }
    pub fn opt_f64(&mut self, x: Option<f64>) -> &mut Self {
        self.u8(u8::from(x.is_some())).f64(x.unwrap_or(0.0))
    }
    /// A component's stop request (its time and message), if any.
    pub fn stop(&mut self, stop: &Option<(f64, String)>) -> &mut Self {
        match stop {
            Some((t, m)) => self.u8(1).f64(*t).bytes(m.as_bytes()),
            None => self.u8(0),
        }
    }
}

/// The bytes being read.
pub(crate) struct In<'a>(pub &'a [u8]);

type Read<T> = Result<T, String>;

impl<'a> In<'a> {
    fn take(&mut self, n: usize) -> Read<&'a [u8]> {
        if self.0.len() < n {
            return Err("the component's saved state ends early".into());
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    pub fn u8(&mut self) -> Read<u8> {
        Ok(self.take(1)?[0])
    }
    pub fn u64(&mut self) -> Read<u64> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(b))
    }
    pub fn f64(&mut self) -> Read<f64> {
        Ok(f64::from_bits(self.u64()?))
    }
    /// Values written by [`Out::f64s`]; their count must be `n` (the component's own size).
    pub fn f64s(&mut self, n: usize, what: &str) -> Read<Vec<f64>> {
        let got = self.u64()?;
        if got != n as u64 {
            return Err(format!("the saved state has {got} {what}, this component {n}"));
        }
        if n.saturating_mul(8) > self.0.len() {
            return Err("the component's saved state ends early".into());
        }
        (0..n).map(|_| self.f64()).collect()
    }
    pub fn bytes(&mut self) -> Read<&'a [u8]> {
        let n = self.u64()?;
        if n > self.0.len() as u64 {
            return Err("the component's saved state ends early".into());
        }
        self.take(n as usize)
    }
    pub fn flag(&mut self) -> Read<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            x => Err(format!("a flag of value {x} in the component's saved state")),
        }
    }
    /// A stop request written by [`Out::stop`].
    pub fn stop(&mut self) -> Read<Option<(f64, String)>> {
        if !self.flag()? {
            return Ok(None);
        }
        let t = self.f64()?;
        Ok(Some((t, String::from_utf8_lossy(self.bytes()?).into_owned())))
    }
    pub fn opt_f64(&mut self) -> Read<Option<f64>> {
        let has = self.flag()?;
        let x = self.f64()?;
        Ok(has.then_some(x))
    }
    /// The record's tag: `tag` (the kind of component and its format) is expected.
    pub fn tag(&mut self, tag: &[u8]) -> Read<()> {
        if self.take(tag.len())? != tag {
            return Err("the saved state is of another kind of component".into());
        }
        Ok(())
    }
    /// Nothing may be left.
    pub fn end(&self) -> Read<()> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err("bytes left after the component's saved state".into())
        }
    }
}
