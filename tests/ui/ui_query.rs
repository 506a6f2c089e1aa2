//! The query panel, driven through AccessKit and synthetic input (egui_kittest): typing a query,
//! both result lanes, jumping to a result, saving (undoable), exports compared with the CLI, a bad
//! query, freezing into a tag, the cut export, and a screenshot.
#![cfg(feature = "ui")]

use crate::common::temp_dir;
use std::path::PathBuf;
use std::process::Command;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use taglane::core::anim::{ImportOptions, load_animation};
use taglane::ui::TaglaneApp;
use taglane::ui::command::AppCommand;
use taglane::ui::query::{LANE_MASKS, LANE_RANGES, QueryExportKind, Tab};
use taglane::ui::timeline::model::Row;

fn harness() -> Harness<'static, TaglaneApp> {
    crate::common::demo_harness([1700.0, 1000.0])
}

/// Clicks the editor and types `text` (replacing what is there).
fn type_query(h: &mut Harness<'static, TaglaneApp>, text: &str) {
    h.state_mut().query.text.clear();
    h.run_steps(1);
    h.get_by_label("Expression").click();
    h.run_steps(1);
    h.get_by_label("Expression").type_text(text);
    h.run_steps(3);
}

const QUERY: &str = "(Walking | Running) & Male - Tired";

#[test]
fn typed_query_shows_both_engine_lanes() {
    let mut h = harness();
    type_query(&mut h, QUERY);
    let app = h.state();
    assert_eq!(app.query.text, QUERY);
    assert!(app.query.error.is_none(), "{:?}", app.query.error);
    let ev = app.query.eval.as_ref().expect("evaluated");
    assert!(ev.agree());
    assert!(ev.auto.range_count() > 0);
    // The lanes the app passes to the timeline: one per engine, same ranges, no alarm.
    let lanes = app
        .query
        .extra_lanes(&app.project.doc, app.current_clip, app.prefs.dark);
    assert_eq!(lanes.len(), 2);
    assert_eq!(lanes[0].id, LANE_RANGES);
    assert_eq!(lanes[1].id, LANE_MASKS);
    assert_eq!(lanes[0].ranges, lanes[1].ranges);
    assert!(!lanes[0].alarm && !lanes[1].alarm);
    let q = app.project.doc.parse_query(QUERY).unwrap();
    let (want, _) = taglane::core::tags::query::evaluate(
        &app.project.doc,
        &q,
        taglane::core::tags::Engine::Ranges,
    )
    .unwrap();
    assert_eq!(lanes[0].ranges, want.clip_ranges(app.current_clip));
    // The timeline drew them as rows under the tag lanes.
    let extra: Vec<&Row> = app
        .timeline
        .last_rows
        .iter()
        .filter(|r| matches!(r, Row::Extra(_)))
        .collect();
    assert_eq!(extra.len(), 2, "{:?}", app.timeline.last_rows);
    h.get_by_label_contains("(ranges engine)");
    h.get_by_label_contains("(masks engine)");
}

#[test]
fn clicking_a_result_moves_the_playhead_to_its_clip() {
    let mut h = harness();
    type_query(&mut h, "Running");
    let app = h.state();
    let ev = app.query.eval.as_ref().unwrap();
    let (clip, r) = ev
        .auto
        .iter()
        .filter(|(c, _)| *c != app.current_clip)
        .flat_map(|(c, rs)| rs.iter().map(move |r| (c, *r)))
        .find(|(_, r)| r.start > 0)
        .expect("a match on another clip, not at frame 0");
    let label = format!("[{}, {})", r.start, r.stop);
    h.get_by_label(&label).click();
    h.run_steps(3);
    let app = h.state();
    assert_eq!(app.current_clip, clip);
    assert_eq!(app.playback.playhead, r.start as f64);
    assert_eq!(app.query.selected_result, Some((clip, r)));
}

#[test]
fn a_clips_wrapped_results_end_above_the_next_clip() {
    let mut h = harness();
    type_query(
        &mut h,
        "contact:LeftFootDown | contact:RightFootDown | Idle",
    );
    let app = h.state();
    let ev = app.query.eval.as_ref().unwrap();
    let doc = &app.project.doc;
    // The clips with results, in the table's order, and each one's last range button.
    let shown: Vec<(String, String)> = (0..doc.clips.len() as u32)
        .filter_map(|c| {
            let list = ev.auto.clip_ranges(c);
            let last = *list[..list.len().min(40)].last()?;
            Some((
                doc.clips[c as usize].name.clone(),
                format!("[{}, {})", last.start, last.stop),
            ))
        })
        .collect();
    assert!(shown.len() >= 3);
    let mut wrapped = false;
    // The rows in view (those below it are not laid out): at least two pairs.
    let mut checked = 0;
    for pair in shown.windows(2) {
        let (Some(name), Some(last), Some(next)) = (
            h.query_by_label(&pair[0].0),
            h.query_by_label(&pair[0].1),
            h.query_by_label(&pair[1].0),
        ) else {
            continue;
        };
        let (name, last, next) = (name.rect(), last.rect(), next.rect());
        checked += 1;
        wrapped |= last.min.y > name.max.y;
        // The next clip's row starts below every range of this one.
        assert!(
            next.min.y >= last.max.y,
            "{} at y {} overlaps {}'s ranges ending at y {}",
            pair[1].0,
            next.min.y,
            pair[0].0,
            last.max.y
        );
    }
    assert!(checked >= 2, "{checked} pairs of rows in view");
    assert!(wrapped, "some clip's ranges wrap onto more lines");
}

#[test]
fn a_jump_to_a_result_brings_it_on_screen() {
    let mut h = harness();
    type_query(&mut h, "Running");
    let app = h.state();
    let ev = app.query.eval.as_ref().unwrap();
    let (clip, r) = ev
        .auto
        .iter()
        .flat_map(|(c, rs)| rs.iter().map(move |r| (c, *r)))
        .find(|(_, r)| r.start > 40)
        .expect("a match past frame 40");
    // Zoomed in on the clip's first frames: the result is off screen.
    h.state_mut().queue.push(AppCommand::SelectClip(clip));
    h.run_steps(2);
    h.state_mut().timeline.px_per_frame = 40.0;
    h.state_mut().timeline.first_frame = 0.0;
    h.run_steps(2);
    let label = format!("[{}, {})", r.start, r.stop);
    h.get_by_label(&label).click();
    h.run_steps(3);
    let t = &h.state().timeline;
    let visible = t.last_axis.unwrap().visible_frames();
    // Wider than the view at this zoom: its start is on screen, near the left edge.
    assert!(f64::from(r.stop - r.start) > visible);
    assert!(
        t.first_frame <= f64::from(r.start) && f64::from(r.start) <= t.first_frame + visible * 0.2,
        "{r:?} not near the left of {} + {visible}",
        t.first_frame
    );
    // Zoomed out as far as it goes (the clip a tenth of the view): the jump shows the result
    // whole, at a visible size (a range under 4 points is zoomed to: the unit test of
    // `reveal_range` on a 2^28-frame clip).
    h.state_mut().timeline.px_per_frame = 1e-6;
    h.state_mut().query.selected_result = None;
    h.run_steps(2);
    let t = &h.state().timeline;
    let a = t.last_axis.unwrap();
    let frames = f64::from(h.state().project.doc.clips[clip as usize].frames);
    assert!(
        (a.visible_frames() / frames - 10.0).abs() < 0.01,
        "zoomed out to {} frames on screen",
        a.visible_frames()
    );
    h.get_by_label(&label).click();
    h.run_steps(3);
    let t = &h.state().timeline;
    let visible = t.last_axis.unwrap().visible_frames();
    assert!(t.first_frame <= f64::from(r.start), "{}", t.first_frame);
    assert!(f64::from(r.stop) <= t.first_frame + visible);
    assert!(f64::from(r.stop - r.start) * t.px_per_frame >= 4.0);
}

#[test]
fn saving_a_query_is_undoable() {
    let mut h = harness();
    type_query(&mut h, QUERY);
    h.state_mut().query.tab = Tab::Export;
    h.run_steps(2);
    let before = h.state().project.doc.queries.clone();
    h.get_by_label("Save as").click();
    h.run_steps(1);
    h.get_by_label("Save as").type_text("fresh males");
    h.run_steps(2);
    h.get_by_label("Save query").click();
    h.run_steps(3);
    let queries = &h.state().project.doc.queries;
    assert_eq!(queries.len(), before.len() + 1);
    let saved = queries.last().unwrap();
    assert_eq!(
        (saved.name.as_str(), saved.expr.as_str()),
        ("fresh males", QUERY)
    );
    assert_eq!(
        h.state().project.history.undo_label(),
        Some("save query fresh males")
    );
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(2);
    assert_eq!(h.state().project.doc.queries, before);
    // The saved query loads back from the menu after a redo.
    h.state_mut().queue.push(AppCommand::Redo);
    h.run_steps(2);
    h.state_mut().query.text = "Idle".into();
    h.run_steps(1);
    h.get_by_label("Saved queries").click();
    h.run_steps(3);
    h.get_by_label("fresh males").click();
    h.run_steps(3);
    assert_eq!(h.state().query.text, QUERY);
}

#[test]
fn json_export_matches_the_cli_and_csv_lists_ranges() {
    let dir = temp_dir("export");
    let project = dir.join("demo.taglane.json");
    let mut h = harness();
    h.state_mut()
        .queue
        .push(AppCommand::SaveAs(Some(project.clone())));
    h.run_steps(2);
    assert!(project.exists(), "{:?}", h.state().status);
    type_query(&mut h, QUERY);
    let json_path = dir.join("result.json");
    let csv_path = dir.join("result.csv");
    h.state_mut().queue.push(AppCommand::QueryExport {
        kind: QueryExportKind::Json,
        path: Some(json_path.clone()),
    });
    h.state_mut().queue.push(AppCommand::QueryExport {
        kind: QueryExportKind::Csv,
        path: Some(csv_path.clone()),
    });
    h.run_steps(2);
    let ours = std::fs::read_to_string(&json_path).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_taglane"))
        .args(["query", project.to_str().unwrap(), QUERY, "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli = String::from_utf8(out.stdout).unwrap();
    assert_eq!(ours.trim_end(), cli.trim_end());
    let a: serde_json::Value = serde_json::from_str(&ours).unwrap();
    let b: serde_json::Value = serde_json::from_str(&cli).unwrap();
    assert_eq!(a, b);
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "clip,start,stop,seconds");
    assert_eq!(lines.len() - 1, a["ranges"].as_u64().unwrap() as usize);
    let ev = h.state().query.eval.clone().unwrap();
    let (c, rs) = ev.auto.iter().next().unwrap();
    let name = &h.state().project.doc.clips[c as usize].name;
    assert_eq!(
        lines[1],
        format!(
            "{name},{},{},{:.3}",
            rs[0].start,
            rs[0].stop,
            rs[0].len() as f64 / 30.0
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_query_shows_its_error_and_changes_nothing() {
    let mut h = harness();
    type_query(&mut h, "Walking & Male");
    let good = h.state().query.eval.as_ref().unwrap().auto.clone();
    let doc_before = h.state().project.doc.clone();
    let history_before = h.state().project.history.len();
    let playhead = h.state().playback.playhead;
    // Keep typing: a misspelt tag.
    h.get_by_label("Expression").type_text(" - Tird");
    h.run_steps(3);
    let app = h.state();
    assert_eq!(app.query.text, "Walking & Male - Tird");
    let err = app.query.error.as_ref().expect("an error");
    assert_eq!(err.column(), 18);
    assert!(err.suggestions.contains(&"Tired".to_owned()), "{err:?}");
    h.get_by_label_contains("Error at column 18");
    h.get_by_label_contains("did you mean `Tired`");
    let app = h.state();
    assert_eq!(app.project.doc, doc_before);
    assert_eq!(app.project.history.len(), history_before);
    assert_eq!(app.playback.playhead, playhead);
    // The lanes keep the last valid result.
    assert_eq!(app.query.eval.as_ref().unwrap().auto, good);
    // An unclosed parenthesis points at the end.
    type_query(&mut h, "(Walking | Running");
    let err = h.state().query.error.clone().unwrap();
    assert_eq!(err.column(), 19, "{err:?}");
}

/// The last result is kept while a query is typed, on the document it was evaluated on only: a
/// tag of the query deleted, or another project opened where the text does not parse, drops it
/// (its lanes showed the old ranges on the new clips).
#[test]
fn a_result_is_not_shown_on_another_document() {
    let mut h = harness();
    type_query(&mut h, "Walking & Male");
    assert!(h.state().query.eval.is_some());
    let male = h
        .state()
        .project
        .doc
        .tags
        .iter()
        .position(|t| t.name == "Male")
        .unwrap();
    h.state_mut().queue.push(AppCommand::DeleteTag(male));
    h.run_steps(3);
    let app = h.state();
    assert!(app.query.error.is_some());
    assert!(
        app.query.eval.is_none(),
        "the deleted tag's result is still shown"
    );
    assert!(
        app.query
            .extra_lanes(&app.project.doc, app.current_clip, app.prefs.dark)
            .is_empty(),
        "its lanes are still drawn"
    );
    // Undone: the text parses again and the result is back.
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(3);
    assert!(
        h.state().query.eval.is_some(),
        "{:?} {:?}",
        h.state().query.text,
        h.state().query.error
    );
    // Another project (an empty one): nothing of this one's result.
    h.state_mut().queue.push(AppCommand::GuardedDiscard(
        taglane::ui::command::Guarded::New,
    ));
    h.run_steps(3);
    let app = h.state();
    assert!(app.project.doc.tags.is_empty());
    assert!(app.query.eval.is_none() && app.query.selected_result.is_none());
}

#[test]
fn completion_inserts_a_namespaced_tag() {
    let mut h = harness();
    type_query(&mut h, "Male & conta");
    let comp = h.get_by_label("contact:");
    comp.click();
    h.run_steps(2);
    assert_eq!(h.state().query.text, "Male & contact:");
    h.get_by_label("Expression").type_text("Le");
    h.run_steps(2);
    assert_eq!(h.state().query.text, "Male & contact:Le");
    h.get_by_label("contact:LeftFootDown").click();
    h.run_steps(3);
    assert_eq!(h.state().query.text, "Male & contact:LeftFootDown");
    assert!(h.state().query.error.is_none());
    // Tab takes the first candidate.
    h.get_by_label("Expression").type_text(" - Tir");
    h.run_steps(2);
    h.key_press(egui::Key::Tab);
    h.run_steps(3);
    assert_eq!(h.state().query.text, "Male & contact:LeftFootDown - Tired");
    assert!(h.state().query.error.is_none());
}

#[test]
fn builder_and_text_stay_in_sync() {
    let mut h = harness();
    type_query(&mut h, "Walking & Male");
    h.get_by_label("Builder").click();
    h.run_steps(3);
    // Typing updates the tree.
    let tree = h.state().query.builder.clone().unwrap();
    assert_eq!(tree.to_text(), "Walking & Male");
    // The builder updates the text: combine the root with a tag by difference.
    // (The first "+" is the root's.)
    h.get_all_by_label("+").next().unwrap().click();
    h.run_steps(3);
    h.get_by_label("- difference with tag").click();
    h.run_steps(3);
    // The menu item (the timeline has a lane header called Tired too, further left).
    h.get_all_by_label("Tired")
        .max_by(|a, b| a.rect().min.x.total_cmp(&b.rect().min.x))
        .unwrap()
        .click();
    h.run_steps(4);
    // `-` binds tighter than `&`, so the builder adds the parentheses.
    assert_eq!(h.state().query.text, "(Walking & Male) - Tired");
    assert!(h.state().query.error.is_none());
    // A tag leaf is removed by its own button (the last "remove" is Tired's row): its
    // operation keeps the other side.
    h.get_all_by_label("remove").last().unwrap().click();
    h.run_steps(3);
    assert_eq!(h.state().query.text, "Walking & Male");
    // And typing again updates the tree.
    h.state_mut().query.text = "not Idle".into();
    h.run_steps(2);
    assert_eq!(h.state().query.builder.as_ref().unwrap().to_text(), "!Idle");
}

#[test]
fn freeze_result_into_a_tag_is_one_undoable_edit() {
    let mut h = harness();
    type_query(&mut h, QUERY);
    h.state_mut().query.tab = Tab::Export;
    h.run_steps(3);
    // The suggested name follows the text (it kept the first query's name)...
    let first = h.state().query.freeze_name.clone();
    assert!(first.starts_with("query:"), "{first}");
    h.state_mut().query.text = "Running - Tired".into();
    h.run_steps(3);
    let second = h.state().query.freeze_name.clone();
    assert!(second.starts_with("query:") && second != first, "{second}");
    // ...until the user types their own, which is kept.
    h.state_mut().query.freeze_name = "mine".into();
    h.state_mut().query.text = QUERY.into();
    h.run_steps(3);
    assert_eq!(h.state().query.freeze_name, "mine");
    h.state_mut().query.freeze_name.clear();
    h.run_steps(3);
    assert_eq!(h.state().query.freeze_name, first);
    let tags_before = h.state().project.doc.tags.len();
    h.get_by_label("Create tag").click();
    h.run_steps(3);
    let app = h.state();
    assert_eq!(app.project.doc.tags.len(), tags_before + 1);
    let tag = app.project.doc.tags.last().unwrap();
    assert!(tag.name.starts_with("query:"), "{}", tag.name);
    let ev = app.query.eval.as_ref().unwrap();
    for (c, r) in ev.auto.iter() {
        assert_eq!(tag.ranges.get(&c), Some(r));
    }
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(2);
    assert_eq!(h.state().project.doc.tags.len(), tags_before);
}

#[test]
fn cut_export_runs_in_the_background_with_a_summary() {
    let dir = temp_dir("cut");
    let mut h = harness();
    type_query(&mut h, "Running & Male");
    h.state_mut().queue.push(AppCommand::QueryCut {
        dir: Some(dir.clone()),
        replace: false,
    });
    h.run_steps(1);
    let line = h.state_mut().query.wait_cut().expect("a summary");
    let ev = h.state().query.eval.clone().unwrap();
    assert!(
        line.contains(&format!("wrote {} BVH file(s)", ev.auto.range_count())),
        "{line}"
    );
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), ev.auto.range_count());
    let total: usize = files
        .iter()
        .map(|f| load_animation(f, &ImportOptions::default()).unwrap().clips[0].frame_count)
        .sum();
    assert_eq!(total as u64, ev.auto.total_frames());
    // Into the same folder again: the app asks before replacing the files, and Cancel writes
    // nothing.
    std::fs::write(&files[0], "edited by hand").unwrap();
    h.state_mut().query.cut_summary = None;
    h.state_mut().queue.push(AppCommand::QueryCut {
        dir: Some(dir.clone()),
        replace: false,
    });
    h.run_steps(3);
    h.get_by_label("Replace files?");
    h.get_by_label_contains("of the cut's files already exist");
    h.get_by_label("Cancel").click();
    h.run_steps(2);
    assert!(h.state().query.cut.is_none() && h.state().dialog.is_none());
    assert_eq!(
        std::fs::read_to_string(&files[0]).unwrap(),
        "edited by hand"
    );
    // Replace: the cut runs and writes every file again.
    h.state_mut().queue.push(AppCommand::QueryCut {
        dir: Some(dir.clone()),
        replace: false,
    });
    h.run_steps(3);
    h.get_by_label("Replace").click();
    h.run_steps(2);
    // Another tab shown meanwhile: the end of the cut is still noticed, and said in the status
    // bar.
    h.state_mut().bottom_tab = taglane::ui::bottom_panel::BottomTab::Similar;
    for _ in 0..400 {
        if h.state().query.cut.is_none() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        h.step();
    }
    assert!(
        h.state().query.cut.is_none(),
        "the cut's end was not noticed"
    );
    let line = h.state().status.clone().unwrap().1;
    assert!(
        line.contains(&format!("wrote {} BVH file(s)", ev.auto.range_count())),
        "{line}"
    );
    assert!(
        std::fs::read_to_string(&files[0])
            .unwrap()
            .starts_with("HIERARCHY")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn details_list_nodes_and_a_node_becomes_a_lane() {
    let mut h = harness();
    type_query(&mut h, QUERY);
    h.state_mut().query.tab = Tab::Details;
    h.run_steps(3);
    h.get_by_label_contains("[-1] |");
    h.get_by_label_contains("| (union)").click_accesskit();
    h.run_steps(3);
    let app = h.state();
    let lanes = app
        .query
        .extra_lanes(&app.project.doc, app.current_clip, app.prefs.dark);
    assert_eq!(lanes.len(), 3);
    assert!(
        lanes[2].label.contains("Walking | Running"),
        "{}",
        lanes[2].label
    );
    // Step through that union on this clip to the end: the output equals the node's result.
    h.state_mut().query.tab = Tab::Step;
    h.run_steps(2);
    h.get_by_label("Last").click();
    h.run_steps(2);
    h.get_by_label_contains("output so far");
}

/// The panel shows measured times in microseconds, which differ from run to run: a few hundred
/// pixels of those digits may differ from the stored image.
fn timing_tolerant() -> egui_kittest::SnapshotOptions {
    egui_kittest::SnapshotOptions::new().max_failed_pixels(800)
}

/// Replaces the measured engine times with fixed ones, so the images do not change between runs.
fn freeze_timings(h: &mut Harness<'static, TaglaneApp>) {
    if let Some(ev) = h.state_mut().query.eval.as_mut() {
        ev.ranges_us = 42.0;
        ev.masks_us = 37.0;
        ev.auto_us = 45.0;
        ev.cached = false;
    }
    h.run_steps(2);
}

/// The query view on the demo project, rendered with wgpu (`screenshots/query.png`).
#[test]
fn query_view_screenshot() {
    let mut h = Harness::builder()
        .with_size([1600.0, 1000.0])
        .wgpu()
        .build_ui_state(
            |ui, app: &mut TaglaneApp| app.ui(ui),
            TaglaneApp::demo_for_tests(),
        );
    h.run_steps(3);
    h.state_mut().queue.push(AppCommand::SelectClip(0));
    h.state_mut().query.text = QUERY.to_owned();
    h.run_steps(4);
    freeze_timings(&mut h);
    h.snapshot_options("query", &timing_tolerant());
    // The evaluation details with the union node shown as a lane, and the step-through of it.
    h.state_mut().query.tab = Tab::Details;
    h.run_steps(2);
    h.get_by_label_contains("| (union)").click_accesskit();
    h.run_steps(3);
    freeze_timings(&mut h);
    h.snapshot_options("query_details", &timing_tolerant());
    h.state_mut().query.tab = Tab::Step;
    h.run_steps(2);
    for _ in 0..3 {
        h.get_by_label("Step").click();
        h.run_steps(1);
    }
    h.run_steps(2);
    h.snapshot_options("query_step", &timing_tolerant());
}

#[test]
fn engines_that_disagree_raise_a_loud_warning() {
    let mut h = harness();
    type_query(&mut h, "Walking | Running");
    {
        // Simulate an engine bug: drop the first range of the masks result on the current clip.
        let app = h.state_mut();
        let clip = app.current_clip;
        let ev = app.query.eval.as_mut().unwrap();
        let mut broken = taglane::core::tags::RangeSet::new();
        for (c, r) in ev.masks.iter() {
            let r = if c == clip { &r[1..] } else { r };
            broken.push_clip(c, r);
        }
        ev.masks = broken;
        ev.mismatched = vec![clip];
    }
    h.run_steps(2);
    let app = h.state();
    let lanes = app
        .query
        .extra_lanes(&app.project.doc, app.current_clip, app.prefs.dark);
    assert!(lanes[0].alarm && lanes[1].alarm);
    assert_ne!(lanes[0].ranges, lanes[1].ranges);
    assert!(lanes[1].tooltip.contains("WARNING"), "{}", lanes[1].tooltip);
    h.get_by_label_contains("engines DISAGREE on 1 clip");
}

/// A database above the background threshold: evaluation runs off the UI thread and lands.
#[test]
fn big_database_evaluates_in_the_background() {
    use std::collections::BTreeMap;
    use taglane::core::tags::query::next_version;
    use taglane::core::tags::{ClipInfo, Range, Tag, TagDocument};
    let clips: Vec<ClipInfo> = (0..800)
        .map(|c| ClipInfo {
            name: format!("take_{c:04}"),
            frames: 1000,
            fps: 30.0,
            source: None,
            unit_cm: None,
        })
        .collect();
    let tags: Vec<Tag> = ["A", "B", "C"]
        .iter()
        .enumerate()
        .map(|(t, name)| {
            let mut ranges = BTreeMap::new();
            for c in 0..800u32 {
                let list: Vec<Range> = (0..12)
                    .map(|k| {
                        let s = (k * 80 + (c as usize * 7 + t * 13) % 40) as u32;
                        Range::new(s, s + 30)
                    })
                    .collect();
                ranges.insert(c, list);
            }
            Tag {
                name: (*name).to_owned(),
                color: None,
                ranges: ranges.into(),
                markers: Default::default(),
                notes: Default::default(),
                version: next_version(),
            }
        })
        .collect();
    let doc = TagDocument {
        clips,
        tags,
        queries: vec![],
        ..Default::default()
    };
    let project = taglane::ui::project::Project {
        doc: doc.clone(),
        ..Default::default()
    };
    let app = TaglaneApp::new(
        project,
        taglane::ui::app::Prefs::default(),
        taglane::ui::recovery::Recovery::disabled(),
    );
    let mut h = Harness::builder()
        .with_size([1700.0, 1000.0])
        .build_ui_state(|ui, app: &mut TaglaneApp| app.ui(ui), app);
    h.run_steps(2);
    h.state_mut().query.text = "A & B | C - A".into();
    h.step();
    assert!(h.state().query.last_in_background);
    for _ in 0..500 {
        if !h.state().query.is_evaluating() && h.state().query.eval.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        h.step();
    }
    let ev = h
        .state()
        .query
        .eval
        .clone()
        .expect("the background result arrived");
    let q = doc.parse_query("A & B | C - A").unwrap();
    let (want, _) =
        taglane::core::tags::query::evaluate(&doc, &q, taglane::core::tags::Engine::Ranges)
            .unwrap();
    assert_eq!(ev.ranges, want);
    assert!(ev.agree());
    // A new text: until its result arrives, the one shown is the old text's, and nothing is
    // frozen, exported or cut from it.
    h.state_mut().query.text = "A | B".into();
    h.step();
    let app = h.state();
    assert!(app.query.is_evaluating() && app.query.eval.is_some());
    assert!(app.query.current_result().is_none());
    assert!(app.query.freeze_edit(&app.project.doc, "frozen").is_none());
}

/// The Results rows out of view are not laid out (a broad result over a large library laid out
/// every clip's row, every frame), and scrolling brings every row: the last clip's row is there
/// at the bottom.
#[test]
fn results_lay_out_only_the_rows_in_view() {
    use egui_kittest::kittest::NodeT;
    use taglane::ui::project::Project;
    let project = Project {
        doc: taglane::core::demo::synthetic_document(300, 4, 4, 7),
        ..Default::default()
    };
    let app = TaglaneApp::new(
        project,
        taglane::ui::app::Prefs::default(),
        taglane::ui::recovery::Recovery::disabled(),
    );
    let mut h = crate::common::harness_with(app, [1600.0, 1000.0]);
    h.state_mut().query.whole_database = true;
    type_query(&mut h, "tag000 | !tag000");
    h.run_steps(3);
    let links = |h: &Harness<'static, TaglaneApp>| -> Vec<String> {
        h.root()
            .children_recursive()
            .filter(|n| n.accesskit_node().role() == egui::accesskit::Role::Link)
            .filter_map(|n| n.accesskit_node().label())
            .filter(|l| l.starts_with("take_"))
            .collect()
    };
    let shown = links(&h);
    assert!(
        !shown.is_empty() && shown.len() < 100,
        "{} rows laid out",
        shown.len()
    );
    let last = h.state().project.doc.clips.last().unwrap().name.clone();
    assert!(!shown.contains(&last));
    // Scrolled down to the end (the wheel over the first row), the last clip's row is there.
    let first = h.get_by_label(&shown[0]).rect().center();
    h.event(egui::Event::PointerMoved(egui::pos2(
        first.x as f32,
        first.y as f32,
    )));
    for _ in 0..200 {
        h.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: egui::vec2(0.0, -400.0),
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Wheel,
            modifiers: egui::Modifiers::NONE,
        });
        h.step();
    }
    h.run_steps(3);
    assert!(links(&h).contains(&last), "{:?}", links(&h));
}
