//! Asking the caches for the bytes a pose will read before it reads them, so that the misses of
//! a cold pose overlap instead of each waiting for the one before (the segment's offset, then its
//! headers, then its keys) and for the code in between.
// `_mm_prefetch` takes a raw pointer; it never faults and reads nothing into the program.
#![allow(unsafe_code)]

/// Asks for the 64-byte lines holding `bytes[from..to]` (clamped to `bytes`), at most `LINES` of
/// them from the first, without waiting for any. Always `LINES` prefetches (the last line asked
/// again where the range holds fewer), so no branch depends on where the range falls against
/// the lines: a loop over the lines the range touches ran a varying number of times, and its
/// mispredicted exits cost a warm pose 3-6 % (kick, cmu 01_01). A no-op where the target has no
/// prefetch instruction.
#[inline(always)]
pub(super) fn prefetch<const LINES: usize>(bytes: &[u8], from: usize, to: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let to = to.min(bytes.len());
        if from >= to {
            return;
        }
        let base = bytes.as_ptr();
        // The first line starts at or before `from`; the pointers are only addresses to the
        // prefetch (computed with wrapping arithmetic, never dereferenced).
        let first = base.wrapping_add(from).addr() & !63;
        let last = base.wrapping_add(to - 1).addr() & !63;
        for k in 0..LINES {
            let line = (first + 64 * k).min(last);
            // SAFETY: a prefetch reads nothing into the program and never faults.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(base.with_addr(line).cast()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (bytes, from, to);
}
