//! The C ABI against its stored snapshot (`cc-ffi/abi/layout.txt`).
//!
//! `include/cc_engine.h` is read as C reads it: a C program generated from
//! the header's own declarations is compiled with the host's C compiler
//! and prints every struct's size and alignment, every field's offset,
//! every enumeration value and constant, and every function's prototype
//! (parameter names dropped); the same structs' layout on riscv32imac
//! (4-byte pointers) comes from the RISC-V cross compiler. That listing is
//! compared with the snapshot.
//!
//! docs/c-abi.md's rules, held here:
//! - a change or removal of anything listed is a major change:
//!   `CC_ABI_VERSION_MAJOR` must be above the snapshot's;
//!   so is a new `cc_status`, `CC_REQUEST_*` or `CC_TIMER_*` value, which
//!   an existing function may return to a caller that cannot handle it;
//! - any other addition alone (a function, a constant, an algorithm code,
//!   a struct) is a minor change: `CC_ABI_VERSION_MINOR` must be above the
//!   snapshot's, or the major raised;
//! - whatever the change, the snapshot is then written again, so that it
//!   is always the header's: `CC_ABI_BLESS=1 cargo test --test abi_layout`
//!   writes it, and refuses to when the version does not allow the change.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// One listed item: what it is (`struct cc_hop`, `field cc_hop.ts`,
/// `define CC_MAX_HOPS`, `enum cc_status.CC_STATUS_OK`, `fn cc_on_ack`)
/// and its value (size and alignment, offset, value, prototype).
type Layout = BTreeMap<String, String>;

/// The version and the layout, as the snapshot file holds them.
#[derive(Clone, Debug, PartialEq)]
struct Snapshot {
    major: u32,
    minor: u32,
    layout: Layout,
}

/// The header's declarations, as the generated C program needs them.
#[derive(Debug, Default)]
struct Declarations {
    /// `#define` names (the include guard and the version excluded).
    defines: Vec<String>,
    /// Each typedef'd struct with its fields' names.
    structs: Vec<(String, Vec<String>)>,
    /// Each typedef'd enum with its variants.
    enums: Vec<(String, Vec<String>)>,
    /// Each function: its name and its prototype, parameter names dropped.
    functions: Vec<(String, String)>,
    major: u32,
    minor: u32,
}

fn strip_comment(line: &str) -> &str {
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

/// The identifier a declaration ends with: `uint32_t speeds_mbps[8]` →
/// `speeds_mbps`, `const cc_hop *hops` → `hops`.
fn last_identifier(decl: &str) -> Option<&str> {
    let decl = match decl.find('[') {
        Some(i) => &decl[..i],
        None => decl,
    };
    let decl = decl.trim_end();
    let start = decl
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let id = &decl[start..];
    (!id.is_empty() && !id.starts_with(|c: char| c.is_ascii_digit())).then_some(id)
}

/// A prototype with its parameter names dropped and its spacing made one:
/// a parameter's name is not part of the ABI.
fn normalise_prototype(proto: &str) -> Option<(String, String)> {
    let open = proto.find('(')?;
    let close = proto.rfind(')')?;
    let head: Vec<&str> = proto[..open].split_whitespace().collect();
    let name = last_identifier(&proto[..open])?.to_string();
    let ret = head[..head.len() - 1].join(" ");
    let params: Vec<String> = proto[open + 1..close]
        .split(',')
        .map(|p| {
            let p = p.split_whitespace().collect::<Vec<_>>().join(" ");
            if p == "void" {
                return p;
            }
            match last_identifier(&p) {
                Some(id) => {
                    let cut = p.rfind(id).unwrap_or(p.len());
                    let mut ty = p[..cut].trim_end().to_string();
                    ty.push_str(&p[cut + id.len()..]);
                    ty
                }
                None => p,
            }
        })
        .collect();
    Some((name.clone(), format!("{ret} {name}({})", params.join(", "))))
}

fn parse_header(text: &str) -> Declarations {
    let mut d = Declarations::default();
    let mut lines = text.lines().map(|l| strip_comment(l).trim()).peekable();
    let mut extern_c = false;
    while let Some(line) = lines.next() {
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("#define ") {
            let mut parts = rest.splitn(2, char::is_whitespace);
            let name = parts.next().unwrap_or_default().to_string();
            let value = parts.next().unwrap_or_default().trim();
            match name.as_str() {
                "CC_ABI_VERSION_MAJOR" => d.major = value.parse().expect("a numeric major version"),
                "CC_ABI_VERSION_MINOR" => d.minor = value.parse().expect("a numeric minor version"),
                _ if value.is_empty() => {} // the include guard
                _ => d.defines.push(name),
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        if line.starts_with("extern \"C\"") {
            extern_c = true;
            continue;
        }
        if line == "typedef struct {" || line == "typedef enum {" {
            let is_struct = line.contains("struct");
            let mut members = Vec::new();
            for body in lines.by_ref() {
                if let Some(name) = body.strip_prefix('}') {
                    let name = name.trim().trim_end_matches(';').trim().to_string();
                    if is_struct {
                        d.structs.push((name, members));
                    } else {
                        d.enums.push((name, members));
                    }
                    break;
                }
                if body.is_empty() {
                    continue;
                }
                let decl = body.trim_end_matches([';', ',']);
                let decl = match decl.find('=') {
                    Some(i) if !is_struct => decl[..i].trim(),
                    _ => decl,
                };
                if let Some(id) = last_identifier(decl) {
                    members.push(id.to_string());
                }
            }
            continue;
        }
        if extern_c && line.contains('(') && !line.starts_with('}') {
            let mut proto = line.to_string();
            while !proto.trim_end().ends_with(';') {
                match lines.next() {
                    Some(more) => {
                        proto.push(' ');
                        proto.push_str(more);
                    }
                    None => break,
                }
            }
            if let Some(f) = normalise_prototype(proto.trim_end_matches(';')) {
                d.functions.push(f);
            }
        }
    }
    d
}

/// A C program that prints the layout of `d`'s structs, enums and
/// constants, one `kind name value` line each.
fn layout_program(d: &Declarations) -> String {
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <stdalign.h>\n#include \"cc_engine.h\"\nint main(void) {\n",
    );
    for name in &d.defines {
        writeln!(c, "  printf(\"define {name}\\t%lld\\n\", (long long)({name}));").unwrap();
    }
    for (name, variants) in &d.enums {
        writeln!(c, "  printf(\"enum {name}\\tsize %zu\\n\", sizeof({name}));").unwrap();
        for v in variants {
            writeln!(c, "  printf(\"enum {name}.{v}\\t%lld\\n\", (long long){v});").unwrap();
        }
    }
    for (name, fields) in &d.structs {
        writeln!(
            c,
            "  printf(\"struct {name}\\tsize %zu align %zu\\n\", sizeof({name}), alignof({name}));"
        )
        .unwrap();
        for f in fields {
            writeln!(
                c,
                "  printf(\"field {name}.{f}\\toffset %zu size %zu\\n\", offsetof({name}, {f}), sizeof((({name} *)0)->{f}));"
            )
            .unwrap();
        }
    }
    c.push_str("  return 0;\n}\n");
    c
}

/// The structs' layout on the 32-bit soft core (riscv32imac, ilp32),
/// where pointers are 4 bytes: `rv32 struct …` and `rv32 field …` items.
/// Read at compile time, without running anything: each value is the
/// size of a char array of that many bytes (plus one), which the RISC-V
/// cross compiler (Debian's gcc-riscv64-unknown-elf, with picolibc for
/// `stdint.h`; the test command installs both) compiles to an object, and
/// its `nm -S` lists.
fn rv32_layout(d: &Declarations, work: &Path) -> Layout {
    let mut c = String::from("#include <stddef.h>\n#include \"cc_engine.h\"\n");
    let mut keys = Vec::new();
    let mut value = |c: &mut String, key: String, expr: String| {
        writeln!(c, "char v{}[({expr}) + 1];", keys.len()).unwrap();
        keys.push(key);
    };
    for (name, fields) in &d.structs {
        value(&mut c, format!("rv32 struct {name}\tsize"), format!("sizeof({name})"));
        value(
            &mut c,
            format!("rv32 struct {name}\talign"),
            format!("_Alignof({name})"),
        );
        for f in fields {
            value(
                &mut c,
                format!("rv32 field {name}.{f}\toffset"),
                format!("offsetof({name}, {f})"),
            );
            value(
                &mut c,
                format!("rv32 field {name}.{f}\tsize"),
                format!("sizeof((({name} *)0)->{f})"),
            );
        }
    }
    let src = work.join("rv32.c");
    let obj = work.join("rv32.o");
    std::fs::write(&src, c).unwrap();
    let gcc = "riscv64-unknown-elf-gcc";
    let built = Command::new(gcc)
        .args(["-march=rv32imac", "-mabi=ilp32", "-std=c11", "-fno-common", "-specs=picolibc.specs", "-c"])
        .arg("-I")
        .arg(crate_dir().join("include"))
        .arg("-o")
        .arg(&obj)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| {
            panic!("run {gcc} (Debian's gcc-riscv64-unknown-elf and picolibc-riscv64-unknown-elf; scripts/test.sh installs them): {e}")
        });
    assert!(
        built.status.success(),
        "the rv32 layout did not compile:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let nm = Command::new("riscv64-unknown-elf-nm")
        .arg("-S")
        .arg(&obj)
        .output()
        .expect("run riscv64-unknown-elf-nm");
    assert!(nm.status.success(), "nm failed on the rv32 layout object");
    let mut values = BTreeMap::new();
    for line in String::from_utf8(nm.stdout).unwrap().lines() {
        // address size type name
        let w: Vec<&str> = line.split_whitespace().collect();
        if let [_, size, _, name] = w[..] {
            if let Some(i) = name.strip_prefix('v').and_then(|i| i.parse::<usize>().ok()) {
                values.insert(i, u64::from_str_radix(size, 16).expect("a hex size") - 1);
            }
        }
    }
    assert_eq!(values.len(), keys.len(), "every rv32 value listed");
    // Pair each item's two values: "size S align A", "offset O size S".
    let mut layout = Layout::new();
    for (i, key) in keys.iter().enumerate() {
        let (item, what) = key.split_once('\t').unwrap();
        let v = values[&i];
        let entry: &mut String = layout.entry(item.to_string()).or_default();
        if !entry.is_empty() {
            entry.push(' ');
        }
        write!(entry, "{what} {v}").unwrap();
    }
    layout
}

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The header's layout, compiled and run on the host once for all tests.
fn current() -> Snapshot {
    static ONCE: OnceLock<Snapshot> = OnceLock::new();
    ONCE.get_or_init(compile_layout).clone()
}

fn compile_layout() -> Snapshot {
    let dir = crate_dir();
    let header = std::fs::read_to_string(dir.join("include/cc_engine.h")).expect("read include/cc_engine.h");
    let d = parse_header(&header);
    assert!(
        !d.structs.is_empty() && !d.functions.is_empty() && d.major > 0,
        "the header parsed to nothing"
    );
    let work = std::env::temp_dir().join(format!("cc-ffi-abi-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let src = work.join("layout.c");
    let exe = work.join("layout");
    std::fs::write(&src, layout_program(&d)).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(&cc)
        .arg("-std=c11")
        .arg("-Wall")
        .arg("-Werror")
        .arg("-I")
        .arg(dir.join("include"))
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("run the C compiler `{cc}`: {e}"));
    assert!(
        built.status.success(),
        "the layout program did not compile:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let run = Command::new(&exe).output().expect("run the layout program");
    assert!(run.status.success(), "the layout program failed");
    let mut layout = Layout::new();
    for line in String::from_utf8(run.stdout).unwrap().lines() {
        let (k, v) = line.split_once('\t').expect("a tab-separated line");
        layout.insert(k.to_string(), v.to_string());
    }
    layout.extend(rv32_layout(&d, &work));
    std::fs::remove_dir_all(&work).ok();
    for (name, proto) in d.functions {
        layout.insert(format!("fn {name}"), proto);
    }
    Snapshot {
        major: d.major,
        minor: d.minor,
        layout,
    }
}

fn snapshot_path() -> PathBuf {
    crate_dir().join("abi/layout.txt")
}

fn render(s: &Snapshot) -> String {
    let mut out = format!(
        "# cc_engine.h's ABI on the host (x86_64) and on riscv32imac (`rv32`): sizes, offsets, values, prototypes.\n\
         # Checked by cc-ffi/tests/abi_layout.rs; written by\n\
         # `CC_ABI_BLESS=1 cargo test --test abi_layout` (in cc-ffi/) only when the\n\
         # version allows the change (docs/c-abi.md). Do not edit.\n\
         version\t{}.{}\n",
        s.major, s.minor
    );
    for (k, v) in &s.layout {
        writeln!(out, "{k}\t{v}").unwrap();
    }
    out
}

fn read_snapshot(path: &Path) -> Option<Snapshot> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut version = None;
    let mut layout = Layout::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (k, v) = line.split_once('\t')?;
        if k == "version" {
            let (ma, mi) = v.split_once('.')?;
            version = Some((ma.parse().ok()?, mi.parse().ok()?));
        } else {
            layout.insert(k.to_string(), v.to_string());
        }
    }
    let (major, minor) = version?;
    Some(Snapshot { major, minor, layout })
}

/// How `now` differs from `then`.
#[derive(Debug, Default, PartialEq)]
struct Change {
    /// Changed or removed: a major change.
    breaking: Vec<String>,
    /// New: a minor change.
    added: Vec<String>,
}

fn compare(then: &Layout, now: &Layout) -> Change {
    let mut c = Change::default();
    for (k, v) in then {
        match now.get(k) {
            None => c.breaking.push(format!("removed: {k} ({v})")),
            Some(w) if w != v => c.breaking.push(format!("changed: {k}: {v} -> {w}")),
            Some(_) => {}
        }
    }
    for (k, v) in now {
        if !then.contains_key(k) {
            if ADDED_BUT_MAJOR.iter().any(|p| k.starts_with(p)) {
                c.breaking
                    .push(format!("added (a caller's switch would not handle it): {k} ({v})"));
            } else {
                c.added.push(format!("added: {k} ({v})"));
            }
        }
    }
    c
}

/// Values an existing function may now hand back, which a caller built
/// against the older header would not handle: new ones are a major
/// change (docs/c-abi.md, "Stability").
const ADDED_BUT_MAJOR: [&str; 3] = ["enum cc_status.", "define CC_REQUEST_", "define CC_TIMER_"];

/// Why the version does not allow the change from `then` to `now`, if it
/// does not.
fn refusal(then: &Snapshot, now: &Snapshot, change: &Change) -> Option<String> {
    if now.major < then.major || (now.major == then.major && now.minor < then.minor) {
        return Some(format!(
            "the header's version {}.{} is below the snapshot's {}.{}",
            now.major, now.minor, then.major, then.minor
        ));
    }
    if !change.breaking.is_empty() && now.major == then.major {
        return Some(format!(
            "a layout changed or was removed while CC_ABI_VERSION_MAJOR stayed {}: raise it (cc-ffi/src/lib.rs), \
             add a line to docs/c-abi.md's changelog, regenerate the header and bless the snapshot:\n  {}",
            now.major,
            change.breaking.join("\n  ")
        ));
    }
    if !change.added.is_empty() && now.major == then.major && now.minor == then.minor {
        return Some(format!(
            "items were added while the version stayed {}.{}: raise CC_ABI_VERSION_MINOR and bless the snapshot:\n  {}",
            now.major,
            now.minor,
            change.added.join("\n  ")
        ));
    }
    None
}

#[test]
fn the_header_matches_its_abi_snapshot() {
    let now = current();
    let path = snapshot_path();
    let bless = std::env::var("CC_ABI_BLESS").is_ok_and(|v| v == "1");
    let Some(then) = read_snapshot(&path) else {
        assert!(
            bless,
            "no readable snapshot at {}; write it with CC_ABI_BLESS=1",
            path.display()
        );
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, render(&now)).unwrap();
        return;
    };
    let change = compare(&then.layout, &now.layout);
    if let Some(why) = refusal(&then, &now, &change) {
        panic!("cc_engine.h breaks its ABI rules: {why}");
    }
    if then == now {
        return;
    }
    if bless {
        std::fs::write(&path, render(&now)).unwrap();
        return;
    }
    panic!(
        "cc_engine.h's ABI is {}.{}, the snapshot's {}.{}; the version allows the change, so write the \
         snapshot again: (cd cc-ffi && CC_ABI_BLESS=1 cargo test --test abi_layout)\n  {}",
        now.major,
        now.minor,
        then.major,
        then.minor,
        change
            .breaking
            .iter()
            .chain(&change.added)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n  ")
    );
}

/// The snapshot is the header's, so an old checkout cannot pass with a
/// stale file: every struct, field, constant and function is listed.
#[test]
fn the_snapshot_lists_every_declaration() {
    let header = std::fs::read_to_string(crate_dir().join("include/cc_engine.h")).unwrap();
    let d = parse_header(&header);
    let snap = read_snapshot(&snapshot_path()).expect("abi/layout.txt");
    for (name, fields) in &d.structs {
        assert!(snap.layout.contains_key(&format!("struct {name}")), "struct {name}");
        for f in fields {
            assert!(snap.layout.contains_key(&format!("field {name}.{f}")), "{name}.{f}");
        }
    }
    for (name, _) in &d.functions {
        assert!(snap.layout.contains_key(&format!("fn {name}")), "fn {name}");
    }
    for name in &d.defines {
        assert!(snap.layout.contains_key(&format!("define {name}")), "define {name}");
    }
    // The parser found what the C API is known to have.
    for known in ["cc_decision", "cc_ack", "cc_hop", "cc_ldcp_config"] {
        assert!(d.structs.iter().any(|(n, _)| n == known), "{known} not parsed");
    }
    assert!(d.functions.iter().any(|(n, _)| n == "cc_on_ack"));
    assert!(d.enums.iter().any(|(n, _)| n == "cc_status"));
}

/// The rules on planted changes: a field moved, a struct grown, a value
/// renumbered, a function's parameter retyped, each under the same major;
/// an addition under the same minor; and the allowed versions of each.
#[test]
fn planted_changes_are_refused_unless_the_version_allows_them() {
    let base = current();
    let with = |f: &dyn Fn(&mut Layout)| {
        let mut layout = base.layout.clone();
        f(&mut layout);
        layout
    };
    let check = |layout: Layout, major: u32, minor: u32| {
        let now = Snapshot { major, minor, layout };
        refusal(&base, &now, &compare(&base.layout, &now.layout))
    };
    let (ma, mi) = (base.major, base.minor);
    let moved = with(&|l| {
        l.insert("field cc_decision.window_q4".into(), "offset 4 size 4".into());
    });
    let grown = with(&|l| {
        l.insert("struct cc_ldcp_config".into(), "size 999 align 8".into());
    });
    let renumbered = with(&|l| {
        l.insert("enum cc_status.CC_STATUS_OK".into(), "1".into());
    });
    let retyped = with(&|l| {
        let p = l["fn cc_on_ack"].replace("uint64_t", "uint32_t");
        l.insert("fn cc_on_ack".into(), p);
    });
    let rv32_only = with(&|l| {
        l.insert("rv32 struct cc_decision".into(), "size 28 align 4".into());
    });
    let removed = with(&|l| {
        l.remove("fn cc_abi_version");
    });
    let added = with(&|l| {
        l.insert(
            "fn cc_nscc_configure".into(),
            "cc_status cc_nscc_configure(void)".into(),
        );
    });
    let new_status = with(&|l| {
        l.insert("enum cc_status.CC_STATUS_NEW".into(), "99".into());
    });
    let new_request = with(&|l| {
        l.insert("define CC_REQUEST_NEW".into(), "99".into());
    });
    for breaking in [
        &moved,
        &grown,
        &renumbered,
        &retyped,
        &rv32_only,
        &removed,
        &new_status,
        &new_request,
    ] {
        assert!(check(breaking.clone(), ma, mi).is_some());
        assert!(
            check(breaking.clone(), ma, mi + 1).is_some(),
            "a minor raise does not allow a break"
        );
        assert_eq!(check(breaking.clone(), ma + 1, 0), None);
    }
    assert!(check(added.clone(), ma, mi).is_some());
    assert_eq!(check(added.clone(), ma, mi + 1), None);
    assert_eq!(check(added, ma + 1, 0), None);
    assert_eq!(check(base.layout.clone(), ma, mi), None);
    assert!(check(base.layout.clone(), ma - 1, mi).is_some(), "a version going back");
}

#[test]
fn prototypes_drop_parameter_names_only() {
    let (name, p) =
        normalise_prototype("cc_status cc_on_ack(cc_engine *e, uint32_t handle, const cc_hop *hops, uint8_t key[16])")
            .unwrap();
    assert_eq!(name, "cc_on_ack");
    assert_eq!(
        p,
        "cc_status cc_on_ack(cc_engine *, uint32_t, const cc_hop *, uint8_t[16])"
    );
    let (_, p) = normalise_prototype("uint32_t cc_abi_version(void)").unwrap();
    assert_eq!(p, "uint32_t cc_abi_version(void)");
}
