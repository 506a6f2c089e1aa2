//! Asking the caches for the bytes a pose will read before it reads them, so that the misses of
//! a cold pose overlap instead of each waiting for the one before (the segment's offset, then its
//! headers, then its keys) and for the code in between.
// `_mm_prefetch` takes a raw pointer; it never faults and reads nothing into the program.
#![allow(unsafe_code)]

/// Asks for every 64-byte line holding a byte of `bytes[from..to]` (clamped to `bytes`), without
/// waiting for any. A no-op where the target has no prefetch instruction.
#[inline(always)]
pub(super) fn prefetch(bytes: &[u8], from: usize, to: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let to = to.min(bytes.len());
        if from >= to {
            return;
        }
        let base = bytes.as_ptr();
        // The first line starts at or before `from`; the pointer is only an address to the
        // prefetch (computed with wrapping arithmetic, never dereferenced).
        let first = base.wrapping_add(from).addr() & !63;
        let end = base.wrapping_add(to).addr();
        let mut line = first;
        while line < end {
            // SAFETY: a prefetch reads nothing into the program and never faults.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(base.with_addr(line).cast()) };
            line += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (bytes, from, to);
}
