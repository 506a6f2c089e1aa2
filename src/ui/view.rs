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
}
