//! Motion-capture libraries: importing whole folders of takes on every core, units per clip,
//! names, re-import, lazy animation with a memory budget, and sidecar tag files.
//!
//! An import is two steps, so a UI can run the slow one in the background:
//!
//! 1. [`scan_library`] walks the folders and scans each take in parallel (the fast scan of
//!    `core::anim::scan`: joints, frame count, frame rate and standing height, without parsing the
//!    motion), reporting [`Progress`] and stopping when its cancel flag is set. It returns data.
//! 2. [`plan_import`] compares the scan with the document as it is then: new takes become one
//!    undoable [`crate::core::doc::Edit`] (a batch of clip insertions) with unique names and a unit
//!    per clip; takes already in the project (same source file) are not added again, and those whose
//!    length changed are reported; bad files are listed with the importer's message.
//!
//! Then [`AnimStore`] loads the clips' animation on demand within a memory budget, and
//! [`sidecar`] keeps each clip's tags in a file next to its take. See docs/LIBRARY.md.

mod cliptags_fast;
mod json;
pub mod merge;
pub mod naming;
pub mod plan;
pub mod scan;
pub mod sidecar;
pub mod store;
pub mod synth;
pub mod units;
pub mod walk;

pub use naming::{NameRequest, base_name, unique_names};
pub use plan::{
    AddedClip, ChangedClip, FailedFile, FileWarning, ImportPlan, LinkedClip, MissingClip,
    UnchangedClip, animation_of, identify_sources, plan_import, source_for, source_path,
};
pub use scan::{Cancelled, ImportSettings, LibraryScan, Progress, ScannedFile, scan_library};
pub use sidecar::{
    Seen, SidecarBaseline, SidecarLoad, SidecarProject, SidecarSave, is_sidecar_project,
    is_unloaded_sidecar, load_any, load_any_with_baseline, load_sidecar_project,
    load_sidecar_project_text, move_sidecars_aside, save_sidecar_project,
    save_sidecar_project_or_changes, save_sidecar_project_since, sidecar_layout, sidecar_path,
};
pub use store::{
    AnimStore, ClipStatus, DEFAULT_BUDGET_BYTES, LoadedClip, StoreSettings, StoreSnapshot,
    clip_bytes,
};
pub use units::{UnitChoice, UnitSetting, choose_unit, describe_unit};
pub use walk::{TakeFile, Walk, find_takes, find_takes_until};
