//! DCQCN's reaction point in `f64`, written from the algorithm as NICs run
//! it: three periodic timers from the first CNP (alpha every Ta, a
//! decrease check every Td, the increase timer every Ti from the last
//! decrease), each event taken one at a time in time order, and the
//! optional byte counter. The engine's laziness (alpha brought up to date
//! when read, no timer while nothing can change) is not modelled: the
//! property test checks that it changes nothing.

/// Parameters of the model, in plain units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcqcnRefParams {
    /// Alpha gain g.
    pub g: f64,
    /// Ta, Td, Ti in ns.
    pub ta_ns: u64,
    /// Td.
    pub td_ns: u64,
    /// Ti.
    pub ti_ns: u64,
    /// F.
    pub f: u32,
    /// R_AI, Mb/s.
    pub ai_mbps: f64,
    /// R_HAI, Mb/s.
    pub hai_mbps: f64,
    /// Rate floor, Mb/s.
    pub min_mbps: f64,
    /// Line rate, Mb/s.
    pub line_mbps: f64,
    /// B, bytes (0: no byte counter).
    pub byte_counter: f64,
    /// Rt = Rc at every decrease.
    pub clamp: bool,
}

/// One flow's reaction point.
#[derive(Clone, Debug, PartialEq)]
pub struct DcqcnRef {
    /// Parameters.
    pub p: DcqcnRefParams,
    /// Rc, Mb/s.
    pub rc: f64,
    /// Rt, Mb/s.
    pub rt: f64,
    /// alpha.
    pub alpha: f64,
    /// Next alpha update, ns (None before the first CNP).
    pub next_alpha: Option<u64>,
    /// A CNP since the last alpha update.
    pub alpha_flag: bool,
    /// Next decrease check, ns.
    pub next_dec: Option<u64>,
    /// A CNP waits for a decrease check.
    pub dec_flag: bool,
    /// Next increase event of the timer, ns.
    pub next_inc: Option<u64>,
    /// Timer increase events since the last decrease.
    pub stage_t: u32,
    /// Byte-counter increase events since the last decrease.
    pub stage_b: u32,
    /// Bytes towards the next byte-counter event.
    pub bytes: f64,
}

impl DcqcnRef {
    /// A flow at the line rate.
    pub fn new(p: DcqcnRefParams) -> Self {
        DcqcnRef {
            p,
            rc: p.line_mbps,
            rt: p.line_mbps,
            alpha: 1.0,
            next_alpha: None,
            alpha_flag: false,
            next_dec: None,
            dec_flag: false,
            next_inc: None,
            stage_t: 0,
            stage_b: 0,
            bytes: 0.0,
        }
    }

    /// Runs every timer event at or before `t`, in time order (alpha, then
    /// increase, then decrease at the same instant).
    pub fn advance(&mut self, t: u64) {
        loop {
            let cands = [(self.next_alpha, 0u8), (self.next_inc, 1), (self.next_dec, 2)];
            let Some((at, kind)) = cands
                .iter()
                .filter_map(|&(x, k)| x.map(|x| (x, k)))
                .filter(|&(x, _)| x <= t)
                .min()
            else {
                return;
            };
            match kind {
                0 => {
                    let flag = if self.alpha_flag { 1.0 } else { 0.0 };
                    self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g * flag;
                    self.alpha_flag = false;
                    self.next_alpha = Some(at + self.p.ta_ns);
                }
                1 => {
                    self.increase(
                        self.stage_t,
                        if self.p.byte_counter > 0.0 {
                            self.stage_b
                        } else {
                            self.stage_t
                        },
                    );
                    self.stage_t += 1;
                    self.next_inc = Some(at + self.p.ti_ns);
                }
                _ => {
                    if self.dec_flag {
                        if self.p.clamp || self.stage_t + self.stage_b > 0 {
                            self.rt = self.rc;
                        }
                        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(self.p.min_mbps.min(self.p.line_mbps));
                        self.stage_t = 0;
                        self.stage_b = 0;
                        self.bytes = 0.0;
                        self.dec_flag = false;
                        self.next_inc = Some(at + self.p.ti_ns);
                    }
                    self.next_dec = Some(at + self.p.td_ns);
                }
            }
        }
    }

    fn increase(&mut self, t: u32, b: u32) {
        let f = self.p.f;
        if t.max(b) >= f {
            let step = if t.min(b) > f { self.p.hai_mbps } else { self.p.ai_mbps };
            self.rt = (self.rt + step).min(self.p.line_mbps);
        }
        self.rc = (self.rc + self.rt) / 2.0;
    }

    /// A CNP at `t`.
    pub fn on_cnp(&mut self, t: u64) {
        self.advance(t);
        if self.next_alpha.is_none() {
            self.alpha = 1.0;
            self.alpha_flag = false;
            self.next_alpha = Some(t + self.p.ta_ns);
            self.next_dec = Some(t + self.p.td_ns);
            self.rt = self.rc;
        } else {
            self.alpha_flag = true;
        }
        self.dec_flag = true;
    }

    /// `len` bytes sent at `t`.
    pub fn on_sent(&mut self, t: u64, len: f64) {
        self.advance(t);
        if self.p.byte_counter > 0.0 && self.next_inc.is_some() {
            self.bytes += len;
            while self.bytes >= self.p.byte_counter {
                self.bytes -= self.p.byte_counter;
                self.increase(self.stage_t, self.stage_b);
                self.stage_b += 1;
            }
        }
    }
}
