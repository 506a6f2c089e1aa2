//! Generated libraries for benchmarks and memory measurements: variants of the embedded demo
//! takes, lengthened to a target size, in nested session folders with repeated file names (as real
//! capture libraries have). Written at run time into a folder the caller owns; never committed.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use crate::core::source::DEMO_CLIP_FILES;

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LibrarySpec {
    /// Number of takes.
    pub takes: usize,
    /// Approximate size of each take in bytes.
    pub bytes_per_take: usize,
    /// Takes per session folder.
    pub takes_per_session: usize,
}

impl LibrarySpec {
    /// The import benchmark: 240 takes of about 1.125 MB (270 MB), 24 per session.
    pub const BENCH: LibrarySpec = LibrarySpec {
        takes: 240,
        bytes_per_take: 1_125_000,
        takes_per_session: 24,
    };
}

/// The header (up to and including the `Frame Time:` line) and the frame rows of a demo take.
fn split_take(text: &str) -> (&str, Vec<&str>) {
    let ft = text
        .find("Frame Time:")
        .expect("demo takes have a Frame Time line");
    let end = ft + text[ft..].find('\n').map_or(text.len() - ft, |e| e + 1);
    let rows = text[end..]
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    (&text[..end], rows)
}

/// One take of about `bytes` bytes: demo take `k`'s rows played forward and backward until the
/// size is reached (no jump at the seams), with the `Frames:` count of the rows written.
pub fn lengthened_take(k: usize, bytes: usize) -> String {
    let (header, rows) = split_take(DEMO_CLIP_FILES[k % DEMO_CLIP_FILES.len()].1);
    let mut body = String::with_capacity(bytes + 4096);
    let mut frames = 0usize;
    let cycle: Vec<&str> = rows.iter().chain(rows.iter().rev()).copied().collect();
    while body.len() + header.len() < bytes || frames == 0 {
        body.push_str(cycle[frames % cycle.len()]);
        body.push('\n');
        frames += 1;
    }
    let mut out = String::with_capacity(header.len() + body.len() + 16);
    for line in header.lines() {
        if line.trim_start().starts_with("Frames:") {
            let _ = writeln!(out, "Frames: {frames}");
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push_str(&body);
    out
}

/// Writes a library under `dir` (`day_D/session_S/NAME_N.bvh`) and returns the files written.
/// File names repeat across sessions (`walk_male_01_1.bvh` in every session), so the import
/// names them with their folders.
pub fn write_library(dir: &Path, spec: &LibrarySpec) -> io::Result<Vec<PathBuf>> {
    let per_session = spec.takes_per_session.max(1);
    let mut files = Vec::with_capacity(spec.takes);
    // The 10 demo takes lengthened once, reused for every session.
    let variants: Vec<String> = (0..DEMO_CLIP_FILES.len())
        .map(|k| lengthened_take(k, spec.bytes_per_take))
        .collect();
    for i in 0..spec.takes {
        let session = i / per_session;
        let in_session = i % per_session;
        let k = in_session % DEMO_CLIP_FILES.len();
        let stem = DEMO_CLIP_FILES[k].0.trim_end_matches(".bvh");
        let folder = dir
            .join(format!("day_{}", session / 4 + 1))
            .join(format!("session_{:02}", session + 1));
        std::fs::create_dir_all(&folder)?;
        let path = folder.join(format!(
            "{stem}_{}.bvh",
            in_session / DEMO_CLIP_FILES.len() + 1
        ));
        std::fs::write(&path, &variants[k])?;
        files.push(path);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::anim::{ImportOptions, parse_bvh};

    #[test]
    fn lengthened_takes_parse_with_the_rows_they_say() {
        let text = lengthened_take(3, 300_000);
        assert!((300_000..310_000).contains(&text.len()), "{}", text.len());
        let (clip, warnings) = parse_bvh(&text, "t", &ImportOptions::default()).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(clip.frame_count > 500);
    }
}
