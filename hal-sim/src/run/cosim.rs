//! Co-simulation (hardware in the loop): chosen flows' congestion control
//! runs inside the nic-firmware `replay` image under QEMU instead of in the
//! simulator's own engine. Each event goes to the firmware as a codec frame
//! over its UART and the simulator waits for the answer frame, so the run
//! stays deterministic and, the engine being bit-identical on the soft
//! core, gives the same results as the in-process run.
//!
//! ```text
//!  hal-sim ──event frame──▶ qemu.sh stdin ─▶ channel ─▶ replay image (cc-core)
//!  hal-sim ◀─answer frame── qemu.sh stdout ◀─ channel ◀─┘
//! ```
//!
//! The channel is the image's: semihosting file I/O for the default QEMU
//! build (about 30 000 round trips a second), the UART for an image built
//! without `channel-semihosting` (about 500).

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use cc_core::codec::{self, FrameKind, MAX_FRAME};
use cc_core::prelude::*;

use crate::output::trace::Selection;

/// A firmware image running under QEMU, answering events in lockstep.
pub struct Firmware {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    buf: Vec<u8>,
    /// Which host's flows it runs.
    pub selection: Selection,
    /// Events it answered.
    pub events: u64,
    /// Time spent on the round trips (event out, answer back).
    pub waited: std::time::Duration,
    /// The first failure (the process died, a frame did not decode); after
    /// one, the firmware is no longer asked.
    pub failure: Option<String>,
}

impl Firmware {
    /// Starts `runner ELF` (e.g. `nic-firmware/scripts/qemu.sh`), configures
    /// the firmware's engine with `cfg` and checks its echo.
    pub fn spawn(runner: &Path, elf: &Path, cfg: &AnyConfig, selection: Selection) -> Result<Self, String> {
        let mut child = Command::new(runner)
            .arg(elf)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {} {}: {e}", runner.display(), elf.display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut fw = Firmware {
            child,
            stdin,
            stdout,
            buf: Vec::new(),
            selection,
            events: 0,
            waited: std::time::Duration::ZERO,
            failure: None,
        };
        let mut frame = [0u8; MAX_FRAME];
        let n = codec::encode_config(cfg, &mut frame).map_err(|e| format!("configuration: {e}"))?;
        fw.send(&frame[..n])?;
        let echo = fw.receive()?;
        if echo != frame[..n] {
            return Err("the firmware refused the configuration".into());
        }
        Ok(fw)
    }

    fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.stdin
            .write_all(bytes)
            .and_then(|_| self.stdin.flush())
            .map_err(|e| format!("firmware input closed: {e}"))
    }

    /// Reads one whole frame's bytes.
    fn receive(&mut self) -> Result<Vec<u8>, String> {
        let mut chunk = [0u8; 512];
        loop {
            match codec::read_frame(&self.buf) {
                Ok(f) => {
                    let len = f.len;
                    return Ok(self.buf.drain(..len).collect());
                }
                Err(cc_core::wire::WireError::Truncated) => {}
                Err(e) => return Err(format!("bad frame from the firmware: {e}")),
            }
            let n = self
                .stdout
                .read(&mut chunk)
                .map_err(|e| format!("firmware output: {e}"))?;
            if n == 0 {
                return Err("the firmware stopped before answering".into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Hands one event to the firmware and returns its answer.
    pub fn handle(&mut self, now: Instant, event: &Event<'_>) -> Result<Result<Decision, Error>, String> {
        let mut frame = [0u8; MAX_FRAME];
        let n = codec::encode_event(now, event, &mut frame).map_err(|e| format!("event: {e}"))?;
        let t0 = std::time::Instant::now();
        self.send(&frame[..n])?;
        let answer = self.receive()?;
        self.waited += t0.elapsed();
        let f = codec::read_frame(&answer).map_err(|e| e.to_string())?;
        if !matches!(f.kind, FrameKind::Decision | FrameKind::Refusal) {
            return Err("the firmware sent a frame that is not an answer".into());
        }
        let (flow, answer) = codec::decode_answer(&f).map_err(|e| format!("answer: {e}"))?;
        if flow != event.flow {
            return Err(format!(
                "answer for flow {} to an event of flow {}",
                flow.0, event.flow.0
            ));
        }
        self.events += 1;
        Ok(answer)
    }

    /// Round trips per second so far.
    pub fn events_per_second(&self) -> f64 {
        self.events as f64 / self.waited.as_secs_f64().max(1e-9)
    }

    /// Sends the halt frame and waits for the firmware's verdict.
    pub fn finish(mut self) -> Result<u64, String> {
        if let Some(f) = self.failure.take() {
            let _ = self.child.kill();
            return Err(f);
        }
        let mut frame = [0u8; MAX_FRAME];
        let n = codec::encode_halt(&mut frame).map_err(|e| e.to_string())?;
        self.send(&frame[..n])?;
        drop(self.stdin);
        let status = self.child.wait().map_err(|e| e.to_string())?;
        if status.success() {
            Ok(self.events)
        } else {
            Err(format!("firmware verdict: {status}"))
        }
    }
}
