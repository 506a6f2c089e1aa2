//! Asking the caches for the bytes a pose will read, and for its code's pages, before it reads
//! them, so that the misses of a cold pose overlap instead of each waiting for the one before (the
//! segment's offset, then its headers, then its keys) and for the code in between.
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

/// Bytes of code that [`prefetch_code`] covers: more than either vector sample's code (`nm -S`:
/// 9,768 bytes for the EVEX one, 9,240 for the AVX2 one on x86-64 with this compiler), so that
/// every page either lies on is asked for.
const CODE_SPAN: usize = 12 << 10;

/// Asks for one 64-byte line every 2 KiB of the code from here (inlined: a few bytes into the
/// sample that calls it) to `CODE_SPAN` on (seven prefetches into the second-level cache; the
/// page running is the first), so that each 4 KiB page of a sample's code is translated and its
/// first lines are on their way before the instructions reach it. A cold pose otherwise waits
/// for each page's translation and then for its lines, one after the other, as the instructions
/// run into them: on a host whose memory answered slowly that was most of a cold pose, 1.2-1.26x
/// the uncompressed clip's (docs/PERFORMANCE.md, "The code's pages asked for first"). Seven
/// instructions: 0-2 ns of a warm pose. A no-op where the target has no prefetch instruction.
///
/// The address comes from a `lea` of the instruction pointer: a function pointer to the sample
/// would be read from the global offset table (one more cold read before the first prefetch),
/// and naming the sample in `asm!` with `sym` changed what the compiler inlined into it.
#[inline(always)]
pub(super) fn prefetch_code() {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T1, _mm_prefetch};
        const STEP: usize = 2 << 10;
        let here: *const u8;
        // SAFETY: computes an address only (`lea`): no memory is read or written.
        unsafe {
            std::arch::asm!(
                "lea {here}, [rip]",
                here = out(reg) here,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        for k in 0..=CODE_SPAN / STEP {
            // SAFETY: a prefetch reads nothing into the program and never faults (addresses
            // past the sample's code are only asked for).
            unsafe { _mm_prefetch::<_MM_HINT_T1>(here.wrapping_add(STEP * k).cast()) };
        }
    }
}
