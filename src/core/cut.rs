//! "Cut" export: every range of a query result written as its own BVH clip, for pipelines that
//! still want one file per motion. See docs/QUERY_VIEW.md.
//!
//! File names come from a pattern with the placeholders `{clip}` (clip name), `{query}` (the query
//! text made file-name safe, at most 40 characters), `{n}` (1-based index of the range within its
//! clip), `{start}` and `{stop}` (the range, in frames, half-open). `.bvh` is appended when the
//! pattern does not end with it. The default is [`DEFAULT_PATTERN`].
//!
//! The core does not know where animation comes from: the caller passes a loader that returns the
//! [`Clip`] of a document clip ([`load_source_clip`] reads a clip's `source` file relative to the
//! project's folder; the app also knows the embedded demo clips).

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use crate::core::anim::{Clip, save_bvh};
use crate::core::tags::{ClipId, ClipInfo, Range, RangeSet, TagDocument};

/// The default file name pattern.
pub const DEFAULT_PATTERN: &str = "{clip}_{query}_{n}.bvh";

/// Longest `{query}` part of a file name, in characters.
pub const MAX_QUERY_NAME_CHARS: usize = 40;

/// Why a cut could not start or a file could not be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CutError {
    #[error(
        "bad file name pattern `{pattern}`: {why}; placeholders are {{clip}} {{query}} {{n}} {{start}} {{stop}}"
    )]
    BadPattern { pattern: String, why: String },
    #[error(
        "two ranges would be written to the same file `{0}`; add {{n}} or {{start}} to the pattern"
    )]
    DuplicateName(String),
    #[error("{path}: cannot create the output folder: {message}")]
    OutputDir { path: String, message: String },
    #[error(
        "{count} of the cut's files already exist in {dir} (first: {first}); nothing was written: \
         choose another folder or pattern, or allow replacing them"
    )]
    Exists {
        dir: String,
        count: usize,
        first: String,
    },
    #[error(
        "{path} is the source take of a clip of the project; a cut never writes over a take: \
         choose another folder or pattern"
    )]
    WouldReplaceSource { path: String },
}

/// Where a cut writes, and what it may replace there.
#[derive(Debug, Clone, Copy)]
pub struct CutOutput<'a> {
    /// The output folder (created if needed).
    pub dir: &'a Path,
    /// The project's folder, against which the clips' relative sources are found (`None`: only
    /// absolute sources are known). A clip's source take is never replaced.
    pub base_dir: Option<&'a Path>,
    /// Replace files of the plan that already exist (otherwise the cut writes nothing and fails
    /// with [`CutError::Exists`]).
    pub replace_existing: bool,
}

/// One file the cut writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutItem {
    pub clip: ClipId,
    pub range: Range,
    /// File name (no folder).
    pub file_name: String,
}

/// What a cut did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CutSummary {
    /// Files written, in order.
    pub written: Vec<PathBuf>,
    /// Frames written over all files.
    pub frames: u64,
    /// Ranges not written, with why (clip animation missing or shorter than the range, write
    /// error). Nothing is skipped silently.
    pub failed: Vec<String>,
    /// True when the progress callback asked to stop.
    pub cancelled: bool,
}

impl CutSummary {
    /// One line for a status bar.
    pub fn line(&self, out_dir: &Path) -> String {
        let mut s = format!(
            "wrote {} BVH file(s), {} frames, to {}",
            self.written.len(),
            self.frames,
            out_dir.display()
        );
        if self.cancelled {
            s.push_str(" (cancelled)");
        }
        if !self.failed.is_empty() {
            s.push_str(&format!(
                "; {} range(s) failed, first: {}",
                self.failed.len(),
                self.failed[0]
            ));
        }
        s
    }
}

/// `text` made safe as part of a file name: letters, digits, `-`, `_` and `.` are kept, runs of
/// anything else become one `_`; trimmed of `_` at both ends; at most `max_chars` characters.
pub fn file_safe(text: &str, max_chars: usize) -> String {
    let mut s = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
            s.push(c);
        } else if !s.ends_with('_') {
            s.push('_');
        }
    }
    let s: String = s.trim_matches('_').chars().take(max_chars).collect();
    let s = s.trim_matches(['_', '.']).to_owned();
    if s.is_empty() { "query".to_owned() } else { s }
}

/// Checks a pattern: known placeholders only, and a non-empty name.
pub fn check_pattern(pattern: &str) -> Result<(), CutError> {
    let bad = |why: &str| CutError::BadPattern {
        pattern: pattern.to_owned(),
        why: why.to_owned(),
    };
    if pattern.trim().is_empty() {
        return Err(bad("it is empty"));
    }
    if pattern.contains(['/', '\\']) {
        return Err(bad("it must be a file name, without folders"));
    }
    let mut rest = pattern;
    loop {
        let open = rest.find('{');
        let close = rest.find('}');
        match (open, close) {
            (None, None) => break,
            (None, Some(_)) => return Err(bad("a `}` has no matching `{`")),
            (Some(o), Some(c)) if c < o => return Err(bad("a `}` has no matching `{`")),
            (Some(_), None) => return Err(bad("a `{` is not closed by `}`")),
            (Some(o), Some(c)) => {
                let name = &rest[o + 1..c];
                if !matches!(name, "clip" | "query" | "n" | "start" | "stop") {
                    return Err(bad(&format!("unknown placeholder {{{name}}}")));
                }
                rest = &rest[c + 1..];
            }
        }
    }
    Ok(())
}

/// The file name for one range.
pub fn expand_pattern(pattern: &str, clip: &str, query: &str, n: usize, range: Range) -> String {
    let mut s = pattern
        .replace("{clip}", &file_safe(clip, 200))
        .replace("{query}", &file_safe(query, MAX_QUERY_NAME_CHARS))
        .replace("{n}", &n.to_string())
        .replace("{start}", &range.start.to_string())
        .replace("{stop}", &range.stop.to_string());
    if !s.to_ascii_lowercase().ends_with(".bvh") {
        s.push_str(".bvh");
    }
    s
}

/// The files a cut of `result` would write, in clip order then range order. Fails on a bad pattern
/// or when two ranges would get the same file name.
pub fn plan_cut(
    doc: &TagDocument,
    result: &RangeSet,
    query: &str,
    pattern: &str,
) -> Result<Vec<CutItem>, CutError> {
    check_pattern(pattern)?;
    let mut items = Vec::with_capacity(result.range_count());
    let mut names = BTreeSet::new();
    for (clip, ranges) in result.iter() {
        let Some(info) = doc.clips.get(clip as usize) else {
            continue;
        };
        for (k, &range) in ranges.iter().enumerate() {
            let file_name = expand_pattern(pattern, &info.name, query, k + 1, range);
            if !names.insert(file_name.to_lowercase()) {
                return Err(CutError::DuplicateName(file_name));
            }
            items.push(CutItem {
                clip,
                range,
                file_name,
            });
        }
    }
    Ok(items)
}

/// Loads the animation of a document clip from its `source` file, relative to `base_dir` (the
/// project's folder), by the project's one rule ([`crate::core::project::load`]).
pub fn load_source_clip(base_dir: &Path, clip: ClipId, info: &ClipInfo) -> Result<Clip, String> {
    crate::core::project::load(&crate::core::project::ClipRequest::new(
        clip,
        info,
        Some(base_dir),
        false,
    )?)
}

/// Checks what the files of `plan` would replace in `out.dir`: nothing, or only files that are
/// not a clip's source take when `out.replace_existing`. Fails with [`CutError::WouldReplaceSource`]
/// for a take (also through a link) and with [`CutError::Exists`] for any other existing file
/// unless replacing is allowed.
pub fn check_outputs(doc: &TagDocument, plan: &[CutItem], out: CutOutput) -> Result<(), CutError> {
    let existing: Vec<PathBuf> = plan
        .iter()
        .map(|item| out.dir.join(&item.file_name))
        .filter(|p| p.symlink_metadata().is_ok())
        .collect();
    let Some(first) = existing.first() else {
        return Ok(());
    };
    let base = out.base_dir.map(crate::core::library::walk::absolute);
    let sources: HashSet<PathBuf> = doc
        .clips
        .iter()
        .filter_map(|info| crate::core::library::source_path(info, base.as_deref()))
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    for p in &existing {
        if std::fs::canonicalize(p).is_ok_and(|c| sources.contains(&c)) {
            return Err(CutError::WouldReplaceSource {
                path: p.display().to_string(),
            });
        }
    }
    if out.replace_existing {
        return Ok(());
    }
    Err(CutError::Exists {
        dir: out.dir.display().to_string(),
        count: existing.len(),
        first: first
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned()),
    })
}

/// Writes every item of `plan` into `out.dir` (created if needed) as a BVH file, with
/// [`save_bvh`] (atomic), after [`check_outputs`]: nothing is written when a file would replace a
/// source take, or an existing file without `out.replace_existing`. `load` is called once per
/// clip, in clip order; `progress(done, total)` is called before each file and after the last, and
/// returning `false` stops the cut (the summary says so). A clip that does not load, or is shorter
/// than a range, fails those ranges and the cut goes on with the next.
pub fn cut_clips(
    doc: &TagDocument,
    plan: &[CutItem],
    out: CutOutput,
    load: &mut dyn FnMut(ClipId, &ClipInfo) -> Result<Clip, String>,
    progress: &mut dyn FnMut(usize, usize) -> bool,
) -> Result<CutSummary, CutError> {
    let out_dir = out.dir;
    std::fs::create_dir_all(out_dir).map_err(|e| CutError::OutputDir {
        path: out_dir.display().to_string(),
        message: if out_dir.is_file() {
            "it is a file; expected a folder (or a path where one can be made)".to_owned()
        } else {
            e.to_string()
        },
    })?;
    check_outputs(doc, plan, out)?;
    let mut summary = CutSummary::default();
    let mut loaded: Option<(ClipId, Result<Clip, String>)> = None;
    for (done, item) in plan.iter().enumerate() {
        if !progress(done, plan.len()) {
            summary.cancelled = true;
            return Ok(summary);
        }
        let Some(info) = doc.clips.get(item.clip as usize) else {
            summary
                .failed
                .push(format!("{}: no clip {}", item.file_name, item.clip));
            continue;
        };
        if loaded.as_ref().is_none_or(|(c, _)| *c != item.clip) {
            let anim = load(item.clip, info).and_then(|a| same_take(info, a));
            loaded = Some((item.clip, anim));
        }
        let anim = match &loaded {
            Some((_, Ok(anim))) => anim,
            Some((_, Err(e))) => {
                summary.failed.push(format!("{}: {e}", item.file_name));
                continue;
            }
            None => continue,
        };
        let stem = item
            .file_name
            .strip_suffix(".bvh")
            .unwrap_or(&item.file_name);
        let Some(part) = anim.sub_clip(item.range.start as usize, item.range.stop as usize, stem)
        else {
            summary.failed.push(format!(
                "{}: frames [{}, {}) are not inside the animation of `{}` ({} frames)",
                item.file_name, item.range.start, item.range.stop, info.name, anim.frame_count
            ));
            continue;
        };
        let path = out_dir.join(&item.file_name);
        match save_bvh(&path, &part, false) {
            Ok(()) => {
                summary.frames += u64::from(item.range.len());
                summary.written.push(path);
            }
            Err(e) => summary
                .failed
                .push(format!("{}: cannot write: {e}", path.display())),
        }
    }
    progress(plan.len(), plan.len());
    Ok(summary)
}

/// `anim`, when it is the take the project's clip `info` was tagged on as far as its length and
/// rate tell: a take recorded again or trimmed since would put the ranges on other motion.
fn same_take(info: &ClipInfo, anim: Clip) -> Result<Clip, String> {
    match take_changed(info, anim.frame_count, anim.fps) {
        Some(e) => Err(format!("`{}`: {e}", info.name)),
        None => Ok(anim),
    }
}

/// Why a take of `frames` at `fps` is not the one the project's clip `info` was tagged on (its
/// length or rate differ), or `None` when it is: its ranges would fall on other motion. Shared by
/// `cut` and `find`, which read the takes themselves; the caller names the clip.
pub fn take_changed(info: &ClipInfo, frames: usize, fps: f32) -> Option<String> {
    // Relative: at 0.001 fps an absolute floor of 0.001 took a rate nearly doubled for the same.
    let fps_differs = (fps - info.fps).abs() > 1e-3 * info.fps.abs() || fps.is_nan();
    (frames != info.frames as usize || fps_differs).then(|| {
        format!(
            "its take now has {frames} frames at {fps} fps where the project has {} at {} fps, \
             so its ranges would fall on other motion; expected the take the clip was tagged on \
             (`taglane import --update-changed` takes a new length)",
            info.frames, info.fps
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::anim::{ImportOptions, parse_bvh};

    /// A take's rate is compared relatively: 0.0019 fps is not the 0.001 fps a clip was tagged
    /// at (an absolute floor of 0.001 took it for the same), and a rounding step is.
    #[test]
    fn a_changed_rate_is_seen_at_any_rate() {
        let info = |fps: f32| ClipInfo {
            name: "c".into(),
            frames: 10,
            fps,
            source: None,
            unit_cm: None,
        };
        assert!(take_changed(&info(0.001), 10, 0.0019).is_some());
        assert!(take_changed(&info(0.001), 10, 0.001).is_none());
        assert!(take_changed(&info(30.0), 10, 30.000_01).is_none());
        assert!(take_changed(&info(30.0), 10, 25.0).is_some());
        assert!(take_changed(&info(30.0), 11, 30.0).is_some());
        assert!(take_changed(&info(30.0), 10, f32::NAN).is_some());
    }

    #[test]
    fn patterns_expand_and_check() {
        assert!(check_pattern(DEFAULT_PATTERN).is_ok());
        assert!(check_pattern("{clip}_{start}-{stop}").is_ok());
        assert!(check_pattern("").is_err());
        assert!(check_pattern("a/{n}").is_err());
        assert!(check_pattern("{nope}_{n}").is_err());
        assert!(check_pattern("{n").is_err());
        assert!(check_pattern("n}").is_err());
        assert_eq!(
            expand_pattern(
                DEFAULT_PATTERN,
                "walk 01",
                "Walk & !Tired",
                3,
                Range::new(5, 9)
            ),
            "walk_01_Walk_Tired_3.bvh"
        );
        assert_eq!(
            expand_pattern("{clip}-{start}-{stop}", "a", "q", 1, Range::new(5, 9)),
            "a-5-9.bvh"
        );
        assert_eq!(file_safe("((", 10), "query");
        assert_eq!(file_safe(&"x".repeat(100), MAX_QUERY_NAME_CHARS).len(), 40);
    }

    fn demo() -> (Vec<Clip>, TagDocument) {
        crate::core::demo::demo_project()
    }

    #[test]
    fn a_take_whose_length_or_rate_changed_is_not_cut() {
        let (clips, doc) = demo();
        let q = doc.parse_query("Running & Male").unwrap();
        let (r, _) = crate::core::tags::query::evaluate(&doc, &q, Default::default()).unwrap();
        let plan = plan_cut(&doc, &r, "run", DEFAULT_PATTERN).unwrap();
        let first = plan[0].clip;
        let dir = std::env::temp_dir().join(format!("taglane-cut-changed-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let out = CutOutput {
            dir: &dir,
            base_dir: None,
            replace_existing: false,
        };
        for change in ["longer", "faster"] {
            let summary = cut_clips(
                &doc,
                &plan,
                out,
                &mut |c, _| {
                    let mut clip = clips[c as usize].clone();
                    if c == first {
                        if change == "faster" {
                            clip.fps *= 2.0;
                        } else {
                            // Every range still inside the take: only the count tells.
                            let n = clip.joint_count();
                            clip.frame_count += 1;
                            clip.rotations.extend_from_within(..n);
                            clip.translations.extend_from_within(..n);
                            clip.scales.extend_from_within(..n);
                        }
                    }
                    Ok(clip)
                },
                &mut |_, _| true,
            )
            .unwrap();
            let of_first = plan.iter().filter(|i| i.clip == first).count();
            assert_eq!(
                summary.failed.len(),
                of_first,
                "{change}: {:?}",
                summary.failed
            );
            assert!(
                summary.failed[0].contains("its take now has"),
                "{:?}",
                summary.failed
            );
            assert_eq!(summary.written.len(), plan.len() - of_first);
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    #[test]
    fn an_output_folder_that_is_a_file_is_named_as_one() {
        let (_, doc) = demo();
        let file = std::env::temp_dir().join(format!("taglane-cut-file-{}", std::process::id()));
        std::fs::write(&file, "x").unwrap();
        let out = CutOutput {
            dir: &file,
            base_dir: None,
            replace_existing: false,
        };
        let e = cut_clips(
            &doc,
            &[],
            out,
            &mut |_, _| Err(String::new()),
            &mut |_, _| true,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("it is a file; expected a folder"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
        std::fs::remove_file(&file).unwrap();
    }

    #[test]
    fn plan_refuses_duplicate_names() {
        let (_, doc) = demo();
        let q = doc.parse_query("contact:LeftFootDown").unwrap();
        let (r, _) = crate::core::tags::query::evaluate(&doc, &q, Default::default()).unwrap();
        assert!(r.range_count() > doc.clips.len(), "several ranges per clip");
        let plan = plan_cut(&doc, &r, "left", DEFAULT_PATTERN).unwrap();
        assert_eq!(plan.len(), r.range_count());
        assert!(matches!(
            plan_cut(&doc, &r, "left", "{clip}_{query}"),
            Err(CutError::DuplicateName(_))
        ));
    }

    #[test]
    fn cut_writes_each_range_with_its_frames_and_reports_failures() {
        let (clips, doc) = demo();
        let q = doc.parse_query("Running & Male").unwrap();
        let (r, _) = crate::core::tags::query::evaluate(&doc, &q, Default::default()).unwrap();
        let plan = plan_cut(&doc, &r, "Running & Male", DEFAULT_PATTERN).unwrap();
        assert!(!plan.is_empty());
        let dir = std::env::temp_dir().join(format!("taglane-cut-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let first_clip = plan[0].clip;
        let mut calls = Vec::new();
        let mut steps = 0;
        let out = |dir| CutOutput {
            dir,
            base_dir: None,
            replace_existing: false,
        };
        let summary = cut_clips(
            &doc,
            &plan,
            out(&dir),
            &mut |c, _| {
                calls.push(c);
                if c == first_clip {
                    Err("missing".to_owned())
                } else {
                    Ok(clips[c as usize].clone())
                }
            },
            &mut |_, _| {
                steps += 1;
                true
            },
        )
        .unwrap();
        let failed_items = plan.iter().filter(|i| i.clip == first_clip).count();
        assert_eq!(summary.failed.len(), failed_items);
        assert_eq!(summary.written.len(), plan.len() - failed_items);
        assert_eq!(steps, plan.len() + 1);
        let mut dedup = calls.clone();
        dedup.dedup();
        assert_eq!(calls, dedup, "one load per clip");
        for (path, item) in summary
            .written
            .iter()
            .zip(plan.iter().filter(|i| i.clip != first_clip))
        {
            let text = std::fs::read_to_string(path).unwrap();
            let (clip, _) = parse_bvh(&text, "x", &ImportOptions::default()).unwrap();
            assert_eq!(clip.frame_count, item.range.len() as usize);
        }
        // Cancel after two files.
        let dir2 = dir.join("cancel");
        let s = cut_clips(
            &doc,
            &plan,
            out(&dir2),
            &mut |c, _| Ok(clips[c as usize].clone()),
            &mut |done, _| done < 2,
        )
        .unwrap();
        assert!(s.cancelled);
        assert_eq!(s.written.len(), 2);
        let _ = std::fs::remove_dir_all(&dir);
    }
    #[test]
    fn cut_replaces_nothing_unless_allowed_and_never_a_source_take() {
        let (clips, mut doc) = demo();
        let q = doc.parse_query("Running & Male").unwrap();
        let (r, _) = crate::core::tags::query::evaluate(&doc, &q, Default::default()).unwrap();
        let plan = plan_cut(&doc, &r, "Running & Male", DEFAULT_PATTERN).unwrap();
        let dir = std::env::temp_dir().join(format!("taglane-cut-replace-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let cut = |doc: &TagDocument, replace_existing| {
            let out = CutOutput {
                dir: &dir,
                base_dir: Some(&dir),
                replace_existing,
            };
            cut_clips(
                doc,
                &plan,
                out,
                &mut |c, _| Ok(clips[c as usize].clone()),
                &mut |_, _| true,
            )
        };
        // A file of the plan already there (another file of the folder does not count).
        let taken = dir.join(&plan[1].file_name);
        std::fs::write(&taken, "mine").unwrap();
        std::fs::write(dir.join("other.bvh"), "other").unwrap();
        let e = cut(&doc, false).unwrap_err();
        assert_eq!(
            e,
            CutError::Exists {
                dir: dir.display().to_string(),
                count: 1,
                first: plan[1].file_name.clone(),
            }
        );
        assert!(e.to_string().contains("nothing was written"), "{e}");
        assert_eq!(std::fs::read_to_string(&taken).unwrap(), "mine");
        assert!(!dir.join(&plan[0].file_name).exists(), "nothing written");
        // Allowed: replaced, and the other files written.
        let s = cut(&doc, true).unwrap();
        assert_eq!(s.written.len(), plan.len());
        assert!(
            std::fs::read_to_string(&taken)
                .unwrap()
                .starts_with("HIERARCHY")
        );
        // A clip whose source take is one of the plan's files: refused even when replacing is
        // allowed, as the file itself and through a link in the output folder.
        std::fs::write(&taken, "the take").unwrap();
        doc.clips[0].source = Some(plan[1].file_name.clone());
        let e = cut(&doc, true).unwrap_err();
        assert!(matches!(e, CutError::WouldReplaceSource { .. }), "{e}");
        assert_eq!(std::fs::read_to_string(&taken).unwrap(), "the take");
        #[cfg(unix)]
        {
            let elsewhere = dir.join("takes");
            std::fs::create_dir_all(&elsewhere).unwrap();
            std::fs::rename(&taken, elsewhere.join("take.bvh")).unwrap();
            std::os::unix::fs::symlink(elsewhere.join("take.bvh"), &taken).unwrap();
            doc.clips[0].source = Some("takes/take.bvh".to_owned());
            let e = cut(&doc, true).unwrap_err();
            assert!(matches!(e, CutError::WouldReplaceSource { .. }), "{e}");
            let kept = std::fs::read_to_string(elsewhere.join("take.bvh")).unwrap();
            assert_eq!(kept, "the take");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
