//! Names: the closest names to a misspelt one ("did you mean"), and names made unique. Shared by
//! the query language, the file loaders and the settings readers; depends on nothing else.

/// Edit distance between two names (case-insensitive; a swap of two neighbours counts once).
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (j, x) in d.iter_mut().take(w).enumerate() {
        *x = j;
    }
    for i in 1..=a.len() {
        d[i * w] = i;
        for j in 1..=b.len() {
            let mut v = (d[(i - 1) * w + j - 1] + usize::from(a[i - 1] != b[j - 1]))
                .min(d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

/// Up to three names from `candidates` close to `name`, best first.
pub fn closest_names<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let lower = name.to_lowercase();
    let limit = ((name.chars().count() + 1) / 3).max(1);
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|c| {
            let d = distance(name, c);
            let cl = c.to_lowercase();
            // The part after a namespace (`locomotion:Walk` -> `Walk`) also counts.
            let short = cl.rsplit([':', '.', '/']).next().unwrap_or(&cl);
            let d = d.min(distance(&lower, short));
            let contains = lower.len() >= 3 && (cl.contains(&lower) || lower.contains(short));
            (d <= limit || contains).then_some((if contains { d.min(limit) } else { d }, c))
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
