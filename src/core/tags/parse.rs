//! The query language: text to [`Query`]. See docs/QUERY.md.
//!
//! ```text
//! query   := xor ( "|" xor )*            lowest precedence
//! xor     := and ( "^" and )*
//! and     := diff ( "&" diff )*
//! diff    := unary ( "-" unary )*        highest binary precedence
//! unary   := ( "!" | "not" ) unary | primary
//! primary := "(" query ")" | FUNCTION "(" query [ "," NUMBER ] ")" | NAME | "quoted name"
//! ```
//! Precedence follows C++ and Python sets (`-` > `&` > `^` > `|`), all left-associative, so
//! `Running & Male - Tired` is `Running & (Male - Tired)`.
//!
//! A bare name is a run of letters, digits, `_`, `:`, `.` and `/` that does not start with a digit
//! (`Running`, `locomotion:Walk`, `mocap.walk`, `set/left`); any other name goes in double quotes,
//! with `\"` and `\\` as escapes. `not` is a keyword (a tag called `not` must be quoted).
//! Columns in errors are character columns counted from 1.

use std::fmt;

use super::document::TagDocument;
use super::filters::Filter;
use super::query::{Item, Query};

/// Deepest parenthesis/`!` nesting accepted (keeps recursion bounded on hostile input).
pub const MAX_NESTING: usize = crate::core::limits::MAX_QUERY_DEPTH;

/// A query that does not parse, with the character columns it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryError {
    /// Character columns `[start, end)`, 0-based; `start == end` points between characters (at the
    /// end of the query, for instance).
    pub span: std::ops::Range<usize>,
    /// What is wrong, and what was expected.
    pub message: String,
    /// For an unknown tag or function: the closest existing names, best first.
    pub suggestions: Vec<String>,
}

impl QueryError {
    /// The 1-based column of the error.
    pub fn column(&self) -> usize {
        self.span.start + 1
    }

    /// A line of spaces and carets under the error span (at least one caret), one column a
    /// character: for a query of narrow characters without tabs; [`Self::caret_line_under`]
    /// lines up under any query.
    pub fn caret_line(&self) -> String {
        let width = (self.span.end.saturating_sub(self.span.start)).max(1);
        format!("{}{}", " ".repeat(self.span.start), "^".repeat(width))
    }

    /// The caret line under `text` (the query the error is of) as a terminal shows it: a wide
    /// character takes two columns and gets two carets, a tab before the span is kept as a tab.
    pub fn caret_line_under(&self, text: &str) -> String {
        let before: String = text.chars().take(self.span.start).collect();
        let inside: String = text
            .chars()
            .skip(self.span.start)
            .take(self.span.end.saturating_sub(self.span.start))
            .collect();
        let carets = crate::core::text::width(&inside).max(1);
        format!(
            "{}{}",
            crate::core::text::spaces_under(&before),
            "^".repeat(carets)
        )
    }

    /// The message, the query and the caret line, on three lines.
    pub fn render(&self, text: &str) -> String {
        format!("{self}\n  {text}\n  {}", self.caret_line_under(text))
    }
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column(), self.message)?;
        if !self.suggestions.is_empty() {
            // As they would be typed: a name that is not a bare name is shown quoted.
            let list: Vec<String> = self
                .suggestions
                .iter()
                .map(|s| format!("`{}`", quote_name(s)))
                .collect();
            write!(f, "; did you mean {}?", list.join(" or "))?;
        }
        Ok(())
    }
}

impl std::error::Error for QueryError {}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    Name(String),
    Quoted(String),
    Number(String),
    Op(char),
    End,
}

#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub tok: Tok,
    /// Character columns.
    pub span: std::ops::Range<usize>,
    /// Byte offsets into the text.
    pub bytes: std::ops::Range<usize>,
}

/// Characters of an unquoted name (tags, namespaces, functions): letters and digits of any
/// script, `_ : . /`, and the marks that combine with a letter (an accent typed as its own
/// character, `e` then U+0301: they take no column of their own).
pub fn is_name_char(c: char) -> bool {
    c.is_alphanumeric()
        || matches!(c, '_' | ':' | '.' | '/')
        || (!c.is_control() && !c.is_whitespace() && crate::core::text::char_width(c) == 0)
}

fn err(span: std::ops::Range<usize>, message: impl Into<String>) -> QueryError {
    QueryError {
        span,
        message: message.into(),
        suggestions: Vec::new(),
    }
}

/// What a piece of query text is, as the lexer sees it. The parser (`tokenize`) and the editor's
/// highlighter both read the text through [`lex`], so they never disagree on where a name, a
/// number or an error is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LexKind {
    Space,
    /// `| & - ^ ! ,`
    Op(char),
    /// `(` or `)`
    Paren(char),
    /// A quoted name. `closed` is false when the text ends inside the quotes; `bad_escape` is the
    /// character column of a backslash followed by something other than `"` or `\`.
    Quoted {
        name: String,
        closed: bool,
        bad_escape: Option<usize>,
    },
    /// Digits only.
    Number(String),
    /// A tag, namespace, function or keyword name.
    Name(String),
    /// Name characters starting with a digit (`2Walk`): an error for the parser.
    DigitName(String),
    /// A character that starts nothing.
    Unexpected(char),
}

/// One piece of query text: its kind, its character columns and its byte offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lexeme {
    pub kind: LexKind,
    pub span: std::ops::Range<usize>,
    pub bytes: std::ops::Range<usize>,
}

/// Splits `text` into lexemes covering all of it, in order. Never fails: errors are lexemes the
/// parser refuses (`tokenize`) and the highlighter colours as errors.
pub fn lex(text: &str) -> Vec<Lexeme> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let byte_at = |i: usize| chars.get(i).map_or(text.len(), |&(b, _)| b);
    let mut out = Vec::new();
    let mut i = 0usize;
    while i < chars.len() {
        let c = chars[i].1;
        let start = i;
        let kind = if c.is_whitespace() {
            while i < chars.len() && chars[i].1.is_whitespace() {
                i += 1;
            }
            LexKind::Space
        } else if matches!(c, '|' | '&' | '-' | '^' | '!' | ',') {
            i += 1;
            LexKind::Op(c)
        } else if matches!(c, '(' | ')') {
            i += 1;
            LexKind::Paren(c)
        } else if c == '"' {
            i += 1;
            let mut name = String::new();
            let mut closed = false;
            let mut bad_escape = None;
            while i < chars.len() {
                match chars[i].1 {
                    '"' => {
                        i += 1;
                        closed = true;
                        break;
                    }
                    '\\' => match chars.get(i + 1).map(|&(_, c)| c) {
                        Some(e @ ('"' | '\\')) => {
                            name.push(e);
                            i += 2;
                        }
                        _ => {
                            bad_escape.get_or_insert(i);
                            i += 1;
                        }
                    },
                    other => {
                        name.push(other);
                        i += 1;
                    }
                }
            }
            LexKind::Quoted {
                name,
                closed,
                bad_escape,
            }
        } else if is_name_char(c) {
            while i < chars.len() && is_name_char(chars[i].1) {
                i += 1;
            }
            let s: String = chars[start..i].iter().map(|&(_, c)| c).collect();
            if s.chars().all(|c| c.is_ascii_digit()) {
                LexKind::Number(s)
            } else if c.is_ascii_digit() {
                LexKind::DigitName(s)
            } else {
                LexKind::Name(s)
            }
        } else {
            i += 1;
            LexKind::Unexpected(c)
        };
        out.push(Lexeme {
            kind,
            span: start..i,
            bytes: byte_at(start)..byte_at(i),
        });
    }
    out
}

pub(crate) fn tokenize(text: &str) -> Result<Vec<Token>, QueryError> {
    let mut out = Vec::new();
    for l in lex(text) {
        let tok = match l.kind {
            LexKind::Space => continue,
            LexKind::Op(c) | LexKind::Paren(c) => Tok::Op(c),
            LexKind::Quoted {
                name,
                closed,
                bad_escape,
            } => {
                if let Some(at) = bad_escape {
                    return Err(err(
                        at..at + 1,
                        "unknown escape in quoted name; expected `\\\"` or `\\\\`",
                    ));
                }
                if !closed {
                    return Err(err(
                        l.span,
                        "unterminated quoted name; expected a closing `\"`",
                    ));
                }
                if name.is_empty() {
                    return Err(err(
                        l.span,
                        "empty quoted name; expected a tag name between the quotes",
                    ));
                }
                Tok::Quoted(name)
            }
            LexKind::Number(s) => Tok::Number(s),
            LexKind::Name(s) => Tok::Name(s),
            LexKind::DigitName(s) => {
                return Err(err(
                    l.span,
                    format!("`{s}` starts with a digit; quote it to use it as a tag name"),
                ));
            }
            LexKind::Unexpected(c) => {
                return Err(err(
                    l.span,
                    format!(
                        "unexpected character `{c}`; expected a tag name, an operator (| & - ^ !) or a parenthesis"
                    ),
                ));
            }
        };
        out.push(Token {
            tok,
            span: l.span,
            bytes: l.bytes,
        });
    }
    let n = text.chars().count();
    out.push(Token {
        tok: Tok::End,
        span: n..n,
        bytes: text.len()..text.len(),
    });
    Ok(out)
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Name(s) => format!("`{s}`"),
        Tok::Quoted(s) => format!("\"{s}\""),
        Tok::Number(s) => format!("the number {s}"),
        Tok::Op(c) => format!("`{c}`"),
        Tok::End => "the end of the query".to_string(),
    }
}

/// Edit distance (insertions, deletions, substitutions and swaps of neighbours count 1) between
/// two strings, compared case-insensitively.
pub use crate::core::names::closest_names;

struct Parser<'a> {
    toks: Vec<Token>,
    pos: usize,
    names: &'a [&'a str],
    out: Query,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.toks[self.pos]
    }

    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn enter(&mut self, span: std::ops::Range<usize>) -> Result<(), QueryError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(err(
                span,
                format!("the query is nested more than {MAX_NESTING} levels deep"),
            ));
        }
        Ok(())
    }

    fn binary_level(&mut self, level: usize) -> Result<(), QueryError> {
        const LEVELS: [(char, Item); 4] = [
            ('|', Item::Union),
            ('^', Item::SymmetricDifference),
            ('&', Item::Intersection),
            ('-', Item::Difference),
        ];
        let next = |p: &mut Self| {
            if level + 1 < LEVELS.len() {
                p.binary_level(level + 1)
            } else {
                p.unary()
            }
        };
        next(self)?;
        let (op, item) = LEVELS[level];
        while self.peek().tok == Tok::Op(op) {
            self.bump();
            next(self)?;
            self.out.push(item);
        }
        Ok(())
    }

    fn expected_operand(&self) -> QueryError {
        let t = self.peek();
        err(
            t.span.clone(),
            format!(
                "expected a tag name, `!`, `not`, `(` or a function call, found {}",
                describe(&t.tok)
            ),
        )
    }

    fn unary(&mut self) -> Result<(), QueryError> {
        let t = self.peek().clone();
        let is_not = match &t.tok {
            Tok::Op('!') => true,
            Tok::Name(n) if n == "not" => true,
            _ => false,
        };
        if is_not {
            self.bump();
            // `not` with nothing to complement, where a tag is called `not`: the tag was meant.
            let next = &self.peek().tok;
            let operand_next = matches!(
                next,
                Tok::Name(_) | Tok::Quoted(_) | Tok::Op('(') | Tok::Op('!')
            );
            if t.tok == Tok::Name("not".into()) && !operand_next && self.names.contains(&"not") {
                return Err(err(
                    t.span.clone(),
                    "`not` is the complement keyword and needs an operand after it; the tag called \
                     `not` is written \"not\"",
                ));
            }
            self.enter(t.span.clone())?;
            self.unary()?;
            self.depth -= 1;
            self.out.push(Item::Complement);
            return Ok(());
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<(), QueryError> {
        let t = self.peek().clone();
        match &t.tok {
            Tok::Op('(') => {
                self.bump();
                self.enter(t.span.clone())?;
                self.binary_level(0)?;
                self.depth -= 1;
                self.close_paren(&t)
            }
            Tok::Name(name) if self.toks[self.pos + 1].tok == Tok::Op('(') => {
                self.bump();
                let open = self.bump();
                self.call(name, &t, &open)
            }
            Tok::Name(name) | Tok::Quoted(name) => {
                self.bump();
                match self.names.iter().position(|n| n == name) {
                    Some(i) => {
                        self.out.push(Item::Tag(i as u32));
                        Ok(())
                    }
                    None => Err(QueryError {
                        span: t.span.clone(),
                        message: format!(
                            "unknown tag `{name}`; expected one of the document's tag names"
                        ),
                        suggestions: closest_names(name, self.names.iter().copied()),
                    }),
                }
            }
            _ => Err(self.expected_operand()),
        }
    }

    fn close_paren(&mut self, open: &Token) -> Result<(), QueryError> {
        let t = self.peek().clone();
        if t.tok == Tok::Op(')') {
            self.bump();
            return Ok(());
        }
        Err(err(
            t.span.clone(),
            format!(
                "expected `)` to close the `(` at column {}, or an operator (| & - ^), found {}",
                open.span.start + 1,
                describe(&t.tok)
            ),
        ))
    }

    fn call(&mut self, name: &str, name_tok: &Token, open: &Token) -> Result<(), QueryError> {
        let Some(filter) = Filter::from_name(name) else {
            return Err(QueryError {
                span: name_tok.span.clone(),
                message: format!(
                    "unknown function `{name}`; expected one of {}",
                    function_list()
                ),
                suggestions: closest_names(name, Filter::ALL.iter().map(|f| f.name())),
            });
        };
        self.enter(open.span.clone())?;
        self.binary_level(0)?;
        self.depth -= 1;
        let usage = usage(filter);
        let mut arg = 0u32;
        let t = self.peek().clone();
        match (filter.argument(), &t.tok) {
            (Some(what), Tok::Op(',')) => {
                self.bump();
                let n = self.bump();
                match &n.tok {
                    Tok::Number(s) => {
                        arg = s.parse::<u32>().map_err(|_| {
                            err(
                                n.span.clone(),
                                format!(
                                    "the {what} argument {s} is too large; expected at most {}",
                                    u32::MAX
                                ),
                            )
                        })?;
                    }
                    other => {
                        return Err(err(
                            n.span.clone(),
                            format!(
                                "expected a whole number of {what} for {usage}, found {}",
                                describe(other)
                            ),
                        ));
                    }
                }
            }
            (Some(what), _) if !filter.argument_optional() => {
                return Err(err(
                    t.span.clone(),
                    format!(
                        "expected `,` and a number of {what}: {usage}, found {}",
                        describe(&t.tok)
                    ),
                ));
            }
            (None, Tok::Op(',')) => {
                return Err(err(
                    t.span.clone(),
                    format!("`{name}` takes no number: {usage}"),
                ));
            }
            _ => {}
        }
        self.close_paren(open)?;
        self.out.push(Item::Filter(filter, arg));
        Ok(())
    }
}

fn usage(f: Filter) -> String {
    match f.argument() {
        None => format!("{}(query)", f.name()),
        Some(_) if f.argument_optional() => format!("{}(query[, seed])", f.name()),
        Some(_) => format!("{}(query, frames)", f.name()),
    }
}

fn function_list() -> String {
    Filter::ALL
        .iter()
        .map(|f| format!("`{}`", f.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses `text` against the tag names (a tag's index in `tag_names` is its index in the query).
pub fn parse_query(text: &str, tag_names: &[&str]) -> Result<Query, QueryError> {
    let toks = tokenize(text)?;
    if toks.len() == 1 {
        return Err(err(
            0..0,
            "the query is empty; expected a tag name, `!`, `not`, `(` or a function call",
        ));
    }
    let mut p = Parser {
        toks,
        pos: 0,
        names: tag_names,
        out: Query::default(),
        depth: 0,
    };
    p.binary_level(0)?;
    let t = p.peek().clone();
    match t.tok {
        Tok::End => Ok(p.out),
        Tok::Op(')') => Err(err(
            t.span,
            "unmatched `)`; expected an operator (| & - ^) or the end of the query",
        )),
        other => Err(err(
            t.span,
            format!(
                "expected an operator (| & - ^) or the end of the query, found {}",
                describe(&other)
            ),
        )),
    }
}

/// How `name` is written in a query: bare when it can be, quoted otherwise.
pub fn quote_name(name: &str) -> String {
    let bare = name
        .chars()
        .next()
        .is_some_and(|c| is_name_char(c) && !c.is_ascii_digit())
        && name.chars().all(is_name_char)
        && name != "not";
    if bare {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// Rewrites the uses of tag `old` in `expr` as `new`, keeping the rest of the text as it is.
/// Returns `None` when `expr` does not tokenize (it is then left alone) or does not use `old`.
pub fn rename_tag_in_expr(expr: &str, old: &str, new: &str) -> Option<String> {
    let toks = tokenize(expr).ok()?;
    let mut out = String::with_capacity(expr.len());
    let mut last = 0usize;
    let mut changed = false;
    for (k, t) in toks.iter().enumerate() {
        let is_use = match &t.tok {
            Tok::Quoted(s) => s == old,
            Tok::Name(s) => {
                s == old && s != "not" && toks.get(k + 1).is_none_or(|n| n.tok != Tok::Op('('))
            }
            _ => false,
        };
        if is_use {
            out.push_str(&expr[last..t.bytes.start]);
            out.push_str(&quote_name(new));
            last = t.bytes.end;
            changed = true;
        }
    }
    out.push_str(&expr[last..]);
    changed.then_some(out)
}

/// Writes `q` as text in the query language, with only the parentheses the precedence rules need;
/// parsing the text against the same names gives `q` back. Tag indices without a name print as
/// `"#N"`; malformed code prints as far as it can be read.
pub fn query_to_text(q: &Query, tag_names: &[&str]) -> String {
    // Each stack entry: the text and the precedence of its top operator (5: atom, unary, call).
    let mut st: Vec<(String, u8)> = Vec::new();
    for item in q.items() {
        let Ok(item) = item else { break };
        let binary = |st: &mut Vec<(String, u8)>, op: &str, p: u8| {
            let (b, pb) = st.pop().unwrap_or_default();
            let (a, pa) = st.pop().unwrap_or_default();
            let a = if pa < p { format!("({a})") } else { a };
            // Left-associative: a right operand of the same precedence needs parentheses.
            let b = if pb <= p { format!("({b})") } else { b };
            st.push((format!("{a} {op} {b}"), p));
        };
        match item {
            Item::Tag(t) => {
                let name = tag_names
                    .get(t as usize)
                    .map_or_else(|| format!("\"#{t}\""), |n| quote_name(n));
                st.push((name, 5));
            }
            Item::Union => binary(&mut st, "|", 1),
            Item::SymmetricDifference => binary(&mut st, "^", 2),
            Item::Intersection => binary(&mut st, "&", 3),
            Item::Difference => binary(&mut st, "-", 4),
            Item::Complement => {
                let (a, pa) = st.pop().unwrap_or_default();
                st.push((
                    if pa < 5 {
                        format!("!({a})")
                    } else {
                        format!("!{a}")
                    },
                    5,
                ));
            }
            Item::Filter(f, n) => {
                let (a, _) = st.pop().unwrap_or_default();
                let text = match f.argument() {
                    None => format!("{}({a})", f.name()),
                    Some(_) => format!("{}({a}, {n})", f.name()),
                };
                st.push((text, 5));
            }
        }
    }
    st.pop().map(|(s, _)| s).unwrap_or_default()
}

impl TagDocument {
    /// Parses a query against this document's tag names.
    pub fn parse_query(&self, text: &str) -> Result<Query, QueryError> {
        let names: Vec<&str> = self.tags.iter().map(|t| t.name.as_str()).collect();
        parse_query(text, &names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 6] = [
        "Running",
        "Male",
        "Tired",
        "locomotion:Walk",
        "set/left.foot",
        "two words",
    ];

    fn p(text: &str) -> Result<Query, QueryError> {
        parse_query(text, &NAMES)
    }

    fn t(i: u32) -> Query {
        Query::tag(i)
    }

    #[test]
    fn precedence_and_associativity() {
        assert_eq!(p("Running & Male - Tired").unwrap(), t(0) & (t(1) - t(2)));
        assert_eq!(p("Running | Male & Tired").unwrap(), t(0) | (t(1) & t(2)));
        assert_eq!(p("Running - Male - Tired").unwrap(), (t(0) - t(1)) - t(2));
        assert_eq!(p("(Running | Male) & Tired").unwrap(), (t(0) | t(1)) & t(2));
        assert_eq!(p("!Running & not Male").unwrap(), !t(0) & !t(1));
        assert_eq!(
            p("Running ^ Male | Tired & Male").unwrap(),
            (t(0) ^ t(1)) | (t(2) & t(1))
        );
        assert_eq!(
            p("locomotion:Walk | set/left.foot | \"two words\"").unwrap(),
            (t(3) | t(4)) | t(5)
        );
        assert_eq!(p("!!Running").unwrap(), !!t(0));
    }

    #[test]
    fn functions() {
        assert_eq!(
            p("first(Running, 10)").unwrap(),
            t(0).filter(Filter::First, 10)
        );
        assert_eq!(
            p("grow(Running | Male, 5) - Tired").unwrap(),
            (t(0) | t(1)).filter(Filter::Grow, 5) - t(2)
        );
        assert_eq!(
            p("random(Running)").unwrap(),
            t(0).filter(Filter::Random, 0)
        );
        assert_eq!(
            p("last_range(Running)").unwrap(),
            t(0).filter(Filter::LastRange, 0)
        );
    }

    #[test]
    fn a_suggested_name_is_shown_as_it_would_be_typed() {
        let names = ["walk left", "not", "Walk"];
        let e = parse_query("walk_left", &names).unwrap_err();
        assert_eq!(e.suggestions[0], "walk left");
        assert!(
            e.to_string().contains("did you mean `\"walk left\"`"),
            "{e}"
        );
        let e = parse_query("nto | Walk", &names).unwrap_err();
        assert!(e.to_string().contains("`\"not\"`"), "{e}");
        // A bare name stays bare.
        // A function name and its `(` may have spaces between (QUERY.md).
        assert_eq!(
            parse_query("first (Walk, 2)", &names).unwrap(),
            parse_query("first(Walk, 2)", &names).unwrap()
        );
        let e = parse_query("Wakl", &names).unwrap_err();
        assert!(e.to_string().ends_with("did you mean `Walk`?"), "{e}");
    }

    #[test]
    fn the_caret_lines_up_under_wide_characters_and_tabs() {
        let names = ["歩く", "run"];
        let text = "歩く &\tWlak";
        let e = parse_query(text, &names).unwrap_err();
        assert_eq!(e.caret_line_under(text), "      \t^^^^");
        let text = "run & 走る";
        let e = parse_query(text, &names).unwrap_err();
        assert_eq!(e.caret_line_under(text), "      ^^^^");
        assert!(e.render(text).ends_with("\n  run & 走る\n        ^^^^"));
    }

    #[test]
    fn a_name_with_a_combining_accent_is_one_name() {
        let names = ["caf\u{e9}", "cafe\u{301}"];
        // Decomposed (e + U+0301) and precomposed are different names, each read whole.
        assert_eq!(parse_query("cafe\u{301}", &names).unwrap(), Query::tag(1));
        assert_eq!(parse_query("caf\u{e9}", &names).unwrap(), Query::tag(0));
        let e = parse_query("cafe\u{301} & x", &names).unwrap_err();
        assert_eq!(e.span, 8..9, "{e}");
        assert_eq!(quote_name("cafe\u{301}"), "cafe\u{301}");
    }

    #[test]
    fn a_bare_not_where_a_tag_is_called_not_says_how_to_write_it() {
        let names = ["not", "Walk"];
        for text in ["not", "not | Walk", "Walk & not"] {
            let e = parse_query(text, &names).unwrap_err();
            assert!(e.message.contains("written \"not\""), "{text}: {e}");
        }
        assert_eq!(
            parse_query("\"not\" | Walk", &names).unwrap(),
            Query::tag(0) | Query::tag(1)
        );
        assert_eq!(parse_query("not Walk", &names).unwrap(), !Query::tag(1));
    }

    #[test]
    fn errors_point_at_the_column() {
        let e = p("Running & Wlak").unwrap_err();
        assert_eq!(e.span, 10..14);
        assert!(e.message.contains("unknown tag `Wlak`"));
        assert_eq!(e.suggestions, vec!["locomotion:Walk".to_string()]);
        let e = p("Running & Mlae").unwrap_err();
        assert_eq!(e.suggestions, vec!["Male".to_string()]);
        let e = p("Running & Runing").unwrap_err();
        assert_eq!(e.suggestions, vec!["Running".to_string()]);
        let e = p("Walk").unwrap_err();
        assert_eq!(e.suggestions, vec!["locomotion:Walk".to_string()]);
        let e = p("Running &").unwrap_err();
        assert_eq!(e.span, 9..9);
        assert!(e.message.contains("expected a tag name"));
        assert_eq!(e.caret_line(), "         ^");
        let e = p("(Running | Male").unwrap_err();
        assert!(e.message.contains("expected `)`"), "{}", e.message);
        let e = p("Running Male").unwrap_err();
        assert_eq!(e.span, 8..12);
        assert!(e.message.contains("expected an operator"));
        let e = p("frist(Running, 3)").unwrap_err();
        assert_eq!(e.suggestions, vec!["first".to_string()]);
        assert!(
            p("first(Running)")
                .unwrap_err()
                .message
                .contains("expected `,`")
        );
        assert!(
            p("first(Running, Male)")
                .unwrap_err()
                .message
                .contains("whole number")
        );
        assert!(
            p("first(Running, 99999999999)")
                .unwrap_err()
                .message
                .contains("too large")
        );
        assert!(p("").unwrap_err().message.contains("empty"));
        assert!(
            p("Running # Male")
                .unwrap_err()
                .message
                .contains("unexpected character")
        );
        assert!(p("\"Running").unwrap_err().message.contains("unterminated"));
        assert!(p("Running)").unwrap_err().message.contains("unmatched"));
        let deep = format!("{}Running{}", "(".repeat(300), ")".repeat(300));
        assert!(p(&deep).unwrap_err().message.contains("nested"));
    }

    #[test]
    fn deep_queries_still_work() {
        let text = (0..40)
            .map(|i| NAMES[i % 3])
            .collect::<Vec<_>>()
            .join(" | ");
        let q = p(&text).unwrap();
        assert!(!q.is_inline());
        assert_eq!(q.validate(NAMES.len()).unwrap(), 2);
    }

    #[test]
    fn to_text_round_trips_with_minimal_parentheses() {
        for text in [
            "Running & Male - Tired",
            "(Running | Male) & Tired",
            "Running - (Male - Tired)",
            "!(Running | Male) ^ locomotion:Walk",
            "grow(first(\"two words\", 3) | set/left.foot, 2) - last_range(Male)",
            "!!Running",
        ] {
            let q = p(text).unwrap();
            assert_eq!(query_to_text(&q, &NAMES), text);
        }
    }

    #[test]
    fn rename_rewrites_uses_only() {
        assert_eq!(
            rename_tag_in_expr("Walk & first(Walk, 3) | \"Walk\"", "Walk", "loco:Walk").as_deref(),
            Some("loco:Walk & first(loco:Walk, 3) | loco:Walk")
        );
        assert_eq!(
            rename_tag_in_expr("first & Run", "first", "a b").as_deref(),
            Some("\"a b\" & Run")
        );
        assert_eq!(rename_tag_in_expr("Run", "Walk", "X"), None);
        assert_eq!(quote_name("not"), "\"not\"");
        assert_eq!(quote_name("9lives"), "\"9lives\"");
    }
}
