//! Proposals into a document: one [`Edit`] (one undo step) for any number of clips, with a report
//! of everything it would change, computed before anything changes.
//!
//! Per tag, the proposals either **replace** the tag's ranges on each clip they were made for, or
//! **merge** with them (union). Merging never removes a frame. Replacing removes the frames of the
//! existing ranges that the proposal does not cover: those are listed in
//! [`ApplyReport::replaced`] (tag, clip, ranges), so an editor can show what would be lost and ask
//! first. A tag the document does not have yet is created. Proposals past the end of the
//! document's clip are clipped to it and reported.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::core::doc::{Edit, EditError, canonicalize};
use crate::core::tags::document::next_version;
use crate::core::tags::range::{difference, total_frames, union};
use crate::core::tags::{ClipId, Range, Tag, TagDocument};

use super::Proposal;

/// How proposals combine with the ranges a tag already has on a clip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApplyMode {
    /// The tag's ranges on the clip become the proposal; existing frames it does not cover are
    /// removed (and reported).
    Replace,
    /// The union of the existing ranges and the proposal: nothing is removed.
    #[default]
    Merge,
}

/// The mode of each tag: `per_tag` where listed, else `default`. The default policy merges
/// everything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApplyPolicy {
    pub default: ApplyMode,
    pub per_tag: BTreeMap<String, ApplyMode>,
}

impl ApplyPolicy {
    /// Every tag in `mode`.
    pub fn all(mode: ApplyMode) -> Self {
        Self {
            default: mode,
            per_tag: BTreeMap::new(),
        }
    }

    pub fn mode(&self, tag: &str) -> ApplyMode {
        self.per_tag.get(tag).copied().unwrap_or(self.default)
    }
}

/// Existing ranges an edit removes: the frames of `tag` on `clip` that it would no longer cover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    pub tag: String,
    pub clip: ClipId,
    pub clip_name: String,
    /// The frames removed, as canonical ranges.
    pub removed: Vec<Range>,
}

impl Replaced {
    pub fn frames(&self) -> u64 {
        total_frames(&self.removed)
    }
}

/// What an apply edit changes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApplyReport {
    /// Tags the edit creates, in order.
    pub tags_created: Vec<String>,
    /// Proposed tags the project does not have and that got no frame on any clip applied to:
    /// not created (an empty lane would only clutter the timeline).
    pub tags_not_created: Vec<String>,
    /// Number of (tag, clip) range lists that change.
    pub lists_changed: usize,
    /// Frames newly covered, summed over tags and clips.
    pub frames_added: u64,
    /// Existing frames removed by `Replace` (empty with `Merge`).
    pub replaced: Vec<Replaced>,
    /// Proposals that ran past the end of the document's clip (`tag` on `clip`, frames) and were
    /// clipped to it: the animation and the document disagree on the clip's length.
    pub clamped: Vec<String>,
}

impl ApplyReport {
    /// True when applying would remove existing frames: ask before applying.
    pub fn removes_frames(&self) -> bool {
        !self.replaced.is_empty()
    }

    /// Frames removed, summed.
    pub fn frames_removed(&self) -> u64 {
        self.replaced.iter().map(Replaced::frames).sum()
    }

    /// One paragraph for a dialog or a log.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} range list(s) change, {} frame(s) added",
            self.lists_changed, self.frames_added
        );
        if !self.tags_created.is_empty() {
            let _ = write!(s, "; new tags: {}", self.tags_created.join(", "));
        }
        if !self.tags_not_created.is_empty() {
            let _ = write!(
                s,
                "; no frames proposed, so not created: {}",
                self.tags_not_created.join(", ")
            );
        }
        if !self.replaced.is_empty() {
            let _ = write!(s, "; {} existing frame(s) removed:", self.frames_removed());
            for r in &self.replaced {
                let list: Vec<String> = r
                    .removed
                    .iter()
                    .map(|x| format!("[{}, {})", x.start, x.stop))
                    .collect();
                let _ = write!(s, " {} on '{}' {};", r.tag, r.clip_name, list.join(" "));
            }
        }
        for c in &self.clamped {
            let _ = write!(s, "; {c}");
        }
        s
    }
}

/// One edit applying `proposals` (per clip of `doc`) with `policy`, and its report. Tags are
/// matched by name; a clip listed twice gets the union of its proposals. Fails when a clip id is
/// not in the document. The edit is a [`Edit::Batch`] (empty when nothing would change): apply it
/// through a `History` for one undo step.
pub fn proposals_edit(
    doc: &TagDocument,
    proposals: &[(ClipId, &[Proposal])],
    policy: &ApplyPolicy,
) -> Result<(Edit, ApplyReport), EditError> {
    // (tag name in first-seen order) -> clip -> proposed frames (canonical, clipped).
    let mut order: Vec<&str> = Vec::new();
    let mut wanted: BTreeMap<&str, BTreeMap<ClipId, Vec<Range>>> = BTreeMap::new();
    let mut report = ApplyReport::default();
    for &(clip, list) in proposals {
        let info = doc
            .clips
            .get(clip as usize)
            .ok_or(EditError::NoClip(clip as usize))?;
        for p in list {
            if !order.contains(&p.tag.as_str()) {
                order.push(&p.tag);
            }
            let past: u64 = p
                .ranges
                .iter()
                .map(|r| u64::from(r.stop.saturating_sub(r.start.max(info.frames))))
                .sum();
            if past > 0 {
                report.clamped.push(format!(
                    "{} on '{}': {past} proposed frame(s) past its {} frames were dropped",
                    p.tag, info.name, info.frames
                ));
            }
            let entry = wanted.entry(&p.tag).or_default().entry(clip).or_default();
            let mut next = Vec::new();
            union(entry, &p.ranges, &mut next);
            canonicalize(&mut next, info.frames);
            *entry = next;
        }
    }
    let mut created: Vec<Edit> = Vec::new();
    // The colours of the tags created here, in order, apart from each other and the document's.
    // A tag the project lacks is created only where some clip got frames of it.
    let proposed = |tag: &str| wanted[tag].values().any(|l| !l.is_empty());
    order.retain(|t| {
        let keep = doc.tag_index(t).is_some() || proposed(t);
        if !keep {
            report.tags_not_created.push((*t).to_owned());
        }
        keep
    });
    let new_tags = order.iter().filter(|t| doc.tag_index(t).is_none()).count();
    let mut colors = doc.new_tag_colors(new_tags).into_iter();
    let mut changed: Vec<Edit> = Vec::new();
    let mut scratch = Vec::new();
    for tag in order {
        let per_clip = &wanted[tag];
        match doc.tag_index(tag) {
            None => {
                let ranges: BTreeMap<ClipId, Vec<Range>> = per_clip
                    .iter()
                    .filter(|(_, l)| !l.is_empty())
                    .map(|(&c, l)| (c, l.clone()))
                    .collect();
                report.lists_changed += ranges.len();
                report.frames_added += ranges.values().map(|l| total_frames(l)).sum::<u64>();
                report.tags_created.push(tag.to_owned());
                let color = colors.next();
                created.push(Edit::InsertTag {
                    index: doc.tags.len() + created.len(),
                    tag: Tag {
                        name: tag.to_owned(),
                        color,
                        ranges: ranges.into(),
                        markers: Default::default(),
                        notes: Default::default(),
                        version: next_version(),
                    },
                });
            }
            Some(t) => {
                let mode = policy.mode(tag);
                for (&clip, proposed) in per_clip {
                    let existing = doc.tags[t].ranges.get(&clip).unwrap_or(&[]);
                    let next = match mode {
                        ApplyMode::Replace => proposed.clone(),
                        ApplyMode::Merge => {
                            let mut u = Vec::new();
                            union(existing, proposed, &mut u);
                            u
                        }
                    };
                    if next == existing {
                        continue;
                    }
                    difference(&next, existing, &mut scratch);
                    report.frames_added += total_frames(&scratch);
                    difference(existing, &next, &mut scratch);
                    if !scratch.is_empty() {
                        report.replaced.push(Replaced {
                            tag: tag.to_owned(),
                            clip,
                            clip_name: doc.clips[clip as usize].name.clone(),
                            removed: scratch.clone(),
                        });
                    }
                    report.lists_changed += 1;
                    changed.push(Edit::SetRanges {
                        tag: t,
                        clip,
                        ranges: next,
                    });
                }
            }
        }
    }
    created.extend(changed);
    Ok((Edit::Batch(created), report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::doc::History;

    fn r(a: u32, b: u32) -> Range {
        Range::new(a, b)
    }

    fn doc() -> TagDocument {
        let mut d = crate::core::tags::document::test_document(&[("a", 100), ("b", 50)]);
        let walk = d.add_tag("locomotion:Walk", None).unwrap();
        d.set_ranges(walk, 0, vec![r(0, 10), r(40, 60)]).unwrap();
        d.set_ranges(walk, 1, vec![r(5, 8)]).unwrap();
        d
    }

    fn p(tag: &str, ranges: &[Range]) -> Proposal {
        Proposal {
            tag: tag.into(),
            ranges: ranges.to_vec(),
        }
    }

    #[test]
    fn merge_never_removes_and_replace_reports_what_it_removes() {
        let d = doc();
        let props = [
            p("locomotion:Walk", &[r(5, 20)]),
            p("contact:LeftFoot", &[r(1, 3)]),
        ];
        let (edit, rep) =
            proposals_edit(&d, &[(0, &props)], &ApplyPolicy::all(ApplyMode::Merge)).unwrap();
        assert!(!rep.removes_frames());
        assert_eq!(rep.tags_created, ["contact:LeftFoot"]);
        assert_eq!(rep.frames_added, 10 + 2);
        let mut merged = d.clone();
        edit.apply(&mut merged).unwrap();
        assert_eq!(merged.tags[0].ranges[&0], [r(0, 20), r(40, 60)]);
        assert_eq!(merged.tags[1].ranges[&0], [r(1, 3)]);
        assert_eq!(
            merged.tags[0].ranges[&1],
            [r(5, 8)],
            "other clips untouched"
        );

        let (edit, rep) =
            proposals_edit(&d, &[(0, &props)], &ApplyPolicy::all(ApplyMode::Replace)).unwrap();
        assert_eq!(
            rep.replaced,
            [Replaced {
                tag: "locomotion:Walk".into(),
                clip: 0,
                clip_name: "a".into(),
                removed: vec![r(0, 5), r(40, 60)],
            }]
        );
        assert_eq!(rep.frames_removed(), 25);
        assert!(
            rep.summary().contains("25 existing frame(s) removed"),
            "{}",
            rep.summary()
        );
        let mut replaced = d.clone();
        edit.apply(&mut replaced).unwrap();
        assert_eq!(replaced.tags[0].ranges[&0], [r(5, 20)]);
    }

    /// A proposed tag that is new and got no frame anywhere is not created, and the report says so.
    #[test]
    fn a_new_tag_without_frames_is_not_created() {
        let d = doc();
        let props = [
            p("locomotion:Run", &[r(1, 3)]),
            p("locomotion:TurnLeft", &[]),
            // The project has it: an empty proposal leaves it as it is.
            p("locomotion:Walk", &[]),
        ];
        let (edit, rep) = proposals_edit(&d, &[(0, &props)], &ApplyPolicy::default()).unwrap();
        assert_eq!(rep.tags_created, ["locomotion:Run"]);
        assert_eq!(rep.tags_not_created, ["locomotion:TurnLeft"]);
        assert!(rep.summary().contains("not created: locomotion:TurnLeft"));
        let mut after = d.clone();
        edit.apply(&mut after).unwrap();
        assert!(after.tag_index("locomotion:TurnLeft").is_none());
        assert!(after.tag_index("locomotion:Run").is_some());
        assert_eq!(after.tags[0].ranges, d.tags[0].ranges);
    }

    /// The tags a pass creates get colours apart in hue from each other and the document's.
    #[test]
    fn created_tags_get_colours_apart() {
        use crate::core::tags::color::{hue_distance, hue_of, shown_color};
        let d = doc();
        let names = [
            "contact:LeftFoot",
            "contact:RightFoot",
            "contact:Airborne",
            "locomotion:Idle",
            "locomotion:Run",
            "locomotion:TurnLeft",
            "locomotion:TurnRight",
        ];
        let props: Vec<Proposal> = names.iter().map(|n| p(n, &[r(1, 3)])).collect();
        let (edit, rep) = proposals_edit(&d, &[(0, &props)], &ApplyPolicy::default()).unwrap();
        assert_eq!(rep.tags_created, names);
        let mut after = d.clone();
        edit.apply(&mut after).unwrap();
        assert!(after.tags[1..].iter().all(|t| t.color.is_some()));
        let hues: Vec<f32> = after
            .tags
            .iter()
            .map(|t| hue_of(shown_color(t.color, &t.name)).unwrap())
            .collect();
        // Eight hues: at most 45 degrees apart is possible; the candidates are 10 apart.
        for (i, a) in hues.iter().enumerate() {
            for b in &hues[i + 1..] {
                assert!(hue_distance(*a, *b) >= 35.0, "{hues:?}");
            }
        }
    }

    #[test]
    fn one_undo_step_restores_the_document_and_no_change_is_an_empty_edit() {
        let d = doc();
        let props_a = [
            p("locomotion:Walk", &[r(0, 100)]),
            p("pose:HandsUp", &[r(3, 4)]),
        ];
        let props_b = [p("locomotion:Walk", &[]), p("pose:HandsUp", &[r(0, 70)])];
        let policy = ApplyPolicy {
            default: ApplyMode::Merge,
            per_tag: BTreeMap::from([("locomotion:Walk".to_owned(), ApplyMode::Replace)]),
        };
        let (edit, rep) = proposals_edit(&d, &[(0, &props_a), (1, &props_b)], &policy).unwrap();
        // Clip b: Walk replaced by nothing (3 frames reported), HandsUp clipped to 50 frames.
        assert_eq!(rep.replaced.len(), 1);
        assert_eq!(rep.replaced[0].removed, [r(5, 8)]);
        assert_eq!(rep.clamped.len(), 1, "{:?}", rep.clamped);
        let mut doc = d.clone();
        let mut history = History::default();
        history.apply(&mut doc, edit, "autotag").unwrap();
        assert_eq!(doc.tags[0].ranges[&0], [r(0, 100)]);
        assert!(!doc.tags[0].ranges.contains_key(&1));
        assert_eq!(doc.tags[1].ranges[&1], [r(0, 50)]);
        history.undo(&mut doc);
        let strip = |d: &TagDocument| {
            d.tags
                .iter()
                .map(|t| (t.name.clone(), t.ranges.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(strip(&doc), strip(&d));
        // Proposals equal to what is there: nothing to do.
        let same = [p("locomotion:Walk", &[r(0, 10), r(40, 60)])];
        let (edit, rep) =
            proposals_edit(&d, &[(0, &same)], &ApplyPolicy::all(ApplyMode::Replace)).unwrap();
        assert!(edit.is_empty() && rep.lists_changed == 0, "{edit:?}");
        assert_eq!(
            proposals_edit(&d, &[(7, &same)], &ApplyPolicy::default()).unwrap_err(),
            EditError::NoClip(7)
        );
    }
}
