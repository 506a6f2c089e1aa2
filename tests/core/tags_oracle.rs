//! The engines against a slow, obvious model: per-frame `BTreeSet`s.
//!
//! Random documents include empty clips (0 frames), one-frame clips, clips of exactly 64/128
//! frames, ranges at 0 and at `frames`, adjacent ranges (merged by construction) and dense one-frame
//! ranges; random queries use every operator and every filter, built both with the operator
//! overloads and through the text parser.

use std::collections::BTreeSet;

use proptest::prelude::*;
use taglane::core::tags::filters::{Filter, random_pick};
use taglane::core::tags::mask::{self, Mask};
use taglane::core::tags::parse::{parse_query, query_to_text, quote_name};
use taglane::core::tags::query::{Engine, Evaluator, Query, TagIndex};
use taglane::core::tags::range::{self, Range, RangeList};
use taglane::core::tags::{ClipInfo, MaskSet, RangeSet, TagDocument};

// ----- random documents -------------------------------------------------------------------------

fn frames_strategy() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(0u32),
        Just(1),
        Just(2),
        Just(63),
        Just(64),
        Just(65),
        Just(128),
        3u32..300
    ]
}

/// A raw (not yet canonical) range list inside `[0, frames)`, from one of several shapes.
fn ranges_strategy(frames: u32) -> BoxedStrategy<Vec<Range>> {
    if frames == 0 {
        return Just(Vec::new()).boxed();
    }
    let f = frames;
    prop_oneof![
        // nothing
        1 => Just(Vec::new()),
        // the whole clip
        1 => Just(vec![Range::new(0, f)]),
        // random ranges, often touching 0 and `frames`
        4 => proptest::collection::vec((0..f, 1..=f), 0..8).prop_map(move |v| {
            v.into_iter()
                .map(|(s, len)| Range::new(s, (s + len).min(f)))
                .chain([Range::new(0, 1.min(f)), Range::new(f - 1, f)].into_iter().take(if f.is_multiple_of(3) { 2 } else { 0 }))
                .collect()
        }),
        // adjacent pairs: [a, b) and [b, c)
        1 => proptest::collection::vec((0..f, 0..f, 0..f), 0..4).prop_map(|v| {
            v.into_iter()
                .flat_map(|(a, b, c)| {
                    let mut x = [a, b, c];
                    x.sort_unstable();
                    [Range::new(x[0], x[1]), Range::new(x[1], x[2])]
                })
                .collect()
        }),
        // dense one-frame ranges: every `step`-th frame
        2 => (2u32..4, 0u32..2).prop_map(move |(step, phase)| {
            (phase..f).step_by(step as usize).map(|s| Range::new(s, s + 1)).collect()
        }),
    ]
    .boxed()
}

fn doc_strategy() -> impl Strategy<Value = TagDocument> {
    (
        proptest::collection::vec(frames_strategy(), 1..6),
        1usize..5,
    )
        .prop_flat_map(|(frames, ntags)| {
            let per_tag: Vec<BoxedStrategy<Vec<Range>>> =
                frames.iter().map(|&f| ranges_strategy(f)).collect();
            (Just(frames), proptest::collection::vec(per_tag, ntags))
        })
        .prop_map(|(frames, tags)| {
            let mut doc = TagDocument::default();
            for (i, &f) in frames.iter().enumerate() {
                doc.add_clip(ClipInfo {
                    name: format!("clip_{i}"),
                    frames: f,
                    fps: 30.0,
                    source: None,
                    unit_cm: None,
                })
                .unwrap();
            }
            let names = ["Run", "loco:Walk", "a.b/c", "two words", "Jump"];
            for (t, per_clip) in tags.into_iter().enumerate() {
                let tag = doc.add_tag(names[t], None).unwrap();
                for (c, mut ranges) in per_clip.into_iter().enumerate() {
                    ranges.retain(|r| r.start < r.stop);
                    doc.set_ranges(tag, c as u32, ranges).unwrap();
                }
            }
            doc
        })
}

// ----- random queries ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Ast {
    Tag(u32),
    Not(Box<Ast>),
    Bin(char, Box<Ast>, Box<Ast>),
    Call(Filter, u32, Box<Ast>),
}

fn ast_strategy(ntags: u32, filters: bool) -> impl Strategy<Value = Ast> {
    let leaf = (0..ntags).prop_map(Ast::Tag);
    leaf.prop_recursive(5, 24, 2, move |inner| {
        let bin = (
            prop_oneof![Just('|'), Just('&'), Just('-'), Just('^')],
            inner.clone(),
            inner.clone(),
        )
            .prop_map(|(op, a, b)| Ast::Bin(op, Box::new(a), Box::new(b)));
        let not = inner.clone().prop_map(|a| Ast::Not(Box::new(a)));
        if filters {
            let call = (
                proptest::sample::select(Filter::ALL.to_vec()),
                0u32..40,
                inner,
            )
                .prop_map(|(f, n, a)| Ast::Call(f, n, Box::new(a)));
            prop_oneof![3 => bin, 1 => not, 2 => call].boxed()
        } else {
            prop_oneof![3 => bin, 1 => not].boxed()
        }
    })
}

fn to_query(ast: &Ast) -> Query {
    match ast {
        Ast::Tag(t) => Query::tag(*t),
        Ast::Not(a) => !to_query(a),
        Ast::Bin(op, a, b) => {
            let (a, b) = (to_query(a), to_query(b));
            match op {
                '|' => a | b,
                '&' => a & b,
                '-' => a - b,
                _ => a ^ b,
            }
        }
        Ast::Call(f, n, a) => to_query(a).filter(*f, *n),
    }
}

fn prec(op: char) -> u8 {
    match op {
        '|' => 1,
        '^' => 2,
        '&' => 3,
        _ => 4,
    }
}

/// Text with as few parentheses as the precedence rules allow (left-associative operators).
fn to_text(ast: &Ast, names: &[String], min_prec: u8, not_word: &mut bool) -> String {
    match ast {
        Ast::Tag(t) => quote_name(&names[*t as usize]),
        Ast::Not(a) => {
            *not_word = !*not_word;
            let inner = to_text(a, names, 5, not_word);
            if *not_word {
                format!("not {inner}")
            } else {
                format!("!{inner}")
            }
        }
        Ast::Bin(op, a, b) => {
            let p = prec(*op);
            let s = format!(
                "{} {op} {}",
                to_text(a, names, p, not_word),
                to_text(b, names, p + 1, not_word)
            );
            if p < min_prec { format!("({s})") } else { s }
        }
        Ast::Call(f, n, a) => {
            let inner = to_text(a, names, 0, not_word);
            match f.argument() {
                None => format!("{}({inner})", f.name()),
                Some(_) => format!("{}({inner}, {n})", f.name()),
            }
        }
    }
}

// ----- the model --------------------------------------------------------------------------------

type Frames = BTreeSet<u32>;

fn runs(set: &Frames) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for &f in set {
        match out.last_mut() {
            Some(last) if last.1 == f => last.1 = f + 1,
            _ => out.push((f, f + 1)),
        }
    }
    out
}

fn model_filter(f: Filter, n: u32, set: &Frames, frames: u32, clip: u32) -> Frames {
    let runs = runs(set);
    let run_of = |x: u32| runs.iter().position(|&(s, e)| s <= x && x < e);
    let all: Vec<u32> = (0..frames).collect();
    let keep = |x: u32| -> bool {
        match f {
            Filter::Grow => set.iter().any(|&g| g.abs_diff(x) <= n),
            Filter::Shrink => {
                set.contains(&x)
                    && (i64::from(x) - i64::from(n)..=i64::from(x) + i64::from(n))
                        .all(|g| g >= 0 && set.contains(&(g as u32)))
            }
            _ => {
                let Some(i) = run_of(x) else { return false };
                let (s, e) = runs[i];
                match f {
                    Filter::First => x - s < n,
                    Filter::Last => e - x <= n,
                    Filter::Longer => e - s > n,
                    Filter::Shorter => e - s < n,
                    Filter::FirstRange => i == 0,
                    Filter::LastRange => i == runs.len() - 1,
                    Filter::Random => i == random_pick(n, clip, runs.len()),
                    Filter::Grow | Filter::Shrink => unreachable!(),
                }
            }
        }
    };
    all.into_iter().filter(|&x| keep(x)).collect()
}

fn model(ast: &Ast, doc: &TagDocument, clip: u32) -> Frames {
    let frames = doc.clips[clip as usize].frames;
    match ast {
        Ast::Tag(t) => doc.tags[*t as usize]
            .ranges
            .get(&clip)
            .map(|v| v.iter().flat_map(|r| r.start..r.stop).collect())
            .unwrap_or_default(),
        Ast::Not(a) => {
            let s = model(a, doc, clip);
            (0..frames).filter(|f| !s.contains(f)).collect()
        }
        Ast::Bin(op, a, b) => {
            let (a, b) = (model(a, doc, clip), model(b, doc, clip));
            match op {
                '|' => a.union(&b).copied().collect(),
                '&' => a.intersection(&b).copied().collect(),
                '-' => a.difference(&b).copied().collect(),
                _ => a.symmetric_difference(&b).copied().collect(),
            }
        }
        Ast::Call(f, n, a) => model_filter(*f, *n, &model(a, doc, clip), frames, clip),
    }
}

fn model_set(ast: &Ast, doc: &TagDocument) -> Vec<(u32, Vec<Range>)> {
    (0..doc.clips.len() as u32)
        .filter_map(|c| {
            let r: Vec<Range> = runs(&model(ast, doc, c))
                .into_iter()
                .map(|(s, e)| Range::new(s, e))
                .collect();
            (!r.is_empty()).then_some((c, r))
        })
        .collect()
}

fn as_vec(set: &RangeSet) -> Vec<(u32, Vec<Range>)> {
    set.iter().map(|(c, r)| (c, r.to_vec())).collect()
}

fn check_all_engines(doc: &TagDocument, ast: &Ast) -> Result<(), TestCaseError> {
    let expected = model_set(ast, doc);
    let q = to_query(ast);
    let idx = TagIndex::build(doc);
    let mut ev = Evaluator::new();
    let mut out = RangeSet::new();
    for engine in [Engine::Ranges, Engine::Masks, Engine::Auto] {
        ev.eval(&q, &idx, engine, &mut out).unwrap();
        prop_assert_eq!(&as_vec(&out), &expected, "engine {:?}", engine);
        for (_, r) in out.iter() {
            prop_assert!(range::is_canonical(r));
        }
    }
    let mut m = MaskSet::new();
    ev.eval_masks_op_by_op(&q, &idx, &mut m).unwrap();
    m.to_range_set(&mut out);
    prop_assert_eq!(&as_vec(&out), &expected, "masks op by op");
    ev.eval_masks_fused(&q, &idx, &mut m).unwrap();
    m.to_range_set(&mut out);
    prop_assert_eq!(&as_vec(&out), &expected, "masks one pass");

    // The same query through the text language.
    let names: Vec<String> = doc.tags.iter().map(|t| t.name.clone()).collect();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut not_word = false;
    let text = to_text(ast, &names, 0, &mut not_word);
    let parsed =
        parse_query(&text, &name_refs).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
    prop_assert_eq!(&parsed, &q, "parsed `{}`", text);
    // And back: the printed form of the query parses to the same code.
    let printed = query_to_text(&q, &name_refs);
    let reparsed = parse_query(&printed, &name_refs)
        .map_err(|e| TestCaseError::fail(format!("{printed}: {e}")))?;
    prop_assert_eq!(&reparsed, &q, "printed `{}`", printed);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn engines_agree_with_the_model_on_logic((doc, ast) in doc_strategy().prop_flat_map(|d| {
        let n = d.tags.len() as u32;
        (Just(d), ast_strategy(n, false))
    })) {
        check_all_engines(&doc, &ast)?;
    }

    #[test]
    fn engines_agree_with_the_model_with_filters((doc, ast) in doc_strategy().prop_flat_map(|d| {
        let n = d.tags.len() as u32;
        (Just(d), ast_strategy(n, true))
    })) {
        check_all_engines(&doc, &ast)?;
    }

    #[test]
    fn vectorize_rasterize_round_trips(frames in frames_strategy(), raw in frames_strategy().prop_flat_map(ranges_strategy)) {
        let list = RangeList::from_ranges(raw.into_iter().filter(|r| r.stop <= frames).collect());
        let m = Mask::from_ranges(&list, frames);
        prop_assert_eq!(m.to_ranges(), list.as_slice().to_vec());
        let mut out = Vec::new();
        mask::vectorize(&m, &mut out);
        prop_assert_eq!(&out[..], list.as_slice());
        for f in 0..frames {
            prop_assert_eq!(m.get(f), list.iter().any(|r| r.contains(f)));
        }
    }

    #[test]
    fn sweeps_agree_with_the_model(frames in 1u32..200, a in (1u32..200).prop_flat_map(ranges_strategy), b in (1u32..200).prop_flat_map(ranges_strategy)) {
        let a = RangeList::from_ranges(a);
        let b = RangeList::from_ranges(b);
        let sa: Frames = a.iter().flat_map(|r| r.start..r.stop).collect();
        let sb: Frames = b.iter().flat_map(|r| r.start..r.stop).collect();
        let to_ranges = |s: Frames| -> Vec<Range> { runs(&s).into_iter().map(|(x, y)| Range::new(x, y)).collect() };
        prop_assert_eq!(a.union(&b).to_vec(), to_ranges(sa.union(&sb).copied().collect()));
        prop_assert_eq!(a.intersection(&b).to_vec(), to_ranges(sa.intersection(&sb).copied().collect()));
        prop_assert_eq!(a.difference(&b).to_vec(), to_ranges(sa.difference(&sb).copied().collect()));
        prop_assert_eq!(a.symmetric_difference(&b).to_vec(), to_ranges(sa.symmetric_difference(&sb).copied().collect()));
        prop_assert_eq!(a.complement(frames).to_vec(), to_ranges((0..frames).filter(|f| !sa.contains(f)).collect()));
        let (mut out, mut events) = (Vec::new(), Vec::new());
        range::sweep_traced(range::SetOp::Difference, &a, &b, &mut out, &mut events);
        prop_assert_eq!(out, a.difference(&b).to_vec());
    }
}
