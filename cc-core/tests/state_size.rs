//! Per-flow state sizes against DESIGN §8 (a layout regression check, not
//! a timing test): HPCC++ bottleneck-hop ≤ 48 bytes, 5-hop ≤ 96, LDCP ≤ 24,
//! TIMELY ≤ 24, Swift ≤ 32, θ-PowerTCP ≤ 24, PowerTCP 5-hop ≤ 96,
//! HPCC-PINT ≤ 16, NSCC ≤ 48.

use cc_core::prelude::*;
use core::mem::size_of;

#[test]
fn per_flow_state_fits_the_design_budget() {
    assert!(size_of::<HpccSender<1>>() <= 48, "{}", size_of::<HpccSender<1>>());
    assert!(size_of::<HpccSender<5>>() <= 96, "{}", size_of::<HpccSender<5>>());
    assert!(size_of::<Ldcp>() <= 24, "{}", size_of::<Ldcp>());
    assert!(size_of::<LdcpRate>() <= 24, "{}", size_of::<LdcpRate>());
    assert!(size_of::<Dctcp>() <= 44, "{}", size_of::<Dctcp>());
    assert!(size_of::<Dcqcn>() <= 64, "{}", size_of::<Dcqcn>());
    assert!(
        size_of::<cc_core::timely::Timely>() <= 24,
        "{}",
        size_of::<cc_core::timely::Timely>()
    );
    assert!(
        size_of::<cc_core::swift::Swift>() <= 32,
        "{}",
        size_of::<cc_core::swift::Swift>()
    );
    assert!(
        size_of::<cc_core::powertcp::ThetaPowerTcp>() <= 24,
        "{}",
        size_of::<cc_core::powertcp::ThetaPowerTcp>()
    );
    assert!(
        size_of::<cc_core::powertcp::PowerTcp<5>>() <= 96,
        "{}",
        size_of::<cc_core::powertcp::PowerTcp<5>>()
    );
    assert!(
        size_of::<cc_core::hpcc_pint::HpccPint>() <= 16,
        "{}",
        size_of::<cc_core::hpcc_pint::HpccPint>()
    );
    assert!(
        size_of::<cc_core::nscc::Nscc>() <= 48,
        "{}",
        size_of::<cc_core::nscc::Nscc>()
    );
}

#[test]
fn decisions_and_events_stay_small() {
    // Both cross the firmware's event channel and live on its stack. An
    // ACK with its NIC sample (20 bytes) makes the event 72 bytes where a
    // pointer has 8 (its telemetry slice is 16); its path's EV (3) fits
    // what was padding, as it does in the 40-byte decision.
    assert!(size_of::<Decision>() <= 40, "{}", size_of::<Decision>());
    let bound = if size_of::<usize>() == 8 { 72 } else { 64 };
    assert!(size_of::<Event<'static>>() <= bound, "{}", size_of::<Event<'static>>());
}
