//! Every change the UI makes goes through an [`AppCommand`], queued by panels and shortcuts and
//! applied in one place ([`crate::ui::app::TaglaneApp::apply`]). Document edits inside them go
//! through the undo history.

use std::path::PathBuf;

use crate::core::doc::Edit;
use crate::core::tags::ClipId;
use crate::ui::timeline::model::Selected;

/// Export formats for tag data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// The project's own JSON format.
    Json,
    /// `tag,clip,start,stop,start_s,stop_s`.
    Csv,
    /// One JSON file per clip, into a folder.
    PerClipJson,
}

/// Something the user asked for that may first need "save your changes?".
#[derive(Debug, Clone, PartialEq)]
pub enum Guarded {
    New,
    Open(Option<PathBuf>),
    OpenDemo,
    Quit,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AppCommand {
    /// A document edit, recorded in the history; `select` replaces the selection afterwards.
    Edit {
        edit: Edit,
        label: String,
        select: Option<Vec<Selected>>,
    },
    /// A document edit merged with the previous one of the same key (e.g. a colour drag).
    EditKeyed {
        edit: Edit,
        label: String,
        key: u64,
    },
    Undo,
    Redo,

    // Playback and navigation.
    SetPlayhead(f64),
    TogglePlay,
    Stop,
    StepFrames(i64),
    /// Jump to the next (`true`) or previous range edge of the visible lanes.
    JumpEdge(bool),
    JumpStart,
    JumpEnd,
    ToggleLoop,
    SetSpeed(f32),
    SelectClip(ClipId),

    // Selection and range editing.
    Select(Vec<Selected>),
    ToggleSelected(Selected),
    SelectAll,
    SetActiveTag(Option<usize>),
    Copy,
    /// Paste at the playhead: into the copied tags, or all into the active lane.
    Paste {
        into_active: bool,
    },
    DeleteSelection,
    SplitAtPlayhead,
    MarkIn,
    MarkOut,

    /// A range of a read-only (query result) lane was clicked.
    ExtraRangeClicked {
        lane: String,
        range: crate::core::tags::Range,
    },

    // Tags.
    NewTag,
    StartRename(usize),
    RenameTag {
        index: usize,
        name: String,
    },
    MoveTag {
        index: usize,
        up: bool,
    },
    AskDeleteTag(usize),
    DeleteTag(usize),
    ToggleHidden(String),
    ToggleSolo(String),
    ToggleGroup(String),

    // View.
    FitView,
    /// Zoom the timeline by a factor around its centre.
    Zoom(f32),
    SetDarkMode(bool),
    ShowHelp(bool),

    // Files. `None` paths ask with a file dialog.
    Guarded(Guarded),
    Save,
    SaveAs(Option<PathBuf>),
    ImportAnimation(Option<Vec<PathBuf>>),
    ImportTags(Option<PathBuf>),
    Export(ExportKind, Option<PathBuf>),
    Relink {
        clip: ClipId,
        path: Option<PathBuf>,
    },
    RecoverAutosave,
    DiscardAutosave,

    // Query panel.
    /// Show a result range: switch to its clip, playhead to its start.
    QueryJump {
        clip: ClipId,
        range: crate::core::tags::Range,
    },
    /// Export the query result; `None` asks for a file.
    QueryExport {
        kind: crate::ui::query::QueryExportKind,
        path: Option<PathBuf>,
    },
    /// Cut the query result into BVH files in a background thread; `None` asks for a folder.
    QueryCut {
        dir: Option<PathBuf>,
    },
}
