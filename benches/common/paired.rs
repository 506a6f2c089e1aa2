//! Paired timing for the compression bench and `examples/decode_count.rs`: both sides of a round
//! timed one after the other, which goes first alternating from round to round, so that neither
//! always runs after the other's work.

/// Times side `false` and side `true` of round `i` with `time` (side `false` first in even
/// rounds): their times, in that order.
pub fn alternate(i: usize, mut time: impl FnMut(bool) -> f64) -> (f64, f64) {
    if i.is_multiple_of(2) {
        let first = time(false);
        (first, time(true))
    } else {
        let second = time(true);
        (time(false), second)
    }
}
