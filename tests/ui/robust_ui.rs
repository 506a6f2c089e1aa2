//! The app after a crash, and on the stress project.
//! - A child process (this test binary re-invoked with `TAGLANE_RECOVERY_CHILD`) autosaves an
//!   edited project to a recovery file and is killed with SIGKILL (no clean exit, so the recovery
//!   file stays); a new `TaglaneApp` on that recovery folder offers it (`Dialog::Recover`), and
//!   restoring it brings the edited project back.
//! - One frame of the app on the generated 10,000-clip project (timed in `benches/stress.rs`).
#![cfg(feature = "ui")]

use std::path::PathBuf;

use egui_kittest::Harness;
use taglane::core::stress::{StressSpec, stress_document};
use taglane::core::tags::Range;
use taglane::ui::TaglaneApp;
use taglane::ui::app::{Dialog, Prefs};
use taglane::ui::command::AppCommand;
use taglane::ui::project::Project;
use taglane::ui::recovery::{Origin, Recovery};

const CHILD_ENV: &str = "TAGLANE_RECOVERY_CHILD";

/// The edited project: the demo with a new tag holding one range on clip 0, and a known original
/// path.
fn edited_project() -> Project {
    let mut project = Project::demo();
    project.path = Some(PathBuf::from("/projects/session.taglane.json"));
    project.is_demo = false;
    let tag = project.doc.add_tag("unsaved work", None).unwrap();
    project.doc.add_range(tag, 0, Range::new(3, 7)).unwrap();
    project
}

/// The child: autosaves the edited project, says so, then waits to be killed.
#[test]
fn recovery_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let recovery = Recovery::in_dir(&PathBuf::from(dir));
    recovery.save(&edited_project()).expect("autosave");
    println!("autosaved");
    loop {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn recovery_file_is_offered_after_a_crash() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("taglane-recovery-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    // No recovery file: nothing is offered.
    let app = TaglaneApp::new(Project::demo(), Prefs::default(), Recovery::in_dir(&dir));
    assert!(app.dialog.is_none());

    let mut child =
        crate::common::child_test("robust_ui::recovery_child", CHILD_ENV, &dir, "autosaved");
    child.kill().unwrap(); // SIGKILL: the session does not end cleanly
    child.wait().unwrap();

    // The next start-up on the demo (taglane started with no project) offers it, naming its
    // project: that is how a user gets back to work after a crash. Later keeps it.
    let expected = edited_project();
    let origin = Origin::File(expected.path.clone().unwrap());
    let app = TaglaneApp::new(Project::demo(), Prefs::default(), Recovery::in_dir(&dir));
    match &app.dialog {
        Some(Dialog::Recover { info }) => {
            assert_eq!(info.origin, origin);
            assert!(!info.in_use(), "its session was killed");
        }
        other => panic!("the work left behind is not offered: {other:?}"),
    }
    // The dialog says it; the status line does not repeat it.
    assert!(app.status.is_none(), "{:?}", app.status);
    // Started on another named project, it is not offered there (a status line says it is
    // kept).
    let mut elsewhere = Project::demo();
    elsewhere.path = Some(dir.join("elsewhere.taglane.json"));
    elsewhere.is_demo = false;
    let app = TaglaneApp::new(elsewhere, Prefs::default(), Recovery::in_dir(&dir));
    assert!(
        app.dialog.is_none(),
        "another project's autosave is not offered on a named project"
    );
    assert_eq!(Recovery::in_dir(&dir).all().len(), 1, "it is kept");
    // Started on its own project, it is offered, naming that project.
    let own = Project {
        path: expected.path.clone(),
        ..Project::demo()
    };
    let own = Project {
        is_demo: false,
        ..own
    };
    let mut app = TaglaneApp::new(own, Prefs::default(), Recovery::in_dir(&dir));
    let info = match &app.dialog {
        Some(Dialog::Recover { info }) => {
            assert_eq!(info.origin, origin);
            assert!(info.summary().contains("session.taglane.json"));
            info.clone()
        }
        other => panic!("the recovery file is not offered: {other:?}"),
    };
    // Restoring it gives the edited project back, unsaved, with its original path.
    let ctx = egui::Context::default();
    app.apply(AppCommand::RecoverAutosave(info), &ctx);
    let tag = app
        .project
        .doc
        .tag_index("unsaved work")
        .expect("the new tag is back");
    assert_eq!(app.project.doc.tags[tag].ranges[&0], vec![Range::new(3, 7)]);
    assert_eq!(app.project.doc.tags.len(), expected.doc.tags.len());
    assert_eq!(app.project.doc.clips, expected.doc.clips);
    assert_eq!(app.project.path, expected.path);
    assert!(app.project.history.is_dirty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn one_frame_of_the_stress_project() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let doc = stress_document(&StressSpec::LARGE);
    let project = Project {
        doc,
        ..Project::default()
    };
    let app = TaglaneApp::new(project, Prefs::default(), Recovery::disabled());
    let t = std::time::Instant::now();
    // Building the harness runs the first frame.
    let mut h = Harness::builder()
        .with_size([1400.0, 860.0])
        .build_ui_state(|ui, app: &mut TaglaneApp| app.ui(ui), app);
    let first = t.elapsed();
    let t = std::time::Instant::now();
    h.step();
    eprintln!(
        "stress project, debug build: first frame {:.1} ms, next frame {:.1} ms",
        first.as_secs_f64() * 1e3,
        t.elapsed().as_secs_f64() * 1e3
    );
    let app = h.state();
    assert_eq!(app.project.doc.clips.len(), 10_000);
    assert_eq!(app.project.doc.tags.len(), 200);
    assert_eq!(app.frames(), app.project.doc.clips[0].frames);
}
