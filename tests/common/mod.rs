//! Helpers shared by the integration tests (both binaries: `tests/core` and `tests/ui`): unique
//! temporary folders, the real motion-capture folder, the built `taglane` binary and, with the UI,
//! harnesses driving the real app.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh, empty temporary folder for one test: unique per process and call, so tests running in
/// parallel never share one.
pub fn temp_dir(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "taglane-test-{name}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

/// A [`temp_dir`] removed with everything in it when dropped (at the end of the test, passed or
/// failed), so that test runs leave nothing in the system's temporary folder.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Self {
        Scratch(temp_dir(name))
    }
}

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::path::Path> for Scratch {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The real takes (`../shared/mocap`, beside the repository); tests that read them are
/// `#[ignore = "needs ../shared/mocap"]`.
pub fn mocap_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/mocap"))
}

/// One file of [`mocap_dir`].
pub fn mocap(name: &str) -> PathBuf {
    mocap_dir().join(name)
}

/// The `taglane` binary of this build.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_taglane"))
}

/// A harness driving the real app on `app` in a window of `size` points, after a few frames.
#[cfg(feature = "ui")]
pub fn harness_with(
    app: taglane::ui::TaglaneApp,
    size: [f32; 2],
) -> egui_kittest::Harness<'static, taglane::ui::TaglaneApp> {
    let mut h = egui_kittest::Harness::builder()
        .with_size(size)
        .build_ui_state(|ui, app: &mut taglane::ui::TaglaneApp| app.ui(ui), app);
    h.run_steps(3);
    h
}

/// [`harness_with`] on the embedded demo.
#[cfg(feature = "ui")]
pub fn demo_harness(size: [f32; 2]) -> egui_kittest::Harness<'static, taglane::ui::TaglaneApp> {
    harness_with(taglane::ui::TaglaneApp::demo_for_tests(), size)
}

/// A press at `from`, four moves to `to` and a release there, one frame each, with `modifiers`
/// held throughout; `during` looks at the app before the release (the gesture in progress).
#[cfg(feature = "ui")]
pub fn drag(
    h: &mut egui_kittest::Harness<'static, taglane::ui::TaglaneApp>,
    from: egui::Pos2,
    to: egui::Pos2,
    modifiers: egui::Modifiers,
    during: impl FnOnce(&taglane::ui::TaglaneApp),
) {
    press(h, from, modifiers);
    drag_steps(h, from, to, 1..=4);
    during(h.state());
    release(h, to, modifiers);
    h.run_steps(2);
}

/// The primary button of the pointer, at `pos`.
#[cfg(feature = "ui")]
fn button(pos: egui::Pos2, pressed: bool, modifiers: egui::Modifiers) -> egui::Event {
    egui::Event::PointerButton {
        pos,
        button: egui::PointerButton::Primary,
        pressed,
        modifiers,
    }
}

/// The pointer moved to `from` and pressed there, `modifiers` held (one frame each).
#[cfg(feature = "ui")]
pub fn press(
    h: &mut egui_kittest::Harness<'static, taglane::ui::TaglaneApp>,
    from: egui::Pos2,
    modifiers: egui::Modifiers,
) {
    h.event(egui::Event::ModifiersChanged(modifiers));
    h.event(egui::Event::PointerMoved(from));
    h.step();
    h.event(button(from, true, modifiers));
    h.step();
}

/// The pressed pointer moved to the quarters `steps` of the way from `from` to `to`, one frame
/// each.
#[cfg(feature = "ui")]
pub fn drag_steps(
    h: &mut egui_kittest::Harness<'static, taglane::ui::TaglaneApp>,
    from: egui::Pos2,
    to: egui::Pos2,
    steps: std::ops::RangeInclusive<u32>,
) {
    for k in steps {
        h.event(egui::Event::PointerMoved(
            from + (to - from) * (k as f32 / 4.0),
        ));
        h.step();
    }
}

/// The pointer released at `at`, and `modifiers` let go (one frame).
#[cfg(feature = "ui")]
pub fn release(
    h: &mut egui_kittest::Harness<'static, taglane::ui::TaglaneApp>,
    at: egui::Pos2,
    modifiers: egui::Modifiers,
) {
    h.event(button(at, false, modifiers));
    h.event(egui::Event::ModifiersChanged(egui::Modifiers::NONE));
    h.step();
}

/// Steps the app until its background import is done (at most about 20 s).
#[cfg(feature = "ui")]
pub fn wait_import(h: &mut egui_kittest::Harness<'static, taglane::ui::TaglaneApp>) {
    for _ in 0..2000 {
        h.step();
        if !h.state().library.importing() {
            h.run_steps(2);
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("the import did not finish");
}

/// Runs the built `taglane` binary with `args` and waits for it.
pub fn run(args: &[&str]) -> std::process::Output {
    bin().args(args).output().expect("the taglane binary runs")
}

/// Runs the built `taglane` binary with `args`, its stdout a pipe closed before it writes (as
/// `taglane ... | head -1` leaves it once `head` is done), and waits for it.
pub fn run_with_closed_stdout(args: &[&str]) -> std::process::Output {
    run_with_closed_pipe(args, true)
}

/// Runs the built `taglane` binary with `args`, its stderr a pipe closed before it writes (as
/// `taglane ... 2>&1 | head -1` leaves it), and waits for it.
pub fn run_with_closed_stderr(args: &[&str]) -> std::process::Output {
    run_with_closed_pipe(args, false)
}

fn run_with_closed_pipe(args: &[&str], stdout: bool) -> std::process::Output {
    let mut child = bin()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the taglane binary runs");
    if stdout {
        drop(child.stdout.take());
    } else {
        drop(child.stderr.take());
    }
    child.wait_with_output().expect("the taglane binary ends")
}

/// Bytes of a process's output as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Steps the app until the animation of the current clip has loaded or failed (it loads in the
/// background; a loaded machine can take more than a few frames), then a few frames more so the
/// panels show it. At most about 30 s.
#[cfg(feature = "ui")]
pub fn wait_anim(h: &mut egui_kittest::Harness<'static, taglane::ui::TaglaneApp>) {
    use taglane::core::library::ClipStatus;
    for _ in 0..3000 {
        h.step();
        let app = h.state();
        match app.side.anim.status(app.current_clip) {
            ClipStatus::Ready(_) | ClipStatus::Failed(_) => {
                h.run_steps(3);
                return;
            }
            _ => std::thread::sleep(std::time::Duration::from_millis(10)),
        }
    }
    panic!("the current clip's animation did not load");
}

/// The index of the tag named `name` in the app's document (the test fails when there is none).
#[cfg(feature = "ui")]
pub fn tag_index(app: &taglane::ui::TaglaneApp, name: &str) -> usize {
    app.project
        .doc
        .tag_index(name)
        .unwrap_or_else(|| panic!("no tag {name}"))
}

/// The ranges of tag `tag` on the app's current clip.
#[cfg(feature = "ui")]
pub fn ranges(app: &taglane::ui::TaglaneApp, tag: usize) -> Vec<taglane::core::tags::Range> {
    app.project.doc.tags[tag]
        .ranges_on(app.current_clip)
        .to_vec()
}

/// Runs the test `name` of this test binary as a child process with the variable `env` set to
/// `value` (how a test plays a session that gets killed), and waits until it prints a line
/// containing `ready`. Returns the child, still running.
pub fn child_test(
    name: &str,
    env: &str,
    value: &std::path::Path,
    ready: &str,
) -> std::process::Child {
    use std::io::BufRead;
    let mut child = Command::new(std::env::current_exe().expect("the test binary"))
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(env, value)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the child test starts");
    let mut out = std::io::BufReader::new(child.stdout.take().expect("its output"));
    let mut line = String::new();
    while !line.contains(ready) {
        line.clear();
        assert!(
            out.read_line(&mut line).expect("its output reads") > 0,
            "the child test {name} exited early"
        );
    }
    child
}
