//! Range filters usable inside queries. Each one maps the canonical range list of one clip to a
//! canonical range list of the same clip; all of them are slices in, caller buffer out (appended).
//!
//! | function            | meaning                                                           |
//! |---------------------|-------------------------------------------------------------------|
//! | `first(x, N)`       | the first N frames of each range (the whole range if shorter)     |
//! | `last(x, N)`        | the last N frames of each range                                   |
//! | `longer(x, N)`      | the ranges longer than N frames (`len > N`)                       |
//! | `shorter(x, N)`     | the ranges shorter than N frames (`len < N`)                      |
//! | `first_range(x)`    | the first range of each clip                                      |
//! | `last_range(x)`     | the last range of each clip                                       |
//! | `random(x, SEED)`   | one range of each clip, picked by [`random_pick`] (reproducible)  |
//! | `grow(x, N)`        | each range widened by N frames on both sides, clamped to the clip |
//! | `shrink(x, N)`      | each range narrowed by N frames on both sides; gone if too short  |

use super::document::ClipId;
use super::range::Range;

/// A range filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Filter {
    First,
    Last,
    Longer,
    Shorter,
    FirstRange,
    LastRange,
    Random,
    Grow,
    Shrink,
}

impl Filter {
    pub const ALL: [Filter; 9] = [
        Filter::First,
        Filter::Last,
        Filter::Longer,
        Filter::Shorter,
        Filter::FirstRange,
        Filter::LastRange,
        Filter::Random,
        Filter::Grow,
        Filter::Shrink,
    ];

    /// The function name in the query language.
    pub const fn name(self) -> &'static str {
        match self {
            Filter::First => "first",
            Filter::Last => "last",
            Filter::Longer => "longer",
            Filter::Shorter => "shorter",
            Filter::FirstRange => "first_range",
            Filter::LastRange => "last_range",
            Filter::Random => "random",
            Filter::Grow => "grow",
            Filter::Shrink => "shrink",
        }
    }

    pub fn from_name(name: &str) -> Option<Filter> {
        Filter::ALL.into_iter().find(|f| f.name() == name)
    }

    /// How the numeric argument is used: `Some("frames")`, `Some("seed")`, or `None` for filters
    /// without one.
    pub const fn argument(self) -> Option<&'static str> {
        match self {
            Filter::FirstRange | Filter::LastRange => None,
            Filter::Random => Some("seed"),
            _ => Some("frames"),
        }
    }

    /// True when the argument may be left out (`random(x)` uses seed 0).
    pub const fn argument_optional(self) -> bool {
        matches!(self, Filter::Random)
    }

    /// Stable index used in the postfix code.
    pub const fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(code: u8) -> Option<Filter> {
        Filter::ALL.get(usize::from(code)).copied()
    }
}

/// The index of the range picked by `random(x, seed)` on `clip` among `count` ranges: a SplitMix64
/// hash of the seed and the clip id, modulo `count`. It depends only on its arguments, so a query
/// gives the same ranges on every run and with every engine.
pub fn random_pick(seed: u32, clip: ClipId, count: usize) -> usize {
    let z = crate::core::rng::hash(u64::from(seed) << 32 | u64::from(clip));
    (z % count.max(1) as u64) as usize
}

/// Appends `filter(ranges, arg)` for one clip of `frames` frames.
pub fn apply_append(
    filter: Filter,
    arg: u32,
    ranges: &[Range],
    frames: u32,
    clip: ClipId,
    out: &mut Vec<Range>,
) {
    out.reserve(ranges.len());
    match filter {
        Filter::First => {
            if arg > 0 {
                out.extend(
                    ranges
                        .iter()
                        .map(|r| Range::new(r.start, r.stop.min(r.start.saturating_add(arg)))),
                );
            }
        }
        Filter::Last => {
            if arg > 0 {
                out.extend(
                    ranges
                        .iter()
                        .map(|r| Range::new(r.start.max(r.stop.saturating_sub(arg)), r.stop)),
                );
            }
        }
        Filter::Longer => out.extend(ranges.iter().filter(|r| r.len() > arg)),
        Filter::Shorter => out.extend(ranges.iter().filter(|r| r.len() < arg)),
        Filter::FirstRange => out.extend(ranges.first()),
        Filter::LastRange => out.extend(ranges.last()),
        Filter::Random => {
            if !ranges.is_empty() {
                out.push(ranges[random_pick(arg, clip, ranges.len())]);
            }
        }
        Filter::Grow => {
            // Widened ranges stay sorted by start; merge the ones that now overlap or touch.
            let base = out.len();
            for r in ranges {
                let g = Range::new(
                    r.start.saturating_sub(arg),
                    r.stop.saturating_add(arg).min(frames),
                );
                if g.start >= g.stop {
                    continue;
                }
                let n = out.len();
                if n > base && out[n - 1].stop >= g.start {
                    out[n - 1].stop = out[n - 1].stop.max(g.stop);
                } else {
                    out.push(g);
                }
            }
        }
        Filter::Shrink => {
            for r in ranges {
                let s = r.start.saturating_add(arg);
                let e = r.stop.saturating_sub(arg);
                if s < e {
                    out.push(Range::new(s, e));
                }
            }
        }
    }
}

/// `out = filter(ranges, arg)` for one clip.
pub fn apply(
    filter: Filter,
    arg: u32,
    ranges: &[Range],
    frames: u32,
    clip: ClipId,
    out: &mut Vec<Range>,
) {
    out.clear();
    apply_append(filter, arg, ranges, frames, clip, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(list: &[(u32, u32)]) -> Vec<Range> {
        list.iter().map(|&(s, e)| Range::new(s, e)).collect()
    }

    fn run(f: Filter, arg: u32, input: &[(u32, u32)], frames: u32) -> Vec<Range> {
        let mut out = Vec::new();
        apply(f, arg, &r(input), frames, 0, &mut out);
        out
    }

    #[test]
    fn each_filter_on_a_small_case() {
        let x = [(0, 3), (10, 20), (30, 31)];
        assert_eq!(
            run(Filter::First, 5, &x, 40),
            r(&[(0, 3), (10, 15), (30, 31)])
        );
        assert_eq!(run(Filter::First, 0, &x, 40), r(&[]));
        assert_eq!(
            run(Filter::Last, 5, &x, 40),
            r(&[(0, 3), (15, 20), (30, 31)])
        );
        assert_eq!(run(Filter::Longer, 3, &x, 40), r(&[(10, 20)]));
        assert_eq!(run(Filter::Shorter, 3, &x, 40), r(&[(30, 31)]));
        assert_eq!(run(Filter::FirstRange, 0, &x, 40), r(&[(0, 3)]));
        assert_eq!(run(Filter::LastRange, 0, &x, 40), r(&[(30, 31)]));
        assert_eq!(run(Filter::Grow, 5, &x, 33), r(&[(0, 33)]));
        assert_eq!(
            run(Filter::Grow, 2, &x, 33),
            r(&[(0, 5), (8, 22), (28, 33)])
        );
        assert_eq!(run(Filter::Shrink, 1, &x, 40), r(&[(1, 2), (11, 19)]));
        let picked = run(Filter::Random, 7, &x, 40);
        assert_eq!(picked.len(), 1);
        assert_eq!(picked, run(Filter::Random, 7, &x, 40));
    }

    #[test]
    fn names_round_trip() {
        for f in Filter::ALL {
            assert_eq!(Filter::from_name(f.name()), Some(f));
            assert_eq!(Filter::from_code(f.code()), Some(f));
        }
    }
}
