//! Scanning the takes of an import on every core: the walk, then the fast scan of each file
//! (`core::anim::scan`) in parallel with rayon, reporting progress and stopping when cancelled.
//!
//! Nothing here touches a document: the result is plain data that [`super::plan_import`] turns
//! into one edit of whatever the document is when the scan ends. A UI runs the scan on a
//! background thread and polls or receives [`Progress`].

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::units::UnitSetting;
use super::walk::{FileId, TakeFile, Walk, find_takes_until};
use crate::core::anim::{FileScan, ImportError, ImportOptions, scan_animation};

/// Settings of a library import.
///
/// Takes are scanned with the default import options (no frame dropped, glTF resampled at
/// 30 fps), the options [`crate::core::source::load`] uses when a clip is shown, so the frame
/// counts in the project match the loaded animation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImportSettings {
    /// How each clip's unit is chosen.
    pub units: UnitSetting,
    /// Worker threads; `None` uses every core (rayon's global pool).
    pub jobs: Option<usize>,
}

/// How far a scan is. Sent after the walk and after each file.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Progress {
    pub files_done: usize,
    pub files_total: usize,
    pub bytes_done: u64,
    pub bytes_total: u64,
    /// Time since the scan started.
    pub elapsed: Duration,
}

impl Progress {
    /// Estimated time left, from the bytes per second so far; `None` before any byte is done.
    pub fn eta(&self) -> Option<Duration> {
        if self.bytes_done == 0 || self.elapsed.is_zero() {
            return None;
        }
        let rate = self.bytes_done as f64 / self.elapsed.as_secs_f64();
        let left = self.bytes_total.saturating_sub(self.bytes_done) as f64;
        Some(Duration::from_secs_f64(left / rate))
    }
}

/// One scanned take.
#[derive(Debug, Clone, PartialEq)]
pub struct ScannedFile {
    pub file: TakeFile,
    /// The scan, or why the file cannot be imported (the importer's message with file and place).
    pub result: Result<FileScan, ImportError>,
}

/// Everything a scan found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LibraryScan {
    /// Absolute, normalised roots.
    pub roots: Vec<PathBuf>,
    /// Every take, in walk order.
    pub files: Vec<ScannedFile>,
    /// Files that are not takes.
    pub ignored: Vec<PathBuf>,
    /// Folders that could not be read.
    pub problems: Vec<String>,
    /// Unit setting the scan was made with (used by the plan).
    pub units: UnitSetting,
    pub elapsed: Duration,
    /// File identities of a project's clip sources, read where the scan ran
    /// ([`super::identify_sources`]) so that [`super::plan_import`] need not read them itself
    /// (`None`: no file at that path). Empty unless asked for.
    pub source_ids: HashMap<PathBuf, Option<FileId>>,
}

impl LibraryScan {
    /// Total size of the takes in bytes.
    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.file.bytes).sum()
    }
}

/// The scan was cancelled; nothing is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the import was cancelled")]
pub struct Cancelled;

/// Walks `roots` and scans every take on `settings.jobs` threads. `progress` is called from the
/// worker threads after each file (keep it cheap); `cancel` is checked for each folder of the walk
/// and before each file: once set, the files in flight finish and the scan returns [`Cancelled`].
pub fn scan_library(
    roots: &[PathBuf],
    settings: &ImportSettings,
    progress: &(dyn Fn(&Progress) + Sync),
    cancel: &AtomicBool,
) -> Result<LibraryScan, Cancelled> {
    let started = Instant::now();
    let walk = find_takes_until(roots, cancel);
    if cancel.load(Ordering::Relaxed) {
        return Err(Cancelled);
    }
    let files = walk.files.len();
    let run = || scan_walk(walk, settings, progress, cancel, started);
    let scan = match settings.jobs {
        Some(n) => match rayon::ThreadPoolBuilder::new()
            .num_threads(crate::core::limits::workers(n, files))
            .build()
        {
            Ok(pool) => pool.install(run),
            // No thread could be started: the global pool still works.
            Err(_) => run(),
        },
        None => run(),
    }?;
    Ok(LibraryScan {
        units: settings.units,
        elapsed: started.elapsed(),
        ..scan
    })
}

fn scan_walk(
    walk: Walk,
    settings: &ImportSettings,
    progress: &(dyn Fn(&Progress) + Sync),
    cancel: &AtomicBool,
    started: Instant,
) -> Result<LibraryScan, Cancelled> {
    let files_total = walk.files.len();
    let bytes_total = walk.bytes();
    progress(&Progress {
        files_done: 0,
        files_total,
        bytes_done: 0,
        bytes_total,
        elapsed: started.elapsed(),
    });
    let files_done = AtomicUsize::new(0);
    let bytes_done = AtomicU64::new(0);
    let options = ImportOptions::default();
    let scanned: Vec<Option<ScannedFile>> = walk
        .files
        .into_par_iter()
        // One file per task: files differ in size by orders of magnitude.
        .with_max_len(1)
        .map(|file| {
            if cancel.load(Ordering::Relaxed) {
                return None;
            }
            let result = scan_animation(&file.path, &options);
            let done = files_done.fetch_add(1, Ordering::Relaxed) + 1;
            let bytes = bytes_done.fetch_add(file.bytes, Ordering::Relaxed) + file.bytes;
            progress(&Progress {
                files_done: done,
                files_total,
                bytes_done: bytes,
                bytes_total,
                elapsed: started.elapsed(),
            });
            Some(ScannedFile { file, result })
        })
        .collect();
    if cancel.load(Ordering::Relaxed) {
        return Err(Cancelled);
    }
    Ok(LibraryScan {
        roots: walk.roots,
        files: scanned.into_iter().flatten().collect(),
        ignored: walk.ignored,
        problems: walk.problems,
        units: settings.units,
        elapsed: started.elapsed(),
        source_ids: HashMap::new(),
    })
}
