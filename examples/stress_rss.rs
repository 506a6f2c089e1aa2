//! Peak memory of the stress project (10,000 clips, 200 tags, 1,000,000 ranges): run once with
//! `gen FILE` to write the project, then with `run FILE` to load it, build the query index,
//! evaluate every stress query with every engine and save it, printing the time of each step and
//! the process's peak resident memory (`VmHWM` in /proc/self/status) after each.
//!
//! ```text
//! cargo run --release --no-default-features --example stress_rss -- gen /tmp/stress.taglane.json
//! cargo run --release --no-default-features --example stress_rss -- run /tmp/stress.taglane.json
//! ```

use std::path::Path;
use std::time::Instant;

use taglane::core::stress::{StressSpec, stress_document, stress_queries};
use taglane::core::tags::{Engine, Evaluator, RangeSet, TagDocument, TagIndex, parse_query};

/// Peak resident memory so far, in MiB (`None` where /proc is missing).
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn report(step: &str, t: Instant) {
    println!(
        "{step:<28} {:>9.1} ms   peak RSS {:>7.1} MiB",
        t.elapsed().as_secs_f64() * 1e3,
        peak_rss_mib().unwrap_or(f64::NAN)
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mode, file) = match args.as_slice() {
        [m, f] => (m.as_str(), Path::new(f)),
        _ => {
            eprintln!("usage: stress_rss gen|run FILE");
            std::process::exit(2);
        }
    };
    match mode {
        "gen" => {
            let t = Instant::now();
            let doc = stress_document(&StressSpec::LARGE);
            doc.save(file, false).unwrap();
            report("generate + save", t);
        }
        "load" => {
            // Loads only, `n` times (for profilers): `stress_rss load FILE`.
            for _ in 0..3 {
                let t = Instant::now();
                let (doc, _) = TagDocument::load(file).unwrap();
                report("load", t);
                drop(doc);
            }
        }
        "save" => {
            // Serialises only, 5 times (for profilers): `stress_rss save FILE`.
            let (doc, _) = TagDocument::load(file).unwrap();
            for _ in 0..5 {
                let t = Instant::now();
                let text = doc.to_json_string().unwrap();
                report("to_json_string", t);
                drop(text);
            }
        }
        "run" => {
            println!(
                "start: peak RSS {:.1} MiB",
                peak_rss_mib().unwrap_or(f64::NAN)
            );
            let t = Instant::now();
            let (doc, warnings) = TagDocument::load(file).unwrap();
            report("load", t);
            assert!(warnings.is_empty(), "{warnings:?}");
            let t = Instant::now();
            let idx = TagIndex::build(&doc);
            report("query index", t);
            let names: Vec<&str> = doc.tags.iter().map(|t| t.name.as_str()).collect();
            let mut eval = Evaluator::new();
            let mut out = RangeSet::new();
            for engine in [Engine::Ranges, Engine::Masks, Engine::Auto] {
                let t = Instant::now();
                let mut ranges = 0;
                for text in stress_queries() {
                    let q = parse_query(text, &names).unwrap();
                    eval.eval(&q, &idx, engine, &mut out).unwrap();
                    ranges += out.range_count();
                }
                report(
                    &format!("5 queries, {} ({ranges} ranges)", engine.name()),
                    t,
                );
            }
            let t = Instant::now();
            doc.save(file, true).unwrap();
            report("save (with backup)", t);
        }
        _ => {
            eprintln!("usage: stress_rss gen|run FILE");
            std::process::exit(2);
        }
    }
}
