//! Stress: the generated project (10,000 clips, 200 tags, 1,000,000 ranges; see
//! `taglane::core::stress`): load and save against same-run baselines, build the query index, and
//! evaluate each stress query with each engine; with the `ui` feature, one UI frame of the app on
//! that project (egui_kittest harness, no rendering). Peak memory is measured by
//! `examples/stress_rss.rs` (criterion runs many iterations, so the process high-water mark means
//! nothing here). Figures in docs/PERFORMANCE.md.
//!
//! Baselines, on the same file in the same run:
//! - `baseline_serde_value`: read the file and parse it into a `serde_json::Value` tree (what the
//!   loader did before issue 15);
//! - `baseline_serde_ignored`: read the file and check it is JSON (`serde::de::IgnoredAny`), the
//!   floor of any serde-driven reader;
//! - `baseline_python_json_load`: Python's `json.load` of the file, timed inside a `python3`
//!   subprocess (`time.perf_counter` around the call only: start-up and the file's opening are not
//!   counted); left out when `python3` is missing;
//! - `baseline_serde_value_write`: `serde_json::to_vec` of that tree, and
//!   `baseline_serde_round_trip`: parse plus write, the serde round trip a save after a load costs
//!   through a tree.
//!
//! `cargo bench --no-default-features --bench stress -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use taglane::core::doc::exchange::{parse_csv, to_csv};
use taglane::core::library::sidecar::{cliptags_texts, parse_cliptags, parse_cliptags_tree};
use taglane::core::stress::{StressSpec, stress_document, stress_queries};
use taglane::core::tags::{Engine, Evaluator, RangeSet, TagDocument, TagIndex, parse_query};

#[path = "common/mode.rs"]
mod mode;
use mode::measuring;

/// The project: the large one when measuring; a hundredth of it when the bench only checks that it
/// works (`cargo test --benches`, an unoptimised build).
fn spec() -> StressSpec {
    if measuring() {
        StressSpec::LARGE
    } else {
        StressSpec {
            clips: 100,
            tags: 20,
            ranges: 10_000,
            ..StressSpec::LARGE
        }
    }
}

fn temp_path() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("taglane-stress-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("stress.taglane.json")
}

/// The time Python's `json.load` takes on `path`, `n` times, measured inside one `python3` process
/// (its start-up is not counted); `None` when `python3` cannot be run.
fn python_json_load(path: &Path, n: u64) -> Option<Duration> {
    let script = "import json, sys, time\n\
                  total = 0.0\n\
                  for _ in range(int(sys.argv[2])):\n\
                  \x20   with open(sys.argv[1], 'rb') as f:\n\
                  \x20       t = time.perf_counter()\n\
                  \x20       d = json.load(f)\n\
                  \x20       total += time.perf_counter() - t\n\
                  \x20   del d\n\
                  print(total)\n";
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(path)
        .arg(n.to_string())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let secs: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
    Some(Duration::from_secs_f64(secs))
}

fn stress(c: &mut Criterion) {
    let doc = stress_document(&spec());
    let path = temp_path();
    doc.save(&path, false).unwrap();
    let bytes = std::fs::metadata(&path).unwrap().len();
    eprintln!(
        "stress project: {} clips, {} tags, {} ranges, {bytes} bytes of JSON",
        doc.clips.len(),
        doc.tags.len(),
        doc.tags
            .iter()
            .map(|t| t.ranges.range_count())
            .sum::<usize>()
    );

    let mut g = c.benchmark_group("stress");
    g.sample_size(10);
    g.bench_function("load", |b| {
        b.iter(|| black_box(TagDocument::load(&path).unwrap()));
    });
    g.bench_function("baseline_serde_value", |b| {
        b.iter(|| {
            let bytes = std::fs::read(&path).unwrap();
            black_box(serde_json::from_slice::<serde_json::Value>(&bytes).unwrap())
        });
    });
    g.bench_function("baseline_serde_ignored", |b| {
        b.iter(|| {
            let bytes = std::fs::read(&path).unwrap();
            black_box(serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).unwrap())
        });
    });
    if python_json_load(&path, 1).is_some() {
        g.bench_function("baseline_python_json_load", |b| {
            b.iter_custom(|n| python_json_load(&path, n).unwrap());
        });
    } else {
        eprintln!("python3 not found: baseline_python_json_load left out");
    }
    let value: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    g.bench_function("baseline_serde_value_write", |b| {
        b.iter(|| black_box(serde_json::to_vec(&value).unwrap()));
    });
    drop(value);
    g.bench_function("baseline_serde_round_trip", |b| {
        b.iter(|| {
            let bytes = std::fs::read(&path).unwrap();
            let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            black_box(serde_json::to_vec(&v).unwrap())
        });
    });
    g.bench_function("save", |b| {
        b.iter(|| doc.save(&path, false).unwrap());
    });
    g.bench_function("save_with_backup", |b| {
        b.iter(|| doc.save(&path, true).unwrap());
    });
    // Baseline: serialising only (no file, no fsync).
    g.bench_function("baseline_to_json_string", |b| {
        b.iter(|| black_box(doc.to_json_string().unwrap()));
    });
    // The other streaming paths on the same project: every clip's sidecar text (sidecar mode),
    // written and read back in memory (no files: a sidecar save or load adds one file per clip),
    // and the CSV export written and read back.
    let texts = cliptags_texts(&doc);
    g.bench_function("sidecar_write_all", |b| {
        b.iter(|| black_box(cliptags_texts(&doc)));
    });
    g.bench_function("sidecar_parse_all", |b| {
        b.iter(|| {
            for text in &texts {
                black_box(parse_cliptags(text, "take.bvh.tags.json").unwrap());
            }
        });
    });
    // The tree reader alone (what `parse_cliptags` did for every file before its fast path).
    g.bench_function("baseline_sidecar_parse_all_tree", |b| {
        b.iter(|| {
            for text in &texts {
                black_box(parse_cliptags_tree(text, "take.bvh.tags.json").unwrap());
            }
        });
    });
    drop(texts);
    let csv = to_csv(&doc);
    g.bench_function("csv_write", |b| {
        b.iter(|| black_box(to_csv(&doc)));
    });
    g.bench_function("csv_parse", |b| {
        b.iter(|| black_box(parse_csv(&csv, "tags.csv").unwrap()));
    });
    drop(csv);
    edit_every_clip(&mut g, &doc);
    g.bench_function("index_build", |b| {
        b.iter(|| black_box(TagIndex::build(&doc)));
    });
    g.bench_function("index_build_all_masks", |b| {
        b.iter(|| {
            let idx = TagIndex::build(&doc);
            idx.prepare_all_masks();
            black_box(idx)
        });
    });
    let idx = TagIndex::build(&doc);
    let names: Vec<&str> = doc.tags.iter().map(|t| t.name.as_str()).collect();
    let mut eval = Evaluator::new();
    let mut out = RangeSet::new();
    for (i, text) in stress_queries().iter().enumerate() {
        let q = parse_query(text, &names).unwrap();
        idx.prepare_masks(&q);
        for engine in [Engine::Ranges, Engine::Masks, Engine::Auto] {
            g.bench_function(format!("query{i}/{}", engine.name()), |b| {
                b.iter(|| {
                    eval.eval(&q, &idx, engine, &mut out).unwrap();
                    black_box(out.range_count())
                });
            });
        }
    }
    g.finish();

    #[cfg(feature = "ui")]
    ui_frame(c, &doc, &path);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

/// An auto-tag pass over the whole library as the edit path sees it: one `SetRanges` per clip on a
/// dense tag (50 ranges on each of the 10,000 clips, 500,000 in the tag), each list replaced by 49
/// others. `edit_every_clip_batch` applies them as one `Edit::Batch` (one merge into the tag's flat
/// buffer), `edit_every_clip_one_by_one` one edit at a time (each moves the tag's tail). The same
/// for a re-import's frame counts, every take a fifth shorter (`frames_every_clip_*`).
fn edit_every_clip(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    doc: &TagDocument,
) {
    use taglane::core::doc::Edit;
    use taglane::core::tags::{Range, Tag};
    let mut dense = Tag::new("dense");
    for (c, info) in doc.clips.iter().enumerate() {
        let step = info.frames / 50;
        let list: Vec<Range> = (0..50)
            .map(|k| Range::new(k * step, k * step + 1))
            .collect();
        dense.ranges.push(c as u32, &list);
    }
    let mut base = doc.clone();
    base.tags.push(dense);
    let tag = base.tags.len() - 1;
    let edits: Vec<Edit> = base
        .clips
        .iter()
        .enumerate()
        .map(|(c, info)| {
            let step = info.frames / 49;
            Edit::SetRanges {
                tag,
                clip: c as u32,
                ranges: (0..49)
                    .map(|k| Range::new(k * step, k * step + 2))
                    .collect(),
            }
        })
        .collect();
    batch_and_one_by_one(g, "edit_every_clip", &base, &edits);
    // A re-import that finds every take a fifth shorter: the ranges and markers past each new end
    // clipped, on every tag.
    let shorter: Vec<Edit> = base
        .clips
        .iter()
        .enumerate()
        .map(|(c, info)| Edit::SetClipFrames {
            clip: c as u32,
            frames: info.frames * 4 / 5,
        })
        .collect();
    batch_and_one_by_one(g, "frames_every_clip", &base, &shorter);
}

/// `NAME_batch`: `edits` applied to a copy of `base` as one `Edit::Batch`; `NAME_one_by_one`: one
/// edit at a time.
fn batch_and_one_by_one(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    base: &TagDocument,
    edits: &[taglane::core::doc::Edit],
) {
    use criterion::BatchSize;
    use taglane::core::doc::Edit;
    g.bench_function(format!("{name}_batch"), |b| {
        b.iter_batched(
            || (base.clone(), Edit::Batch(edits.to_vec())),
            |(mut d, e)| black_box(e.apply(&mut d).unwrap()),
            BatchSize::LargeInput,
        );
    });
    g.bench_function(format!("{name}_one_by_one"), |b| {
        b.iter_batched(
            || (base.clone(), edits.to_vec()),
            |(mut d, es)| {
                for e in es {
                    black_box(e.apply(&mut d).unwrap());
                }
            },
            BatchSize::LargeInput,
        );
    });
}

/// One frame of the app on the stress project: the first (the harness's context and the first
/// layout of the browser, 200 tag lanes and the timeline of the first clip) and a following one;
/// and `open_first_frame`, what a launch on the project file does before its first frame is
/// drawn: load the file as `taglane FILE` does (`Project::load`), build the app, run the first
/// frame (window and GPU start-up are not included: the harness does not render).
#[cfg(feature = "ui")]
fn ui_frame(c: &mut Criterion, doc: &TagDocument, path: &Path) {
    use criterion::BatchSize;
    use egui_kittest::Harness;
    use taglane::ui::TaglaneApp;
    use taglane::ui::app::Prefs;
    use taglane::ui::project::Project;
    use taglane::ui::recovery::Recovery;

    let app = |doc: &TagDocument| {
        let project = Project {
            doc: doc.clone(),
            ..Project::default()
        };
        TaglaneApp::new(project, Prefs::default(), Recovery::disabled())
    };
    let harness = |app: TaglaneApp| {
        Harness::builder()
            .with_size([1400.0, 860.0])
            .build_ui_state(|ui, app: &mut TaglaneApp| app.ui(ui), app)
    };
    let mut g = c.benchmark_group("stress_ui");
    g.sample_size(10);
    g.bench_function("first_frame", |b| {
        // Building the harness runs the first frame (egui_kittest initialises AccessKit with it).
        b.iter_batched(|| app(doc), harness, BatchSize::PerIteration);
    });
    g.bench_function("open_first_frame", |b| {
        // The harness's drop (freeing the app and the document) is not timed.
        b.iter_with_large_drop(|| {
            let (project, warnings) = Project::load(path).unwrap();
            assert!(warnings.is_empty(), "{warnings:?}");
            let h = harness(TaglaneApp::new(
                project,
                Prefs::default(),
                Recovery::disabled(),
            ));
            assert_eq!(
                h.state().frames(),
                doc.clips[0].frames,
                "the timeline shows clip 0"
            );
            h
        });
    });
    let mut h = harness(app(doc));
    h.run_steps(3);
    g.bench_function("next_frame", |b| b.iter(|| h.step()));
    g.finish();
}

criterion_group!(benches, stress);
criterion_main!(benches);
