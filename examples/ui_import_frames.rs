//! UI frames while a capture library imports in the background: generates the 240-take, ~270 MB
//! library of the import benchmark into a temporary folder, starts its import in the app (headless
//! egui_kittest harness, no rendering), and steps frames until it is done, timing each one.
//! Target (issue 12): no frame over 50 ms. Run in release:
//! `cargo run --release --example ui_import_frames`

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use taglane::core::library::synth::{LibrarySpec, write_library};
use taglane::ui::TaglaneApp;
use taglane::ui::command::AppCommand;

fn main() {
    let dir = std::env::temp_dir().join(format!("taglane-import-frames-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let files = write_library(&dir, &LibrarySpec::BENCH).expect("write the library");
    let bytes: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let mut h = Harness::builder()
        .with_size([1600.0, 1000.0])
        .build_ui_state(
            |ui, app: &mut TaglaneApp| app.ui(ui),
            TaglaneApp::demo_for_tests(),
        );
    h.run_steps(3);
    h.state_mut()
        .queue
        .push(AppCommand::ImportFolder(Some(dir.clone())));
    let start = Instant::now();
    let mut frames: Vec<Duration> = Vec::new();
    loop {
        let t = Instant::now();
        h.step();
        frames.push(t.elapsed());
        if !h.state().library.importing() {
            break;
        }
        // About 60 frames per second, as a window would draw.
        std::thread::sleep(Duration::from_millis(16).saturating_sub(t.elapsed()));
    }
    let total = start.elapsed();
    frames.sort();
    let max = frames.last().copied().unwrap_or_default();
    let p99 = frames[(frames.len() - 1) * 99 / 100];
    let median = frames[frames.len() / 2];
    println!(
        "imported {} takes ({:.0} MB) in {:.2} s; {} UI frames meanwhile: median {:.2} ms, p99 {:.2} ms, max {:.2} ms (target: max <= 50 ms)",
        files.len(),
        bytes as f64 / 1e6,
        total.as_secs_f64(),
        frames.len(),
        median.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3
    );
    println!(
        "clips in the project: {}",
        h.state().project.doc.clips.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
