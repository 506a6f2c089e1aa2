//! Library imports in the app: a folder imported in the background while the UI keeps drawing,
//! a second one cancelled, units set for a selection of clips, the browser's filters.
#![cfg(feature = "ui")]

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use taglane::core::library::synth::{LibrarySpec, write_library};
use taglane::ui::TaglaneApp;
use taglane::ui::command::AppCommand;

use crate::common::{demo_harness, temp_dir, wait_import};

#[test]
fn a_folder_imports_in_the_background_while_frames_keep_coming_and_a_second_one_cancels() {
    let dir = temp_dir("library-ui");
    let spec = LibrarySpec {
        takes: 24,
        bytes_per_take: 400_000,
        takes_per_session: 6,
    };
    write_library(&dir.join("lib"), &spec).unwrap();
    std::fs::write(dir.join("lib/notes.txt"), "not a take").unwrap();
    std::fs::write(dir.join("lib/broken.bvh"), "HIERARCHY\nROOT Hips\n{\n").unwrap();
    let mut h = demo_harness([1600.0, 1000.0]);
    let before = h.state().project.doc.clips.len();
    h.state_mut()
        .queue
        .push(AppCommand::ImportFolder(Some(dir.join("lib"))));
    h.step();
    assert!(
        h.state().library.importing(),
        "the import runs in the background"
    );
    // Frames keep coming while it runs: each step is a whole UI frame.
    let mut frames_during = 0;
    while h.state().library.importing() && frames_during < 5000 {
        let t = std::time::Instant::now();
        h.step();
        frames_during += 1;
        // A frame never waits for the import (generous bound: debug build, loaded machine).
        assert!(
            t.elapsed().as_millis() < 2000,
            "a frame took {:?}",
            t.elapsed()
        );
    }
    assert!(frames_during >= 1);
    h.run_steps(2);
    let app = h.state();
    assert_eq!(app.project.doc.clips.len(), before + spec.takes);
    let plan = app.library.last.as_ref().expect("a report");
    assert_eq!(plan.failed.len(), 1, "{}", plan.report_text(false));
    assert!(plan.report_text(false).contains("broken.bvh"));
    assert_eq!(plan.ignored.len(), 1);
    // One undo step removes the whole import.
    assert_eq!(
        app.project.history.undo_label().map(str::to_owned),
        Some(format!("import {}", dir.join("lib").display()))
    );
    // The report window is shown and can be closed.
    assert!(app.library.show_report);
    h.get_by_label("Copy report");
    h.state_mut()
        .queue
        .push(AppCommand::ShowImportReport(false));
    h.run_steps(2);

    // A second folder: cancelled at once, nothing added.
    write_library(
        &dir.join("more"),
        &LibrarySpec {
            takes: 60,
            bytes_per_take: 400_000,
            takes_per_session: 10,
        },
    )
    .unwrap();
    let clips = h.state().project.doc.clips.len();
    h.state_mut()
        .queue
        .push(AppCommand::ImportFolder(Some(dir.join("more"))));
    h.step();
    h.state_mut().queue.push(AppCommand::CancelImport);
    wait_import(&mut h);
    assert_eq!(h.state().project.doc.clips.len(), clips);
    let status = h.state().status.clone().unwrap().1;
    assert!(status.contains("cancelled"), "{status}");
    // Re-importing the first folder adds nothing new.
    h.state_mut()
        .queue
        .push(AppCommand::ImportFolder(Some(dir.join("lib"))));
    h.step();
    wait_import(&mut h);
    assert_eq!(h.state().project.doc.clips.len(), clips);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn units_are_set_for_a_selection_of_clips_in_one_undo_step() {
    let mut h = demo_harness([1600.0, 1000.0]);
    h.state_mut().queue.push(AppCommand::SetClipUnits {
        clips: vec![0, 1, 2],
        unit_cm: Some(5.644),
    });
    h.run_steps(2);
    let units: Vec<Option<f32>> = h.state().project.doc.clips[..4]
        .iter()
        .map(|c| c.unit_cm)
        .collect();
    assert_eq!(units, [Some(5.644), Some(5.644), Some(5.644), None]);
    // The loaded animation follows the unit: the viewport's grid and the pose tab say so.
    let project = h.state().project.clone();
    let clip0 = h.state_mut().side.anim.get(&project, 0);
    assert_eq!(clip0.unwrap().unit_cm, 5.644);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::Z);
    h.run_steps(2);
    assert!(
        h.state().project.doc.clips[..3]
            .iter()
            .all(|c| c.unit_cm.is_none())
    );
    // Guessing from the skeleton: the demo stands in centimetres.
    h.state_mut()
        .queue
        .push(AppCommand::GuessClipUnits(vec![0, 1]));
    h.run_steps(2);
    assert_eq!(h.state().project.doc.clips[0].unit_cm, Some(1.0));
    let status = h.state().status.clone().unwrap().1;
    assert!(status.contains("cm"), "{status}");
}

#[test]
fn the_browser_filters_untagged_clips_and_groups_folders() {
    use taglane::ui::browser::{BrowserRow, TagFilter};
    let mut h = demo_harness([1600.0, 1000.0]);
    h.state_mut().browser.filters.tag = TagFilter::Untagged;
    h.run_steps(2);
    assert!(
        h.state().browser.rows().is_empty(),
        "every demo clip is tagged"
    );
    h.get_by_label_contains("0 of 10 clips");
    h.state_mut().browser.filters.tag = TagFilter::Tag("Limping".into());
    h.state_mut().browser.filters.group_by_folder = true;
    h.run_steps(2);
    let rows = h.state().browser.rows().to_vec();
    assert!(matches!(&rows[0], BrowserRow::Folder { folder, .. } if folder == "demo"));
    let limping = rows.len() - 1;
    assert!((1..10).contains(&limping), "{rows:?}");
}

/// The shared real takes imported as a library into an empty project: units guessed per clip
/// (CMU unit, centimetres, the glTF's own), every clip auto-tagged in one step, the browser grouped
/// by folder. Also the README's screenshot of the browser on a real library.
#[test]
#[ignore = "needs ../shared/mocap"]
fn a_real_library_imported_auto_tagged_and_browsed_snapshot() {
    use egui_kittest::{Harness, SnapshotOptions};
    use taglane::ui::TaglaneApp;
    use taglane::ui::project::Project;
    let dir = crate::common::mocap_dir()
        .canonicalize()
        .expect("../shared/mocap");
    let app = TaglaneApp::new(
        Project::default(),
        taglane::ui::app::Prefs::default(),
        taglane::ui::recovery::Recovery::disabled(),
    );
    let mut h = Harness::builder()
        .with_size([1600.0, 1000.0])
        .with_options(SnapshotOptions::default().max_failed_pixels(400))
        .wgpu()
        .build_ui_state(|ui, app: &mut TaglaneApp| app.ui(ui), app);
    h.run_steps(3);
    h.state_mut()
        .queue
        .push(AppCommand::ImportFolder(Some(dir.clone())));
    h.step();
    wait_import(&mut h);
    {
        let doc = &h.state().project.doc;
        // Nine BVH takes and the three animations of the glTF fox.
        assert_eq!(doc.clips.len(), 12, "{:?}", doc.clips);
        for c in &doc.clips {
            let unit = c.unit_cm.expect("every imported clip has a unit");
            if c.name.starts_with("cmu_") {
                assert!((unit - 5.644).abs() < 1e-6, "{}: {unit}", c.name);
            } else if c.name.starts_with("bandai_") {
                assert_eq!(unit, 1.0, "{}", c.name);
            }
        }
    }
    h.get_by_label("Close").click();
    h.run_steps(2);
    // Auto-tag every clip in one step (the quadruped fox has no human feet: reported, not tagged).
    h.get_by_label("Auto-tag").click();
    h.run_steps(2);
    h.get_by_label("All clips (12)").click();
    h.run_steps(1);
    h.get_by_label("Apply").click();
    h.run_steps(1);
    for _ in 0..4000 {
        if !h.state().autotag.is_busy() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
        h.step();
    }
    assert!(!h.state().autotag.is_busy(), "the auto-tag never ended");
    h.run_steps(3);
    {
        let app = h.state();
        let doc = &app.project.doc;
        let left = &doc.tags[doc.tag_index("contact:LeftFoot").expect("contacts")];
        assert!(
            left.ranges.len() >= 9,
            "every human take has left contacts: {}",
            left.ranges.len()
        );
        let label = app.project.history.undo_label().unwrap_or_default();
        assert!(label.starts_with("auto-tag"), "one undo step: {label}");
        let status = app.autotag.status.clone().unwrap_or_default();
        assert!(status.contains("9 clip(s) tagged"), "{status}");
    }
    let walk = h
        .state()
        .project
        .doc
        .clips
        .iter()
        .position(|c| c.name == "bandai_dataset-2_walk-turn-left_normal_001")
        .expect("the turning walk");
    h.state_mut().browser.filters.group_by_folder = true;
    h.state_mut().bottom_tab = taglane::ui::bottom_panel::BottomTab::Query;
    h.state_mut()
        .queue
        .push(AppCommand::SelectClip(walk as taglane::core::tags::ClipId));
    h.state_mut().queue.push(AppCommand::SetPlayhead(60.0));
    h.run_steps(2);
    crate::common::wait_anim(&mut h);
    h.run_steps(3);
    assert_eq!(h.state().side.pose.load_error, None);
    h.snapshot("browser_real");
}

/// A take already in the project through a link, imported again at its own path: matched by its
/// file identity (read with the scan, in the background), so it is not added twice.
#[cfg(unix)]
#[test]
fn a_take_in_the_project_through_a_link_is_not_imported_again() {
    let dir = temp_dir("library-ui-link");
    let spec = LibrarySpec {
        takes: 2,
        bytes_per_take: 20_000,
        takes_per_session: 2,
    };
    write_library(&dir.join("lib"), &spec).unwrap();
    let take = walk_first_take(&dir.join("lib"));
    std::fs::create_dir_all(dir.join("picks")).unwrap();
    std::os::unix::fs::symlink(&take, dir.join("picks/pick.bvh")).unwrap();
    let mut h = demo_harness([1600.0, 1000.0]);
    let before = h.state().project.doc.clips.len();
    for folder in ["picks", "lib"] {
        h.state_mut()
            .queue
            .push(AppCommand::ImportFolder(Some(dir.join(folder))));
        h.step();
        wait_import(&mut h);
    }
    let app = h.state();
    assert_eq!(app.project.doc.clips.len(), before + spec.takes);
    let plan = app.library.last.as_ref().expect("a report");
    assert_eq!(plan.unchanged.len(), 1, "{}", plan.report_text(false));
    assert_eq!(plan.added.len(), spec.takes - 1);
    // The report, shown, names the take the project has through the link.
    assert_eq!(plan.linked.len(), 1);
    assert!(app.library.show_report);
    std::fs::remove_dir_all(&dir).ok();
}

/// The first take (by path) under `dir`.
fn walk_first_take(dir: &std::path::Path) -> std::path::PathBuf {
    let walk = taglane::core::library::find_takes(&[dir.to_path_buf()]);
    walk.files[0].path.clone()
}

/// Undoing an import removes the clip shown (the first imported): the clip shown after it is
/// fitted in the timeline, as when it is selected, not left at the removed clip's length.
#[test]
fn undoing_an_import_fits_the_clip_shown_after_it() {
    let dir = temp_dir("library-ui-undo-fit");
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    // A short take: a tenth of the demo's walk.
    let (_, walk) = taglane::core::project::DEMO_CLIP_FILES[0];
    let motion = walk.find("Frame Time").unwrap();
    let rows_at = motion + walk[motion..].find('\n').unwrap() + 1;
    let rows: Vec<&str> = walk[rows_at..].lines().take(24).collect();
    let short = format!(
        "{}Frames: 24\n{}{}\n",
        &walk[..walk.find("Frames:").unwrap()],
        &walk[motion..rows_at],
        rows.join("\n")
    );
    std::fs::write(dir.join("lib/short.bvh"), short).unwrap();
    let mut h = demo_harness([1600.0, 1000.0]);
    h.state_mut()
        .queue
        .push(AppCommand::ImportFolder(Some(dir.join("lib"))));
    h.step();
    wait_import(&mut h);
    h.run_steps(3);
    let shown = h.state().current_clip as usize;
    assert_eq!(h.state().project.doc.clips[shown].frames, 24);
    // The short clip's playhead, mark in and loop range are not the next clip's.
    h.state_mut().playback.playhead = 12.0;
    h.state_mut().playback.mark_in = Some(5);
    h.state_mut().queue.push(AppCommand::SetLoopRange(Some(
        taglane::core::tags::Range::new(3, 9),
    )));
    h.run_steps(2);
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(4);
    let app = h.state();
    let frames = f64::from(app.project.doc.clips[app.current_clip as usize].frames);
    assert!(frames > 100.0);
    assert_eq!(app.playback.playhead, 0.0);
    assert_eq!(app.playback.mark_in, None);
    assert_eq!(app.playback.loop_range, None);
    let visible = app.timeline.last_axis.unwrap().visible_frames();
    assert!(
        visible >= frames && app.timeline.first_frame <= 0.0,
        "{visible} frames visible from {} for a clip of {frames}",
        app.timeline.first_frame
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A take made shorter on disk, imported again: "Update the length" gives its clip the take's
/// length in one undo step; clicked again, it says there is nothing to update (it did nothing,
/// silently).
#[test]
fn updating_changed_lengths_twice_says_there_is_nothing_left() {
    let dir = temp_dir("library-ui-update-changed");
    let spec = LibrarySpec {
        takes: 2,
        bytes_per_take: 20_000,
        takes_per_session: 2,
    };
    write_library(&dir.join("lib"), &spec).unwrap();
    let mut h = demo_harness([1600.0, 1000.0]);
    let import = |h: &mut Harness<'static, TaglaneApp>| {
        h.state_mut()
            .queue
            .push(AppCommand::ImportFolder(Some(dir.join("lib"))));
        h.step();
        wait_import(h);
    };
    import(&mut h);
    // The first take loses its last frame.
    let take = walk_first_take(&dir.join("lib"));
    let text = std::fs::read_to_string(&take).unwrap();
    let frames: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("Frames:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    lines.pop();
    let shorter = lines.join("\n").replace(
        &format!("Frames: {frames}"),
        &format!("Frames: {}", frames - 1),
    );
    std::fs::write(&take, shorter + "\n").unwrap();
    import(&mut h);
    let steps = h.state().project.history.len();
    h.state_mut().library.show_report = true;
    h.run_steps(2);
    h.get_by_label("Update the length of 1 changed clip(s)")
        .click();
    h.run_steps(2);
    assert_eq!(h.state().project.history.len(), steps + 1);
    // Nothing left: the button is gone; the command itself says so.
    assert!(
        h.query_by_label_contains("Update the length of").is_none(),
        "the button still offers an update"
    );
    h.state_mut().queue.push(AppCommand::UpdateChangedClips);
    h.run_steps(2);
    assert_eq!(h.state().project.history.len(), steps + 1);
    let status = h.state().status.clone().unwrap().1;
    assert!(status.contains("nothing to update"), "{status}");
    std::fs::remove_dir_all(&dir).ok();
}
