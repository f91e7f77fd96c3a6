//! The crate's modules form layers: no two top-level modules name each
//! other (`crate::a` in `b` and `crate::b` in `a`). A module that names
//! another depends on it, so such a pair is a circle that ties the two
//! together (the registry and each algorithm, the event API and the
//! telemetry types, fixed-point arithmetic and units were three once).
//!
//! Read from the sources: every `crate::module` a file names outside
//! comments, its in-file test module and items under `#[cfg(doc)]` (an
//! import made only for a documentation link), counted for the file's
//! top-level module. Test files (`tests.rs`) and the test-support module
//! are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The top-level module a file under `src/` belongs to.
fn top_module(rel: &Path) -> String {
    let first = rel.components().next().expect("a path under src");
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_string()
}

/// The code of a file that the build of the crate itself compiles: with
/// comments, the in-file test module and `#[cfg(doc)]` items taken out.
fn production_code(src: &str) -> String {
    let mut out = String::new();
    let mut skip_doc_item = false;
    let lines: Vec<&str> = src.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let next_is_mod = lines.get(i + 1).is_some_and(|n| n.trim_start().starts_with("mod "));
        if t.starts_with("#[cfg(test)]") && next_is_mod {
            // Everything from the test module on is test code (the
            // crate keeps it last in a file).
            break;
        }
        if t.starts_with("#[cfg(doc)]") {
            skip_doc_item = true;
            continue;
        }
        if skip_doc_item {
            // The item the attribute is on: up to its end (a `use` ends
            // with `;`).
            if t.ends_with(';') || t.ends_with('}') {
                skip_doc_item = false;
            }
            continue;
        }
        let code = match t.find("//") {
            Some(i) => &t[..i],
            None => t,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The top-level modules `code` names as `crate::name` (not `$crate::`).
fn named_modules(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = &rest[..i];
        let after = &rest[i + "crate::".len()..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let is_dollar = before.ends_with('$');
        let is_part_of_word = before
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        if !name.is_empty() && !is_dollar && !is_part_of_word && name.starts_with(|c: char| c.is_ascii_lowercase()) {
            names.insert(name);
        }
        rest = after;
    }
    names
}

fn visit(dir: &Path, root: &Path, deps: &mut BTreeMap<String, BTreeSet<String>>) {
    for entry in fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            visit(&path, root, deps);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") || path.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let rel = path.strip_prefix(root).expect("under src");
        let module = top_module(rel);
        if module == "testing" || module == "lib" {
            continue;
        }
        let src = fs::read_to_string(&path).expect("a source file");
        let named = named_modules(&production_code(&src));
        let entry = deps.entry(module.clone()).or_default();
        entry.extend(named.into_iter().filter(|n| *n != module));
    }
}

fn dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut deps = BTreeMap::new();
    visit(&root, &root, &mut deps);
    deps
}

#[test]
fn no_two_modules_name_each_other() {
    let deps = dependencies();
    // The reading itself: the modules are found, and the layers that
    // must hold are read as dependencies.
    for (below, above) in [
        ("units", "event"),
        ("telemetry", "event"),
        ("event", "algorithms"),
        ("controller", "nscc"),
    ] {
        assert!(
            deps.get(above).is_some_and(|d| d.contains(below)),
            "{above} is read as naming {below}: the reading is broken ({deps:?})"
        );
    }
    let mut circles = Vec::new();
    for (a, named) in &deps {
        for b in named {
            if a < b && deps.get(b).is_some_and(|d| d.contains(a)) {
                circles.push(format!("{a} <-> {b}"));
            }
        }
    }
    assert!(circles.is_empty(), "modules that name each other: {circles:?}");
}

#[test]
fn the_reading_sees_a_circle() {
    // A planted pair is found, a doc-only import and a `$crate` path are not.
    let a = production_code("use crate::b::X;\n#[cfg(doc)]\nuse crate::c::Y;\nfn f() { $crate::d::z(); }\n");
    assert_eq!(named_modules(&a), BTreeSet::from(["b".to_string()]));
    let b = production_code(
        "// crate::a in a comment\nuse crate::a::X;\n#[cfg(test)]\nmod tests {\n    use crate::e::Z;\n}\n",
    );
    assert_eq!(named_modules(&b), BTreeSet::from(["a".to_string()]));
}
