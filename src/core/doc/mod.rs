//! The editable project: every edit of a tag document as a command with an inverse, the undo/redo
//! history, and tag exchange (CSV, per-clip JSON, merging one document into another).
//!
//! The app changes the document only through [`Edit`]s applied by a [`History`]; that is what gives
//! undo/redo and keyboard shortcuts one home, and what makes every edit testable without a UI.

pub mod edit;
pub mod exchange;
pub mod history;

pub use edit::{Edit, EditError, canonicalize, canonicalize_markers, reanchored};
pub use history::History;
