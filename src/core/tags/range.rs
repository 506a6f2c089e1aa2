//! Half-open frame ranges.

/// A half-open range of frames `[start, stop)`.
///
/// Frames are `u32`: a clip never has negative frames, and 4 billion frames (over a year at 120 fps)
/// is more than any take. A range in a canonical list is non-empty (`start < stop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Range {
    pub start: u32,
    pub stop: u32,
}

impl Range {
    #[inline]
    pub const fn new(start: u32, stop: u32) -> Self {
        Self { start, stop }
    }

    /// Number of frames in the range (0 when empty).
    #[inline]
    pub const fn len(&self) -> u32 {
        self.stop.saturating_sub(self.start)
    }

    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.stop <= self.start
    }

    #[inline]
    pub const fn contains(&self, frame: u32) -> bool {
        self.start <= frame && frame < self.stop
    }
}
