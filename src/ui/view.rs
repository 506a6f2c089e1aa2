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
