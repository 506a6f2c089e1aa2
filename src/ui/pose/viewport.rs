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
    /// The overlay's own skeleton when it is not the main pose's (`skip_joint` does not apply to
    /// it then; it is drawn over the pose instead of under it).
    pub overlay_parents: Option<&'a [Option<usize>]>,
    /// Ground trail of the root over the clip, and the index at the playhead.
    pub trail: &'a [Vec3],
    pub trail_index: usize,
    pub dark: bool,
    pub bones: super::BoneStyle,
    /// Onion-skin poses: (frame offset from the playhead, positions).
    pub onion: &'a [(i64, Vec<Vec3>)],
    /// The path of a chosen joint over the clip, and its sample at the playhead.
    pub joint_trail: &'a [Vec3],
    pub joint_trail_index: usize,
    /// A joint not drawn, with its bone (a root standing still at the origin).
    pub skip_joint: Option<usize>,
    /// Joints drawn as planted (feet in contact).
    pub planted: &'a [usize],
    /// Centimetres per model unit (the grid is in centimetres).
    pub unit_cm: f32,
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
    response.widget_info(|| {
        // Planted feet are named for screen readers (and tests): "Pose viewport, planted: LeftFoot".
        let planted: Vec<&str> = scene
            .planted
            .iter()
            .filter_map(|&j| scene.names.get(j).map(String::as_str))
            .collect();
        let label = if planted.is_empty() {
            "Pose viewport".to_owned()
        } else {
            format!("Pose viewport, planted: {}", planted.join(", "))
        };
        egui::WidgetInfo::labeled(egui::Role::Canvas, true, label)
    });

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
    // still show their visible part. Its spacing is a round number of centimetres.
    let unit_cm = if scene.unit_cm.is_finite() && scene.unit_cm > 0.0 {
        scene.unit_cm
    } else {
        1.0
    };
    let spacing_cm = grid_spacing(camera.distance * unit_cm);
    let spacing = spacing_cm / unit_cm;
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

    // Root trail on the ground, and the chosen joint's path.
    let ground = |p: &Vec3| Vec3::new(p.x, 0.0, p.z);
    for (points, index, flatten, color, dot) in [
        (scene.trail, scene.trail_index, true, pal.trail, 3.0),
        (
            scene.joint_trail,
            scene.joint_trail_index,
            false,
            pal.joint_trail,
            3.5,
        ),
    ] {
        let at = |p: &Vec3| project(if flatten { ground(p) } else { *p });
        let line: Vec<Pos2> = points.iter().filter_map(|p| at(p).map(e)).collect();
        if line.len() >= 2 {
            painter.add(egui::Shape::line(line, Stroke::new(1.5, color)));
        }
        if let Some(p) = points.get(index).and_then(at) {
            painter.circle_filled(e(p), dot, color);
        }
    }

    // Onion skin (faded with distance from the playhead), the overlay pose (thin), the main pose.
    let farthest = scene
        .onion
        .iter()
        .map(|(k, _)| k.abs())
        .max()
        .unwrap_or(1)
        .max(1);
    for (k, joints) in scene.onion {
        let base = if *k < 0 {
            pal.onion_before
        } else {
            pal.onion_after
        };
        let fade = 1.0 - 0.6 * (k.abs() as f32 / farthest as f32);
        let color = base.gamma_multiply(fade);
        let s: Vec<Option<Vec2>> = joints.iter().map(|p| project(*p)).collect();
        draw_lines(
            &painter,
            scene.parents,
            &s,
            scene.skip_joint,
            Stroke::new(1.5, color),
        );
    }
    // The overlay: a blend input or compression ghost under the pose; another rig's pose (its own
    // parents) over it, to be compared.
    let draw_overlay = |painter: &egui::Painter| {
        if let Some((joints, color)) = scene.overlay {
            let s: Vec<Option<Vec2>> = joints.iter().map(|p| project(*p)).collect();
            let (parents, skip) = match scene.overlay_parents {
                Some(own) => (own, None),
                None => (scene.parents, scene.skip_joint),
            };
            draw_lines(painter, parents, &s, skip, Stroke::new(2.0, color));
            draw_joints(painter, &s, skip, color, 2.5, None);
        }
    };
    if scene.overlay_parents.is_none() {
        draw_overlay(&painter);
    }
    match scene.bones {
        super::BoneStyle::Lines => draw_lines(
            &painter,
            scene.parents,
            &screen,
            scene.skip_joint,
            Stroke::new(3.0, pal.bone),
        ),
        super::BoneStyle::Volumes => {
            let eye = camera.eye();
            draw_volumes(
                &painter,
                scene.parents,
                scene.joints,
                &screen,
                eye,
                scene.skip_joint,
                pal.bone,
                pal.bone_edge,
            );
        }
    }
    draw_joints(
        &painter,
        &screen,
        scene.skip_joint,
        pal.joint,
        3.5,
        scene.joint_colors,
    );
    for &j in scene.planted {
        if let Some(Some(p)) = screen.get(j) {
            painter.circle_stroke(e(*p), 7.0, Stroke::new(2.5, pal.planted));
        }
    }
    if scene.overlay_parents.is_some() {
        draw_overlay(&painter);
    }
    painter.text(
        rect.left_bottom() + EVec2::new(6.0, -4.0),
        egui::Align2::LEFT_BOTTOM,
        format!("grid {spacing_cm} cm"),
        egui::FontId::proportional(11.0),
        pal.text.gamma_multiply(0.6),
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

fn draw_lines(
    painter: &egui::Painter,
    parents: &[Option<usize>],
    screen: &[Option<Vec2>],
    skip: Option<usize>,
    bone: Stroke,
) {
    for (j, p) in parents.iter().enumerate() {
        if let (Some(p), Some(Some(a))) = (p, screen.get(j))
            && Some(*p) != skip
            && Some(j) != skip
            && let Some(Some(b)) = screen.get(*p)
        {
            painter.line_segment([e(*a), e(*b)], bone);
        }
    }
}

fn draw_joints(
    painter: &egui::Painter,
    screen: &[Option<Vec2>],
    skip: Option<usize>,
    joint: Color32,
    radius: f32,
    colors: Option<&[Color32]>,
) {
    for (j, p) in screen.iter().enumerate() {
        if let Some(p) = p
            && Some(j) != skip
        {
            let c = colors.and_then(|c| c.get(j).copied()).unwrap_or(joint);
            painter.circle_filled(e(*p), radius, c);
        }
    }
}

/// Bones as capsules: as wide as a fifth of their length on screen (3 to 16 points), drawn from
/// the farthest to the nearest so nearer bones cover farther ones, each with an outline.
#[allow(clippy::too_many_arguments)]
fn draw_volumes(
    painter: &egui::Painter,
    parents: &[Option<usize>],
    joints: &[Vec3],
    screen: &[Option<Vec2>],
    eye: Vec3,
    skip: Option<usize>,
    fill: Color32,
    edge: Color32,
) {
    let mut bones: Vec<(f32, Vec2, Vec2)> = parents
        .iter()
        .enumerate()
        .filter_map(|(j, p)| {
            let p = (*p)?;
            if Some(p) == skip || Some(j) == skip {
                return None;
            }
            let (a, b) = ((*screen.get(j)?)?, (*screen.get(p)?)?);
            let mid = (*joints.get(j)? + *joints.get(p)?) * 0.5;
            Some(((mid - eye).length(), a, b))
        })
        .collect();
    bones.sort_by(|x, y| y.0.total_cmp(&x.0));
    for (_, a, b) in bones {
        let w = ((b - a).length() * 0.2).clamp(3.0, 16.0);
        painter.line_segment([e(a), e(b)], Stroke::new(w + 2.0, edge));
        painter.circle_filled(e(a), (w + 2.0) * 0.5, edge);
        painter.circle_filled(e(b), (w + 2.0) * 0.5, edge);
        painter.line_segment([e(a), e(b)], Stroke::new(w, fill));
        painter.circle_filled(e(a), w * 0.5, fill);
        painter.circle_filled(e(b), w * 0.5, fill);
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
