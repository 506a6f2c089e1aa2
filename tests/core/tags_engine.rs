//! The query cache, the `auto` engine's choices and deep queries.

use std::sync::Arc;

use taglane::core::tags::query::{Engine, QueryEngine, evaluate};
use taglane::core::tags::{ClipInfo, Range, TagDocument};

fn doc() -> TagDocument {
    let mut d = TagDocument::default();
    d.add_clip(ClipInfo {
        name: "sparse".into(),
        frames: 10_000,
        fps: 30.0,
        source: None,
        unit_cm: None,
    })
    .unwrap();
    d.add_clip(ClipInfo {
        name: "dense".into(),
        frames: 640,
        fps: 30.0,
        source: None,
        unit_cm: None,
    })
    .unwrap();
    for name in ["A", "B", "C"] {
        d.add_tag(name, None).unwrap();
    }
    d.set_ranges(0, 0, vec![Range::new(0, 5000)]).unwrap();
    d.set_ranges(1, 0, vec![Range::new(2500, 7500)]).unwrap();
    // Every other frame: 320 ranges over 10 words.
    d.set_ranges(
        0,
        1,
        (0..640).step_by(2).map(|f| Range::new(f, f + 1)).collect(),
    )
    .unwrap();
    d.set_ranges(
        1,
        1,
        (0..640).step_by(3).map(|f| Range::new(f, f + 1)).collect(),
    )
    .unwrap();
    d.set_ranges(2, 0, vec![Range::new(9000, 9100)]).unwrap();
    d
}

#[test]
fn cache_hits_and_never_goes_stale() {
    let mut d = doc();
    let mut eng = QueryEngine::new(&d);
    let q = d.parse_query("A & B").unwrap();
    let first = eng.run(&d, &q, Engine::Ranges).unwrap();
    assert!(!first.cached);
    let again = eng.run(&d, &q, Engine::Ranges).unwrap();
    assert!(again.cached);
    assert!(Arc::ptr_eq(&first.result, &again.result));

    // Editing a tag the query does not read keeps the entry.
    d.add_range(2, 1, Range::new(0, 10)).unwrap();
    assert!(eng.run(&d, &q, Engine::Ranges).unwrap().cached);

    // Editing a tag it reads invalidates it, and the new result reflects the edit.
    d.set_ranges(1, 0, vec![Range::new(0, 100)]).unwrap();
    let after = eng.run(&d, &q, Engine::Masks).unwrap();
    assert!(!after.cached);
    assert_eq!(after.result.clip_ranges(0), &[Range::new(0, 100)]);

    // Removing a tag shifts indices: the query code [1] meant B and now means C; it must not hit.
    let q1 = d.parse_query("B").unwrap();
    let b_result = eng.run(&d, &q1, Engine::Auto).unwrap().result;
    d.remove_tag(0).unwrap();
    let shifted = eng.run(&d, &q1, Engine::Auto).unwrap();
    assert!(!shifted.cached);
    assert_ne!(*shifted.result, *b_result);
    assert_eq!(
        *shifted.result,
        evaluate(&d, &d.parse_query("C").unwrap(), Engine::Ranges)
            .unwrap()
            .0
    );
    // A query naming a tag index that no longer exists is an error, not a stale hit.
    let q01 = taglane::core::tags::Query::tag(0) & taglane::core::tags::Query::tag(2);
    assert!(eng.run(&d, &q01, Engine::Auto).is_err());

    // Adding a clip changes what `!x` covers.
    let not_c = d.parse_query("!C").unwrap();
    let before = eng.run(&d, &not_c, Engine::Ranges).unwrap();
    assert_eq!(before.result.clips().len(), 2);
    d.add_clip(ClipInfo {
        name: "new".into(),
        frames: 7,
        fps: 30.0,
        source: None,
        unit_cm: None,
    })
    .unwrap();
    let with_new = eng.run(&d, &not_c, Engine::Ranges).unwrap();
    assert!(!with_new.cached);
    assert_eq!(with_new.result.clip_ranges(2), &[Range::new(0, 7)]);
}

#[test]
fn auto_picks_masks_for_dense_clips_and_ranges_for_sparse_ones() {
    let d = doc();
    let q = d.parse_query("A & B | A - B").unwrap();
    let (auto, report) = evaluate(&d, &q, Engine::Auto).unwrap();
    let report = report.unwrap();
    let choice = |clip| {
        report
            .choices
            .iter()
            .find(|c| c.clip == clip)
            .unwrap()
            .engine
    };
    assert_eq!(choice(0), Engine::Ranges);
    assert_eq!(choice(1), Engine::Masks);
    assert!(
        report.reason().contains("masks on 1 clips, ranges on 1"),
        "{}",
        report.reason()
    );
    assert_eq!(auto, evaluate(&d, &q, Engine::Ranges).unwrap().0);
    assert_eq!(auto, evaluate(&d, &q, Engine::Masks).unwrap().0);

    let with_filter = d.parse_query("grow(A, 3) & B").unwrap();
    let (_, report) = evaluate(&d, &with_filter, Engine::Auto).unwrap();
    let report = report.unwrap();
    assert!(report.has_filters);
    assert_eq!(report.clips_with(Engine::Masks), 0);
}

#[test]
fn queries_deeper_than_the_inline_capacity_work() {
    let d = doc();
    let text = (0..30)
        .map(|i| ["A", "B", "C"][i % 3])
        .collect::<Vec<_>>()
        .join(" - ");
    let q = d.parse_query(&format!("!({text}) & (A | B)")).unwrap();
    assert!(!q.is_inline());
    let r = evaluate(&d, &q, Engine::Ranges).unwrap().0;
    assert!(
        r == evaluate(&d, &q, Engine::Masks).unwrap().0,
        "masks differ"
    );
    assert!(
        r == evaluate(&d, &q, Engine::Auto).unwrap().0,
        "auto differs"
    );
    // A - B - C - A - ... is empty (the fourth term removes A), so the query is A | B.
    let expected = evaluate(&d, &d.parse_query("A | B").unwrap(), Engine::Ranges)
        .unwrap()
        .0;
    assert!(r == expected, "deep query differs from A | B");
}

/// `auto` on a query whose masks do not fit in `idx`'s budget: every clip on ranges, and the
/// ranges engine's result.
fn auto_uses_ranges_over_budget(
    d: &TagDocument,
    q: &taglane::core::tags::query::Query,
    idx: &taglane::core::tags::query::TagIndex,
    ev: &mut taglane::core::tags::query::Evaluator,
) {
    let mut out = taglane::core::tags::RangeSet::new();
    let report = ev.eval(q, idx, Engine::Auto, &mut out).unwrap().unwrap();
    assert!(report.masks_over_budget);
    assert_eq!(report.clips_with(Engine::Masks), 0);
    assert_eq!(out, evaluate(d, q, Engine::Ranges).unwrap().0);
}

#[test]
fn masks_over_budget_are_not_built_and_auto_uses_ranges() {
    use taglane::core::tags::RangeSet;
    use taglane::core::tags::query::{EvalError, Evaluator, TagIndex};
    let d = doc();
    let q = d.parse_query("A & B | !C").unwrap();
    let small = TagIndex::build_with_mask_budget(&d, 100);
    assert!(!small.has_masks());
    assert!(small.masks_needed_bytes() > 100);
    let mut ev = Evaluator::new();
    let mut out = RangeSet::new();
    assert!(matches!(
        ev.eval(&q, &small, Engine::Masks, &mut out),
        Err(EvalError::MasksOverBudget { .. })
    ));
    auto_uses_ranges_over_budget(&d, &q, &small, &mut ev);
    let full = TagIndex::build(&d);
    assert!(full.has_masks());
}

/// A tag's masks are built at their first use by a query (or when prepared), forgotten when the tag
/// changes, and the engines agree whichever were built.
#[test]
fn masks_are_built_at_first_use_and_forgotten_on_edit() {
    use taglane::core::tags::query::{Evaluator, TagIndex};
    use taglane::core::tags::{MaskSet, RangeSet};
    let mut d = doc();
    let mut idx = TagIndex::build(&d);
    assert!(idx.has_masks());
    assert_eq!(idx.masks_built(), 0);
    assert_eq!(idx.masks_memory_bytes(), 0);
    let mut ev = Evaluator::new();
    let (mut ranges, mut masks) = (RangeSet::new(), MaskSet::new());
    let mut by_masks = RangeSet::new();
    let a_and_b = d.parse_query("A & B").unwrap();
    // The ranges engine builds no masks.
    ev.eval_ranges(&a_and_b, &idx, &mut ranges).unwrap();
    assert_eq!(idx.masks_built(), 0);
    // The masks engine builds those of the tags it reads, and only those.
    ev.eval_masks(&a_and_b, &idx, &mut masks).unwrap();
    masks.to_range_set(&mut by_masks);
    assert_eq!(by_masks, ranges);
    assert_eq!(idx.masks_built(), 2);
    assert!(idx.tag_masks(0).is_some() && idx.tag_masks(1).is_some());
    let built = idx.masks_memory_bytes();
    assert!(built > 0);
    // Preparing a query's masks builds the missing one; asking again builds nothing.
    let with_c = d.parse_query("A | C").unwrap();
    idx.prepare_masks(&with_c);
    assert_eq!(idx.masks_built(), 3);
    assert!(idx.masks_memory_bytes() > built);
    idx.prepare_all_masks();
    assert_eq!(idx.masks_built(), 3);
    // An edit of B forgets B's masks only; the next masks query builds them from the new ranges.
    d.set_ranges(1, 0, vec![Range::new(100, 200)]).unwrap();
    assert_eq!(idx.sync(&d), 1);
    assert_eq!(idx.masks_built(), 2);
    ev.eval_masks(&a_and_b, &idx, &mut masks).unwrap();
    masks.to_range_set(&mut by_masks);
    assert_eq!(by_masks, evaluate(&d, &a_and_b, Engine::Ranges).unwrap().0);
    assert_eq!(idx.masks_built(), 3);
    // `auto` on the dense clip uses masks and agrees with ranges.
    let mut fresh = TagIndex::build(&d);
    let report = ev
        .eval(&a_and_b, &fresh, Engine::Auto, &mut ranges)
        .unwrap()
        .unwrap();
    assert!(report.clips_with(Engine::Masks) > 0);
    assert_eq!(ranges, evaluate(&d, &a_and_b, Engine::Ranges).unwrap().0);
    assert_eq!(fresh.masks_built(), 2);
    // A clip edit rebuilds the index: every mask forgotten.
    d.add_clip(ClipInfo {
        name: "new".into(),
        frames: 100,
        fps: 30.0,
        source: None,
        unit_cm: None,
    })
    .unwrap();
    fresh.sync(&d);
    assert_eq!(fresh.masks_built(), 0);
}

/// A budget too small for every tag's masks together still runs the queries whose own masks fit
/// (with those built before); a query whose masks do not fit is refused by the masks engine and
/// evaluated with ranges by `auto`, with the same result.
#[test]
fn the_mask_budget_is_per_query() {
    use taglane::core::tags::RangeSet;
    use taglane::core::tags::query::{EvalError, Evaluator, TagIndex};
    let d = doc();
    let full = TagIndex::build(&d);
    let q_ab = d.parse_query("A & B").unwrap();
    let q_abc = d.parse_query("A & B | C").unwrap();
    let (ab, abc) = (full.masks_bytes_for(&q_ab), full.masks_bytes_for(&q_abc));
    assert!(ab < abc && abc <= full.masks_needed_bytes());
    // Room for A's and B's masks (and the mask over all clips), not for C's as well.
    let idx = TagIndex::build_with_mask_budget(&d, ab);
    assert!(!idx.has_masks());
    assert!(idx.masks_fit(&q_ab) && !idx.masks_fit(&q_abc));
    let mut ev = Evaluator::new();
    let mut out = RangeSet::new();
    ev.eval(&q_ab, &idx, Engine::Masks, &mut out).unwrap();
    assert_eq!(out, evaluate(&d, &q_ab, Engine::Ranges).unwrap().0);
    assert_eq!(idx.masks_built(), 2);
    assert!(matches!(
        ev.eval(&q_abc, &idx, Engine::Masks, &mut out),
        Err(EvalError::MasksOverBudget { needed_bytes, budget_bytes })
            if needed_bytes == abc && budget_bytes == ab
    ));
    auto_uses_ranges_over_budget(&d, &q_abc, &idx, &mut ev);
    // C alone does not fit beside A's and B's, built before; nothing more was built.
    assert!(idx.tag_masks(2).is_none());
    assert!(idx.tag_masks(0).is_some());
    assert_eq!(idx.masks_built(), 2);
    // Making room for a query on C forgets B's masks (A's are read by it too); the query engine
    // does that before it evaluates.
    let mut idx = idx;
    let q_ac = d.parse_query("A - C").unwrap();
    assert!(!idx.masks_fit(&q_ac));
    assert!(idx.make_room_for(&q_ac));
    assert_eq!(idx.masks_built(), 1);
    ev.eval(&q_ac, &idx, Engine::Masks, &mut out).unwrap();
    assert_eq!(out, evaluate(&d, &q_ac, Engine::Ranges).unwrap().0);
    assert_eq!(idx.masks_built(), 2);
    // No room for all three even with nothing else built.
    assert!(!idx.make_room_for(&q_abc));
    let mut engine = taglane::core::tags::QueryEngine {
        index: idx,
        ..Default::default()
    };
    let outcome = engine.run(&d, &q_ab, Engine::Masks).unwrap();
    assert_eq!(
        *outcome.result,
        evaluate(&d, &q_ab, Engine::Ranges).unwrap().0
    );
}

/// Over budget, `make_room_for` forgets the masks read longest ago first, not every other tag's.
#[test]
fn making_room_forgets_the_masks_read_longest_ago() {
    use taglane::core::tags::query::TagIndex;
    let mut d = doc();
    d.add_tag("D", None).unwrap();
    // On both clips, as A and B are: D's masks take as many bytes as B's.
    d.set_ranges(3, 0, vec![Range::new(100, 200)]).unwrap();
    d.set_ranges(3, 1, vec![Range::new(0, 10)]).unwrap();
    let q = |text: &str| d.parse_query(text).unwrap();
    let full = TagIndex::build(&d);
    // Room for A's, B's and C's masks (and the mask over all clips), not for D's as well.
    let mut idx = TagIndex::build_with_mask_budget(&d, full.masks_bytes_for(&q("A | B | C")));
    assert!(!idx.masks_fit(&q("A | B | C | D")));
    let built = |idx: &TagIndex| {
        (0..4)
            .filter(|&t| idx.tag_masks_built(t))
            .collect::<Vec<_>>()
    };
    for text in ["A | B", "C - A"] {
        let query = q(text);
        assert!(idx.make_room_for(&query));
        idx.prepare_masks(&query);
    }
    assert_eq!(built(&idx), [0, 1, 2]);
    // D needs room: B was read longest ago (A and C since), so only B's masks go.
    let query = q("D");
    assert!(idx.make_room_for(&query));
    assert_eq!(built(&idx), [0, 2]);
    idx.prepare_masks(&query);
    assert_eq!(built(&idx), [0, 2, 3]);
    // A query whose own masks never fit (A's, B's and D's are more than A's, B's and C's)
    // forgets nothing, not even C's, which it does not read.
    assert!(!idx.make_room_for(&q("A | B | D")));
    assert_eq!(built(&idx), [0, 2, 3]);
    // Now B again: A was read longest ago (C and D since).
    assert!(idx.make_room_for(&q("B & C")));
    assert_eq!(built(&idx), [2, 3]);
}

/// Issue 16: a cached query must be fresh after every kind of clip edit, including ones that touch
/// no tag version (a clip inserted without ranges), their undo, removals that only renumber other
/// clips, and a changed frame count. Each step compares the engine's answer (cache first) with a
/// fresh evaluation, for queries that cover every clip.
#[test]
fn cached_results_follow_clip_edits_and_their_undo() {
    use taglane::core::doc::{Edit, History};
    let mut d = doc();
    let mut history = History::new();
    let mut eng = QueryEngine::new(&d);
    let queries: Vec<_> = ["!A", "!(A | B)", "first(!C, 1)", "A", "C", "longer(!A, 3)"]
        .iter()
        .map(|q| d.parse_query(q).unwrap())
        .collect();
    let check = |eng: &mut QueryEngine, d: &TagDocument, step: &str| {
        for q in &queries {
            for engine in [Engine::Ranges, Engine::Masks, Engine::Auto] {
                let got = eng.run(d, q, engine).unwrap().result;
                let fresh = evaluate(d, q, Engine::Ranges).unwrap().0;
                assert_eq!(*got, fresh, "{step}: {q:?} with {}", engine.name());
            }
        }
    };
    check(&mut eng, &d, "start");
    let clip = |name: &str, frames| ClipInfo {
        name: name.into(),
        frames,
        fps: 30.0,
        source: None,
        unit_cm: None,
    };
    // Import: a clip with no ranges bumps no tag version.
    history
        .apply(
            &mut d,
            Edit::InsertClip {
                index: 2,
                clip: clip("imported", 50),
                ranges: vec![],
            },
            "import",
        )
        .unwrap();
    check(&mut eng, &d, "after import");
    history.undo(&mut d).unwrap();
    check(&mut eng, &d, "after undoing the import");
    history.redo(&mut d).unwrap();
    check(&mut eng, &d, "after redoing the import");
    // Insert at the front: every other clip's id moves.
    history
        .apply(
            &mut d,
            Edit::InsertClip {
                index: 0,
                clip: clip("front", 20),
                ranges: vec![],
            },
            "insert at front",
        )
        .unwrap();
    check(&mut eng, &d, "after inserting at the front");
    // Remove a clip that C has no ranges on: C's ranges are renumbered.
    history
        .apply(&mut d, Edit::RemoveClip { index: 0 }, "remove")
        .unwrap();
    check(&mut eng, &d, "after removing a clip");
    // Remove, then insert another clip of the same length at the same place: the clip count is
    // back to what the cache saw, but the clips are not the same.
    history
        .apply(&mut d, Edit::RemoveClip { index: 1 }, "remove dense")
        .unwrap();
    check(&mut eng, &d, "after removing dense");
    history
        .apply(
            &mut d,
            Edit::InsertClip {
                index: 1,
                clip: clip("other", 640),
                ranges: vec![],
            },
            "insert other",
        )
        .unwrap();
    check(&mut eng, &d, "after replacing dense with another clip");
    // A clip's frame count changes (its file was re-imported shorter, then longer).
    history
        .apply(
            &mut d,
            Edit::SetClipFrames {
                clip: 0,
                frames: 6000,
            },
            "shorter",
        )
        .unwrap();
    check(&mut eng, &d, "after shortening a clip");
    history.undo(&mut d).unwrap();
    check(&mut eng, &d, "after undoing the shortening");
    while history.undo(&mut d).is_some() {
        check(&mut eng, &d, "while undoing everything");
    }
}
