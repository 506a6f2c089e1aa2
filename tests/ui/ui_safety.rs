//! Safety of the user's work, driven through the real app (egui_kittest): fresh query results
//! after clip edits, "Don't save" that never drops changes it did not replace, recovery that names
//! its project and never replaces the file the user opened, and file dialogs that never do nothing.
#![cfg(feature = "ui")]

use crate::common::temp_dir;
use std::path::Path;

use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use taglane::core::doc::Edit;
use taglane::core::tags::{Engine, Range};
use taglane::ui::TaglaneApp;
use taglane::ui::app::{Dialog, Prefs};
use taglane::ui::command::{AppCommand, Guarded};
use taglane::ui::file_dialog::{DialogBackend, NativeAnswer, PathRequest};
use taglane::ui::project::{DEMO_CLIP_FILES, Project};
use taglane::ui::recovery::{Origin, Recovery};

fn harness_with(app: TaglaneApp) -> Harness<'static, TaglaneApp> {
    crate::common::harness_with(app, [1600.0, 1000.0])
}

fn harness() -> Harness<'static, TaglaneApp> {
    harness_with(TaglaneApp::demo_for_tests())
}

/// One range edit on clip 0, through the app's command path.
fn edit(h: &mut Harness<'static, TaglaneApp>) {
    h.state_mut().queue.push(AppCommand::Edit {
        edit: Edit::SetRanges {
            tag: 0,
            clip: 0,
            ranges: vec![Range::new(2, 9)],
        },
        label: "test edit".into(),
        select: None,
    });
    h.run_steps(2);
    assert!(h.state().project.history.is_dirty());
}

fn status(h: &Harness<'static, TaglaneApp>) -> String {
    h.state().status.clone().map(|s| s.1).unwrap_or_default()
}

/// The query panel's cached complement stays equal to a fresh evaluation across an import, its
/// undo and redo (an imported clip has no ranges, so no tag version changes).
#[test]
fn query_results_follow_imports_and_undo() {
    let dir = temp_dir("stale");
    let (name, text) = DEMO_CLIP_FILES[1];
    let bvh = dir.join(name);
    std::fs::write(&bvh, text).unwrap();
    let mut h = harness();
    h.state_mut().query.text = "!Walking".into();
    h.run_steps(3);
    let check = |h: &Harness<'static, TaglaneApp>, step: &str| {
        let app = h.state();
        let ev = app.query.eval.as_ref().expect("evaluated");
        assert!(ev.agree(), "{step}: the engines disagree");
        let q = app.project.doc.parse_query("!Walking").unwrap();
        let (fresh, _) =
            taglane::core::tags::query::evaluate(&app.project.doc, &q, Engine::Ranges).unwrap();
        assert_eq!(ev.auto, fresh, "{step}: stale result");
        assert_eq!(ev.ranges, fresh, "{step}");
    };
    check(&h, "start");
    let clips = h.state().project.doc.clips.len();
    h.state_mut()
        .queue
        .push(AppCommand::ImportAnimation(Some(vec![bvh])));
    h.run_steps(1);
    crate::common::wait_import(&mut h);
    assert_eq!(h.state().project.doc.clips.len(), clips + 1);
    check(&h, "after import");
    let imported = h
        .state()
        .query
        .eval
        .as_ref()
        .unwrap()
        .auto
        .clip_ranges(clips as u32)
        .to_vec();
    assert!(!imported.is_empty(), "the new clip is in the complement");
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(3);
    assert_eq!(h.state().project.doc.clips.len(), clips);
    check(&h, "after undo");
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    h.run_steps(3);
    check(&h, "after redo");
    let _ = std::fs::remove_dir_all(&dir);
}

/// "Don't save", then the Open dialog is cancelled: the project and its changes stay, still dirty.
#[test]
fn dont_save_then_open_cancelled_keeps_the_changes() {
    let mut h = harness();
    edit(&mut h);
    h.key_press_modifiers(Modifiers::COMMAND, Key::O);
    h.run_steps(2);
    h.get_by_label("Unsaved changes");
    h.get_by_label("Don't save").click();
    h.run_steps(3);
    assert!(h.state().files.browser.is_some(), "the file browser asks");
    h.get_by_label("Cancel").click();
    h.run_steps(3);
    let app = h.state();
    assert!(app.files.browser.is_none());
    assert!(app.project.is_demo, "the demo is still open");
    assert!(app.project.history.is_dirty(), "the changes still count");
    assert_eq!(app.project.doc.tags[0].ranges[&0], vec![Range::new(2, 9)]);
    // So quitting still asks.
    h.state_mut().queue.push(AppCommand::Guarded(Guarded::Quit));
    h.run_steps(2);
    assert!(matches!(
        h.state().dialog,
        Some(Dialog::Unsaved(Guarded::Quit))
    ));
}

/// "Don't save", then the chosen file fails to load: nothing is replaced or marked saved.
#[test]
fn dont_save_then_open_failed_keeps_the_changes() {
    let dir = temp_dir("openfail");
    let bad = dir.join("bad.taglane.json");
    std::fs::write(
        &bad,
        "{\"format\": \"taglane.tags\", \"version\": 1, \"clips\": [",
    )
    .unwrap();
    let mut h = harness();
    edit(&mut h);
    h.state_mut()
        .queue
        .push(AppCommand::Guarded(Guarded::Open(Some(bad.clone()))));
    h.run_steps(2);
    assert!(
        matches!(h.state().dialog, Some(Dialog::Unsaved(_))),
        "{:?} {}",
        h.state().dialog,
        status(&h)
    );
    h.run_steps(1);
    h.get_by_label("Don't save").click();
    h.run_steps(3);
    let app = h.state();
    assert!(status(&h).contains("bad.taglane.json"), "{}", status(&h));
    assert!(app.project.is_demo);
    assert!(app.project.history.is_dirty());
    assert_eq!(app.project.doc.tags[0].ranges[&0], vec![Range::new(2, 9)]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An autosave of the demo does not replace the project named on the command line: it is not
/// offered there, it is kept, and it is offered (naming the demo, its time and edit count) when
/// the demo is opened. The named project's own autosave is offered for it and recovers into it.
#[test]
fn recovery_names_its_project_and_never_replaces_the_named_file() {
    let dir = temp_dir("recover");
    let recovery_dir = dir.join("recovery");
    let recovery = Recovery::in_dir(&recovery_dir);
    // Edit the demo; the session dies after an autosave.
    let mut demo = Project::demo();
    demo.apply(
        Edit::SetRanges {
            tag: 0,
            clip: 0,
            ranges: vec![Range::new(1, 4)],
        },
        "demo edit",
    )
    .unwrap();
    recovery.save(&demo).unwrap();
    // A real project on disk.
    let real = dir.join("real.taglane.json");
    let mut project = Project::demo();
    project.save_to(&real).unwrap();
    let (opened, _) = Project::load(&real).unwrap();
    let app = TaglaneApp::new(opened, Prefs::default(), Recovery::in_dir(&recovery_dir));
    let mut h = harness_with(app);
    assert!(
        h.state().dialog.is_none(),
        "the demo's autosave is not offered here"
    );
    assert!(status(&h).contains("Recover autosave"), "{}", status(&h));
    assert_eq!(h.state().project.path.as_deref(), Some(real.as_path()));
    // Opening the demo offers its autosave, named.
    h.state_mut()
        .queue
        .push(AppCommand::Guarded(Guarded::OpenDemo));
    h.run_steps(3);
    match &h.state().dialog {
        Some(Dialog::Recover { info }) => {
            assert_eq!(info.origin, Origin::Demo);
            assert_eq!(info.unsaved_edits, 1);
        }
        other => panic!("expected the recovery prompt, got {other:?}"),
    }
    h.get_by_label_contains("the demo project, autosaved");
    h.get_by_label("Recover").click();
    h.run_steps(3);
    let app = h.state();
    assert!(app.project.is_demo);
    assert!(app.project.history.is_dirty());
    assert_eq!(app.project.doc.tags[0].ranges[&0], vec![Range::new(1, 4)]);

    // The real project's own autosave: offered when it is opened, recovered into it.
    let mut edited = Project::load(&real).unwrap().0;
    edited
        .apply(
            Edit::SetRanges {
                tag: 1,
                clip: 2,
                ranges: vec![Range::new(5, 6)],
            },
            "real edit",
        )
        .unwrap();
    recovery.save(&edited).unwrap();
    let (opened, _) = Project::load(&real).unwrap();
    let mut h = harness_with(TaglaneApp::new(
        opened,
        Prefs::default(),
        Recovery::in_dir(&recovery_dir),
    ));
    let real_display = real.canonicalize().unwrap().display().to_string();
    h.get_by_label_contains(&real_display);
    h.key_press(Key::Enter);
    h.run_steps(3);
    let app = h.state();
    assert_eq!(app.project.path.as_deref(), Some(real.as_path()));
    assert_eq!(app.project.doc.tags[1].ranges[&2], vec![Range::new(5, 6)]);
    assert!(app.project.history.is_dirty());
    let _ = std::fs::remove_dir_all(&dir);
}

fn unavailable(_: &PathRequest, _: Option<&Path>) -> NativeAnswer {
    NativeAnswer::Unavailable
}

/// Shows folder `dir` in the app's own file browser, which must be open.
fn browse_to(h: &mut Harness<'static, TaglaneApp>, dir: &Path) {
    h.state_mut()
        .files
        .browser
        .as_mut()
        .expect("the in-app browser is open")
        .go_to(dir.to_path_buf());
}

/// The demo set to use the system's file dialogs, which cannot open (as on a bare X server).
fn demo_without_system_dialogs() -> TaglaneApp {
    let prefs = Prefs {
        dialogs: DialogBackend::System,
        ..Prefs::default()
    };
    let mut app = TaglaneApp::new(Project::demo(), prefs, Recovery::disabled());
    app.files.native_dialog = unavailable;
    app
}

/// Ctrl+S on the embedded demo asks where to save; the system dialog cannot open (as on a bare X
/// server), so the app says so and its own browser saves the file.
#[test]
fn fallback_file_browser_saves_the_demo() {
    let dir = temp_dir("fallback");
    let app = demo_without_system_dialogs();
    let mut h = harness_with(app);
    edit(&mut h);
    h.key_press_modifiers(Modifiers::COMMAND, Key::S);
    h.run_steps(3);
    assert!(status(&h).contains("could not open"), "{}", status(&h));
    assert!(h.state().files.native_unavailable);
    browse_to(&mut h, &dir);
    h.run_steps(2);
    h.get_by_label("File name").click();
    h.run_steps(1);
    h.state_mut().files.browser.as_mut().unwrap().name.clear();
    h.run_steps(1);
    h.get_by_label("File name").type_text("session one");
    h.run_steps(1);
    h.get_by_label("Save").click();
    h.run_steps(3);
    let saved = dir.join("session one.json");
    assert!(saved.is_file(), "{}", status(&h));
    let app = h.state();
    assert!(app.files.browser.is_none());
    assert_eq!(app.project.path.as_deref(), Some(saved.as_path()));
    assert!(!app.project.is_demo);
    assert!(!app.project.history.is_dirty());
    // Saving over an existing file asks first; "Keep it" goes back to the browser.
    h.state_mut().queue.push(AppCommand::SaveAs(None));
    h.run_steps(2);
    h.state_mut()
        .files
        .browser
        .as_mut()
        .unwrap()
        .go_to(dir.clone());
    h.state_mut().files.browser.as_mut().unwrap().name = "session one.json".into();
    h.run_steps(1);
    h.get_by_label("Save").click();
    h.run_steps(2);
    h.get_by_label_contains("already exists. Replace it?");
    h.get_by_label("Keep it");
    h.key_press(Key::Escape);
    h.run_steps(2);
    assert!(
        h.state()
            .files
            .browser
            .as_ref()
            .unwrap()
            .confirm_replace
            .is_none(),
        "Esc keeps the file and goes back to the browser"
    );
    h.key_press(Key::Escape);
    h.run_steps(2);
    assert!(h.state().files.browser.is_none(), "Esc cancels");
    let _ = std::fs::remove_dir_all(&dir);
}

/// In the app's own browser a double click on a file opens it, as in a system dialog.
#[test]
fn fallback_file_browser_opens_a_double_clicked_file() {
    let dir = temp_dir("fallback_double");
    std::fs::write(
        dir.join("wave.csv"),
        "tag,clip,start,stop\nWave,walk_male_01,10,20\n",
    )
    .unwrap();
    std::fs::write(dir.join("other.csv"), "not read").unwrap();
    let app = demo_without_system_dialogs();
    // Steps of 1/60 s, so that two clicks can make a double click (egui: within 0.3 s).
    let mut h = Harness::builder()
        .with_size([1600.0, 1000.0])
        .with_step_dt(1.0 / 60.0)
        .build_ui_state(|ui, app: &mut TaglaneApp| app.ui(ui), app);
    h.state_mut().queue.push(AppCommand::ImportTags(None));
    h.run_steps(3);
    browse_to(&mut h, &dir);
    // (egui counts clicks from time 0: let some time pass first.)
    h.run_steps(30);
    // One click selects and keeps the browser open.
    h.get_by_label("other.csv").click();
    h.run_steps(30);
    assert!(h.state().files.browser.is_some());
    // Two clicks in quick succession open the file.
    h.get_by_label("wave.csv").click();
    h.step();
    h.get_by_label("wave.csv").click();
    h.run_steps(3);
    assert!(h.state().files.browser.is_none(), "{}", status(&h));
    let wave = crate::common::tag_index(h.state(), "Wave");
    assert_eq!(
        h.state().project.doc.tags[wave].ranges[&0],
        vec![Range::new(10, 20)]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every dialog answers Enter and Esc.
#[test]
fn enter_confirms_and_esc_cancels_dialogs() {
    let mut h = harness();
    let tags = h.state().project.doc.tags.len();
    h.state_mut().queue.push(AppCommand::AskDeleteTag(0));
    h.run_steps(2);
    h.key_press(Key::Escape);
    h.run_steps(2);
    assert!(h.state().dialog.is_none());
    assert_eq!(h.state().project.doc.tags.len(), tags);
    h.state_mut().queue.push(AppCommand::AskDeleteTag(0));
    h.run_steps(2);
    h.key_press(Key::Enter);
    h.run_steps(2);
    assert_eq!(h.state().project.doc.tags.len(), tags - 1);
    // Rename: a duplicate name is explained inline and Enter does nothing; Esc cancels.
    let other = h.state().project.doc.tags[1].name.clone();
    h.state_mut().queue.push(AppCommand::StartRename(0));
    h.run_steps(2);
    h.state_mut().dialog = Some(Dialog::Rename {
        index: 0,
        name: other.clone(),
        new: false,
    });
    h.run_steps(2);
    h.get_by_label_contains("already exists");
    h.key_press(Key::Enter);
    h.run_steps(2);
    assert!(h.state().dialog.is_some(), "a bad name is not applied");
    h.key_press(Key::Escape);
    h.run_steps(2);
    assert!(h.state().dialog.is_none());
    assert_ne!(h.state().project.doc.tags[0].name, other);
}

/// A sidecar project of the first two demo takes (in `takes/`) with `tags` and no ranges: its
/// folder and project file.
fn sidecar_library(
    name: &str,
    tags: Vec<taglane::core::tags::Tag>,
) -> (std::path::PathBuf, std::path::PathBuf) {
    use std::sync::atomic::AtomicBool;
    use taglane::core::library::{ImportSettings, plan_import, save_sidecar_project, scan_library};
    use taglane::core::tags::TagDocument;
    let dir = temp_dir(name);
    let takes = dir.join("takes");
    std::fs::create_dir_all(&takes).unwrap();
    for (file, text) in DEMO_CLIP_FILES.iter().take(2) {
        std::fs::write(takes.join(file), text).unwrap();
    }
    let scan = scan_library(
        std::slice::from_ref(&takes),
        &ImportSettings::default(),
        &|_| {},
        &AtomicBool::new(false),
    )
    .unwrap();
    let mut doc = TagDocument::default();
    plan_import(&doc, Some(&dir), &scan)
        .edit
        .apply(&mut doc)
        .unwrap();
    doc.tags = tags;
    let project_file = dir.join("lib.taglane.json");
    save_sidecar_project(&project_file, &doc, Some(&["takes".to_owned()])).unwrap();
    (dir, project_file)
}

/// Another session saves the same sidecar project while the app has edits of its own: the app's
/// Save merges the other session's files into the document first (one undo step, named in the
/// status bar), then saves both sessions' work.
#[test]
fn save_merges_a_sidecar_another_session_changed() {
    use taglane::core::tags::Tag;
    let (dir, project_file) = sidecar_library("sidecar-merge", vec![Tag::new("Walk")]);
    let (opened, _) = Project::load(&project_file).unwrap();
    let mut h = harness_with(TaglaneApp::new(
        opened,
        Prefs::default(),
        Recovery::in_dir(&dir.join("recovery")),
    ));
    h.run_steps(2);
    // The app tags clip 0; another session tags clip 1 and a later part of clip 0, and saves.
    h.state_mut().queue.push(AppCommand::Edit {
        edit: Edit::SetRanges {
            tag: 0,
            clip: 0,
            ranges: vec![Range::new(2, 9)],
        },
        label: "tag".into(),
        select: None,
    });
    h.run_steps(2);
    let mut other = Project::load(&project_file).unwrap().0;
    for (clip, r) in [(1, Range::new(5, 7)), (0, Range::new(20, 30))] {
        other
            .apply(
                Edit::SetRanges {
                    tag: 0,
                    clip,
                    ranges: vec![r],
                },
                "other",
            )
            .unwrap();
    }
    other.save_to(&project_file).unwrap();
    h.state_mut().queue.push(AppCommand::Save);
    h.run_steps(3);
    let message = status(&h);
    assert!(
        message.contains("merged 2 file(s) changed on disk"),
        "{message}"
    );
    {
        let app = h.state();
        assert!(!app.project.history.is_dirty(), "{message}");
        let walk = &app.project.doc.tags[0];
        assert_eq!(walk.ranges[&0], vec![Range::new(2, 9), Range::new(20, 30)]);
        assert_eq!(walk.ranges[&1], vec![Range::new(5, 7)]);
    }
    let (reopened, _) = Project::load(&project_file).unwrap();
    assert_eq!(
        reopened.doc.unversioned(),
        h.state().project.doc.clone().unversioned(),
        "the files hold both sessions' work"
    );
    // The merge is one undo step.
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(2);
    assert!(
        status(&h).contains("undid changes made on disk"),
        "{}",
        status(&h)
    );
    assert_eq!(
        h.state().project.doc.tags[0].ranges[&0],
        vec![Range::new(2, 9)]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sidecar projects are as safe as single files: an autosave of a sidecar project is offered for
/// it, recovers into it, and Save writes the recovered tags into the takes' sidecars (atomically,
/// no temporary file left), keeping the project a sidecar project.
#[test]
fn a_sidecar_project_recovers_and_saves_into_its_sidecars() {
    use taglane::core::library::{is_sidecar_project, sidecar_path};
    use taglane::core::tags::Tag;
    let (dir, project_file) = sidecar_library("sidecar-recover", Vec::new());
    let takes = dir.join("takes");
    assert!(is_sidecar_project(&project_file));

    // A session edits it and dies after an autosave.
    let recovery_dir = dir.join("recovery");
    let mut edited = Project::load(&project_file).unwrap().0;
    edited
        .apply(
            Edit::InsertTag {
                index: 0,
                tag: Tag::new("Walk"),
            },
            "new tag",
        )
        .unwrap();
    edited
        .apply(
            Edit::SetRanges {
                tag: 0,
                clip: 0,
                ranges: vec![Range::new(2, 9)],
            },
            "edit",
        )
        .unwrap();
    Recovery::in_dir(&recovery_dir).save(&edited).unwrap();

    // Opening the project again offers its autosave; Enter recovers it into the project.
    let (opened, _) = Project::load(&project_file).unwrap();
    let mut h = harness_with(TaglaneApp::new(
        opened,
        Prefs::default(),
        Recovery::in_dir(&recovery_dir),
    ));
    assert!(
        matches!(&h.state().dialog, Some(Dialog::Recover { info }) if info.unsaved_edits == 2),
        "{:?}",
        h.state().dialog
    );
    h.key_press(Key::Enter);
    h.run_steps(3);
    {
        let app = h.state();
        assert_eq!(app.project.path.as_deref(), Some(project_file.as_path()));
        assert_eq!(app.project.doc.tags[0].ranges[&0], vec![Range::new(2, 9)]);
        assert!(app.project.history.is_dirty());
    }
    // Save writes the recovered tags into the take's sidecar; the project stays a sidecar project.
    h.state_mut().queue.push(AppCommand::Save);
    h.run_steps(3);
    assert!(!h.state().project.history.is_dirty(), "{}", status(&h));
    assert!(is_sidecar_project(&project_file));
    let take = dir.join(h.state().project.doc.clips[0].source.as_deref().unwrap());
    let side = std::fs::read_to_string(sidecar_path(&take, None)).unwrap();
    assert!(side.contains("\"Walk\": [[2, 9]]"), "{side}");
    let leftovers: Vec<_> = std::fs::read_dir(&takes)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let (reopened, _) = Project::load(&project_file).unwrap();
    assert_eq!(reopened.doc.tags[0].ranges[&0], vec![Range::new(2, 9)]);

    // Removing a clip and saving: its sidecar would bring it back on the next open, so the app
    // asks. Keep (Esc) leaves it and is not asked again while the project is open; the clip comes
    // back when the project opens again.
    let second = dir.join(h.state().project.doc.clips[1].source.as_deref().unwrap());
    let second_side = sidecar_path(&second, None);
    assert!(second_side.exists());
    let remove_and_save = |h: &mut Harness<'static, TaglaneApp>| {
        h.state_mut().queue.push(AppCommand::Edit {
            edit: Edit::RemoveClip { index: 1 },
            label: "remove clip".into(),
            select: None,
        });
        h.state_mut().queue.push(AppCommand::Save);
        h.run_steps(3);
    };
    remove_and_save(&mut h);
    let asked = |h: &Harness<'static, TaglaneApp>| matches!(&h.state().dialog, Some(Dialog::StaleSidecars(f)) if f == &vec![second_side.clone()]);
    assert!(asked(&h), "{:?} / {}", h.state().dialog, status(&h));
    h.key_press(Key::Escape);
    h.run_steps(2);
    assert!(h.state().dialog.is_none());
    assert!(second_side.exists());
    h.state_mut().queue.push(AppCommand::Save);
    h.run_steps(3);
    assert!(h.state().dialog.is_none(), "kept: not asked again");
    h.state_mut()
        .queue
        .push(AppCommand::GuardedDiscard(Guarded::Open(Some(
            project_file.clone(),
        ))));
    h.run_steps(3);
    assert_eq!(h.state().project.doc.clips.len(), 2, "{}", status(&h));
    // Save, then Open (the unsaved-changes question's Save): the save asks about the sidecar,
    // and the project it asks about is closed: the question goes with it (it stayed over the
    // project opened, about another's files). The sidecar stays, so the clip comes back.
    h.state_mut().queue.push(AppCommand::Edit {
        edit: Edit::RemoveClip { index: 1 },
        label: "remove clip".into(),
        select: None,
    });
    h.state_mut()
        .queue
        .push(AppCommand::SaveThen(Guarded::Open(Some(
            project_file.clone(),
        ))));
    h.run_steps(3);
    assert!(h.state().dialog.is_none(), "{:?}", h.state().dialog);
    assert!(second_side.exists());
    assert_eq!(h.state().project.doc.clips.len(), 2, "{}", status(&h));
    // Opened again, the question comes back; Move aside renames the sidecar (nothing deleted) and
    // the clip stays removed.
    remove_and_save(&mut h);
    assert!(asked(&h), "{:?} / {}", h.state().dialog, status(&h));
    h.get_by_label("Move aside").click();
    h.run_steps(3);
    assert!(h.state().dialog.is_none());
    assert!(!second_side.exists());
    assert!(
        !h.state().project.sidecars.contains(&second_side),
        "the project forgets it: a later save does not take it for a clip removed on disk"
    );
    let removed = second_side.with_file_name(format!(
        "{}.removed",
        second_side.file_name().unwrap().to_string_lossy()
    ));
    assert!(removed.exists(), "{}", status(&h));
    assert!(
        status(&h).contains("moved 1 stale sidecar(s) aside"),
        "{}",
        status(&h)
    );
    let (reopened, _) = Project::load(&project_file).unwrap();
    assert_eq!(reopened.doc.clips.len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Another session adds a take, renames the current clip and removes the clip before it (its
/// sidecar moved aside) while the app has edits: the app's Save merges the clip list, the clip
/// being edited stays current though its index and name changed, and the new clip shows in the
/// browser.
#[test]
fn save_merges_clips_another_session_added_and_removed() {
    use taglane::core::library::move_sidecars_aside;
    use taglane::core::tags::Tag;
    let (dir, project_file) = sidecar_library("sidecar-clips", vec![Tag::new("Walk")]);
    let (opened, _) = Project::load(&project_file).unwrap();
    let first = opened.doc.clips[0].name.clone();
    let second = opened.doc.clips[1].name.clone();
    let mut h = harness_with(TaglaneApp::new(
        opened,
        Prefs::default(),
        Recovery::in_dir(&dir.join("recovery")),
    ));
    h.run_steps(2);
    h.state_mut().queue.push(AppCommand::SelectClip(1));
    h.state_mut().queue.push(AppCommand::Edit {
        edit: Edit::SetRanges {
            tag: 0,
            clip: 1,
            ranges: vec![Range::new(2, 9)],
        },
        label: "tag".into(),
        select: None,
    });
    h.run_steps(2);
    // The other session: a new take imported, the first clip removed.
    let mut other = Project::load(&project_file).unwrap().0;
    let (file, text) = DEMO_CLIP_FILES[2];
    std::fs::write(dir.join("takes").join(file), text).unwrap();
    let mut clip = other.doc.clips[0].clone();
    clip.name = "imported".into();
    clip.source = Some(format!("takes/{file}"));
    other
        .apply(
            Edit::InsertClip {
                index: 2,
                clip,
                ranges: vec![(0, vec![Range::new(1, 4)])],
            },
            "import",
        )
        .unwrap();
    other
        .apply(
            Edit::RenameClip {
                clip: 1,
                name: "renamed".into(),
            },
            "rename",
        )
        .unwrap();
    other
        .apply(Edit::RemoveClip { index: 0 }, "remove")
        .unwrap();
    let stale = other.save_to(&project_file).unwrap();
    move_sidecars_aside(&stale).unwrap();
    h.state_mut().queue.push(AppCommand::Save);
    h.run_steps(3);
    let message = status(&h);
    {
        let app = h.state();
        let names: Vec<&str> = app
            .project
            .doc
            .clips
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["renamed", "imported"], "{message}");
        assert_eq!(
            app.current_clip, 0,
            "the clip edited stays current: {message}"
        );
        assert!(!app.project.history.is_dirty(), "{message}");
        let walk = &app.project.doc.tags[0];
        assert_eq!(walk.ranges[&0], vec![Range::new(2, 9)]);
        assert_eq!(walk.ranges[&1], vec![Range::new(1, 4)]);
    }
    assert!(!names_contain(&h, &first));
    h.get_by_label_contains("imported");
    // The files hold both sessions' work (a sidecar project lists its clips in folder order).
    let by_name = |doc: &taglane::core::tags::TagDocument| {
        let mut clips: Vec<(String, Vec<Range>)> = doc
            .clips
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let r = doc.tags[0].ranges.get(&(i as u32)).unwrap_or(&[]);
                (c.name.clone(), r.to_vec())
            })
            .collect();
        clips.sort_by(|a, b| a.0.cmp(&b.0));
        clips
    };
    let (reopened, _) = Project::load(&project_file).unwrap();
    assert_eq!(by_name(&reopened.doc), by_name(&h.state().project.doc));
    // Undo of the merge: the clip removed there comes back, and the same clip stays current.
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(2);
    assert_eq!(h.state().project.doc.clips.len(), 2, "{}", status(&h));
    assert!(names_contain(&h, &first) && !names_contain(&h, "imported"));
    let app = h.state();
    assert_eq!(
        app.project.doc.clips[app.current_clip as usize].name,
        second
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn names_contain(h: &Harness<'static, TaglaneApp>, name: &str) -> bool {
    h.state().project.doc.clips.iter().any(|c| c.name == name)
}

/// The demo saved as `dir/real.taglane.json`, and a session that edited it (tag 1 on clip 2 set to
/// [5, 6)) and died after an autosave in `dir/recovery`: the recovery folder and the project file.
fn crashed_session(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let recovery_dir = dir.join("recovery");
    let real = dir.join("real.taglane.json");
    Project::demo().save_to(&real).unwrap();
    let mut crashed = Project::load(&real).unwrap().0;
    crashed
        .apply(
            Edit::SetRanges {
                tag: 1,
                clip: 2,
                ranges: vec![Range::new(5, 6)],
            },
            "crashed edit",
        )
        .unwrap();
    Recovery::in_dir(&recovery_dir).save(&crashed).unwrap();
    (recovery_dir, real)
}

/// "Later" keeps another session's autosave: this session's own autosaves of the same project and
/// its save never touch it. Recovering it later, while this session has changes of its own, asks
/// to save them first; once recovered, this session's own autosave holds the work and the old one
/// is gone.
#[test]
fn a_declined_recovery_survives_editing_and_saving_the_same_project() {
    let dir = temp_dir("later");
    let (recovery_dir, real) = crashed_session(&dir);
    // The next session declines to recover it, edits, autosaves and saves the same project.
    let (opened, _) = Project::load(&real).unwrap();
    let mut app = TaglaneApp::new(opened, Prefs::default(), Recovery::in_dir(&recovery_dir));
    app.files.autosave_every = std::time::Duration::ZERO;
    let mut h = harness_with(app);
    h.get_by_label("Later").click();
    h.run_steps(2);
    assert!(h.state().dialog.is_none());
    edit(&mut h);
    h.run_steps(2);
    assert_eq!(
        Recovery::in_dir(&recovery_dir).all().len(),
        2,
        "both autosaves"
    );
    h.state_mut().queue.push(AppCommand::Save);
    h.run_steps(3);
    assert!(!h.state().project.history.is_dirty(), "{}", status(&h));
    let left = Recovery::in_dir(&recovery_dir).all();
    assert_eq!(left.len(), 1, "only this session's own autosave went");
    let (doc, _) = Recovery::in_dir(&recovery_dir).load(&left[0]).unwrap();
    assert_eq!(doc.tags[1].ranges[&2], vec![Range::new(5, 6)]);
    // Recover it now, with an edit of this session unsaved: "save your changes?" first.
    edit(&mut h);
    h.state_mut()
        .queue
        .push(AppCommand::RecoverAutosave(left[0].clone()));
    h.run_steps(3);
    assert!(
        matches!(h.state().dialog, Some(Dialog::Unsaved(_))),
        "{:?}",
        h.state().dialog
    );
    h.get_by_label("Don't save").click();
    h.run_steps(3);
    {
        let app = h.state();
        assert_eq!(app.project.path.as_deref(), Some(real.as_path()));
        assert_eq!(app.project.doc.tags[1].ranges[&2], vec![Range::new(5, 6)]);
        // The edit saved after the autosave was written is kept: the two were merged (the
        // autosave was put over it before).
        assert_eq!(app.project.doc.tags[0].ranges[&0], vec![Range::new(2, 9)]);
        assert!(app.project.history.is_dirty());
        assert!(status(&h).contains("merged"), "{}", status(&h));
    }
    let now = Recovery::in_dir(&recovery_dir).all();
    assert_eq!(now.len(), 1, "{now:?}");
    assert_ne!(
        now[0].session, left[0].session,
        "this session's own autosave holds it"
    );
    // One undo step: Undo gives back the project as saved.
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(2);
    {
        let app = h.state();
        assert_ne!(
            app.project.doc.tags[1].ranges.get(&2),
            Some(&[Range::new(5, 6)][..])
        );
        assert_eq!(app.project.doc.tags[0].ranges[&0], vec![Range::new(2, 9)]);
        assert!(!app.project.history.is_dirty());
    }
    h.state_mut().queue.push(AppCommand::Redo);
    h.state_mut().queue.push(AppCommand::Save);
    h.run_steps(3);
    let (saved, _) = Project::load(&real).unwrap();
    assert_eq!(saved.doc.tags[1].ranges[&2], vec![Range::new(5, 6)]);
    assert_eq!(saved.doc.tags[0].ranges[&0], vec![Range::new(2, 9)]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Opening another project (here New) leaves nothing of the old one that could edit the new one:
/// the import report and its "Update changed clips" (clip numbers of the old project), the marker
/// selection, the inspector's fields, the clips selected in the browser and checked for auto-tag.
#[test]
fn a_new_project_keeps_no_selection_or_report_of_the_old_one() {
    let dir = temp_dir("replace");
    let (name, text) = DEMO_CLIP_FILES[1];
    let bvh = dir.join(name);
    std::fs::write(&bvh, text).unwrap();
    let mut h = harness();
    h.state_mut()
        .queue
        .push(AppCommand::ImportAnimation(Some(vec![bvh])));
    h.run_steps(1);
    crate::common::wait_import(&mut h);
    h.state_mut().library.show_report = true;
    assert!(h.state().library.last.is_some());
    let frame = h.state().project.doc.tags[0].markers_on(0).first().copied();
    h.state_mut().marker_selection = vec![(0, frame.unwrap_or(3))];
    h.state_mut().browser.selected = vec![1, 2];
    h.state_mut().autotag.checked.extend([1, 2]);
    h.run_steps(2);
    assert!(h.state().inspector.subject.is_some());
    // Saved first, so that New does not ask.
    h.state_mut()
        .queue
        .push(AppCommand::SaveAs(Some(dir.join("p.taglane.json"))));
    h.run_steps(2);
    h.state_mut().queue.push(AppCommand::Guarded(Guarded::New));
    h.run_steps(2);
    let app = h.state();
    assert!(app.project.doc.clips.is_empty());
    assert!(app.library.last.is_none() && !app.library.show_report);
    assert!(app.marker_selection.is_empty());
    assert_eq!(app.inspector.subject, None);
    assert!(app.browser.selected.is_empty() && app.autotag.checked.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Auto-tag settings changed in the panel and not saved into the project count as unsaved work:
/// New asks first, naming them, and Save saves them into the project file before the new project.
#[test]
fn unsaved_auto_tag_settings_are_asked_about_and_saved() {
    let dir = temp_dir("autotag-settings");
    let path = dir.join("p.taglane.json");
    let mut h = harness();
    h.state_mut()
        .queue
        .push(AppCommand::SaveAs(Some(path.clone())));
    h.run_steps(2);
    assert!(!h.state().project.history.is_dirty(), "{}", status(&h));
    // The user changes a threshold in the panel.
    {
        let panel = &mut h.state_mut().autotag;
        panel.settings.params.contacts.enter_height_cm += 1.0;
        panel.valid = panel.settings.clone();
    }
    h.run_steps(2);
    let changed = h.state().autotag.valid.clone();
    assert!(h.state().autotag.settings_unsaved(&h.state().project.doc));
    h.state_mut().queue.push(AppCommand::Guarded(Guarded::New));
    h.run_steps(3);
    assert!(
        matches!(h.state().dialog, Some(Dialog::Unsaved(Guarded::New))),
        "{:?}",
        h.state().dialog
    );
    h.get_by_label_contains("Save the auto-tag settings to p.taglane.json first?");
    h.get_by_label("Save").click();
    h.run_steps(3);
    assert!(h.state().project.doc.clips.is_empty(), "the new project");
    let (saved, _) = Project::load(&path).unwrap();
    assert_eq!(saved.doc.autotag.as_ref(), Some(&changed));
    // The new project's panel holds that project's settings (none), with nothing to ask about.
    assert!(!h.state().autotag.settings_unsaved(&h.state().project.doc));
    assert_ne!(h.state().autotag.valid, changed);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An undo that changes the project's auto-tag settings does not throw away settings changed in the
/// panel since: they stay, still unsaved against the project's settings after the undo.
#[test]
fn undo_keeps_auto_tag_settings_changed_in_the_panel() {
    let mut h = harness();
    h.run_steps(2);
    let before = h.state().project.doc.autotag.clone();
    let mut saved = h.state().autotag.valid.clone();
    saved.params.contacts.enter_height_cm += 1.0;
    h.state_mut().queue.push(AppCommand::Edit {
        edit: Edit::SetAutotag(Some(Box::new(saved.clone()))),
        label: "auto-tag settings".into(),
        select: None,
    });
    h.run_steps(2);
    assert_eq!(
        h.state().autotag.valid,
        saved,
        "the panel takes the project's settings"
    );
    // Changed in the panel, then the save above is undone.
    {
        let panel = &mut h.state_mut().autotag;
        panel.settings.params.contacts.enter_height_cm += 2.0;
        panel.valid = panel.settings.clone();
    }
    let mine = h.state().autotag.valid.clone();
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(3);
    let app = h.state();
    assert_eq!(app.project.doc.autotag, before, "undone");
    assert_eq!(app.autotag.valid, mine, "the panel's own change is kept");
    assert!(app.autotag.settings_unsaved(&app.project.doc));
}

/// The active tag (where marks, markers and pastes go) stays the same tag when tags above it are
/// deleted, put back by undo or reordered.
#[test]
fn the_active_tag_stays_the_same_tag_when_tags_move() {
    let mut h = harness();
    let names: Vec<String> = h
        .state()
        .project
        .doc
        .tags
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert!(names.len() >= 4, "{names:?}");
    let active = |h: &Harness<'static, TaglaneApp>| {
        let app = h.state();
        app.active_tag.map(|t| app.project.doc.tags[t].name.clone())
    };
    h.state_mut().active_tag = Some(2);
    h.run_steps(1);
    let want = Some(names[2].clone());
    h.state_mut().queue.push(AppCommand::DeleteTag(0));
    h.run_steps(2);
    assert_eq!(active(&h), want, "after deleting a tag above it");
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    assert_eq!(h.state().project.doc.tags.len(), names.len());
    assert_eq!(active(&h), want, "after the undo put it back");
    h.state_mut().queue.push(AppCommand::MoveTag {
        index: 1,
        up: false,
    });
    h.run_steps(2);
    assert_eq!(active(&h), want, "after its neighbour moved past it");
    h.state_mut().queue.push(AppCommand::MoveTag {
        index: 1,
        up: false,
    });
    h.run_steps(2);
    assert_eq!(active(&h), want, "after it moved itself");
}

/// An edit followed by no input at all (the animator in another program) still reaches the
/// autosave: the app asks for a frame when the autosave is due, since an idle window draws none.
#[test]
fn an_idle_window_with_unsaved_changes_wakes_for_the_autosave() {
    let repaint_in = |h: &Harness<'static, TaglaneApp>| {
        h.output().viewport_output[&egui::ViewportId::ROOT].repaint_delay
    };
    let mut app = TaglaneApp::demo_for_tests();
    app.files.autosave_every = std::time::Duration::from_secs(3600);
    let mut h = harness_with(app);
    h.run_steps(2);
    edit(&mut h);
    h.run_steps(1);
    // Asked for when the autosave is due (an hour here), not by anything else.
    let delay = repaint_in(&h);
    assert!(
        delay <= std::time::Duration::from_secs(3600)
            && delay >= std::time::Duration::from_secs(3500),
        "{delay:?}"
    );
}

/// In the app's own folder browser (Import folder), a folder typed in the Folder field and Enter
/// goes to that folder; only "Choose folder" (or Enter elsewhere) imports it.
#[test]
fn enter_in_the_folder_field_goes_there_without_importing() {
    let dir = temp_dir("fallback_folder_enter");
    std::fs::create_dir_all(dir.join("takes/day1")).unwrap();
    std::fs::write(
        dir.join("takes/day1/walk.bvh"),
        taglane::core::project::DEMO_CLIP_FILES[0].1,
    )
    .unwrap();
    let app = demo_without_system_dialogs();
    let mut h = harness_with(app);
    let clips = h.state().project.doc.clips.len();
    h.state_mut().queue.push(AppCommand::ImportFolder(None));
    h.run_steps(3);
    browse_to(&mut h, &dir);
    h.run_steps(2);
    let target = dir.join("takes");
    h.state_mut().files.browser.as_mut().unwrap().dir_text = String::new();
    h.get_by_label("Folder").click();
    h.run_steps(1);
    h.get_by_label("Folder")
        .type_text(&target.display().to_string());
    h.run_steps(1);
    h.key_press(Key::Enter);
    h.run_steps(3);
    let browser = h
        .state()
        .files
        .browser
        .as_ref()
        .expect("the browser stays open");
    assert_eq!(browser.dir, target);
    assert!(!h.state().library.importing());
    assert_eq!(h.state().project.doc.clips.len(), clips);
    h.get_by_label("Choose folder").click();
    h.run_steps(2);
    crate::common::wait_import(&mut h);
    assert!(h.state().files.browser.is_none());
    assert_eq!(h.state().project.doc.clips.len(), clips + 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// No shortcut runs under a modal window: with "Delete tag?" open over a selection, Delete and
/// Ctrl+Z did their work behind it (the selection deleted, the tag the dialog named changed
/// under it). Esc closes the dialog; then the keys work again.
#[test]
fn shortcuts_wait_while_a_dialog_is_open() {
    let mut h = harness();
    // A step to undo, then a selection to delete.
    edit(&mut h);
    let walking = crate::common::tag_index(h.state(), "Walking");
    let first = crate::common::ranges(h.state(), walking)[0];
    h.state_mut()
        .queue
        .push(AppCommand::Select(vec![(walking, first)]));
    h.run_steps(3);
    let male = crate::common::tag_index(h.state(), "Male");
    h.state_mut().queue.push(AppCommand::AskDeleteTag(male));
    h.run_steps(3);
    assert_eq!(h.state().dialog, Some(Dialog::ConfirmDeleteTag(male)));
    let doc = h.state().project.doc.clone();
    let undo_steps = h.state().project.history.len();
    h.key_press(Key::Delete);
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.key_press(Key::M);
    h.run_steps(3);
    assert_eq!(
        h.state().project.doc,
        doc,
        "nothing changed behind the dialog"
    );
    assert_eq!(h.state().project.history.len(), undo_steps);
    assert_eq!(h.state().dialog, Some(Dialog::ConfirmDeleteTag(male)));
    h.key_press(Key::Escape);
    h.run_steps(3);
    assert_eq!(h.state().dialog, None);
    assert_eq!(h.state().project.doc.tags.len(), doc.tags.len());
    // The keys work again once it is closed (a frame after it, as egui knows the modal gone).
    h.run_steps(2);
    h.key_press(Key::Delete);
    h.run_steps(3);
    assert!(
        !crate::common::ranges(h.state(), walking).contains(&first),
        "Delete deletes the selection"
    );
}

/// An autosave written while a project had unsaved changes goes once the project is clean
/// again by undo: it held nothing to recover, and the next start offered it as lost work
/// ("did not close normally").
#[test]
fn an_autosave_goes_when_undo_makes_the_project_clean() {
    let dir = crate::common::Scratch::new("autosave-clean");
    let file = dir.join("p.taglane.json");
    let mut demo = Project::demo();
    demo.save_to(&file).unwrap();
    let (opened, _) = Project::load(&file).unwrap();
    let recovery = dir.join("recovery");
    let mut app = TaglaneApp::new(opened, Prefs::default(), Recovery::in_dir(&recovery));
    app.files.autosave_every = std::time::Duration::ZERO;
    let mut h = harness_with(app);
    h.run_steps(2);
    edit(&mut h);
    h.run_steps(2);
    assert_eq!(Recovery::in_dir(&recovery).all().len(), 1, "autosaved");
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(3);
    assert!(!h.state().project.history.is_dirty());
    assert!(
        Recovery::in_dir(&recovery).all().is_empty(),
        "nothing to recover once clean"
    );
}

/// An autosave whose project path is not its own canonical form (here through a link to the
/// folder, as an autosave of an earlier version, or a folder replaced by a link, leaves it) is
/// recovered into its project: "Recover" and the opening of its project asked each other again
/// forever (a stack overflow).
#[test]
fn an_autosave_named_through_a_link_is_recovered() {
    let dir = temp_dir("linked-origin");
    let (recovery_dir, _) = crashed_session(&dir);
    std::os::unix::fs::symlink(&dir, dir.join("link")).unwrap();
    let linked = dir.join("link").join("real.taglane.json");
    for entry in std::fs::read_dir(&recovery_dir).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().ends_with(".meta.json") {
            let mut meta: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            meta["origin"] = serde_json::json!({ "File": linked });
            std::fs::write(&path, meta.to_string()).unwrap();
        }
    }
    let info = Recovery::in_dir(&recovery_dir).all().remove(0);
    assert_eq!(info.origin, Origin::File(linked.clone()));
    let app = TaglaneApp::new(
        Project::demo(),
        Prefs::default(),
        Recovery::in_dir(&recovery_dir),
    );
    let mut h = harness_with(app);
    h.state_mut().dialog = None;
    h.state_mut().queue.push(AppCommand::RecoverAutosave(info));
    h.run_steps(3);
    let app = h.state();
    assert_eq!(
        app.project.doc.tags[1].ranges[&2],
        vec![Range::new(5, 6)],
        "{}",
        status(&h)
    );
    assert!(app.project.history.is_dirty());
    // One undo step (the project was not saved since: nothing to merge).
    assert_eq!(app.project.history.len(), 1);
    assert!(!status(&h).contains("saved after"), "{}", status(&h));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A question is answered by a new press: the repeats of an Enter held since the action that
/// raised it do not answer it, and neither does an Enter meant for the in-app file browser open
/// over it.
#[test]
fn a_held_enter_does_not_answer_a_question() {
    let mut h = harness();
    edit(&mut h);
    h.key_down(Key::Enter);
    h.run_steps(1);
    h.state_mut().dialog = Some(Dialog::Unsaved(Guarded::New));
    h.run_steps(1);
    for _ in 0..3 {
        h.key_down(Key::Enter);
        h.run_steps(1);
    }
    assert!(
        matches!(h.state().dialog, Some(Dialog::Unsaved(_))),
        "{:?}",
        h.state().dialog
    );
    assert!(h.state().project.history.is_dirty());
    h.key_up(Key::Enter);
    h.run_steps(1);
    // The in-app browser over it takes the Enter.
    h.state_mut().prefs.dialogs = DialogBackend::InApp;
    h.state_mut().ask_path(PathRequest::new(
        "Open project",
        taglane::ui::file_dialog::PathKind::Open,
        AppCommand::Guarded(Guarded::Open(None)),
    ));
    h.run_steps(2);
    assert!(h.state().files.browser.is_some());
    h.state_mut().dialog = Some(Dialog::Unsaved(Guarded::New));
    h.key_press(Key::Enter);
    h.run_steps(2);
    assert!(
        h.state().dialog.is_some(),
        "the dialog under the browser was answered"
    );
    assert!(h.state().project.history.is_dirty());
}

/// Auto-tag settings changed in the panel are unsaved work everywhere: the title shows it, the
/// autosave holds them, and Ctrl+S saves them into the file (it said "saved" and left them out).
#[test]
fn a_save_takes_the_auto_tag_settings_and_the_autosave_holds_them() {
    let dir = temp_dir("autotag-save");
    let path = dir.join("p.taglane.json");
    let recovery_dir = dir.join("recovery");
    let mut app = TaglaneApp::new(
        Project::demo(),
        Prefs::default(),
        Recovery::in_dir(&recovery_dir),
    );
    app.dialog = None;
    app.files.autosave_every = std::time::Duration::ZERO;
    let mut h = harness_with(app);
    h.state_mut()
        .queue
        .push(AppCommand::SaveAs(Some(path.clone())));
    h.run_steps(2);
    assert!(!h.state().window_title().starts_with('●'));
    {
        let panel = &mut h.state_mut().autotag;
        panel.settings.params.contacts.enter_height_cm += 1.0;
        panel.valid = panel.settings.clone();
    }
    h.run_steps(2);
    let changed = h.state().autotag.valid.clone();
    assert!(h.state().window_title().starts_with('●'));
    let autosaves = Recovery::in_dir(&recovery_dir).all();
    assert_eq!(autosaves.len(), 1, "the settings are autosaved");
    let (autosaved, _) = Recovery::in_dir(&recovery_dir).load(&autosaves[0]).unwrap();
    assert_eq!(autosaved.autotag.as_ref(), Some(&changed));
    h.key_press_modifiers(Modifiers::COMMAND, Key::S);
    h.run_steps(3);
    let (saved, _) = Project::load(&path).unwrap();
    assert_eq!(saved.doc.autotag.as_ref(), Some(&changed), "{}", status(&h));
    assert!(!h.state().window_title().starts_with('●'));
    assert!(!h.state().project.history.is_dirty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A file dropped on the window while a question is open waits for its answer: dropped under
/// "save your changes?" it was merged or imported, then dropped unasked by "Don't save".
#[test]
fn files_dropped_under_a_question_wait_for_its_answer() {
    let dir = crate::common::Scratch::new("drop-modal");
    let take = dir.join("take.bvh");
    std::fs::write(&take, DEMO_CLIP_FILES[1].1).unwrap();
    let mut h = harness();
    edit(&mut h);
    let clips = h.state().project.doc.clips.len();
    h.state_mut().dialog = Some(Dialog::Unsaved(Guarded::New));
    h.run_steps(1);
    h.input_mut()
        .dropped_files
        .push(std::sync::Arc::new(Dropped(take.clone())));
    h.run_steps(2);
    assert!(!h.state().library.importing());
    assert_eq!(h.state().files.dropped, vec![take.clone()]);
    h.get_by_label("Cancel").click();
    h.run_steps(2);
    assert!(h.state().dialog.is_none());
    assert!(h.state().files.dropped.is_empty());
    crate::common::wait_import(&mut h);
    assert_eq!(h.state().project.doc.clips.len(), clips + 1);
}

/// A file dropped on the window, as an integration hands it to egui.
#[derive(Debug)]
struct Dropped(std::path::PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &Path {
        &self.0
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

/// The clips selected in the browser are clips it shows: a search that hides some deselects
/// them (the context menu's "Units of N clips" applied to clips the list did not show).
#[test]
fn a_search_deselects_the_clips_it_hides() {
    let mut h = harness();
    h.run_steps(2);
    let names: Vec<String> = h
        .state()
        .project
        .doc
        .clips
        .iter()
        .map(|c| c.name.clone())
        .collect();
    let walk = names.iter().position(|n| n == "walk_male_01").unwrap() as u32;
    let run = names.iter().position(|n| n == "run_male_01").unwrap() as u32;
    h.state_mut().browser.selected = vec![walk, run];
    h.run_steps(2);
    assert_eq!(h.state().browser.selected, vec![walk, run]);
    h.state_mut().browser.filters.search = "walk_male".into();
    h.run_steps(2);
    assert_eq!(h.state().browser.selected, vec![walk]);
}
