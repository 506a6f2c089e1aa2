//! Peak memory of the stress project (10,000 clips, 200 tags, 1,000,000 ranges): run once with
//! `gen FILE` to write the project, then with `run FILE` to load it, build the query index,
//! evaluate every stress query with every engine and save it, printing the time of each step and
//! the process's peak resident memory (`VmHWM` in /proc/self/status) after each. After the load
//! it also prints what the document holds: the heap bytes live (counted by this example's
//! allocator, so exact requested sizes without the allocator's own overhead), the growth of the
//! resident set (which includes that overhead), and both per range against the 8 bytes a range
//! needs (two `u32` frames).
//!
//! ```text
//! cargo run --release --no-default-features --example stress_rss -- gen /tmp/stress.taglane.json
//! cargo run --release --no-default-features --example stress_rss -- run /tmp/stress.taglane.json
//! ```
//!
//! `sidecar FILE` does the same for the sidecar layout: it writes the project next to FILE as a
//! sidecar-mode project (`FILE.sidecar/lib.taglane.json`, an empty take file and its
//! `.tags.json` per clip), then opens it three times as `taglane PROJECT` does, with the load of
//! FILE itself timed in the same run.
//!
//! `project FILE` times what a project adds to the document's load and save (the hash of the
//! bytes read or written, and a save's read of the file on disk to merge a change made there
//! meanwhile): three rounds of `TagDocument::load` against `Project::load` and
//! `TagDocument::save` against `Project::save_to`, in one run. It writes FILE (the same bytes).

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use taglane::core::library::{SidecarBaseline, save_sidecar_project};
use taglane::core::project::Project;
use taglane::core::stress::{StressSpec, stress_document, stress_queries};
use taglane::core::tags::{Engine, Evaluator, RangeSet, TagDocument, TagIndex, parse_query};

/// The system allocator, counting the bytes currently allocated.
struct Counting;

static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` with the same arguments; the counter only observes.
#[allow(
    unsafe_code,
    reason = "a global allocator is an unsafe trait; this one only counts what `System` does"
)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) };
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
            LIVE_BYTES.fetch_add(new_size, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A field of /proc/self/status in MiB (`None` where /proc is missing).
fn status_mib(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Peak resident memory so far, in MiB.
fn peak_rss_mib() -> Option<f64> {
    status_mib("VmHWM:")
}

fn report(step: &str, t: Instant) {
    println!(
        "{step:<40} {:>9.1} ms   peak RSS {:>7.1} MiB",
        t.elapsed().as_secs_f64() * 1e3,
        peak_rss_mib().unwrap_or(f64::NAN)
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mode, file) = match args.as_slice() {
        [m, f] => (m.as_str(), Path::new(f)),
        _ => {
            eprintln!("usage: stress_rss gen|run|sidecar|sidecar-open|project|load|save FILE");
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
        "sidecar-open" => {
            // Opens the project `sidecar` wrote, 5 times (for profilers).
            let project = file.with_extension("sidecar").join("lib.taglane.json");
            for _ in 0..5 {
                let t = Instant::now();
                let (p, _) = Project::load(&project).unwrap();
                report("open the sidecar project", t);
                drop(p);
            }
        }
        "sidecar" => {
            let (doc, _) = TagDocument::load(file).unwrap();
            let dir = file.with_extension("sidecar");
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join("takes")).unwrap();
            for c in &doc.clips {
                std::fs::write(dir.join(c.source.as_deref().unwrap()), b"").unwrap();
            }
            let project = dir.join("lib.taglane.json");
            let t = Instant::now();
            save_sidecar_project(&project, &doc, Some(&["takes".to_owned()])).unwrap();
            report("write 10,000 sidecars and the project", t);
            drop(doc);
            for _ in 0..3 {
                let t = Instant::now();
                let (doc, _) = TagDocument::load(file).unwrap();
                report("load the single file", t);
                drop(doc);
                let t = Instant::now();
                let (p, warnings) = Project::load(&project).unwrap();
                report("open the sidecar project", t);
                assert!(
                    warnings.is_empty(),
                    "{:?}",
                    &warnings[..warnings.len().min(3)]
                );
                assert_eq!(p.doc.clips.len(), 10_000);
            }
        }
        "project" => {
            // What a project adds to a load and a save: alternating in one run.
            for _ in 0..3 {
                let t = Instant::now();
                let bytes = std::fs::read(file).unwrap();
                report("read the file", t);
                let t = Instant::now();
                std::hint::black_box(SidecarBaseline::hash(&bytes));
                report("hash its bytes", t);
                drop(bytes);
                let t = Instant::now();
                let (doc, _) = TagDocument::load(file).unwrap();
                report("TagDocument::load", t);
                let t = Instant::now();
                let (mut project, _) = Project::load(file).unwrap();
                report("Project::load", t);
                let t = Instant::now();
                doc.save(file, true).unwrap();
                report("TagDocument::save (with backup)", t);
                drop(doc);
                let t = Instant::now();
                project.save_to(file).unwrap();
                report("Project::save_to (reads the file first)", t);
            }
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
            let rss_before = status_mib("VmRSS:").unwrap_or(f64::NAN);
            let heap_before = LIVE_BYTES.load(Ordering::Relaxed);
            let t = Instant::now();
            let (doc, warnings) = TagDocument::load(file).unwrap();
            report("load", t);
            assert!(warnings.is_empty(), "{warnings:?}");
            let heap = LIVE_BYTES.load(Ordering::Relaxed) - heap_before;
            let rss_growth = status_mib("VmRSS:").unwrap_or(f64::NAN) - rss_before;
            let ranges: usize = doc.tags.iter().map(|t| t.ranges.range_count()).sum();
            let lists: usize = doc.tags.iter().map(|t| t.ranges.len()).sum();
            let need = ranges * std::mem::size_of::<taglane::core::tags::Range>();
            println!(
                "document: {ranges} ranges in {lists} lists need {:.1} MiB ({} B a range); heap live {:.1} MiB = {:.1} B a range ({:.2}x); resident growth {:.1} MiB = {:.1} B a range ({:.2}x)",
                need as f64 / 1048576.0,
                std::mem::size_of::<taglane::core::tags::Range>(),
                heap as f64 / 1048576.0,
                heap as f64 / ranges as f64,
                heap as f64 / need as f64,
                rss_growth,
                rss_growth * 1048576.0 / ranges as f64,
                rss_growth * 1048576.0 / need as f64,
            );
            let t = Instant::now();
            let idx = TagIndex::build(&doc);
            report("query index (ranges)", t);
            let names: Vec<&str> = doc.tags.iter().map(|t| t.name.as_str()).collect();
            // The masks are built at their first use: those of the queries' tags, as a session
            // running these queries builds them.
            let t = Instant::now();
            for text in stress_queries() {
                idx.prepare_masks(&parse_query(text, &names).unwrap());
            }
            report(
                &format!(
                    "masks of the queries' tags ({} of {})",
                    idx.masks_built(),
                    idx.tag_count()
                ),
                t,
            );

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
            let t = Instant::now();
            idx.prepare_all_masks();
            report("masks of every tag", t);
        }
        _ => {
            eprintln!("usage: stress_rss gen|run|sidecar|sidecar-open|project|load|save FILE");
            std::process::exit(2);
        }
    }
}
