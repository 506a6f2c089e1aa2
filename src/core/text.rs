//! Text laid out in a terminal's columns: a wide (East Asian) character takes two columns, a
//! combining mark none. The command line's tables and the caret under a query error line up by
//! these widths, not by counting characters.

use unicode_width::UnicodeWidthChar;

/// Columns `c` takes in a terminal (a tab counts one; [`spaces_under`] keeps tabs as tabs).
pub fn char_width(c: char) -> usize {
    if c == '\t' { 1 } else { c.width().unwrap_or(0) }
}

/// Columns `s` takes in a terminal.
pub fn width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

/// `s` followed by spaces to `w` columns (as is when it is wider).
pub fn pad_right(s: &str, w: usize) -> String {
    format!("{s}{}", " ".repeat(w.saturating_sub(width(s))))
}

/// Spaces to `w` columns followed by `s` (as is when it is wider).
pub fn pad_left(s: &str, w: usize) -> String {
    format!("{}{s}", " ".repeat(w.saturating_sub(width(s))))
}

/// Blanks that reach under the end of `s` printed on the line above: a space per column, and a
/// tab where `s` has one (so the line lines up whatever the terminal's tab stops).
pub fn spaces_under(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == '\t' {
                "\t".to_owned()
            } else {
                " ".repeat(char_width(c))
            }
        })
        .collect()
}

/// `s` as one line of a table: control characters (a tab or a newline in a clip name) written as
/// escapes (`\t`, `\n`, `\u{1b}`), so a name cannot break the table's rows and columns.
pub fn one_line(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(
        s.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_characters_take_two_columns() {
        assert_eq!(width("walk"), 4);
        assert_eq!(width("歩く"), 4);
        assert_eq!(width("e\u{301}"), 1);
        assert_eq!(pad_right("歩く", 6), "歩く  ");
        assert_eq!(pad_left("歩", 3), " 歩");
        assert_eq!(pad_right("longer", 2), "longer");
        assert_eq!(spaces_under("a\t歩"), " \t  ");
        assert_eq!(one_line("walk\tleft\n"), "walk\\tleft\\n");
        assert_eq!(one_line("歩く"), "歩く");
    }
}
