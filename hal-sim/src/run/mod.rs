//! Run: time and the loop. The [`event`] queue, the [`ctx::Ctx`] every
//! handler gets, the [`world::World`] that owns the parts and runs the
//! loop, co-simulation with the firmware under QEMU ([`cosim`]), and the
//! CPU-time [`cpu::Stopwatch`] the reports use.

pub mod cosim;
pub mod cpu;
pub mod ctx;
pub mod event;
pub mod world;
