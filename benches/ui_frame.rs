//! CPU time of one UI frame (no rendering) on a large project: 10,000 clips and 50 tags, in a
//! headless egui_kittest harness. Target: at most 4 ms. Run:
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
    }
    group.finish();
}

criterion_group!(benches, ui_frame);
criterion_main!(benches);
