//! Passes the linker scripts for bare-metal RISC-V builds only, so the crate
//! still checks on the host. The rv32 image uses `memory-rv32.x`, the rv64
//! image `memory-rv64.x` (code in flash, see its comment), copied to the
//! name `memory.x` that riscv-rt's `link.x` includes.
use std::{env, fs, path::PathBuf};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let map = if arch == "riscv64" {
        "memory-rv64.x"
    } else {
        "memory-rv32.x"
    };
    fs::copy(map, out.join("memory.x")).expect("the memory maps are next to build.rs");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory-rv32.x");
    println!("cargo:rerun-if-changed=memory-rv64.x");
    println!("cargo:rerun-if-changed=build.rs");
    if arch.starts_with("riscv") {
        println!("cargo:rustc-link-arg=-Tmemory.x");
        println!("cargo:rustc-link-arg=-Tlink.x");
        println!("cargo:rustc-link-arg=-Tdefmt.x");
    }
}
