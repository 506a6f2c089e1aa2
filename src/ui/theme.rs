//! Colours and sizes of the app. The only place with colour literals.

use egui::Color32;

/// The line between the timeline's lane headers and its lanes.
pub const HEADER_SEPARATOR: Color32 = Color32::from_gray(90);
/// What a marker's colour is lightened towards (so a marker stands out on a range of its lane).
pub const MARKER_LIGHT: Color32 = Color32::WHITE;

/// Height of one tag lane, in points.
pub const LANE_HEIGHT: f32 = 22.0;
/// Height of a namespace group header row.
pub const GROUP_HEIGHT: f32 = 20.0;
/// Height of the frame ruler.
pub const RULER_HEIGHT: f32 = 26.0;
/// Width of the lane header column (tag names and toggles).
pub const HEADER_WIDTH: f32 = 200.0;
/// Distance in points within which a pointer grabs a range edge.
pub const EDGE_GRAB: f32 = 5.0;

/// A tag's colour, or a stable colour derived from its name when it has none
/// ([`crate::core::tags::color::name_color`]).
pub fn tag_color(color: Option<[u8; 3]>, name: &str) -> Color32 {
    let [r, g, b] = crate::core::tags::color::shown_color(color, name);
    Color32::from_rgb(r, g, b)
}

pub struct Palette {
    pub track_bg: Color32,
    pub track_bg_alt: Color32,
    pub track_bg_active: Color32,
    pub grid: Color32,
    pub ruler_bg: Color32,
    pub ruler_text: Color32,
    pub playhead: Color32,
    pub selection: Color32,
    pub range_outline: Color32,
    pub box_select: Color32,
    pub mark_in: Color32,
    /// The line a dragged edge snapped to.
    pub snap: Color32,
    pub outside_clip: Color32,
    pub warning: Color32,
    pub error: Color32,
    /// The browser's "animation loaded" dot.
    pub loaded: Color32,
}

pub fn palette(dark: bool) -> Palette {
    if dark {
        Palette {
            track_bg: Color32::from_gray(32),
            track_bg_alt: Color32::from_gray(38),
            track_bg_active: Color32::from_rgb(40, 48, 60),
            grid: Color32::from_gray(55),
            ruler_bg: Color32::from_gray(24),
            ruler_text: Color32::from_gray(190),
            playhead: Color32::from_rgb(255, 80, 60),
            selection: Color32::WHITE,
            range_outline: Color32::from_black_alpha(140),
            box_select: Color32::from_rgba_unmultiplied(120, 170, 255, 50),
            mark_in: Color32::from_rgb(80, 220, 120),
            snap: Color32::from_rgb(255, 210, 60),
            outside_clip: Color32::from_gray(20),
            warning: Color32::from_rgb(240, 190, 60),
            error: Color32::from_rgb(255, 100, 90),
            loaded: Color32::from_rgb(90, 200, 120),
        }
    } else {
        Palette {
            track_bg: Color32::from_gray(236),
            track_bg_alt: Color32::from_gray(228),
            track_bg_active: Color32::from_rgb(215, 226, 240),
            grid: Color32::from_gray(200),
            ruler_bg: Color32::from_gray(245),
            ruler_text: Color32::from_gray(60),
            playhead: Color32::from_rgb(220, 40, 30),
            selection: Color32::BLACK,
            range_outline: Color32::from_black_alpha(100),
            box_select: Color32::from_rgba_unmultiplied(40, 100, 220, 50),
            mark_in: Color32::from_rgb(20, 150, 60),
            snap: Color32::from_rgb(200, 140, 0),
            outside_clip: Color32::from_gray(210),
            warning: Color32::from_rgb(170, 110, 0),
            error: Color32::from_rgb(190, 30, 20),
            loaded: Color32::from_rgb(30, 140, 60),
        }
    }
}

/// Colours of the query panel: syntax classes and result lanes.
pub struct QueryColors {
    pub tag: Color32,
    pub unknown_tag: Color32,
    pub function: Color32,
    pub keyword: Color32,
    pub operator: Color32,
    pub number: Color32,
    pub lane_ranges: Color32,
    pub lane_masks: Color32,
    pub lane_node: Color32,
    pub step_a: Color32,
    pub step_b: Color32,
    pub step_out: Color32,
}

pub fn query_colors(dark: bool) -> QueryColors {
    if dark {
        QueryColors {
            tag: Color32::from_rgb(130, 200, 255),
            unknown_tag: Color32::from_rgb(255, 130, 120),
            function: Color32::from_rgb(220, 180, 255),
            keyword: Color32::from_rgb(255, 170, 90),
            operator: Color32::from_rgb(240, 220, 120),
            number: Color32::from_rgb(150, 230, 160),
            lane_ranges: Color32::from_rgb(80, 170, 230),
            lane_masks: Color32::from_rgb(60, 200, 170),
            lane_node: Color32::from_rgb(200, 150, 240),
            step_a: Color32::from_rgb(90, 160, 230),
            step_b: Color32::from_rgb(230, 150, 80),
            step_out: Color32::from_rgb(110, 210, 120),
        }
    } else {
        QueryColors {
            tag: Color32::from_rgb(20, 90, 170),
            unknown_tag: Color32::from_rgb(190, 30, 20),
            function: Color32::from_rgb(120, 60, 170),
            keyword: Color32::from_rgb(180, 90, 0),
            operator: Color32::from_rgb(130, 100, 0),
            number: Color32::from_rgb(20, 130, 50),
            lane_ranges: Color32::from_rgb(40, 120, 200),
            lane_masks: Color32::from_rgb(20, 150, 130),
            lane_node: Color32::from_rgb(140, 80, 200),
            step_a: Color32::from_rgb(40, 110, 200),
            step_b: Color32::from_rgb(200, 110, 30),
            step_out: Color32::from_rgb(30, 150, 60),
        }
    }
}

/// Colours of the 3D pose viewport.
pub struct ViewportPalette {
    pub background: Color32,
    pub grid: Color32,
    pub grid_axis: Color32,
    pub bone: Color32,
    pub joint: Color32,
    pub hovered: Color32,
    pub selected: Color32,
    /// The second clip of a blend, drawn thin behind the result.
    pub blend_input: Color32,
    /// The decompressed candidate drawn over the original.
    pub ghost: Color32,
    pub trail: Color32,
    pub text: Color32,
    /// Outline of volume bones.
    pub bone_edge: Color32,
    /// Onion-skin poses before and after the playhead.
    pub onion_before: Color32,
    pub onion_after: Color32,
    /// The path of the chosen joint.
    pub joint_trail: Color32,
    /// Feet marked planted (auto-tag contacts).
    pub planted: Color32,
}

pub fn viewport_palette(dark: bool) -> ViewportPalette {
    if dark {
        ViewportPalette {
            background: Color32::from_gray(22),
            grid: Color32::from_gray(48),
            grid_axis: Color32::from_gray(80),
            bone: Color32::from_rgb(200, 205, 215),
            joint: Color32::from_rgb(120, 180, 255),
            hovered: Color32::from_rgb(255, 230, 120),
            selected: Color32::from_rgb(255, 150, 40),
            blend_input: Color32::from_rgba_unmultiplied(120, 220, 160, 110),
            ghost: Color32::from_rgba_unmultiplied(255, 120, 220, 150),
            trail: Color32::from_rgb(90, 160, 230),
            text: Color32::from_gray(220),
            bone_edge: Color32::from_gray(70),
            onion_before: Color32::from_rgba_unmultiplied(110, 170, 255, 120),
            onion_after: Color32::from_rgba_unmultiplied(255, 170, 90, 120),
            joint_trail: Color32::from_rgb(240, 200, 80),
            planted: Color32::from_rgb(90, 230, 120),
        }
    } else {
        ViewportPalette {
            background: Color32::from_gray(238),
            grid: Color32::from_gray(205),
            grid_axis: Color32::from_gray(160),
            bone: Color32::from_rgb(60, 64, 72),
            joint: Color32::from_rgb(30, 100, 210),
            hovered: Color32::from_rgb(200, 150, 0),
            selected: Color32::from_rgb(230, 110, 0),
            blend_input: Color32::from_rgba_unmultiplied(20, 150, 80, 120),
            ghost: Color32::from_rgba_unmultiplied(200, 40, 160, 150),
            trail: Color32::from_rgb(40, 110, 200),
            text: Color32::from_gray(30),
            bone_edge: Color32::from_gray(30),
            onion_before: Color32::from_rgba_unmultiplied(30, 90, 220, 110),
            onion_after: Color32::from_rgba_unmultiplied(220, 110, 20, 110),
            joint_trail: Color32::from_rgb(190, 120, 0),
            planted: Color32::from_rgb(20, 160, 60),
        }
    }
}

/// Colours of the "Find similar" tool: its timeline lanes, thumbnails and the viewport overlay.
pub struct SimilarColors {
    /// The matches' ghost lane (the query's colour, translucent).
    pub lane_matches: Color32,
    /// The query's lane (on the query's clip).
    pub lane_query: Color32,
    /// Thumbnail background, and its outline when the match is the current one.
    pub thumb_bg: Color32,
    pub thumb_current: Color32,
    /// A match's poses: near (right) side and far (left) side.
    pub pose: Color32,
    pub pose_far: Color32,
    /// The query's poses, and the query drawn over a match in the viewport (pink: apart from the
    /// viewport's blue joints and yellow trail).
    pub query: Color32,
    pub query_far: Color32,
    pub overlay: Color32,
    /// Score bars: at most the threshold, above it.
    pub under: Color32,
    pub over: Color32,
}

pub fn similar_colors(dark: bool) -> SimilarColors {
    if dark {
        SimilarColors {
            lane_matches: Color32::from_rgba_unmultiplied(240, 120, 215, 120),
            lane_query: Color32::from_rgb(240, 120, 215),
            thumb_bg: Color32::from_gray(26),
            thumb_current: Color32::from_rgb(255, 200, 90),
            pose: Color32::from_rgb(235, 225, 210),
            pose_far: Color32::from_rgb(140, 130, 120),
            query: Color32::from_rgb(240, 120, 215),
            query_far: Color32::from_rgb(150, 75, 135),
            overlay: Color32::from_rgba_unmultiplied(245, 110, 220, 230),
            under: Color32::from_rgb(110, 200, 120),
            over: Color32::from_gray(110),
        }
    } else {
        SimilarColors {
            lane_matches: Color32::from_rgba_unmultiplied(190, 30, 150, 110),
            lane_query: Color32::from_rgb(190, 30, 150),
            thumb_bg: Color32::from_gray(246),
            thumb_current: Color32::from_rgb(210, 130, 0),
            pose: Color32::from_rgb(50, 50, 60),
            pose_far: Color32::from_rgb(160, 160, 170),
            query: Color32::from_rgb(190, 30, 150),
            query_far: Color32::from_rgb(225, 150, 205),
            overlay: Color32::from_rgba_unmultiplied(200, 30, 160, 230),
            under: Color32::from_rgb(40, 150, 60),
            over: Color32::from_gray(170),
        }
    }
}

/// Colours of the root-motion and compression plots, in series order.
pub const PLOT_SERIES: [Color32; 6] = [
    Color32::from_rgb(90, 160, 230),
    Color32::from_rgb(120, 200, 120),
    Color32::from_rgb(230, 90, 80),
    Color32::from_rgb(240, 180, 60),
    Color32::from_rgb(190, 120, 230),
    Color32::from_rgb(120, 120, 120),
];

/// An error colour from green (0) through yellow to red (`t >= 1`).
pub fn error_color(t: f32) -> Color32 {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        1.0
    };
    let hue = (1.0 - t) * (120.0 / 360.0);
    egui::ecolor::Hsva::new(hue, 0.85, 0.95, 1.0).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tag without a colour looks as it did when egui made its colour (linear HSV).
    #[test]
    fn name_colours_are_egui_hsv() {
        for name in ["Walk", "locomotion:Run", "contact:LeftFoot", "", "NewTag_2"] {
            let h = name
                .bytes()
                .fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
            let egui: Color32 =
                egui::ecolor::Hsva::new((h % 360) as f32 / 360.0, 0.55, 0.8, 1.0).into();
            let ours = tag_color(None, name);
            for (a, b) in egui.to_array().iter().zip(ours.to_array()) {
                assert!(a.abs_diff(b) <= 1, "{name}: {egui:?} vs {ours:?}");
            }
        }
    }
}
