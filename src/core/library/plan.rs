//! Turning a scan into one edit of a document: new clips are added, takes already in the project
//! are recognised by their source file (re-importing adds nothing), changed takes and bad files are
//! reported.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::naming::{NameRequest, base_name, unique_names};
use super::scan::LibraryScan;
use super::units::{UnitChoice, choose_unit, describe_unit};
use super::walk::{FileId, file_id_of, normalize};
use crate::core::doc::Edit;
use crate::core::tags::{ClipId, ClipInfo, TagDocument};

/// A clip the import adds.
#[derive(Debug, Clone, PartialEq)]
pub struct AddedClip {
    /// Its unique name in the project.
    pub name: String,
    /// The take file (absolute).
    pub path: PathBuf,
    /// The source as stored in the project (relative to the project's folder when it can be).
    pub source: String,
    pub frames: u32,
    pub fps: f32,
    pub joints: usize,
    pub unit: UnitChoice,
}

/// A take already in the project whose file now has another length or rate.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangedClip {
    pub clip: ClipId,
    pub name: String,
    pub path: PathBuf,
    pub frames_before: u32,
    pub frames_now: u32,
    pub fps_before: f32,
    pub fps_now: f32,
}

/// A take that could not be imported.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedFile {
    pub path: PathBuf,
    /// The importer's message: `FILE: line N: what was expected`.
    pub message: String,
}

/// A remark on an imported take (the header's frame count differs from the rows, a glTF
/// without animation, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct FileWarning {
    pub path: PathBuf,
    pub message: String,
}

/// A clip of the project whose source is under an imported folder but was not found there.
#[derive(Debug, Clone, PartialEq)]
pub struct MissingClip {
    pub clip: ClipId,
    pub name: String,
    pub path: PathBuf,
}

/// A take already in the project whose clip's source is another path to the same file (a link
/// to it, or the link it is reached through): found by its file identity.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkedClip {
    pub clip: ClipId,
    pub name: String,
    /// Where the import found the take.
    pub path: PathBuf,
    /// The clip's source, as the project has it.
    pub source: String,
}

/// A take already in the project, unchanged: its clip and where the import found it.
#[derive(Debug, Clone, PartialEq)]
pub struct UnchangedClip {
    pub clip: ClipId,
    pub name: String,
    pub path: PathBuf,
}

/// What an import will do, and the edit that does it.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportPlan {
    /// One undoable step: an [`Edit::Batch`] of [`Edit::InsertClip`]s appending `added` in order
    /// (empty when nothing is new).
    pub edit: Edit,
    pub added: Vec<AddedClip>,
    /// Takes already in the project, unchanged (named in the full report).
    pub unchanged: Vec<UnchangedClip>,
    /// Those of `unchanged` and `changed` found at another path than their clip's source (the
    /// same file through a link).
    pub linked: Vec<LinkedClip>,
    pub changed: Vec<ChangedClip>,
    pub missing: Vec<MissingClip>,
    pub failed: Vec<FailedFile>,
    pub warnings: Vec<FileWarning>,
    /// Files that are not takes.
    pub ignored: Vec<PathBuf>,
    /// Folders that could not be read.
    pub problems: Vec<String>,
    /// Takes scanned and their total size.
    pub files: usize,
    pub bytes: u64,
    pub elapsed: Duration,
}

/// The source string stored for `path` in a project whose file is in `base_dir`: relative (with
/// `..` when needed) when both share a folder below the file system root, else absolute. Always
/// with `/` separators. A path that is not UTF-8 text is stored with its bad bytes replaced (it
/// then names no file): an import checks [`source_text`] first.
pub fn source_for(path: &Path, base_dir: Option<&Path>) -> String {
    let text = stored_path(path, base_dir).to_string_lossy().into_owned();
    with_slashes(text)
}

/// [`source_for`], or `None` when the path stored would not be UTF-8 text (a take named in
/// another encoding, such as Latin-1 `caf\xe9.bvh`): a project stores text, so that path could
/// never be read back.
pub fn source_text(path: &Path, base_dir: Option<&Path>) -> Option<String> {
    let text = stored_path(path, base_dir).to_str()?.to_owned();
    Some(with_slashes(text))
}

/// What [`source_for`] stores, as a path.
fn stored_path(path: &Path, base_dir: Option<&Path>) -> PathBuf {
    let path = normalize(path);
    let relative = base_dir.map(normalize).and_then(|base| {
        let p: Vec<_> = path.components().collect();
        let b: Vec<_> = base.components().collect();
        let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
        // Sharing only the root (`/`) or a drive: keep the path absolute.
        let shares_folder = common > 1 || (common == 1 && !path.has_root());
        if !shares_folder {
            return None;
        }
        let mut rel = PathBuf::new();
        for _ in common..b.len() {
            rel.push("..");
        }
        for c in &p[common..] {
            rel.push(c.as_os_str());
        }
        Some(rel)
    });
    relative.unwrap_or(path)
}

fn with_slashes(text: String) -> String {
    // The base folder itself (a library folder holding the project file): `.`, not an empty
    // path, which names nothing.
    if text.is_empty() {
        return ".".to_owned();
    }
    if cfg!(windows) {
        text.replace('\\', "/")
    } else {
        text
    }
}

/// Where clip `info`'s source is on disk (absolute, normalised), when it has one.
pub fn source_path(info: &ClipInfo, base_dir: Option<&Path>) -> Option<PathBuf> {
    let source = info.source.as_deref().filter(|s| !s.trim().is_empty())?;
    let p = PathBuf::from(source);
    match base_dir {
        _ if p.is_absolute() => Some(normalize(&p)),
        Some(base) => Some(normalize(&base.join(p))),
        None => None,
    }
}

pub use crate::core::source::animation_of;

/// Reads the file identities of `sources` (a project's clip sources, absolute and normalised as
/// [`source_path`] gives them) into `scan.source_ids`, where some take of the scan is at none of
/// those paths (it may be one of them reached another way: a link). [`plan_import`] reads them
/// itself otherwise, one `stat` a clip: an app calls this where the scan ran, off its UI thread.
pub fn identify_sources(scan: &mut LibraryScan, sources: &[PathBuf]) {
    let known: HashSet<&Path> = sources.iter().map(PathBuf::as_path).collect();
    if scan
        .files
        .iter()
        .all(|f| f.file.id.is_none() || known.contains(f.file.path.as_path()))
    {
        return;
    }
    scan.source_ids = sources.iter().map(|p| (p.clone(), file_id_of(p))).collect();
}

/// Plans the import of `scan` into `doc`, whose file is in `base_dir` (`None`: an unsaved project;
/// sources are then absolute).
pub fn plan_import(doc: &TagDocument, base_dir: Option<&Path>, scan: &LibraryScan) -> ImportPlan {
    let base_dir = base_dir.map(super::walk::absolute);
    let base = base_dir.as_deref();
    let mut by_path: HashMap<PathBuf, Vec<ClipId>> = HashMap::new();
    for (i, info) in doc.clips.iter().enumerate() {
        if let Some(p) = source_path(info, base) {
            by_path.entry(p).or_default().push(i as ClipId);
        }
    }
    let mut plan = ImportPlan {
        edit: Edit::Batch(Vec::new()),
        added: Vec::new(),
        unchanged: Vec::new(),
        linked: Vec::new(),
        changed: Vec::new(),
        missing: Vec::new(),
        failed: Vec::new(),
        warnings: Vec::new(),
        ignored: scan.ignored.clone(),
        problems: scan.problems.clone(),
        files: scan.files.len(),
        bytes: scan.bytes(),
        elapsed: scan.elapsed,
    };
    // A source's file identity: read by `identify_sources` where the scan ran, else here.
    let id_of = |p: &Path| match scan.source_ids.get(p) {
        Some(id) => id.clone(),
        None => file_id_of(p),
    };
    let mut requests = Vec::new();
    let mut pending = Vec::new();
    let mut seen: HashSet<&Path> = HashSet::new();
    // A take reached by another path than its clip's source (a link to it): the clips of each
    // file, read from the file system the first time a take is not found by its path.
    let mut doc_files: Option<HashMap<FileId, Vec<ClipId>>> = None;
    // A take found at several paths (links to it) is imported from one: the path that is the
    // file's own (no link in it), else one that is no link itself, else the first.
    let mut paths_of: HashMap<&FileId, Vec<&Path>> = HashMap::new();
    for f in &scan.files {
        if let Some(id) = &f.file.id {
            paths_of.entry(id).or_default().push(&f.file.path);
        }
    }
    let chosen: HashMap<&FileId, &Path> = paths_of
        .into_iter()
        .filter(|(_, paths)| paths.len() > 1)
        .map(|(id, paths)| {
            let own = paths
                .iter()
                .copied()
                .find(|p| std::fs::canonicalize(p).is_ok_and(|real| normalize(&real) == **p));
            let no_link = || {
                paths.iter().copied().find(|p| {
                    std::fs::symlink_metadata(p).is_ok_and(|m| !m.file_type().is_symlink())
                })
            };
            (id, own.or_else(no_link).unwrap_or(paths[0]))
        })
        .collect();
    for f in &scan.files {
        let path = &f.file.path;
        seen.insert(path.as_path());
        let scanned = match &f.result {
            Ok(s) => s,
            Err(e) => {
                plan.failed.push(FailedFile {
                    path: path.clone(),
                    message: e.to_string(),
                });
                continue;
            }
        };
        let Some(source) = source_text(path, base) else {
            plan.failed.push(FailedFile {
                path: path.clone(),
                message: format!(
                    "{}: the path is not UTF-8 text, which a project stores to find its takes: rename the file (or its folders) to import it",
                    path.display()
                ),
            });
            continue;
        };
        if let Some(first) = f.file.id.as_ref().and_then(|id| chosen.get(id))
            && *first != path.as_path()
        {
            plan.warnings.push(FileWarning {
                path: path.clone(),
                message: format!(
                    "{}: the same file as {} (a link, or another path to it): imported once",
                    path.display(),
                    first.display()
                ),
            });
            continue;
        }
        for w in &scanned.warnings {
            plan.warnings.push(FileWarning {
                path: path.clone(),
                message: format!("{}: {w}", path.display()),
            });
        }
        if scanned.clips.is_empty() {
            plan.warnings.push(FileWarning {
                path: path.clone(),
                message: format!(
                    "{}: the file holds no animation; nothing imported",
                    path.display()
                ),
            });
        }
        let multi = scanned.clips.len() > 1;
        let mut existing = by_path.get(path).map(Vec::as_slice).unwrap_or(&[]);
        let by_identity = existing.is_empty();
        if existing.is_empty()
            && let Some(id) = &f.file.id
        {
            let files = doc_files.get_or_insert_with(|| {
                let mut files: HashMap<FileId, Vec<ClipId>> = HashMap::new();
                for (p, ids) in &by_path {
                    if let Some(id) = id_of(p) {
                        files.entry(id).or_default().extend(ids);
                    }
                }
                for ids in files.values_mut() {
                    ids.sort_unstable();
                }
                files
            });
            existing = files.get(id).map(Vec::as_slice).unwrap_or(&[]);
        }
        // Which of the file's animations each clip of the project already from it is (named
        // after its own source's file: the same file through a link may have another name).
        let animations: Vec<&str> = scanned.clips.iter().map(|c| c.name.as_str()).collect();
        let index_of = |id: ClipId| {
            let info = &doc.clips[id as usize];
            let stem = source_path(info, base)
                .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
                .unwrap_or_else(|| f.file.stem());
            crate::core::source::animation_index(&info.name, &stem, &animations)
        };
        let existing_index: Vec<(ClipId, Option<usize>)> = existing
            .iter()
            .map(|&id| (id, multi.then(|| index_of(id)).flatten()))
            .collect();
        for (k, c) in scanned.clips.iter().enumerate() {
            let found = existing_index
                .iter()
                .find(|(_, i)| !multi || *i == Some(k))
                .map(|(id, _)| *id);
            if let Some(id) = found {
                let info = &doc.clips[id as usize];
                if by_identity {
                    plan.linked.push(LinkedClip {
                        clip: id,
                        name: info.name.clone(),
                        path: path.clone(),
                        source: info.source.clone().unwrap_or_default(),
                    });
                }
                if u64::from(info.frames) != c.frames as u64 || info.fps != c.fps {
                    plan.changed.push(ChangedClip {
                        clip: id,
                        name: info.name.clone(),
                        path: path.clone(),
                        frames_before: info.frames,
                        frames_now: c.frames as u32,
                        fps_before: info.fps,
                        fps_now: c.fps,
                    });
                } else {
                    plan.unchanged.push(UnchangedClip {
                        clip: id,
                        name: info.name.clone(),
                        path: path.clone(),
                    });
                }
                continue;
            }
            requests.push(NameRequest {
                base: f.file.stem(),
                animation: multi.then(|| c.name.clone()),
                folders: f.file.folders.clone(),
                extension: path
                    .extension()
                    .map(|e| e.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            });
            pending.push(AddedClip {
                name: String::new(),
                path: path.clone(),
                source: source.clone(),
                frames: c.frames as u32,
                fps: c.fps,
                joints: c.joint_names.len(),
                unit: choose_unit(scan.units, scanned.format, c),
            });
        }
    }
    // Clips whose source is under an imported root but was not found (at its path, nor as a
    // file found at another: a folder walked at its own path instead of through a link).
    let seen_files: HashSet<&FileId> = scan
        .files
        .iter()
        .filter_map(|f| f.file.id.as_ref())
        .collect();
    for (p, ids) in &by_path {
        if !seen.contains(p.as_path())
            && scan.roots.iter().any(|r| p.starts_with(r))
            && !id_of(p).is_some_and(|id| seen_files.contains(&id))
        {
            for &id in ids {
                plan.missing.push(MissingClip {
                    clip: id,
                    name: doc.clips[id as usize].name.clone(),
                    path: p.clone(),
                });
            }
        }
    }
    plan.missing.sort_by_key(|m| m.clip);
    // Names in use, and the file names (stems) of the takes already in the project: a new take
    // named like an existing one gets its folder even when the existing clip was named otherwise.
    let mut taken: HashSet<String> = doc.clips.iter().map(|c| c.name.clone()).collect();
    for c in &doc.clips {
        if let Some(take) = source_path(c, base)
            && let Some(stem) = take.file_stem().map(|s| s.to_string_lossy().into_owned())
        {
            // As the sidecars are named: a BVH's clip is never `FILE#ANIMATION`.
            let animation = super::sidecar::animation_part(&take, &c.name, false);
            taken.insert(base_name(&stem, animation));
        }
    }
    let names = unique_names(&requests, &taken);
    let first = doc.clips.len();
    let mut edits = Vec::with_capacity(pending.len());
    for (k, (mut added, name)) in pending.into_iter().zip(names).enumerate() {
        added.name = name;
        edits.push(Edit::InsertClip {
            index: first + k,
            clip: ClipInfo {
                name: added.name.clone(),
                frames: added.frames,
                fps: added.fps,
                source: Some(added.source.clone()),
                unit_cm: Some(added.unit.unit_cm),
            },
            ranges: Vec::new(),
        });
        plan.added.push(added);
    }
    plan.edit = Edit::Batch(edits);
    plan
}

impl ImportPlan {
    /// True when the import adds at least one clip.
    pub fn imported_any(&self) -> bool {
        !self.added.is_empty()
    }

    /// The edit that gives the changed clips of `doc` (the document the plan was made for) their
    /// new frame counts (ranges past the new end are clipped; undo restores them). Not part of
    /// [`ImportPlan::edit`]: the user decides. Only clips that are still there under the same name
    /// and do not have that length yet are changed, so asking twice, or on another document, is
    /// an empty edit.
    pub fn update_changed_edit(&self, doc: &TagDocument) -> Edit {
        Edit::Batch(
            self.changed
                .iter()
                .filter(|c| {
                    doc.clips
                        .get(c.clip as usize)
                        .is_some_and(|info| info.name == c.name && info.frames != c.frames_now)
                })
                .map(|c| Edit::SetClipFrames {
                    clip: c.clip,
                    frames: c.frames_now,
                })
                .collect(),
        )
    }

    /// What [`Self::update_changed_edit`] takes out of `doc`, one line each: the ranges past a
    /// shorter take's new end (dropped, or cut at the end) and the markers past it, per tag and
    /// clip, with their notes. Empty when no clip gets shorter or nothing lies past its end.
    pub fn update_changed_losses(&self, doc: &TagDocument) -> Vec<String> {
        let mut lines = Vec::new();
        for c in &self.changed {
            let Some(info) = doc.clips.get(c.clip as usize) else {
                continue;
            };
            if info.name != c.name || c.frames_now >= info.frames {
                continue;
            }
            let end = c.frames_now;
            for tag in &doc.tags {
                let noted = |a: crate::core::tags::Anchor| {
                    tag.note(c.clip, a)
                        .map(|n| format!(" and its note \"{}\"", n.text))
                        .unwrap_or_default()
                };
                for r in tag.ranges_on(c.clip).iter().filter(|r| r.stop > end) {
                    let what = if r.start >= end {
                        format!(
                            "[{}, {}) dropped{}",
                            r.start,
                            r.stop,
                            noted(crate::core::tags::Anchor::Range(*r))
                        )
                    } else {
                        format!("[{}, {}) cut to [{}, {end})", r.start, r.stop, r.start)
                    };
                    lines.push(format!(
                        "tag `{}` on {} (now {end} frames): range {what}",
                        tag.name, c.name
                    ));
                }
                for &m in tag.markers_on(c.clip).iter().filter(|&&m| m >= end) {
                    lines.push(format!(
                        "tag `{}` on {} (now {end} frames): marker {m} dropped{}",
                        tag.name,
                        c.name,
                        noted(crate::core::tags::Anchor::Marker(m))
                    ));
                }
            }
        }
        lines
    }

    /// Clips added per chosen unit: `[("cmu (5.644 cm)", 120), ("cm", 118)]`, most used first.
    pub fn units_summary(&self) -> Vec<(String, usize)> {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for a in &self.added {
            *counts.entry(describe_unit(a.unit.unit_cm)).or_default() += 1;
        }
        let mut v: Vec<(String, usize)> = counts.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v
    }

    /// One line: what the import did.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "added {} clip(s) from {} take file(s) ({:.1} MB) in {:.2} s",
            self.added.len(),
            self.files,
            self.bytes as f64 / 1e6,
            self.elapsed.as_secs_f64()
        );
        let mut parts = Vec::new();
        if !self.unchanged.is_empty() {
            let linked = (self.linked.iter())
                .filter(|l| !self.changed.iter().any(|c| c.clip == l.clip))
                .count();
            parts.push(if linked > 0 {
                format!(
                    "{} already in the project ({linked} through another path to the same file)",
                    self.unchanged.len()
                )
            } else {
                format!("{} already in the project", self.unchanged.len())
            });
        }
        if !self.changed.is_empty() {
            parts.push(format!("{} changed", self.changed.len()));
        }
        if !self.missing.is_empty() {
            parts.push(format!("{} missing", self.missing.len()));
        }
        if !self.failed.is_empty() {
            parts.push(format!("{} failed", self.failed.len()));
        }
        if !self.warnings.is_empty() {
            parts.push(format!("{} warning(s)", self.warnings.len()));
        }
        if !self.ignored.is_empty() {
            parts.push(format!("{} other file(s) ignored", self.ignored.len()));
        }
        if !parts.is_empty() {
            let _ = write!(s, "; {}", parts.join(", "));
        }
        s
    }

    /// The report a user can copy: the summary, the units chosen, then every changed, missing and
    /// failed take, the warnings, the ignored files and the folders that could not be read. With
    /// `list_added`, every added clip with its source, length and unit reason.
    pub fn report_text(&self, list_added: bool) -> String {
        self.report_text_updating(list_added, false)
    }

    /// [`Self::report_text`]; with `updating`, the changed clips are said to take their file's
    /// length (the import applies [`Self::update_changed_edit`]) instead of keeping the
    /// project's.
    pub fn report_text_updating(&self, list_added: bool, updating: bool) -> String {
        let mut s = self.summary();
        s.push('\n');
        let units = self.units_summary();
        if !units.is_empty() {
            let list: Vec<String> = units.iter().map(|(u, n)| format!("{u}: {n}")).collect();
            let _ = writeln!(s, "units: {}", list.join(", "));
            let doubtful: Vec<&AddedClip> =
                self.added.iter().filter(|a| !a.unit.confident).collect();
            if !doubtful.is_empty() {
                let _ = writeln!(s, "units to check ({}):", doubtful.len());
                for a in doubtful {
                    let _ = writeln!(s, "  {}: {}", a.name, a.unit.reason);
                }
            }
        }
        if list_added && !self.added.is_empty() {
            let _ = writeln!(s, "added ({}):", self.added.len());
            for a in &self.added {
                let _ = writeln!(
                    s,
                    "  {} <- {}: {} frames at {} fps, {} joints; unit {}",
                    a.name, a.source, a.frames, a.fps, a.joints, a.unit.reason
                );
            }
        }
        // With the added clips, the takes found at their own clip's path, unchanged (those
        // found through another path are listed next in any case).
        let own_path: Vec<&UnchangedClip> = (self.unchanged.iter())
            .filter(|u| !self.linked.iter().any(|l| l.clip == u.clip))
            .collect();
        if list_added && !own_path.is_empty() {
            let _ = writeln!(s, "already in the project, unchanged ({}):", own_path.len());
            for u in own_path {
                let _ = writeln!(s, "  {} ({})", u.name, u.path.display());
            }
        }
        if !self.linked.is_empty() {
            let _ = writeln!(
                s,
                "already in the project through another path to the same file ({}):",
                self.linked.len()
            );
            for l in &self.linked {
                let _ = writeln!(
                    s,
                    "  {} ({}): the clip's source is {}",
                    l.name,
                    l.path.display(),
                    l.source
                );
            }
        }
        if !self.changed.is_empty() {
            let _ = writeln!(
                s,
                "changed since they were imported ({}; {}):",
                self.changed.len(),
                if updating {
                    "updated to the file's length"
                } else {
                    "the project keeps its values"
                }
            );
            for c in &self.changed {
                let _ = writeln!(
                    s,
                    "  {} ({}): {} frames at {} fps in the project, {} frames at {} fps in the file",
                    c.name,
                    c.path.display(),
                    c.frames_before,
                    c.fps_before,
                    c.frames_now,
                    c.fps_now
                );
            }
        }
        if !self.missing.is_empty() {
            let _ = writeln!(
                s,
                "missing from the imported folders ({}):",
                self.missing.len()
            );
            for m in &self.missing {
                let _ = writeln!(s, "  {} ({})", m.name, m.path.display());
            }
        }
        if !self.failed.is_empty() {
            let _ = writeln!(s, "failed ({}):", self.failed.len());
            for f in &self.failed {
                let _ = writeln!(s, "  {}", f.message);
            }
        }
        if !self.warnings.is_empty() {
            let _ = writeln!(s, "warnings ({}):", self.warnings.len());
            for w in &self.warnings {
                let _ = writeln!(s, "  {}", w.message);
            }
        }
        if !self.ignored.is_empty() {
            let _ = writeln!(
                s,
                "ignored, not .bvh, .glb or .gltf ({}):",
                self.ignored.len()
            );
            for p in &self.ignored {
                let _ = writeln!(s, "  {}", p.display());
            }
        }
        if !self.problems.is_empty() {
            let _ = writeln!(s, "could not be read ({}):", self.problems.len());
            for p in &self.problems {
                let _ = writeln!(s, "  {p}");
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_relative_when_they_share_a_folder() {
        let base = Path::new("/work/proj");
        assert_eq!(
            source_for(Path::new("/work/proj/a/b.bvh"), Some(base)),
            "a/b.bvh"
        );
        assert_eq!(
            source_for(Path::new("/work/shared/mocap/x.bvh"), Some(base)),
            "../shared/mocap/x.bvh"
        );
        assert_eq!(
            source_for(Path::new("/data/x.bvh"), Some(base)),
            "/data/x.bvh"
        );
        assert_eq!(source_for(Path::new("/data/x.bvh"), None), "/data/x.bvh");
        // The base folder itself (a library folder holding its project file).
        assert_eq!(source_for(base, Some(base)), ".");
        let info = ClipInfo {
            name: "x".into(),
            frames: 1,
            fps: 30.0,
            source: Some("../shared/mocap/x.bvh".into()),
            unit_cm: None,
        };
        assert_eq!(
            source_path(&info, Some(base)),
            Some(PathBuf::from("/work/shared/mocap/x.bvh"))
        );
    }

    #[test]
    fn animation_names_follow_the_last_separator() {
        assert_eq!(animation_of("Fox#Survey"), "Survey");
        assert_eq!(animation_of("day1/Fox#Run"), "Run");
        assert_eq!(animation_of("walk"), "walk");
    }
}
