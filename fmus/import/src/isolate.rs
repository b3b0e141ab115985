//! `"isolation": "process"`: an FMU instance run in a child process, so that its crash, abort,
//! exit() or hang ends that process, not stiction's.
//!
//! The child is the `stiction` program run as `stiction fmu-host` (a hidden subcommand that
//! calls [`serve`]); [`host_program`] says how it is found. Parent and child speak over the
//! child's standard input (requests) and a copy of its standard output (replies; the child
//! points its own standard output at standard error, so what the FMU prints cannot reach the
//! protocol). Each message is a frame: its length (u32, little-endian), then the message, in
//! the tiny encoding of `Enc`/`Dec`. One request, one reply: the parent waits for the
//! reply at most the call timeout (`poll`), so a hanging FMU call ends with the child killed.
//! The parent keeps the unpacked archive (and removes it as usual); the child loads the
//! binary from there ([`Archive::unpacked_by_parent`]). The child ends when the instance is
//! dropped (Terminate, FreeInstance, exit), when its parent closes the pipe, or when its
//! parent is gone (a watchdog thread checks the parent's PID).
#![allow(unsafe_code)]

use crate::binary::{EventInfo, Local, VarKind};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use stiction_fmi_schema::{Archive, FmiError, Interface, VarType};

/// The first message of a child: the program is a host of this very version.
const HELLO: &str = concat!("stiction-fmu-host ", env!("CARGO_PKG_VERSION"));

/// The end of the message of an error that says the FMU's process ended or was stopped.
const ISOLATED: &str = " (the FMU runs isolated in its own process, \"isolation\": \"process\")";

/// Whether `e` says that an isolated FMU's process crashed, exited or hung during a call (a
/// failure of the run, not of its input).
pub fn process_ended(e: &FmiError) -> bool {
    e.message.ends_with(ISOLATED)
}

/// The hidden subcommand of the `stiction` program that runs [`serve`].
pub const SUBCOMMAND: &str = "fmu-host";

/// Longest frame accepted (a reply carries values of variables: bounded by the description).
const MAX_FRAME: usize = 1 << 30;

/// Requests (first byte of a request frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Op {
    Free = 0,
    EnterInit,
    ExitInit,
    GetMixed,
    SetMixed,
    GetValues,
    SetValues,
    DoStep,
    SetTime,
    SetStates,
    GetStates,
    GetDerivatives,
    GetEventIndicators,
    EnterEventMode,
    EnterContinuousTimeMode,
    NewDiscreteStates,
    CompletedIntegratorStep,
    SaveState,
    RestoreState,
    TakeLog,
    SerializeState,
    DeserializeState,
}

const OPS: [Op; 22] = [
    Op::Free,
    Op::EnterInit,
    Op::ExitInit,
    Op::GetMixed,
    Op::SetMixed,
    Op::GetValues,
    Op::SetValues,
    Op::DoStep,
    Op::SetTime,
    Op::SetStates,
    Op::GetStates,
    Op::GetDerivatives,
    Op::GetEventIndicators,
    Op::EnterEventMode,
    Op::EnterContinuousTimeMode,
    Op::NewDiscreteStates,
    Op::CompletedIntegratorStep,
    Op::SaveState,
    Op::RestoreState,
    Op::TakeLog,
    Op::SerializeState,
    Op::DeserializeState,
];

/// A variable's type by its code in a message: its place in [`VarType::NUMERIC`], and the
/// code after the last for [`VarType::Other`].
fn type_code(t: VarType) -> u8 {
    VarType::NUMERIC.iter().position(|&x| x == t).unwrap_or(VarType::NUMERIC.len()) as u8
}

/// A message being written.
#[derive(Default)]
pub(crate) struct Enc(Vec<u8>);

impl Enc {
    fn start(&mut self) {
        self.0.clear();
        self.0.extend_from_slice(&[0; 4]);
    }
    fn u8(&mut self, x: u8) -> &mut Self {
        self.0.push(x);
        self
    }
    fn u64(&mut self, x: u64) -> &mut Self {
        self.0.extend_from_slice(&x.to_le_bytes());
        self
    }
    fn f64(&mut self, x: f64) -> &mut Self {
        self.0.extend_from_slice(&x.to_le_bytes());
        self
    }
    fn f64s(&mut self, x: &[f64]) -> &mut Self {
        self.u64(x.len() as u64);
        for v in x {
            self.f64(*v);
        }
        self
    }
    fn u32s(&mut self, x: &[u32]) -> &mut Self {
        self.u64(x.len() as u64);
        for v in x {
            self.0.extend_from_slice(&v.to_le_bytes());
        }
        self
    }
    fn kinds(&mut self, k: &[VarKind]) -> &mut Self {
        self.u64(k.len() as u64);
        for (t, n) in k {
            self.u8(type_code(*t)).u64(*n as u64);
        }
        self
    }
    fn str(&mut self, s: &str) -> &mut Self {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
        self
    }
    fn strs(&mut self, s: &[String]) -> &mut Self {
        self.u64(s.len() as u64);
        for x in s {
            self.str(x);
        }
        self
    }
    fn error(&mut self, e: &FmiError) -> &mut Self {
        self.str(&e.fmu).u8(u8::from(e.function.is_some())).str(e.function.as_deref().unwrap_or("")).str(&e.message);
        self.strs(&e.log)
    }
    /// The finished frame (length in front).
    fn frame(&mut self) -> &[u8] {
        let n = (self.0.len() - 4) as u32;
        self.0[..4].copy_from_slice(&n.to_le_bytes());
        &self.0
    }
}

/// A message being read; a malformed message is an error, never a panic.
pub(crate) struct Dec<'a>(&'a [u8]);

type Decoded<T> = Result<T, String>;

impl<'a> Dec<'a> {
    fn take(&mut self, n: usize) -> Decoded<&'a [u8]> {
        if self.0.len() < n {
            return Err("a message ended early".into());
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Decoded<u8> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> Decoded<u64> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().map_err(|_| "bad u64")?))
    }
    fn len(&mut self, each: usize) -> Decoded<usize> {
        let n = self.u64()?;
        if n.saturating_mul(each as u64) > self.0.len() as u64 {
            return Err("a length beyond the message".into());
        }
        Ok(n as usize)
    }
    fn f64(&mut self) -> Decoded<f64> {
        Ok(f64::from_bits(self.u64()?))
    }
    fn f64s(&mut self) -> Decoded<Vec<f64>> {
        let n = self.len(8)?;
        (0..n).map(|_| self.f64()).collect()
    }
    fn u32s(&mut self) -> Decoded<Vec<u32>> {
        let n = self.len(4)?;
        (0..n)
            .map(|_| {
                let b = self.take(4)?;
                Ok(u32::from_le_bytes(b.try_into().map_err(|_| "bad u32")?))
            })
            .collect()
    }
    fn ty(&mut self) -> Decoded<VarType> {
        match self.u8()? as usize {
            c if c < VarType::NUMERIC.len() => Ok(VarType::NUMERIC[c]),
            c if c == VarType::NUMERIC.len() => Ok(VarType::Other),
            _ => Err("an unknown type code".into()),
        }
    }
    fn kinds(&mut self) -> Decoded<Vec<VarKind>> {
        let n = self.len(9)?;
        (0..n).map(|_| Ok((self.ty()?, self.u64()? as usize))).collect()
    }
    fn str(&mut self) -> Decoded<String> {
        let n = self.len(1)?;
        Ok(String::from_utf8_lossy(self.take(n)?).into_owned())
    }
    fn bytes(&mut self) -> Decoded<&'a [u8]> {
        let n = self.len(1)?;
        self.take(n)
    }
    fn strs(&mut self) -> Decoded<Vec<String>> {
        let n = self.len(8)?;
        (0..n).map(|_| self.str()).collect()
    }
    fn error(&mut self) -> Decoded<FmiError> {
        let fmu = self.str()?;
        let has = self.u8()? != 0;
        let function = self.str()?;
        let message = self.str()?;
        let log = self.strs()?;
        Ok(FmiError::new(&fmu, has.then_some(function.as_str()), message).with_log(log))
    }
}

/// How an imported FMU runs (the `isolation` and `call_timeout` keys of an `fmu` component).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Isolation {
    /// In stiction's process (the default): fastest; a crash inside the FMU ends stiction
    /// (the rows written before are kept, see docs/reference/fmu-import.md).
    #[default]
    None,
    /// In a child process: a crash, abort, exit() or a call longer than `timeout` ends the
    /// run with an error naming the FMU, the call and the signal, status or timeout.
    Process { timeout: Duration },
}

/// The default longest FMU call with `"isolation": "process"`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The program to run as the host: `STICTION_FMU_HOST` if set; else this program when its
/// name starts with `stiction` (the CLI); else `stiction` on the PATH.
pub fn host_program() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("STICTION_FMU_HOST") {
        return Ok(PathBuf::from(p));
    }
    if let Ok(exe) = std::env::current_exe() {
        if exe.file_name().and_then(|n| n.to_str()).is_some_and(|n| n == "stiction") {
            return Ok(exe);
        }
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).map(|d| d.join("stiction")).find(|p| p.is_file()).ok_or_else(|| {
        "cannot find the `stiction` program to run the FMU in (not this program, not on the PATH); \
         set STICTION_FMU_HOST to its path"
            .to_string()
    })
}

/// The name of a signal number, for messages.
fn signal_name(sig: i32) -> String {
    let name = match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        31 => "SIGSYS",
        _ => return format!("signal {sig}"),
    };
    format!("signal {sig} ({name})")
}

/// How a wait for the child's answer ended.
#[derive(PartialEq)]
enum Wait {
    Ready,
    /// The call timeout ran out.
    TimedOut,
    /// A stop was requested (SIGINT/SIGTERM, stiction_framework::cancel) and the child did
    /// not answer within [`CANCEL_GRACE`] of it.
    Interrupted,
}

/// How long a child still gets to answer once a stop is requested: a call that is merely
/// slow ends normally, a hung one is killed, well within the second a signal may take.
const CANCEL_GRACE: Duration = Duration::from_millis(400);

/// Wait until `fd` is readable, the deadline passes, or a stop request's grace runs out
/// (the stop request is polled every 50 ms).
fn readable(fd: i32, deadline: Instant) -> Wait {
    let mut cancelled_by: Option<Instant> = None;
    loop {
        let now = Instant::now();
        if cancelled_by.is_none() && stiction_framework::cancel::requested() {
            cancelled_by = Some(now + CANCEL_GRACE);
        }
        let until = cancelled_by.map_or(deadline, |c| c.min(deadline));
        let left = until.saturating_duration_since(now).min(Duration::from_millis(50));
        let ms = left.as_millis() as i32;
        let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd for the duration of the call.
        let r = unsafe { libc::poll(&mut p, 1, ms) };
        if r > 0 {
            return Wait::Ready;
        }
        if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            // Not a wait that can go on: the read that follows reports the pipe's state.
            return Wait::Ready;
        }
        let now = Instant::now();
        if now >= deadline {
            return Wait::TimedOut;
        }
        if cancelled_by.is_some_and(|c| now >= c) {
            return Wait::Interrupted;
        }
        // EINTR (a signal to this process), a slice of the wait over: wait again.
    }
}

/// The parent's end of one isolated instance.
pub(crate) struct Child {
    proc: std::process::Child,
    to: std::process::ChildStdin,
    from: std::process::ChildStdout,
    timeout: Duration,
    /// Why the child is gone, once it is.
    gone: Option<String>,
    /// "FMU 'X' (file)".
    label: String,
    enc: Enc,
    reply: Vec<u8>,
}

/// What a failed exchange with the child was.
enum Lost {
    /// The child is gone (the message says how).
    Gone(String),
}

impl Child {
    /// Start the host, send it the FMU (`archive`'s description and directory) and let it
    /// load the binary (after `preload`) and instantiate it as `name`. Returns the child
    /// and whether the binary exports the FMU-state functions.
    pub fn spawn(
        archive: &Arc<Archive>,
        interface: Interface,
        name: &str,
        label: &str,
        timeout: Duration,
        preload: &[PathBuf],
    ) -> Result<(Child, bool), FmiError> {
        let fail = |m: String| FmiError::new(label, None, m);
        let program = host_program().map_err(fail)?;
        let mut cmd = Command::new(&program);
        cmd.arg(SUBCOMMAND).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        // Its own process group: a Ctrl-C at the terminal reaches stiction, which stops the
        // run and ends the child, not the child in the middle of a call.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut proc = cmd
            .spawn()
            .map_err(|e| fail(format!("cannot start the FMU's process ({} {SUBCOMMAND}): {e}", program.display())))?;
        let (Some(to), Some(from)) = (proc.stdin.take(), proc.stdout.take()) else {
            let _ = proc.kill();
            let _ = proc.wait();
            return Err(fail("cannot talk to the FMU's process (no pipes)".into()));
        };
        let mut child = Child {
            proc,
            to,
            from,
            timeout,
            gone: None,
            label: label.to_string(),
            enc: Enc::default(),
            reply: Vec::new(),
        };
        let not_host = |why: String| {
            fail(format!(
                "{} is not a stiction FMU host of this version ({why}); set STICTION_FMU_HOST to the stiction program",
                program.display()
            ))
        };
        match child.receive(Instant::now() + timeout.max(Duration::from_secs(10))) {
            Ok(()) if child.reply == HELLO.as_bytes() => {}
            Ok(()) => {
                let got = String::from_utf8_lossy(&child.reply[..child.reply.len().min(60)]).into_owned();
                child.kill();
                return Err(not_host(format!("it answered {got:?}")));
            }
            Err(Lost::Gone(why)) => return Err(not_host(why)),
        }
        let e = &mut child.enc;
        e.start();
        e.u8(match interface {
            Interface::CoSimulation => 0,
            Interface::ModelExchange => 1,
        })
        .str(name)
        .str(&archive.file)
        .str(&archive.xml)
        .str(&archive.dir().to_string_lossy());
        let libs: Vec<String> = preload.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        e.strs(&libs);
        let instantiate = match (archive.description.version, interface) {
            (stiction_fmi_schema::FmiVersion::V2, _) => "fmi2Instantiate",
            (_, Interface::CoSimulation) => "fmi3InstantiateCoSimulation",
            (_, Interface::ModelExchange) => "fmi3InstantiateModelExchange",
        };
        let mut d = child.exchange(instantiate)?;
        let state_fns = d.u8().map_err(fail)? != 0;
        Ok((child, state_fns))
    }

    /// The frame of a request with `op`, to be filled by the caller.
    pub fn request(&mut self, op: Op) -> &mut Enc {
        self.enc.start();
        self.enc.u8(op as u8);
        &mut self.enc
    }

    /// Send the request built with [`Child::request`] and wait for its reply: `Ok` with the
    /// reply's payload, or the FMU's error (as the child's instance reported it), or an
    /// error saying that the child died (its signal or exit status) or did not answer
    /// within the timeout (it is then killed). `function` names the FMI function in
    /// messages.
    pub fn exchange(&mut self, function: &str) -> Result<Dec<'_>, FmiError> {
        if let Some(why) = &self.gone {
            return Err(FmiError::new(&self.label, Some(function), format!("not called: {why} earlier")));
        }
        let sent = {
            let frame = self.enc.frame();
            self.to.write_all(frame)
        };
        let deadline = Instant::now() + self.timeout;
        let got = match sent {
            Ok(()) => self.receive(deadline),
            Err(_) => Err(Lost::Gone(self.reap())),
        };
        match got {
            Err(Lost::Gone(why)) => {
                let msg = format!("{why}{ISOLATED}");
                self.gone = Some(why);
                Err(FmiError::new(&self.label, Some(function), msg))
            }
            Ok(()) => {
                let mut d = Dec(&self.reply);
                let bad = |e: String| FmiError::new(&self.label, Some(function), format!("a malformed reply: {e}"));
                match d.u8() {
                    Ok(0) => Ok(Dec(&self.reply[1..])),
                    Ok(_) => Err(d.error().unwrap_or_else(bad)),
                    Err(e) => Err(bad(e)),
                }
            }
        }
    }

    /// Read one frame into `self.reply`, waiting until `deadline`.
    fn receive(&mut self, deadline: Instant) -> Result<(), Lost> {
        let mut head = [0u8; 4];
        self.read_exact(&mut head, deadline)?;
        let n = u32::from_le_bytes(head) as usize;
        if n > MAX_FRAME {
            self.kill();
            return Err(Lost::Gone(format!("the FMU's process sent a frame of {n} bytes and was stopped")));
        }
        let mut reply = std::mem::take(&mut self.reply);
        reply.resize(n, 0);
        let r = self.read_exact(&mut reply, deadline);
        self.reply = reply;
        r
    }

    fn read_exact(&mut self, mut buf: &mut [u8], deadline: Instant) -> Result<(), Lost> {
        while !buf.is_empty() {
            match readable(self.from.as_raw_fd(), deadline) {
                Wait::Ready => {}
                Wait::TimedOut => {
                    self.kill();
                    return Err(Lost::Gone(format!(
                        "the FMU did not answer within {} s (call_timeout); its process was killed",
                        self.timeout.as_secs_f64()
                    )));
                }
                Wait::Interrupted => {
                    self.kill();
                    return Err(Lost::Gone(
                        "interrupted: the FMU's process was still in the call and was killed".into(),
                    ));
                }
            }
            match self.from.read(buf) {
                Ok(0) => return Err(Lost::Gone(self.reap())),
                Ok(k) => buf = &mut buf[k..],
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return Err(Lost::Gone(self.reap())),
            }
        }
        Ok(())
    }

    /// Wait for the child that closed its pipe (at most 5 s, then kill it) and say how it ended.
    fn reap(&mut self) -> String {
        use std::os::unix::process::ExitStatusExt;
        let until = Instant::now() + Duration::from_secs(5);
        let status = loop {
            match self.proc.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(1)),
                _ => {
                    let _ = self.proc.kill();
                    break self.proc.wait().ok();
                }
            }
        };
        match status {
            Some(s) if s.signal().is_some() => {
                format!("the FMU's process was ended by {}", signal_name(s.signal().unwrap_or(0)))
            }
            Some(s) => format!("the FMU's process exited with status {} inside the call", s.code().unwrap_or(-1)),
            None => "the FMU's process ended".to_string(),
        }
    }

    /// Kill the child and wait for it.
    fn kill(&mut self) {
        let _ = self.proc.kill();
        let _ = self.proc.wait();
        self.gone.get_or_insert_with(|| "the FMU's process was stopped".into());
    }
}

impl Drop for Child {
    /// Ask the child to terminate and free the instance and to exit; kill it if it does
    /// not within the call timeout (at most 10 s).
    fn drop(&mut self) {
        if self.gone.is_none() {
            self.timeout = self.timeout.min(Duration::from_secs(10));
            self.request(Op::Free);
            let _ = self.exchange("fmiFreeInstance");
        }
        if self.gone.is_none() {
            // Answered: it exits next.
            let _ = self.to.flush();
            let until = Instant::now() + Duration::from_secs(2);
            loop {
                match self.proc.try_wait() {
                    Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(1)),
                    Ok(None) => {
                        let _ = self.proc.kill();
                        let _ = self.proc.wait();
                        break;
                    }
                    _ => break,
                }
            }
        } else {
            let _ = self.proc.try_wait();
        }
    }
}

// ------------------------------------------------------------------------------------------
// The child
// ------------------------------------------------------------------------------------------

/// The host's end: run one FMU instance for the parent on the other side of the standard
/// input and output (see the module's documentation). Returns when the parent frees the
/// instance or closes the pipe; the process should then exit with the returned code.
pub fn serve() -> i32 {
    // The replies go to a private copy of standard output; standard output itself becomes
    // standard error, for whatever the FMU prints.
    // SAFETY: plain descriptor calls on descriptors this process owns; F_DUPFD_CLOEXEC
    // keeps the copy out of programs the FMU might start.
    let out_fd = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3) };
    if out_fd < 0 || unsafe { libc::dup2(2, 1) } < 0 {
        eprintln!("stiction {SUBCOMMAND}: cannot set up the reply channel");
        return 3;
    }
    // SAFETY: out_fd is a new descriptor owned by nothing else.
    let mut out = std::io::BufWriter::new(unsafe { std::fs::File::from_raw_fd(out_fd) });
    // The parent may die without closing the pipe (SIGKILL while this process hangs in the
    // FMU): a watchdog ends this process when its parent changes.
    let parent = std::os::unix::process::parent_id();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(200));
        if std::os::unix::process::parent_id() != parent {
            // SAFETY: _exit ends the process at once, without running destructors while
            // the main thread may be inside the FMU.
            unsafe { libc::_exit(1) };
        }
    });
    let mut input = std::io::BufReader::new(std::io::stdin().lock());
    let mut enc = Enc::default();
    let send = |out: &mut std::io::BufWriter<std::fs::File>, enc: &mut Enc| -> bool {
        out.write_all(enc.frame()).and_then(|()| out.flush()).is_ok()
    };
    enc.start();
    enc.0.extend_from_slice(HELLO.as_bytes());
    if !send(&mut out, &mut enc) {
        return 1;
    }
    let mut frame = Vec::new();
    let read = |input: &mut std::io::BufReader<std::io::StdinLock>, frame: &mut Vec<u8>| -> bool {
        let mut head = [0u8; 4];
        if input.read_exact(&mut head).is_err() {
            return false;
        }
        let n = u32::from_le_bytes(head) as usize;
        if n > MAX_FRAME {
            return false;
        }
        frame.resize(n, 0);
        input.read_exact(frame).is_ok()
    };
    // The instance.
    if !read(&mut input, &mut frame) {
        return 0;
    }
    let mut fmu = match open(&frame) {
        Ok(l) => {
            enc.start();
            enc.u8(0).u8(u8::from(l.can_save_state()));
            l
        }
        Err(e) => {
            enc.start();
            enc.u8(1).error(&e);
            send(&mut out, &mut enc);
            return 0;
        }
    };
    if !send(&mut out, &mut enc) {
        return 1;
    }
    while read(&mut input, &mut frame) {
        enc.start();
        let free = frame.first() == Some(&(Op::Free as u8));
        if free {
            drop(fmu);
            enc.u8(0);
            send(&mut out, &mut enc);
            return 0;
        }
        match answer(&mut fmu, &frame, &mut enc) {
            Ok(()) => {}
            Err(e) => {
                enc.start();
                enc.u8(1).error(&e);
            }
        }
        if !send(&mut out, &mut enc) {
            return 1;
        }
    }
    0
}

/// The first request: the archive as the parent unpacked it, the preloads, the instance.
fn open(frame: &[u8]) -> Result<Local, FmiError> {
    let mut d = Dec(frame);
    let bad = |e: String| FmiError::new("FMU host", None, format!("a malformed request: {e}"));
    let interface = match d.u8().map_err(bad)? {
        0 => Interface::CoSimulation,
        _ => Interface::ModelExchange,
    };
    let name = d.str().map_err(bad)?;
    let file = d.str().map_err(bad)?;
    let xml = d.str().map_err(bad)?;
    let dir = d.str().map_err(bad)?;
    let libs: Vec<PathBuf> = d.strs().map_err(bad)?.into_iter().map(PathBuf::from).collect();
    let archive = Arc::new(Archive::unpacked_by_parent(&file, xml, PathBuf::from(dir))?);
    crate::binary::preload(&libs).map_err(|e| FmiError::new(&format!("FMU file {file}"), None, e))?;
    Local::new(archive, interface, &name)
}

/// Carry out one request on the instance, writing the reply's payload (after the OK byte).
fn answer(fmu: &mut Local, frame: &[u8], enc: &mut Enc) -> Result<(), FmiError> {
    let mut d = Dec(frame);
    let bad = |e: String| FmiError::new(&fmu.label, None, format!("a malformed request: {e}"));
    let code = d.u8().map_err(bad)?;
    let op = OPS.get(code as usize).copied().ok_or_else(|| bad(format!("unknown request {code}")))?;
    enc.u8(0);
    match op {
        Op::Free => {}
        Op::EnterInit => fmu.enter_initialization(d.f64().map_err(bad)?)?,
        Op::ExitInit => fmu.exit_initialization()?,
        Op::GetMixed | Op::GetValues => {
            let (vrs, kinds, ty) = if op == Op::GetMixed {
                (d.u32s().map_err(bad)?, d.kinds().map_err(bad)?, VarType::Float64)
            } else {
                let ty = d.ty().map_err(bad)?;
                (d.u32s().map_err(bad)?, Vec::new(), ty)
            };
            let n = d.u64().map_err(bad)? as usize;
            let mut out = vec![0.0; n.min(MAX_FRAME / 8)];
            if op == Op::GetMixed {
                fmu.get_mixed(&vrs, &kinds, &mut out)?;
            } else {
                fmu.get_values(ty, &vrs, &mut out)?;
            }
            enc.f64s(&out);
        }
        Op::SetMixed => {
            let (vrs, kinds, values) = (d.u32s().map_err(bad)?, d.kinds().map_err(bad)?, d.f64s().map_err(bad)?);
            fmu.set_mixed(&vrs, &kinds, &values)?;
        }
        Op::SetValues => {
            let (ty, vrs, values) = (d.ty().map_err(bad)?, d.u32s().map_err(bad)?, d.f64s().map_err(bad)?);
            fmu.set_values(ty, &vrs, &values)?;
        }
        Op::DoStep => {
            let (t, h) = (d.f64().map_err(bad)?, d.f64().map_err(bad)?);
            match fmu.do_step(t, h)? {
                None => enc.u8(0),
                Some(last) => enc.u8(1).f64(last),
            };
        }
        Op::SetTime => fmu.set_time(d.f64().map_err(bad)?)?,
        Op::SetStates => fmu.set_states(&d.f64s().map_err(bad)?)?,
        Op::GetStates | Op::GetDerivatives | Op::GetEventIndicators => {
            let n = d.u64().map_err(bad)? as usize;
            let mut out = vec![0.0; n.min(MAX_FRAME / 8)];
            match op {
                Op::GetStates => fmu.get_states(&mut out)?,
                Op::GetDerivatives => fmu.get_derivatives(&mut out)?,
                _ => fmu.get_event_indicators(&mut out)?,
            }
            enc.f64s(&out);
        }
        Op::EnterEventMode => fmu.enter_event_mode()?,
        Op::EnterContinuousTimeMode => fmu.enter_continuous_time_mode()?,
        Op::NewDiscreteStates => {
            let i = fmu.new_discrete_states()?;
            enc.u8(u8::from(i.new_discrete_states_needed))
                .u8(u8::from(i.terminate_simulation))
                .u8(u8::from(i.values_of_continuous_states_changed))
                .u8(u8::from(i.next_event_time.is_some()))
                .f64(i.next_event_time.unwrap_or(0.0));
        }
        Op::CompletedIntegratorStep => {
            let (a, b) = fmu.completed_integrator_step()?;
            enc.u8(u8::from(a)).u8(u8::from(b));
        }
        Op::SaveState => fmu.save_state()?,
        Op::RestoreState => fmu.restore_state()?,
        Op::TakeLog => {
            let log = fmu.take_log();
            enc.strs(&log);
        }
        Op::SerializeState => {
            let b = fmu.serialize_state()?;
            enc.bytes(&b);
        }
        Op::DeserializeState => fmu.deserialize_state(d.bytes().map_err(bad)?)?,
    }
    Ok(())
}

// The parent's typed calls, used by `Instance`.
impl Child {
    fn unit(&mut self, function: &str) -> Result<(), FmiError> {
        self.exchange(function).map(|_| ())
    }
    fn values(&mut self, function: &str, out: &mut [f64]) -> Result<(), FmiError> {
        let label = self.label.clone();
        let mut d = self.exchange(function)?;
        let v = d.f64s().map_err(|e| FmiError::new(&label, Some(function), format!("a malformed reply: {e}")))?;
        if v.len() != out.len() {
            return Err(FmiError::new(&label, Some(function), "a reply with the wrong number of values"));
        }
        out.copy_from_slice(&v);
        Ok(())
    }
    pub fn enter_initialization(&mut self, f: &str, start: f64) -> Result<(), FmiError> {
        self.request(Op::EnterInit).f64(start);
        self.unit(f)
    }
    pub fn simple(&mut self, f: &str, op: Op) -> Result<(), FmiError> {
        self.request(op);
        self.unit(f)
    }
    pub fn get_mixed(&mut self, f: &str, vrs: &[u32], kinds: &[VarKind], out: &mut [f64]) -> Result<(), FmiError> {
        self.request(Op::GetMixed).u32s(vrs).kinds(kinds).u64(out.len() as u64);
        self.values(f, out)
    }
    pub fn set_mixed(&mut self, f: &str, vrs: &[u32], kinds: &[VarKind], values: &[f64]) -> Result<(), FmiError> {
        self.request(Op::SetMixed).u32s(vrs).kinds(kinds).f64s(values);
        self.unit(f)
    }
    pub fn get_values(&mut self, f: &str, ty: VarType, vrs: &[u32], out: &mut [f64]) -> Result<(), FmiError> {
        self.request(Op::GetValues).u8(type_code(ty)).u32s(vrs).u64(out.len() as u64);
        self.values(f, out)
    }
    pub fn set_values(&mut self, f: &str, ty: VarType, vrs: &[u32], values: &[f64]) -> Result<(), FmiError> {
        self.request(Op::SetValues).u8(type_code(ty)).u32s(vrs).f64s(values);
        self.unit(f)
    }
    pub fn do_step(&mut self, f: &str, t: f64, h: f64) -> Result<Option<f64>, FmiError> {
        self.request(Op::DoStep).f64(t).f64(h);
        let label = self.label.clone();
        let mut d = self.exchange(f)?;
        let bad = |e: String| FmiError::new(&label, Some(f), format!("a malformed reply: {e}"));
        Ok(if d.u8().map_err(bad)? != 0 { Some(d.f64().map_err(bad)?) } else { None })
    }
    pub fn set_time(&mut self, f: &str, t: f64) -> Result<(), FmiError> {
        self.request(Op::SetTime).f64(t);
        self.unit(f)
    }
    pub fn set_states(&mut self, f: &str, x: &[f64]) -> Result<(), FmiError> {
        self.request(Op::SetStates).f64s(x);
        self.unit(f)
    }
    pub fn get_array(&mut self, f: &str, op: Op, out: &mut [f64]) -> Result<(), FmiError> {
        self.request(op).u64(out.len() as u64);
        self.values(f, out)
    }
    pub fn new_discrete_states(&mut self, f: &str) -> Result<EventInfo, FmiError> {
        self.request(Op::NewDiscreteStates);
        let label = self.label.clone();
        let mut d = self.exchange(f)?;
        let bad = |e: String| FmiError::new(&label, Some(f), format!("a malformed reply: {e}"));
        let (a, b, c, defined, next) = (
            d.u8().map_err(bad)?,
            d.u8().map_err(bad)?,
            d.u8().map_err(bad)?,
            d.u8().map_err(bad)?,
            d.f64().map_err(bad)?,
        );
        Ok(EventInfo {
            new_discrete_states_needed: a != 0,
            terminate_simulation: b != 0,
            values_of_continuous_states_changed: c != 0,
            next_event_time: (defined != 0).then_some(next),
        })
    }
    pub fn completed_integrator_step(&mut self, f: &str) -> Result<(bool, bool), FmiError> {
        self.request(Op::CompletedIntegratorStep);
        let label = self.label.clone();
        let mut d = self.exchange(f)?;
        let bad = |e: String| FmiError::new(&label, Some(f), format!("a malformed reply: {e}"));
        Ok((d.u8().map_err(bad)? != 0, d.u8().map_err(bad)? != 0))
    }
    pub fn serialize_state(&mut self, f: &str) -> Result<Vec<u8>, FmiError> {
        self.request(Op::SerializeState);
        let label = self.label.clone();
        let mut d = self.exchange(f)?;
        d.bytes().map(<[u8]>::to_vec).map_err(|e| FmiError::new(&label, Some(f), format!("a malformed reply: {e}")))
    }
    pub fn deserialize_state(&mut self, f: &str, bytes: &[u8]) -> Result<(), FmiError> {
        self.request(Op::DeserializeState).bytes(bytes);
        self.unit(f)
    }
    /// The FMU's log messages since the last error (none if the child is gone).
    pub fn take_log(&mut self) -> Vec<String> {
        if self.gone.is_some() {
            return Vec::new();
        }
        self.request(Op::TakeLog);
        match self.exchange("log") {
            Ok(mut d) => d.strs().unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field survives the encoding; a cut message is an error, not a panic.
    #[test]
    fn messages_round_trip_and_truncations_are_errors() {
        let mut e = Enc::default();
        e.start();
        let err = FmiError::new("FMU 'X' (x.fmu)", Some("fmi2DoStep"), "returned Error").with_log(vec!["a".into()]);
        e.u8(7).f64(-0.5).u32s(&[1, 2]).kinds(&[(VarType::Int16, 1), (VarType::Boolean, 2)]).f64s(&[1.0, f64::NAN]);
        e.error(&err);
        let frame = e.frame().to_vec();
        let body = &frame[4..];
        let mut d = Dec(body);
        assert_eq!(d.u8(), Ok(7));
        assert_eq!(d.f64(), Ok(-0.5));
        assert_eq!(d.u32s(), Ok(vec![1, 2]));
        assert_eq!(d.kinds(), Ok(vec![(VarType::Int16, 1), (VarType::Boolean, 2)]));
        let v = d.f64s().unwrap();
        assert!(v[0] == 1.0 && v[1].is_nan());
        assert_eq!(d.error(), Ok(err));
        for cut in 0..body.len() {
            let mut d = Dec(&body[..cut]);
            let all = (|| -> Decoded<()> {
                d.u8()?;
                d.f64()?;
                d.u32s()?;
                d.kinds()?;
                d.f64s()?;
                d.error()?;
                Ok(())
            })();
            assert!(all.is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn signals_are_named() {
        assert_eq!(signal_name(11), "signal 11 (SIGSEGV)");
        assert_eq!(signal_name(6), "signal 6 (SIGABRT)");
        assert_eq!(signal_name(40), "signal 40");
    }
}
