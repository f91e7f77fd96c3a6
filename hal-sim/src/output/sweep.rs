//! Sweeps: a grid of runs (scenario files × values of any scenario field),
//! on all local cores, one result file per point, and a plot of FCT
//! slowdown against the first varied field, a line per everything else.
//!
//! ```text
//! hal-sim sweep hpcc.toml ldcp.toml --vary workload.load=0.3,0.5,0.7 --vary seed=1,2 --out sweep/
//! hal-sim sweep … --shard 2/8     # this machine's eighth of the grid
//! ```
//!
//! A field is written as in a scenario file, dotted (`workload.load`,
//! `switch.ecn_kmax_bytes`, `seed`); its values are TOML values (a word
//! that is none, `rx_hpcc`, is taken as a string). Each point's scenario
//! goes through the same checks as a file, so a value out of range is
//! refused with the point and the field.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::Serialize;

use crate::output::report::{Panel, Summary};
use crate::setup::scenario::{self, Scenario, ScenarioError};

/// One varied field and its values.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// Dotted field name.
    pub field: String,
    /// Its values, in order.
    pub values: Vec<toml::Value>,
}

impl Axis {
    /// `field=v1,v2,…` as given on the command line.
    pub fn parse(arg: &str) -> Result<Axis, String> {
        let (field, values) = arg
            .split_once('=')
            .ok_or_else(|| format!("--vary {arg:?}: expected FIELD=V1,V2,…"))?;
        let values: Vec<toml::Value> = values.split(',').map(|v| toml_value(v.trim())).collect();
        if field.is_empty() || values.iter().any(|v| v.as_str() == Some("")) {
            return Err(format!("--vary {arg:?}: a field and at least one value"));
        }
        Ok(Axis {
            field: field.trim().to_string(),
            values,
        })
    }
}

/// A TOML value from its text, or the text as a string.
fn toml_value(s: &str) -> toml::Value {
    format!("v = {s}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(s.to_string()))
}

/// One run of the grid.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// Its place in the whole grid (shards keep the numbering).
    pub index: usize,
    /// The scenario file.
    pub file: PathBuf,
    /// The fields set, in axis order.
    pub set: Vec<(String, toml::Value)>,
    /// A reference run (`--baseline`): drawn as a level line across the
    /// plot, not as a point of it.
    pub baseline: bool,
}

impl Point {
    /// "file field=value …", to name the point.
    pub fn label(&self) -> String {
        let mut s = self.file.display().to_string();
        for (f, v) in &self.set {
            s.push_str(&format!(" {f}={v}"));
        }
        s
    }

    /// The point's scenario: its file with the fields set, checked as a file is.
    pub fn scenario(&self) -> Result<Scenario, ScenarioError> {
        let name = self.label();
        let err = |field: &str, message: String| ScenarioError {
            file: name.clone(),
            line: None,
            field: field.into(),
            message,
        };
        let file = self.file.display().to_string();
        let original = std::fs::read_to_string(&self.file).map_err(|e| err("", e.to_string()))?;
        // An error the file has without the fields set is reported as the
        // file's own, at its own line; the file is parsed alone only then.
        let own_error = || scenario::parse(&original, &file).err();
        let Ok(mut table) = original.parse::<toml::Table>() else {
            return Err(own_error().unwrap_or_else(|| err("", "not a TOML table".into())));
        };
        for (field, value) in &self.set {
            set(&mut table, field, value.clone()).map_err(|m| err(field, m))?;
        }
        let text = toml::to_string(&table).map_err(|e| err("", e.to_string()))?;
        scenario::parse(&text, &name).map_err(|e| {
            if let Some(own) = own_error() {
                return own;
            }
            // The text parsed is the file re-written with the fields set:
            // its lines are not the file's. A field set here is named as
            // the option that set it; any other, at its line in the file.
            let vary = self.set.iter().find(|(f, _)| {
                *f == e.field || e.field.starts_with(&format!("{f}.")) || f.starts_with(&format!("{}.", e.field))
            });
            match vary {
                Some((f, v)) => ScenarioError {
                    file: format!("--vary {f}={v} on {file}"),
                    line: None,
                    field: e.field,
                    message: e.message,
                },
                None => ScenarioError {
                    file: file.clone(),
                    line: scenario::line_of_field(&original, &e.field),
                    message: format!("{} (with {})", e.message, self.overrides()),
                    field: e.field,
                },
            }
        })
    }

    /// The fields set, as the options that set them.
    fn overrides(&self) -> String {
        let set: Vec<String> = self.set.iter().map(|(f, v)| format!("--vary {f}={v}")).collect();
        set.join(" ")
    }
}

/// Sets the dotted `field` of `table` to `value`.
fn set(table: &mut toml::Table, field: &str, value: toml::Value) -> Result<(), String> {
    let mut keys: Vec<&str> = field.split('.').collect();
    let last = keys.pop().ok_or("an empty field")?;
    let mut t = table;
    for k in keys {
        let entry = t
            .entry(k.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        t = entry.as_table_mut().ok_or_else(|| format!("{k} is not a table"))?;
    }
    t.insert(last.to_string(), value);
    Ok(())
}

/// The grid: every file with every combination of the axes' values, files
/// outermost, the last axis innermost. A `cc.` field that the file's
/// algorithm does not take (`cc.eta` for an LDCP file) is not varied for
/// that file: the file runs once for the other axes' combinations, so a
/// sweep can compare algorithms while varying one algorithm's parameter.
pub fn grid(files: &[PathBuf], axes: &[Axis]) -> Vec<Point> {
    let mut points = Vec::new();
    for file in files {
        let applies = |a: &Axis| {
            let Some(v) = a.values.first() else { return true };
            let probe = Point {
                index: 0,
                file: file.clone(),
                set: vec![(a.field.clone(), v.clone())],
                baseline: false,
            };
            !(a.field.starts_with("cc.")
                && probe
                    .scenario()
                    .is_err_and(|e| e.field == a.field && e.message.starts_with("does not apply to algorithm")))
        };
        let mut sets: Vec<Vec<(String, toml::Value)>> = vec![Vec::new()];
        for a in axes.iter().filter(|a| applies(a)) {
            sets = sets
                .into_iter()
                .flat_map(|s| {
                    a.values.iter().map(move |v| {
                        let mut s = s.clone();
                        s.push((a.field.clone(), v.clone()));
                        s
                    })
                })
                .collect();
        }
        for set in sets {
            points.push(Point {
                index: points.len(),
                file: file.clone(),
                set,
                baseline: false,
            });
        }
    }
    points
}

/// `i/n`: this shard's points are those whose index is i modulo n.
pub fn shard(points: Vec<Point>, spec: &str) -> Result<Vec<Point>, String> {
    let bad = || format!("--shard {spec:?}: expected I/N with 0 ≤ I < N");
    let (i, n) = spec.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok(points.into_iter().filter(|p| p.index % n == i).collect())
}

/// One point's result, as written to its file.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// The point.
    pub point: Point,
    /// Its summary, or why it could not run.
    pub summary: Result<Summary, String>,
}

/// Runs `points` on `jobs` threads, writing `DIR/point-NNNN.json` as each
/// finishes; `done` is called after each.
pub fn run(points: &[Point], jobs: usize, out: &Path, done: impl Fn(&Outcome) + Sync) -> std::io::Result<Vec<Outcome>> {
    std::fs::create_dir_all(out)?;
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    let failure: Mutex<Option<std::io::Error>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(p) = points.get(i) else { break };
                let o = Outcome {
                    point: p.clone(),
                    summary: run_point(p),
                };
                let file = out.join(format!("point-{:04}.json", p.index));
                let text = serde_json::to_string_pretty(&o).unwrap_or_default();
                if let Err(e) = std::fs::write(&file, text + "\n") {
                    *failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                }
                done(&o);
                results.lock().unwrap_or_else(|e| e.into_inner()).push(o);
            });
        }
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    let mut v = results.into_inner().unwrap_or_else(|e| e.into_inner());
    v.sort_by_key(|o| o.point.index);
    Ok(v)
}

fn run_point(p: &Point) -> Result<Summary, String> {
    let s = p.scenario().map_err(|e| e.to_string())?;
    let dir = p.file.parent().unwrap_or(Path::new("."));
    let mut w = crate::run::world::World::new(&s, dir, &p.label()).map_err(|e| e.to_string())?;
    let t0 = crate::run::cpu::Stopwatch::start();
    w.run(|_| {});
    Ok(crate::output::report::summary(&w, &s.name, &t0))
}

/// A value as a line's name shows it: strings without their quotes.
fn shown(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// The plot's panels against the first axis (numeric), one per value the
/// plot shows (p50 and p99, or short and long flows), each with a line per
/// file and value of the other axes, the mean over seeds where `seed` is
/// an axis; `None` when the first axis is not numeric or nothing ran.
///
/// A line is named by what tells it from the others, nothing more: the
/// value of the one other axis when it is a word (`latest`), else
/// `field=value` for each that varies (`max_stage=5`), and the file only
/// when there are several: by its algorithm (`DCQCN`) where that tells the
/// files apart, else by its stem.
/// Each baseline is a level line across the points' range named
/// `baseline_name` (and its file's stem when there are several).
pub fn panels(outcomes: &[Outcome], x_field: &str, plot: Plot, baseline_name: &str) -> Option<Vec<Panel>> {
    let points: Vec<&Outcome> = outcomes.iter().filter(|o| !o.point.baseline).collect();
    let stem = |o: &Outcome| {
        o.point
            .file
            .file_stem()
            .map_or(String::new(), |f| f.to_string_lossy().into_owned())
    };
    let several_files = points.iter().any(|o| o.point.file != points[0].point.file);
    // The other axes whose value differs between points.
    let mut varying: Vec<&str> = Vec::new();
    for o in &points {
        for (f, v) in o.point.set.iter().filter(|(f, _)| f != x_field && f != "seed") {
            let differs = points
                .iter()
                .any(|p| p.point.set.iter().find(|(g, _)| g == f).map(|(_, w)| w) != Some(v));
            if differs && !varying.contains(&f.as_str()) {
                varying.push(f);
            }
        }
    }
    // Files that differ by their algorithm are named by it (HPCC++,
    // DCQCN); otherwise by their stems.
    let mut algorithms: Vec<(&Path, &str)> = Vec::new();
    for o in &points {
        if let Ok(s) = &o.summary {
            if !algorithms.iter().any(|(f, _)| *f == o.point.file.as_path()) {
                algorithms.push((o.point.file.as_path(), s.algorithm));
            }
        }
    }
    let by_algorithm = algorithms
        .iter()
        .enumerate()
        .all(|(i, (_, a))| algorithms.iter().skip(i + 1).all(|(_, b)| a != b));
    let file_name = |o: &Outcome| match algorithms.iter().find(|(f, _)| *f == o.point.file.as_path()) {
        Some((_, a)) if by_algorithm => a.to_string(),
        _ => stem(o),
    };
    let name_of = |o: &Outcome| {
        let mut parts: Vec<String> = Vec::new();
        if several_files {
            parts.push(file_name(o));
        }
        for f in &varying {
            if let Some((_, v)) = o.point.set.iter().find(|(g, _)| g == f) {
                let short = f.rsplit('.').next().unwrap_or(f);
                // A word alone says what it is (`latest`); a number
                // needs its field (`max_stage=5`).
                parts.push(if varying.len() == 1 && !several_files && v.is_str() {
                    shown(v)
                } else {
                    format!("{short}={}", shown(v))
                });
            }
        }
        if parts.is_empty() {
            stem(o)
        } else {
            parts.join(", ")
        }
    };
    // (panel, line, x) → (sum of y, runs)
    let mut acc: Vec<(usize, String, f64, f64, u32)> = Vec::new();
    for o in &points {
        let (Ok(s), Some((_, x))) = (&o.summary, o.point.set.iter().find(|(f, _)| f == x_field)) else {
            continue;
        };
        let x = x.as_float().or_else(|| x.as_integer().map(|i| i as f64))?;
        let name = name_of(o);
        for (k, (_, y)) in plot.values(s).into_iter().enumerate() {
            match acc
                .iter_mut()
                .find(|(p, l, ax, _, _)| *p == k && *l == name && *ax == x)
            {
                Some((_, _, _, sum, n)) => {
                    *sum += y;
                    *n += 1;
                }
                None => acc.push((k, name.clone(), x, y, 1)),
            }
        }
    }
    if acc.is_empty() {
        return None;
    }
    let titles = plot.panel_titles();
    let mut panels: Vec<Panel> = titles.iter().map(|t| (t.to_string(), Vec::new())).collect();
    for (k, name, x, sum, n) in acc {
        let lines = &mut panels[k].1;
        match lines.iter_mut().find(|(l, _)| *l == name) {
            Some((_, pts)) => pts.push((x, sum / n as f64)),
            None => lines.push((name, vec![(x, sum / n as f64)])),
        }
    }
    for (_, lines) in &mut panels {
        for (_, pts) in lines.iter_mut() {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
    }
    let (lo, hi) = panels
        .iter()
        .flat_map(|(_, l)| l.iter().flat_map(|(_, p)| p.iter().map(|q| q.0)))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let baselines: Vec<&Outcome> = outcomes.iter().filter(|o| o.point.baseline).collect();
    let several_baselines = baselines.iter().any(|o| o.point.file != baselines[0].point.file);
    // (panel, name) → (sum of y, runs), averaged over the baseline's seeds.
    let mut levels: Vec<(usize, String, f64, u32)> = Vec::new();
    for o in baselines {
        let Ok(s) = &o.summary else { continue };
        let name = if several_baselines {
            format!("{baseline_name} {}", stem(o))
        } else {
            baseline_name.to_string()
        };
        for (k, (_, y)) in plot.values(s).into_iter().enumerate() {
            match levels.iter_mut().find(|(p, l, _, _)| *p == k && *l == name) {
                Some((_, _, sum, n)) => {
                    *sum += y;
                    *n += 1;
                }
                None => levels.push((k, name.clone(), y, 1)),
            }
        }
    }
    for (k, name, sum, n) in levels {
        let y = sum / n as f64;
        panels[k].1.push((name, vec![(lo, y), (hi, y)]));
    }
    Some(panels)
}

/// What a sweep's plot shows against its first varied field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plot {
    /// FCT slowdown p50 and p99 over all flows.
    All,
    /// FCT slowdown p99 of the short flows (≤ 30 kB) and of the long
    /// ones (> 1 MB).
    ShortLong,
    /// FCT slowdown of the last flow to finish and p99: the tail (of a
    /// permutation's equal flows, the tail FCT over a lone flow's).
    Tail,
}

impl Plot {
    /// The values of `s` it draws, each with the end of its line's label.
    fn values(self, s: &Summary) -> [(&'static str, f64); 2] {
        match self {
            Plot::All => [("p50", s.fct_slowdown.p50), ("p99", s.fct_slowdown.p99)],
            Plot::ShortLong => [("short p99", s.slowdown_short.p99), ("long p99", s.slowdown_long.p99)],
            Plot::Tail => [("max", s.fct_slowdown.max), ("p99", s.fct_slowdown.p99)],
        }
    }

    /// Each panel's title, in the order of the values drawn.
    pub fn panel_titles(self) -> [&'static str; 2] {
        match self {
            Plot::All => ["p50 over all flows", "p99 over all flows"],
            Plot::ShortLong => ["short flows (≤ 30 kB), p99", "long flows (> 1 MB), p99"],
            Plot::Tail => ["the last flow", "p99 over all flows"],
        }
    }

    /// The plot's title.
    pub fn title(self) -> &'static str {
        match self {
            Plot::All => "FCT slowdown over all flows",
            Plot::ShortLong => "FCT slowdown of short and long flows",
            Plot::Tail => "FCT slowdown of the tail",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HPCC: &str = crate::setup::scenario::MINIMAL;

    /// An HPCC++ and an LDCP scenario file in a folder of their own,
    /// removed when the test ends.
    fn files(dir: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
        let d = tempfile::Builder::new()
            .prefix(&format!("hal-sim-sweep-{dir}-"))
            .tempdir()
            .unwrap();
        let (h, l) = (d.path().join("h.toml"), d.path().join("l.toml"));
        std::fs::write(&h, HPCC).unwrap();
        std::fs::write(&l, HPCC.replace("\"hpcc\"", "\"ldcp\"")).unwrap();
        (d, h, l)
    }

    /// `cc.eta` varies the HPCC++ file only; the LDCP file runs once for
    /// each seed.
    #[test]
    fn an_algorithm_field_varies_only_the_files_that_take_it() {
        let (_dir, h, l) = files("grid");
        let axes = [
            Axis::parse("cc.eta=0.9,0.95").unwrap(),
            Axis::parse("seed=1,2").unwrap(),
        ];
        let points = grid(&[h.clone(), l.clone()], &axes);
        let of = |f: &PathBuf| points.iter().filter(|p| &p.file == f).count();
        assert_eq!((of(&h), of(&l)), (4, 2));
        assert!(points.iter().all(|p| p.scenario().is_ok()));
        assert!(points.iter().enumerate().all(|(i, p)| p.index == i));
    }

    /// A plot's lines are named by what tells them apart: a word's value
    /// alone, a number with its field, the file only when there are
    /// several; the baseline by the name given; one panel per value drawn.
    #[test]
    fn lines_are_named_by_what_varies() {
        let (_dir, h, l) = files("names");
        let out = h.parent().unwrap().join("out");
        let run_names = |files: &[PathBuf], axes: &[Axis]| {
            let mut points = grid(files, axes);
            let n = points.len();
            points.push(Point {
                index: n,
                file: files[0].clone(),
                set: vec![],
                baseline: true,
            });
            let outcomes = run(&points, 2, &out, |_| {}).unwrap();
            let panels = panels(&outcomes, "cc.eta", Plot::ShortLong, "unlimited").unwrap();
            assert_eq!(panels.len(), 2);
            assert_eq!(panels[0].0, "short flows (≤ 30 kB), p99");
            panels[0].1.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>()
        };
        let words = [
            Axis::parse("cc.eta=0.9,0.95").unwrap(),
            Axis::parse("cc.mode=sender,rx_hpcc").unwrap(),
        ];
        assert_eq!(
            run_names(std::slice::from_ref(&h), &words),
            ["sender", "rx_hpcc", "unlimited"]
        );
        let numbers = [
            Axis::parse("cc.eta=0.9,0.95").unwrap(),
            Axis::parse("cc.max_stage=0,5").unwrap(),
        ];
        assert_eq!(
            run_names(std::slice::from_ref(&h), &numbers),
            ["max_stage=0", "max_stage=5", "unlimited"]
        );
        // With two files a line carries its file's algorithm (the LDCP
        // file takes no eta, so it draws no line of its own).
        let both = run_names(&[h, l], &words[..1]);
        assert_eq!(both, ["HPCC++", "unlimited"]);
    }

    /// An error in a field the sweep set names the option, not a line of a
    /// file the user never wrote; one in the file names the file's line.
    #[test]
    fn errors_name_the_vary_option_or_the_files_line() {
        let (_dir, h, _) = files("errors");
        let point = |field: &str, v: &str| Point {
            index: 0,
            file: h.clone(),
            set: vec![(field.into(), toml_value(v))],
            baseline: false,
        };
        let e = point("cc.eta", "0.0").scenario().unwrap_err();
        assert!(e.to_string().starts_with("--vary cc.eta=0.0 on "), "{e}");
        assert_eq!(e.line, None);
        let e = point("workload.lod", "0.3").scenario().unwrap_err();
        assert!(
            e.to_string().contains("--vary workload.lod=0.3") && e.message.contains("`load`"),
            "{e}"
        );
        let e = point("switch.ecn_kmax_bytes", "1").scenario().unwrap_err();
        assert_eq!(e.field, "switch.ecn_kmin_bytes");
        assert!(e.message.contains("--vary switch.ecn_kmax_bytes=1"), "{e}");
        // A file error keeps the file's own line (cc.eta on line 11).
        std::fs::write(
            &h,
            HPCC.replace("algorithm = \"hpcc\"", "algorithm = \"hpcc\"\neta = 0.0"),
        )
        .unwrap();
        let e = point("seed", "3").scenario().unwrap_err();
        assert_eq!((e.field.as_str(), e.line), ("cc.eta", Some(11)), "{e}");
    }

    /// The processor's cores, clock and coalescing are fields like any
    /// other; a value out of range names the option.
    #[test]
    fn the_cc_processor_is_swept_by_its_fields() {
        let (_dir, h, _) = files("ccp");
        let with =
            format!("{HPCC}[nic.cc_processor]\ncores = 1\nclock_ghz = 1.0\n[nic.cc_processor.costs]\nack = 100\n");
        std::fs::write(&h, with).unwrap();
        let axes = [
            Axis::parse("nic.cc_processor.cores=1,2,8").unwrap(),
            Axis::parse("nic.cc_processor.clock_ghz=0.9,1.8").unwrap(),
            Axis::parse("nic.cc_processor.coalescing=none,latest").unwrap(),
        ];
        let points = grid(std::slice::from_ref(&h), &axes);
        assert_eq!(points.len(), 12);
        let p = points[11].scenario().unwrap().nic.cc_processor.unwrap();
        assert_eq!((p.cores.0, p.clock_ghz.0), (8, 1.8));
        assert_eq!(p.coalescing, crate::setup::scenario::CoalescingCfg::Latest);
        let bad = Point {
            index: 0,
            file: h.clone(),
            set: vec![("nic.cc_processor.cores".into(), toml_value("0"))],
            baseline: false,
        };
        let e = bad.scenario().unwrap_err();
        assert!(e.to_string().starts_with("--vary nic.cc_processor.cores=0 on "), "{e}");
    }
}
