//! Names: the closest names to a misspelt one ("did you mean"), and names made unique. Shared by
//! the query language, the file loaders and the settings readers; depends on nothing else.

/// Longest name, in characters, compared letter by letter for a suggestion. The comparison takes
/// time in the product of the two lengths, and a longer name is not a misspelling anyone typed:
/// longer names (and candidates) are still suggested when one contains the other.
const MAX_COMPARED_CHARS: usize = 64;

/// Edit distance between two names (case-insensitive; a swap of two neighbours counts once).
/// Takes time in the product of the lengths and memory in the second one.
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    distance_at_most(&a, &b, usize::MAX).unwrap_or(usize::MAX)
}

/// Edit distance between `a` and `b` (already lowercased) if it is at most `max`, else `None`.
/// Names whose lengths differ by more than `max` are not compared; the table is kept three rows
/// at a time (a swap looks two rows back).
fn distance_at_most(a: &[char], b: &[char], max: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let w = b.len() + 1;
    let mut before: Vec<usize> = vec![0; w];
    let mut prev: Vec<usize> = (0..w).collect();
    let mut row: Vec<usize> = vec![0; w];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let mut v = (prev[j - 1] + usize::from(a[i - 1] != b[j - 1]))
                .min(prev[j] + 1)
                .min(row[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(before[j - 2] + 1);
            }
            row[j] = v;
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut row);
    }
    Some(prev[b.len()]).filter(|&d| d <= max)
}

/// `s` as characters if it has at most [`MAX_COMPARED_CHARS`] of them.
fn short_chars(s: &str) -> Option<Vec<char>> {
    (s.chars().nth(MAX_COMPARED_CHARS).is_none()).then(|| s.chars().collect())
}

/// Up to three names from `candidates` close to `name`, best first. Names of more than
/// `MAX_COMPARED_CHARS` (64) characters are only suggested when one contains the other.
pub fn closest_names<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let lower = name.to_lowercase();
    let chars = short_chars(&lower);
    let limit = ((name.chars().count() + 1) / 3).max(1);
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|c| {
            let cl = c.to_lowercase();
            // The part after a namespace (`locomotion:Walk` -> `Walk`) also counts.
            let short = cl.rsplit([':', '.', '/']).next().unwrap_or(&cl);
            let within = |s: &str| {
                let (a, b) = (chars.as_deref()?, short_chars(s)?);
                distance_at_most(a, &b, limit)
            };
            let d = within(&cl).into_iter().chain(within(short)).min();
            let contains = lower.len() >= 3 && (cl.contains(&lower) || lower.contains(short));
            // Distances over the limit are not computed: a name that contains the other scores
            // the limit then.
            match d {
                Some(d) => Some((d, c)),
                None => contains.then_some((limit, c)),
            }
        })
        .collect();
    scored.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(3)
        .map(|(_, c)| c.to_string())
        .collect()
}

/// `base` if `taken(base)` is false, else the first of `base{sep}2`, `base{sep}3`, ... not taken.
pub fn unique_name(base: &str, sep: &str, taken: impl Fn(&str) -> bool) -> String {
    if !taken(base) {
        return base.to_owned();
    }
    (2u64..)
        .map(|n| format!("{base}{sep}{n}"))
        .find(|c| !taken(c))
        .expect("some suffix is free")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_suggested_best_first() {
        assert_eq!(distance("Walk", "wlak"), 1);
        assert_eq!(distance("Walk", "Run"), 4);
        assert_eq!(distance("", "abc"), 3);
        let names = ["Walk", "Run", "locomotion:Jump", "Walking"];
        assert_eq!(closest_names("walj", names), ["Walk"]);
        assert_eq!(closest_names("Jmup", names), ["locomotion:Jump"]);
        assert_eq!(closest_names("Walk", names), ["Walk", "Walking"]);
        assert!(closest_names("Crouch", names).is_empty());
    }

    #[test]
    fn very_long_names_are_not_compared_letter_by_letter() {
        // Two names of 200,000 characters: the full table of the edit distance would be 4e10
        // cells (320 GB), and filling it would take minutes.
        let long = "a".repeat(200_000);
        let other = format!("{}b", &long[1..]);
        assert!(closest_names(&long, [other.as_str(), "Walk"]).is_empty());
        // A short name against a long one is not compared either.
        assert!(closest_names("Walk", [other.as_str()]).is_empty());
        // One containing the other is still suggested.
        assert_eq!(
            closest_names(&long[..100_000], [long.as_str()]),
            [long.as_str()]
        );
    }
}
