//! Generated large projects for stress tests and benchmarks (`benches/stress.rs`,
//! `examples/stress_rss.rs`, `tests/robust_*.rs`). Deterministic: the same spec gives the same
//! document.

use std::collections::BTreeMap;

use super::tags::{ClipInfo, Range, SavedQuery, Tag, TagDocument};

/// The size of a generated project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StressSpec {
    pub clips: usize,
    pub tags: usize,
    /// Exact number of ranges in the document (summed over tags and clips).
    pub ranges: usize,
    /// Seed of the generator.
    pub seed: u64,
}

impl StressSpec {
    /// The project: 10,000 clips, 200 tags, 1,000,000 ranges.
    pub const LARGE: StressSpec = StressSpec {
        clips: 10_000,
        tags: 200,
        ranges: 1_000_000,
        seed: 8,
    };
}

use crate::core::rng::SplitMix64 as Rng;

/// Tag `i`'s name: `tag000`, `tag001`, ...
pub fn stress_tag_name(i: usize) -> String {
    format!("tag{i:03}")
}

/// Generates the project (meant for `ranges` well below `clips * tags * 500`, so each tag/clip cell
/// holds few ranges): clips of 1,000 to 5,000 frames at 30, 60 or 120 fps; each range goes to
/// a random tag and clip; the ranges of one tag on one clip are placed in disjoint slots (gaps
/// between them, so they stay distinct after canonicalisation). Five saved queries.
pub fn stress_document(spec: &StressSpec) -> TagDocument {
    let mut rng = Rng(spec.seed);
    let clips: Vec<ClipInfo> = (0..spec.clips)
        .map(|i| ClipInfo {
            name: format!("take_{i:05}"),
            frames: 1000 + rng.below(4001) as u32,
            fps: [30.0, 60.0, 120.0][rng.below(3) as usize],
            source: Some(format!("takes/take_{i:05}.bvh")),
            unit_cm: None,
        })
        .collect();
    // How many ranges each (tag, clip) cell gets.
    let mut cells: Vec<BTreeMap<u32, u32>> = vec![BTreeMap::new(); spec.tags];
    if spec.tags > 0 && spec.clips > 0 {
        for _ in 0..spec.ranges {
            let tag = rng.below(spec.tags as u64) as usize;
            let clip = rng.below(spec.clips as u64) as u32;
            *cells[tag].entry(clip).or_insert(0) += 1;
        }
    }
    let tags = cells
        .into_iter()
        .enumerate()
        .map(|(t, cell)| {
            let ranges = cell
                .into_iter()
                .map(|(clip, k)| {
                    let frames = clips[clip as usize].frames;
                    let slot = frames / k;
                    let list: Vec<Range> = (0..k)
                        .map(|s| {
                            // Inside the slot, leave at least one frame free at the end.
                            let start = s * slot + rng.below(u64::from(slot / 2).max(1)) as u32;
                            let len = 1 + rng
                                .below(u64::from(((s + 1) * slot).saturating_sub(1 + start)).max(1))
                                as u32;
                            Range::new(start, start + len)
                        })
                        .collect();
                    (clip, list)
                })
                .collect();
            Tag {
                name: stress_tag_name(t),
                color: Some([(t * 37) as u8, (t * 91) as u8, (t * 53) as u8]),
                ranges,
                markers: Default::default(),
                notes: Default::default(),
                version: 0,
            }
        })
        .collect();
    let queries = stress_queries()
        .iter()
        .enumerate()
        .map(|(i, q)| SavedQuery {
            name: format!("stress query {i}"),
            expr: (*q).to_string(),
        })
        .collect();
    TagDocument {
        clips,
        tags,
        queries,
        ..Default::default()
    }
}

/// Queries used by the stress benchmark (they name tags 000 to 009, so need `tags >= 10`).
pub fn stress_queries() -> &'static [&'static str] {
    &[
        "tag000 & tag001",
        "tag002 | tag003 | tag004",
        "(tag005 | tag006) - tag007 & !tag008",
        "grow(tag000, 15) & shrink(tag009, 2)",
        "longer(tag001 ^ tag002, 30) | first(tag003, 10)",
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::tags::range::canonicalize;

    #[test]
    fn generates_exactly_the_requested_canonical_ranges() {
        let spec = StressSpec {
            clips: 50,
            tags: 12,
            ranges: 5_000,
            seed: 3,
        };
        let doc = stress_document(&spec);
        assert_eq!(doc.clips.len(), 50);
        assert_eq!(doc.tags.len(), 12);
        let mut total = 0;
        for tag in &doc.tags {
            for (&clip, list) in &tag.ranges {
                let frames = doc.clips[clip as usize].frames;
                let mut canon = list.to_vec();
                canonicalize(&mut canon);
                assert_eq!(canon, list, "tag {} clip {clip} not canonical", tag.name);
                assert!(list.iter().all(|r| r.stop <= frames && r.start < r.stop));
                total += list.len();
            }
        }
        assert_eq!(total, 5_000);
        assert_eq!(stress_document(&spec), doc, "deterministic");
        let names: Vec<&str> = doc.tags.iter().map(|t| t.name.as_str()).collect();
        for q in stress_queries() {
            crate::core::tags::parse_query(q, &names).unwrap();
        }
    }
}
