//! Asking the caches for the bytes a pose will read before it reads them, so that the misses of
//! a cold pose overlap instead of each waiting for the one before (the segment's offset, then its
//! headers, then its keys) and for the code in between.
// `_mm_prefetch` takes a raw pointer; it never faults and reads nothing into the program.
#![allow(unsafe_code)]

/// Asks for the `LINES` 64-byte lines from the one holding `bytes[from]` (nothing when `from` is
/// past `bytes`), without waiting for any. Always `LINES` prefetches, whatever the range the
/// caller will read (the lines past it are asked too: a prefetch never faults, and those are the
/// bytes that follow, mostly the next keys), so no branch depends on where a range falls against
/// the lines (a loop over the lines a range touches ran a varying number of times, and its
/// mispredicted exits cost a warm pose 3-6 %: kick, cmu 01_01), and each prefetch is one
/// instruction (clamped to the range, they were four: a cold pose waits for each line of code it
/// runs). A no-op where the target has no prefetch instruction.
#[inline(always)]
pub(super) fn prefetch<const LINES: usize>(bytes: &[u8], from: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        if from >= bytes.len() {
            return;
        }
        // Addresses only (wrapping arithmetic, never dereferenced): line `k` is the one holding
        // byte `from + 64 * k`.
        let at = bytes.as_ptr().wrapping_add(from);
        for k in 0..LINES {
            // SAFETY: a prefetch reads nothing into the program and never faults.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(at.wrapping_add(64 * k).cast()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (bytes, from);
}
