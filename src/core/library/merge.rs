//! Three-way merge of a sidecar project's files changed on disk while the project was open.
//!
//! A save compares each file with what the project last saw of it (`SidecarBaseline`). A sidecar
//! or project file changed there by someone else (another session, a version-control update) is
//! brought into the document before the save instead of stopping it:
//!
//! - the **base** is the document as it was last opened or saved (the history's saved state);
//! - **ours** is the document now; **theirs** is the file on disk.
//!
//! Frames of a tag on a clip merge frame by frame: a frame is tagged after the merge when it is
//! tagged in ours and theirs, or when one side changed it (`(o ∩ t) ∪ (o − b) ∪ (t − b)`). Two
//! sides that both changed a frame changed it the same way (a frame is tagged or not), so range
//! lists never conflict. Markers merge the same way, one frame each. Everything else merges
//! whole, value by value (a note on its anchor, a tag's colour, the saved queries, the auto-tag
//! settings, a clip's length, rate and unit): the side that changed it wins; both sides changing
//! one value differently is a conflict, named, and nothing is merged or saved. Clips merge by
//! sidecar: one new in the folders that the project never saw is added, one the project saw that
//! is gone from disk is removed unless this session changed it (a conflict).
//!
//! The merge is an [`Edit`] applied to the document (one undo step), so the document shows what
//! the files now hold.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::sidecar::{ClipTags, SidecarProject};
use crate::core::doc::Edit;
use crate::core::tags::range::{difference_append, intersection};
use crate::core::tags::{Anchor, ClipId, ClipInfo, Note, Range, Tag, TagDocument};

/// Why a merge that needs the common ancestor cannot be made without it.
pub const NO_ANCESTOR: &str = "the state last saved is no longer in the undo history (recovered \
    work, or edits undone and replaced), so the two cannot be merged";

/// What a file changed on disk holds, read and parsed by the save.
#[derive(Debug, Clone, PartialEq)]
pub enum Theirs {
    /// The project file (tags and colours, queries, auto-tag settings).
    Project(SidecarProject),
    /// The sidecar of this clip of the document.
    Sidecar(ClipId, ClipTags),
    /// A sidecar in the project's folders of a clip the document does not have, which the
    /// project never saw: a clip added on disk (another session's import, a version-control
    /// update). `source`: its take, as the project names it.
    NewClip { source: String, tags: ClipTags },
    /// The sidecar of this clip of the document, which the project saw, is gone from disk: the
    /// clip was removed there (another session moved its sidecar aside).
    Gone(ClipId),
}

/// A file changed on disk since the project last saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct OnDisk {
    pub file: PathBuf,
    /// Its bytes, as read.
    pub bytes: Vec<u8>,
    pub theirs: Theirs,
    /// The document has what the project last saw of this file: only theirs changed it.
    pub ours_unchanged: bool,
}

/// A tag's lists on one clip.
#[derive(Debug, Clone, Default, PartialEq)]
struct Lists {
    ranges: Vec<Range>,
    markers: Vec<u32>,
    notes: Vec<(Anchor, Note)>,
}

/// Each tag's lists on one clip, by tag name (tags with nothing there left out).
type ClipState = BTreeMap<String, Lists>;

fn doc_state(doc: &TagDocument, clip: Option<ClipId>) -> ClipState {
    let mut state = ClipState::new();
    let Some(c) = clip else {
        return state;
    };
    for t in &doc.tags {
        let lists = Lists {
            ranges: t.ranges.get(&c).map(<[Range]>::to_vec).unwrap_or_default(),
            markers: t.markers.get(&c).cloned().unwrap_or_default(),
            notes: t.notes.get(&c).cloned().unwrap_or_default(),
        };
        if lists != Lists::default() {
            state.insert(t.name.clone(), lists);
        }
    }
    state
}

fn file_state(ct: &ClipTags) -> ClipState {
    let mut state = ClipState::new();
    for (name, ranges) in &ct.tags {
        state.entry(name.clone()).or_default().ranges = ranges.clone();
    }
    for (name, markers) in &ct.markers {
        state.entry(name.clone()).or_default().markers = markers.clone();
    }
    for (name, notes) in &ct.notes {
        let mut notes = notes.clone();
        notes.sort_by_key(|(a, _)| *a);
        state.entry(name.clone()).or_default().notes = notes;
    }
    state.retain(|_, l| *l != Lists::default());
    state
}

/// A value both sides may have changed: the side that changed it wins; `None` when both changed
/// it differently. `base`: `None` when the base did not have it.
fn merge_value<T: PartialEq + Clone>(base: Option<&T>, ours: &T, theirs: &T) -> Option<T> {
    if ours == theirs || base == Some(theirs) {
        Some(ours.clone())
    } else if base == Some(ours) {
        Some(theirs.clone())
    } else {
        None
    }
}

/// Frames tagged in both, or changed by one side: `(o ∩ t) ∪ (o − b) ∪ (t − b)`, canonical.
fn merge_ranges(b: &[Range], o: &[Range], t: &[Range]) -> Vec<Range> {
    if o == b {
        return t.to_vec();
    }
    if t == b || o == t {
        return o.to_vec();
    }
    let mut parts = Vec::new();
    intersection(o, t, &mut parts);
    difference_append(o, b, &mut parts);
    difference_append(t, b, &mut parts);
    crate::core::tags::range::canonicalize(&mut parts);
    parts
}

/// Markers merged as sets of frames, the same way as ranges.
fn merge_markers(b: &[u32], o: &[u32], t: &[u32]) -> Vec<u32> {
    if o == b {
        return t.to_vec();
    }
    if t == b || o == t {
        return o.to_vec();
    }
    let (b, o, t): (BTreeSet<u32>, BTreeSet<u32>, BTreeSet<u32>) = (
        b.iter().copied().collect(),
        o.iter().copied().collect(),
        t.iter().copied().collect(),
    );
    o.union(&t)
        .copied()
        .filter(|f| {
            let (in_o, in_t, in_b) = (o.contains(f), t.contains(f), b.contains(f));
            // The sides agree, or the one that differs from the base changed it.
            if in_o == in_t { in_o } else { !in_b }
        })
        .collect()
}

/// Notes merged anchor by anchor; `Err(anchor)` for one both sides changed differently.
fn merge_notes(
    b: &[(Anchor, Note)],
    o: &[(Anchor, Note)],
    t: &[(Anchor, Note)],
) -> Result<Vec<(Anchor, Note)>, Anchor> {
    let map = |l: &[(Anchor, Note)]| -> BTreeMap<Anchor, Note> { l.iter().cloned().collect() };
    let (b, o, t) = (map(b), map(o), map(t));
    let anchors: BTreeSet<Anchor> = o.keys().chain(t.keys()).copied().collect();
    let mut out = Vec::new();
    for a in anchors {
        match merge_value(Some(&b.get(&a)), &o.get(&a), &t.get(&a)) {
            Some(Some(n)) => out.push((a, n.clone())),
            Some(None) => {}
            None => return Err(a),
        }
    }
    Ok(out)
}

fn anchor_text(a: Anchor) -> String {
    match a {
        Anchor::Range(r) => format!("range [{}, {})", r.start, r.stop),
        Anchor::Marker(f) => format!("marker at frame {f}"),
    }
}

/// Tag `a` of document `da` and tag `b` of `db` hold the same: colour, and lists clip by clip
/// (clips by name: the two documents' clip ids may differ).
fn same_tag(da: &TagDocument, a: &Tag, db: &TagDocument, b: &Tag) -> bool {
    let lists = |d: &TagDocument, t: &Tag| -> BTreeMap<String, Lists> {
        d.clips
            .iter()
            .enumerate()
            .filter_map(|(c, info)| {
                let c = c as ClipId;
                let l = Lists {
                    ranges: t.ranges.get(&c).map(<[Range]>::to_vec).unwrap_or_default(),
                    markers: t.markers.get(&c).cloned().unwrap_or_default(),
                    notes: t.notes.get(&c).cloned().unwrap_or_default(),
                };
                (l != Lists::default()).then(|| (info.name.clone(), l))
            })
            .collect()
    };
    a.color == b.color && lists(da, a) == lists(db, b)
}

/// The edits made so far, applied to a working copy as they are made (so that tag indices stay
/// right and every edit is checked).
struct Builder {
    work: TagDocument,
    edits: Vec<Edit>,
}

impl Builder {
    fn push(&mut self, edit: Edit) -> Result<(), String> {
        edit.clone()
            .apply(&mut self.work)
            .map_err(|e| format!("the merged change cannot be made: {e}"))?;
        self.edits.push(edit);
        Ok(())
    }

    /// The index of the tag `name`, inserted at the end (with `color`) when the document does not
    /// have it.
    fn tag(&mut self, name: &str, color: Option<[u8; 3]>) -> Result<usize, String> {
        if let Some(i) = self.work.tag_index(name) {
            return Ok(i);
        }
        let mut tag = Tag::new(name);
        tag.color = color;
        let index = self.work.tags.len();
        self.push(Edit::InsertTag { index, tag })?;
        Ok(index)
    }
}

/// The edit that brings `on_disk` into `ours`, given `base`, the document the project last saw
/// (the files' common ancestor). `base` `None`: the ancestor is not known (the history no longer
/// has it); allowed only where this session changed none of the files (`ours_unchanged`), whose
/// ancestor is then `ours` itself. A tag the project file on disk no longer lists is removed only
/// when nothing of it is left on any clip after the sidecars merged (sidecars not changed on disk
/// that still hold it keep it). `Err((i, message))`: file `on_disk[i]` conflicts (both sides
/// changed one value differently), and why; nothing is merged then.
pub fn merge_on_disk(
    base: Option<&TagDocument>,
    ours: &TagDocument,
    on_disk: &[OnDisk],
) -> Result<Edit, (usize, String)> {
    let known = base.is_some();
    if !known && let Some(i) = on_disk.iter().position(|d| !d.ours_unchanged) {
        return Err((i, NO_ANCESTOR.to_owned()));
    }
    let base = base.unwrap_or(ours);
    let mut b = Builder {
        work: ours.clone(),
        edits: Vec::new(),
    };
    // Colours of tags theirs names (for tags a sidecar of theirs adds).
    let mut their_colors: BTreeMap<&str, Option<[u8; 3]>> = BTreeMap::new();
    let mut removals = Vec::new();
    for (i, d) in on_disk.iter().enumerate() {
        if let Theirs::Project(p) = &d.theirs {
            their_colors.extend(p.tags.iter().map(|(n, c)| (n.as_str(), *c)));
            removals = merge_project(base, ours, p, false, &mut b).map_err(|e| (i, e))?;
        }
    }
    let mut gone = Vec::new();
    for (i, d) in on_disk.iter().enumerate() {
        match &d.theirs {
            Theirs::Sidecar(clip, ct) => {
                merge_sidecar(base, *clip, ct, &their_colors, &mut b).map_err(|e| (i, e))?;
            }
            // After every clip of the document merged (renames first).
            Theirs::NewClip { .. } => {}
            // Not in the state last saved (removed by this session's save, then its removal
            // undone; its sidecar moved aside meanwhile): written again, as any new clip.
            Theirs::Gone(clip)
                if known && sidecar_ancestor(base, &ours.clips[*clip as usize]).is_none() => {}
            // Removed there: removed here too unless this session changed it (a conflict).
            Theirs::Gone(clip) if d.ours_unchanged => gone.push((i, *clip)),
            Theirs::Gone(clip) => {
                let name = &ours.clips[*clip as usize].name;
                return Err((
                    i,
                    format!(
                        "clip `{name}` was removed on disk (its sidecar is gone) and changed here"
                    ),
                ));
            }
            Theirs::Project(_) => {}
        }
    }
    for (i, d) in on_disk.iter().enumerate() {
        if let Theirs::NewClip { source, tags } = &d.theirs {
            new_clip(base, source, tags, &their_colors, &mut b).map_err(|e| (i, e))?;
        }
    }
    // Clips removed there, after the others merged (highest index first: the clips added there
    // come after every clip of the document, so none of the indices moved).
    gone.sort_unstable_by_key(|&(_, clip)| std::cmp::Reverse(clip));
    for (i, clip) in gone {
        b.push(Edit::RemoveClip {
            index: clip as usize,
        })
        .map_err(|e| (i, e))?;
    }
    // Tags theirs removed from the project file, last (indices of the document as it is then,
    // highest first), when nothing of them is left on any clip: a sidecar not changed on disk
    // that still holds the tag (a project file that never listed it, edited by hand or by another
    // tool) keeps it, rather than losing its frames.
    let mut at: Vec<usize> = removals
        .iter()
        .filter_map(|n: &String| b.work.tag_index(n))
        .filter(|&i| {
            let t = &b.work.tags[i];
            t.ranges.is_empty() && t.markers.is_empty() && t.notes.is_empty()
        })
        .collect();
    at.sort_unstable_by(|x, y| y.cmp(x));
    for index in at {
        let project = on_disk
            .iter()
            .position(|d| matches!(d.theirs, Theirs::Project(_)))
            .unwrap_or(0);
        b.push(Edit::RemoveTag { index })
            .map_err(|e| (project, e))?;
    }
    // The tag order, where the project file on disk gives it.
    if let Some((i, p)) = on_disk
        .iter()
        .enumerate()
        .find_map(|(i, d)| match &d.theirs {
            Theirs::Project(p) => Some((i, p)),
            _ => None,
        })
    {
        let theirs: Vec<&str> = p.tags.iter().map(|(n, _)| n.as_str()).collect();
        merge_tag_order(base, ours, &theirs, &mut b).map_err(|e| (i, e))?;
    }
    Ok(Edit::Batch(b.edits))
}

/// The order of the tags (`b.work`'s, after the other merges) unless this session changed it: the
/// tags theirs has take theirs' order (`theirs`, tag names: where theirs added, renamed or moved
/// one), and a tag only the document has stays after the tag it follows there. When this session
/// reordered the shared tags, its order stands (an order is not worth a conflict that saves
/// nothing). (Theirs' order was taken only when theirs moved shared tags: a tag theirs added in
/// the middle, or renamed, went to the end.)
fn merge_tag_order(
    base: &TagDocument,
    ours: &TagDocument,
    theirs: &[&str],
    b: &mut Builder,
) -> Result<(), String> {
    let work: Vec<String> = b.work.tags.iter().map(|t| t.name.clone()).collect();
    let shared = |n: &str| {
        base.tag_index(n).is_some()
            && ours.tag_index(n).is_some()
            && theirs.contains(&n)
            && work.iter().any(|w| w == n)
    };
    let order = |names: &mut dyn Iterator<Item = &str>| -> Vec<String> {
        names.filter(|n| shared(n)).map(str::to_owned).collect()
    };
    let base_order = order(&mut base.tags.iter().map(|t| t.name.as_str()));
    let ours_order = order(&mut ours.tags.iter().map(|t| t.name.as_str()));
    if ours_order != base_order {
        return Ok(());
    }
    let mut target: Vec<&str> = theirs
        .iter()
        .copied()
        .filter(|n| work.iter().any(|w| w == n))
        .collect();
    for (k, name) in work.iter().enumerate() {
        if target.contains(&name.as_str()) {
            continue;
        }
        // After the tag it follows in the document (placed already: theirs, or an earlier one
        // of these).
        let at = match k.checked_sub(1) {
            Some(prev) => target
                .iter()
                .position(|t| *t == work[prev])
                .map_or(0, |p| p + 1),
            None => 0,
        };
        target.insert(at, name);
    }
    for (k, name) in target.iter().enumerate() {
        let j = b
            .work
            .tags
            .iter()
            .position(|t| t.name == *name)
            .expect("every tag of the document is in the target order");
        if j != k {
            b.push(Edit::MoveTag { from: j, to: k })?;
        }
    }
    Ok(())
}

/// The edit that brings `theirs`, a whole single-file project as it is on disk now, into `ours`,
/// given `base`, the document the project last saw: as [`merge_on_disk`] does with a sidecar
/// project's files, plus the clip list (clips by name, or by take where one side renamed them
/// (`clip_map`): one added there is added at the end, one removed there is removed when this
/// session did not change it, and a conflict otherwise; a clip's name and take merge as values).
/// `Err`: the conflict, named; nothing is merged then.
pub fn merge_documents(
    base: &TagDocument,
    ours: &TagDocument,
    theirs: &TagDocument,
) -> Result<Edit, String> {
    let mut b = Builder {
        work: ours.clone(),
        edits: Vec::new(),
    };
    let project = SidecarProject {
        folders: Vec::new(),
        tags: theirs
            .tags
            .iter()
            .map(|t| (t.name.clone(), t.color))
            .collect(),
        queries: theirs.queries.clone(),
        autotag: theirs.autotag.clone(),
    };
    let removed_tags = merge_project(base, ours, &project, true, &mut b)?;
    let colors: BTreeMap<&str, Option<[u8; 3]>> =
        project.tags.iter().map(|(n, c)| (n.as_str(), *c)).collect();
    // Each clip of the ancestor on each side: by name, or by take (renamed since).
    let base_ours = clip_map(base, ours);
    let base_theirs = clip_map(base, theirs);
    let mut theirs_base: Vec<Option<ClipId>> = vec![None; theirs.clips.len()];
    for (bc, t) in base_theirs.iter().enumerate() {
        if let Some(t) = t {
            theirs_base[*t as usize] = Some(bc as ClipId);
        }
    }
    let mut ours_has_base = vec![false; ours.clips.len()];
    for o in base_ours.iter().flatten() {
        ours_has_base[*o as usize] = true;
    }
    for (c, info) in theirs.clips.iter().enumerate() {
        let ts = doc_state(theirs, Some(c as ClipId));
        let base_clip = theirs_base[c];
        let ours_clip = match base_clip {
            Some(bc) => base_ours[bc as usize],
            // Added there (and perhaps here, of the same take under the same name: merged from
            // nothing).
            None => ours.clip_index(&info.name).filter(|&o| {
                !ours_has_base[o as usize] && ours.clips[o as usize].source == info.source
            }),
        };
        let clip = match (ours_clip, base_clip) {
            (Some(clip), _) => clip,
            // Added there (under a name no clip here has).
            (None, None) => {
                let index = b.work.clips.len();
                let mut new = info.clone();
                new.name = b.work.unique_clip_name(&info.name);
                b.push(Edit::InsertClip {
                    index,
                    clip: new,
                    ranges: Vec::new(),
                })?;
                index as ClipId
            }
            // Removed here: it stays removed, unless theirs changed it.
            (None, Some(bc)) => {
                let base_info = &base.clips[bc as usize];
                if *base_info != *info || doc_state(base, Some(bc)) != ts {
                    return Err(format!(
                        "clip `{}` was removed here and changed on disk",
                        base_info.name
                    ));
                }
                continue;
            }
        };
        // The name merges as a value (the work's clip keeps its index through renames); a clip
        // just added keeps the name it was added under.
        let ours_name = b.work.clips[clip as usize].name.clone();
        let base_name = base_clip.map(|bc| &base.clips[bc as usize].name);
        let added = ours_clip.is_none();
        let name = if added {
            Some(ours_name.clone())
        } else {
            merge_value(base_name, &ours_name, &info.name)
        };
        let name = name.ok_or_else(|| {
            format!(
                "clip `{ours_name}` was renamed here and to `{}` on disk",
                info.name
            )
        })?;
        let theirs_info = ClipInfo {
            name: ours_name.clone(),
            ..info.clone()
        };
        let merging = Merging {
            clip,
            base: base_clip,
        };
        merge_clip(base, merging, &theirs_info, ts, &colors, &mut b)
            .map_err(|e| format!("clip `{}`: {e}", info.name))?;
        if name != ours_name {
            if b.work.clip_index(&name).is_some() {
                return Err(format!(
                    "clip `{ours_name}` was renamed on disk to `{name}`, the name of another clip \
                     here"
                ));
            }
            b.push(Edit::RenameClip { clip, name })?;
        }
    }
    // Clips removed there, last (highest index first), when this session did not change them.
    let mut gone = Vec::new();
    for (bc, info) in base.clips.iter().enumerate() {
        if base_theirs[bc].is_some() {
            continue;
        }
        let Some(clip) = base_ours[bc] else {
            continue;
        };
        let unchanged = ours.clips[clip as usize] == *info
            && doc_state(ours, Some(clip)) == doc_state(base, Some(bc as ClipId));
        if !unchanged {
            return Err(format!(
                "clip `{}` was removed on disk and changed here",
                ours.clips[clip as usize].name
            ));
        }
        gone.push(clip);
    }
    gone.sort_unstable_by(|x, y| y.cmp(x));
    for index in gone {
        b.push(Edit::RemoveClip {
            index: index as usize,
        })?;
    }
    let mut at: Vec<usize> = removed_tags
        .iter()
        .filter_map(|n| b.work.tag_index(n))
        .collect();
    at.sort_unstable_by(|x, y| y.cmp(x));
    for index in at {
        b.push(Edit::RemoveTag { index })?;
    }
    let order: Vec<&str> = theirs.tags.iter().map(|t| t.name.as_str()).collect();
    merge_tag_order(base, ours, &order, &mut b)?;
    Ok(Edit::Batch(b.edits))
}

/// For each clip of `base`, the clip of `other` that is it, matched in three rounds, each among
/// the clips the rounds before left: the same name and take; the same take where it is the one
/// such clip on both sides (renamed since); the same name (relinked since). One to one. `None`:
/// removed (or not told apart: several clips of one take renamed at once).
fn clip_map(base: &TagDocument, other: &TagDocument) -> Vec<Option<ClipId>> {
    use std::collections::HashMap;
    let mut map: Vec<Option<ClipId>> = vec![None; base.clips.len()];
    let mut taken = vec![false; other.clips.len()];
    let by_name: HashMap<&str, ClipId> = other
        .clips
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.as_str(), i as ClipId))
        .collect();
    for (bc, c) in base.clips.iter().enumerate() {
        if let Some(&o) = by_name.get(c.name.as_str())
            && other.clips[o as usize].source == c.source
        {
            map[bc] = Some(o);
            taken[o as usize] = true;
        }
    }
    // The same take, one clip on each side among those left.
    let mut left_other: HashMap<&str, Vec<ClipId>> = HashMap::new();
    for (o, c) in other.clips.iter().enumerate() {
        if let (false, Some(s)) = (taken[o], c.source.as_deref()) {
            left_other.entry(s).or_default().push(o as ClipId);
        }
    }
    let mut left_base: HashMap<&str, usize> = HashMap::new();
    for (bc, c) in base.clips.iter().enumerate() {
        if let (None, Some(s)) = (map[bc], c.source.as_deref()) {
            *left_base.entry(s).or_default() += 1;
        }
    }
    for (bc, c) in base.clips.iter().enumerate() {
        if map[bc].is_some() {
            continue;
        }
        let Some(s) = c.source.as_deref() else {
            continue;
        };
        if let (Some([o]), Some(1)) = (
            left_other.get(s).map(Vec::as_slice),
            left_base.get(s).copied(),
        ) {
            map[bc] = Some(*o);
            taken[*o as usize] = true;
        }
    }
    // The same name (its take relinked).
    for (bc, c) in base.clips.iter().enumerate() {
        if map[bc].is_none()
            && let Some(&o) = by_name.get(c.name.as_str())
            && !taken[o as usize]
        {
            map[bc] = Some(o);
            taken[o as usize] = true;
        }
    }
    map
}

/// The ancestor of the clip `info` of a sidecar project, whose sidecar is that of its take: the
/// clip of the state last saved of the same take (of the same name among several, a file of
/// several animations), or of the same name when none has its take (relinked since).
fn sidecar_ancestor(base: &TagDocument, info: &ClipInfo) -> Option<ClipId> {
    let same: Vec<usize> = base
        .clips
        .iter()
        .enumerate()
        .filter(|(_, c)| info.source.is_some() && c.source == info.source)
        .map(|(i, _)| i)
        .collect();
    match same.as_slice() {
        [] => base.clip_index(&info.name),
        [one] => Some(*one as ClipId),
        several => several
            .iter()
            .find(|&&i| base.clips[i].name == info.name)
            .map(|&i| i as ClipId),
    }
}

/// The project file: tags added there are added (at the end), colours, queries and auto-tag
/// settings merged as values. Returns the tags theirs removed (removed last, by the caller).
/// `whole`: theirs is the whole project (a single file), so a tag removed there and changed here
/// is a conflict; otherwise (a sidecar project's file) the caller removes such a tag only when
/// nothing of it is left on any clip once the sidecars are merged.
fn merge_project(
    base: &TagDocument,
    ours: &TagDocument,
    p: &SidecarProject,
    whole: bool,
    b: &mut Builder,
) -> Result<Vec<String>, String> {
    for (name, theirs) in &p.tags {
        let base_color = base.tag_index(name).map(|i| base.tags[i].color);
        match (b.work.tag_index(name), base_color) {
            (Some(i), _) => {
                let ours = b.work.tags[i].color;
                match merge_value(base_color.as_ref(), &ours, theirs) {
                    Some(color) if color != ours => {
                        b.push(Edit::SetTagColor { index: i, color })?
                    }
                    Some(_) => {}
                    None => {
                        return Err(format!(
                            "the colour of tag `{name}` was changed here and on disk"
                        ));
                    }
                }
            }
            // Added on disk.
            (None, None) => {
                b.tag(name, *theirs)?;
            }
            // Removed (or renamed) here: it stays removed, unless theirs changed its colour.
            (None, Some(base_color)) => {
                if *theirs != base_color {
                    return Err(format!(
                        "tag `{name}` was removed or renamed here and its colour was changed on \
                         disk"
                    ));
                }
            }
        }
    }
    let listed: BTreeSet<&str> = p.tags.iter().map(|(n, _)| n.as_str()).collect();
    let mut removed = Vec::new();
    for t in &base.tags {
        if listed.contains(t.name.as_str()) {
            continue;
        }
        if let Some(i) = ours.tag_index(&t.name) {
            if whole && !same_tag(ours, &ours.tags[i], base, t) {
                return Err(format!(
                    "tag `{}` was removed on disk and changed here",
                    t.name
                ));
            }
            removed.push(t.name.clone());
        }
    }
    match merge_value(Some(&base.queries), &ours.queries, &p.queries) {
        Some(q) if q != ours.queries => b.push(Edit::SetQueries(q))?,
        Some(_) => {}
        None => return Err("the saved queries were changed here and on disk".to_owned()),
    }
    match merge_value(Some(&base.autotag), &ours.autotag, &p.autotag) {
        Some(a) if a != ours.autotag => b.push(Edit::SetAutotag(a.map(Box::new)))?,
        Some(_) => {}
        None => return Err("the auto-tag settings were changed here and on disk".to_owned()),
    }
    Ok(removed)
}

/// One clip's sidecar: its length and unit as values, each tag's ranges and markers frame by
/// frame, notes anchor by anchor.
fn merge_sidecar(
    base: &TagDocument,
    clip: ClipId,
    ct: &ClipTags,
    their_colors: &BTreeMap<&str, Option<[u8; 3]>>,
    b: &mut Builder,
) -> Result<(), String> {
    let info = &b.work.clips[clip as usize];
    let base_clip = sidecar_ancestor(base, info);
    // The name merges as a value (another session's rename, or its merge of a clip of the same
    // name as another, renamed so): a conflict when both renamed it differently, or when the
    // name is another clip's.
    let base_name = base_clip.map(|c| &base.clips[c as usize].name);
    let name = merge_value(base_name, &info.name, &ct.clip).ok_or_else(|| {
        format!(
            "clip `{}` was renamed here and to `{}` on disk",
            info.name, ct.clip
        )
    })?;
    if name != info.name && b.work.clip_index(&name).is_some() {
        return Err(format!(
            "clip `{}` was renamed on disk to `{name}`, the name of another clip here",
            info.name
        ));
    }
    // A sidecar does not name its take: the document's stands.
    let theirs = ClipInfo {
        name: info.name.clone(),
        frames: ct.frames,
        fps: ct.fps,
        source: info.source.clone(),
        unit_cm: ct.unit_cm,
    };
    let merging = Merging {
        clip,
        base: base_clip,
    };
    merge_clip(base, merging, &theirs, file_state(ct), their_colors, b)?;
    if name != b.work.clips[clip as usize].name {
        b.push(Edit::RenameClip { clip, name })?;
    }
    Ok(())
}

/// A clip added on disk (its sidecar, `ct`, of the take `source`): added at the end of the
/// document, its lists merged from nothing (no clip of the ancestor is its ancestor, whatever
/// its name), under a name no other clip of the document has.
fn new_clip(
    base: &TagDocument,
    source: &str,
    ct: &ClipTags,
    their_colors: &BTreeMap<&str, Option<[u8; 3]>>,
    b: &mut Builder,
) -> Result<(), String> {
    let taken = |b: &Builder, name: &str| b.work.clip_index(name).is_some();
    // The name of a clip of a file of several animations says which animation (and so which
    // sidecar): another would move its tags to another file. Such a clip is left out (its
    // sidecar stays one of no clip, loaded at the next open). A BVH's clip has one animation:
    // a `#` in its name is part of the name, and it is renamed as any other.
    let names_animation =
        super::sidecar::animation_part(std::path::Path::new(source), &ct.clip, false).is_some();
    if names_animation && taken(b, &ct.clip) {
        return Ok(());
    }
    let mut name = ct.clip.clone();
    let mut n = 2;
    while taken(b, &name) {
        name = format!("{}_{n}", ct.clip);
        n += 1;
    }
    let info = ClipInfo {
        name,
        frames: ct.frames,
        fps: ct.fps,
        source: Some(source.to_owned()),
        unit_cm: ct.unit_cm,
    };
    let index = b.work.clips.len();
    b.push(Edit::InsertClip {
        index,
        clip: info.clone(),
        ranges: Vec::new(),
    })?;
    let new = Merging {
        clip: index as ClipId,
        base: None,
    };
    merge_clip(base, new, &info, file_state(ct), their_colors, b)
}

/// The clip of the document a merge is for, and its ancestor in the state last saved (none: a
/// clip new since).
#[derive(Clone, Copy)]
struct Merging {
    clip: ClipId,
    base: Option<ClipId>,
}

/// One clip of the document (`clip`, in `b.work`) and theirs (`theirs`, its lists `ts`): its
/// length, unit, rate and take as values, each tag's ranges and markers frame by frame, notes
/// anchor by anchor. The base's clip is the one `Merging` names (none: a clip new since).
fn merge_clip(
    base: &TagDocument,
    Merging {
        clip,
        base: base_clip,
    }: Merging,
    theirs: &ClipInfo,
    ts: ClipState,
    their_colors: &BTreeMap<&str, Option<[u8; 3]>>,
    b: &mut Builder,
) -> Result<(), String> {
    let info = b.work.clips[clip as usize].clone();
    let os = doc_state(&b.work, Some(clip));
    let base_info = base_clip.map(|c| &base.clips[c as usize]);
    let frames = merge_value(base_info.map(|i| &i.frames), &info.frames, &theirs.frames)
        .ok_or("the clip's length was changed here and on disk")?;
    if frames != info.frames {
        b.push(Edit::SetClipFrames { clip, frames })?;
    }
    let unit_cm = merge_value(
        base_info.map(|i| &i.unit_cm),
        &info.unit_cm,
        &theirs.unit_cm,
    )
    .ok_or("the clip's unit was changed here and on disk")?;
    if unit_cm != info.unit_cm {
        b.push(Edit::SetClipUnit { clip, unit_cm })?;
    }
    let source = merge_value(base_info.map(|i| &i.source), &info.source, &theirs.source)
        .ok_or("the clip's take was relinked here and on disk")?;
    if source != info.source {
        b.push(Edit::SetClipSource { clip, source })?;
    }
    if merge_value(base_info.map(|i| &i.fps), &info.fps, &theirs.fps) != Some(info.fps) {
        return Err(format!(
            "the clip's frame rate is {} on disk and {} here (a rate is set by re-importing the take)",
            theirs.fps, info.fps
        ));
    }
    let bs = doc_state(base, base_clip);
    let names: BTreeSet<&String> = bs.keys().chain(os.keys()).chain(ts.keys()).collect();
    let empty = Lists::default();
    for name in names {
        let (bl, ol, tl) = (
            bs.get(name).unwrap_or(&empty),
            os.get(name).unwrap_or(&empty),
            ts.get(name).unwrap_or(&empty),
        );
        let merged = Lists {
            ranges: merge_ranges(&bl.ranges, &ol.ranges, &tl.ranges),
            markers: merge_markers(&bl.markers, &ol.markers, &tl.markers),
            notes: merge_notes(&bl.notes, &ol.notes, &tl.notes).map_err(|a| {
                format!(
                    "the note on the {} of tag `{name}` was changed here and on disk",
                    anchor_text(a)
                )
            })?,
        };
        if merged.ranges.last().is_some_and(|r| r.stop > frames)
            || merged.markers.last().is_some_and(|&m| m >= frames)
        {
            return Err(format!(
                "tag `{name}` would have ranges or markers past the clip's end ({frames} frames)"
            ));
        }
        // Removed (or renamed) here, changed there: theirs would be lost, or come back halved.
        // (Theirs removing it too, or emptying it here, loses nothing.)
        if tl != bl
            && *tl != empty
            && b.work.tag_index(name).is_none()
            && base.tag_index(name).is_some()
        {
            return Err(format!(
                "tag `{name}` was removed or renamed here and changed on disk"
            ));
        }
        if merged == *ol {
            continue;
        }
        let tag = b.tag(name, their_colors.get(name.as_str()).copied().flatten())?;
        if merged.ranges != ol.ranges {
            b.push(Edit::SetRanges {
                tag,
                clip,
                ranges: merged.ranges.clone(),
            })?;
        }
        if merged.markers != ol.markers {
            b.push(Edit::SetMarkers {
                tag,
                clip,
                frames: merged.markers.clone(),
            })?;
        }
        let now = b.work.tags[tag]
            .notes
            .get(&clip)
            .cloned()
            .unwrap_or_default();
        if merged.notes != now {
            if let Some((a, _)) = merged.notes.iter().find(|(a, _)| match a {
                Anchor::Range(r) => !merged.ranges.contains(r),
                Anchor::Marker(f) => !merged.markers.contains(f),
            }) {
                return Err(format!(
                    "a note of tag `{name}` is on a {} that the merged frames no longer have",
                    anchor_text(*a)
                ));
            }
            b.push(Edit::SetNotes {
                tag,
                clip,
                notes: merged.notes,
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Frames `0..64` of a bit set as canonical ranges.
    fn ranges_of(bits: u64) -> Vec<Range> {
        let mut out: Vec<Range> = Vec::new();
        for f in 0..64 {
            if bits >> f & 1 == 1 {
                match out.last_mut() {
                    Some(r) if r.stop == f => r.stop += 1,
                    _ => out.push(Range::new(f, f + 1)),
                }
            }
        }
        out
    }

    fn markers_of(bits: u64) -> Vec<u32> {
        (0..64).filter(|f| bits >> f & 1 == 1).collect()
    }

    proptest! {
        /// Frame by frame: the side that changed a frame decides it (both sides that changed it
        /// changed it the same way).
        #[test]
        fn ranges_and_markers_merge_frame_by_frame(b: u64, o: u64, t: u64) {
            let each_frame = (o & t) | (o & !b) | (t & !b);
            prop_assert_eq!(
                merge_ranges(&ranges_of(b), &ranges_of(o), &ranges_of(t)),
                ranges_of(each_frame)
            );
            prop_assert_eq!(
                merge_markers(&markers_of(b), &markers_of(o), &markers_of(t)),
                markers_of(each_frame)
            );
        }
    }

    #[test]
    fn a_value_both_sides_changed_differently_is_a_conflict() {
        assert_eq!(merge_value(Some(&1), &1, &2), Some(2));
        assert_eq!(merge_value(Some(&1), &2, &1), Some(2));
        assert_eq!(merge_value(Some(&1), &3, &3), Some(3));
        assert_eq!(merge_value(Some(&1), &2, &3), None);
        assert_eq!(merge_value(None, &2, &2), Some(2));
        assert_eq!(merge_value(None, &2, &3), None);
    }

    #[test]
    fn notes_merge_anchor_by_anchor() {
        let note = |s: &str| Note {
            text: s.into(),
            ..Default::default()
        };
        let (r1, r2, m) = (
            Anchor::Range(Range::new(0, 5)),
            Anchor::Range(Range::new(8, 9)),
            Anchor::Marker(3),
        );
        let base = vec![(r1, note("a")), (m, note("m"))];
        // Ours edits r1's note, theirs removes the marker's and adds one on r2.
        let ours = vec![(r1, note("a2")), (m, note("m"))];
        let theirs = vec![(r1, note("a")), (r2, note("b"))];
        assert_eq!(
            merge_notes(&base, &ours, &theirs),
            Ok(vec![(r1, note("a2")), (r2, note("b"))])
        );
        // Both edit r1's note differently: a conflict on that anchor.
        let theirs = vec![(r1, note("a3")), (m, note("m"))];
        assert_eq!(merge_notes(&base, &ours, &theirs), Err(r1));
    }

    fn doc() -> TagDocument {
        let mut doc = TagDocument::default();
        doc.clips.push(crate::core::tags::ClipInfo {
            name: "walk".into(),
            frames: 100,
            fps: 30.0,
            source: Some("walk.bvh".into()),
            unit_cm: None,
        });
        let mut t = Tag::new("Step");
        t.ranges.insert(0, vec![Range::new(0, 10)]);
        doc.tags.push(t);
        doc
    }

    /// The tag order: theirs where only theirs changed it (a tag added here stays after the tag
    /// it follows); ours where ours changed it.
    #[test]
    fn the_tag_order_merges_whole() {
        let named = |names: &[&str]| TagDocument {
            tags: names.iter().map(|n| Tag::new(*n)).collect(),
            ..Default::default()
        };
        let order =
            |d: &TagDocument| -> Vec<String> { d.tags.iter().map(|t| t.name.clone()).collect() };
        let merged = |b: &[&str], o: &[&str], t: &[&str]| {
            let (base, mut ours) = (named(b), named(o));
            merge_documents(&base, &ours, &named(t))
                .unwrap()
                .apply(&mut ours)
                .unwrap();
            order(&ours)
        };
        // Theirs moved C first; ours added X after A.
        assert_eq!(
            merged(&["A", "B", "C"], &["A", "X", "B", "C"], &["C", "A", "B"]),
            ["C", "A", "X", "B"]
        );
        // Theirs moved C first and added Y; ours added X at the front.
        assert_eq!(
            merged(
                &["A", "B", "C"],
                &["X", "A", "B", "C"],
                &["C", "A", "Y", "B"]
            ),
            ["X", "C", "A", "Y", "B"]
        );
        // Both reordered: ours stands (theirs' new tag added at the end).
        assert_eq!(
            merged(&["A", "B", "C"], &["B", "A", "C"], &["C", "B", "A", "Y"]),
            ["B", "A", "C", "Y"]
        );
        // Only ours reordered.
        assert_eq!(
            merged(&["A", "B", "C"], &["C", "B", "A"], &["A", "B", "C"]),
            ["C", "B", "A"]
        );
        // Theirs removed B and reordered the rest.
        assert_eq!(
            merged(&["A", "B", "C"], &["A", "B", "C"], &["C", "A"]),
            ["C", "A"]
        );
        // Theirs added a tag in the middle, or renamed one, the shared order kept: theirs' places
        // (they went to the end, and the recovery of an autosave, theirs, did not give it back).
        assert_eq!(
            merged(&["A", "B", "C"], &["A", "B", "C"], &["A", "N", "B", "C"]),
            ["A", "N", "B", "C"]
        );
        assert_eq!(
            merged(&["A", "B", "C"], &["A", "B", "C"], &["A", "B2", "C"]),
            ["A", "B2", "C"]
        );
        // With a tag ours added too, after the tag it follows here.
        assert_eq!(
            merged(
                &["A", "B", "C"],
                &["A", "B", "X", "C"],
                &["A", "N", "B", "C"]
            ),
            ["A", "N", "B", "X", "C"]
        );
        // A sidecar project's file on disk gives the order the same way.
        let (base, mut ours) = (named(&["A", "B", "C"]), named(&["A", "B", "C", "X"]));
        let project = SidecarProject {
            folders: Vec::new(),
            tags: ["B", "C", "A"].map(|n| (n.to_owned(), None)).to_vec(),
            queries: Vec::new(),
            autotag: base.autotag.clone(),
        };
        merge_on_disk(Some(&base), &ours, &[on_disk(Theirs::Project(project))])
            .unwrap()
            .apply(&mut ours)
            .unwrap();
        assert_eq!(order(&ours), ["B", "C", "X", "A"], "X after C, as in ours");
    }

    /// Clips matched by take where renamed: a clip renamed on both sides is one clip (a
    /// conflict on its name), not the new clip that took its old name; a clip added there under
    /// the name a clip renamed here took is added beside it.
    #[test]
    fn renamed_clips_are_matched_by_their_take() {
        let clip = |name: &str, take: &str| crate::core::tags::ClipInfo {
            name: name.into(),
            frames: 100,
            fps: 30.0,
            source: Some(take.into()),
            unit_cm: None,
        };
        let doc = |clips: Vec<crate::core::tags::ClipInfo>| TagDocument {
            clips,
            tags: vec![Tag::new("T")],
            ..Default::default()
        };
        let merged = |base: &TagDocument, ours: &mut TagDocument, theirs: &TagDocument| {
            merge_documents(base, ours, theirs)
                .unwrap()
                .apply(ours)
                .unwrap();
        };
        let base = doc(vec![clip("walk", "s1.bvh")]);
        // Here renamed `run`; there renamed `stroll`, and a new take named `walk`.
        let ours = doc(vec![clip("run", "s1.bvh")]);
        let theirs = doc(vec![clip("stroll", "s1.bvh"), clip("walk", "s2.bvh")]);
        let e = merge_documents(&base, &ours, &theirs).unwrap_err();
        assert!(
            e.contains("clip `run` was renamed here and to `stroll` on disk"),
            "{e}"
        );
        // Only here renamed: there a new take named `walk` and frames on the renamed one.
        let mut theirs = doc(vec![clip("walk", "s1.bvh"), clip("walk2", "s2.bvh")]);
        theirs.tags[0].ranges.insert(0, vec![Range::new(3, 5)]);
        let mut ours = doc(vec![clip("run", "s1.bvh")]);
        merged(&base, &mut ours, &theirs);
        let names: Vec<&str> = ours.clips.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["run", "walk2"]);
        assert_eq!(ours.tags[0].ranges[&0], vec![Range::new(3, 5)]);
        // Renamed here to `run`; there a new take named `run`: added as `run_2`, no conflict.
        let theirs = doc(vec![clip("walk", "s1.bvh"), clip("run", "s3.bvh")]);
        let mut ours = doc(vec![clip("run", "s1.bvh")]);
        merged(&base, &mut ours, &theirs);
        let names: Vec<&str> = ours.clips.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["run", "run_2"]);
        assert_eq!(ours.clips[1].source.as_deref(), Some("s3.bvh"));
        // Names swapped here: each clip keeps its take and its frames from there.
        let base = doc(vec![clip("a", "s1.bvh"), clip("b", "s2.bvh")]);
        let mut theirs = base.clone();
        theirs.tags[0].ranges.insert(1, vec![Range::new(7, 9)]);
        let mut ours = doc(vec![clip("b", "s1.bvh"), clip("a", "s2.bvh")]);
        merged(&base, &mut ours, &theirs);
        assert_eq!(ours.clips[1].name, "a");
        assert_eq!(
            ours.tags[0].ranges[&1],
            vec![Range::new(7, 9)],
            "on s2's clip"
        );
    }

    fn sidecar(doc: &TagDocument) -> ClipTags {
        let text = super::super::sidecar::cliptags_text(doc, 0);
        super::super::sidecar::parse_cliptags(&text, "walk.bvh.tags.json")
            .unwrap()
            .0
    }

    fn on_disk(theirs: Theirs) -> OnDisk {
        OnDisk {
            file: PathBuf::from("walk.bvh.tags.json"),
            bytes: Vec::new(),
            theirs,
            ours_unchanged: false,
        }
    }

    /// A clip added on disk under a name the document has: renamed beside it when its take is a
    /// BVH (a `#` in the name is part of it), left out when its name says an animation of a glTF
    /// (another name would send its tags to another animation's sidecar).
    #[test]
    fn a_new_clip_named_like_one_here_is_renamed_unless_it_names_an_animation() {
        let mut base = doc();
        base.clips[0].name = "t#1".into();
        let ours = base.clone();
        let added = |source: &str| {
            let mut tags = sidecar(&base);
            tags.clip = "t#1".into();
            let edit = merge_on_disk(
                Some(&base),
                &ours,
                &[on_disk(Theirs::NewClip {
                    source: source.into(),
                    tags,
                })],
            )
            .unwrap();
            let mut merged = ours.clone();
            edit.apply(&mut merged).unwrap();
            merged
                .clips
                .iter()
                .map(|c| c.name.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(added("t#1.bvh"), ["t#1", "t#1_2"]);
        assert_eq!(added("t.glb"), ["t#1"]);
    }

    #[test]
    fn a_sidecar_merges_into_the_document_as_one_edit() {
        let base = doc();
        let mut ours = base.clone();
        Edit::SetRanges {
            tag: 0,
            clip: 0,
            ranges: vec![Range::new(0, 12)],
        }
        .apply(&mut ours)
        .unwrap();
        let mut theirs = base.clone();
        let mut turn = Tag::new("Turn");
        turn.markers.insert(0, vec![40]);
        Edit::InsertTag {
            index: 1,
            tag: turn,
        }
        .apply(&mut theirs)
        .unwrap();
        Edit::SetRanges {
            tag: 0,
            clip: 0,
            ranges: vec![Range::new(2, 10), Range::new(30, 31)],
        }
        .apply(&mut theirs)
        .unwrap();
        let edit = merge_on_disk(
            Some(&base),
            &ours,
            &[on_disk(Theirs::Sidecar(0, sidecar(&theirs)))],
        )
        .unwrap();
        let mut merged = ours.clone();
        edit.apply(&mut merged).unwrap();
        assert_eq!(
            merged.tags[0].ranges.get(&0).unwrap(),
            [Range::new(2, 12), Range::new(30, 31)]
        );
        assert_eq!(merged.tags[1].name, "Turn");
        assert_eq!(merged.tags[1].markers[&0], vec![40]);
        // Theirs changed the clip's rate: refused, named.
        let mut faster = sidecar(&theirs);
        faster.fps = 60.0;
        let (i, why) =
            merge_on_disk(Some(&base), &ours, &[on_disk(Theirs::Sidecar(0, faster))]).unwrap_err();
        assert_eq!(i, 0);
        assert!(why.contains("frame rate"), "{why}");
        // Theirs shortened the clip past a marker ours added: refused (the marker would move).
        let mut marked = base.clone();
        Edit::SetMarkers {
            tag: 0,
            clip: 0,
            frames: vec![90],
        }
        .apply(&mut marked)
        .unwrap();
        let mut short = sidecar(&base);
        short.frames = 80;
        let (_, why) =
            merge_on_disk(Some(&base), &marked, &[on_disk(Theirs::Sidecar(0, short))]).unwrap_err();
        assert!(why.contains("past the clip's end"), "{why}");
        // Theirs shortened the clip past ranges ours added: refused.
        let mut shorter = sidecar(&base);
        shorter.frames = 11;
        let (_, why) =
            merge_on_disk(Some(&base), &ours, &[on_disk(Theirs::Sidecar(0, shorter))]).unwrap_err();
        assert!(why.contains("past the clip's end"), "{why}");
    }
}
