//! Setup: what a run is made from. The scenario file and its checks
//! ([`scenario`], with the engine configuration each algorithm gets), the
//! topology it names ([`topo`]) and the flows it offers ([`workload`]).
//! Nothing here runs; [`crate::run::world::World::new`] builds a world
//! from it.

pub mod connection_matrix;
pub mod htsim_topo;
pub mod scenario;
pub mod topo;
pub mod uet_htsim;
pub mod workload;
