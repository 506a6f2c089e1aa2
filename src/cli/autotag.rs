//! `taglane autotag`: propose tags from the motion of animation files and write them as a tag
//! document (the project format), one clip per animation.
//!
//! Files are tagged in parallel (`--jobs`, default: every core); a progress bar shows on stderr when
//! it is a terminal. Exit codes: 0 when every clip of every file was tagged; 1 when a file could
//! not be read or a clip could not be tagged (each named on stderr with the reason; the document
//! holds the others, and is not written when there are none); 2 on bad usage or a bad rule file.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use crate::core::anim::{ImportOptions, load_animation};
use crate::core::autotag::{AutotagSettings, Prepared, Proposal, known_tags, parse_settings};
use crate::core::tags::{ClipInfo, Tag, TagDocument};

#[derive(Debug, Args)]
pub struct AutotagArgs {
    /// Animation files (.bvh, .glb, .gltf); every clip of each is tagged.
    #[arg(required = true)]
    pub anims: Vec<PathBuf>,
    /// What one file unit is: cm, m, mm, in, cmu (5.644 cm), a number of cm, or auto (as `import`
    /// chooses it: the unit that makes a BVH skeleton 150-200 cm tall, a glTF's metres; reported
    /// on stderr).
    #[arg(long, default_value = "auto")]
    pub units: String,
    /// Autotag settings: custom rules and generator parameters (JSON, see docs/AUTOTAG.md). They
    /// are saved in the output document.
    #[arg(long)]
    pub rules: Option<PathBuf>,
    /// Only these tags, comma-separated (built-in tag names or rule tags).
    #[arg(long, value_delimiter = ',')]
    pub only: Option<Vec<String>>,
    /// Write the tag document to this file (`.taglane.json`); clip sources are made relative to it.
    /// A file already there is refused (it may be a project with tags of its own) unless
    /// `--overwrite` is given.
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
    /// Replace the file `--out` names when it exists; the old one is kept beside it as `OUT.bak`
    /// (an older backup moves to `OUT.bak.2`, `.bak.3`, ...; through a link, beside the file it
    /// names).
    #[arg(long, requires = "out")]
    pub overwrite: bool,
    /// Print the tag document as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Number of files tagged at once (default: one per core).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
}

/// Extensions of the files autotag and import read or that hold a clip: never one of their
/// outputs.
pub(crate) const TAKE_EXTENSIONS: &[&str] = &["bvh", "glb", "gltf", "tlc"];

/// `None` for `auto`, else centimetres per unit.
pub(crate) fn parse_units_arg(s: &str) -> Result<Option<f32>, String> {
    // The one reader of a unit word, `import`'s: every subcommand takes the same words.
    match s.parse::<crate::core::library::UnitSetting>() {
        Ok(crate::core::library::UnitSetting::Auto) => Ok(None),
        Ok(crate::core::library::UnitSetting::Fixed(cm)) => Ok(Some(cm)),
        Err(e) => Err(format!("--units: {e}")),
    }
}

/// `path` relative to the folder `base` (`..` where needed; absolute when the two share no folder
/// below the root), by the import's one rule (`library::source_for`).
fn relative_to(path: &Path, base: &Path) -> String {
    use crate::core::library::walk::absolute;
    crate::core::library::source_for(&absolute(path), Some(&absolute(base)))
}

/// Reads and checks the settings file; the error names the file and the JSON path.
fn read_settings_file(path: &Path) -> Result<AutotagSettings, String> {
    let shown = path.display();
    let bytes = crate::core::limits::read_limited(path, 16 << 20)
        .map_err(|e| format!("{shown}: cannot read the rule file: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "{shown}: byte {}: expected UTF-8 text, found an invalid byte sequence",
            e.utf8_error().valid_up_to()
        )
    })?;
    parse_settings(&text).map_err(|e| format!("{shown}: {e}"))
}

/// One tagged clip.
struct Tagged {
    /// Name of the clip inside its file (glTF files hold several).
    clip_name: String,
    frames: usize,
    fps: f32,
    unit_cm: f32,
    proposals: Vec<Proposal>,
}

/// What became of one input file: its clips (none when it could not be read), and the messages
/// for stderr (import warnings, unit guesses, files and clips skipped with the reason).
struct FileOutcome {
    clips: Vec<Tagged>,
    messages: Vec<String>,
    several: bool,
    /// The file, or clips of it, could not be tagged (named in `messages`).
    skipped: bool,
}

fn tag_file(
    path: &Path,
    unit_cm: Option<f32>,
    settings: &AutotagSettings,
    only: Option<&[String]>,
) -> FileOutcome {
    let shown = path.display();
    let mut out = FileOutcome {
        clips: Vec::new(),
        messages: Vec::new(),
        several: false,
        skipped: false,
    };
    // The output project stores each take's path as text (as `import` does): a path in another
    // encoding would name no file there.
    if path.to_str().is_none() {
        out.messages.push(format!(
            "skipped: {shown}: the path is not UTF-8 text, which a project stores to find its takes: rename the file (or its folders) to tag it"
        ));
        out.skipped = true;
        return out;
    }
    let options = ImportOptions {
        unit_cm,
        ..ImportOptions::default()
    };
    let imported = match load_animation(path, &options) {
        Ok(i) => i,
        Err(e) => {
            out.messages.push(format!("skipped: {e}"));
            out.skipped = true;
            return out;
        }
    };
    for w in &imported.warnings {
        out.messages.push(format!("{shown}: warning: {w}"));
    }
    if imported.clips.is_empty() {
        out.messages
            .push(format!("skipped: {shown}: the file holds no animation"));
        out.skipped = true;
    }
    out.several = imported.clips.len() > 1;
    for mut clip in imported.clips {
        if unit_cm.is_none() {
            out.messages.push(super::auto_unit(path, &mut clip));
        }
        let result = Prepared::new(&clip).and_then(|p| p.autotag(settings, only));
        match result {
            Ok(r) => {
                for w in &r.warnings {
                    out.messages.push(format!("{shown}: {w}"));
                }
                out.clips.push(Tagged {
                    clip_name: clip.name.clone(),
                    frames: clip.frame_count,
                    fps: clip.fps,
                    unit_cm: clip.unit_cm,
                    proposals: r.proposals,
                });
            }
            Err(e) => {
                out.messages.push(format!("skipped: {shown}: {e}"));
                out.skipped = true;
            }
        }
    }
    out
}

fn progress_bar(files: usize) -> ProgressBar {
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(files as u64), target);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} autotag [{bar:30}] {pos}/{len} files, {elapsed}, eta {eta} {msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

pub fn autotag_cmd(args: AutotagArgs) -> ExitCode {
    // Never over one of its own takes (`--overwrite` or not): a take replaced by JSON is lost
    // once the backup is rotated by the next run.
    if let Some(out) = &args.out {
        for input in &args.anims {
            if let Err(e) = super::check_output(input, out, "a tag document", TAKE_EXTENSIONS) {
                return super::fail_usage(e);
            }
        }
    }
    if let Some(out) = &args.out
        && out.is_dir()
    {
        return super::fail_usage(format!(
            "{}: is a folder; expected a file name for the document of proposals (nothing written)",
            out.display()
        ));
    }
    // The output holds only the proposals: a project there would lose its own tags.
    if let Some(out) = &args.out
        && !args.overwrite
        && std::fs::symlink_metadata(out).is_ok()
    {
        return super::fail_usage(format!(
            "{}: the file exists; autotag writes a new document of the proposals alone, which \
             would replace its clips and tags. Expected a new file, or --overwrite to replace it \
             (kept as {}.bak). To auto-tag an existing project, use the app's Auto-tag panel",
            out.display(),
            out.display()
        ));
    }
    let unit_cm = match parse_units_arg(&args.units) {
        Ok(u) => u,
        Err(e) => return super::fail_usage(e),
    };
    let settings = match &args.rules {
        None => AutotagSettings::default(),
        // A rule file that cannot be read or is invalid is an input file's error (exit 1).
        Some(path) => match read_settings_file(path) {
            Ok(s) => s,
            Err(e) => return super::fail_input(e),
        },
    };
    let only: Option<Vec<String>> = args.only.as_ref().map(|list| {
        list.iter()
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
            .collect()
    });
    let known = known_tags(&settings.rules);
    if let Some(only) = &only {
        if only.is_empty() {
            return super::fail_usage("--only: expected at least one tag name");
        }
        if let Some(bad) = only.iter().find(|t| !known.contains(t)) {
            return super::fail_usage(format!(
                "--only: unknown tag `{bad}`; known tags: {}",
                known.join(", ")
            ));
        }
    }
    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.map_or(0, |n| {
            crate::core::limits::workers(usize::from(n), args.anims.len())
        }))
        .build()
    {
        Ok(p) => p,
        Err(e) => return super::fail_usage(format!("--jobs: {e}")),
    };

    let bar = progress_bar(args.anims.len());
    let outcomes: Vec<FileOutcome> = pool.install(|| {
        args.anims
            .par_iter()
            .map(|path| {
                let outcome = tag_file(path, unit_cm, &settings, only.as_deref());
                bar.suspend(|| {
                    for m in &outcome.messages {
                        say!("taglane: {m}");
                    }
                });
                bar.inc(1);
                outcome
            })
            .collect()
    });
    bar.finish_and_clear();

    // The document, in input order.
    let out_dir = args
        .out
        .as_ref()
        .map(|o| o.parent().unwrap_or(Path::new("")).to_path_buf());
    let tag_names: Vec<&String> = known
        .iter()
        .filter(|t| only.as_ref().is_none_or(|o| o.contains(t)))
        .collect();
    let mut doc = TagDocument {
        autotag: args.rules.is_some().then(|| settings.clone()),
        ..Default::default()
    };
    let colors = doc.new_tag_colors(tag_names.len());
    doc.tags = tag_names
        .iter()
        .zip(colors)
        .map(|(name, color)| Tag {
            color: Some(color),
            ..Tag::new((*name).clone())
        })
        .collect();
    // Per clip, the tags its generators ran for (a rule whose joint the clip lacks is skipped,
    // with a warning on stderr): the summary marks the others instead of showing 0 ranges.
    let mut generated: Vec<Vec<String>> = Vec::new();
    let skipped = outcomes.iter().filter(|o| o.skipped).count();
    for (path, outcome) in args.anims.iter().zip(outcomes) {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        for t in outcome.clips {
            // `FILE#ANIMATION` for one animation of several, as the import names it and as a
            // project's clips load.
            let base = crate::core::library::base_name(
                &stem,
                outcome.several.then_some(t.clip_name.as_str()),
            );
            let mut name = base.clone();
            let mut k = 2;
            while doc.clips.iter().any(|c| c.name == name) {
                name = format!("{base}_{k}");
                k += 1;
            }
            let id = doc.clips.len() as u32;
            doc.clips.push(ClipInfo {
                name,
                frames: t.frames as u32,
                fps: t.fps,
                source: Some(match &out_dir {
                    Some(dir) => relative_to(path, dir),
                    None => path.display().to_string(),
                }),
                unit_cm: Some(t.unit_cm),
            });
            generated.push(t.proposals.iter().map(|p| p.tag.clone()).collect());
            for p in t.proposals {
                if let Some(tag) = doc.tags.iter_mut().find(|x| x.name == p.tag)
                    && !p.ranges.is_empty()
                {
                    tag.ranges.insert(id, p.ranges);
                }
            }
        }
    }
    if doc.clips.is_empty() {
        return super::fail_input("no clip could be tagged");
    }
    // An existing file there (`--overwrite`) is kept as `OUT.bak`; an earlier backup moves to
    // `OUT.bak.N` rather than being replaced.
    if let Some(out) = &args.out {
        match crate::core::io::shift_backup(out) {
            Ok(Some(to)) => say!("taglane: the earlier backup is now {}", to.display()),
            Ok(None) => {}
            Err(e) => {
                return super::fail_input(format!(
                    "{}: cannot keep the backup: {e}",
                    out.display()
                ));
            }
        }
        if let Err(e) = doc.save(out, true) {
            return super::fail_input(e);
        }
    }
    let text = if args.json {
        match doc.to_json_string() {
            Ok(text) => text,
            Err(e) => return super::fail_input(e),
        }
    } else {
        summary(&doc, &generated, args.out.as_deref())
    };
    super::emit(&text);
    if skipped > 0 {
        // The others are tagged; a pipeline still sees that something was left out.
        say!(
            "taglane: {skipped} file(s) not tagged, or not wholly (named above): the document holds the others; exit 1"
        );
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// Per clip: each tag's range count and frames, or `skipped` where its generator did not run on
/// the clip (`generated`: per clip, the tags that ran).
fn summary(doc: &TagDocument, generated: &[Vec<String>], out: Option<&Path>) -> String {
    // In terminal columns, at most the command line's widest column (a longer name is printed
    // whole, past it).
    let width = doc
        .tags
        .iter()
        .map(|t| crate::core::text::width(&crate::core::text::one_line(&t.name)))
        .max()
        .unwrap_or(0)
        .min(super::MAX_COLUMN_WIDTH);
    let mut text = String::new();
    for (c, clip) in doc.clips.iter().enumerate() {
        text.push_str(&format!(
            "{} ({} frames, {} fps)\n",
            clip.name, clip.frames, clip.fps
        ));
        for t in &doc.tags {
            let ran = generated.get(c).is_none_or(|g| g.contains(&t.name));
            if !ran {
                text.push_str(&format!(
                    "  {} skipped (see the warning above)\n",
                    crate::core::text::pad_right(&crate::core::text::one_line(&t.name), width),
                ));
                continue;
            }
            let list = t.ranges.get(&(c as u32)).unwrap_or(&[]);
            let frames: u32 = list.iter().map(|r| r.len()).sum();
            text.push_str(&format!(
                "  {} {:>5} ranges {:>8} frames\n",
                crate::core::text::pad_right(&crate::core::text::one_line(&t.name), width),
                list.len(),
                frames
            ));
        }
    }
    if let Some(out) = out {
        text.push_str(&format!("wrote {}\n", out.display()));
    }
    text
}
