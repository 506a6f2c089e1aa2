//! `taglane compress` (one file, or many into a folder in parallel), `decompress` (original
//! frames, or resampled through the runtime decoder with `--fps`), `compare` and `export-acl`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, ValueEnum};

use crate::core::anim::{Clip, ImportOptions, Transform, load_animation, write_bvh};
use crate::core::compress::acl_sjson::to_acl_sjson;
use crate::core::compress::stream::{KeyStream, StreamPlayer, StreamSettings};
use crate::core::compress::{
    BitRate, CompressResult, CompressSettings, CompressedClip, Preset, RotationFormat,
};
use crate::core::io::write_atomic;

/// `--units` of compress, compare and export-acl: `None` (absent or `auto`) for the unit `auto`
/// chooses, else centimetres per unit.
fn units_arg(s: Option<&str>) -> Result<Option<f32>, String> {
    s.map_or(Ok(None), super::autotag::parse_units_arg)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RotationArg {
    Full,
    DropW,
    Smallest3_32,
    Smallest3_48,
}

impl RotationArg {
    pub(crate) fn format(self) -> RotationFormat {
        match self {
            RotationArg::Full => RotationFormat::Full,
            RotationArg::DropW => RotationFormat::DropW,
            RotationArg::Smallest3_32 => RotationFormat::SmallestThree32,
            RotationArg::Smallest3_48 => RotationFormat::SmallestThree48,
        }
    }

    /// The `--rotation` value that chooses `format` (`inspect` names a file's packing so).
    pub(crate) fn name_of(format: RotationFormat) -> String {
        Self::value_variants()
            .iter()
            .find(|a| a.format() == format)
            .and_then(|a| a.to_possible_value())
            .map_or_else(|| format!("{format:?}"), |v| v.get_name().to_owned())
    }
}

/// Settings flags shared by `compress`.
#[derive(Debug, Args)]
pub struct CompressArgs {
    /// Input animations (.bvh, .glb, .gltf). With several inputs (or when OUTPUT is a folder)
    /// each is compressed to OUTPUT/NAME.tlc, in parallel, and every clip of a file that holds
    /// several to OUTPUT/NAME.CLIP.tlc; into one OUTPUT file, the first clip (or `--clip`).
    #[arg(required = true, num_args = 1..)]
    pub inputs: Vec<PathBuf>,
    /// Only the clip of this name (a glTF file's animation); an input without it is an error.
    #[arg(long)]
    pub clip: Option<String>,
    /// Output compressed clip (.tlc), or a folder for several inputs (created if missing).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Threads for several inputs (default: every core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Automatic bit widths under this error (cm at 3 cm from each joint). Default 0.01.
    #[arg(long, conflicts_with_all = ["bits", "preset", "settings"])]
    pub error_cm: Option<f32>,
    /// Fixed bit width for every track: 0 (each track constant over each segment, at the middle of
    /// its range there), 3..=16, or 32 (the raw float).
    #[arg(long, conflicts_with_all = ["preset", "settings"])]
    pub bits: Option<u8>,
    /// Rotation packing.
    #[arg(long, value_enum, conflicts_with_all = ["preset", "settings"])]
    pub rotation: Option<RotationArg>,
    /// Frames per segment (0 = one segment for the whole clip). Default 16.
    #[arg(long, conflicts_with_all = ["preset", "settings"])]
    pub segment_frames: Option<u16>,
    /// Keep one frame in N (destructive). Default 1.
    #[arg(long, conflicts_with_all = ["preset", "settings"])]
    pub frame_step: Option<u16>,
    /// A named preset (auto, auto-clip-range, fixed16, fixed12-segments, smallest3-48,
    /// smallest3-32, full-quat16, raw, decimate2).
    #[arg(long, conflicts_with = "settings")]
    pub preset: Option<String>,
    /// A JSON settings file (fields of `CompressSettings`; missing fields take their defaults,
    /// but `bits` is whole: `{"auto": {"error_cm": E}}` or `{"fixed": {...}}` with all three widths).
    #[arg(long)]
    pub settings: Option<PathBuf>,
    /// What one file unit is: auto, cm, m, mm, in, cmu (5.644 cm) or a number of cm. Default: auto,
    /// as `import` and `inspect` choose it (a BVH skeleton made human-sized, a glTF in metres).
    #[arg(long)]
    pub units: Option<String>,
    /// Print a machine-readable report on stdout.
    #[arg(long, value_enum)]
    pub report: Option<ReportFormat>,
}

#[derive(Debug, Args)]
pub struct DecompressArgs {
    /// Compressed clip (.tlc).
    pub input: PathBuf,
    /// Output BVH.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Sample the clip through the runtime decoder at this many frames per second (frame k at
    /// time k / F, up to the clip's duration) instead of writing its original frames.
    #[arg(long)]
    pub fps: Option<f32>,
    /// Write lengths in the source file's units (as the .tlc records them) instead of
    /// centimetres.
    #[arg(long)]
    pub source_units: bool,
    /// Replace a file already at the output (kept as OUT.bak); without it, an existing output
    /// is refused and nothing is written.
    #[arg(long)]
    pub overwrite: bool,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Input animation (.bvh, .glb, .gltf).
    pub input: PathBuf,
    /// The clip of this name (a glTF file's animation; default: the first).
    #[arg(long)]
    pub clip: Option<String>,
    /// A candidate from a JSON settings file (repeatable).
    #[arg(long)]
    pub settings: Vec<PathBuf>,
    /// A candidate in automatic mode under this error in cm (repeatable).
    #[arg(long)]
    pub error_cm: Vec<f32>,
    /// A candidate from a named preset (repeatable).
    #[arg(long)]
    pub preset: Vec<String>,
    /// A key-reduced time-sorted stream candidate under this error in cm (repeatable).
    #[arg(long)]
    pub stream_error_cm: Vec<f32>,
    /// Jump frame interval of the stream candidates, frames.
    #[arg(long, default_value_t = 60)]
    pub jump_frames: u32,
    /// What one file unit is: auto, cm, m, mm, in, cmu (5.644 cm) or a number of cm. Default: auto,
    /// as `import` and `inspect` choose it (a BVH skeleton made human-sized, a glTF in metres).
    #[arg(long)]
    pub units: Option<String>,
    /// Print one JSON array instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExportAclArgs {
    /// Input animation (.bvh, .glb, .gltf).
    pub input: PathBuf,
    /// The clip of this name (a glTF file's animation; default: the first).
    #[arg(long)]
    pub clip: Option<String>,
    /// Output ACL SJSON clip (.acl.sjson).
    #[arg(short, long)]
    pub output: PathBuf,
    /// What one file unit is: auto, cm, m, mm, in, cmu (5.644 cm) or a number of cm. Translations are
    /// written in cm. Default: auto, as `import` and `inspect` choose it.
    #[arg(long)]
    pub units: Option<String>,
}

/// Where a warning goes: stderr, or through the progress bar of a batch (written over the bar,
/// a warning of one worker was cut by the bar's next redraw).
type Warn<'a> = &'a (dyn Fn(String) + Sync);

/// Writes a warning to stderr.
fn to_stderr(m: String) {
    say!("{m}");
}

/// The clips of `path` (only the one named `only` when given), in file order; an error names
/// the file, and for a missing name the clips the file holds. Warnings go to `warn`.
fn load_clips(
    path: &Path,
    unit_cm: Option<f32>,
    only: Option<&str>,
    warn: Warn<'_>,
) -> Result<Vec<Clip>, String> {
    load_clips_keeping(path, unit_cm, only, false, warn)
}

/// [`load_clips`]; with `first_only`, the first clip alone is kept before its unit is chosen (so
/// only the clip that is used is said).
fn load_clips_keeping(
    path: &Path,
    unit_cm: Option<f32>,
    only: Option<&str>,
    first_only: bool,
    warn: Warn<'_>,
) -> Result<Vec<Clip>, String> {
    let options = ImportOptions {
        unit_cm,
        ..ImportOptions::default()
    };
    let imported = load_animation(path, &options).map_err(|e| e.to_string())?;
    for w in &imported.warnings {
        warn(format!("taglane: warning: {}: {w}", path.display()));
    }
    let mut clips = imported.clips;
    if clips.is_empty() {
        return Err(format!("{}: the file holds no animation", path.display()));
    }
    if let Some(name) = only {
        let Some(i) = clips.iter().position(|c| c.name == name) else {
            let names: Vec<String> = clips.iter().map(|c| format!("{:?}", c.name)).collect();
            return Err(format!(
                "{}: no clip named {name:?}; the file holds {}",
                path.display(),
                names.join(", ")
            ));
        };
        clips = vec![clips.swap_remove(i)];
    } else if first_only && clips.len() > 1 {
        let names: Vec<String> = clips.iter().map(|c| format!("{:?}", c.name)).collect();
        warn(format!(
            "taglane: warning: {} holds {} clips ({}); using the first (choose one with --clip)",
            path.display(),
            clips.len(),
            names.join(", ")
        ));
        clips.truncate(1);
    }
    // No unit asked: the one `import` and `inspect` choose; a choice in doubt is said.
    if unit_cm.is_none() {
        for clip in &mut clips {
            let (line, confident) = super::auto_unit_choice(path, clip);
            if !confident {
                warn(format!("taglane: warning: {line}"));
            }
        }
    }
    Ok(clips)
}

/// One clip of `path`: the one named `only`, else the first (with a warning naming the others
/// when there are several).
fn load_clip(path: &Path, unit_cm: Option<f32>, only: Option<&str>) -> Result<Clip, String> {
    let mut clips = load_clips_keeping(path, unit_cm, only, true, &to_stderr)?;
    Ok(clips.swap_remove(0))
}

/// A file name part for a clip name: as the app names an exported clip
/// ([`crate::core::io::sanitize_file_name`]), `clip` for an empty name.
fn file_part(name: &str) -> String {
    let s = crate::core::io::sanitize_file_name(name);
    if s.is_empty() { "clip".into() } else { s }
}

fn settings_from_file(path: &Path) -> Result<CompressSettings, String> {
    let bytes =
        crate::core::limits::read_limited(path, crate::core::limits::MAX_SETTINGS_FILE_BYTES)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "{}: byte {}: expected UTF-8 text (a JSON settings file)",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })?;
    // A UTF-8 byte order mark (written by some Windows editors) is skipped.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    // serde reads a struct from an array too (its fields in order): `["full"]` would set the
    // first field silently. Settings are an object.
    let body = text.trim_start();
    if body.starts_with('[') {
        let before = &text[..text.len() - body.len()];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        return Err(format!(
            "{}: line {line}, column {column}: expected a JSON object of settings ({{\"bits\": ..., ...}}), found an array",
            path.display()
        ));
    }
    let s: CompressSettings = serde_json::from_str(text).map_err(|e| {
        // The place is given first, as every reader gives it.
        let (line, column, what) = crate::core::json::syntax_place(&e);
        // The enum forms, which serde's wording ("unit variant", "struct variant") does not say.
        let hint = if what.contains("variant") {
            "; `bits` is {\"auto\": {\"error_cm\": E}} or {\"fixed\": {\"rotation_bits\": R, \"translation_bits\": T, \"scale_bits\": S}}, `rotation_format` one of \"full\", \"drop_w\", \"smallest_three32\", \"smallest_three48\""
        } else if !text.trim_start().starts_with('{') {
            "; expected a JSON object of settings ({\"bits\": ..., ...})"
        } else {
            ""
        };
        format!("{}: line {line}, column {column}: {what}{hint}", path.display())
    })?;
    s.validate()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(s)
}

fn preset(name: &str) -> Result<CompressSettings, String> {
    Preset::from_name(name)
        .map(Preset::settings)
        .ok_or_else(|| {
            let names: Vec<&str> = Preset::ALL.iter().map(|p| p.name()).collect();
            format!(
                "unknown preset {name:?}; expected one of {}",
                names.join(", ")
            )
        })
}

/// Settings from `compress` flags. Errors are usage errors (exit 2) except an unreadable
/// settings file (exit 1).
fn compress_settings(args: &CompressArgs) -> Result<CompressSettings, (u8, String)> {
    if let Some(p) = &args.settings {
        return settings_from_file(p).map_err(|e| (1, e));
    }
    if let Some(name) = &args.preset {
        return preset(name).map_err(|e| (2, e));
    }
    let mut s = CompressSettings::default();
    if let Some(e) = args.error_cm {
        s.bits = BitRate::Auto { error_cm: e };
    }
    if let Some(b) = args.bits {
        s.bits = BitRate::Fixed {
            rotation_bits: b,
            translation_bits: b,
            scale_bits: b,
        };
    }
    if let Some(r) = args.rotation {
        s.rotation_format = r.format();
    }
    if let Some(f) = args.segment_frames {
        s.segment_frames = f;
    }
    if let Some(f) = args.frame_step {
        s.frame_step = f;
    }
    // Settings built from flags: an error names the flag, not the settings file's JSON path.
    s.validate().map_err(|e| {
        let flags = [
            ("bits.fixed.rotation_bits", "--bits"),
            ("bits.fixed.translation_bits", "--bits"),
            ("bits.fixed.scale_bits", "--bits"),
            ("bits.auto.error_cm", "--error-cm"),
            ("segment_frames", "--segment-frames"),
            ("frame_step", "--frame-step"),
        ];
        let named = flags
            .iter()
            .find_map(|(path, flag)| e.strip_prefix(path).map(|rest| format!("{flag}{rest}")));
        (2, named.unwrap_or(e))
    })?;
    Ok(s)
}

/// The error figures of a report: at frames and between frames (ACL's metric, cm).
fn error_json(e: &crate::core::compress::ErrorReport) -> serde_json::Value {
    let b = &e.between;
    serde_json::json!({
        "max_error_cm": e.max_error_cm,
        "mean_error_cm": e.mean_error_cm,
        "p99_error_cm": e.p99_error_cm,
        "worst": {
            "joint": e.worst.joint_name,
            "frame": e.worst.frame,
            "error_cm": e.worst.error_cm,
        },
        "between": {
            "max_error_cm": b.max_error_cm,
            "mean_error_cm": b.mean_error_cm,
            "scattered_max_error_cm": b.golden_max_error_cm,
            "samples": b.samples,
            "worst": {
                "joint": b.worst.joint_name,
                "frame_position": b.worst.position,
                "time_s": b.worst.time_s,
                "error_cm": b.worst.error_cm,
            },
        },
        "overall_max_error_cm": e.overall_max_cm(),
    })
}

/// The automatic budget of `settings`, and whether the result is within it at and between
/// frames; `None` for fixed widths (no budget).
fn budget(settings: &CompressSettings, r: &CompressResult) -> Option<(f32, bool)> {
    match settings.bits {
        crate::core::compress::BitRate::Auto { error_cm } => {
            Some((error_cm, r.error.overall_max_cm() <= error_cm))
        }
        _ => None,
    }
}

/// A warning for a result over its budget: what was reached and what limits it.
fn over_budget_warning(
    input: &Path,
    settings: &CompressSettings,
    r: &CompressResult,
) -> Option<String> {
    let (budget_cm, within) = budget(settings, r)?;
    if within {
        return None;
    }
    use crate::core::compress::RotationFormat;
    let fixed = match settings.rotation_format {
        RotationFormat::SmallestThree32 => Some("smallest3-32"),
        RotationFormat::SmallestThree48 => Some("smallest3-48"),
        RotationFormat::Full | RotationFormat::DropW => None,
    };
    let why = if let Some(name) = fixed {
        format!(
            "the rotation format {name} packs rotations in a fixed width the budget does not choose"
        )
    } else if settings.frame_step > 1 {
        "decimation drops frames the budget does not see".to_owned()
    } else {
        "the widest slot (32-bit float) cannot do better".to_owned()
    };
    Some(format!(
        "{}: the budget of {budget_cm} cm is not met: {:.5} cm ({why})",
        input.display(),
        r.error.overall_max_cm()
    ))
}

fn report_json(
    input: &Path,
    clip: &str,
    output: &Path,
    settings: &CompressSettings,
    r: &CompressResult,
) -> serde_json::Value {
    let mut v = error_json(&r.error);
    let (budget_cm, within_budget) = match budget(settings, r) {
        Some((b, w)) => (Some(b), Some(w)),
        None => (None, None),
    };
    let extra = serde_json::json!({
        "budget_cm": budget_cm,
        "within_budget": within_budget,
        "input": input.display().to_string(),
        "clip": clip,
        "output": output.display().to_string(),
        "unit_cm": r.clip.unit_cm(),
        "raw_bytes": r.raw_bytes,
        "compressed_bytes": r.compressed_bytes,
        "resident_bytes": r.clip.resident_bytes(),
        "ratio": r.ratio,
        "compress_ms": r.compress_ms,
    });
    if let (Some(v), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
        v.extend(extra.clone());
    }
    v
}

fn report_line(input: &Path, clip: Option<&str>, output: &Path, r: &CompressResult) -> String {
    format!(
        "{}{} -> {} (units {}): {} -> {} bytes, ratio {:.2}, error {}, {:.0} ms",
        input.display(),
        clip.map(|c| format!(" [{c}]")).unwrap_or_default(),
        output.display(),
        crate::core::library::describe_unit(r.clip.unit_cm()),
        r.raw_bytes,
        r.compressed_bytes,
        r.ratio,
        r.error.summary(),
        r.compress_ms
    )
}

/// True for the first bytes of a `.tlc` file.
fn is_tlc(head: &[u8]) -> bool {
    head.starts_with(&crate::core::compress::format::MAGIC)
}

/// Compresses one clip and writes it; the error names the file (and the clip of a file that
/// holds several).
fn compress_clip(
    input: &Path,
    clip: &Clip,
    several: bool,
    output: &Path,
    settings: &CompressSettings,
) -> Result<CompressResult, String> {
    let r = crate::core::compress::compress(clip, settings).map_err(|e| {
        if several {
            format!("{}: clip {:?}: {e}", input.display(), clip.name)
        } else {
            format!("{}: {e}", input.display())
        }
    })?;
    // Checked again just before writing: a batch takes minutes, and a file may appear meanwhile.
    super::check_replaceable(output, "a compressed clip (.tlc)", is_tlc)?;
    write_atomic(output, r.clip.bytes(), false)
        .map_err(|e| format!("{}: cannot write: {e}", output.display()))?;
    Ok(r)
}

pub fn compress(args: CompressArgs) -> ExitCode {
    let unit_cm = match units_arg(args.units.as_deref()) {
        Ok(u) => u,
        Err(e) => return super::fail_usage(e),
    };
    let settings = match compress_settings(&args) {
        Ok(s) => s,
        Err((1, e)) => return super::fail_input(e),
        Err((_, e)) => return super::fail_usage(e),
    };
    if args.jobs == Some(0) {
        return super::fail_usage("--jobs must be at least 1");
    }
    let to_folder = args.inputs.len() > 1
        || args.output.is_dir()
        || args.output.as_os_str().to_string_lossy().ends_with('/');
    if to_folder {
        return compress_many(&args, unit_cm, &settings);
    }
    let input = &args.inputs[0];
    if let Err(e) = super::check_output(
        input,
        &args.output,
        "a compressed clip (.tlc)",
        &["bvh", "glb", "gltf"],
    )
    .and_then(|()| super::check_replaceable(&args.output, "a compressed clip (.tlc)", is_tlc))
    {
        return super::fail_usage(e);
    }
    let r = load_clip(input, unit_cm, args.clip.as_deref()).and_then(|clip| {
        let r = compress_clip(input, &clip, false, &args.output, &settings)?;
        Ok((clip.name, r))
    });
    let (name, r) = match r {
        Ok(r) => r,
        Err(e) => return super::fail_input(e),
    };
    if let Some(w) = over_budget_warning(input, &settings, &r) {
        say!("taglane: warning: {w}");
    }
    if args.report == Some(ReportFormat::Json) {
        super::emit(&format!(
            "{}\n",
            report_json(input, &name, &args.output, &settings, &r)
        ));
    } else {
        super::emit(&format!("{}\n", report_line(input, None, &args.output, &r)));
    }
    ExitCode::SUCCESS
}

/// One output of a batch, or the input that failed and why.
type Outcome = Result<Written, (PathBuf, String)>;

/// A clip compressed and written by a batch.
struct Written {
    input: PathBuf,
    clip: String,
    /// Whether its file holds several clips (the clip is then named in the report line).
    several: bool,
    output: PathBuf,
    result: CompressResult,
}

/// Every clip of `input` (or the `--clip` one) compressed into `dir`: `STEM.tlc` for a file of
/// one clip, `STEM.CLIP.tlc` for each clip of a file of several. `claimed` holds the outputs
/// written so far in this batch (and by which input), so that no output is written twice.
fn compress_input(
    input: &Path,
    stem_out: &Path,
    only: Option<&str>,
    unit_cm: Option<f32>,
    settings: &CompressSettings,
    claimed: &std::sync::Mutex<std::collections::HashMap<String, String>>,
    warn: Warn<'_>,
) -> Vec<Outcome> {
    let clips = match load_clips(input, unit_cm, only, warn) {
        Ok(c) => c,
        Err(e) => return vec![Err((input.to_path_buf(), e))],
    };
    let several = clips.len() > 1;
    let stem = stem_out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = stem_out.parent().unwrap_or(Path::new("."));
    let mut outcomes = Vec::new();
    for clip in &clips {
        let out = if several {
            dir.join(format!("{stem}.{}.tlc", file_part(&clip.name)))
        } else {
            stem_out.to_path_buf()
        };
        let what = if several {
            format!("{} [{}]", input.display(), clip.name)
        } else {
            input.display().to_string()
        };
        // A name already written (two clips of one name, or another input's output): refused.
        if several {
            let mut claimed = claimed.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(first) = claimed.get(&folded(&out)) {
                outcomes.push(Err((
                    input.to_path_buf(),
                    format!(
                        "{what}: skipped: {} is already the output of {first}",
                        out.display()
                    ),
                )));
                continue;
            }
            claimed.insert(folded(&out), what.clone());
        }
        outcomes.push(
            compress_clip(input, clip, several, &out, settings)
                .map(|result| Written {
                    input: input.to_path_buf(),
                    clip: clip.name.clone(),
                    several,
                    output: out,
                    result,
                })
                .map_err(|e| (input.to_path_buf(), e)),
        );
    }
    outcomes
}

/// An output's name as the outputs are told apart: in lower case, as a file system that ignores
/// case sees it (on macOS or Windows `Walk.tlc` and `walk.tlc` are one file: the second replaced
/// the first, and both were reported written).
fn folded(out: &Path) -> String {
    out.file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

/// `compress IN... -o OUTDIR`: every input on a pool of `--jobs` threads (the segments of each
/// clip share the pool), a progress bar on stderr, failures listed with their reason; exit 1 when
/// any input failed (the others are still compressed).
fn compress_many(
    args: &CompressArgs,
    unit_cm: Option<f32>,
    settings: &CompressSettings,
) -> ExitCode {
    let dir = &args.output;
    if let Err(e) = std::fs::create_dir_all(dir) {
        return super::fail_input(format!("{}: cannot create the folder: {e}", dir.display()));
    }
    // Output names: the input's file stem; a second input with the same stem is refused rather
    // than overwriting the first one's output. The clips of a file of several are named when
    // it is read (`compress_input`).
    let mut seen: std::collections::HashMap<String, PathBuf> = std::collections::HashMap::new();
    let jobs: Vec<(PathBuf, Result<PathBuf, String>)> = args
        .inputs
        .iter()
        .map(|input| {
            let stem = input
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "clip".into());
            let out = dir.join(format!("{stem}.tlc"));
            let target = match seen.insert(folded(&out), input.clone()) {
                Some(first) => Err(format!(
                    "{}: skipped: {} is already the output of {}",
                    input.display(),
                    out.display(),
                    first.display()
                )),
                None => Ok(out),
            };
            (input.clone(), target)
        })
        .collect();
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(n) = args.jobs {
        // Not capped by the files: the segments of each clip share the pool too.
        builder = builder.num_threads(n.clamp(1, crate::core::limits::MAX_WORKERS));
    }
    let pool = match builder.build() {
        Ok(p) => p,
        Err(e) => return super::fail_input(format!("cannot start the worker threads: {e}")),
    };
    let bar = indicatif::ProgressBar::new(jobs.len() as u64);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {pos}/{len} {wide_msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    // The outputs taken so far, and by which input: the stems above, then each clip's output as
    // it is written.
    let claimed = std::sync::Mutex::new(
        seen.into_iter()
            .map(|(out, input)| (out, input.display().to_string()))
            .collect::<std::collections::HashMap<String, String>>(),
    );
    // Warnings of the workers above the bar, not over it.
    let warn = |m: String| bar.suspend(|| to_stderr(m));
    let results: Vec<Outcome> = pool.install(|| {
        use rayon::prelude::*;
        jobs.par_iter()
            .map(|(input, target)| {
                let r = match target {
                    Ok(out) => compress_input(
                        input,
                        out,
                        args.clip.as_deref(),
                        unit_cm,
                        settings,
                        &claimed,
                        &warn,
                    ),
                    Err(e) => vec![Err((input.clone(), e.clone()))],
                };
                // The file's name: a long folder would push it out of the bar.
                let name = input.file_name().unwrap_or(input.as_os_str());
                bar.set_message(name.to_string_lossy().into_owned());
                bar.inc(1);
                r
            })
            .collect::<Vec<_>>()
            .into_iter()
            .flatten()
            .collect()
    });
    bar.finish_and_clear();
    let mut reports = Vec::new();
    let mut failed = 0usize;
    for r in &results {
        match r {
            Ok(w) => {
                if let Some(m) = over_budget_warning(&w.input, settings, &w.result) {
                    say!("taglane: warning: {m}");
                }
                if args.report == Some(ReportFormat::Json) {
                    reports.push(report_json(
                        &w.input, &w.clip, &w.output, settings, &w.result,
                    ));
                } else {
                    let clip = w.several.then_some(w.clip.as_str());
                    super::emit(&format!(
                        "{}\n",
                        report_line(&w.input, clip, &w.output, &w.result)
                    ));
                }
            }
            Err((input, e)) => {
                failed += 1;
                say!("taglane: {e}");
                if args.report == Some(ReportFormat::Json) {
                    reports.push(serde_json::json!({
                        "input": input.display().to_string(),
                        "error": e,
                    }));
                }
            }
        }
    }
    if args.report == Some(ReportFormat::Json) {
        super::emit(&format!("{}\n", serde_json::Value::Array(reports)));
    }
    let ok = results.len() - failed;
    say!(
        "taglane: compressed {ok} clip(s) of {} file(s) into {}{}",
        jobs.len(),
        dir.display(),
        if failed > 0 {
            format!("; {failed} failed (listed above)")
        } else {
            String::new()
        }
    );
    // A pipeline must see a take that did not compress: 1 when any failed (the others are
    // written all the same).
    if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

pub fn decompress(args: DecompressArgs) -> ExitCode {
    if let Err(e) = super::check_output(&args.input, &args.output, "BVH", &["tlc", "glb", "gltf"]) {
        return super::fail_usage(e);
    }
    let max = crate::core::limits::MAX_TLC_FILE_BYTES;
    let bytes = match crate::core::limits::read_limited(&args.input, max) {
        Ok(b) => b,
        Err(e) => return super::fail_input(format!("{}: cannot read: {e}", args.input.display())),
    };
    let clip = match CompressedClip::from_bytes(bytes) {
        Ok(c) => c,
        Err(e) => return super::fail_input(format!("{}: {e}", args.input.display())),
    };
    if args.output.is_dir() {
        return super::fail_usage(format!(
            "{}: is a folder; expected a file name for the BVH (nothing written)",
            args.output.display()
        ));
    }
    // A BVH already there may be a take: never replaced without being asked (and then kept).
    if !args.overwrite && std::fs::symlink_metadata(&args.output).is_ok() {
        return super::fail_usage(format!(
            "{}: the file exists; expected a new file, or --overwrite to replace it (kept as {}.bak)",
            args.output.display(),
            args.output.display()
        ));
    }
    let own_rate = clip.fps();
    let decoded = match args.fps {
        None => clip.to_clip(),
        // The clip's own rate (within 1 part in 100,000: a BVH's frame time of 0.0333333 is
        // 30.00003 fps in the file) writes its own frames.
        Some(fps) if (f64::from(fps) / f64::from(own_rate) - 1.0).abs() < 1e-5 => clip.to_clip(),
        Some(fps) => {
            let (lo, hi) = (crate::core::limits::MIN_FPS, crate::core::limits::MAX_FPS);
            if !(fps.is_finite() && f64::from(fps) >= lo && f64::from(fps) <= hi) {
                return super::fail_usage(format!(
                    "--fps {fps}: expected a rate of {lo} to {hi} frames per second (what a BVH file can hold)"
                ));
            }
            // Frame k at time k / fps, every frame up to the clip's duration: a frame short of it
            // by 1 part in 100,000 of the output (at least a thousandth of a frame) counts, since
            // the duration comes from a rate the file rounded (a CMU take's frame time 0.0083333
            // is 120.0005 fps: 1,001 frames at 60 fps lost their last frame to an absolute
            // tolerance). Counted and checked against the limits as a float: a huge rate makes a
            // count no integer holds.
            let duration = clip.frame_count().saturating_sub(1) as f64 / f64::from(own_rate);
            let span = duration * f64::from(fps);
            let frames = (span + (span * 1e-5).clamp(1e-3, 0.5)).floor() + 1.0;
            let joints = clip.joint_count();
            let max = crate::core::limits::MAX_FRAMES;
            let max_samples = crate::core::limits::MAX_JOINT_SAMPLES;
            if !(frames <= max as f64 && frames * joints as f64 <= max_samples as f64) {
                return super::fail_usage(format!(
                    "--fps {fps}: {}: {} s at {fps} fps is {frames} frames of {joints} joints; expected at most {max} frames and {max_samples} joint samples",
                    args.input.display(),
                    clip.duration_s()
                ));
            }
            clip.resample(fps, frames as usize)
        }
    };
    let decoded = if args.source_units {
        decoded
    } else {
        decoded.in_centimetres()
    };
    let text = write_bvh(&decoded);
    // A second --overwrite keeps the first backup too (the original take, say).
    if args.overwrite {
        match crate::core::io::shift_backup(&args.output) {
            Ok(Some(to)) => say!("taglane: the earlier backup is now {}", to.display()),
            Ok(None) => {}
            Err(e) => {
                return super::fail_input(format!(
                    "{}: cannot keep the backup: {e}",
                    args.output.display()
                ));
            }
        }
    }
    if let Err(e) = write_atomic(&args.output, text.as_bytes(), args.overwrite) {
        return super::fail_input(format!("{}: cannot write: {e}", args.output.display()));
    }
    ExitCode::SUCCESS
}

pub fn compare(args: CompareArgs) -> ExitCode {
    let unit_cm = match units_arg(args.units.as_deref()) {
        Ok(u) => u,
        Err(e) => return super::fail_usage(e),
    };
    let mut candidates: Vec<(String, CompressSettings)> = Vec::new();
    for p in &args.settings {
        match settings_from_file(p) {
            Ok(s) => candidates.push((p.display().to_string(), s)),
            Err(e) => return super::fail_input(e),
        }
    }
    for &e in &args.error_cm {
        let s = CompressSettings::auto(e);
        if let Err(m) = s.validate() {
            return super::fail_usage(format!("--error-cm {e}: {m}"));
        }
        candidates.push((format!("auto {e} cm"), s));
    }
    for name in &args.preset {
        match preset(name) {
            Ok(s) => candidates.push((format!("preset {name}"), s)),
            Err(e) => return super::fail_usage(e),
        }
    }
    if candidates.is_empty() && args.stream_error_cm.is_empty() {
        return super::fail_usage(
            "compare: give at least one candidate (--settings, --error-cm, --preset or --stream-error-cm)",
        );
    }
    let clip = match load_clip(&args.input, unit_cm, args.clip.as_deref()) {
        Ok(c) => c,
        Err(e) => return super::fail_input(e),
    };
    let mut rows = Vec::new();
    for (name, s) in &candidates {
        let r = match crate::core::compress::compress(&clip, s) {
            Ok(r) => r,
            Err(e) => return super::fail_input(format!("{}: {name}: {e}", args.input.display())),
        };
        let mut row = error_json(&r.error);
        let extra = serde_json::json!({
            "candidate": name,
            "compressed_bytes": r.compressed_bytes,
            "raw_bytes": r.raw_bytes,
            "resident_bytes": r.clip.resident_bytes(),
            "ratio": r.ratio,
            "decode_us": crate::core::compress::decode_us_per_pose(&r.clip),
            "compress_ms": r.compress_ms,
        });
        if let (Some(row), Some(extra)) = (row.as_object_mut(), extra.as_object()) {
            row.extend(extra.clone());
        }
        rows.push(row);
    }
    for &e in &args.stream_error_cm {
        let settings = StreamSettings {
            error_cm: e,
            jump_frames: args.jump_frames,
            ..StreamSettings::default()
        };
        let stream = match KeyStream::encode(&clip, &settings) {
            Ok(s) => s,
            Err(m) => return super::fail_usage(format!("--stream-error-cm {e}: {m}")),
        };
        let rep = stream.report(&clip, settings.shell_cm);
        // Decode cost: playing forward one frame at a time.
        let mut player = StreamPlayer::new(&stream);
        let mut pose = vec![Transform::IDENTITY; clip.joint_count()];
        let start = Instant::now();
        for f in 0..clip.frame_count as u32 {
            player.advance_to(&stream, f);
            player.sample(&stream, f as f32, &mut pose);
            std::hint::black_box(&pose);
        }
        let us = start.elapsed().as_secs_f64() * 1e6 / clip.frame_count.max(1) as f64;
        let mut row = error_json(&rep.error);
        let extra = serde_json::json!({
            "candidate": format!("stream {e} cm, jump {}", args.jump_frames),
            "compressed_bytes": rep.total_bytes,
            "raw_bytes": crate::core::compress::raw_size_bytes(&clip),
            "ratio": rep.ratio,
            "decode_us": us,
            "jump_bytes": rep.jump_bytes,
            "mean_seek_entries": rep.mean_seek_entries,
        });
        if let (Some(row), Some(extra)) = (row.as_object_mut(), extra.as_object()) {
            row.extend(extra.clone());
        }
        rows.push(row);
    }
    if args.json {
        super::emit(&format!("{}\n", serde_json::Value::Array(rows)));
        return ExitCode::SUCCESS;
    }
    // The columns line up whatever the candidates' names (a JSON value ignores widths: each
    // cell is a plain number or text).
    let name = |r: &serde_json::Value| r["candidate"].as_str().unwrap_or("").to_owned();
    let w = rows
        .iter()
        .map(|r| crate::core::text::width(&name(r)))
        .max()
        .unwrap_or(0)
        .max(32);
    let mut out = format!(
        "{} {:>10} {:>8} {:>10} {:>12} {:>10} {:>10} {:>10}\n",
        crate::core::text::pad_right("candidate", w),
        "bytes",
        "ratio",
        "max cm",
        "between cm",
        "mean cm",
        "p99 cm",
        "decode us"
    );
    for r in &rows {
        let _ = writeln!(
            out,
            "{} {:>10} {:>8.2} {:>10.5} {:>12.5} {:>10.6} {:>10.5} {:>10.3}",
            crate::core::text::pad_right(&name(r), w),
            r["compressed_bytes"].as_u64().unwrap_or(0),
            r["ratio"].as_f64().unwrap_or(0.0),
            r["max_error_cm"].as_f64().unwrap_or(0.0),
            r["between"]["max_error_cm"].as_f64().unwrap_or(0.0),
            r["mean_error_cm"].as_f64().unwrap_or(0.0),
            r["p99_error_cm"].as_f64().unwrap_or(0.0),
            r["decode_us"].as_f64().unwrap_or(0.0),
        );
    }
    super::emit(&out);
    ExitCode::SUCCESS
}

pub fn export_acl(args: ExportAclArgs) -> ExitCode {
    let unit_cm = match units_arg(args.units.as_deref()) {
        Ok(u) => u,
        Err(e) => return super::fail_usage(e),
    };
    if let Err(e) = super::check_output(
        &args.input,
        &args.output,
        "an ACL clip (SJSON)",
        &["bvh", "glb", "gltf", "tlc"],
    )
    .and_then(|()| {
        super::check_replaceable(&args.output, "an ACL clip (SJSON)", |head| {
            head.starts_with(crate::core::compress::acl_sjson::HEADER_START.as_bytes())
        })
    }) {
        return super::fail_usage(e);
    }
    let clip = match load_clip(&args.input, unit_cm, args.clip.as_deref()) {
        Ok(c) => c,
        Err(e) => return super::fail_input(e),
    };
    if clip.frame_count == 0 {
        return super::fail_input(format!(
            "{}: the clip has no frame; expected at least one to export",
            args.input.display()
        ));
    }
    let text = to_acl_sjson(&clip, crate::core::compress::settings::DEFAULT_SHELL_CM);
    if let Err(e) = write_atomic(&args.output, text.as_bytes(), false) {
        return super::fail_input(format!("{}: cannot write: {e}", args.output.display()));
    }
    ExitCode::SUCCESS
}
