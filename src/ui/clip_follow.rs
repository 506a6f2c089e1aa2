//! Sets of clips the view keeps by number (the browser's selection, the autotag panel's checked
//! clips) follow their clips when the project's clip list changes under them (a merge on save, an
//! undo, a clip removed): by name, or, for a clip whose name changed in a list of the same length
//! (a rename), by place. Numbers kept as they were named other clips, which a group action (units,
//! an autotag apply) then changed.

use std::collections::BTreeSet;

use crate::core::tags::{ClipId, TagDocument};

/// The clip list (version, length) a set was last seen on, its clips then, and their names.
#[derive(Debug, Clone, Default)]
pub struct ClipsSeen {
    list: (u64, usize),
    ids: Vec<ClipId>,
    names: Vec<String>,
}

/// Once a frame, before `ids` is used: when `doc`'s clip list changed since `seen` (and `ids`
/// did not change meanwhile), `ids` becomes the same clips in the new list, those gone left out;
/// then `seen` is brought up to date. Returns whether `ids` was changed.
pub fn follow_clips(
    seen: &mut Option<ClipsSeen>,
    ids: &mut Vec<ClipId>,
    doc: &TagDocument,
) -> bool {
    let list = (doc.clips_version, doc.clips.len());
    let mut moved = false;
    if let Some(s) = seen.as_ref()
        && s.list != list
        && s.ids == *ids
    {
        *ids = s
            .ids
            .iter()
            .zip(&s.names)
            .filter_map(|(&id, name)| {
                doc.clip_index(name)
                    .or_else(|| (s.list.1 == list.1 && (id as usize) < list.1).then_some(id))
            })
            .collect();
        moved = true;
    }
    if !seen
        .as_ref()
        .is_some_and(|s| s.list == list && s.ids == *ids)
    {
        let names = ids
            .iter()
            .map(|&c| {
                doc.clips
                    .get(c as usize)
                    .map_or(String::new(), |i| i.name.clone())
            })
            .collect();
        *seen = Some(ClipsSeen {
            list,
            ids: ids.clone(),
            names,
        });
    }
    moved
}

/// [`follow_clips`] for a set; nothing is copied while the clip list and the set are as seen.
pub fn follow_clip_set(
    seen: &mut Option<ClipsSeen>,
    set: &mut BTreeSet<ClipId>,
    doc: &TagDocument,
) -> bool {
    let list = (doc.clips_version, doc.clips.len());
    if seen
        .as_ref()
        .is_some_and(|s| s.list == list && s.ids.iter().eq(set.iter()))
    {
        return false;
    }
    let mut ids: Vec<ClipId> = set.iter().copied().collect();
    let moved = follow_clips(seen, &mut ids, doc);
    if moved {
        *set = ids.into_iter().collect();
    }
    moved
}
