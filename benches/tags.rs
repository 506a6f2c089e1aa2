//! Tag engine benchmarks. Figures and the command are in docs/PERFORMANCE.md (`## Tags`).
//!
//! - `ranges_50k`: union/intersection/difference of two 50,000-range lists, against range-set-blaze
//!   (its `RangeSetBlaze` set operators, and its sorted-disjoint iterator operators collected to a
//!   `Vec`) in the same run.
//! - `masks_10m`: and/or/and-not/not on 10M-frame masks, against a plain `Vec<u64>` index loop.
//! - `db`: 10,000 clips, 10M frames, 50 tags; `A & B & (C | D) - E` cold with each engine, the
//!   one-pass masks evaluator against operation-by-operation, and a cache hit. Prints the memory of
//!   both representations.
//! - `auto_rule`: ranges vs masks on one clip as the number of ranges per 64-frame word grows; the
//!   crossover backs `AUTO_MASKS_RANGES_PER_WORD`.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use range_set_blaze::prelude::*;
use taglane::core::tags::mask::{self, Mask};
use taglane::core::tags::query::{Engine, Evaluator, QueryCache, TagIndex};
use taglane::core::tags::range::{self, Range};
use taglane::core::tags::{ClipInfo, MaskSet, RangeSet, TagDocument};

/// A small deterministic generator (xorshift64*), so every run measures the same data.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// `n` canonical ranges with random lengths and gaps of 1..=2*mean.
fn random_ranges(rng: &mut Rng, n: usize, mean_len: u64, mean_gap: u64) -> Vec<Range> {
    let mut out = Vec::with_capacity(n);
    let mut at = rng.below(mean_gap) as u32;
    for _ in 0..n {
        let len = 1 + rng.below(2 * mean_len) as u32;
        out.push(Range::new(at, at + len));
        at += len + 1 + rng.below(2 * mean_gap) as u32;
    }
    out
}

fn ranges_50k(c: &mut Criterion) {
    let mut rng = Rng(0x1234_5678);
    let a = random_ranges(&mut rng, 50_000, 10, 10);
    let b = random_ranges(&mut rng, 50_000, 10, 10);
    let to_blaze = |v: &[Range]| {
        RangeSetBlaze::from_sorted_disjoint(CheckSortedDisjoint::new(
            v.iter().map(|r| r.start..=r.stop - 1),
        ))
    };
    let (ba, bb) = (to_blaze(&a), to_blaze(&b));
    let mut out = Vec::with_capacity(100_000);
    let mut g = c.benchmark_group("ranges_50k");
    g.bench_function("union/taglane", |bn| {
        bn.iter(|| range::union(black_box(&a), black_box(&b), &mut out))
    });
    g.bench_function("intersection/taglane", |bn| {
        bn.iter(|| range::intersection(black_box(&a), black_box(&b), &mut out))
    });
    g.bench_function("difference/taglane", |bn| {
        bn.iter(|| range::difference(black_box(&a), black_box(&b), &mut out))
    });
    g.bench_function("union/blaze_set", |bn| {
        bn.iter(|| black_box(black_box(&ba) | black_box(&bb)))
    });
    g.bench_function("intersection/blaze_set", |bn| {
        bn.iter(|| black_box(black_box(&ba) & black_box(&bb)))
    });
    g.bench_function("difference/blaze_set", |bn| {
        bn.iter(|| black_box(black_box(&ba) - black_box(&bb)))
    });
    let mut bout: Vec<std::ops::RangeInclusive<u32>> = Vec::with_capacity(100_000);
    g.bench_function("union/blaze_iter", |bn| {
        bn.iter(|| {
            bout.clear();
            bout.extend(black_box(&ba).ranges() | black_box(&bb).ranges());
        })
    });
    g.bench_function("intersection/blaze_iter", |bn| {
        bn.iter(|| {
            bout.clear();
            bout.extend(black_box(&ba).ranges() & black_box(&bb).ranges());
        })
    });
    g.bench_function("difference/blaze_iter", |bn| {
        bn.iter(|| {
            bout.clear();
            bout.extend(black_box(&ba).ranges() - black_box(&bb).ranges());
        })
    });
    g.finish();
}

fn masks_10m(c: &mut Criterion) {
    const FRAMES: u32 = 10_000_000;
    let mut rng = Rng(0x9876_5432);
    let ra = random_ranges(&mut rng, 200_000, 20, 30);
    let rb = random_ranges(&mut rng, 200_000, 20, 30);
    let clip =
        |v: Vec<Range>| -> Vec<Range> { v.into_iter().filter(|r| r.stop <= FRAMES).collect() };
    let (ma, mb) = (
        Mask::from_ranges(&clip(ra), FRAMES),
        Mask::from_ranges(&clip(rb), FRAMES),
    );
    let (wa, wb) = (ma.words().to_vec(), mb.words().to_vec());
    let mut wout = vec![0u64; wa.len()];
    let mut mout = Mask::new(FRAMES);
    let mut g = c.benchmark_group("masks_10m");
    g.bench_function("and/baseline_vec_u64", |bn| {
        bn.iter(|| {
            let (a, b) = (black_box(&wa), black_box(&wb));
            for i in 0..a.len() {
                wout[i] = a[i] & b[i];
            }
        })
    });
    g.bench_function("and/taglane", |bn| {
        bn.iter(|| black_box(&ma).intersection(black_box(&mb), &mut mout))
    });
    g.bench_function("or/baseline_vec_u64", |bn| {
        bn.iter(|| {
            let (a, b) = (black_box(&wa), black_box(&wb));
            for i in 0..a.len() {
                wout[i] = a[i] | b[i];
            }
        })
    });
    g.bench_function("or/taglane", |bn| {
        bn.iter(|| black_box(&ma).union(black_box(&mb), &mut mout))
    });
    g.bench_function("and_not/baseline_vec_u64", |bn| {
        bn.iter(|| {
            let (a, b) = (black_box(&wa), black_box(&wb));
            for i in 0..a.len() {
                wout[i] = a[i] & !b[i];
            }
        })
    });
    g.bench_function("and_not/taglane", |bn| {
        bn.iter(|| black_box(&ma).difference(black_box(&mb), &mut mout))
    });
    g.bench_function("not/baseline_vec_u64", |bn| {
        bn.iter(|| {
            let a = black_box(&wa);
            for i in 0..a.len() {
                wout[i] = !a[i];
            }
        })
    });
    g.bench_function("not/taglane", |bn| {
        bn.iter(|| black_box(&ma).complement(&mut mout))
    });
    // bitvec's own operator, for the record (the "measured fact").
    let mut bv = ma.bits().to_bitvec();
    g.bench_function("and/bitvec_operator", |bn| {
        bn.iter(|| {
            bv.clone_from_bitslice(black_box(ma.bits()));
            bv &= black_box(mb.bits());
        })
    });
    g.bench_function("vectorize", |bn| {
        let mut v = Vec::new();
        bn.iter(|| mask::vectorize(black_box(&ma), &mut v))
    });
    g.finish();
}

/// 10,000 clips of 200..1,800 frames (10M frames in all) and 50 tags. Each tag occurs on 30-70%
/// of the clips with 1..8 ranges there. With `dense`, the first three tags are instead
/// contact-like: on 40% of the clips, one- or two-frame ranges every 2..9 frames.
fn database(dense: bool) -> TagDocument {
    let mut rng = Rng(0xDEAD_BEEF);
    let mut doc = TagDocument::default();
    for i in 0..10_000 {
        let frames = 200 + rng.below(1601) as u32;
        doc.add_clip(ClipInfo {
            name: format!("clip_{i:05}"),
            frames,
            fps: 30.0,
            source: None,
            unit_cm: None,
        })
        .unwrap();
    }
    for t in 0..50 {
        let tag = doc.add_tag(&format!("T{t}"), None).unwrap();
        let p = 30 + rng.below(41);
        if dense && t < 3 {
            for c in 0..doc.clips.len() {
                if rng.below(100) >= 40 {
                    continue;
                }
                let frames = doc.clips[c].frames;
                let step = 2 + rng.below(8) as u32;
                let ranges: Vec<Range> = (0..frames - 2)
                    .step_by(step as usize)
                    .map(|s| Range::new(s, s + 1 + rng.below(2) as u32))
                    .collect();
                doc.set_ranges(tag, c as u32, ranges).unwrap();
            }
            continue;
        }
        for c in 0..doc.clips.len() {
            if rng.below(100) >= p {
                continue;
            }
            let frames = doc.clips[c].frames;
            let n = 1 + rng.below(8) as usize;
            let ranges: Vec<Range> = (0..n)
                .map(|_| {
                    let s = rng.below(u64::from(frames - 1)) as u32;
                    let len = 1 + rng.below(u64::from(frames / 4)) as u32;
                    Range::new(s, (s + len).min(frames))
                })
                .collect();
            doc.set_ranges(tag, c as u32, ranges).unwrap();
        }
    }
    doc.add_tag("A", None).unwrap();
    doc
}

fn db(c: &mut Criterion) {
    db_group(c, "db", false);
    db_group(c, "db_dense", true);
}

fn db_group(c: &mut Criterion, group: &str, dense: bool) {
    let doc = database(dense);
    let names: Vec<String> = (0..5).map(|i| format!("T{i}")).collect();
    let q = doc
        .parse_query(&format!(
            "{} & {} & ({} | {}) - {}",
            names[0], names[1], names[2], names[3], names[4]
        ))
        .unwrap();
    let idx = TagIndex::build(&doc);
    // Every tag's masks now (they are built at first use), for the memory figure and so that no
    // timed run builds them.
    idx.prepare_all_masks();
    let total_frames: u64 = doc.clips.iter().map(|c| u64::from(c.frames)).sum();
    let total_ranges: usize = (0..idx.tag_count())
        .map(|t| idx.tag_ranges(t).range_count())
        .sum();
    eprintln!(
        "{group}: {} clips, {total_frames} frames, {} tags, {total_ranges} ranges; memory: ranges {} bytes, masks {} bytes",
        doc.clips.len(),
        doc.tags.len(),
        idx.ranges_memory_bytes(),
        idx.masks_memory_bytes()
    );
    let mut ev = Evaluator::new();
    let mut out = RangeSet::new();
    let mut mout = MaskSet::new();
    let mut g = c.benchmark_group(group);
    g.bench_function("cold/ranges", |bn| {
        bn.iter(|| {
            ev.eval(black_box(&q), &idx, Engine::Ranges, &mut out)
                .unwrap()
        })
    });
    g.bench_function("cold/masks_to_ranges", |bn| {
        bn.iter(|| {
            ev.eval(black_box(&q), &idx, Engine::Masks, &mut out)
                .unwrap()
        })
    });
    g.bench_function("cold/masks_one_pass", |bn| {
        bn.iter(|| ev.eval_masks_fused(black_box(&q), &idx, &mut mout).unwrap())
    });
    g.bench_function("cold/masks_op_by_op", |bn| {
        bn.iter(|| {
            ev.eval_masks_op_by_op(black_box(&q), &idx, &mut mout)
                .unwrap()
        })
    });
    g.bench_function("cold/auto", |bn| {
        bn.iter(|| {
            ev.eval(black_box(&q), &idx, Engine::Auto, &mut out)
                .unwrap()
        })
    });
    ev.eval(&q, &idx, Engine::Auto, &mut out).unwrap();
    let report = ev.eval_auto(&q, &idx, &mut out).unwrap();
    eprintln!("{group}: auto: {}", report.reason());
    let mut cache = QueryCache::default();
    cache.insert(&q, &doc, Arc::new(out.clone()));
    g.bench_function("cache_hit", |bn| {
        bn.iter(|| black_box(cache.get(black_box(&q), &doc).unwrap()))
    });
    g.bench_function("build_index", |bn| {
        bn.iter(|| black_box(TagIndex::build(black_box(&doc))))
    });
    g.bench_function("build_index_all_masks", |bn| {
        bn.iter(|| {
            let idx = TagIndex::build(black_box(&doc));
            idx.prepare_all_masks();
            black_box(idx)
        })
    });
    g.finish();
}

/// One clip of 64,000 frames (1,000 words), two tags with `d` ranges per word each, `A & B | A - B`.
fn auto_rule(c: &mut Criterion) {
    let mut g = c.benchmark_group("auto_rule");
    for per_word in [0.05f64, 0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.0] {
        let mut rng = Rng(0xABCD);
        let mut doc = TagDocument::default();
        doc.add_clip(ClipInfo {
            name: "c".into(),
            frames: 64_000,
            fps: 30.0,
            source: None,
            unit_cm: None,
        })
        .unwrap();
        for name in ["A", "B"] {
            let t = doc.add_tag(name, None).unwrap();
            let n = (per_word * 1000.0) as usize;
            let period = 64_000 / n as u64;
            let ranges: Vec<Range> = (0..n as u64)
                .map(|i| {
                    let s = (i * period + rng.below(period / 2)) as u32;
                    Range::new(s, s + 1 + rng.below(period / 2) as u32)
                })
                .collect();
            doc.set_ranges(t, 0, ranges).unwrap();
        }
        let q = doc.parse_query("A & B | A - B").unwrap();
        let idx = TagIndex::build(&doc);
        idx.prepare_masks(&q);
        let mut ev = Evaluator::new();
        let mut out = RangeSet::new();
        g.bench_with_input(BenchmarkId::new("ranges", per_word), &q, |bn, q| {
            bn.iter(|| ev.eval(q, &idx, Engine::Ranges, &mut out).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("masks", per_word), &q, |bn, q| {
            bn.iter(|| ev.eval(q, &idx, Engine::Masks, &mut out).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, ranges_50k, masks_10m, db, auto_rule);
criterion_main!(benches);
