//! Explaining a query: its expression tree (with the postfix code of every node, so each node can
//! be evaluated on its own), the tree back to text with the fewest parentheses, the postfix program
//! as text, and the result in the `taglane query --json` shape and as CSV.
//!
//! Used by the query view of the app (evaluation details, visual builder) and by exports. Every
//! subtree of a postfix program is a contiguous slice of its code, so a node's own query is
//! `Query::from_code(&code[node.code])`.

use std::fmt::Write as _;

use super::document::TagDocument;
use super::filters::Filter;
use super::parse::quote_name;
use super::query::{Item, Query, QueryCodeError};
use super::range::total_frames;
use super::range_set::RangeSet;
use crate::core::json::string_text;

/// A binary operator of the query language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    Union,
    SymmetricDifference,
    Intersection,
    Difference,
}

impl BinOp {
    pub const ALL: [BinOp; 4] = [
        BinOp::Union,
        BinOp::Intersection,
        BinOp::Difference,
        BinOp::SymmetricDifference,
    ];

    /// The operator's symbol in the language.
    pub const fn symbol(self) -> &'static str {
        match self {
            BinOp::Union => "|",
            BinOp::SymmetricDifference => "^",
            BinOp::Intersection => "&",
            BinOp::Difference => "-",
        }
    }

    /// A word for people who do not read symbols.
    pub const fn word(self) -> &'static str {
        match self {
            BinOp::Union => "union",
            BinOp::SymmetricDifference => "symmetric difference",
            BinOp::Intersection => "intersection",
            BinOp::Difference => "difference",
        }
    }

    /// Binding strength (higher binds tighter): `|` 1, `^` 2, `&` 3, `-` 4.
    pub const fn precedence(self) -> u8 {
        match self {
            BinOp::Union => 1,
            BinOp::SymmetricDifference => 2,
            BinOp::Intersection => 3,
            BinOp::Difference => 4,
        }
    }

    /// The matching range sweep.
    pub const fn set_op(self) -> super::range::SetOp {
        use super::range::SetOp;
        match self {
            BinOp::Union => SetOp::Union,
            BinOp::SymmetricDifference => SetOp::SymmetricDifference,
            BinOp::Intersection => SetOp::Intersection,
            BinOp::Difference => SetOp::Difference,
        }
    }
}

/// Precedence of `!x` and of atoms (tags, calls, parenthesised groups).
const PREC_UNARY: u8 = 5;
const PREC_ATOM: u8 = 6;

/// A query as a tree over tag *names* (the visual builder edits this; [`Expr::to_text`] writes it
/// back as query text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    Tag(String),
    Not(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// A filter call; the argument is ignored for filters that take none.
    Filter(Filter, u32, Box<Expr>),
}

impl Expr {
    fn precedence(&self) -> u8 {
        match self {
            Expr::Tag(_) | Expr::Filter(..) => PREC_ATOM,
            Expr::Not(_) => PREC_UNARY,
            Expr::Binary(op, ..) => op.precedence(),
        }
    }

    /// The query text, with parentheses only where precedence or left-associativity needs them.
    /// Parsing the text gives back the same tree.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }

    fn write_child(child: &Expr, min_prec: u8, s: &mut String) {
        if child.precedence() < min_prec {
            s.push('(');
            child.write(s);
            s.push(')');
        } else {
            child.write(s);
        }
    }

    fn write(&self, s: &mut String) {
        match self {
            Expr::Tag(name) => s.push_str(&quote_name(name)),
            Expr::Not(a) => {
                s.push('!');
                Self::write_child(a, PREC_UNARY, s);
            }
            Expr::Binary(op, a, b) => {
                Self::write_child(a, op.precedence(), s);
                let _ = write!(s, " {} ", op.symbol());
                // Left-associative: an equal-precedence right operand needs parentheses.
                Self::write_child(b, op.precedence() + 1, s);
            }
            Expr::Filter(f, arg, a) => {
                let _ = write!(s, "{}(", f.name());
                a.write(s);
                if f.argument().is_some() {
                    let _ = write!(s, ", {arg}");
                }
                s.push(')');
            }
        }
    }

    /// The tree of `q`, naming tags from `doc` (unknown indices become `#N`).
    pub fn from_query(q: &Query, doc: &TagDocument) -> Result<Expr, QueryCodeError> {
        let tree = ExprTree::from_query(q)?;
        Ok(tree.expr(tree.root, doc))
    }

    /// The number of nodes.
    pub fn node_count(&self) -> usize {
        1 + match self {
            Expr::Tag(_) => 0,
            Expr::Not(a) | Expr::Filter(_, _, a) => a.node_count(),
            Expr::Binary(_, a, b) => a.node_count() + b.node_count(),
        }
    }
}

/// What a node of an [`ExprTree`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Tag(u32),
    Not,
    Binary(BinOp),
    Filter(Filter, u32),
}

/// One node of an [`ExprTree`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExprNode {
    pub kind: NodeKind,
    /// Child node indices (0, 1 or 2).
    pub children: Vec<usize>,
    /// The node's subtree as a slice of the query's postfix code.
    pub code: std::ops::Range<usize>,
}

/// The expression tree of a postfix query. Nodes are stored in postfix order (children before
/// parents), so `root` is the last one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExprTree {
    pub nodes: Vec<ExprNode>,
    pub root: usize,
    code: Vec<i32>,
}

impl ExprTree {
    /// Builds the tree of a well-formed query.
    pub fn from_query(q: &Query) -> Result<ExprTree, QueryCodeError> {
        let code = q.code().to_vec();
        let mut nodes: Vec<ExprNode> = Vec::new();
        let mut stack: Vec<usize> = Vec::new();
        let mut at = 0usize;
        for (i, item) in q.items().enumerate() {
            let item = item?;
            let width = if matches!(item, Item::Filter(..)) {
                2
            } else {
                1
            };
            let end = at + width;
            let (kind, children) = match item {
                Item::Tag(t) => (NodeKind::Tag(t), Vec::new()),
                Item::Complement => {
                    let a = stack
                        .pop()
                        .ok_or(QueryCodeError::MissingOperand { at: i })?;
                    (NodeKind::Not, vec![a])
                }
                Item::Filter(f, arg) => {
                    let a = stack
                        .pop()
                        .ok_or(QueryCodeError::MissingOperand { at: i })?;
                    (NodeKind::Filter(f, arg), vec![a])
                }
                op => {
                    let b = stack
                        .pop()
                        .ok_or(QueryCodeError::MissingOperand { at: i })?;
                    let a = stack
                        .pop()
                        .ok_or(QueryCodeError::MissingOperand { at: i })?;
                    let op = match op {
                        Item::Union => BinOp::Union,
                        Item::Intersection => BinOp::Intersection,
                        Item::Difference => BinOp::Difference,
                        _ => BinOp::SymmetricDifference,
                    };
                    (NodeKind::Binary(op), vec![a, b])
                }
            };
            let start = children.first().map_or(at, |&c| nodes[c].code.start);
            nodes.push(ExprNode {
                kind,
                children,
                code: start..end,
            });
            stack.push(nodes.len() - 1);
            at = end;
        }
        match stack.len() {
            0 => Err(QueryCodeError::Empty),
            1 => Ok(ExprTree {
                root: stack[0],
                nodes,
                code,
            }),
            n => Err(QueryCodeError::Unbalanced(n)),
        }
    }

    /// The query computed by node `i` alone.
    pub fn node_query(&self, i: usize) -> Query {
        Query::from_code(&self.code[self.nodes[i].code.clone()])
    }

    /// Node `i` as an [`Expr`] over tag names.
    pub fn expr(&self, i: usize, doc: &TagDocument) -> Expr {
        let n = &self.nodes[i];
        let child = |k: usize| Box::new(self.expr(n.children[k], doc));
        match n.kind {
            NodeKind::Tag(t) => Expr::Tag(
                doc.tags
                    .get(t as usize)
                    .map_or_else(|| format!("#{t}"), |tag| tag.name.clone()),
            ),
            NodeKind::Not => Expr::Not(child(0)),
            NodeKind::Binary(op) => Expr::Binary(op, child(0), child(1)),
            NodeKind::Filter(f, arg) => Expr::Filter(f, arg, child(0)),
        }
    }

    /// A short label of node `i` alone: the tag name, `!`, the operator, or the call.
    pub fn label(&self, i: usize, doc: &TagDocument) -> String {
        match self.nodes[i].kind {
            NodeKind::Tag(t) => doc
                .tags
                .get(t as usize)
                .map_or_else(|| format!("#{t}"), |tag| quote_name(&tag.name)),
            NodeKind::Not => "! (complement)".to_owned(),
            NodeKind::Binary(op) => format!("{} ({})", op.symbol(), op.word()),
            NodeKind::Filter(f, arg) => match f.argument() {
                Some(what) => format!("{}(.., {arg}) ({what})", f.name()),
                None => format!("{}(..)", f.name()),
            },
        }
    }

    /// Nodes in pre-order (root first) with their depth: the order a tree view shows them.
    pub fn preorder(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut stack = vec![(self.root, 0usize)];
        while let Some((i, d)) = stack.pop() {
            out.push((i, d));
            for &c in self.nodes[i].children.iter().rev() {
                stack.push((c, d + 1));
            }
        }
        out
    }
}

/// The postfix program as text, one entry per step: `Walk Tired & !` style, with the raw codes,
/// e.g. `[0] Walk  [1] Tired  [-2] &`.
pub fn postfix_text(q: &Query, doc: &TagDocument) -> String {
    let mut s = String::new();
    let code = q.code();
    let mut at = 0usize;
    for item in q.items() {
        if !s.is_empty() {
            s.push_str("  ");
        }
        match item {
            Ok(Item::Tag(t)) => {
                let name = doc
                    .tags
                    .get(t as usize)
                    .map_or_else(|| "?".to_owned(), |tag| quote_name(&tag.name));
                let _ = write!(s, "[{t}] {name}");
                at += 1;
            }
            Ok(Item::Filter(f, arg)) => {
                let _ = write!(s, "[{} {}] {}", code[at], code[at + 1], f.name());
                if f.argument().is_some() {
                    let _ = write!(s, " {arg}");
                }
                at += 2;
            }
            Ok(op) => {
                let sym = match op {
                    Item::Union => "|",
                    Item::Intersection => "&",
                    Item::Difference => "-",
                    Item::SymmetricDifference => "^",
                    _ => "!",
                };
                let _ = write!(s, "[{}] {sym}", code[at]);
                at += 1;
            }
            Err(e) => {
                let _ = write!(s, "<{e}>");
                break;
            }
        }
    }
    s
}

/// The result in exactly the shape `taglane query --json` prints: `{"expr": ..., "engine": ...,
/// "clips": {"clip": [[start, stop], ...]}, "frames": N, "ranges": N}`; clips without a matching
/// frame omitted, clip keys in the document's clip order. No trailing newline.
pub fn result_json(doc: &TagDocument, expr: &str, engine: &str, result: &RangeSet) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "{{\"expr\": {}, \"engine\": {}, \"clips\": {{",
        string_text(expr),
        string_text(engine)
    );
    let mut first = true;
    for (clip, ranges) in result.iter() {
        if ranges.is_empty() {
            continue;
        }
        let name = doc
            .clips
            .get(clip as usize)
            .map_or_else(|| format!("#{clip}"), |c| c.name.clone());
        let list: Vec<String> = ranges
            .iter()
            .map(|r| format!("[{}, {}]", r.start, r.stop))
            .collect();
        let _ = write!(
            s,
            "{}{}: [{}]",
            if first { "" } else { ", " },
            string_text(&name),
            list.join(", ")
        );
        first = false;
    }
    let _ = write!(
        s,
        "}}, \"frames\": {}, \"ranges\": {}}}",
        result.total_frames(),
        result.range_count()
    );
    s
}

/// The result as CSV: a header `clip,start,stop,seconds`, then one row per range, where `seconds`
/// is the range's length in seconds at the clip's rate (3 decimals). Clip names are quoted when
/// they contain a comma, a quote or a line break.
pub fn result_csv(doc: &TagDocument, result: &RangeSet) -> String {
    let mut s = String::from("clip,start,stop,seconds\n");
    for (clip, ranges) in result.iter() {
        let Some(info) = doc.clips.get(clip as usize) else {
            continue;
        };
        let name = csv_field(&info.name);
        let fps = if info.fps > 0.0 { info.fps } else { 1.0 };
        for r in ranges {
            let _ = writeln!(
                s,
                "{name},{},{},{:.3}",
                r.start,
                r.stop,
                f64::from(r.len()) / f64::from(fps)
            );
        }
    }
    s
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// Per clip of a result: (clip, ranges, frames, seconds), in clip order.
pub fn result_rows(doc: &TagDocument, result: &RangeSet) -> Vec<(u32, usize, u64, f64)> {
    result
        .iter()
        .filter(|(_, r)| !r.is_empty())
        .map(|(c, r)| {
            let fps = doc.clips.get(c as usize).map_or(30.0, |i| i.fps).max(1e-6);
            let frames = total_frames(r);
            (c, r.len(), frames, frames as f64 / f64::from(fps))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::tags::query::evaluate;
    use crate::core::tags::{ClipInfo, Engine, Range, Tag};

    fn doc() -> TagDocument {
        let names = ["A", "B", "C", "locomotion:Walk", "odd name"];
        let mut tags: Vec<Tag> = names
            .iter()
            .map(|n| Tag {
                version: 1,
                ..Tag::new((*n).to_owned())
            })
            .collect();
        tags[0]
            .ranges
            .insert(0, vec![Range::new(0, 10), Range::new(20, 30)]);
        tags[1].ranges.insert(0, vec![Range::new(5, 25)]);
        tags[1].ranges.insert(1, vec![Range::new(0, 3)]);
        TagDocument {
            clips: vec![
                ClipInfo {
                    name: "c0".into(),
                    frames: 40,
                    fps: 30.0,
                    source: None,
                    unit_cm: None,
                },
                ClipInfo {
                    name: "c,1".into(),
                    frames: 10,
                    fps: 10.0,
                    source: None,
                    unit_cm: None,
                },
            ],
            tags,
            queries: vec![],
            ..Default::default()
        }
    }

    #[test]
    fn text_round_trips_with_minimal_parentheses() {
        let d = doc();
        for (input, expected) in [
            ("A & B - C", "A & B - C"),
            ("(A & B) - C", "(A & B) - C"),
            ("A - (B - C)", "A - (B - C)"),
            ("(A - B) - C", "A - B - C"),
            ("A | B & C", "A | B & C"),
            ("(A | B) & C", "(A | B) & C"),
            ("not (A | B)", "!(A | B)"),
            ("!!A", "!!A"),
            (
                "first(A | B, 10) ^ \"odd name\"",
                "first(A | B, 10) ^ \"odd name\"",
            ),
            (
                "first_range(locomotion:Walk)",
                "first_range(locomotion:Walk)",
            ),
            ("A ^ B | C", "A ^ B | C"),
            ("A ^ (B | C)", "A ^ (B | C)"),
        ] {
            let q = d.parse_query(input).unwrap();
            let e = Expr::from_query(&q, &d).unwrap();
            let text = e.to_text();
            assert_eq!(text, expected, "{input}");
            assert_eq!(d.parse_query(&text).unwrap(), q, "{input} -> {text}");
        }
    }

    #[test]
    fn every_node_has_its_own_subquery() {
        let d = doc();
        let q = d.parse_query("(A | B) - grow(C, 2)").unwrap();
        let t = ExprTree::from_query(&q).unwrap();
        assert_eq!(t.nodes.len(), 6);
        assert_eq!(t.node_query(t.root), q);
        let order = t.preorder();
        assert_eq!(order[0], (t.root, 0));
        let labels: Vec<String> = order.iter().map(|&(i, _)| t.label(i, &d)).collect();
        assert_eq!(
            labels,
            [
                "- (difference)",
                "| (union)",
                "A",
                "B",
                "grow(.., 2) (frames)",
                "C"
            ]
        );
        // The union node alone evaluates to A | B.
        let union = order[1].0;
        assert_eq!(t.node_query(union), d.parse_query("A | B").unwrap());
        let (r, _) = evaluate(&d, &t.node_query(union), Engine::Ranges).unwrap();
        assert_eq!(r.clip_ranges(0), &[Range::new(0, 30)]);
    }

    #[test]
    fn postfix_text_lists_codes() {
        let d = doc();
        let q = d.parse_query("A & !B | longer(C, 4)").unwrap();
        assert_eq!(
            postfix_text(&q, &d),
            "[0] A  [1] B  [-4] !  [-2] &  [2] C  [-18 4] longer 4  [-1] |"
        );
    }

    #[test]
    fn json_and_csv_shapes() {
        let d = doc();
        let q = d.parse_query("A | B").unwrap();
        let (r, _) = evaluate(&d, &q, Engine::Auto).unwrap();
        let json = result_json(&d, "A | B", "auto", &r);
        assert_eq!(
            json,
            "{\"expr\": \"A | B\", \"engine\": \"auto\", \"clips\": {\"c0\": [[0, 30]], \"c,1\": [[0, 3]]}, \"frames\": 33, \"ranges\": 2}"
        );
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["frames"], 33);
        assert_eq!(
            result_csv(&d, &r),
            "clip,start,stop,seconds\nc0,0,30,1.000\n\"c,1\",0,3,0.300\n"
        );
        let rows = result_rows(&d, &r);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[1].0, rows[1].1, rows[1].2), (1, 1, 3));
        assert!((rows[1].3 - 0.3).abs() < 1e-9);
    }

    #[test]
    fn bad_code_is_an_error_not_a_panic() {
        assert!(ExprTree::from_query(&Query::from_code(&[])).is_err());
        assert!(ExprTree::from_query(&Query::from_code(&[0, 1])).is_err());
        assert!(ExprTree::from_query(&Query::from_code(&[-1])).is_err());
        assert!(ExprTree::from_query(&Query::from_code(&[0, -16])).is_err());
    }
}
