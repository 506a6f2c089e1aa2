//! Library benchmarks: importing a generated library of 240 BVH takes (about 270 MB) next to just
//! reading the same bytes, and the lazy load of one clip through the animation store.
//!
//! `cargo bench --no-default-features --bench library -- --warm-up-time 1 --measurement-time 10`
//!
//! The takes are written at start into a temporary folder (variants of the embedded demo takes,
//! `core::library::synth`) and removed at the end. Reads come from the page cache (the files were
//! just written), for the import and for the read baseline alike.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rayon::prelude::*;
use taglane::core::anim::{ImportOptions, parse_bvh_bytes};
use taglane::core::library::synth::{LibrarySpec, write_library};
use taglane::core::library::{AnimStore, ImportSettings, StoreSettings, plan_import, scan_library};
use taglane::core::project::{ClipRequest, load};
use taglane::core::tags::{ClipInfo, TagDocument};

#[path = "common/mode.rs"]
mod mode;
use mode::measuring;

/// The library: [`LibrarySpec::BENCH`] when measuring; a tenth of it when the bench only checks that
/// it works (`cargo test --benches`, an unoptimised build).
fn spec() -> LibrarySpec {
    if measuring() {
        LibrarySpec::BENCH
    } else {
        LibrarySpec {
            takes: 24,
            ..LibrarySpec::BENCH
        }
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("taglane-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The whole import: walk, parallel fast scan, plan, and the edit applied to an empty document.
fn import(dir: &Path) -> TagDocument {
    let scan = scan_library(
        &[dir.to_path_buf()],
        &ImportSettings::default(),
        &|_| {},
        &AtomicBool::new(false),
    )
    .unwrap();
    let mut doc = TagDocument::default();
    let plan = plan_import(&doc, Some(dir), &scan);
    assert!(plan.failed.is_empty());
    plan.edit.apply(&mut doc).unwrap();
    doc
}

fn library_import(c: &mut Criterion) {
    let dir = temp_dir("import");
    let files = write_library(&dir, &spec()).unwrap();
    let bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    eprintln!(
        "library_import: {} takes, {:.1} MB in {}",
        files.len(),
        bytes as f64 / 1e6,
        dir.display()
    );
    assert_eq!(import(&dir).clips.len(), files.len());

    let mut group = c.benchmark_group("library_import");
    group.throughput(Throughput::Bytes(bytes));
    group.sample_size(10);
    // Baseline: read every byte, on every core, as the import does.
    group.bench_function("read_bytes", |b| {
        b.iter(|| {
            files
                .par_iter()
                .map(|f| std::fs::read(f).unwrap().len())
                .sum::<usize>()
        })
    });
    group.bench_function("import_240_takes", |b| b.iter(|| import(black_box(&dir))));
    // Reference: what importing would cost if every take were parsed fully.
    let options = ImportOptions::default();
    group.bench_function("full_parse_240_takes", |b| {
        b.iter(|| {
            files
                .par_iter()
                .map(|f| {
                    let bytes = std::fs::read(f).unwrap();
                    parse_bvh_bytes(&bytes, "t", &options)
                        .unwrap()
                        .0
                        .frame_count
                })
                .sum::<usize>()
        })
    });
    group.finish();
    std::fs::remove_dir_all(&dir).ok();
}

fn lazy_load(c: &mut Criterion) {
    let dir = temp_dir("lazy");
    let spec = LibrarySpec { takes: 1, ..spec() };
    let file = write_library(&dir, &spec).unwrap().remove(0);
    let info = ClipInfo {
        name: "take".into(),
        frames: 0,
        fps: 30.0,
        source: Some(file.display().to_string()),
        unit_cm: Some(5.644),
    };
    let request = ClipRequest::new(0, &info, None, false).unwrap();
    let bytes = std::fs::metadata(&file).unwrap().len();
    let store = AnimStore::new(StoreSettings::default());
    let mut group = c.benchmark_group("lazy_load");
    group.throughput(Throughput::Bytes(bytes));
    group.sample_size(20);
    group.bench_function("store_load_one_clip", |b| {
        b.iter(|| {
            store.forget(0);
            store
                .load_blocking(black_box(&request))
                .unwrap()
                .frame_count
        })
    });
    group.bench_function("store_hit", |b| {
        b.iter(|| store.request(black_box(&request)).clip().is_some())
    });
    group.bench_function("direct_load_one_clip", |b| {
        b.iter(|| load(black_box(&request)).unwrap().frame_count)
    });
    group.finish();
    drop(store);
    std::fs::remove_dir_all(&dir).ok();
}

criterion_group!(benches, library_import, lazy_load);
criterion_main!(benches);
