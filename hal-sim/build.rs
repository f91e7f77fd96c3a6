//! Tells the crate how rustc was asked to build it, for the speed figures:
//! a profile-guided build (`scripts/pgo.sh`) runs about a quarter faster
//! than a plain one, so every speed figure names its build.

fn main() {
    // Cargo passes the flags of RUSTFLAGS or `build.rustflags`, separated
    // by 0x1f.
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let build = if flags.contains("profile-use") {
        "profile-guided"
    } else if flags.contains("profile-generate") {
        "instrumented"
    } else {
        "plain"
    };
    println!("cargo:rustc-env=HAL_SIM_BUILD={build}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTFLAGS");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
}
