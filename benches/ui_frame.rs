//! CPU time of one UI frame (no rendering) on a large project: 10,000 clips and 50 tags, in a
//! headless egui_kittest harness. Target: at most 4 ms. And the snap targets of a drag with every
//! range of a dense clip selected, against the list lookups they replaced (`selection`). Run:
//! `cargo bench --bench ui_frame -- --warm-up-time 1 --measurement-time 5`

use criterion::{Criterion, criterion_group, criterion_main};
use egui_kittest::Harness;
use taglane::core::demo::synthetic_document;
use taglane::ui::TaglaneApp;
use taglane::ui::app::Prefs;
use taglane::ui::command::AppCommand;
use taglane::ui::project::Project;
use taglane::ui::recovery::Recovery;

fn app(clips: usize, tags: usize) -> TaglaneApp {
    let project = Project {
        doc: synthetic_document(clips, tags, 4, 7),
        ..Default::default()
    };
    TaglaneApp::new(project, Prefs::default(), Recovery::disabled())
}

fn ui_frame(c: &mut Criterion) {
    let mut group = c.benchmark_group("ui_frame");
    for (clips, tags) in [(10, 12), (10_000, 50)] {
        let mut h = Harness::builder()
            .with_size([1600.0, 1000.0])
            .build_ui_state(|ui, app: &mut TaglaneApp| app.ui(ui), app(clips, tags));
        h.run_steps(3);
        group.bench_function(format!("idle frame, {clips} clips x {tags} tags"), |b| {
            b.iter(|| h.step())
        });
        // Playing: the playhead moves every frame, so the timeline repaints all visible lanes.
        h.state_mut().queue.push(AppCommand::TogglePlay);
        h.step();
        group.bench_function(format!("playing frame, {clips} clips x {tags} tags"), |b| {
            b.iter(|| h.step())
        });
        // A broad query's Results over the whole database (every clip a row).
        h.state_mut().queue.push(AppCommand::TogglePlay);
        h.state_mut().query.whole_database = true;
        h.state_mut().query.text = "tag000 | !tag000".into();
        h.run_steps(5);
        group.bench_function(
            format!("query results frame, {clips} clips x {tags} tags"),
            |b| b.iter(|| h.step()),
        );
        h.state_mut().query.text.clear();
        h.state_mut().query.whole_database = false;
        h.run_steps(3);
    }
    group.finish();
}

/// The snap targets of a drag of every range of one clip (100 tags of about 50 ranges each, all
/// selected: Ctrl+A on a dense clip), as each drag frame works them out, against the same with the
/// selection looked up in its list for each range (how it was done until 2026-11-29).
fn selection(c: &mut Criterion) {
    use taglane::core::tags::Range;
    use taglane::ui::command::Selected;
    use taglane::ui::timeline::model::snap_targets;
    let doc = synthetic_document(1, 100, 50, 3);
    let selected: Vec<Selected> = doc
        .tags
        .iter()
        .enumerate()
        .flat_map(|(t, tag)| tag.ranges_on(0).iter().map(move |r| (t, *r)))
        .collect();
    let listed = |exclude: &[Selected]| {
        let mut out = vec![0u32];
        for (t, tag) in doc.tags.iter().enumerate() {
            for r in tag.ranges_on(0) {
                if !exclude.contains(&(t, *r)) {
                    out.push(r.start);
                    out.push(r.stop);
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    };
    assert_eq!(listed(&selected), snap_targets(&doc, 0, 0, &selected, &[]));
    let mut group = c.benchmark_group("selection");
    let n = selected.len();
    group.bench_function(format!("snap targets, {n} ranges selected"), |b| {
        b.iter(|| snap_targets(&doc, 0, 0, std::hint::black_box(&selected), &[]))
    });
    group.bench_function(format!("list lookups, {n} ranges selected"), |b| {
        b.iter(|| listed(std::hint::black_box(&selected)))
    });
    let _: Option<Range> = None;
    group.finish();
}

criterion_group!(benches, ui_frame, selection);
criterion_main!(benches);
