//! Playback: the playhead and how it moves, the transport bar above the timeline (buttons, frame
//! and time, rate, "go to frame", loop of the selected range) and the status bar.

use egui::Ui;

use crate::core::tags::Range;
use crate::ui::app::{Level, TaglaneApp};
use crate::ui::command::{AppCommand, SimilarCommand};
use crate::ui::keymap::{Action, action_button, tooltip};
use crate::ui::timeline::model;

/// Playback state of the current clip.
#[derive(Debug, Clone, PartialEq)]
pub struct Playback {
    /// Playhead in frames (fractional while playing).
    pub playhead: f64,
    pub playing: bool,
    pub looping: bool,
    pub speed: f32,
    /// The mark-in frame on the active lane, waiting for a mark-out.
    pub mark_in: Option<u32>,
    /// Frames playback loops over instead of the whole clip (the selected range).
    pub loop_range: Option<Range>,
    /// Where playback wrapped from the end back to the start since mark in: `(start, end)` of
    /// the frames looped over (end exclusive). Mark out before mark in then means the range
    /// that played, across the wrap, not the frames between the two that did not.
    pub wrapped: Option<(u32, u32)>,
}

impl Default for Playback {
    fn default() -> Self {
        Self {
            playhead: 0.0,
            playing: false,
            looping: true,
            speed: 1.0,
            mark_in: None,
            loop_range: None,
            wrapped: None,
        }
    }
}

impl Playback {
    /// Keeps the playhead and the loop inside a clip of `frames` frames.
    pub fn clamp_to(&mut self, frames: u32) {
        self.playhead = self
            .playhead
            .clamp(0.0, f64::from(frames.saturating_sub(1)));
        if let Some(r) = self.loop_range
            && r.stop > frames
        {
            self.loop_range = (r.start < frames).then(|| Range::new(r.start, frames));
        }
    }

    /// Moves the playhead by `dt` seconds at `fps` frames per second, wrapping or stopping at the
    /// end of the clip (`frames` frames) or of the looped range.
    pub fn advance(&mut self, dt: f64, fps: f64, frames: u32) {
        // A clip of one frame (a T-pose) has nothing to play: playing stops, whichever clip it
        // started on (it looped over [0, 1), said "Pause" and drew every frame).
        if frames < 2 {
            self.playing = false;
            self.playhead = 0.0;
            return;
        }
        let looping = self.looping || self.loop_range.is_some();
        let (lo, hi) = match self.loop_range {
            // Frames start..stop are shown: the playhead runs over [start, stop).
            Some(r) if r.stop <= frames && r.start < r.stop => {
                (f64::from(r.start), f64::from(r.stop))
            }
            // Looping the clip shows every frame as long as any other, the last too: the
            // playhead runs over [0, frames) (it wrapped at the last frame, which never showed).
            _ if looping => (0.0, f64::from(frames)),
            // Playing once stops on the last frame.
            _ => (0.0, f64::from(frames.saturating_sub(1))),
        };
        let mut p = self.playhead + dt * fps * f64::from(self.speed);
        if p >= hi || p < lo {
            if looping && hi > lo {
                if p >= hi {
                    // The frames shown run to `hi` (the loop range's stop, or the last frame).
                    let end = match self.loop_range {
                        Some(_) => hi as u32,
                        None => frames,
                    };
                    self.wrapped = Some((lo as u32, end));
                }
                p = lo + (p - lo).rem_euclid(hi - lo);
            } else {
                p = hi.min(f64::from(frames.saturating_sub(1)));
                self.playing = false;
            }
        }
        self.playhead = p;
    }
}

/// View state of the transport bar.
#[derive(Debug, Default)]
pub struct TransportBar {
    /// Text of the "go to frame" box.
    pub goto: String,
    /// Why the text does not name a frame, shown beside the box.
    pub goto_error: Option<String>,
    pub focus_goto: bool,
}

/// Parses the "go to frame" box: a frame number, or seconds with an `s` (`2.5s`), within a clip of
/// `frames` frames at `fps`.
pub fn parse_goto(text: &str, frames: u32, fps: f32) -> Result<u32, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("type a frame number (or seconds, like 2.5s)".to_owned());
    }
    let last = frames.saturating_sub(1);
    let frame = if let Some(secs) = t.strip_suffix('s') {
        let s: f64 = secs
            .trim()
            .parse()
            .map_err(|_| format!("`{t}` is not a time; expected seconds like 2.5s"))?;
        if !s.is_finite() || s < 0.0 {
            return Err(format!("`{t}`: a time is 0 s or more"));
        }
        (s * f64::from(fps)).round()
    } else {
        let f: i64 = t
            .parse()
            .map_err(|_| format!("`{t}` is not a frame number; expected 0 to {last}"))?;
        f as f64
    };
    if frame < 0.0 || frame > f64::from(last) {
        return Err(format!("frame {frame} is outside the clip (0 to {last})"));
    }
    Ok(frame as u32)
}

impl TaglaneApp {
    pub(crate) fn advance_playback(&mut self, ctx: &egui::Context) {
        if !self.playback.playing {
            return;
        }
        let frames = self.frames();
        if frames == 0 {
            self.playback.playing = false;
            return;
        }
        let dt = f64::from(ctx.input(|i| i.stable_dt).min(0.1));
        let fps = f64::from(self.fps());
        self.playback.advance(dt, fps, frames);
        ctx.request_repaint();
    }

    /// Applies a playback command; returns it back when it is not one.
    pub(crate) fn playback_command(&mut self, cmd: AppCommand) -> Option<AppCommand> {
        let frames = self.frames();
        let last = f64::from(frames.saturating_sub(1));
        // A jump of the playhead (a click, a step, Go to, an edge, the loop range) ends the run
        // of playback across a wrap: a mark out after it is not at the end of what played.
        if matches!(
            cmd,
            AppCommand::SetPlayhead(_)
                | AppCommand::StepFrames(_)
                | AppCommand::JumpEdge(_)
                | AppCommand::JumpStart
                | AppCommand::JumpEnd
                | AppCommand::LoopSelection
        ) {
            self.playback.wrapped = None;
        }
        match cmd {
            AppCommand::SetPlayhead(f) => self.playback.playhead = f.clamp(0.0, last),
            AppCommand::TogglePlay => {
                let start = self.playback.loop_range.map_or(0.0, |r| f64::from(r.start));
                if !self.playback.playing && self.playback.playhead >= last {
                    self.playback.playhead = start;
                }
                self.playback.playing = !self.playback.playing && frames > 1;
                // Paused on the frame shown, not between two: the readout's frame, its
                // seconds and the pose agree, and marks and edits start from that frame.
                if !self.playback.playing {
                    self.playback.playhead = self.playback.playhead.floor();
                }
            }
            AppCommand::Stop => {
                self.playback.playing = false;
                self.playback.playhead = self.playback.playhead.floor();
            }
            AppCommand::StepFrames(n) => {
                self.playback.playing = false;
                let p = self.playback.playhead.floor() + n as f64;
                self.playback.playhead = p.clamp(0.0, last);
            }
            AppCommand::JumpEdge(forward) => {
                let lanes = (0..self.project.doc.tags.len())
                    .filter(|&t| !self.timeline.is_dimmed(&self.project.doc.tags[t].name));
                let edges = model::edges(&self.project.doc, self.current_clip, lanes);
                let p = self.playback.playhead.floor() as u32;
                let target = if forward {
                    edges.iter().find(|&&e| e > p)
                } else {
                    edges.iter().rev().find(|&&e| e < p)
                };
                if let Some(&e) = target {
                    self.playback.playhead = f64::from(e.min(frames.saturating_sub(1)));
                }
            }
            AppCommand::JumpStart => self.playback.playhead = 0.0,
            AppCommand::JumpEnd => self.playback.playhead = last,
            AppCommand::ToggleLoop => self.playback.looping = !self.playback.looping,
            AppCommand::LoopSelection => self.loop_selection(),
            AppCommand::FocusGoToFrame => self.transport.focus_goto = true,
            AppCommand::SetSpeed(s) => self.playback.speed = s.clamp(0.01, 10.0),
            other => return Some(other),
        }
        None
    }

    fn loop_selection(&mut self) {
        if self.playback.loop_range.take().is_some() {
            self.message(Level::Info, "looping the whole clip");
            return;
        }
        let hull = self
            .selection
            .iter()
            .map(|(_, r)| *r)
            .reduce(|a, b| Range::new(a.start.min(b.start), a.stop.max(b.stop)));
        match hull {
            Some(r) => {
                self.playback.loop_range = Some(r);
                self.playback.playhead = f64::from(r.start);
                self.playback.playing = self.frames() > 1;
                self.message(
                    Level::Info,
                    format!("looping frames {} to {}", r.start, r.stop - 1),
                );
            }
            None => self.message(Level::Info, "select a range to loop it"),
        }
    }

    pub(crate) fn transport_ui(&mut self, ui: &mut Ui) {
        /// Width the "Go to" label and its field need on one row, in points.
        const GOTO_WIDTH: f32 = 130.0;
        let fps = self.fps();
        let frames = self.frames();
        let q = &mut self.queue;
        // Wrapped: with the side panel open the row may not fit, and a row wider than the panel
        // would widen the timeline under the panel.
        ui.horizontal_wrapped(|ui| {
            action_button(ui, "Start", Action::JumpStart, q);
            action_button(ui, "Prev", Action::StepBack, q);
            let play = if self.playback.playing {
                "Pause"
            } else {
                "Play"
            };
            action_button(ui, play, Action::TogglePlay, q);
            action_button(ui, "Next", Action::StepForward, q);
            action_button(ui, "End", Action::JumpEnd, q);
            action_button(ui, "|<", Action::PrevEdge, q);
            action_button(ui, ">|", Action::NextEdge, q);
            // Toggles drawn as buttons (a selectable label that is off looks like plain text).
            if ui
                .add(egui::Button::new("Loop").selected(self.playback.looping))
                .on_hover_text(tooltip(ui.ctx(), Action::ToggleLoop))
                .clicked()
            {
                q.push(AppCommand::ToggleLoop);
            }
            let loop_text = match self.playback.loop_range {
                Some(r) => format!("Looping {}-{}", r.start, r.stop.saturating_sub(1)),
                None => "Loop range".to_owned(),
            };
            if ui
                .add(egui::Button::new(loop_text).selected(self.playback.loop_range.is_some()))
                .on_hover_text(tooltip(ui.ctx(), Action::LoopSelection))
                .clicked()
            {
                q.push(AppCommand::LoopSelection);
            }
            let mut speed = self.playback.speed;
            egui::ComboBox::from_id_salt("speed")
                .selected_text(format!("{} fps, {speed}x", crate::ui::view::fps_text(fps)))
                .show_ui(ui, |ui| {
                    for s in [0.1f32, 0.25, 0.5, 1.0, 2.0] {
                        ui.selectable_value(&mut speed, s, format!("{s}x"));
                    }
                })
                .response
                .on_hover_text("The clip's frame rate and the playback speed");
            if speed != self.playback.speed {
                q.push(AppCommand::SetSpeed(speed));
            }
            ui.separator();
            let f = self.playback.playhead;
            // One label that never breaks inside (the row wraps before it, not between the
            // frame and its seconds), padded to the clip's last frame and duration so it keeps
            // its width while playing.
            let last = frames.saturating_sub(1);
            let secs = |f: f64| format!("{:.3}", f / f64::from(fps));
            let (fw, sw) = (last.to_string().len(), secs(f64::from(last)).len());
            let text = format!("frame {:>fw$.0} / {last}  {:>sw$} s", f.floor(), secs(f));
            ui.add(egui::Label::new(egui::RichText::new(text).monospace()).extend());
            // The label and its field wrap together (a field squeezed into the row's end would
            // be too narrow to type in).
            if ui.available_size_before_wrap().x < GOTO_WIDTH {
                ui.end_row();
            }
            let edit = ui
                .horizontal(|ui| {
                    let label = ui.label("Go to");
                    ui.add(
                        egui::TextEdit::singleline(&mut self.transport.goto)
                            .desired_width(64.0)
                            .hint_text("frame"),
                    )
                    .labelled_by(label.id)
                })
                .inner;
            let edit = edit.on_hover_text(
                tooltip(ui.ctx(), Action::GoToFrame)
                    + "; a frame number or seconds (2.5s), Enter to go",
            );
            if std::mem::take(&mut self.transport.focus_goto) {
                edit.request_focus();
            }
            if edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                match parse_goto(&self.transport.goto, frames, fps) {
                    Ok(f) => {
                        q.push(AppCommand::Stop);
                        q.push(AppCommand::SetPlayhead(f64::from(f)));
                        self.transport.goto_error = None;
                        self.transport.goto.clear();
                    }
                    Err(e) => self.transport.goto_error = Some(e),
                }
            }
            // The explanation stays until the text changes (egui reports the focus lost again
            // on the frame after Enter, which cleared it before it was ever drawn twice).
            if edit.changed() {
                self.transport.goto_error = None;
            }
            if let Some(e) = &self.transport.goto_error {
                ui.colored_label(ui.visuals().error_fg_color, e);
            }
            // Tags and view on a row of their own.
            ui.end_row();
            action_button(ui, "New tag", Action::NewTag, q);
            if let Some(t) = self.active_tag {
                if ui.button("Rename tag").clicked() {
                    q.push(AppCommand::StartRename(t));
                }
                if ui.button("Delete tag").clicked() {
                    q.push(AppCommand::AskDeleteTag(t));
                }
            }
            action_button(ui, "Fit", Action::Fit, q);
        });
    }

    pub(crate) fn status_ui(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            let fps = f64::from(self.fps());
            // The time of the playhead, as the transport bar shows it (between frames while
            // playing), beside the frame it is in.
            let p = self.playback.playhead;
            ui.monospace(format!("frame {:.0}  {:.3} s", p.floor(), p / fps));
            ui.separator();
            let frames_sel: u64 = self.selection.iter().map(|(_, r)| u64::from(r.len())).sum();
            // Markers count too (a selected marker is moved, copied and deleted with the ranges).
            let markers = match self.marker_selection.len() {
                0 => String::new(),
                m => format!(" and {m} marker(s)"),
            };
            ui.label(format!(
                "{} range(s){markers} selected, {} frames",
                self.selection.len(),
                frames_sel
            ));
            if let Some(m) = self.playback.mark_in {
                ui.separator();
                ui.label(format!("in: {m}"));
            }
            // A search of the "Find similar" tab while another tab is in front.
            if self.bottom_tab != crate::ui::bottom_panel::BottomTab::Similar
                && let Some(job) = self.similar.job()
            {
                ui.separator();
                let percent = job.progress().fraction().unwrap_or(0.0) * 100.0;
                if ui
                    .link(format!("Find similar: {percent:.0}%"))
                    .on_hover_text(format!("{}: {}", job.label, job.progress().note()))
                    .clicked()
                {
                    self.queue.push(AppCommand::Similar(SimilarCommand::Show));
                }
            }
            ui.separator();
            if let Some((level, text)) = &self.status {
                let pal = crate::ui::theme::palette(self.prefs.dark);
                let color = match level {
                    Level::Info => ui.visuals().text_color(),
                    Level::Warning => pal.warning,
                    Level::Error => pal.error,
                };
                ui.add(egui::Label::new(egui::RichText::new(text).color(color)).truncate())
                    .on_hover_text(text);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goto_parses_frames_and_seconds_and_explains_the_rest() {
        assert_eq!(parse_goto("12", 100, 30.0), Ok(12));
        assert_eq!(parse_goto(" 2.5s ", 100, 30.0), Ok(75));
        assert!(
            parse_goto("100", 100, 30.0)
                .unwrap_err()
                .contains("0 to 99")
        );
        assert!(parse_goto("-1", 100, 30.0).unwrap_err().contains("outside"));
        assert!(
            parse_goto("abc", 100, 30.0)
                .unwrap_err()
                .contains("not a frame")
        );
        assert!(
            parse_goto("xs", 100, 30.0)
                .unwrap_err()
                .contains("not a time")
        );
        assert!(parse_goto("", 100, 30.0).is_err());
    }

    /// Looping the whole clip shows its last frame for a frame's time, as every other (the
    /// playhead wrapped on reaching it: a 2-frame clip showed only frame 0).
    #[test]
    fn looping_the_clip_shows_its_last_frame() {
        let mut p = Playback {
            playing: true,
            looping: true,
            playhead: 0.0,
            ..Playback::default()
        };
        let mut shown = std::collections::BTreeSet::new();
        for _ in 0..8 {
            p.advance(0.25, 1.0, 2);
            shown.insert(p.playhead.floor() as u32);
            assert!(p.playhead < 2.0, "{}", p.playhead);
        }
        assert_eq!(shown.into_iter().collect::<Vec<_>>(), [0, 1]);
        assert_eq!(p.wrapped, Some((0, 2)));
        assert!(p.playing);
    }

    /// Playing carried over to a clip of one frame stops (it looped over one frame, drawing
    /// every frame, the button saying Pause).
    #[test]
    fn playing_stops_on_a_clip_of_one_frame() {
        let mut p = Playback {
            playing: true,
            looping: true,
            playhead: 37.0,
            ..Playback::default()
        };
        p.advance(0.1, 30.0, 1);
        assert!(!p.playing);
        assert_eq!(p.playhead, 0.0);
    }

    #[test]
    fn playback_loops_over_the_looped_range() {
        let mut p = Playback {
            playing: true,
            looping: false,
            loop_range: Some(Range::new(10, 20)),
            playhead: 19.5,
            ..Playback::default()
        };
        p.advance(1.0, 1.0, 100);
        assert!((p.playhead - 10.5).abs() < 1e-9, "{}", p.playhead);
        assert!(p.playing);
        // Without a loop range and without looping, playback stops at the last frame.
        p.loop_range = None;
        p.playhead = 98.5;
        p.advance(1.0, 1.0, 100);
        assert_eq!(p.playhead, 99.0);
        assert!(!p.playing);
    }
}
