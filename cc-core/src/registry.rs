//! The one list of the engine's algorithms: each configuration, its
//! title, and its roles with their controllers and names. Nothing else in
//! the crate lists them: [`crate::algorithms`] builds the registry from
//! this list (its docs say what an entry holds), and [`crate::Algorithm`],
//! the names and codes the event API carries, comes from it below that
//! API. This module imports nothing; its entries' types are only named.
//!
//! Codes are places in the list: a new algorithm goes at the end, so that
//! recorded traces keep their meaning.

/// The first of a list of identifiers.
macro_rules! first_of {
    ($first:ident $($rest:ident)*) => {
        Algorithm::$first
    };
}

/// Hands the list to `$callback`, a macro of the crate's, as
/// `$callback! { $ field: config::Type, "Title" { Variant(Controller) = "name", … } … }`:
/// the `$` first, for the macros the callback defines in turn. Called as
/// `with_registry!($ callback)`.
macro_rules! with_registry {
    ($d:tt $callback:ident) => {
        $callback! {
            $d
            /// HPCC++ parameters.
            hpcc: hpcc::HpccConfig, "HPCC++" {
                /// HPCC++ at the data sender (draft 2022-10 §4.2), telemetry from
                /// ACKs or from probes depending on
                /// [`crate::hpcc::HpccConfig::telemetry`].
                Hpcc(crate::hpcc::HpccSender<H>) = "hpcc",
                /// HPCC++ at the data receiver: Rx-HPCC window feedback (§6.3.2)
                /// and the probe responder (§7.1).
                HpccReceiver(crate::hpcc::HpccReceiver<H>) = "hpcc-receiver",
            }
            /// LDCP parameters.
            ldcp: ldcp::LdcpConfig, "LDCP" {
                /// LDCP on a programmable NIC: PAWA, sub-packet windows, fast
                /// start (draft-dai §2.2, §2.3, §3.1).
                Ldcp(crate::ldcp::Ldcp) = "ldcp",
                /// LDCP on a commercial NIC: rate-based, MD per CNP, AI per RTT
                /// probe (draft-dai §3.2).
                LdcpRate(crate::ldcp::LdcpRate) = "ldcp-rate",
            }
            /// DCTCP parameters.
            dctcp: dctcp::DctcpConfig, "DCTCP" {
                /// DCTCP (RFC 8257), the ECN-driven window baseline.
                Dctcp(crate::dctcp::Dctcp) = "dctcp",
            }
            /// DCQCN parameters.
            dcqcn: dcqcn::DcqcnConfig, "DCQCN" {
                /// DCQCN (SIGCOMM 2015), the CNP-driven rate baseline of RoCE NICs.
                Dcqcn(crate::dcqcn::Dcqcn) = "dcqcn",
            }
            /// TIMELY parameters.
            timely: timely::TimelyConfig, "TIMELY" {
                /// TIMELY (SIGCOMM 2015), rate from RTT samples, for fabrics
                /// without telemetry or ECN.
                Timely(crate::timely::Timely) = "timely",
            }
            /// Swift parameters.
            swift: swift::SwiftConfig, "Swift" {
                /// Swift (SIGCOMM 2020), fabric and endpoint windows from NIC
                /// timestamps, as Falcon's rate-update engine runs it.
                Swift(crate::swift::Swift) = "swift",
            }
            /// θ-PowerTCP parameters.
            theta_powertcp: powertcp::ThetaPowerTcpConfig, "θ-PowerTCP" {
                /// θ-PowerTCP (NSDI 2022), a window from the power measured by
                /// RTT samples, for fabrics without telemetry.
                ThetaPowerTcp(crate::powertcp::ThetaPowerTcp) = "theta_powertcp",
            }
            /// PowerTCP parameters.
            powertcp: powertcp::PowerTcpConfig, "PowerTCP" {
                /// PowerTCP (NSDI 2022), a window from the power each switch's
                /// in-band telemetry shows.
                PowerTcp(crate::powertcp::PowerTcp<H>) = "powertcp",
            }
            /// HPCC-PINT parameters.
            hpcc_pint: hpcc_pint::HpccPintConfig, "HPCC-PINT" {
                /// HPCC-PINT (SIGCOMM 2020), HPCC's window from the one- or
                /// two-byte utilization code the switches write.
                HpccPint(crate::hpcc_pint::HpccPint) = "hpcc_pint",
            }
            /// NSCC parameters.
            nscc: nscc::NsccConfig, "NSCC" {
                /// NSCC (Ultra Ethernet 1.0), a window from ECN and delay
                /// together, with quick adapt and NACKs of trimmed packets, as
                /// uet-htsim codes it.
                Nscc(crate::nscc::Nscc) = "nscc",
            }
        }
    };
}
