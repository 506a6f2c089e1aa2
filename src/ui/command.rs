//! Every change the UI makes goes through an [`AppCommand`], queued by panels and shortcuts and
//! applied in one place ([`crate::ui::app::TaglaneApp::apply`]). Document edits inside them go
//! through the undo history.

use std::path::{Path, PathBuf};

use crate::core::doc::Edit;
use crate::core::tags::ClipId;

/// A selected range: (tag index, range on the current clip).
pub type Selected = (usize, crate::core::tags::Range);

/// A selected marker: (tag index, frame on the current clip).
pub type MarkerSel = (usize, u32);

/// Export formats of query results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryExportKind {
    /// The `taglane query --json` shape.
    Json,
    /// `clip,start,stop,seconds`.
    Csv,
}

/// Export formats for tag data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// The project's own JSON format.
    Json,
    /// `tag,clip,start,stop,start_s,stop_s`.
    Csv,
    /// One JSON file per clip, into a folder. Files of the export that exist there already are
    /// replaced only with `replace` (the app asks first).
    PerClipJson { replace: bool },
}

/// Something the user asked for that may first need "save your changes?".
#[derive(Debug, Clone, PartialEq)]
pub enum Guarded {
    New,
    Open(Option<PathBuf>),
    OpenDemo,
    /// Open the project an autosave belongs to and recover it there.
    Recover(crate::ui::recovery::AutosaveInfo),
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
    /// Loop playback over the selected ranges (their hull on the current clip); again to stop
    /// looping them.
    LoopSelection,
    /// Put the keyboard in the transport's "go to frame" box.
    FocusGoToFrame,
    SetSpeed(f32),
    SelectClip(ClipId),

    // Selection and range editing.
    /// Selects these ranges (and no markers).
    Select(Vec<Selected>),
    /// Selects these ranges and markers.
    SelectItems {
        ranges: Vec<Selected>,
        markers: Vec<MarkerSel>,
    },
    ToggleSelected(Selected),
    ToggleMarkerSelected(MarkerSel),
    /// Adds a marker: at `(tag, frame)`, or (`None`) at the playhead on the active lane.
    AddMarker(Option<MarkerSel>),
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
        /// The tag was just made by [`AppCommand::NewTag`]: this names it (the status line says
        /// so, not "renamed NewTag").
        new: bool,
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
    /// The memory budget of loaded animations, MiB (a preference).
    SetAnimBudget(u64),
    ShowHelp(bool),

    // Files. `None` paths ask with a file dialog.
    /// Asks "save your changes?" first when there are unsaved changes.
    Guarded(Guarded),
    /// The user chose "Don't save": go on without asking. The changes are dropped only if the
    /// action does replace the project (an Open that is cancelled or fails keeps them).
    GuardedDiscard(Guarded),
    /// "Save" in the unsaved-changes prompt: save (asking where when needed), then go on.
    SaveThen(Guarded),
    /// Ask for a path with the system dialog or the in-app browser, then run the request's command.
    AskPath(Box<PathRequest>),
    Save,
    SaveAs(Option<PathBuf>),
    /// Import animation files (as a library import: background, one undoable edit, a report).
    ImportAnimation(Option<Vec<PathBuf>>),
    /// Import every take of a folder and its subfolders in the background.
    ImportFolder(Option<PathBuf>),
    /// Stop the running import (nothing is added).
    CancelImport,
    /// Show or hide the last import's report.
    ShowImportReport(bool),
    /// Give the clips the last import found changed their files' frame counts.
    UpdateChangedClips,
    /// How imports choose clip units.
    SetImportUnits(crate::core::library::UnitSetting),
    /// Set the unit of these clips (`None`: the file format's convention).
    SetClipUnits {
        clips: Vec<ClipId>,
        unit_cm: Option<f32>,
    },
    /// Set these clips' units from their skeletons' standing height.
    GuessClipUnits(Vec<ClipId>),
    ImportTags(Option<PathBuf>),
    Export(ExportKind, Option<PathBuf>),
    Relink {
        clip: ClipId,
        path: Option<PathBuf>,
    },
    /// Put this autosave (another session's) into its project: the open one when it is that
    /// project and has no changes of its own; otherwise through "save your changes?", then that
    /// project opened afresh.
    RecoverAutosave(crate::ui::recovery::AutosaveInfo),
    /// Delete this autosave (another session's).
    DiscardAutosave(crate::ui::recovery::AutosaveInfo),
    /// Rename these stale sidecars (a sidecar-mode save left them: their clips would come back on
    /// the next open) to `*.removed`.
    MoveSidecarsAside(Vec<PathBuf>),
    /// Keep these stale sidecars and do not ask about them again while the project is open.
    KeepSidecars(Vec<PathBuf>),

    // Query panel.
    /// Show a result range: switch to its clip, playhead to its start.
    QueryJump {
        clip: ClipId,
        range: crate::core::tags::Range,
    },
    /// Export the query result; `None` asks for a file.
    QueryExport {
        kind: QueryExportKind,
        path: Option<PathBuf>,
    },
    /// Cut the query result into BVH files in a background thread; `None` asks for a folder.
    /// Files of the cut that already exist there are replaced only with `replace` (the app asks
    /// first); a clip's source take never is.
    QueryCut {
        dir: Option<PathBuf>,
        replace: bool,
    },
    /// Export the chosen compression candidate as `.tlc` files: clip `only` or every clip, into
    /// `dir` (`None` asks for a folder; a folder chosen once is kept). Files that exist there
    /// already are replaced only with `replace` (the app asks first).
    CompressionExport {
        only: Option<ClipId>,
        dir: Option<PathBuf>,
        replace: bool,
    },
    /// The folder compressed clips are exported to (`None` asks for one).
    SetCompressionExportDir(Option<PathBuf>),

    // Find similar.
    /// A request to the "Find similar" tool (`crate::ui::similar`).
    Similar(SimilarCommand),
    /// Loop playback over these frames of the current clip (`None`: the whole clip).
    SetLoopRange(Option<crate::core::tags::Range>),
}

impl AppCommand {
    /// The command with the path(s) a file dialog returned filled in; `None` for a command that
    /// takes no path (or for no paths).
    pub fn with_paths(self, paths: Vec<PathBuf>) -> Option<AppCommand> {
        let first = paths.first().cloned()?;
        Some(match self {
            AppCommand::Guarded(Guarded::Open(None)) => {
                AppCommand::Guarded(Guarded::Open(Some(first)))
            }
            AppCommand::GuardedDiscard(Guarded::Open(None)) => {
                AppCommand::GuardedDiscard(Guarded::Open(Some(first)))
            }
            AppCommand::SaveAs(None) => AppCommand::SaveAs(Some(first)),
            AppCommand::ImportAnimation(None) => AppCommand::ImportAnimation(Some(paths)),
            AppCommand::ImportFolder(None) => AppCommand::ImportFolder(Some(first)),
            AppCommand::ImportTags(None) => AppCommand::ImportTags(Some(first)),
            AppCommand::Export(kind, None) => AppCommand::Export(kind, Some(first)),
            AppCommand::Relink { clip, path: None } => AppCommand::Relink {
                clip,
                path: Some(first),
            },
            AppCommand::QueryExport { kind, path: None } => AppCommand::QueryExport {
                kind,
                path: Some(first),
            },
            AppCommand::QueryCut { dir: None, replace } => AppCommand::QueryCut {
                dir: Some(first),
                replace,
            },
            AppCommand::CompressionExport {
                only,
                dir: None,
                replace,
            } => AppCommand::CompressionExport {
                only,
                dir: Some(first),
                replace,
            },
            AppCommand::SetCompressionExportDir(None) => {
                AppCommand::SetCompressionExportDir(Some(first))
            }
            _ => return None,
        })
    }
}

/// What is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    /// One existing file.
    Open,
    /// One or more existing files.
    OpenMany,
    /// A file to write (may exist: replacing it is confirmed).
    Save,
    /// A folder.
    Folder,
}

/// A request for a path, and the command that receives it (answered by `ui::file_dialog`).
#[derive(Debug, Clone, PartialEq)]
pub struct PathRequest {
    pub title: String,
    pub kind: PathKind,
    /// `(name, extensions)`; extensions lower case, without the dot. Empty: every file.
    pub filters: Vec<(String, Vec<String>)>,
    /// Suggested file name for [`PathKind::Save`].
    pub file_name: String,
    /// Receives the path(s) through [`AppCommand::with_paths`].
    pub then: AppCommand,
    /// Queued after `then` (e.g. the action a "Save" in the unsaved-changes prompt was for).
    pub after: Option<Box<AppCommand>>,
}

impl PathRequest {
    pub fn new(title: &str, kind: PathKind, then: AppCommand) -> Self {
        Self {
            title: title.to_owned(),
            kind,
            filters: Vec::new(),
            file_name: String::new(),
            then,
            after: None,
        }
    }

    pub fn filter(mut self, name: &str, extensions: &[&str]) -> Self {
        self.filters.push((
            name.to_owned(),
            extensions.iter().map(|e| e.to_ascii_lowercase()).collect(),
        ));
        self
    }

    pub fn file_name(mut self, name: &str) -> Self {
        self.file_name = name.to_owned();
        self
    }

    pub fn after(mut self, cmd: AppCommand) -> Self {
        self.after = Some(Box::new(cmd));
        self
    }

    /// True when `path` passes the filters (folders always do).
    pub fn accepts(&self, path: &Path) -> bool {
        if self.filters.is_empty() {
            return true;
        }
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        self.filters.iter().any(|(_, exts)| exts.contains(&ext))
    }
}

/// What the "Find similar" tool (`crate::ui::similar`) can be asked to do (keys, menus, its tab,
/// its lanes).
#[derive(Debug, Clone, PartialEq)]
pub enum SimilarCommand {
    /// Search for the moments most like the selected range (or mark in to the playhead) in every
    /// clip of the project.
    Find,
    /// Stop the running search (the previous results stay).
    Cancel,
    /// Show match `i`: switch to its clip, the playhead at its start (and loop it when set).
    Select(usize),
    /// Show the next (`true`) or previous match, wrapping around.
    Step(bool),
    /// A range of the tool's lanes was clicked at `frame` of `clip`.
    SelectAt { clip: ClipId, frame: u32 },
    /// Add the matches `indices` to the tag named `tag` (created when missing), one undo step.
    Accept { indices: Vec<usize>, tag: String },
    /// Forget the results.
    Clear,
    /// Bring the tool's tab to the front (the status bar's note of a running search).
    Show,
}

impl SimilarCommand {
    /// Commands that bring the tool's tab to the front.
    pub fn shows_panel(&self) -> bool {
        matches!(
            self,
            SimilarCommand::Find | SimilarCommand::Step(_) | SimilarCommand::Show
        )
    }
}
