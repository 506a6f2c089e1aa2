//! Memory of a large library project: `gen DIR [TAKES] [MB_PER_TAKE]` writes a library of
//! generated BVH takes (default 2,000 takes of 2.5 MB, 5 GB) under `DIR/takes` and imports it into
//! `DIR/library.taglane.json`; `run DIR [BUDGET_MIB] [BROWSE]` opens the project, then "browses"
//! `BROWSE` clips spread over it (default 50) through the lazy animation store with a budget of
//! `BUDGET_MIB` (default 256), the way the clip browser shows one clip after another. Prints the
//! time of each step, the resident memory (`VmRSS`) and its peak (`VmHWM`) from /proc/self/status.
//!
//! ```text
//! cargo run --release --no-default-features --example library_rss -- gen /tmp/taglane-lib
//! cargo run --release --no-default-features --example library_rss -- run /tmp/taglane-lib 256 50
//! ```

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use taglane::core::library::synth::{LibrarySpec, write_library};
use taglane::core::library::{AnimStore, ImportSettings, StoreSettings, plan_import, scan_library};
use taglane::core::project::{Project, resolve};

/// A field of /proc/self/status in MiB (`VmRSS`, `VmHWM`).
fn status_mib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with(field))?.to_owned();
            let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib / 1024.0)
        })
        .unwrap_or(f64::NAN)
}

fn report(step: &str, t: Instant) {
    println!(
        "{step:<44} {:>9.1} ms   RSS {:>7.1} MiB   peak {:>7.1} MiB",
        t.elapsed().as_secs_f64() * 1e3,
        status_mib("VmRSS:"),
        status_mib("VmHWM:")
    );
}

fn usage() -> ! {
    eprintln!("usage: library_rss gen DIR [TAKES] [MB_PER_TAKE] | run DIR [BUDGET_MIB] [BROWSE]");
    std::process::exit(2);
}

fn arg<T: std::str::FromStr>(args: &[String], i: usize, default: T) -> T {
    match args.get(i) {
        None => default,
        Some(s) => s.parse().unwrap_or_else(|_| usage()),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(mode), Some(dir)) = (args.first(), args.get(1)) else {
        usage()
    };
    let dir = Path::new(dir);
    let project_path = dir.join("library.taglane.json");
    match mode.as_str() {
        "gen" => {
            let takes: usize = arg(&args, 2, 2000);
            let mb: f64 = arg(&args, 3, 2.5);
            let t = Instant::now();
            let spec = LibrarySpec {
                takes,
                bytes_per_take: (mb * 1e6) as usize,
                takes_per_session: 40,
            };
            let files = write_library(&dir.join("takes"), &spec).unwrap();
            report(&format!("write {} takes", files.len()), t);
            let t = Instant::now();
            let scan = scan_library(
                &[dir.join("takes")],
                &ImportSettings::default(),
                &|_| {},
                &AtomicBool::new(false),
            )
            .unwrap();
            report(&format!("scan {:.0} MB", scan.bytes() as f64 / 1e6), t);
            let t = Instant::now();
            let mut project = Project::default();
            let plan = plan_import(&project.doc, Some(dir), &scan);
            project.apply(plan.edit, "import").unwrap();
            project.save_to(&project_path).unwrap();
            report(
                &format!("plan + apply + save {} clips", project.doc.clips.len()),
                t,
            );
        }
        "run" => {
            let budget_mib: u64 = arg(&args, 2, 256);
            let browse: usize = arg(&args, 3, 50);
            report("start", Instant::now());
            let t = Instant::now();
            let (project, _) = Project::load(&project_path).unwrap();
            let n = project.doc.clips.len();
            report(&format!("open the project ({n} clips)"), t);
            let store = AnimStore::new(StoreSettings {
                workers: 2,
                budget_bytes: budget_mib << 20,
            });
            let t = Instant::now();
            let mut most = 0usize;
            let mut evictions = 0usize;
            for k in 0..browse.min(n) {
                let id = (k * n / browse.min(n).max(1)) as u32;
                let before = store.snapshot().loaded.len();
                store
                    .load_blocking(&resolve(&project, id).unwrap())
                    .unwrap();
                let after = store.snapshot().loaded.len();
                evictions += before + 1 - after.min(before + 1);
                most = most.max(after);
            }
            report(&format!("browse {browse} clips"), t);
            let snap = store.snapshot();
            println!(
                "store: {} clips loaded ({:.1} MiB of a {budget_mib} MiB budget), at most {most} at once, {evictions} evicted",
                snap.loaded.len(),
                snap.used_bytes as f64 / 1048576.0
            );
        }
        _ => usage(),
    }
}
