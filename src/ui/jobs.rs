//! Background work: one job type for everything the app does off the UI thread (query evaluation of
//! large documents, the cut export, imports, auto-tagging, searches, exports).
//!
//! A [`Job`] runs a closure on its own thread with a shared [`Progress`] (units done and total, a
//! note, a cancel flag). The UI polls it once a frame; the result arrives as a value, a panic in the
//! work arrives as an error message (the app never goes down with its worker). [`progress_ui`]
//! draws the bar, the ETA and a Cancel button the same way for every job.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use egui::Ui;

/// Progress shared between a job's worker and the UI.
#[derive(Default)]
pub struct Progress {
    done: AtomicU64,
    total: AtomicU64,
    cancel: AtomicBool,
    note: Mutex<String>,
    ctx: Option<egui::Context>,
}

impl Progress {
    /// Sets the amount of work (files, bytes, frames: the job decides the unit).
    pub fn set_total(&self, total: u64) {
        self.total.store(total, Ordering::Relaxed);
    }

    /// Adds `n` units of finished work.
    pub fn add(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
        if let Some(ctx) = &self.ctx {
            ctx.request_repaint_after(Duration::from_millis(50));
        }
    }

    /// Sets the finished work.
    pub fn set_done(&self, n: u64) {
        self.done.store(n, Ordering::Relaxed);
        if let Some(ctx) = &self.ctx {
            ctx.request_repaint_after(Duration::from_millis(50));
        }
    }

    /// `(done, total)`.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.done.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
        )
    }

    /// Done over total, when the total is known.
    pub fn fraction(&self) -> Option<f32> {
        let (d, t) = self.counts();
        (t > 0).then(|| (d as f64 / t as f64).min(1.0) as f32)
    }

    /// A short text about what the worker is doing now (a file name).
    pub fn set_note(&self, note: impl Into<String>) {
        *self.note.lock().unwrap_or_else(|e| e.into_inner()) = note.into();
    }

    pub fn note(&self) -> String {
        self.note.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Asks the worker to stop; it checks [`Progress::is_cancelled`] (or passes
    /// [`Progress::cancel_flag`] to core functions) and returns early.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// The cancel flag, for core functions that take `&AtomicBool`.
    pub fn cancel_flag(&self) -> &AtomicBool {
        &self.cancel
    }
}

/// A piece of work running on its own thread.
pub struct Job<T> {
    /// What it does, for the progress bar and messages ("import 240 files").
    pub label: String,
    progress: Arc<Progress>,
    rx: mpsc::Receiver<Result<T, String>>,
    started: Instant,
    finished: bool,
}

impl<T: Send + 'static> Job<T> {
    /// Starts `work` on a new thread. With a `ctx`, the UI is woken when progress is made and when
    /// the job ends.
    pub fn spawn(
        label: impl Into<String>,
        ctx: Option<&egui::Context>,
        work: impl FnOnce(&Progress) -> T + Send + 'static,
    ) -> Self {
        let progress = Arc::new(Progress {
            ctx: ctx.cloned(),
            ..Progress::default()
        });
        let (tx, rx) = mpsc::channel();
        let worker = Arc::clone(&progress);
        let label = label.into();
        let spawned = std::thread::Builder::new()
            .name(format!("taglane job: {label}"))
            .spawn(move || {
                let result =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&worker)))
                        .map_err(|p| {
                            let what = p
                                .downcast_ref::<&str>()
                                .map(|s| (*s).to_owned())
                                .or_else(|| p.downcast_ref::<String>().cloned())
                                .unwrap_or_else(|| "unknown panic".to_owned());
                            format!("internal error in a background job: {what}")
                        });
                let _ = tx.send(result);
                if let Some(ctx) = &worker.ctx {
                    ctx.request_repaint();
                }
            });
        if let Err(e) = spawned {
            // No thread: report it as the job's result.
            let (tx, rx2) = mpsc::channel();
            let _ = tx.send(Err(format!("cannot start a background thread: {e}")));
            return Self {
                label,
                progress,
                rx: rx2,
                started: Instant::now(),
                finished: false,
            };
        }
        Self {
            label,
            progress,
            rx,
            started: Instant::now(),
            finished: false,
        }
    }

    /// The result once the work has ended (returned once), `None` while it runs.
    pub fn poll(&mut self) -> Option<Result<T, String>> {
        if self.finished {
            return None;
        }
        match self.rx.try_recv() {
            Ok(r) => {
                self.finished = true;
                Some(r)
            }
            Err(mpsc::TryRecvError::Empty) => None,
            Err(mpsc::TryRecvError::Disconnected) => {
                self.finished = true;
                Some(Err("the background job ended without a result".to_owned()))
            }
        }
    }

    /// Waits for the result (tests and the command line).
    pub fn wait(mut self) -> Result<T, String> {
        if self.finished {
            return Err("the job's result was already taken".to_owned());
        }
        self.finished = true;
        self.rx
            .recv()
            .unwrap_or_else(|_| Err("the background job ended without a result".to_owned()))
    }
}

impl<T> Job<T> {
    pub fn progress(&self) -> &Progress {
        &self.progress
    }

    pub fn cancel(&self) {
        self.progress.cancel();
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Time left, estimated from the fraction done so far.
    pub fn eta(&self) -> Option<Duration> {
        let f = self.progress.fraction()?;
        let spent = self.elapsed().as_secs_f64();
        (f > 0.01 && spent > 0.2).then(|| Duration::from_secs_f64(spent * (1.0 / f as f64 - 1.0)))
    }
}

/// Formats a duration as `4 s` or `2 min 05 s`.
pub fn format_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s} s")
    } else {
        format!("{} min {:02} s", s / 60, s % 60)
    }
}

/// Draws a job's progress bar (label, counts, ETA, note) and a Cancel button. Returns true when
/// Cancel was clicked this frame (the job is already told to stop).
pub fn progress_ui<T>(ui: &mut Ui, job: &Job<T>, unit: &str) -> bool {
    let p = job.progress();
    let (done, total) = p.counts();
    let mut cancelled = false;
    ui.horizontal(|ui| {
        let text = if total > 0 {
            format!("{}: {done} / {total} {unit}", job.label)
        } else {
            format!("{}: {done} {unit}", job.label)
        };
        let text = match job.eta() {
            Some(eta) if !p.is_cancelled() => format!("{text}, {} left", format_duration(eta)),
            _ if p.is_cancelled() => format!("{text} (cancelling)"),
            _ => text,
        };
        let bar = egui::ProgressBar::new(p.fraction().unwrap_or(0.0))
            .text(text)
            .desired_width((ui.available_width() - 80.0).max(120.0));
        ui.add(bar);
        if ui
            .add_enabled(!p.is_cancelled(), egui::Button::new("Cancel"))
            .on_hover_text(format!("Stop: {}", job.label))
            .clicked()
        {
            job.cancel();
            cancelled = true;
        }
    });
    let note = p.note();
    if !note.is_empty() {
        ui.weak(note);
    }
    ui.ctx().request_repaint_after(Duration::from_millis(100));
    cancelled
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_reports_progress_and_its_result() {
        let job = Job::spawn("count", None, |p| {
            p.set_total(10);
            for _ in 0..10 {
                p.add(1);
            }
            42
        });
        let out = job.wait();
        assert_eq!(out, Ok(42));
    }

    #[test]
    fn cancel_reaches_the_worker() {
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let mut job = Job::spawn("wait", None, move |p| {
            go_rx.recv().ok();
            p.is_cancelled()
        });
        job.cancel();
        go_tx.send(()).unwrap();
        let r = loop {
            if let Some(r) = job.poll() {
                break r;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        assert_eq!(r, Ok(true));
        assert!(job.poll().is_none(), "a result is returned once");
    }

    #[test]
    fn a_panic_becomes_an_error_message() {
        let job: Job<u32> = Job::spawn("boom", None, |_| panic!("bad input 7"));
        let e = job.wait().unwrap_err();
        assert!(e.contains("bad input 7"), "{e}");
    }
}
