//! The Pose tab of the right panel (`crate::ui::side_panel` holds the panel, the 3D viewport over
//! its tabs and the Compression tab): sampling, blending, root motion, joint curves.
//!
//! The sampled model-space joint positions are kept in [`PoseView`] (`joint_positions` for what is
//! shown, `base_positions` for the current clip alone) so tests can check them.

pub mod model;
pub mod viewport;

use std::sync::Arc;

use egui::Ui;
use egui_plot::{Legend, Line, Plot, PlotPoints, Points, VLine};
use glam::Vec3;

use self::model::{
    Camera, ClipPositions, MaskKind, PoseBuffers, TimeMap, Trajectories, best_match_frame,
    blended_trajectories, bounds, build_mask, motion_joint, rotation_curve_deg, sample_model,
    track_at,
};
use crate::core::anim::{Clip, Extrapolation, RootMotionTrack, RotationInterp, SampleSettings};
use crate::core::tags::ClipId;
use crate::ui::anim_cache::Loaded;
use crate::ui::theme;
use crate::ui::view::ClipContext;

/// How clip B's time follows clip A's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncMode {
    /// The same fraction of each clip's duration.
    #[default]
    NormalizedTime,
    /// The starts of the first ranges of this tag (index into the document's tags) are aligned.
    Tag(usize),
    /// The frame of B whose root is closest to A's at the playhead (position and facing).
    BestMatch,
}

/// Blend settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlendSettings {
    pub enabled: bool,
    /// The second clip.
    pub clip_b: Option<ClipId>,
    /// Weight of clip B, 0 to 1.
    pub weight: f32,
    pub mask: MaskKind,
    pub sync: SyncMode,
    /// Best match: 1 = position only, 0 = facing only.
    pub position_bias: f32,
}

impl Default for BlendSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            clip_b: None,
            weight: 0.5,
            mask: MaskKind::None,
            sync: SyncMode::NormalizedTime,
            position_bias: 0.5,
        }
    }
}

/// How bones are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BoneStyle {
    /// Capsules whose width follows the bone's length, nearer bones over farther ones.
    #[default]
    Volumes,
    /// Thin lines.
    Lines,
}

/// Display options of the viewport.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Display {
    pub bones: BoneStyle,
    /// Ghost poses before and after the playhead (0: off).
    pub onion_count: usize,
    /// Frames between two onion-skin poses.
    pub onion_step: u32,
    /// The joint whose path is drawn (`None`: the root's path on the ground).
    pub trail_joint: Option<usize>,
}

impl Default for Display {
    fn default() -> Self {
        Self {
            bones: BoneStyle::Volumes,
            onion_count: 0,
            onion_step: 5,
            trail_joint: None,
        }
    }
}

/// The clip and joint a cached rotation curve belongs to.
/// A joint's rotation curve is of a clip as loaded: (clip, load version, joint).
type CurveKey = (ClipId, u64, usize);

/// The inputs a cached set of root-motion trajectories was computed from.
type TrajectoryKey = (u64, u64, u64, u64, u32);

/// State of the pose preview.
pub struct PoseView {
    pub camera: Camera,
    /// Keep the camera's target over the character's root (panning turns it off).
    pub follow: bool,
    pub rotation: RotationInterp,
    pub pre: Extrapolation,
    pub post: Extrapolation,
    pub blend: BlendSettings,
    pub hovered: Option<usize>,
    pub selected: Option<usize>,
    /// Where the viewport was drawn last frame (for tests and pointer mapping).
    pub viewport_rect: Option<egui::Rect>,
    /// Model-space positions of the pose shown (blended when blending), file units.
    pub joint_positions: Vec<Vec3>,
    /// Model-space positions of the current clip alone at the playhead.
    pub base_positions: Vec<Vec3>,
    /// Model-space positions of clip B alone at its synced time (empty without a blend).
    pub b_positions: Vec<Vec3>,
    /// Time of the current clip at the playhead, seconds.
    pub time_s: f64,
    /// Time of clip B, seconds, when blending.
    pub time_b_s: Option<f64>,
    /// Best-match frame of B and its score, when syncing by best match.
    pub best_match: Option<(usize, f32)>,
    /// Why something could not be shown (load error, skeleton mismatch, ...).
    pub message: Option<String>,
    /// The current clip could not be loaded: the error.
    pub load_error: Option<String>,
    pub trajectories: Option<Trajectories>,
    /// Ground trail of the current clip's motion joint.
    pub trail: Vec<Vec3>,
    /// Frames between two points of [`Self::trail`] (frame `f` is near point `f / trail_stride`).
    pub trail_stride: usize,
    /// Bones, onion skin, joint trail.
    pub display: Display,
    /// Poses around the playhead for the onion skin: (frame offset, positions).
    pub onion: Vec<(i64, Vec<Vec3>)>,
    /// Path of [`Display::trail_joint`] over the clip, and its sample at the playhead.
    pub joint_trail: Vec<Vec3>,
    pub joint_trail_index: usize,
    /// The joint left out of drawing and framing (a root standing still at the origin).
    pub static_root: Option<usize>,
    /// The joint the camera follows (the one carrying the motion).
    pub follow_joint: usize,
    /// Joint positions over the clip, for framing and trails: (clip, load version) and samples.
    clip_positions: Option<((ClipId, u64), Arc<ClipPositions>)>,
    buffers: PoseBuffers,
    /// The clip (and load) the camera was last framed on: another take, or the same clip
    /// re-linked or in another project, is framed again.
    framed_clip: Option<(ClipId, u64)>,
    /// The clip list clip B was last seen on: it follows its clip when the list changes
    /// ([`PoseView::follow_clip_b`]).
    clip_b_seen: Option<crate::ui::clip_follow::ClipsSeen>,
    trail_key: Option<(ClipId, u64)>,
    tracks: Vec<(u64, Arc<RootMotionTrack>)>,
    curve: Option<(CurveKey, [Vec<f32>; 3])>,
    trajectories_key: Option<TrajectoryKey>,
}

impl Default for PoseView {
    fn default() -> Self {
        Self {
            camera: Camera::default(),
            follow: true,
            rotation: RotationInterp::Slerp,
            pre: Extrapolation::Clamp,
            post: Extrapolation::Clamp,
            blend: BlendSettings::default(),
            hovered: None,
            selected: None,
            viewport_rect: None,
            joint_positions: Vec::new(),
            base_positions: Vec::new(),
            b_positions: Vec::new(),
            time_s: 0.0,
            time_b_s: None,
            best_match: None,
            message: None,
            load_error: None,
            trajectories: None,
            trail: Vec::new(),
            trail_stride: 1,
            display: Display::default(),
            onion: Vec::new(),
            joint_trail: Vec::new(),
            joint_trail_index: 0,
            static_root: None,
            follow_joint: 0,
            clip_positions: None,
            buffers: PoseBuffers::default(),
            framed_clip: None,
            clip_b_seen: None,
            trail_key: None,
            tracks: Vec::new(),
            curve: None,
            trajectories_key: None,
        }
    }
}

impl PoseView {
    /// Sample settings from the view's choices.
    pub fn sample_settings(&self) -> SampleSettings {
        SampleSettings {
            pre: self.pre,
            post: self.post,
            rotation: self.rotation,
        }
    }

    /// Another project replaced the open one: clip B and the sync tag were numbers in the old
    /// one, and the camera and the joint curve were of its clips.
    pub fn forget_project(&mut self) {
        self.blend.clip_b = None;
        if matches!(self.blend.sync, SyncMode::Tag(_)) {
            self.blend.sync = SyncMode::NormalizedTime;
        }
        self.clip_b_seen = None;
        self.framed_clip = None;
        self.curve = None;
        self.selected = None;
    }

    /// Once a frame: clip B follows its clip (by name, or in place for a rename) when the clip
    /// list changes, and is let go when its clip is gone; by number, the blend took whichever
    /// clip took the place. (The sync tag follows its tag with the selection, in
    /// `TaglaneApp::after_structure_change`.)
    pub fn follow_clip_b(&mut self, doc: &crate::core::tags::TagDocument) {
        let mut ids: Vec<ClipId> = self.blend.clip_b.into_iter().collect();
        if crate::ui::clip_follow::follow_clips(&mut self.clip_b_seen, &mut ids, doc) {
            self.blend.clip_b = ids.first().copied();
        }
    }

    fn track(&mut self, clip: &Loaded) -> Option<Arc<RootMotionTrack>> {
        let key = clip.version;
        if let Some((_, t)) = self.tracks.iter().find(|(k, _)| *k == key) {
            return Some(Arc::clone(t));
        }
        let t = Arc::new(RootMotionTrack::new(clip, motion_joint(clip)).ok()?);
        self.tracks.push((key, Arc::clone(&t)));
        if self.tracks.len() > 8 {
            self.tracks.remove(0);
        }
        Some(t)
    }

    /// Samples the current clip (and blends clip B) at `input.playhead`, filling the exposed
    /// positions.
    pub fn update(&mut self, input: &ClipContext<'_>, a: &Loaded, b: Option<&Loaded>) {
        self.message = None;
        self.load_error = None;
        let settings = self.sample_settings();
        let fps = f64::from(a.fps.max(1e-3));
        self.time_s = input.playhead / fps;
        if let Err(e) = sample_model(a, self.time_s, &settings, &mut self.buffers) {
            self.message = Some(format!("cannot sample {}: {e}", a.name));
            self.joint_positions.clear();
            self.base_positions.clear();
            return;
        }
        self.base_positions.clear();
        self.base_positions
            .extend(self.buffers.model.iter().map(|t| t.translation));
        self.joint_positions.clone_from(&self.base_positions);
        self.b_positions.clear();
        self.time_b_s = None;
        self.best_match = None;
        if self.selected.is_some_and(|j| j >= a.joint_count()) {
            self.selected = None;
        }

        // Trail of the motion joint, and which joint moves the clip (each a scan of every frame:
        // once a load, not every frame).
        let key = (input.clip, a.version);
        if self.trail_key != Some(key) {
            // At most about 2,048 points, as the joint trail: one a frame made the viewport project
            // and draw 10,000 to 100,000 points every frame on long takes.
            let positions = self
                .track(a)
                .map(|t| t.positions.clone())
                .unwrap_or_default();
            self.trail_stride = positions.len().div_ceil(TRAIL_POINTS).max(1);
            self.trail = positions
                .iter()
                .step_by(self.trail_stride)
                .copied()
                .collect();
            self.static_root = model::static_root(a);
            self.follow_joint = motion_joint(a);
            self.trail_key = Some(key);
        }
        let positions_key = (input.clip, a.version);
        if self.clip_positions.as_ref().map(|(k, _)| *k) != Some(positions_key) {
            self.clip_positions = Some((positions_key, Arc::new(ClipPositions::new(a))));
        }
        // The chosen joint's path over the clip.
        self.joint_trail.clear();
        if let (Some(j), Some((_, cp))) = (self.display.trail_joint, &self.clip_positions)
            && j < a.joint_count()
        {
            self.joint_trail = cp.track(j);
            let f = (self.time_s * fps).round().max(0.0) as usize;
            self.joint_trail_index =
                (f / cp.stride.max(1)).min(self.joint_trail.len().saturating_sub(1));
        }
        // Onion skin: poses a few steps before and after the playhead.
        self.onion.clear();
        let step = f64::from(self.display.onion_step.max(1)) / fps;
        for k in 1..=self.display.onion_count as i64 {
            for dir in [-1i64, 1] {
                let t = self.time_s + (dir * k) as f64 * step;
                if t < 0.0 || t > f64::from(a.duration_s()) {
                    continue;
                }
                let mut buffers = PoseBuffers::default();
                if sample_model(a, t, &settings, &mut buffers).is_ok() {
                    self.onion.push((
                        dir * k * i64::from(self.display.onion_step.max(1)),
                        buffers.model.iter().map(|t| t.translation).collect(),
                    ));
                }
            }
        }
        if self.framed_clip != Some((input.clip, a.version)) {
            self.frame_character();
            self.framed_clip = Some((input.clip, a.version));
        }
        if self.follow
            && let Some(root) = self.base_positions.get(self.follow_joint)
        {
            self.camera.target.x = root.x;
            self.camera.target.z = root.z;
        }

        let Some(b) = b.filter(|_| self.blend.enabled) else {
            self.trajectories = None;
            return;
        };
        if b.joint_count() != a.joint_count() {
            self.message = Some(format!(
                "cannot blend: {} has {} joints, {} has {}",
                a.name,
                a.joint_count(),
                b.name,
                b.joint_count()
            ));
            self.trajectories = None;
            return;
        }
        let (Some(ta), Some(tb)) = (self.track(a), self.track(b)) else {
            self.message = Some("cannot compute root motion".into());
            return;
        };
        let map = match self.blend.sync {
            SyncMode::NormalizedTime => {
                TimeMap::normalized(f64::from(a.duration_s()), f64::from(b.duration_s()))
            }
            SyncMode::Tag(tag) => {
                let first = |clip: ClipId| {
                    input
                        .project
                        .doc
                        .tags
                        .get(tag)
                        .and_then(|t| t.ranges.get(&clip))
                        .and_then(|r| r.first())
                        .map(|r| r.start)
                };
                let b_id = self.blend.clip_b.unwrap_or(input.clip);
                match (first(input.clip), first(b_id)) {
                    (Some(sa), Some(sb)) => TimeMap::aligned(
                        f64::from(sa) / fps,
                        f64::from(sb) / f64::from(b.fps.max(1e-3)),
                    ),
                    _ => {
                        self.message = Some(
                            "the sync tag has no range in one of the clips: using normalised time"
                                .into(),
                        );
                        TimeMap::normalized(f64::from(a.duration_s()), f64::from(b.duration_s()))
                    }
                }
            }
            SyncMode::BestMatch => match track_at(&ta, self.time_s) {
                Some((pos, heading)) => {
                    let m = best_match_frame(pos, heading, &tb, self.blend.position_bias);
                    self.best_match = m;
                    let tb_s = m.map_or(0.0, |(f, _)| f as f64 / f64::from(b.fps.max(1e-3)));
                    TimeMap::aligned(self.time_s, tb_s)
                }
                None => TimeMap::IDENTITY,
            },
        };
        let time_b = map.apply(self.time_s);
        self.time_b_s = Some(time_b);
        let mask = match build_mask(a, self.blend.mask) {
            Ok(m) => m,
            Err(e) => {
                self.message = Some(format!("mask: {e}"));
                None
            }
        };
        let align = motion_joint(a);
        let mut bb = PoseBuffers::default();
        if sample_model(b, time_b, &settings, &mut bb).is_ok() {
            // Drawn over A's place on the ground, like the blend.
            let shift = match (self.base_positions.get(align), bb.model.get(align)) {
                (Some(pa), Some(pb)) => {
                    Vec3::new(pa.x - pb.translation.x, 0.0, pa.z - pb.translation.z)
                }
                _ => Vec3::ZERO,
            };
            self.b_positions
                .extend(bb.model.iter().map(|t| t.translation + shift));
        }
        match model::blend_model(
            a,
            self.time_s,
            b,
            time_b,
            &settings,
            self.blend.weight,
            mask.as_deref(),
            Some(align),
            &mut bb,
        ) {
            Ok(()) => {
                self.joint_positions.clear();
                self.joint_positions
                    .extend(bb.model.iter().map(|t| t.translation));
            }
            Err(e) => self.message = Some(format!("cannot blend: {e}")),
        }
        // Recomputed only when an input changes (best-match sync changes the map as it goes).
        let key = (
            a.version,
            b.version,
            map.scale.to_bits(),
            map.offset_s.to_bits(),
            self.blend.weight.to_bits(),
        );
        if self.trajectories_key != Some(key) || self.trajectories.is_none() {
            self.trajectories =
                blended_trajectories(&ta, &tb, map, self.blend.weight, self.time_s).ok();
            self.trajectories_key = Some(key);
        }
        if let Some(tr) = &mut self.trajectories {
            let i = (self.time_s * f64::from(ta.fps)).round().max(0.0) as usize;
            tr.playhead_index = i.min(tr.a.len().saturating_sub(1));
        }
    }

    /// Screen position of joint `joint` of the shown pose in the last drawn viewport.
    pub fn joint_screen_pos(&self, joint: usize) -> Option<egui::Pos2> {
        let rect = self.viewport_rect?;
        let p = *self.joint_positions.get(joint)?;
        let vp = self
            .camera
            .clip_from_model(rect.width() / rect.height().max(1.0));
        let q = self.camera.project(
            &vp,
            p,
            glam::Vec2::new(rect.min.x, rect.min.y),
            glam::Vec2::new(rect.width(), rect.height()),
        )?;
        Some(egui::pos2(q.x, q.y))
    }

    /// Frames the character: while following, the body's extent over the whole clip around the
    /// moving joint (so it stays framed as it walks); otherwise everything the skeleton covers over
    /// the clip. A root standing still at the origin is left out either way, and the ground under
    /// the character is included.
    pub fn frame_character(&mut self) {
        let skip = self.static_root;
        let framed = self.clip_positions.as_ref().and_then(|(_, cp)| {
            if self.follow {
                let (lo, hi) = cp.body_extent(self.follow_joint, skip)?;
                let at = self.base_positions.get(self.follow_joint).copied()?;
                let at = Vec3::new(at.x, 0.0, at.z);
                Some((lo + at, hi + at))
            } else {
                cp.bounds(skip)
            }
        });
        let framed = framed.or_else(|| {
            let pts: Vec<Vec3> = self
                .joint_positions
                .iter()
                .enumerate()
                .filter(|(j, _)| Some(*j) != skip)
                .map(|(_, p)| *p)
                .collect();
            bounds(&pts)
        });
        if let Some((mut lo, hi)) = framed {
            lo.y = lo.y.min(0.0);
            self.camera.frame(lo, hi);
        }
    }
}

/// A 0..1 slider filling the row (fine control in a narrow panel), with a typed-value box beside
/// it, and the mouse wheel stepping it by `step` while hovered.
fn wide_slider(ui: &mut Ui, value: &mut f32, step: f32) -> egui::Response {
    ui.spacing_mut().slider_width = (ui.available_width() - 70.0).max(120.0);
    let r = ui.add(
        egui::Slider::new(value, 0.0..=1.0)
            .step_by(f64::from(step) / 10.0)
            .max_decimals(3),
    );
    if r.hovered() {
        // One step per wheel notch; the panel does not scroll meanwhile.
        let notches: f32 = ui.input_mut(|i| {
            i.smooth_scroll_delta.y = 0.0;
            i.raw
                .events
                .iter()
                .filter_map(|e| match e {
                    egui::Event::MouseWheel { delta, .. } => Some(delta.y.signum()),
                    _ => None,
                })
                .sum()
        });
        if notches != 0.0 {
            *value = (*value + step * notches).clamp(0.0, 1.0);
        }
    }
    r.on_hover_text("Drag, type a value in the box, or use the mouse wheel")
}

/// Bones, onion skin and the joint trail.
fn display_ui(ui: &mut Ui, clip: &Clip, display: &mut Display) {
    // Rows wrap rather than widen the panel over the timeline in a narrow window.
    ui.horizontal_wrapped(|ui| {
        ui.label("Bones");
        ui.selectable_value(&mut display.bones, BoneStyle::Volumes, "volumes");
        ui.selectable_value(&mut display.bones, BoneStyle::Lines, "lines");
        ui.separator();
        let label = ui.label("Onion skin");
        ui.add(egui::DragValue::new(&mut display.onion_count).range(0..=5))
            .labelled_by(label.id)
            .on_hover_text("Ghost poses before and after the playhead (0: off)");
        let every = ui.label("every");
        ui.add(
            egui::DragValue::new(&mut display.onion_step)
                .range(1..=120)
                .suffix(" f"),
        )
        .labelled_by(every.id)
        .on_hover_text("Frames between two ghost poses");
    });
    ui.horizontal(|ui| {
        let text = display
            .trail_joint
            .and_then(|j| clip.skeleton.names.get(j))
            .map_or("root on the ground".to_owned(), |n| format!("path of {n}"));
        egui::ComboBox::from_label("Trail")
            .selected_text(text)
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut display.trail_joint, None, "root on the ground");
                for (j, n) in clip.skeleton.names.iter().enumerate() {
                    ui.selectable_value(&mut display.trail_joint, Some(j), format!("path of {n}"));
                }
            });
    });
}

/// The most points of the root trail drawn (a long take's trail is thinned to about this).
const TRAIL_POINTS: usize = 2048;

pub fn pose_tab_ui(ui: &mut Ui, input: &ClipContext<'_>, clip: &Loaded, pose: &mut PoseView) {
    ui.horizontal(|ui| {
        ui.label("Rotation");
        ui.selectable_value(&mut pose.rotation, RotationInterp::Slerp, "slerp");
        ui.selectable_value(&mut pose.rotation, RotationInterp::Nlerp, "nlerp");
    });
    ui.horizontal_wrapped(|ui| {
        for (label, mode) in [
            ("Before start", &mut pose.pre),
            ("After end", &mut pose.post),
        ] {
            ui.label(label);
            ui.selectable_value(mode, Extrapolation::Clamp, "clamp");
            ui.selectable_value(mode, Extrapolation::Loop, "loop");
        }
    });
    ui.label(format!(
        "{} joints, {} frames at {} fps, t = {:.3} s, 1 unit = {} cm",
        clip.joint_count(),
        clip.frame_count,
        crate::ui::view::fps_text(clip.fps),
        pose.time_s,
        clip.unit_cm
    ));
    let height = pose
        .clip_positions
        .as_ref()
        .filter(|(k, _)| k.0 == input.clip)
        .and_then(|(_, cp)| cp.height_units);
    if let Some(w) = model::unit_warning(height, clip.unit_cm) {
        ui.add(egui::Label::new(egui::RichText::new(w).color(ui.visuals().warn_fg_color)).wrap());
    }
    display_ui(ui, clip, &mut pose.display);
    ui.separator();

    ui.checkbox(&mut pose.blend.enabled, "Blend with a second clip");
    ui.add_enabled_ui(pose.blend.enabled, |ui| {
        let doc = &input.project.doc;
        let current = pose
            .blend
            .clip_b
            .and_then(|b| doc.clips.get(b as usize))
            .map_or("(choose)", |c| c.name.as_str())
            .to_owned();
        egui::ComboBox::from_label("Clip B")
            .selected_text(current)
            .show_ui(ui, |ui| {
                for (i, c) in doc.clips.iter().enumerate() {
                    ui.selectable_value(&mut pose.blend.clip_b, Some(i as ClipId), &c.name);
                }
            });
        ui.horizontal(|ui| {
            let label = ui.label("Blend weight");
            wide_slider(ui, &mut pose.blend.weight, 0.01).labelled_by(label.id);
        });
        let mask_text = match pose.blend.mask {
            MaskKind::None => "whole body".to_owned(),
            MaskKind::UpperBody => "upper body".to_owned(),
            MaskKind::LowerBody => "lower body".to_owned(),
            MaskKind::Subtree(j) => format!(
                "subtree of {}",
                clip.skeleton.names.get(j).map_or("?", String::as_str)
            ),
        };
        egui::ComboBox::from_label("Bone mask")
            .selected_text(mask_text)
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut pose.blend.mask, MaskKind::None, "whole body");
                ui.selectable_value(&mut pose.blend.mask, MaskKind::UpperBody, "upper body");
                ui.selectable_value(&mut pose.blend.mask, MaskKind::LowerBody, "lower body");
                for (j, n) in clip.skeleton.names.iter().enumerate() {
                    ui.selectable_value(
                        &mut pose.blend.mask,
                        MaskKind::Subtree(j),
                        format!("subtree of {n}"),
                    );
                }
            });
        let sync_text = match pose.blend.sync {
            SyncMode::NormalizedTime => "normalised time".to_owned(),
            SyncMode::Tag(t) => format!("tag {}", doc.tags.get(t).map_or("?", |t| t.name.as_str())),
            SyncMode::BestMatch => "best match".to_owned(),
        };
        egui::ComboBox::from_label("Sync")
            .selected_text(sync_text)
            .show_ui(ui, |ui| {
                ui.selectable_value(
                    &mut pose.blend.sync,
                    SyncMode::NormalizedTime,
                    "normalised time",
                );
                ui.selectable_value(&mut pose.blend.sync, SyncMode::BestMatch, "best match");
                for (i, t) in doc.tags.iter().enumerate() {
                    ui.selectable_value(
                        &mut pose.blend.sync,
                        SyncMode::Tag(i),
                        format!("tag {}", t.name),
                    );
                }
            });
        if pose.blend.sync == SyncMode::BestMatch {
            ui.horizontal(|ui| {
                let label = ui.label("Position / facing bias");
                wide_slider(ui, &mut pose.blend.position_bias, 0.01).labelled_by(label.id);
            });
        }
        if let Some(tb) = pose.time_b_s {
            let mut s = format!("clip B at t = {tb:.3} s");
            if let Some((f, score)) = pose.best_match {
                s += &format!(" (best match frame {f}, score {score:.3})");
            }
            ui.label(s);
        }
    });

    if let Some(tr) = &pose.trajectories {
        ui.separator();
        ui.label("Root motion (top view): A, B and their lerp / nlerp / slerp blends");
        let xz = |v: &[Vec3]| -> PlotPoints<'static> {
            v.iter().map(|p| [f64::from(p.x), f64::from(p.z)]).collect()
        };
        Plot::new("root_motion_plot")
            // The wheel scrolls the panel; Ctrl+wheel zooms, a drag pans, a double click resets.
            .allow_scroll(false)
            .height(200.0)
            .data_aspect(1.0)
            .legend(Legend::default())
            .show(ui, |plot| {
                let series = [
                    ("A", &tr.a),
                    ("B", &tr.b),
                    ("lerp", &tr.lerp),
                    ("nlerp", &tr.nlerp),
                    ("slerp", &tr.slerp),
                ];
                for (k, (name, pts)) in series.into_iter().enumerate() {
                    let w = if k < 2 { 1.0 } else { 2.0 };
                    plot.line(
                        Line::new(name, xz(pts))
                            .color(theme::PLOT_SERIES[k])
                            .width(w),
                    );
                    if let Some(p) = pts.get(tr.playhead_index) {
                        plot.points(
                            Points::new(name, vec![[f64::from(p.x), f64::from(p.z)]])
                                .color(theme::PLOT_SERIES[k])
                                .radius(3.0),
                        );
                    }
                }
            });
        let len = |v: &[Vec3]| v.windows(2).map(|w| (w[1] - w[0]).length()).sum::<f32>();
        ui.label(format!(
            "path length: A {:.1}, B {:.1}, lerp {:.1}, nlerp {:.1}, slerp {:.1}",
            len(&tr.a),
            len(&tr.b),
            len(&tr.lerp),
            len(&tr.nlerp),
            len(&tr.slerp)
        ));
    }

    ui.separator();
    match pose.selected {
        None => {
            ui.weak("Hover a joint for its name; click one to see its rotation curve.");
        }
        Some(j) => {
            let name = clip.skeleton.names.get(j).cloned().unwrap_or_default();
            ui.label(format!(
                "Joint {j}: {name}, local rotation (Euler Z-Y-X, degrees)"
            ));
            let key = (input.clip, clip.version, j);
            if pose.curve.as_ref().map(|c| c.0) != Some(key) {
                pose.curve = Some((key, rotation_curve_deg(clip, j)));
            }
            if let Some((_, curves)) = &pose.curve {
                let frame = pose.time_s * f64::from(clip.fps);
                Plot::new("joint_curve_plot")
                    // The wheel scrolls the panel; Ctrl+wheel zooms, a drag pans, a double click resets.
                    .allow_scroll(false)
                    .height(160.0)
                    .legend(Legend::default())
                    .show(ui, |plot| {
                        for (k, (c, name)) in curves.iter().zip(["X", "Y", "Z"]).enumerate() {
                            let pts: PlotPoints<'_> = c
                                .iter()
                                .enumerate()
                                .map(|(f, v)| [f as f64, f64::from(*v)])
                                .collect();
                            plot.line(Line::new(name, pts).color(theme::PLOT_SERIES[k + 2]));
                        }
                        plot.vline(VLine::new("playhead", frame).color(theme::PLOT_SERIES[5]));
                    });
            }
        }
    }
}
