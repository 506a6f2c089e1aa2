//! The compression view in the real app: a comparison runs in the background to completion, the
//! table values are read from the state, a compressed clip is exported and read back by the CLI;
//! and the screenshots of the pose and compression views.
#![cfg(feature = "ui")]

use crate::common::temp_dir;
use std::path::{Path, PathBuf};
use std::process::Command;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use taglane::core::anim::parse_bvh;
use taglane::core::compress::{CompressedClip, Preset, compress};
use taglane::ui::TaglaneApp;
use taglane::ui::command::AppCommand;
use taglane::ui::compression::Scope;
use taglane::ui::compression::model::summarize;
use taglane::ui::project::DEMO_CLIP_FILES;
use taglane::ui::side_panel::SideTab;

fn harness_with(app: TaglaneApp) -> Harness<'static, TaglaneApp> {
    crate::common::harness_with(app, [1400.0, 860.0])
}

/// Steps until the comparison is done (at most `limit` frames, sleeping a little between them).
fn run_until_done(h: &mut Harness<'static, TaglaneApp>, limit: usize) {
    for _ in 0..limit {
        h.step();
        if !h.state().side.compression.is_running() {
            h.run_steps(2);
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("the comparison did not finish in {limit} frames");
}

/// Steps until the export thread is done and returns the files it wrote.
fn wait_export(h: &mut Harness<'static, TaglaneApp>) -> Vec<PathBuf> {
    h.step();
    for _ in 0..500 {
        if !h.state().side.compression.is_exporting() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        h.step();
    }
    match h.state().side.compression.last_export.clone() {
        Some(Ok(files)) => files,
        other => panic!("export did not succeed: {other:?}"),
    }
}

fn compression_app() -> TaglaneApp {
    let mut app = TaglaneApp::demo_for_tests();
    app.side.tab = SideTab::Compression;
    app
}

#[test]
fn a_comparison_runs_in_the_background_and_fills_the_table() {
    let mut h = harness_with(compression_app());
    // Where the side panel's tabs are before: the ghost's caption, once there, must not move
    // them (it is drawn over the viewport, not above the tabs).
    let tabs_y = h.get_by_label("Pose").rect().min.y;
    h.get_by_label("Compress").click();
    h.step();
    assert!(
        h.state().side.compression.is_running(),
        "the job did not start"
    );
    // The UI keeps drawing frames while the job runs.
    run_until_done(&mut h, 2000);
    h.get_by_label_contains("Ghost: candidate decoded");
    assert_eq!(h.get_by_label("Pose").rect().min.y, tabs_y);
    let app = h.state();
    let cmp = app.side.compression.comparison.as_ref().expect("results");
    assert!(!cmp.cancelled);
    assert_eq!(cmp.candidates.len(), 2);
    let a = cmp.summary(0).unwrap();
    let b = cmp.summary(1).unwrap();
    for s in [&a, &b] {
        assert_eq!(s.clips_ok, 1);
        assert!(s.ratio > 1.0, "{}", s.ratio);
        assert!(s.max_error_cm >= s.p99_error_cm && s.p99_error_cm >= 0.0);
        assert!(s.max_error_cm >= s.mean_error_cm);
        assert!(s.decode_us_per_pose > 0.0);
        assert!(!s.worst_joint.is_empty());
        assert!(s.worst_frame < 241);
    }
    // A is auto with the default 0.01 cm budget.
    assert!(a.max_error_cm <= 0.0101, "{}", a.max_error_cm);
    // The table matches the compression core run directly on the same clip (the encoder is
    // deterministic; timings aside). The file stores the clip name, so use the same one.
    let (clip, _) = parse_bvh(DEMO_CLIP_FILES[0].1, "walk_male_01", &Default::default()).unwrap();
    for (k, preset) in [(0, Preset::Auto), (1, Preset::SmallestThree32)] {
        let direct = compress(&clip, &preset.settings()).unwrap();
        let s = cmp.summary(k).unwrap();
        assert_eq!(s.compressed_bytes, direct.compressed_bytes);
        assert_eq!(s.raw_bytes, direct.raw_bytes);
        assert_eq!(s.max_error_cm, direct.error.max_error_cm);
        assert_eq!(s.mean_error_cm, direct.error.mean_error_cm);
        assert_eq!(s.p99_error_cm, direct.error.p99_error_cm);
        assert_eq!(s.worst_frame, direct.error.worst.frame);
        assert_eq!(s.worst_joint, direct.error.worst.joint_name);
    }
    // The table is drawn: the ratio cell of A is on screen.
    h.get_by_label(&format!("{:.2}", a.ratio));
    // The ghost: original and decoded pose with per-joint errors at the playhead.
    // While playing: the playhead stops there (it landed on the frame and moved on).
    h.state_mut().queue.push(AppCommand::TogglePlay);
    h.run_steps(2);
    assert!(h.state().playback.playing);
    h.get_by_label("Jump to worst frame").click_accesskit();
    h.run_steps(2);
    assert!(!h.state().playback.playing);
    assert_eq!(h.state().playback.playhead, a.worst_frame as f64);
    // The ghost at the worst frame: its worst joint's error there is the reported maximum.
    let app = h.state();
    let (clip, _) = parse_bvh(DEMO_CLIP_FILES[0].1, "walk", &Default::default()).unwrap();
    let ghost = app
        .side
        .compression
        .ghost(&clip, 0, a.worst_frame as f64 / 30.0, &Default::default())
        .expect("a ghost for the current clip");
    assert_eq!(ghost.positions.len(), clip.joint_count());
    assert_eq!(ghost.colors.len(), clip.joint_count());
    let max = ghost.errors_cm.iter().copied().fold(0.0f32, f32::max);
    assert!(
        (max - a.max_error_cm).abs() <= 0.05 * a.max_error_cm,
        "{max} vs {}",
        a.max_error_cm
    );
    // The exaggerated ghost moves each joint 10 times as far from the original.
    let t = a.worst_frame as f64 / 30.0;
    let base = app.side.pose.base_positions.clone();
    h.state_mut().side.compression.ghost_scale = 10.0;
    let ten = h
        .state()
        .side
        .compression
        .ghost(&clip, 0, t, &Default::default())
        .unwrap();
    for (j, b) in base.iter().enumerate() {
        let (d1, d10) = (ghost.positions[j] - *b, ten.positions[j] - *b);
        assert!((d10 - d1 * 10.0).length() < 1e-3, "joint {j}");
    }
    assert_eq!(ghost.errors_cm, ten.errors_cm);
}

#[test]
fn cancel_stops_a_comparison_of_all_clips() {
    let mut app = compression_app();
    app.side.compression.scope = Scope::AllClips;
    app.side.compression.candidates[0] =
        taglane::ui::compression::model::Candidate::from_preset(0, Preset::Auto);
    let mut h = harness_with(app);
    h.get_by_label("Compress").click();
    h.run_steps(2);
    h.get_by_label("Cancel").click();
    run_until_done(&mut h, 2000);
    let cmp = h.state().side.compression.comparison.as_ref().unwrap();
    assert!(cmp.cancelled);
    assert!(summarize(&cmp.outcomes[0]).clips_ok < 10);
}

fn decompress(tlc: &Path, out: &Path) {
    let status = Command::new(env!("CARGO_BIN_EXE_taglane"))
        .arg("decompress")
        .arg(tlc)
        .arg("-o")
        .arg(out)
        .status()
        .unwrap();
    assert!(status.success(), "decompress failed: {status}");
}

#[test]
fn exported_clips_load_back_with_the_cli() {
    let mut app = compression_app();
    app.side.compression.scope = Scope::AllClips;
    let mut h = harness_with(app);
    h.get_by_label("Compress").click();
    run_until_done(&mut h, 5000);
    let dir = temp_dir("export-one");
    h.state_mut().side.compression.export_dir = Some(dir.clone());
    h.get_by_label("Export this clip").click_accesskit();
    wait_export(&mut h);
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0].file_name().unwrap(), "walk_male_01.tlc");
    let bvh = dir.join("back.bvh");
    decompress(&files[0], &bvh);
    let (clip, _) = parse_bvh(
        &std::fs::read_to_string(&bvh).unwrap(),
        "back",
        &Default::default(),
    )
    .unwrap();
    let (original, _) = parse_bvh(DEMO_CLIP_FILES[0].1, "walk", &Default::default()).unwrap();
    assert_eq!(clip.joint_count(), original.joint_count());
    assert_eq!(clip.frame_count, original.frame_count);
    assert_eq!(clip.skeleton.names, original.skeleton.names);

    // Again into the same folder: the app asks first; Cancel writes nothing, Replace writes.
    std::fs::write(&files[0], "edited by hand").unwrap();
    h.get_by_label("Export this clip").click_accesskit();
    h.run_steps(3);
    h.get_by_label_contains("of the compressed clips' files already exist");
    h.get_by_label("Cancel").click();
    h.run_steps(2);
    assert!(!h.state().side.compression.is_exporting() && h.state().dialog.is_none());
    assert_eq!(std::fs::read(&files[0]).unwrap(), b"edited by hand");
    h.get_by_label("Export this clip").click_accesskit();
    h.run_steps(3);
    h.get_by_label("Replace").click();
    wait_export(&mut h);
    assert!(CompressedClip::from_bytes(std::fs::read(&files[0]).unwrap()).is_ok());

    // The whole project.
    let all = temp_dir("export-all");
    h.state_mut().side.compression.export_dir = Some(all.clone());
    h.get_by_label("Export all clips").click_accesskit();
    wait_export(&mut h);
    let n = std::fs::read_dir(&all).unwrap().count();
    assert_eq!(n, h.state().project.doc.clips.len());
    for (k, info) in h.state().project.doc.clips.iter().enumerate() {
        let p = all.join(format!("{}.tlc", info.name));
        let c = CompressedClip::from_bytes(std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(c.frame_count(), info.frames as usize, "clip {k}");
    }
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_dir_all(&all).ok();

    // The per-clip table opens a clip at its worst frame.
    h.get_by_label_contains("Per clip").click_accesskit();
    h.run_steps(3);
    h.get_all_by_label("Show").nth(2).unwrap().click_accesskit();
    h.run_steps(3);
    let app = h.state();
    let o = &app.side.compression.comparison.as_ref().unwrap().outcomes[0][2];
    assert_eq!(app.current_clip, o.clip);
    let worst = o.result.as_ref().unwrap().error.worst.frame;
    assert_eq!(app.playback.playhead, worst as f64);
}

/// Screenshot of the compression view (wgpu renderer) after a comparison on the current clip.
#[test]
fn compression_view_snapshot() {
    let mut h = Harness::builder()
        .with_size([1600.0, 1000.0])
        .with_options(egui_kittest::SnapshotOptions::default().max_failed_pixels(400))
        .wgpu()
        .build_ui_state(|ui, app: &mut TaglaneApp| app.ui(ui), compression_app());
    h.run_steps(3);
    h.get_by_label("Compress").click();
    run_until_done(&mut h, 2000);
    // Show candidate B (smallest-three 32 bits), its ghost exaggerated 20 times.
    h.state_mut().side.compression.chosen = 1;
    h.state_mut().side.compression.ghost_scale = 20.0;
    // Timings vary from run to run: fix them so the image is stable.
    for outcomes in &mut h
        .state_mut()
        .side
        .compression
        .comparison
        .as_mut()
        .unwrap()
        .outcomes
    {
        for o in outcomes {
            o.decode_us_per_pose = 1.5;
            if let Ok(r) = &mut o.result {
                std::sync::Arc::make_mut(r).compress_ms = 25.0;
            }
        }
    }
    h.state_mut().queue.push(AppCommand::SetPlayhead(60.0));
    h.run_steps(3);
    h.snapshot("compression");
}

/// Results stand for the clips they were made of: a clip given another unit drops them (the
/// table, the ghost, "jump to worst frame" and the export showed or wrote the old take's, found
/// by clip number alone), and undoing the change does not bring back results of clips that no
/// longer match; a comparison of unchanged clips stays.
#[test]
fn results_of_a_clip_that_changed_are_dropped() {
    use taglane::core::doc::Edit;
    let mut h = harness_with(compression_app());
    h.get_by_label("Compress").click();
    h.step();
    run_until_done(&mut h, 2000);
    assert!(h.state().side.compression.comparison.is_some());
    // An edit of tags leaves the clips as they were: the results stay.
    h.state_mut().queue.push(AppCommand::Edit {
        edit: Edit::SetRanges {
            tag: 0,
            clip: 0,
            ranges: vec![taglane::core::tags::Range::new(2, 9)],
        },
        label: "tags".into(),
        select: None,
    });
    h.run_steps(3);
    assert!(h.state().side.compression.comparison.is_some());
    h.state_mut().queue.push(AppCommand::Edit {
        edit: Edit::SetClipUnit {
            clip: 0,
            unit_cm: Some(2.54),
        },
        label: "unit".into(),
        select: None,
    });
    h.run_steps(3);
    let view = &h.state().side.compression;
    assert!(view.comparison.is_none());
    assert!(
        view.status
            .as_deref()
            .unwrap_or("")
            .contains("compare again"),
        "{:?}",
        view.status
    );
    h.get_by_label_contains("compare again");
    // A comparison started, then the clip changed while it ran: its results never show.
    h.get_by_label("Compress").click();
    h.step();
    assert!(h.state().side.compression.is_running());
    h.state_mut().queue.push(AppCommand::Edit {
        edit: Edit::SetClipUnit {
            clip: 0,
            unit_cm: None,
        },
        label: "unit".into(),
        select: None,
    });
    h.run_steps(3);
    assert!(!h.state().side.compression.is_running());
    assert!(h.state().side.compression.comparison.is_none());
}

/// A whole-clip candidate (one segment, `segment_frames` 0) made "custom" keeps its one segment:
/// the field's range began at 1, and egui put the value at 1 the frame it was shown.
#[test]
fn a_custom_candidate_keeps_one_segment_for_the_whole_clip() {
    let mut app = compression_app();
    let whole = taglane::core::compress::Preset::ALL
        .into_iter()
        .find(|p| p.settings().segment_frames == 0)
        .expect("a whole-clip preset");
    let comp = &mut app.side.compression;
    comp.candidates[0] = taglane::ui::compression::model::Candidate::from_preset(0, whole);
    comp.candidates[0].preset = None;
    let mut h = harness_with(app);
    h.run_steps(3);
    h.get_by_label("Segment frames");
    assert_eq!(
        h.state().side.compression.candidates[0]
            .settings
            .segment_frames,
        0
    );
}
