//! The 3D viewport widget: camera input (orbit, pan, zoom), joint hover and selection, and painting
//! (ground grid, root trail, bones, joints, overlays) with egui's painter.

use egui::{Color32, Pos2, Sense, Stroke, Ui, Vec2 as EVec2};
use glam::{Vec2, Vec3};

use super::model::{Camera, pick_joint};
use crate::ui::theme;

/// What the viewport draws.
pub struct Scene<'a> {
    pub parents: &'a [Option<usize>],
    pub names: &'a [String],
    /// Model-space joint positions of the main pose.
    pub joints: &'a [Vec3],
    /// Per-joint colours of the main pose's joints (e.g. by compression error).
    pub joint_colors: Option<&'a [Color32]>,
    /// A second pose drawn thin (blend input or compression ghost), with its colour.
    pub overlay: Option<(&'a [Vec3], Color32)>,
    /// Ground trail of the root over the clip, and the index at the playhead.
    pub trail: &'a [Vec3],
    pub trail_index: usize,
    pub dark: bool,
}

/// Result of one frame of the viewport.
pub struct ViewportOutput {
    pub hovered: Option<usize>,
    /// A joint was clicked (`Some(Some(j))`) or empty space was clicked (`Some(None)`).
    pub clicked: Option<Option<usize>>,
    /// The camera was panned this frame.
    pub panned: bool,
    /// Where the viewport is.
    pub rect: egui::Rect,
}

fn g(p: Pos2) -> Vec2 {
    Vec2::new(p.x, p.y)
}

fn e(p: Vec2) -> Pos2 {
    Pos2::new(p.x, p.y)
}

/// Shows the viewport in a `size` area: handles input on `camera` and paints `scene`.
pub fn viewport_ui(
    ui: &mut Ui,
    size: EVec2,
    camera: &mut Camera,
    scene: &Scene<'_>,
    selected: Option<usize>,
) -> ViewportOutput {
    let (rect, response) = ui.allocate_exact_size(size, Sense::click_and_drag());
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, true, "Pose viewport"));

    // Input.
    let shift = ui.input(|i| i.modifiers.shift);
    let mut panned = false;
    if response.dragged_by(egui::PointerButton::Middle)
        || (response.dragged_by(egui::PointerButton::Primary) && shift)
    {
        camera.pan(g(response.drag_delta().to_pos2()), rect.height());
        panned = true;
    } else if response.dragged_by(egui::PointerButton::Primary)
        || response.dragged_by(egui::PointerButton::Secondary)
    {
        camera.orbit(g(response.drag_delta().to_pos2()));
    }
    if response.hovered() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y);
        if scroll != 0.0 {
            camera.zoom((scroll * 0.003).exp());
        }
    }

    let origin = g(rect.min);
    let vsize = Vec2::new(rect.width(), rect.height());
    let m = camera.clip_from_model(rect.width() / rect.height().max(1.0));
    let project = |p: Vec3| camera.project(&m, p, origin, vsize);
    let screen: Vec<Option<Vec2>> = scene.joints.iter().map(|p| project(*p)).collect();

    let hovered = response
        .hover_pos()
        .and_then(|p| pick_joint(&screen, g(p), 9.0));
    let clicked = response.clicked().then_some(hovered);

    if !ui.is_rect_visible(rect) {
        return ViewportOutput {
            hovered,
            clicked,
            panned,
            rect,
        };
    }
    let pal = theme::viewport_palette(scene.dark);
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, pal.background);

    // Ground grid around the target, split into short segments so lines crossing behind the eye
    // still show their visible part.
    let spacing = grid_spacing(camera.distance);
    let half = 10i32;
    let cx = (camera.target.x / spacing).round() * spacing;
    let cz = (camera.target.z / spacing).round() * spacing;
    let extent = spacing * half as f32;
    for k in -half..=half {
        let off = k as f32 * spacing;
        let is_axis = |v: f32| v.abs() < spacing * 0.5;
        for (a, b, axis) in [
            (
                Vec3::new(cx + off, 0.0, cz - extent),
                Vec3::new(cx + off, 0.0, cz + extent),
                is_axis(cx + off),
            ),
            (
                Vec3::new(cx - extent, 0.0, cz + off),
                Vec3::new(cx + extent, 0.0, cz + off),
                is_axis(cz + off),
            ),
        ] {
            let color = if axis { pal.grid_axis } else { pal.grid };
            let segs = 8;
            for s in 0..segs {
                let p0 = a.lerp(b, s as f32 / segs as f32);
                let p1 = a.lerp(b, (s + 1) as f32 / segs as f32);
                if let (Some(q0), Some(q1)) = (project(p0), project(p1)) {
                    painter.line_segment([e(q0), e(q1)], Stroke::new(1.0, color));
                }
            }
        }
    }

    // Root trail on the ground.
    let trail: Vec<Pos2> = scene
        .trail
        .iter()
        .filter_map(|p| project(Vec3::new(p.x, 0.0, p.z)).map(e))
        .collect();
    if trail.len() >= 2 {
        painter.add(egui::Shape::line(trail, Stroke::new(1.5, pal.trail)));
    }
    if let Some(p) = scene
        .trail
        .get(scene.trail_index)
        .and_then(|p| project(Vec3::new(p.x, 0.0, p.z)))
    {
        painter.circle_filled(e(p), 3.0, pal.trail);
    }

    // Overlay pose (thin), then the main pose.
    if let Some((joints, color)) = scene.overlay {
        let s: Vec<Option<Vec2>> = joints.iter().map(|p| project(*p)).collect();
        draw_skeleton(
            &painter,
            scene.parents,
            &s,
            Stroke::new(2.0, color),
            color,
            2.5,
            None,
        );
    }
    draw_skeleton(
        &painter,
        scene.parents,
        &screen,
        Stroke::new(3.0, pal.bone),
        pal.joint,
        3.5,
        scene.joint_colors,
    );
    for (j, color) in [(selected, pal.selected), (hovered, pal.hovered)] {
        if let Some(p) = j.and_then(|j| screen.get(j).copied().flatten()) {
            painter.circle_stroke(e(p), 6.5, Stroke::new(2.0, color));
        }
    }
    if let Some(j) = hovered
        && let (Some(Some(p)), Some(name)) = (screen.get(j), scene.names.get(j))
    {
        painter.text(
            e(*p) + EVec2::new(9.0, -9.0),
            egui::Align2::LEFT_BOTTOM,
            name,
            egui::FontId::proportional(13.0),
            pal.text,
        );
    }
    ViewportOutput {
        hovered,
        clicked,
        panned,
        rect,
    }
}

fn draw_skeleton(
    painter: &egui::Painter,
    parents: &[Option<usize>],
    screen: &[Option<Vec2>],
    bone: Stroke,
    joint: Color32,
    radius: f32,
    colors: Option<&[Color32]>,
) {
    for (j, p) in parents.iter().enumerate() {
        if let (Some(p), Some(Some(a))) = (p, screen.get(j))
            && let Some(Some(b)) = screen.get(*p)
        {
            painter.line_segment([e(*a), e(*b)], bone);
        }
    }
    for (j, p) in screen.iter().enumerate() {
        if let Some(p) = p {
            let c = colors.and_then(|c| c.get(j).copied()).unwrap_or(joint);
            painter.circle_filled(e(*p), radius, c);
        }
    }
}

/// A grid spacing of 1, 2 or 5 times a power of ten giving about 10 lines across the view.
pub fn grid_spacing(distance: f32) -> f32 {
    let raw = (distance / 10.0).max(1e-3);
    let p = 10f32.powf(raw.log10().floor());
    let m = raw / p;
    p * if m < 2.0 {
        1.0
    } else if m < 5.0 {
        2.0
    } else {
        5.0
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn grid_spacing_is_a_nice_number() {
        assert_eq!(super::grid_spacing(400.0), 20.0);
        assert_eq!(super::grid_spacing(100.0), 10.0);
        assert_eq!(super::grid_spacing(700.0), 50.0);
    }
}
