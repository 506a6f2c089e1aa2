//! What a panel needs to know about the clip on screen, shared by the side panel's tabs (pose,
//! compression) without them importing each other.

use crate::core::tags::ClipId;
use crate::ui::project::Project;

/// The project, the current clip and the playhead, read-only.
#[derive(Clone, Copy)]
pub struct ClipContext<'a> {
    pub project: &'a Project,
    pub clip: ClipId,
    /// Playhead in frames of the current clip.
    pub playhead: f64,
    pub dark: bool,
    /// Joints the viewport marks as planted: the feet whose contact tag (proposed by the auto-tag
    /// panel, or a real `contact:*` tag) covers the playhead.
    pub planted: &'a [usize],
    /// A pose another tool wants drawn over the current clip's (the "Find similar" query aligned
    /// on a match), shown when no blend or compression ghost is.
    pub overlay: Option<&'a OverlayPose>,
}

/// A pose drawn over the current clip's in the viewport: in its model space and file units, with
/// its own skeleton (it may be another rig's).
#[derive(Debug, Clone, PartialEq)]
pub struct OverlayPose {
    pub positions: Vec<glam::Vec3>,
    pub parents: Vec<Option<usize>>,
    pub color: egui::Color32,
    /// What it is, said under the viewport.
    pub label: String,
}

/// A frame rate for people: three decimals at most, trailing zeros cut (a BVH frame time of
/// 0.0083333 s is 120.00048 fps, shown as `120`; NTSC's 29.97 stays `29.97`).
pub fn fps_text(fps: f32) -> String {
    let s = format!("{fps:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_owned()
}

#[cfg(test)]
mod fps_tests {
    #[test]
    fn frame_rates_read_as_people_write_them() {
        assert_eq!(super::fps_text(1.0 / 0.008_333_3), "120");
        assert_eq!(super::fps_text(30.0), "30");
        assert_eq!(super::fps_text(29.97), "29.97");
        assert_eq!(super::fps_text(23.976), "23.976");
    }
}
