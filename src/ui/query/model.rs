//! The query panel's logic, without egui: evaluation with both engines, per-node results,
//! completion, highlighting classes, the step-through of one operation, history.

use std::hash::{Hash, Hasher};
use std::time::Instant;

use crate::core::tags::explain::{BinOp, Expr, ExprTree, NodeKind, postfix_text};
use crate::core::tags::parse::{LexKind, is_name_char, lex};
use crate::core::tags::query::{AutoReport, EvalError, QueryEngine};
use crate::core::tags::range::{SweepEvent, sweep_traced};
use crate::core::tags::{ClipId, Filter, MaskSet, Query, Range, RangeSet, TagDocument};

/// A query engine with the default mask budget (`QueryEngine::default()` has a zero budget).
pub fn new_engine() -> QueryEngine {
    QueryEngine::new(&TagDocument::default())
}

/// Most recent queries kept in the history.
pub const HISTORY_LEN: usize = 20;

/// Most completion candidates shown.
pub const MAX_COMPLETIONS: usize = 8;

/// Everything computed for one query on one state of the document.
#[derive(Debug, Clone)]
pub struct Evaluation {
    pub text: String,
    pub query: Query,
    /// Result of the ranges engine.
    pub ranges: RangeSet,
    /// Result of the masks engine, vectorized to ranges.
    pub masks: RangeSet,
    /// Result of the `auto` engine (the one exports and frozen tags use).
    pub auto: RangeSet,
    pub auto_report: AutoReport,
    /// Clips where the ranges and masks results differ (must stay empty).
    pub mismatched: Vec<ClipId>,
    /// Evaluation times in microseconds.
    pub ranges_us: f64,
    pub masks_us: f64,
    pub auto_us: f64,
    /// True when the query cache answered the `auto` run.
    pub cached: bool,
    /// Why the masks engine did not run (its masks would exceed the index's memory budget).
    pub masks_unavailable: Option<String>,
    /// Bytes of the result as packed ranges and as packed masks.
    pub result_ranges_bytes: usize,
    pub result_masks_bytes: usize,
    /// Bytes of the tag index: every tag's ranges, and the masks built so far (a tag's are built
    /// the first time a query reads it with masks), of how many tags.
    pub index_ranges_bytes: usize,
    pub index_masks_bytes: usize,
    pub index_masks_built: usize,
    pub index_tags: usize,
    pub postfix: String,
    pub tree: ExprTree,
    /// The result of every node of `tree` (ranges engine), by node index.
    pub node_results: Vec<RangeSet>,
}

impl Evaluation {
    pub fn agree(&self) -> bool {
        self.mismatched.is_empty()
    }
}

/// A cheap fingerprint of what query results depend on: the clip list's version (renewed by every
/// edit of a clip: its name, length, unit or take, an insertion or a removal, and by every load)
/// and count, and the tags' names and versions (every range edit gives a tag a fresh version, see
/// `core::tags::query::next_version`). Runs every frame, so it reads no range and no clip (it
/// hashed every clip's name: about 50 us a frame at 2,000 clips, 250 us at 10,000).
pub fn doc_fingerprint(doc: &TagDocument) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    doc.clips_version.hash(&mut h);
    doc.clips.len().hash(&mut h);
    for t in &doc.tags {
        t.name.hash(&mut h);
        t.version.hash(&mut h);
        t.ranges.len().hash(&mut h);
    }
    h.finish()
}

fn micros(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e6
}

/// Evaluates `q` with every engine, times them, and evaluates each node of its tree.
pub fn evaluate_all(
    engine: &mut QueryEngine,
    doc: &TagDocument,
    text: &str,
    q: &Query,
) -> Result<Evaluation, String> {
    let tree = ExprTree::from_query(q).map_err(|e| e.to_string())?;
    // The cache first (what an app asking for this query again would get).
    let outcome = engine
        .run(doc, q, crate::core::tags::Engine::Auto)
        .map_err(|e| e.to_string())?;
    engine.index.sync(doc);
    engine.index.make_room_for(q);
    let idx = &engine.index;
    // The masks of the query's tags are built at their first use: built here, outside the timings.
    idx.prepare_masks(q);
    let ev = &mut engine.evaluator;
    let mut ranges = RangeSet::new();
    let t = Instant::now();
    ev.eval_ranges(q, idx, &mut ranges)
        .map_err(|e| e.to_string())?;
    let ranges_us = micros(t);
    let mut mask_set = MaskSet::new();
    let t = Instant::now();
    let masks_unavailable = match ev.eval_masks(q, idx, &mut mask_set) {
        Ok(()) => None,
        // A document whose masks would not fit in memory: the masks engine cannot run.
        Err(e @ EvalError::MasksOverBudget { .. }) => Some(e.to_string()),
        Err(e) => return Err(e.to_string()),
    };
    let masks_us = micros(t);
    let mut masks = RangeSet::new();
    mask_set.to_range_set(&mut masks);
    let mut auto = RangeSet::new();
    let t = Instant::now();
    let auto_report = ev.eval_auto(q, idx, &mut auto).map_err(|e| e.to_string())?;
    let auto_us = micros(t);
    let mut mismatched: Vec<ClipId> = Vec::new();
    for c in 0..doc.clips.len() as ClipId {
        if (masks_unavailable.is_none() && ranges.clip_ranges(c) != masks.clip_ranges(c))
            || ranges.clip_ranges(c) != auto.clip_ranges(c)
            || outcome.result.clip_ranges(c) != ranges.clip_ranges(c)
        {
            mismatched.push(c);
        }
    }
    let mut node_results = Vec::with_capacity(tree.nodes.len());
    for i in 0..tree.nodes.len() {
        let mut out = RangeSet::new();
        ev.eval_ranges(&tree.node_query(i), idx, &mut out)
            .map_err(|e| e.to_string())?;
        node_results.push(out);
    }
    Ok(Evaluation {
        text: text.to_owned(),
        query: q.clone(),
        result_ranges_bytes: ranges.memory_bytes(),
        result_masks_bytes: mask_set.memory_bytes(),
        index_ranges_bytes: idx.ranges_memory_bytes(),
        index_masks_bytes: idx.masks_memory_bytes(),
        index_masks_built: idx.masks_built(),
        index_tags: idx.tag_count(),
        postfix: postfix_text(q, doc),
        ranges,
        masks,
        auto,
        auto_report,
        mismatched,
        ranges_us,
        masks_us,
        auto_us,
        cached: outcome.cached,
        masks_unavailable,
        tree,
        node_results,
    })
}

/// How a piece of query text is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenClass {
    Tag,
    UnknownTag,
    Function,
    Keyword,
    Operator,
    Paren,
    Number,
    Space,
    Other,
}

/// Splits `text` into coloured pieces (byte ranges covering the whole text, in order), through the
/// parser's own lexer ([`lex`]), so what is coloured as an error is what the parser refuses. Never
/// fails: an unterminated quote runs to the end.
pub fn highlight(text: &str, tag_names: &[&str]) -> Vec<(std::ops::Range<usize>, TokenClass)> {
    let lexemes = lex(text);
    let mut out = Vec::with_capacity(lexemes.len());
    for (k, l) in lexemes.iter().enumerate() {
        let class = match &l.kind {
            LexKind::Space => TokenClass::Space,
            LexKind::Op(_) => TokenClass::Operator,
            LexKind::Paren(_) => TokenClass::Paren,
            LexKind::Quoted { name, .. } => {
                if tag_names.contains(&name.as_str()) {
                    TokenClass::Tag
                } else {
                    TokenClass::UnknownTag
                }
            }
            LexKind::Number(_) => TokenClass::Number,
            LexKind::Name(word) => {
                let next = lexemes[k + 1..]
                    .iter()
                    .find(|n| n.kind != LexKind::Space)
                    .map(|n| &n.kind);
                if word == "not" {
                    TokenClass::Keyword
                } else if next == Some(&LexKind::Paren('(')) {
                    TokenClass::Function
                } else if tag_names.contains(&word.as_str()) {
                    TokenClass::Tag
                } else {
                    TokenClass::UnknownTag
                }
            }
            LexKind::DigitName(_) | LexKind::Unexpected(_) => TokenClass::Other,
        };
        out.push((l.bytes.clone(), class));
    }
    out
}

/// Byte range of a character span of `text`.
pub fn char_span_to_bytes(text: &str, span: &std::ops::Range<usize>) -> std::ops::Range<usize> {
    let byte = |c: usize| text.char_indices().nth(c).map_or(text.len(), |(b, _)| b);
    let (a, b) = (byte(span.start), byte(span.end.max(span.start)));
    a..b
}

/// Completions for the word that ends at character `cursor`: `(start of the word in characters,
/// candidates)`. Candidates are tag names (matching from the start or after a namespace),
/// namespaces (`locomotion:`) and function names (`first(`), best first.
pub fn completions(text: &str, cursor: usize, tag_names: &[&str]) -> (usize, Vec<String>) {
    let chars: Vec<char> = text.chars().collect();
    let cursor = cursor.min(chars.len());
    let mut start = cursor;
    while start > 0 && is_name_char(chars[start - 1]) {
        start -= 1;
    }
    let word: String = chars[start..cursor].iter().collect();
    if word.is_empty() || word.starts_with(|c: char| c.is_ascii_digit()) {
        return (start, Vec::new());
    }
    let lower = word.to_lowercase();
    let mut scored: Vec<(u8, String)> = Vec::new();
    let mut push = |score: u8, s: String| {
        if s != word && !scored.iter().any(|(_, x)| *x == s) {
            scored.push((score, s));
        }
    };
    for name in tag_names {
        let nl = name.to_lowercase();
        let short = nl.rsplit([':', '.', '/']).next().unwrap_or(&nl);
        let written = crate::core::tags::parse::quote_name(name);
        if nl.starts_with(&lower) {
            push(0, written);
        } else if short.starts_with(&lower) {
            push(1, written);
        } else if lower.len() >= 2 && nl.contains(&lower) {
            push(3, written);
        }
        // Namespaces: `loco` -> `locomotion:`.
        if let Some(k) = name.find(':') {
            let ns = &name[..=k];
            if ns.to_lowercase().starts_with(&lower) && ns.len() > word.len() {
                push(0, ns.to_owned());
            }
        }
    }
    for f in Filter::ALL {
        if f.name().starts_with(&lower) {
            push(2, format!("{}(", f.name()));
        }
    }
    if "not".starts_with(&lower) && lower.len() >= 2 {
        push(2, "not ".to_owned());
    }
    scored.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(a.1.len().cmp(&b.1.len()))
            .then(a.1.cmp(&b.1))
    });
    (
        start,
        scored
            .into_iter()
            .take(MAX_COMPLETIONS)
            .map(|(_, s)| s)
            .collect(),
    )
}

/// Replaces characters `[start, cursor)` of `text` by `with`; returns the new text and the
/// character position after the insertion.
pub fn apply_completion(text: &str, start: usize, cursor: usize, with: &str) -> (String, usize) {
    let chars: Vec<char> = text.chars().collect();
    let cursor = cursor.min(chars.len());
    let start = start.min(cursor);
    let mut s: String = chars[..start].iter().collect();
    s.push_str(with);
    let at = s.chars().count();
    s.extend(&chars[cursor..]);
    (s, at)
}

/// Adds `text` at the front of the history (moving it up when already there).
pub fn push_history(history: &mut Vec<String>, text: &str) {
    let t = text.trim();
    if t.is_empty() {
        return;
    }
    history.retain(|h| h != t);
    history.insert(0, t.to_owned());
    history.truncate(HISTORY_LEN);
}

/// One binary operation of a query traced on one clip.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTrace {
    pub node: usize,
    pub clip: ClipId,
    pub op: BinOp,
    pub a: Vec<Range>,
    pub b: Vec<Range>,
    pub out: Vec<Range>,
    pub events: Vec<SweepEvent>,
}

impl StepTrace {
    /// The output ranges completed after the first `steps` events, plus the one still open.
    pub fn output_after(&self, steps: usize) -> Vec<Range> {
        let steps = steps.min(self.events.len());
        let mut out: Vec<Range> = self.events[..steps]
            .iter()
            .filter_map(|e| e.output)
            .collect();
        if let Some(last) = steps.checked_sub(1).map(|k| self.events[k])
            && last.inside_out
        {
            let start = self.events[..steps]
                .iter()
                .rev()
                .take_while(|e| e.inside_out)
                .last()
                .map_or(last.frame, |e| e.frame);
            out.push(Range::new(start, last.frame));
        }
        out
    }
}

/// Traces binary node `node` of `eval`'s tree on `clip`: its two inputs' ranges there and the
/// events of the sweep. `None` when the node is not a binary operation.
pub fn trace_node(eval: &Evaluation, node: usize, clip: ClipId) -> Option<StepTrace> {
    let n = eval.tree.nodes.get(node)?;
    let NodeKind::Binary(op) = n.kind else {
        return None;
    };
    let a = eval.node_results[n.children[0]].clip_ranges(clip).to_vec();
    let b = eval.node_results[n.children[1]].clip_ranges(clip).to_vec();
    let mut out = Vec::new();
    let mut events = Vec::new();
    sweep_traced(op.set_op(), &a, &b, &mut out, &mut events);
    Some(StepTrace {
        node,
        clip,
        op,
        a,
        b,
        out,
        events,
    })
}

/// The first binary node of the tree in pre-order (the default for the step-through view).
pub fn first_binary_node(tree: &ExprTree) -> Option<usize> {
    tree.preorder()
        .into_iter()
        .map(|(i, _)| i)
        .find(|&i| matches!(tree.nodes[i].kind, NodeKind::Binary(_)))
}

/// A tag-name suggestion for a new frozen tag: `query:` and the query in words, a bare name
/// (`Walking & !Male` gives `query:Walking_and_not_Male`), so that queries that differ only in
/// their operators get different names; `_2`, `_3`, ... when the name is taken.
pub fn frozen_tag_name(doc: &TagDocument, text: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    for l in lex(text) {
        let word = match &l.kind {
            LexKind::Name(s) | LexKind::DigitName(s) => s.clone(),
            LexKind::Quoted { name, .. } => name
                .chars()
                .map(|c| if is_name_char(c) { c } else { '_' })
                .collect(),
            LexKind::Number(n) => n.clone(),
            LexKind::Op('&') => "and".into(),
            LexKind::Op('|') => "or".into(),
            LexKind::Op('-') => "minus".into(),
            LexKind::Op('^') => "xor".into(),
            LexKind::Op('!') => "not".into(),
            _ => continue,
        };
        let word = word.trim_matches('_');
        if !word.is_empty() {
            words.push(word.to_owned());
        }
    }
    let body: String = words
        .join("_")
        .chars()
        .take(crate::core::cut::MAX_QUERY_NAME_CHARS)
        .collect();
    let body = body.trim_matches(['_', '.', ':', '/']);
    let base = if body.is_empty() {
        "query".to_owned()
    } else {
        format!("query:{body}")
    };
    let mut name = base.clone();
    let mut n = 2;
    while doc.tags.iter().any(|t| t.name == name) {
        name = format!("{base}_{n}");
        n += 1;
    }
    name
}

// ---------------------------------------------------------------------------------------------
// Visual builder edits on an `Expr` (the text is rewritten from the tree after each edit).
// ---------------------------------------------------------------------------------------------

/// A change the builder asks for at one node.
#[derive(Debug, Clone, PartialEq)]
pub enum BuilderEdit {
    SetTag(String),
    SetOp(BinOp),
    SetFilter(Filter),
    SetArg(u32),
    /// Combine the node with a new tag: `node OP tag`.
    Combine(BinOp, String),
    /// `!node`, or remove the `!` of a complement node.
    ToggleNot,
    /// Wrap the node in a filter call.
    WrapFilter(Filter),
    /// Replace the node by its first operand.
    Unwrap,
    /// Take the node out of the query: its parent operation is replaced by its other operand
    /// (a complement or a filter of it goes too). Not the root.
    Remove,
}

/// Applies `edit` at the node reached by `path` (child indices from the root).
pub fn apply_builder_edit(root: &mut Expr, path: &[usize], edit: BuilderEdit) -> bool {
    if edit == BuilderEdit::Remove {
        let Some((&last, parent_path)) = path.split_last() else {
            return false;
        };
        let Some(parent) = node_at(root, parent_path) else {
            return false;
        };
        let old = std::mem::replace(parent, Expr::Tag(String::new()));
        match old {
            Expr::Binary(_, a, b) => *parent = if last == 0 { *b } else { *a },
            other => {
                // A complement or a filter of nothing: it goes with its operand.
                *parent = other;
                return apply_builder_edit(root, parent_path, BuilderEdit::Remove);
            }
        }
        return true;
    }
    let Some(node) = node_at(root, path) else {
        return false;
    };
    match edit {
        BuilderEdit::SetTag(name) => match node {
            Expr::Tag(t) => *t = name,
            _ => return false,
        },
        BuilderEdit::SetOp(op) => match node {
            Expr::Binary(o, ..) => *o = op,
            _ => return false,
        },
        BuilderEdit::SetFilter(f) => match node {
            Expr::Filter(g, ..) => *g = f,
            _ => return false,
        },
        BuilderEdit::SetArg(n) => match node {
            Expr::Filter(_, a, _) => *a = n,
            _ => return false,
        },
        BuilderEdit::Combine(op, tag) => {
            let old = std::mem::replace(node, Expr::Tag(String::new()));
            *node = Expr::Binary(op, Box::new(old), Box::new(Expr::Tag(tag)));
        }
        BuilderEdit::ToggleNot => {
            let old = std::mem::replace(node, Expr::Tag(String::new()));
            *node = match old {
                Expr::Not(a) => *a,
                other => Expr::Not(Box::new(other)),
            };
        }
        BuilderEdit::WrapFilter(f) => {
            let old = std::mem::replace(node, Expr::Tag(String::new()));
            let arg = if f.argument() == Some("frames") {
                10
            } else {
                0
            };
            *node = Expr::Filter(f, arg, Box::new(old));
        }
        BuilderEdit::Unwrap => {
            let old = std::mem::replace(node, Expr::Tag(String::new()));
            *node = match old {
                Expr::Not(a) | Expr::Filter(_, _, a) | Expr::Binary(_, a, _) => *a,
                leaf => leaf,
            };
        }
        // Taken out above, at the parent.
        BuilderEdit::Remove => return false,
    }
    true
}

fn node_at<'a>(root: &'a mut Expr, path: &[usize]) -> Option<&'a mut Expr> {
    let mut node = root;
    for &k in path {
        node = match (node, k) {
            (Expr::Not(a), 0) | (Expr::Filter(_, _, a), 0) | (Expr::Binary(_, a, _), 0) => a,
            (Expr::Binary(_, _, b), 1) => b,
            _ => return None,
        };
    }
    Some(node)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::project::Project;

    fn demo() -> TagDocument {
        Project::demo().doc
    }

    #[test]
    fn evaluation_engines_agree_and_nodes_are_evaluated() {
        let doc = demo();
        let mut engine = new_engine();
        let text = "(Walking | Running) & Male - Tired";
        let q = doc.parse_query(text).unwrap();
        let e = evaluate_all(&mut engine, &doc, text, &q).unwrap();
        assert!(e.agree());
        assert!(!e.cached);
        assert!(e.ranges.range_count() > 0);
        assert_eq!(e.node_results.len(), e.tree.nodes.len());
        assert_eq!(e.node_results[e.tree.root], e.ranges);
        assert!(e.result_masks_bytes > 0 && e.result_ranges_bytes > 0);
        assert!(e.postfix.contains("[-1] |"));
        // The masks of the query's four tags, and only those, are built (and counted).
        assert_eq!(e.index_tags, doc.tags.len());
        assert!(doc.tags.len() > 4);
        assert_eq!(e.index_masks_built, 4);
        assert!(e.index_masks_bytes > 0);
        // The second run is answered by the cache.
        let e2 = evaluate_all(&mut engine, &doc, text, &q).unwrap();
        assert!(e2.cached);
    }

    #[test]
    fn masks_over_budget_still_gives_ranges() {
        let doc = demo();
        let mut engine = QueryEngine {
            index: crate::core::tags::TagIndex::build_with_mask_budget(&doc, 16),
            ..new_engine()
        };
        let text = "Walking | Running";
        let q = doc.parse_query(text).unwrap();
        let e = evaluate_all(&mut engine, &doc, text, &q).unwrap();
        assert!(e.masks_unavailable.is_some());
        assert!(e.agree());
        assert!(e.masks.is_empty());
        assert_eq!(e.auto, e.ranges);
    }

    #[test]
    fn highlight_classes() {
        let names = ["Walk", "locomotion:Run", "odd name"];
        let text = "Walk & not Wlak | first(locomotion:Run, 10) - \"odd name\"";
        let h = highlight(text, &names);
        let classes: Vec<(&str, TokenClass)> = h
            .iter()
            .filter(|(_, c)| *c != TokenClass::Space)
            .map(|(r, c)| (&text[r.clone()], *c))
            .collect();
        use TokenClass::*;
        assert_eq!(
            classes,
            [
                ("Walk", Tag),
                ("&", Operator),
                ("not", Keyword),
                ("Wlak", UnknownTag),
                ("|", Operator),
                ("first", Function),
                ("(", Paren),
                ("locomotion:Run", Tag),
                (",", Operator),
                ("10", Number),
                (")", Paren),
                ("-", Operator),
                ("\"odd name\"", Tag),
            ]
        );
        // Covers the text exactly, even with an open quote.
        let h = highlight("A & \"open", &names);
        assert_eq!(h.last().unwrap().0.end, 9);
    }

    #[test]
    fn highlight_marks_as_errors_exactly_what_the_parser_refuses() {
        let names = ["Walk", "A"];
        // `2Walk` is one piece: the parser refuses it as a name starting with a digit.
        let h = highlight("A & 2Walk", &names);
        assert_eq!(h.last().unwrap(), &(4..9, TokenClass::Other));
        let doc = demo();
        let e = doc.parse_query("A & 2Walk").unwrap_err();
        assert_eq!(e.span, 4..9);
        // A number inside a function call is a number for both.
        let h = highlight("first(A, 2)", &names);
        assert!(h.contains(&(9..10, TokenClass::Number)));
        // An unexpected character.
        let h = highlight("A $ B", &names);
        assert_eq!(h[2], (2..3, TokenClass::Other));
        assert_eq!(doc.parse_query("A $ B").unwrap_err().span, 2..3);
    }

    #[test]
    fn completion_of_names_namespaces_and_functions() {
        let names = [
            "locomotion:Walk",
            "locomotion:Run",
            "Walking",
            "Male",
            "odd name",
        ];
        let (start, c) = completions("Male & Wal", 10, &names);
        assert_eq!(start, 7);
        assert_eq!(c[0], "Walking");
        assert!(c.contains(&"locomotion:Walk".to_owned()));
        let (_, c) = completions("loco", 4, &names);
        assert_eq!(c[0], "locomotion:");
        let (_, c) = completions("locomotion:R", 12, &names);
        assert_eq!(c, ["locomotion:Run"]);
        let (_, c) = completions("fir", 3, &names);
        assert!(c.contains(&"first(".to_owned()) && c.contains(&"first_range(".to_owned()));
        let (_, c) = completions("od", 2, &names);
        assert_eq!(c, ["\"odd name\""]);
        assert!(completions("A & ", 4, &names).1.is_empty());
        let (t, at) = apply_completion("Male & Wal | x", 7, 10, "Walking");
        assert_eq!((t.as_str(), at), ("Male & Walking | x", 14));
    }

    #[test]
    fn history_is_recent_first_and_bounded() {
        let mut h = Vec::new();
        for i in 0..30 {
            push_history(&mut h, &format!("q{i}"));
        }
        push_history(&mut h, "q25");
        push_history(&mut h, "  ");
        assert_eq!(h.len(), HISTORY_LEN);
        assert_eq!(h[0], "q25");
        assert_eq!(h[1], "q29");
    }

    #[test]
    fn step_trace_forms_the_output() {
        let doc = demo();
        let mut engine = new_engine();
        let text = "Walking | Running";
        let q = doc.parse_query(text).unwrap();
        let e = evaluate_all(&mut engine, &doc, text, &q).unwrap();
        let node = first_binary_node(&e.tree).unwrap();
        let clip = doc.clip_index("walk_to_run_female_01").unwrap();
        let t = trace_node(&e, node, clip).unwrap();
        assert_eq!(t.out, e.ranges.clip_ranges(clip));
        assert_eq!(t.output_after(t.events.len()), t.out);
        assert!(t.output_after(0).is_empty());
        // Part way: an open range is shown up to the current event.
        let half = t.events.iter().position(|ev| ev.inside_out).unwrap() + 1;
        let partial = t.output_after(half);
        assert!(!partial.is_empty());
        assert!(trace_node(&e, e.tree.preorder()[1].0, clip).is_none() || e.tree.nodes.len() > 3);
    }

    #[test]
    fn builder_edits_rewrite_the_text() {
        let doc = demo();
        let q = doc.parse_query("Walking & Male").unwrap();
        let mut e = Expr::from_query(&q, &doc).unwrap();
        assert!(apply_builder_edit(
            &mut e,
            &[],
            BuilderEdit::SetOp(BinOp::Union)
        ));
        assert_eq!(e.to_text(), "Walking | Male");
        assert!(apply_builder_edit(&mut e, &[1], BuilderEdit::ToggleNot));
        assert_eq!(e.to_text(), "Walking | !Male");
        assert!(apply_builder_edit(
            &mut e,
            &[0],
            BuilderEdit::Combine(BinOp::Difference, "Tired".into())
        ));
        assert_eq!(e.to_text(), "Walking - Tired | !Male");
        assert!(apply_builder_edit(
            &mut e,
            &[],
            BuilderEdit::WrapFilter(Filter::Longer)
        ));
        assert_eq!(e.to_text(), "longer(Walking - Tired | !Male, 10)");
        assert!(apply_builder_edit(&mut e, &[], BuilderEdit::SetArg(30)));
        assert!(apply_builder_edit(
            &mut e,
            &[0, 0, 0],
            BuilderEdit::SetTag("Running".into())
        ));
        assert_eq!(e.to_text(), "longer(Running - Tired | !Male, 30)");
        assert!(apply_builder_edit(&mut e, &[], BuilderEdit::Unwrap));
        assert_eq!(e.to_text(), "Running - Tired | !Male");
        assert!(!apply_builder_edit(&mut e, &[5], BuilderEdit::Unwrap));
        assert!(doc.parse_query(&e.to_text()).is_ok());
        // Remove a leaf: its operation gives way to the other operand; a complement of it goes
        // with it; the root stays.
        assert!(apply_builder_edit(&mut e, &[0, 1], BuilderEdit::Remove));
        assert_eq!(e.to_text(), "Running | !Male");
        assert!(apply_builder_edit(&mut e, &[1, 0], BuilderEdit::Remove));
        assert_eq!(e.to_text(), "Running");
        assert!(!apply_builder_edit(&mut e, &[], BuilderEdit::Remove));
        assert_eq!(e.to_text(), "Running");
    }

    #[test]
    fn fingerprint_follows_edits_and_undo() {
        use crate::core::doc::{Edit, History};
        let mut doc = demo();
        let fp = doc_fingerprint(&doc);
        assert_eq!(doc_fingerprint(&doc.clone()), fp);
        let mut h = History::new();
        h.apply(
            &mut doc,
            Edit::SetRanges {
                tag: 0,
                clip: 0,
                ranges: vec![Range::new(3, 9)],
            },
            "x",
        )
        .unwrap();
        let edited = doc_fingerprint(&doc);
        assert_ne!(edited, fp);
        h.undo(&mut doc);
        assert_ne!(doc_fingerprint(&doc), edited);
        h.apply(&mut doc, Edit::RemoveTag { index: 3 }, "y")
            .unwrap();
        assert_ne!(doc_fingerprint(&doc), edited);
        // A clip renamed or made shorter: another fingerprint (the clip list's version).
        let before = doc_fingerprint(&doc);
        h.apply(
            &mut doc,
            Edit::RenameClip {
                clip: 1,
                name: "renamed".into(),
            },
            "z",
        )
        .unwrap();
        assert_ne!(doc_fingerprint(&doc), before);
    }

    #[test]
    fn frozen_names_are_unique() {
        let doc = demo();
        assert_eq!(
            frozen_tag_name(&doc, "Walking & !Male"),
            "query:Walking_and_not_Male"
        );
        // Queries that differ in their operators get different names.
        assert_eq!(
            frozen_tag_name(&doc, "Walking | Male"),
            "query:Walking_or_Male"
        );
        assert_eq!(
            frozen_tag_name(&doc, "first(\"a b\", 10) - Male"),
            "query:first_a_b_10_minus_Male"
        );
        // A name taken gets a number.
        let mut doc = doc;
        doc.tags.push(crate::core::tags::document::Tag::new(
            "query:Walking_or_Male",
        ));
        assert_eq!(
            frozen_tag_name(&doc, "Walking | Male"),
            "query:Walking_or_Male_2"
        );
        // Whatever the text, the name is a bare name the query language reads back.
        for text in ["", "((", "\"--\"", "a/b: & \"x\\\"y\""] {
            let name = frozen_tag_name(&doc, text);
            assert_eq!(
                crate::core::tags::parse::quote_name(&name),
                name,
                "{text:?}"
            );
        }
    }
}
