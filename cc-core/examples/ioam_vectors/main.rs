//! Prints, one per line in hex, the IOAM options cc-core's encoder emits
//! for the interop cases (used by interop/ioam/generate.py).

mod cases;

fn main() {
    for r in cases::cases() {
        let bytes = cases::emit(&r);
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        println!("{hex}");
    }
}
