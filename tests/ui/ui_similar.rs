//! The "Find similar" tool, driven through AccessKit and synthetic input (egui_kittest): select a
//! range, find (in the background), the ranked list and the ghost lanes, stepping with the pose
//! overlay, accepting two matches in one undo step, accepting all under the threshold, cancelling,
//! a search over clips that changed meanwhile (run again or dropped), a query clip that cannot be
//! read, a search that finds nothing, and the screenshot.
#![cfg(feature = "ui")]

use egui::Key;
use egui_kittest::kittest::{NodeT, Queryable};
use egui_kittest::{Harness, SnapshotOptions};
use taglane::core::doc::Edit;
use taglane::core::tags::{Range, Tag};
use taglane::ui::TaglaneApp;
use taglane::ui::bottom_panel::BottomTab;
use taglane::ui::command::AppCommand;
use taglane::ui::similar::{LANE_MATCHES, LANE_QUERY, SimilarCommand};
use taglane::ui::timeline::model::Row;

/// One stride of walk_male_01, drawn as the example of a new tag.
const STRIDE: Range = Range::new(120, 150);

/// The demo with a tag "Stride" holding one range (one stride of walk_male_01, the example), that
/// range selected.
fn with_example(app: &mut TaglaneApp) -> usize {
    let index = app.project.doc.tags.len();
    let mut tag = Tag::new("Stride");
    tag.ranges.insert(0, vec![STRIDE]);
    app.queue.push(AppCommand::Edit {
        edit: Edit::InsertTag { index, tag },
        label: "draw the example".into(),
        select: Some(vec![(index, STRIDE)]),
    });
    index
}

/// Adds `copies` copies of every clip of the demo (same embedded animation, other names): a
/// project big enough that a search takes a while.
fn with_copies(app: &mut TaglaneApp, copies: usize) {
    let clips = app.project.doc.clips.clone();
    let mut edits = Vec::new();
    for k in 0..copies {
        for c in &clips {
            let mut info = c.clone();
            info.name = format!("{} copy {k}", c.name);
            edits.push(Edit::InsertClip {
                index: clips.len() * (k + 1) + edits.len() % clips.len(),
                clip: info,
                ranges: Vec::new(),
            });
        }
    }
    app.queue.push(AppCommand::Edit {
        edit: Edit::Batch(edits),
        label: "copy the clips".into(),
        select: None,
    });
}

/// Steps the app until its search is done (at most about 60 s).
fn wait_search(h: &mut Harness<'static, TaglaneApp>) {
    for _ in 0..6000 {
        h.step();
        if !h.state().similar.is_searching() {
            h.run_steps(2);
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("the search did not finish");
}

/// The demo, the example selected, the tool's tab open and a search done by its button.
fn found() -> (Harness<'static, TaglaneApp>, usize) {
    let mut app = TaglaneApp::demo_for_tests();
    let tag = with_example(&mut app);
    app.bottom_tab = BottomTab::Similar;
    app.similar.top = 12;
    let mut h = crate::common::harness_with(app, [1600.0, 1000.0]);
    assert_eq!(h.state().selection, vec![(tag, STRIDE)]);
    h.get_by_label("Find similar").click();
    h.run_steps(1);
    assert!(h.state().similar.is_searching());
    wait_search(&mut h);
    (h, tag)
}

#[test]
fn find_accept_two_matches_and_undo_in_one_step() {
    let (mut h, tag) = found();
    let app = h.state();
    assert!(app.similar.message.is_none(), "{:?}", app.similar.message);
    let r = app.similar.results.as_ref().expect("results");
    assert_eq!(r.matches.len(), 12);
    assert_eq!((r.query.clip, r.query.range), (0, STRIDE));
    assert_eq!(r.query.tag.as_deref(), Some("Stride"));
    assert!(r.matches.windows(2).all(|w| w[0].score <= w[1].score));
    assert!(r.thumbs.iter().all(Option::is_some) && r.query_thumb.is_some());
    // Never the query itself.
    assert!(
        r.matches
            .iter()
            .all(|m| !(m.clip == 0 && m.start < 150 && m.stop > 120))
    );
    // The default tag is the query's.
    assert_eq!(app.similar.accept_tag, "Stride");
    // The list is drawn: a row per match with its poses.
    h.get_by_label("#1");
    h.get_by_label("#2");
    h.get_by_label("poses of the query");
    h.get_by_label("poses of match 1");
    // The ghost lanes on the query's clip: the query and the matches on it.
    let matches = r.matches.clone();
    let lanes = app.similar.extra_lanes(&app.project.doc, 0, app.prefs.dark);
    assert_eq!(lanes.len(), 2);
    assert_eq!(lanes[0].id, LANE_QUERY);
    assert_eq!(lanes[0].ranges, vec![STRIDE]);
    assert_eq!(lanes[1].id, LANE_MATCHES);
    assert_eq!(lanes[1].label, "similar to Stride [120, 150)");
    let on_0: Vec<Range> = matches
        .iter()
        .filter(|m| m.clip == 0)
        .map(|m| Range::new(m.start as u32, m.stop as u32))
        .collect();
    assert!(!on_0.is_empty(), "other strides of the same take match");
    let mut sorted = on_0.clone();
    sorted.sort_by_key(|r| r.start);
    assert_eq!(lanes[1].ranges, sorted);
    let extra = app
        .timeline
        .last_rows
        .iter()
        .filter(|r| matches!(r, Row::Extra(_)))
        .count();
    assert_eq!(extra, 2, "{:?}", app.timeline.last_rows);
    h.get_by_label_contains("similar to Stride [120, 150)");

    // Check the first two, accept them.
    let steps = h.state().project.history.len();
    h.get_by_label("#1").click();
    h.get_by_label("#2").click();
    h.run_steps(2);
    assert_eq!(
        h.state()
            .similar
            .results
            .as_ref()
            .unwrap()
            .checked_indices(),
        [0, 1]
    );
    h.get_by_label("Accept checked (2)").click();
    // The rows say "in Stride" and are no longer checked (nothing to accept twice).
    h.run_steps(2);
    assert!(h.get_all_by_label("in Stride").count() >= 2);
    // Under its own header, at the end of the row.
    let (header, note) = (
        h.get_by_label("tag").rect(),
        h.get_all_by_label("in Stride").next().unwrap().rect(),
    );
    assert!(
        (header.min.x - note.min.x).abs() < 2.0,
        "{header:?} {note:?}"
    );
    h.get_by_label("Accept checked (0)");
    h.run_steps(2);
    let app = h.state();
    assert!(
        app.similar
            .results
            .as_ref()
            .unwrap()
            .checked_indices()
            .is_empty()
    );
    assert_eq!(app.project.history.len(), steps + 1, "one undo step");
    assert_eq!(
        app.project.history.undo_label(),
        Some("accept 2 similar matches as Stride")
    );
    let stride = &app.project.doc.tags[tag];
    let mut want: std::collections::BTreeMap<u32, Vec<Range>> = Default::default();
    want.insert(0, vec![STRIDE]);
    for m in &matches[..2] {
        want.entry(m.clip as u32)
            .or_default()
            .push(Range::new(m.start as u32, m.stop as u32));
    }
    for (clip, list) in want.iter_mut() {
        // Canonical: sorted, touching ranges merged.
        list.sort_by_key(|r| r.start);
        let mut merged: Vec<Range> = Vec::new();
        for r in list.iter() {
            match merged.last_mut() {
                Some(last) if r.start <= last.stop => last.stop = last.stop.max(r.stop),
                _ => merged.push(*r),
            }
        }
        assert_eq!(stride.ranges[clip], merged, "clip {clip}");
    }
    assert_eq!(stride.ranges.len(), want.len());
    // Undo removes both in one step.
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    let stride = &h.state().project.doc.tags[tag];
    assert_eq!(stride.ranges.len(), 1);
    assert_eq!(stride.ranges[&0], vec![STRIDE]);
    // Clear forgets the matches and their lanes; the project is as it was.
    let steps = h.state().project.history.len();
    h.get_by_label("Clear").click();
    h.run_steps(2);
    let app = h.state();
    assert!(app.similar.results.is_none());
    assert!(
        app.similar
            .extra_lanes(&app.project.doc, 0, app.prefs.dark)
            .is_empty()
    );
    assert!(
        !app.timeline
            .last_rows
            .iter()
            .any(|r| matches!(r, Row::Extra(_)))
    );
    assert_eq!(app.project.history.len(), steps);
}

#[test]
fn stepping_shows_each_match_with_the_query_over_it() {
    let (mut h, _) = found();
    let matches = h.state().similar.results.as_ref().unwrap().matches.clone();
    // "]" shows the first match: its clip, the playhead at its start, looping it.
    h.key_press(Key::CloseBracket);
    h.run_steps(3);
    let app = h.state();
    let m = matches[0];
    assert_eq!(app.current_clip as usize, m.clip);
    assert_eq!(app.playback.playhead, m.start as f64);
    assert_eq!(
        app.playback.loop_range,
        Some(Range::new(m.start as u32, m.stop as u32))
    );
    assert_eq!(app.similar.results.as_ref().unwrap().current, Some(0));
    // The query's pose over the match's, and both side by side in the tab.
    let live = app
        .similar
        .live
        .as_ref()
        .expect("the poses at the playhead");
    assert_eq!(live.index, 0);
    assert!(
        (live.query_frame - 120.0).abs() < 1e-6,
        "{}",
        live.query_frame
    );
    h.get_by_label_contains("aligned at the root on match 1");
    h.get_by_label("the query's pose and the match's, side by side");
    // Next, previous (wrapping), and a click on a match's lane range.
    h.key_press(Key::CloseBracket);
    h.run_steps(2);
    assert_eq!(h.state().similar.results.as_ref().unwrap().current, Some(1));
    h.key_press(Key::OpenBracket);
    h.key_press(Key::OpenBracket);
    h.run_steps(2);
    assert_eq!(
        h.state().similar.results.as_ref().unwrap().current,
        Some(matches.len() - 1)
    );
    let third = matches[2];
    h.state_mut()
        .queue
        .push(AppCommand::SelectClip(third.clip as u32));
    h.run_steps(1);
    h.state_mut().queue.push(AppCommand::ExtraRangeClicked {
        lane: LANE_MATCHES.into(),
        range: Range::new(third.start as u32, third.stop as u32),
    });
    h.run_steps(2);
    assert_eq!(h.state().similar.results.as_ref().unwrap().current, Some(2));
    assert_eq!(h.state().playback.playhead, third.start as f64);
    // Outside any match: no overlay.
    h.state_mut().queue.push(AppCommand::SetLoopRange(None));
    let outside = (0..h.state().frames())
        .find(|&f| {
            !matches
                .iter()
                .any(|m| m.clip == third.clip && (m.start..m.stop).contains(&(f as usize)))
        })
        .expect("a frame outside the matches");
    h.state_mut()
        .queue
        .push(AppCommand::SetPlayhead(f64::from(outside)));
    h.run_steps(2);
    assert!(h.state().similar.live.is_none());
}

#[test]
fn a_search_can_be_cancelled_and_needs_a_range() {
    let mut h = crate::common::demo_harness([1600.0, 1000.0]);
    // Nothing selected: Ctrl+F opens the tab and says what to do.
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::F);
    h.run_steps(2);
    let app = h.state();
    assert_eq!(app.bottom_tab, BottomTab::Similar);
    assert!(!app.similar.is_searching());
    assert!(
        app.similar
            .message
            .as_deref()
            .is_some_and(|m| m.contains("select a range")),
        "{:?}",
        app.similar.message
    );
    // Select the example in a project 41 times the demo (so the search is still running a few
    // frames later), find, cancel from the progress bar.
    with_copies(h.state_mut(), 40);
    with_example(h.state_mut());
    h.run_steps(2);
    h.get_by_label("Find similar").click();
    h.run_steps(1);
    assert!(h.state().similar.is_searching());
    // The next frame draws the progress bar.
    h.step();
    h.get_by_label("Cancel").click_accesskit();
    wait_search(&mut h);
    let app = h.state();
    assert_eq!(app.similar.message.as_deref(), Some("search cancelled"));
    // With another tab in front, the status bar shows a running search; a click brings it back.
    h.get_by_label("Find similar").click();
    h.run_steps(1);
    assert!(h.state().similar.is_searching());
    h.get_by_label("Query").click();
    h.run_steps(2);
    assert_eq!(h.state().bottom_tab, BottomTab::Query);
    h.get_by_label_contains("Find similar: ").click();
    h.run_steps(2);
    assert_eq!(h.state().bottom_tab, BottomTab::Similar);
    h.get_by_label("Cancel").click_accesskit();
    wait_search(&mut h);
    let app = h.state();
    assert!(app.similar.results.is_none());
    // Cancelling changed nothing; a search started and cancelled in one frame neither.
    let steps = app.project.history.len();
    h.state_mut()
        .queue
        .push(AppCommand::Similar(SimilarCommand::Find));
    h.state_mut()
        .queue
        .push(AppCommand::Similar(SimilarCommand::Cancel));
    wait_search(&mut h);
    assert!(h.state().similar.results.is_none());
    assert_eq!(h.state().project.history.len(), steps);
    // A search that ends while another tab is in front says so in the status bar.
    h.get_by_label("Find similar").click();
    h.run_steps(1);
    h.get_by_label("Query").click();
    wait_search(&mut h);
    let app = h.state();
    assert_eq!(app.bottom_tab, BottomTab::Query);
    let status = app.status.as_ref().map(|s| s.1.clone()).unwrap_or_default();
    assert!(
        status.starts_with("find similar: ") && status.contains("match(es) for"),
        "{status}"
    );
    assert!(app.similar.results.is_some());
}

/// The matches view on the demo: the list with thumbnails, two checked, the second match shown
/// with the query over it in the viewport, the ghost lanes.
#[test]
fn screenshot_of_the_matches_view() {
    let mut h = searched([1600.0, 1000.0], true);
    h.get_by_label("#1").click();
    h.get_by_label("#2").click();
    h.run_steps(1);
    // The best match on another take than the query's, a moment inside it (mid-stride).
    let matches = h.state().similar.results.as_ref().unwrap().matches.clone();
    let shown = matches.iter().position(|m| m.clip != 0).unwrap();
    h.state_mut()
        .queue
        .push(AppCommand::Similar(SimilarCommand::Select(shown)));
    h.run_steps(1);
    let m = matches[shown];
    h.state_mut()
        .queue
        .push(AppCommand::SetPlayhead(((m.start + m.stop) / 2) as f64));
    h.run_steps(4);
    assert!(h.state().similar.live.is_some());
    // The pointer off the list, on the side panel's empty part.
    h.hover_at(egui::pos2(1500.0, 960.0));
    h.run_steps(2);
    h.snapshot("similar");
    // The matches fit the bottom panel at its default height: it is as high as with the Query
    // tab in front (a panel grows to its content, and then keeps that height).
    let tab_top = |h: &Harness<'_, TaglaneApp>| h.get_by_label("Auto-tag").rect().min.y;
    let mut query = Harness::builder()
        .with_size([1600.0, 1000.0])
        .build_ui_state(
            |ui, app: &mut TaglaneApp| app.ui(ui),
            TaglaneApp::demo_for_tests(),
        );
    query.run_steps(2);
    assert_eq!(query.state().bottom_tab, BottomTab::Query);
    assert_eq!(tab_top(&h), tab_top(&query));
}

#[test]
fn accept_all_under_the_threshold_in_one_step() {
    let (mut h, tag) = found();
    let matches = h.state().similar.results.as_ref().unwrap().matches.clone();
    // A threshold between the 5th and the 6th score (ties stay on one side).
    let threshold = (matches[4].score + matches[5].score) / 2.0;
    let under: Vec<_> = matches.iter().filter(|m| m.score <= threshold).collect();
    assert!(under.len() >= 5, "{threshold} {matches:?}");
    h.state_mut().similar.threshold = threshold;
    h.run_steps(1);
    // "Check the N under it" checks exactly those.
    h.get_by_label(&format!("Check the {} under it", under.len()))
        .click();
    h.run_steps(2);
    assert_eq!(
        h.state()
            .similar
            .results
            .as_ref()
            .unwrap()
            .checked_indices(),
        (0..under.len()).collect::<Vec<_>>()
    );
    // Into a new tag, by its name.
    h.state_mut().similar.accept_tag = "Gait".into();
    h.run_steps(1);
    let steps = h.state().project.history.len();
    let tags = h.state().project.doc.tags.len();
    h.get_by_label(&format!("Accept all <= {threshold:.2} ({})", under.len()))
        .click();
    h.run_steps(3);
    let app = h.state();
    assert_eq!(app.project.history.len(), steps + 1, "one undo step");
    assert_eq!(app.project.doc.tags.len(), tags + 1);
    let gait = app.project.doc.tags.last().unwrap();
    assert_eq!(gait.name, "Gait");
    let total: u32 = gait
        .ranges
        .values()
        .flatten()
        .map(|r| r.stop - r.start)
        .sum();
    let mut frames = std::collections::BTreeSet::new();
    for m in &under {
        for f in m.start..m.stop {
            frames.insert((m.clip, f));
        }
        assert!(
            gait.ranges[&(m.clip as u32)]
                .iter()
                .any(|r| r.start as usize <= m.start && m.stop <= r.stop as usize),
            "{m:?} not in {:?}",
            gait.ranges
        );
    }
    assert_eq!(total as usize, frames.len(), "exactly the matches' frames");
    // Accepted again: nothing to add, no undo step, and the panel says so.
    h.get_by_label(&format!("Accept all <= {threshold:.2} ({})", under.len()))
        .click();
    h.run_steps(3);
    assert_eq!(h.state().project.history.len(), steps + 1);
    h.get_by_label_contains("nothing to accept: Gait holds these matches already");
    let app = h.state();
    // The example's tag is untouched; undo removes the new tag and its ranges.
    assert_eq!(app.project.doc.tags[tag].ranges[&0], vec![STRIDE]);
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    assert_eq!(h.state().project.doc.tags.len(), tags);
    assert!(h.state().project.doc.tag_index("Gait").is_none());
    // A threshold under every score: nothing to accept, the button is disabled, and the panel
    // says so and offers the threshold that takes in the best match.
    h.state_mut().similar.threshold = 0.0;
    h.run_steps(1);
    let none = h.get_by_label("Accept all <= 0.00 (0)");
    assert!(none.accesskit_node().is_disabled());
    let best = matches
        .iter()
        .map(|m| m.score)
        .fold(f32::INFINITY, f32::min);
    let offered = ((best * 100.0).ceil() / 100.0).max(best);
    let hint = format!("No match scores at most 0.00: the best scores {best:.3}.");
    h.get_by_label(&hint);
    h.get_by_label(&format!("Raise the threshold to {offered:.2}"))
        .click();
    h.run_steps(2);
    assert_eq!(h.state().similar.threshold, offered);
    let under = matches.iter().filter(|m| m.score <= offered).count();
    assert!(under >= 1);
    h.get_by_label(&format!("Accept all <= {offered:.2} ({under})"));
    assert!(h.query_by_label(&hint).is_none());
    // Every score past the slider's usual top (1.4, unrelated motion): the raised threshold
    // stays (the slider put it back to 1.40 on the next frame).
    for m in &mut h.state_mut().similar.results.as_mut().unwrap().matches {
        m.score += 1.5;
    }
    h.state_mut().similar.threshold = 0.0;
    h.run_steps(1);
    let best = best + 1.5;
    let offered = ((best * 100.0).ceil() / 100.0).max(best);
    assert!(offered > 1.4, "{offered}");
    h.get_by_label(&format!("Raise the threshold to {offered:.2}"))
        .click();
    h.run_steps(3);
    assert_eq!(h.state().similar.threshold, offered);
    h.get_by_label_contains(&format!("Accept all <= {offered:.2} ("));
}

#[test]
fn a_search_over_clips_changed_meanwhile_runs_again_or_is_dropped() {
    let mut app = TaglaneApp::demo_for_tests();
    let tag = with_example(&mut app);
    app.bottom_tab = BottomTab::Similar;
    app.similar.top = 12;
    let mut h = crate::common::harness_with(app, [1600.0, 1000.0]);
    // A unit changes in the same frame the search starts: its results are of the old clips.
    h.state_mut()
        .queue
        .push(AppCommand::Similar(SimilarCommand::Find));
    h.state_mut().queue.push(AppCommand::Edit {
        edit: Edit::SetClipUnit {
            clip: 3,
            unit_cm: Some(2.54),
        },
        label: "unit".into(),
        select: Some(vec![(tag, STRIDE)]),
    });
    h.step();
    assert!(h.state().similar.is_searching());
    // The first result is never shown: the search runs again over the clips as they are.
    for _ in 0..6000 {
        h.step();
        if h.state()
            .similar
            .message
            .as_deref()
            .is_some_and(|m| m.contains("searching again"))
        {
            break;
        }
        assert!(h.state().similar.results.is_none(), "stale results shown");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(h.state().similar.is_searching());
    wait_search(&mut h);
    let app = h.state();
    let r = app
        .similar
        .results
        .as_ref()
        .expect("results of the second search");
    assert!(!app.similar.stale);
    assert_eq!(r.matches.len(), 12);
    assert_eq!(r.query.range, STRIDE);
    // The query's clip shortened under it during a search: dropped, with why.
    h.state_mut()
        .queue
        .push(AppCommand::Similar(SimilarCommand::Clear));
    h.state_mut()
        .queue
        .push(AppCommand::Similar(SimilarCommand::Find));
    h.state_mut().queue.push(AppCommand::Edit {
        edit: Edit::SetClipFrames {
            clip: 0,
            frames: 100,
        },
        label: "shorter".into(),
        select: Some(Vec::new()),
    });
    wait_search(&mut h);
    let app = h.state();
    assert!(app.similar.results.is_none());
    let m = app.similar.message.as_deref().unwrap_or_default();
    assert!(m.contains("no longer fits") && m.contains("dropped"), "{m}");
    h.get_by_label_contains("no longer fits");
}

#[test]
fn a_query_clip_that_cannot_be_read_is_a_clear_error() {
    let mut app = TaglaneApp::demo_for_tests();
    app.bottom_tab = BottomTab::Similar;
    // The query's clip re-linked to a file the project does not have.
    app.queue.push(AppCommand::Edit {
        edit: Edit::SetClipSource {
            clip: 0,
            source: Some("missing_take.bvh".into()),
        },
        label: "re-link".into(),
        select: None,
    });
    with_example(&mut app);
    let mut h = crate::common::harness_with(app, [1600.0, 1000.0]);
    assert!(!h.state().selection.is_empty());
    h.get_by_label("Find similar").click();
    h.run_steps(1);
    wait_search(&mut h);
    let app = h.state();
    assert!(app.similar.results.is_none());
    let m = app.similar.message.as_deref().unwrap_or_default();
    assert!(
        m.starts_with("cannot search: the query's clip has no motion features")
            && m.contains("missing_take.bvh"),
        "{m}"
    );
    // Said in the tab; nothing was edited by the search.
    h.get_by_label_contains("cannot search");
    assert_eq!(app.project.history.undo_label(), Some("draw the example"));
}

#[test]
fn a_query_over_the_only_clip_finds_nothing_and_says_so() {
    let mut app = TaglaneApp::demo_for_tests();
    app.bottom_tab = BottomTab::Similar;
    // Only walk_male_01 left; the query is the whole clip, so every window overlaps it.
    let n = app.project.doc.clips.len();
    let removals = (1..n)
        .rev()
        .map(|index| Edit::RemoveClip { index })
        .collect();
    app.queue.push(AppCommand::Edit {
        edit: Edit::Batch(removals),
        label: "one clip".into(),
        select: None,
    });
    let mut h = crate::common::harness_with(app, [1600.0, 1000.0]);
    let frames = h.state().project.doc.clips[0].frames;
    let index = h.state().project.doc.tags.len();
    let whole = Range::new(0, frames);
    let mut tag = Tag::new("Whole");
    tag.ranges.insert(0, vec![whole]);
    h.state_mut().queue.push(AppCommand::Edit {
        edit: Edit::InsertTag { index, tag },
        label: "whole".into(),
        select: Some(vec![(index, whole)]),
    });
    h.run_steps(2);
    let steps = h.state().project.history.len();
    h.get_by_label("Find similar").click();
    h.run_steps(1);
    wait_search(&mut h);
    let app = h.state();
    let r = app.similar.results.as_ref().expect("empty results");
    assert!(r.matches.is_empty());
    assert_eq!(r.query.range, whole);
    let m = app.similar.message.as_deref().unwrap_or_default();
    assert!(m.starts_with("no match:"), "{m}");
    h.get_by_label("No match.");
    h.get_by_label_contains("no match: every window");
    // Nothing to step through or accept.
    assert!(
        h.get_by_label("Accept checked (0)")
            .accesskit_node()
            .is_disabled()
    );
    h.key_press(Key::CloseBracket);
    h.run_steps(2);
    let app = h.state();
    assert!(app.similar.results.as_ref().unwrap().current.is_none());
    assert_eq!(app.project.history.len(), steps);
}

/// Opening another project drops the matches of the one searched (they name its clips), and a
/// search still running for it is cancelled, never applied to the new one.
#[test]
fn opening_another_project_drops_the_matches_and_a_running_search() {
    use taglane::ui::command::Guarded;
    let (mut h, _) = found();
    assert!(h.state().similar.results.is_some());
    h.state_mut()
        .queue
        .push(AppCommand::GuardedDiscard(Guarded::OpenDemo));
    h.run_steps(2);
    assert!(h.state().similar.results.is_none());
    assert!(!h.state().project.history.is_dirty());
    // A search started, then another project before it ends: cancelled and dropped.
    let tag = with_example(h.state_mut());
    h.run_steps(1);
    assert_eq!(h.state().selection, vec![(tag, STRIDE)]);
    h.get_by_label("Find similar").click();
    h.run_steps(1);
    assert!(h.state().similar.is_searching());
    h.state_mut()
        .queue
        .push(AppCommand::GuardedDiscard(Guarded::OpenDemo));
    h.run_steps(1);
    assert!(!h.state().similar.is_searching());
    for _ in 0..20 {
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(h.state().similar.results.is_none());
    assert!(!h.state().project.history.is_dirty());
}

/// A library just imported has no tags, so no lane to pick: mark in (I) needs none, and mark in
/// to the playhead is the query of a search.
#[test]
fn a_search_on_an_untagged_clip_takes_mark_in_to_the_playhead() {
    let mut app = TaglaneApp::demo_for_tests();
    let tags = app.project.doc.tags.len();
    app.queue.push(AppCommand::Edit {
        edit: Edit::Batch(
            (0..tags)
                .rev()
                .map(|index| Edit::RemoveTag { index })
                .collect(),
        ),
        label: "no tags".into(),
        select: None,
    });
    let mut h = crate::common::harness_with(app, [1600.0, 1000.0]);
    h.run_steps(2);
    assert!(h.state().project.doc.tags.is_empty());
    assert_eq!(h.state().active_tag, None);
    h.state_mut()
        .queue
        .push(AppCommand::SetPlayhead(STRIDE.start as f64));
    h.run_steps(1);
    h.key_press(Key::I);
    h.run_steps(1);
    assert_eq!(h.state().playback.mark_in, Some(STRIDE.start));
    h.state_mut()
        .queue
        .push(AppCommand::SetPlayhead(f64::from(STRIDE.stop - 1)));
    h.run_steps(1);
    // O without a lane marks nothing and says what to do; the mark stays.
    h.key_press(Key::O);
    h.run_steps(1);
    assert_eq!(h.state().playback.mark_in, Some(STRIDE.start));
    assert!(h.state().project.doc.tags.is_empty());
    // Mark in's instruction in the status bar (as I leaves it) is gone once the search starts.
    h.key_press(Key::I);
    h.run_steps(1);
    assert_eq!(h.state().playback.mark_in, Some(STRIDE.stop - 1));
    h.state_mut()
        .queue
        .push(AppCommand::SetPlayhead(f64::from(STRIDE.start)));
    h.run_steps(1);
    let status = |h: &Harness<'static, TaglaneApp>| {
        h.state()
            .status
            .as_ref()
            .map(|s| s.1.clone())
            .unwrap_or_default()
    };
    assert!(status(&h).starts_with("mark in at frame"), "{}", status(&h));
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::F);
    h.run_steps(1);
    assert!(
        h.state().similar.is_searching(),
        "{:?}",
        h.state().similar.message
    );
    assert!(
        !status(&h).starts_with("mark in at frame"),
        "{}",
        status(&h)
    );
    wait_search(&mut h);
    let r = h.state().similar.results.as_ref().expect("results");
    assert_eq!(r.query.range, STRIDE);
    assert!(!r.matches.is_empty());
}

/// The demo in a `size` window (rendered with wgpu, for a snapshot, where `wgpu`), the example
/// selected, the tool's tab open and a search for 20 matches done.
fn searched(size: [f32; 2], wgpu: bool) -> Harness<'static, TaglaneApp> {
    let mut app = TaglaneApp::demo_for_tests();
    with_example(&mut app);
    app.bottom_tab = BottomTab::Similar;
    app.similar.top = 20;
    let builder = Harness::builder().with_size(size);
    let builder = if wgpu {
        builder
            .with_options(SnapshotOptions::default().max_failed_pixels(400))
            .wgpu()
    } else {
        builder
    };
    let mut h = builder.build_ui_state(|ui, app: &mut TaglaneApp| app.ui(ui), app);
    h.run_steps(2);
    h.state_mut()
        .queue
        .push(AppCommand::Similar(SimilarCommand::Find));
    wait_search(&mut h);
    h
}

/// In a 1024 x 768 window the list is narrower than its columns: it scrolls sideways with its
/// headers, so every column can be brought into view, under its header and inside the panel.
#[test]
fn narrow_window_scrolls_the_columns_with_their_headers() {
    let mut h = searched([1024.0, 768.0], false);
    // The "clip" header and the first row's clip (its name is also in the clips list: the one
    // right of the "#" header is the row's).
    let rects = |h: &Harness<'static, TaglaneApp>| {
        let hash = h.get_by_label("#").rect();
        let header = h.get_by_label("clip").rect();
        let row = h
            .get_all_by_label("walk_male_01")
            .map(|n| n.rect())
            .find(|r| r.min.x > hash.min.x)
            .expect("the first match's clip");
        (hash, header, row)
    };
    let panel_right = h.get_by_label("Frame").rect().min.x;
    let (hash, header, row) = rects(&h);
    assert!(
        header.max.x > panel_right,
        "the clip column fits ({header:?}, the panel ends at {panel_right}): not a narrow list"
    );
    assert!((header.min.x - row.min.x).abs() < 2.0, "{header:?} {row:?}");
    // The wheel sideways over the list.
    h.event(egui::Event::PointerMoved(egui::pos2(
        hash.min.x + 60.0,
        row.center().y,
    )));
    h.step();
    for _ in 0..4 {
        h.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: egui::vec2(-120.0, 0.0),
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Wheel,
            modifiers: egui::Modifiers::NONE,
        });
        h.run_steps(5);
    }
    h.run_steps(20);
    let (hash_after, header_after, row_after) = rects(&h);
    let moved = header.min.x - header_after.min.x;
    assert!(moved > 50.0, "the columns moved {moved} points");
    assert!(
        (header_after.min.x - row_after.min.x).abs() < 2.0,
        "{header_after:?} {row_after:?}"
    );
    assert!(
        (hash.min.x - hash_after.min.x - moved).abs() < 2.0,
        "the headers moved together"
    );
    // The clip column is in the panel now, and the list did not scroll up or down.
    assert!(
        header_after.max.x <= panel_right,
        "{header_after:?} {panel_right}"
    );
    assert!((row.min.y - row_after.min.y).abs() < 1.0);
}
