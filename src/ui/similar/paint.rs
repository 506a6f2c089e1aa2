//! Painting inside the "Find similar" tab's widgets, given their rectangles: thumbnail strips of
//! poses seen from the side, the query and the match side by side, the score bar. No layout, no
//! input.

use egui::{Color32, Pos2, Rect, Stroke, Vec2};

use super::LivePair;
use super::model::{SidePose, Thumbnail};
use crate::ui::theme::SimilarColors;

/// A bar filling `fraction` (clamped to 2..100 %) of `rect` over a `bg` background.
pub fn paint_score_bar(
    painter: &egui::Painter,
    rect: Rect,
    fraction: f32,
    bg: Color32,
    fill: Color32,
) {
    painter.rect_filled(rect, 2.0, bg);
    let w = rect.width() * fraction.clamp(0.02, 1.0);
    painter.rect_filled(
        Rect::from_min_size(rect.min, Vec2::new(w, rect.height())),
        2.0,
        fill,
    );
}

/// A strip of poses, evenly across `rect`, feet on its bottom edge, one scale for all.
pub fn paint_strip(
    painter: &egui::Painter,
    rect: Rect,
    t: &Thumbnail,
    near: Color32,
    far: Color32,
) {
    let n = t.poses.len().max(1);
    let cell = rect.width() / n as f32;
    let reach = t
        .poses
        .iter()
        .flatten()
        .map(|p| p[0].abs())
        .fold(1.0, f32::max);
    let scale = ((rect.height() - 6.0) / t.height_cm()).min((cell * 0.5 - 2.0) / reach);
    for (k, pose) in t.poses.iter().enumerate() {
        let origin = Pos2::new(rect.left() + cell * (k as f32 + 0.5), rect.bottom() - 3.0);
        paint_pose(painter, pose, &t.bones, origin, scale, near, far, 1.5);
    }
}

/// The query and the match at the playhead, side by side, at one scale.
pub fn paint_pair(painter: &egui::Painter, rect: Rect, l: &LivePair, colors: &SimilarColors) {
    let ground = |p: &SidePose| p.iter().map(|x| x[1]).fold(f32::INFINITY, f32::min);
    let height = |p: &SidePose| p.iter().map(|x| x[1]).fold(1.0, f32::max) - ground(p);
    let reach = |p: &SidePose| p.iter().map(|x| x[0].abs()).fold(1.0, f32::max);
    let half = rect.width() * 0.25;
    let names = [
        format!("query f{:.0}", l.query_frame),
        format!("match #{}", l.index + 1),
    ];
    let scale = ((rect.height() - 20.0) / height(&l.query).max(height(&l.target)))
        .min((half - 4.0) / reach(&l.query).max(reach(&l.target)));
    for (k, (pose, bones, near, far, name)) in [
        (
            &l.query,
            &l.query_bones,
            colors.query,
            colors.query_far,
            &names[0],
        ),
        (
            &l.target,
            &l.target_bones,
            colors.pose,
            colors.pose_far,
            &names[1],
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let g = ground(pose);
        let lifted: SidePose = pose.iter().map(|p| [p[0], p[1] - g, p[2]]).collect();
        let x = rect.left() + half * (2 * k + 1) as f32;
        paint_pose(
            painter,
            &lifted,
            bones,
            Pos2::new(x, rect.bottom() - 16.0),
            scale,
            near,
            far,
            2.0,
        );
        painter.text(
            Pos2::new(x, rect.bottom() - 2.0),
            egui::Align2::CENTER_BOTTOM,
            name,
            egui::FontId::proportional(11.0),
            near,
        );
    }
}

/// One pose seen from the right: the far (left) side's bones first, dimmer.
#[allow(clippy::too_many_arguments)]
fn paint_pose(
    painter: &egui::Painter,
    pose: &SidePose,
    bones: &[(usize, usize)],
    origin: Pos2,
    scale: f32,
    near: Color32,
    far: Color32,
    width: f32,
) {
    let at = |p: &[f32; 3]| Pos2::new(origin.x + p[0] * scale, origin.y - p[1] * scale);
    for far_pass in [true, false] {
        for &(c, p) in bones {
            let (Some(a), Some(b)) = (pose.get(c), pose.get(p)) else {
                continue;
            };
            // A bone is on the far side when its child is more than 3 cm left of the root.
            if (a[2] > 3.0) == far_pass {
                let color = if far_pass { far } else { near };
                painter.line_segment([at(a), at(b)], Stroke::new(width, color));
            }
        }
    }
}
