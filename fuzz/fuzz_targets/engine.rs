//! The engine under arbitrary event sequences (DESIGN §4, §9): no panic,
//! and the invariants of `cc_core::testing::model` (windows inside their
//! clamps, rate within line rate or IW/T, no timer armed in the past, a
//! refused event changes nothing, no event touches another flow), the model
//! the property tests share. The operations are the model's own
//! (`model::Step`, `Arbitrary` with cc-core's `arbitrary` feature).
#![no_main]
use cc_core::prelude::*;
use cc_core::testing::model::{Model, Step};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (bool, Vec<Step>)| {
    let (probe, steps) = input;
    let mut m = Model::new(probe);
    let mut now = 0u64;
    for step in steps.iter().take(512) {
        now = now.saturating_add(step.dt as u64);
        if let Err(v) = m.step(Instant::from_nanos(now), step.flow as u32, &step.op) {
            panic!("{v}");
        }
    }
});
