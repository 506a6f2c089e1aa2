//! The right panel: the 3D viewport over its tabs, "Pose" (sampling, blending, root motion, joint
//! curves, see [`crate::ui::pose`]) and "Compression" (see [`crate::ui::compression`]). It owns
//! both tabs' state and the loaded animations, so the tabs never import each other.

use egui::Ui;

use crate::ui::anim_cache::{AnimCache, AnimState};
use crate::ui::command::AppCommand;
use crate::ui::compression::CompressionView;
use crate::ui::pose::model::ViewDir;
use crate::ui::pose::{PoseView, pose_tab_ui, viewport};
use crate::ui::theme;
use crate::ui::view::ClipContext;

/// Tabs under the viewport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SideTab {
    #[default]
    Pose,
    Compression,
}

/// State of the right panel.
#[derive(Default)]
pub struct SidePanel {
    pub tab: SideTab,
    pub pose: PoseView,
    pub compression: CompressionView,
    /// The animation of the project's clips, loaded on first use.
    pub anim: AnimCache,
}

impl SidePanel {
    /// Draws the viewport and the open tab.
    pub fn ui(&mut self, ui: &mut Ui, input: &ClipContext<'_>, queue: &mut Vec<AppCommand>) {
        let tab = &mut self.tab;
        let pose = &mut self.pose;
        let comp = &mut self.compression;
        let cache = &mut self.anim;
        comp.poll(ui.ctx(), input.project);
        cache.repaint_on_load(ui.ctx());
        let clip_a = match cache.fetch(input.project, input.clip) {
            AnimState::Ready(c) => c,
            AnimState::Pending => {
                let name = input
                    .project
                    .doc
                    .clips
                    .get(input.clip as usize)
                    .map_or("", |c| c.name.as_str());
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(format!("Loading the animation of {name}…"));
                });
                ui.weak("It loads in the background; the timeline works meanwhile.");
                return;
            }
            AnimState::Failed(e) => {
                pose.load_error = Some(e.clone());
                pose.joint_positions.clear();
                pose.base_positions.clear();
                ui.heading("Pose");
                ui.colored_label(theme::palette(input.dark).error, e);
                if ui.button("Re-link").clicked() {
                    queue.push(AppCommand::Relink {
                        clip: input.clip,
                        path: None,
                    });
                }
                ui.separator();
                comp.compression_ui(ui, input, None, queue);
                return;
            }
        };
        let clip_b = pose
            .blend
            .clip_b
            .filter(|_| pose.blend.enabled)
            .map(|b| cache.fetch(input.project, b));
        pose.update(input, &clip_a, clip_b.as_ref().and_then(AnimState::ready));
        match &clip_b {
            Some(AnimState::Failed(e)) => pose.message = Some(format!("clip B: {e}")),
            Some(AnimState::Pending) => pose.message = Some("clip B: loading…".to_owned()),
            _ => {}
        }

        // Camera buttons (wrapped: the hint goes under them in a narrow panel instead of
        // widening it).
        ui.horizontal_wrapped(|ui| {
            if ui
                .button("Frame")
                .on_hover_text("Frame the character")
                .clicked()
            {
                pose.frame_character();
            }
            for (label, v) in [
                ("Front", ViewDir::Front),
                ("Side", ViewDir::Side),
                ("Top", ViewDir::Top),
            ] {
                if ui.button(label).clicked() {
                    pose.camera.set_view(v);
                }
            }
            ui.toggle_value(&mut pose.follow, "Follow");
            ui.weak("drag: orbit, shift/middle drag: pan, wheel: zoom");
        });

        // Compression ghost and error colours, when that tab is open.
        let ghost = (*tab == SideTab::Compression)
            .then(|| comp.ghost(&clip_a, input.clip, pose.time_s, &pose.sample_settings()))
            .flatten();
        let (joints, overlay) = match &ghost {
            Some(g) => (
                &pose.base_positions,
                Some((
                    g.positions.as_slice(),
                    theme::viewport_palette(input.dark).ghost,
                )),
            ),
            None => (
                &pose.joint_positions,
                (pose.blend.enabled && !pose.b_positions.is_empty()).then(|| {
                    (
                        pose.b_positions.as_slice(),
                        theme::viewport_palette(input.dark).blend_input,
                    )
                }),
            ),
        };
        // Another tool's pose (the "Find similar" query aligned on a match), with its skeleton.
        let tool_overlay = input.overlay.filter(|_| overlay.is_none());
        let overlay = overlay.or(tool_overlay.map(|o| (o.positions.as_slice(), o.color)));
        let trail_index = ((pose.time_s * f64::from(clip_a.fps)).round().max(0.0) as usize)
            / pose.trail_stride.max(1);
        let height = (ui.available_height() * 0.4).clamp(160.0, 420.0);
        let width = ui.available_width();
        let scene = viewport::Scene {
            parents: &clip_a.skeleton.parents,
            names: &clip_a.skeleton.names,
            joints,
            joint_colors: ghost.as_ref().map(|g| g.colors.as_slice()),
            overlay,
            overlay_parents: tool_overlay.map(|o| o.parents.as_slice()),
            trail: &pose.trail,
            trail_index,
            dark: input.dark,
            bones: pose.display.bones,
            onion: &pose.onion,
            joint_trail: &pose.joint_trail,
            joint_trail_index: pose.joint_trail_index,
            skip_joint: pose.static_root,
            planted: input.planted,
            unit_cm: clip_a.unit_cm,
        };
        let out = viewport::viewport_ui(
            ui,
            egui::vec2(width, height),
            &mut pose.camera,
            &scene,
            pose.selected,
        );
        pose.viewport_rect = Some(out.rect);
        if out.panned {
            pose.follow = false;
        }
        pose.hovered = out.hovered;
        if let Some(c) = out.clicked {
            pose.selected = c;
        }
        // The captions of what is overlaid (the ghost of a compression candidate, a tool's
        // overlay) are drawn inside the viewport, at its top left: shown under it, they pushed
        // the Pose/Compression tabs down when they appeared, so a second click missed them.
        let mut captions: Vec<String> = Vec::new();
        if let Some(g) = &ghost {
            let max = g.errors_cm.iter().copied().fold(0.0f32, f32::max);
            let mut text = format!(
                "Ghost: candidate decoded (x{} error); joints coloured by error now (max {max:.4} cm)",
                comp.ghost_scale
            );
            if let (Some(j), Some(e)) =
                (pose.hovered, pose.hovered.and_then(|j| g.errors_cm.get(j)))
            {
                let name = clip_a.skeleton.names.get(j).map_or("?", String::as_str);
                text += &format!("; {name}: {e:.4} cm");
            }
            captions.push(text);
        }
        if let Some(o) = tool_overlay {
            captions.push(o.label.clone());
        }
        if !captions.is_empty() {
            // An area of its own: over the viewport, out of the panel's layout, and read by
            // screen readers (and the UI tests) as labels.
            let width = (out.rect.width() - 16.0).max(40.0);
            egui::Area::new(ui.scope_id().with("viewport_captions"))
                .fixed_pos(out.rect.left_top() + egui::vec2(6.0, 6.0))
                .constrain_to(out.rect)
                .interactable(false)
                .show(ui.ctx(), |ui| {
                    egui::Frame::new()
                        .fill(ui.visuals().extreme_bg_color.gamma_multiply(0.85))
                        .inner_margin(4.0)
                        .corner_radius(3.0)
                        .show(ui, |ui| {
                            ui.set_max_width(width);
                            for text in captions {
                                ui.add(egui::Label::new(egui::RichText::new(text).weak()).wrap());
                            }
                        });
                });
        }
        if let Some(m) = &pose.message {
            ui.colored_label(theme::palette(input.dark).warning, m);
        }
        ui.horizontal(|ui| {
            ui.selectable_value(tab, SideTab::Pose, "Pose");
            ui.selectable_value(tab, SideTab::Compression, "Compression");
        });
        ui.separator();
        egui::ScrollArea::vertical()
            .auto_shrink([false, false])
            .show(ui, |ui| match *tab {
                SideTab::Pose => pose_tab_ui(ui, input, &clip_a, pose),
                SideTab::Compression => comp.compression_ui(ui, input, Some(&clip_a), queue),
            });
    }
}
