//! Colours and sizes of the app. The only place with colour literals.

use egui::Color32;

/// Height of one tag lane, in points.
pub const LANE_HEIGHT: f32 = 22.0;
/// Height of a namespace group header row.
pub const GROUP_HEIGHT: f32 = 20.0;
/// Height of the frame ruler.
pub const RULER_HEIGHT: f32 = 26.0;
/// Width of the lane header column (tag names and toggles).
pub const HEADER_WIDTH: f32 = 230.0;
/// Distance in points within which a pointer grabs a range edge.
pub const EDGE_GRAB: f32 = 5.0;

/// A tag's colour, or a stable colour derived from its name when it has none.
pub fn tag_color(color: Option<[u8; 3]>, name: &str) -> Color32 {
    match color {
        Some([r, g, b]) => Color32::from_rgb(r, g, b),
        None => {
            let h = name
                .bytes()
                .fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
            let hue = (h % 360) as f32 / 360.0;
            egui::ecolor::Hsva::new(hue, 0.55, 0.8, 1.0).into()
        }
    }
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
    pub outside_clip: Color32,
    pub warning: Color32,
    pub error: Color32,
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
            outside_clip: Color32::from_gray(20),
            warning: Color32::from_rgb(240, 190, 60),
            error: Color32::from_rgb(255, 100, 90),
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
            outside_clip: Color32::from_gray(210),
            warning: Color32::from_rgb(170, 110, 0),
            error: Color32::from_rgb(190, 30, 20),
        }
    }
}
