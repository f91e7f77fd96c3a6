//! Every scenario shipped in `scenarios/` parses and builds its world.

use std::path::Path;

use hal_sim::{run::world::World, setup::scenario};

#[test]
fn every_shipped_scenario_parses_and_builds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let s = scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
            let w = World::new(&s, &dir, &path.display().to_string()).unwrap_or_else(|e| panic!("{e}"));
            assert!(!w.flows.is_empty(), "{}: no flows", path.display());
            n += 1;
        }
    }
    assert!(n >= 9, "{n} scenarios");
}
