//! Undo/redo over [`Edit`]s, with a saved-state marker for "unsaved changes".

use super::edit::{Edit, EditError};
use crate::core::tags::TagDocument;

#[derive(Debug, Clone)]
struct Step {
    label: String,
    /// Steps with the same key in a row merge into one (e.g. dragging a colour picker).
    key: Option<u64>,
    /// The edit that takes the document back across this step.
    edit: Edit,
    /// Revision of the document after this step was done.
    revision: u64,
}

/// `saved_revision` of a saved state no undo or redo reaches any more (see `saved_branch`); no
/// step has it (revisions count up from 1).
const ORPHANED: u64 = u64::MAX - 1;

/// The undo and redo stacks of one document. Every change of the document goes through
/// [`History::apply`], so undo/redo cover every edit.
#[derive(Debug, Clone, Default)]
pub struct History {
    undo: Vec<Step>,
    redo: Vec<Step>,
    /// Revision of the current state; every new step gets a fresh number.
    revision: u64,
    next_revision: u64,
    saved_revision: u64,
    /// Where the saved state went when a new edit dropped the redo steps that led to it: the depth
    /// of the undo stack it branched from, and how many steps past that it lay. It can no longer
    /// be reached by undo and redo, but [`History::unsaved_steps`] still counts the way to it.
    saved_branch: Option<(usize, usize)>,
    /// Why the last undo or redo failed, until asked.
    failure: Option<String>,
}

impl History {
    pub fn new() -> Self {
        Self::default()
    }

    /// Calls `f` on every clip source the stored undo and redo steps would set (see
    /// [`Edit::sources_mut`]).
    pub fn sources_mut(&mut self, f: &mut dyn FnMut(&mut Option<String>)) {
        for step in self.undo.iter_mut().chain(self.redo.iter_mut()) {
            step.edit.sources_mut(f);
        }
    }

    /// Applies `edit` to `doc` as one undoable step named `label`.
    pub fn apply(
        &mut self,
        doc: &mut TagDocument,
        edit: Edit,
        label: impl Into<String>,
    ) -> Result<(), EditError> {
        self.apply_keyed(doc, edit, label, None)
    }

    /// Like [`History::apply`], but when the last step has the same `key` (and nothing was undone
    /// since), the edit joins that step: undo then goes back to before the first of them.
    pub fn apply_keyed(
        &mut self,
        doc: &mut TagDocument,
        edit: Edit,
        label: impl Into<String>,
        key: Option<u64>,
    ) -> Result<(), EditError> {
        let inverse = edit.apply(doc)?;
        if key.is_some()
            && self.redo.is_empty()
            && self.revision != self.saved_revision
            && let Some(last) = self.undo.last_mut()
            && last.key == key
        {
            // Keep the older inverse: it restores the state before the whole run.
            self.next_revision += 1;
            self.revision = self.next_revision;
            last.revision = self.revision;
            return Ok(());
        }
        self.forget_redo();
        self.next_revision += 1;
        self.revision = self.next_revision;
        self.undo.push(Step {
            label: label.into(),
            key,
            edit: inverse,
            revision: self.revision,
        });
        Ok(())
    }

    /// Drops the redo steps (a new edit makes another branch), noting where the saved state lay
    /// when it was among them or past their branch point.
    fn forget_redo(&mut self) {
        let depth = self.undo.len();
        if let Some(j) = self
            .redo
            .iter()
            .rposition(|s| s.revision == self.saved_revision)
        {
            // The saved state was `redo.len() - j` redos ahead: out of reach from now on.
            self.saved_branch = Some((depth, self.redo.len() - j));
            self.saved_revision = ORPHANED;
        } else if let Some((at, past)) = self.saved_branch
            && depth < at
        {
            // Branching below the old branch point: the way to the saved state now leaves here.
            self.saved_branch = Some((depth, past + (at - depth)));
        }
        self.redo.clear();
    }

    /// Undoes the last step; returns its label, or `None` when there is nothing to undo.
    pub fn undo(&mut self, doc: &mut TagDocument) -> Option<String> {
        let step = self.undo.pop()?;
        match step.edit.apply(doc) {
            Ok(redo_edit) => {
                self.revision = self.undo.last().map_or(0, |s| s.revision);
                self.redo.push(Step {
                    label: step.label.clone(),
                    key: None,
                    edit: redo_edit,
                    revision: step.revision,
                });
                Some(step.label)
            }
            // An inverse can only fail if the document was changed outside the history (or holds
            // what its edits refuse, such as a name of spaces from a file); drop the stacks rather
            // than apply something wrong, and keep the document unsaved.
            Err(e) => {
                self.fail(format!("cannot undo {}: {e}", step.label));
                None
            }
        }
    }

    /// Redoes the last undone step; returns its label.
    pub fn redo(&mut self, doc: &mut TagDocument) -> Option<String> {
        let step = self.redo.pop()?;
        match step.edit.apply(doc) {
            Ok(undo_edit) => {
                self.revision = step.revision;
                self.undo.push(Step {
                    label: step.label.clone(),
                    key: None,
                    edit: undo_edit,
                    revision: step.revision,
                });
                Some(step.label)
            }
            Err(e) => {
                self.fail(format!("cannot redo {}: {e}", step.label));
                None
            }
        }
    }

    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty()
    }

    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    /// The one clip the next undo changes the ranges, markers or notes of ([`Edit::only_clip`]).
    pub fn undo_clip(&self) -> Option<crate::core::tags::ClipId> {
        self.undo.last().and_then(|s| s.edit.only_clip())
    }

    /// The one clip the next redo changes the ranges, markers or notes of.
    pub fn redo_clip(&self) -> Option<crate::core::tags::ClipId> {
        self.redo.last().and_then(|s| s.edit.only_clip())
    }

    /// Label of the step [`History::undo`] would undo.
    pub fn undo_label(&self) -> Option<&str> {
        self.undo.last().map(|s| s.label.as_str())
    }

    /// Label of the step [`History::redo`] would redo.
    pub fn redo_label(&self) -> Option<&str> {
        self.redo.last().map(|s| s.label.as_str())
    }

    /// Number of undoable steps.
    pub fn len(&self) -> usize {
        self.undo.len()
    }

    pub fn is_empty(&self) -> bool {
        self.undo.is_empty()
    }

    /// How many steps lie between the saved state and the current one (0 when clean; at least 1
    /// when dirty, e.g. for recovered work whose steps are not in this history).
    pub fn unsaved_steps(&self) -> usize {
        if !self.is_dirty() {
            return 0;
        }
        if let Some((at, past)) = self.saved_branch {
            return self.undo.len().abs_diff(at) + past;
        }
        if self.saved_revision == 0 {
            return self.undo.len().max(1);
        }
        if let Some(i) = self
            .undo
            .iter()
            .rposition(|s| s.revision == self.saved_revision)
        {
            return (self.undo.len() - 1 - i).max(1);
        }
        if let Some(j) = self
            .redo
            .iter()
            .rposition(|s| s.revision == self.saved_revision)
        {
            return self.redo.len() - j;
        }
        self.undo.len().max(1)
    }

    /// The document as it was in the saved (or loaded) state, made from `doc` (the current state)
    /// by undoing or redoing the steps between the two on a copy. `None` when no undo or redo
    /// reaches that state (it lay on a branch a later edit dropped, or the work was recovered), or
    /// when a step cannot be replayed.
    pub fn saved_state(&self, doc: &TagDocument) -> Option<TagDocument> {
        if !self.is_dirty() {
            return Some(doc.clone());
        }
        if self.saved_branch.is_some() || self.saved_revision >= ORPHANED {
            return None;
        }
        let mut state = doc.clone();
        let steps: Vec<&Step> = if self.saved_revision == 0 {
            self.undo.iter().rev().collect()
        } else if let Some(i) = self
            .undo
            .iter()
            .rposition(|s| s.revision == self.saved_revision)
        {
            self.undo[i + 1..].iter().rev().collect()
        } else {
            let j = self
                .redo
                .iter()
                .rposition(|s| s.revision == self.saved_revision)?;
            self.redo[j..].iter().rev().collect()
        };
        for step in steps {
            step.edit.clone().apply(&mut state).ok()?;
        }
        Some(state)
    }

    /// Marks the current state as saved.
    pub fn mark_saved(&mut self) {
        self.saved_revision = self.revision;
        self.saved_branch = None;
    }

    /// Marks the document as having changes that were never saved (e.g. recovered work).
    pub fn mark_unsaved(&mut self) {
        self.saved_revision = u64::MAX;
        self.saved_branch = None;
    }

    /// True when the document differs from the last saved (or loaded) state.
    pub fn is_dirty(&self) -> bool {
        self.revision != self.saved_revision
    }

    /// A step that could not be undone or redone: every step is forgotten, and the document, which
    /// may now differ from the saved one, counts as unsaved.
    fn fail(&mut self, why: String) {
        self.clear();
        self.mark_unsaved();
        self.failure = Some(why);
    }

    /// Why the last undo or redo failed (once; `None` when it did not).
    pub fn take_failure(&mut self) -> Option<String> {
        self.failure.take()
    }

    /// Forgets all steps (e.g. after loading another document); the state counts as saved.
    pub fn clear(&mut self) {
        self.undo.clear();
        self.redo.clear();
        self.revision = 0;
        self.next_revision = 0;
        self.saved_revision = 0;
        self.saved_branch = None;
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::core::tags::{ClipInfo, Range, Tag};

    fn doc() -> TagDocument {
        TagDocument {
            clips: vec![ClipInfo {
                name: "a".into(),
                frames: 100,
                fps: 30.0,
                source: None,
                unit_cm: None,
            }],
            tags: vec![Tag::new("Walk")],
            queries: vec![],
            ..Default::default()
        }
    }

    fn set(start: u32, stop: u32) -> Edit {
        Edit::SetRanges {
            tag: 0,
            clip: 0,
            ranges: vec![Range::new(start, stop)],
        }
    }

    /// The saved state is made from the current one by undo or redo on a copy, wherever it lies;
    /// not at all once no undo or redo reaches it.
    #[test]
    fn the_saved_state_is_made_by_undo_or_redo() {
        let ranges = |d: &TagDocument| d.tags[0].ranges.get(&0).map(<[Range]>::to_vec);
        let mut d = doc();
        let mut h = History::new();
        assert_eq!(h.saved_state(&d).map(|s| ranges(&s)), Some(None));
        h.apply(&mut d, set(0, 10), "a").unwrap();
        h.apply(&mut d, set(0, 20), "b").unwrap();
        // The loaded state, two undos back.
        assert_eq!(h.saved_state(&d).map(|s| ranges(&s)), Some(None));
        h.mark_saved();
        h.apply(&mut d, set(0, 30), "c").unwrap();
        let at_save = Some(Some(vec![Range::new(0, 20)]));
        assert_eq!(h.saved_state(&d).map(|s| ranges(&s)), at_save);
        assert_eq!(
            ranges(&d),
            Some(vec![Range::new(0, 30)]),
            "the document is left alone"
        );
        // Undone past the save: the saved state is a redo ahead.
        h.undo(&mut d);
        h.undo(&mut d);
        assert_eq!(h.saved_state(&d).map(|s| ranges(&s)), at_save);
        // A new edit drops the redo steps that led to it: out of reach.
        h.apply(&mut d, set(0, 40), "d").unwrap();
        assert_eq!(h.saved_state(&d), None);
        h.mark_saved();
        assert!(h.saved_state(&d).is_some());
        h.mark_unsaved();
        assert_eq!(h.saved_state(&d), None, "recovered work");
    }

    #[test]
    fn undo_redo_and_dirty_marker() {
        let mut d = doc();
        let mut h = History::new();
        assert!(!h.is_dirty());
        h.apply(&mut d, set(0, 10), "create").unwrap();
        h.apply(&mut d, set(0, 20), "resize").unwrap();
        assert!(h.is_dirty());
        h.mark_saved();
        assert!(!h.is_dirty());
        assert_eq!(h.undo(&mut d).as_deref(), Some("resize"));
        assert_eq!(d.tags[0].ranges[&0], vec![Range::new(0, 10)]);
        assert!(h.is_dirty());
        assert_eq!(h.redo(&mut d).as_deref(), Some("resize"));
        assert!(!h.is_dirty(), "redo back to the saved state is clean");
        assert_eq!(d.tags[0].ranges[&0], vec![Range::new(0, 20)]);
        h.undo(&mut d);
        h.undo(&mut d);
        assert!(d.tags[0].ranges.is_empty());
        assert!(h.undo(&mut d).is_none());
        // A new edit after undo drops the redo stack and is dirty even at the same depth.
        h.apply(&mut d, set(5, 6), "other").unwrap();
        assert!(!h.can_redo());
        assert!(h.is_dirty());
    }

    /// An undo whose inverse the document refuses (a tag named with spaces only, which a file may
    /// hold but no edit may make) clears the history, says why once, and leaves the document
    /// unsaved: a save is still asked for.
    #[test]
    fn a_failed_undo_leaves_the_document_unsaved() {
        let mut d = doc();
        d.tags[0].name = " ".into();
        let mut h = History::new();
        h.apply(&mut d, set(0, 10), "create").unwrap();
        h.mark_saved();
        h.apply(&mut d, Edit::RemoveTag { index: 0 }, "delete tag")
            .unwrap();
        assert!(h.undo(&mut d).is_none());
        assert!(h.take_failure().unwrap().contains("cannot undo delete tag"));
        assert!(h.take_failure().is_none(), "said once");
        assert!(h.is_dirty(), "the deletion is not saved yet");
        assert!(!h.can_undo() && !h.can_redo());
    }

    /// The count of unsaved steps follows the saved state onto a branch no redo reaches: an edit
    /// after undoing past the save.
    #[test]
    fn unsaved_steps_count_the_way_to_a_save_left_on_another_branch() {
        let mut d = doc();
        let mut h = History::new();
        for k in 1..=3 {
            h.apply(&mut d, set(0, 10 * k), "resize").unwrap();
        }
        h.mark_saved();
        assert_eq!(h.unsaved_steps(), 0);
        h.undo(&mut d);
        h.undo(&mut d);
        assert_eq!(h.unsaved_steps(), 2, "two redos away");
        // A new edit at depth 1: the save is two steps up the dropped branch, one step down here.
        h.apply(&mut d, set(5, 6), "other").unwrap();
        assert_eq!(h.unsaved_steps(), 3);
        h.apply(&mut d, set(5, 7), "other").unwrap();
        assert_eq!(h.unsaved_steps(), 4);
        h.undo(&mut d);
        h.undo(&mut d);
        assert_eq!(h.unsaved_steps(), 2, "back at the branch point");
        h.undo(&mut d);
        assert_eq!(h.unsaved_steps(), 3, "below it");
        // Branching again below the first branch point.
        h.apply(&mut d, set(1, 2), "third").unwrap();
        assert_eq!(h.unsaved_steps(), 4);
        assert!(h.is_dirty());
        h.mark_saved();
        assert_eq!(h.unsaved_steps(), 0);
        h.undo(&mut d);
        assert_eq!(h.unsaved_steps(), 1);
    }

    #[test]
    fn keyed_steps_merge_into_one() {
        let mut d = doc();
        let mut h = History::new();
        let color = |c: u8| Edit::SetTagColor {
            index: 0,
            color: Some([c, c, c]),
        };
        h.apply_keyed(&mut d, color(1), "recolour", Some(7))
            .unwrap();
        h.apply_keyed(&mut d, color(2), "recolour", Some(7))
            .unwrap();
        h.apply_keyed(&mut d, color(3), "recolour", Some(7))
            .unwrap();
        assert_eq!(h.len(), 1);
        h.undo(&mut d);
        assert_eq!(d.tags[0].color, None);
        h.redo(&mut d);
        assert_eq!(d.tags[0].color, Some([3, 3, 3]));
        h.apply_keyed(&mut d, color(4), "recolour", Some(8))
            .unwrap();
        assert_eq!(h.len(), 2);
    }

    #[test]
    fn refused_edit_is_not_recorded() {
        let mut d = doc();
        let mut h = History::new();
        assert!(
            h.apply(&mut d, Edit::RemoveTag { index: 9 }, "bad")
                .is_err()
        );
        assert!(!h.can_undo());
        assert!(!h.is_dirty());
    }
}
