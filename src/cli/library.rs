//! `taglane import`: folders of takes into a project, on every core, with a progress bar.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::core::library::sidecar::sidecar_project_text;
use crate::core::library::{
    ImportSettings, Progress, Seen, SidecarProject, UnitSetting, is_sidecar_project,
    load_any_with_baseline, load_sidecar_project, load_sidecar_project_text, plan_import,
    save_sidecar_project_since, scan_library, source_for, walk,
};
use crate::core::project::Project;

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Folders of takes (searched recursively for .bvh, .glb and .gltf) or take files.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The project file to create, or to import into when it exists (new takes are added, changed
    /// ones reported).
    #[arg(short = 'o', long = "output")]
    pub project: PathBuf,
    /// Unit of the takes: auto (per clip, from the skeleton's height), cm, m, mm, in, cmu (5.644 cm,
    /// the CMU conversions) or centimetres per unit.
    #[arg(long, default_value = "auto")]
    pub units: UnitSetting,
    /// Worker threads (default: every core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Keep each clip's tags in a sidecar file next to its take (TAKE.tags.json); the project
    /// then lists only folders, tags and saved queries.
    #[arg(long)]
    pub sidecar: bool,
    /// Give clips whose take changed length the new frame count (ranges past the end are clipped).
    #[arg(long)]
    pub update_changed: bool,
    /// Also write the full report (every added clip with its unit) to this file.
    #[arg(long)]
    pub report: Option<PathBuf>,
}

pub fn import(args: ImportArgs) -> ExitCode {
    if args.jobs == Some(0) {
        return super::fail_usage("--jobs must be at least 1");
    }
    if let Some(report) = &args.report
        && let Err(e) = check_report_path(report, &args.project, &args.dirs)
    {
        return super::fail_usage(e);
    }
    // `NAME.tags.json` is a take's sidecar (`walk.bvh.tags.json`) or a per-clip export: a project
    // written there would be taken for one, or written over a take's tags.
    let project_name = args
        .project
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if project_name.ends_with(crate::core::library::walk::SIDECAR_SUFFIX) {
        return super::fail_usage(format!(
            "{}: a name ending in {} is a take's sidecar; expected a project name such as \
             NAME.taglane.json (nothing imported)",
            args.project.display(),
            crate::core::library::walk::SIDECAR_SUFFIX
        ));
    }
    // A take (or a compressed clip) is no project: refused as one, not read as broken JSON.
    for input in args.dirs.iter().filter(|_| !args.project.is_dir()) {
        if let Err(e) = super::check_output(
            input,
            &args.project,
            "a project",
            super::autotag::TAKE_EXTENSIONS,
        ) {
            return super::fail_usage(e.replace("(nothing written)", "(nothing imported)"));
        }
    }
    let exists = args.project.exists();
    let was_sidecar = exists && is_sidecar_project(&args.project);
    // A single file: what it held when read, so that the save merges a change made during the
    // scan instead of writing over it.
    let mut file_seen = None;
    let sidecar = args.sidecar || was_sidecar;
    // Takes whose sidecar cannot be read stay out of the import (saving would write over it).
    let mut bad_takes = Vec::new();
    // What the sidecars held when read: the save compares with it.
    let mut sidecars = Default::default();
    // A new sidecar project takes the sidecars already beside its takes (another project's over
    // the same folders, or those of a project file that was lost), as opening it would: they are
    // the takes' tags, and the save compares with them instead of writing over them.
    let adopt = args.sidecar && !exists;
    let loaded = if was_sidecar || adopt {
        let load = if adopt {
            let base = crate::core::io::resolve_link(&args.project)
                .parent()
                .map(walk::absolute);
            // A take file given alone: its folder, which the save adds to the project for it.
            let mut folders: Vec<String> = Vec::new();
            for d in &args.dirs {
                let d = walk::absolute(d);
                let folder = if d.is_dir() {
                    Some(d)
                } else {
                    d.parent().map(Path::to_path_buf)
                };
                if let Some(f) = folder.map(|f| source_for(&f, base.as_deref()))
                    && !folders.contains(&f)
                {
                    folders.push(f);
                }
            }
            let project = SidecarProject {
                folders,
                ..SidecarProject::default()
            };
            load_sidecar_project_text(&args.project, &sidecar_project_text(&project))
        } else {
            load_sidecar_project(&args.project)
        };
        load.map(|mut l| {
            // The takes without a sidecar are what this import adds: no warning about them.
            l.untracked.clear();
            bad_takes = l.bad_takes.clone();
            let mut warnings: Vec<String> = l.warnings.iter().map(ToString::to_string).collect();
            warnings.extend(l.problem_messages());
            sidecars = l.baseline;
            (l.doc, warnings)
        })
    } else if exists {
        load_any_with_baseline(&args.project).map(|(doc, w, seen)| {
            if let Seen::File(hash) = seen {
                file_seen = Some(hash);
            }
            (doc, w.iter().map(ToString::to_string).collect::<Vec<_>>())
        })
    } else {
        Ok(Default::default())
    };
    let mut project = match loaded {
        Ok((doc, warnings)) => {
            for w in warnings {
                say!("taglane: warning: {}: {w}", args.project.display());
            }
            Project {
                doc,
                path: Some(args.project.clone()),
                sidecars,
                file_seen,
                // Another import may create the file during this one's scan: merged at the save.
                file_was_absent: !exists,
                ..Project::default()
            }
        }
        Err(e) => return super::fail_input(e),
    };
    let settings = ImportSettings {
        units: args.units,
        jobs: args.jobs,
    };
    let bar = progress_bar();
    let show = |p: &Progress| {
        if bar.length() != Some(p.bytes_total) {
            bar.set_length(p.bytes_total);
        }
        bar.set_position(p.bytes_done);
        bar.set_message(format!("{}/{} files", p.files_done, p.files_total));
    };
    let never = AtomicBool::new(false);
    let scan = match scan_library(&args.dirs, &settings, &show, &never) {
        Ok(s) => s,
        Err(e) => return super::fail_input(e),
    };
    bar.finish_and_clear();
    let mut scan = scan;
    let found = scan.files.len();
    scan.files.retain(|f| {
        let bad = bad_takes.contains(&f.file.path);
        if bad {
            say!(
                "taglane: {}: skipped: its sidecar cannot be read (see the warning above)",
                f.file.path.display()
            );
        }
        !bad
    });
    let unreadable_sidecars = found - scan.files.len();
    let plan = plan_import(&project.doc, project.base_dir().as_deref(), &scan);
    // What the import found (printed, and written to `--report`) once the project is saved, or
    // before the error when nothing can be imported: "added N" is never followed by a failed save.
    // True when a report was asked for and could not be written (the command then exits 1,
    // after the import).
    let report = || -> bool {
        {
            use std::io::Write as _;
            // As `say!`: a stderr nobody reads is no reason to panic.
            let text = plan.report_text_updating(false, args.update_changed);
            let _ = std::io::stderr().write_all(text.as_bytes());
        }
        if let Some(path) = &args.report
            && let Err(e) = crate::core::io::write_atomic(
                path,
                plan.report_text_updating(true, args.update_changed)
                    .as_bytes(),
                false,
            )
        {
            say!("taglane: {}: cannot write the report: {e}", path.display());
            return true;
        }
        false
    };
    // A failure after the scan: that nothing the scan found was imported, and why.
    let not_imported = |e: String| {
        let n = plan.added.len();
        let mut what = if n > 0 {
            format!(" ({n} clip(s) found to add were not added)")
        } else {
            String::new()
        };
        if args.update_changed && !plan.changed.is_empty() {
            what += &format!(
                ", and the {} changed take(s) were not updated",
                plan.changed.len()
            );
        }
        super::fail_input(format!("nothing imported{what}: {e}"))
    };
    let found = plan.added.len() + plan.unchanged.len() + plan.changed.len();
    if found == 0 {
        report();
        return super::fail_input(format!(
            "nothing imported: no readable take in {}",
            super::path_list(&args.dirs)
        ));
    }
    if !plan.edit.is_empty()
        && let Err(e) = project.apply(plan.edit.clone(), "import folders")
    {
        return not_imported(format!("{}: {e}", args.project.display()));
    }
    if args.update_changed {
        // What the shorter takes cut off, said before it is gone (the project's previous file
        // is kept as .bak by the save).
        for line in plan.update_changed_losses(&project.doc) {
            say!("taglane: --update-changed: {line}");
        }
        let update = plan.update_changed_edit(&project.doc);
        if !update.is_empty()
            && let Err(e) = project.apply(update, "update changed takes")
        {
            return not_imported(format!("{}: {e}", args.project.display()));
        }
    }
    // Takes or folders that could not be read: the rest is imported, and the command exits 1
    // (as a batch `compress` does), so that a pipeline sees what was left out.
    let partial = || {
        let takes = plan.failed.len() + unreadable_sidecars;
        let folders = plan.problems.len();
        if takes + folders == 0 {
            return false;
        }
        say!(
            "taglane: {takes} take(s) and {folders} folder(s) could not be read (named above): the others were imported; exit 1"
        );
        true
    };
    let converting = sidecar && !was_sidecar;
    if exists && !converting && !project.history.is_dirty() {
        let unwritten = report();
        return if unwritten | partial() {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        };
    }
    let result = if sidecar {
        // No other taglane save of this project between the reads below and the writes: the
        // lock is held to the end of this block.
        let lock = crate::core::io::lock_for_save(&args.project)
            .map_err(|e| format!("{}: cannot save: {e}", args.project.display()));
        // Turning a single file into a sidecar project: a change made to the file during the
        // scan is merged first, as a save to it would, instead of being written over.
        // A sidecar project another import created during the scan is no conversion: its
        // folders are kept (`save_sidecar`).
        let now_sidecar = was_sidecar || is_sidecar_project(&args.project);
        let merged = match &lock {
            Err(e) => Err(e.clone()),
            Ok(_) if !now_sidecar => project.merge_file_changes(),
            Ok(_) => Ok(false),
        };
        let saved = merged.and_then(|merged| {
            if merged {
                say!(
                    "taglane: {} changed on disk during the import: merged (tags frame by frame) before saving",
                    args.project.display()
                );
            }
            save_sidecar(&project, &args.project, now_sidecar, &scan.roots)
        });
        drop(lock);
        saved
    } else {
        project.save_to(&args.project).map(|_| {
            if !project.merged_from_disk.is_empty() {
                say!(
                    "taglane: {} changed on disk during the import: merged (tags frame by frame) before saving",
                    args.project.display()
                );
            }
        })
    };
    match result {
        Ok(()) => {
            let unwritten = report();
            if unwritten | partial() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => not_imported(e),
    }
}

/// `--report`: a text file that is not the project, a tag document, a take, a compressed clip,
/// one of the import's inputs or a folder (a mistyped path would otherwise replace it for good).
fn check_report_path(report: &Path, project: &Path, inputs: &[PathBuf]) -> Result<(), String> {
    if report.is_dir() {
        return Err(format!(
            "{}: --report is a folder; expected a file path for the report (nothing imported)",
            report.display()
        ));
    }
    let name = report
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if super::same_file(report, project)
        || name.ends_with(".taglane.json")
        || name.ends_with(".tags.json")
    {
        return Err(format!(
            "{}: --report names the project or a tag document; expected another file for the report (nothing imported)",
            report.display()
        ));
    }
    for input in inputs {
        super::check_output(input, report, "the report", super::autotag::TAKE_EXTENSIONS)
            .map_err(|e| format!("--report {e}"))?;
    }
    // An earlier report is replaced; any other file there (notes, say) is kept.
    super::check_replaceable(report, "an import report", |head| {
        head.starts_with(b"added ")
    })
    .map_err(|e| format!("--report {e}"))?;
    // Its folder takes a file: the report is written after the project is saved, too late to
    // refuse the import.
    crate::core::io::check_writable(report)
        .map_err(|e| format!("--report {e} (nothing imported)"))?;
    Ok(())
}

/// Saves in sidecar mode; the import's folders join the project's.
fn save_sidecar(
    project: &Project,
    path: &Path,
    was_sidecar: bool,
    roots: &[PathBuf],
) -> Result<(), String> {
    let mut folders = if was_sidecar {
        load_sidecar_project(path)
            .map_err(|e| e.to_string())?
            .folders
    } else {
        Vec::new()
    };
    let base = project.base_dir().map(|d| walk::absolute(&d));
    let resolve = |f: &str| match &base {
        Some(b) if !Path::new(f).is_absolute() => walk::normalize(&b.join(f)),
        _ => walk::normalize(Path::new(f)),
    };
    for root in roots.iter().filter(|r| r.is_dir()) {
        // A root inside a listed folder is already walked.
        if folders.iter().any(|f| root.starts_with(resolve(f))) {
            continue;
        }
        folders.push(source_for(root, base.as_deref()));
    }
    // A sidecar project compares with what it read (the scan may have taken minutes): sidecars
    // changed on disk meanwhile are never written over. A project becoming one has seen none of
    // the sidecars already beside its takes (another project's): one that differs from what it
    // would write stops the save.
    let mut baseline = project.sidecars.clone();
    if !was_sidecar && let Some(hash) = project.file_seen {
        // The single file it replaces, as merged into the document.
        baseline.set_hash(path, hash);
    }
    let report =
        save_sidecar_project_since(path, &project.doc, Some(&folders), Some(&mut baseline))
            .map_err(|e| e.to_string())?;
    if let Some(first) = report.kept.first() {
        say!(
            "taglane: kept {} sidecar(s) changed on disk during the import, e.g. {}",
            report.kept.len(),
            first.display()
        );
    }
    for f in &report.folders_added {
        say!("taglane: added the folder {f} to the project");
    }
    if !report.stale.is_empty() {
        say!(
            "taglane: {} sidecar(s) belong to no clip of the project and were left in place, so those clips come back the next time it opens (rename a sidecar to *.removed to drop its clip), e.g. {}",
            report.stale.len(),
            report.stale[0].display()
        );
    }
    Ok(())
}

/// A progress bar on stderr (files, MB, ETA), hidden when stderr is not a terminal.
pub(crate) fn progress_bar() -> ProgressBar {
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(0), target);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {decimal_bytes}/{decimal_total_bytes} {msg} ETA {eta}",
    ) {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}
