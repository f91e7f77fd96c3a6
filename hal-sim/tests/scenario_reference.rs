//! docs/scenarios.md lists every field the scenario parser accepts: the
//! parser's own list of a table's fields (what it answers to an unknown
//! one) against the page's section for that table.

use hal_sim::setup::scenario::{parse, Cc};

const PAGE: &str = include_str!("../../docs/scenarios.md");

const BASE: &str = hal_sim::setup::scenario::MINIMAL;

/// The fields the parser accepts in `table` ("" for the top level), over
/// every `kind` or `algorithm` the table has: the list in its refusal of
/// an unknown field (which names the fields of the kind in use).
fn accepted(table: &str) -> Vec<String> {
    let base = |text: &str| -> String {
        match table {
            "" => text.replacen("name = \"t\"", "name = \"t\"\nzz_unknown = 1", 1),
            "workload.flows" => text.replace(
                "kind = \"incast\"\nbytes = 1000000",
                "kind = \"list\"\nflows = [{ src = 1, dst = 0, bytes = 1, zz_unknown = 1 }]",
            ),
            "workload.on_off" => format!("{text}[workload.on_off]\nburst_bytes = 1\nidle_ns = 1\nzz_unknown = 1\n"),
            "switch.pfc" => format!("{text}[switch.pfc]\nxoff_bytes = 1\nzz_unknown = 1\n"),
            "nic.cc_processor" => format!("{text}[nic.cc_processor]\ncores = 1\nclock_ghz = 1\nzz_unknown = 1\n"),
            "nic.cc_processor.costs" => format!(
                "{text}[nic.cc_processor]\ncores = 1\nclock_ghz = 1\n[nic.cc_processor.costs]\nack = 1\nzz_unknown = 1\n"
            ),
            t if text.contains(&format!("[{t}]")) => {
                text.replace(&format!("[{t}]\n"), &format!("[{t}]\nzz_unknown = 1\n"))
            }
            t => format!("{text}[{t}]\nzz_unknown = 1\n"),
        }
    };
    // The scenario once per kind of the table (the topology's kind is the
    // file's first `kind`, the workload's its second).
    let variants: Vec<String> = match table {
        "topology" => ["star", "incast", "dumbbell", "leaf_spine", "fat_tree", "k_ary_fat_tree"]
            .iter()
            .map(|k| BASE.replacen("kind = \"incast\"", &format!("kind = \"{k}\""), 1))
            .collect(),
        // hal-sim's own, then every other algorithm of cc-core's registry.
        "cc" => ["hpcc", "ldcp", "ldcp_rate"]
            .into_iter()
            .chain(
                cc_core::Algorithm::ALL
                    .into_iter()
                    .filter(|a| Cc::registered(*a).is_some())
                    .map(|a| a.name()),
            )
            .map(|a| BASE.replace("algorithm = \"hpcc\"", &format!("algorithm = \"{a}\"")))
            .collect(),
        "workload" => ["list", "incast", "cdf", "csv", "ns3"]
            .iter()
            .map(|k| BASE.replace("kind = \"incast\"\nbytes", &format!("kind = \"{k}\"\nbytes")))
            .collect(),
        _ => vec![BASE.to_string()],
    };
    let mut fields = Vec::new();
    for v in variants {
        let e = parse(&base(&v), "ref.toml").expect_err("an unknown field must be refused");
        let msg = e.to_string();
        let list = msg
            .split_once("takes")
            .unwrap_or_else(|| panic!("no field list in: {msg}"))
            .1;
        let found: Vec<String> = list.split('`').skip(1).step_by(2).map(str::to_string).collect();
        assert!(!found.is_empty(), "no field list in: {msg}");
        fields.extend(found);
    }
    fields.sort();
    fields.dedup();
    fields
}

/// The page's text from `heading` to the next heading of the same level.
fn section(heading: &str) -> &'static str {
    let start = PAGE
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("docs/scenarios.md has no heading {heading:?}"));
    let level = heading.split(' ').next().unwrap();
    let rest = &PAGE[start + heading.len() + 2..];
    let end = rest.find(&format!("\n{level} ")).unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn every_field_the_parser_accepts_is_on_the_page() {
    let tables = [
        ("", "## Top level"),
        ("topology", "## `[topology]`"),
        ("switch", "## `[switch]`"),
        ("switch.pfc", "### `[switch.pfc]`"),
        ("nic", "## `[nic]`"),
        ("nic.cc_processor", "### `[nic.cc_processor]`"),
        ("nic.cc_processor.costs", "#### `[nic.cc_processor.costs]`"),
        ("cc", "## `[cc]`"),
        ("workload", "## `[workload]`"),
        ("workload.flows", "## `[workload]`"),
        ("workload.on_off", "### `[workload.on_off]`"),
        ("metrics", "## `[metrics]`"),
    ];
    let mut missing = Vec::new();
    for (table, heading) in tables {
        let text = section(heading);
        for field in accepted(table) {
            // A sub-table is described under its own heading.
            let sub = if table.is_empty() {
                field.clone()
            } else {
                format!("{table}.{field}")
            };
            if !text.contains(&format!("`{field}`")) && !PAGE.contains(&format!("`[{sub}]`")) {
                missing.push(format!("{table}.{field}"));
            }
        }
    }
    assert!(missing.is_empty(), "docs/scenarios.md does not describe: {missing:?}");
}
