//! `taglane inspect` (one file, or many in parallel) and `taglane sample`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::core::anim::{
    AnimFormat, Clip, ClipScan, ImportOptions, MixSettings, RotationInterp, SampleBuffer,
    SampleSettings, Transform, load_animation, local_to_model, mix, scan_animation,
};
use crate::core::library::{UnitSetting, choose_unit, find_takes};

/// Import options shared by `inspect` and `sample`.
#[derive(Debug, Args, Clone)]
pub struct ImportArgs {
    /// Centimetres per file unit (default: BVH 1.0, glTF 100.0; the CMU BVH files are about 5.644).
    /// Values stay in file units: `inspect` reports the unit and the height in cm, `sample --json`
    /// gives it as `unit_cm` beside the positions.
    #[arg(long)]
    pub unit_cm: Option<f32>,
    /// Drop the first frame (the synthetic T-pose of the CMU conversions). Never done by default.
    #[arg(long)]
    pub skip_first_frame: bool,
    /// Frames per second at which glTF animations are resampled. Default: each animation's own
    /// key rate (when its keys are not evenly spaced: the rate of most of its gaps, else 30).
    #[arg(long)]
    pub gltf_fps: Option<f32>,
}

impl ImportArgs {
    fn options(&self) -> Result<ImportOptions, String> {
        if let Some(u) = self.unit_cm
            && !crate::core::limits::unit_cm_ok(f64::from(u))
        {
            return Err(format!(
                "--unit-cm: {}",
                crate::core::limits::unit_cm_message(f64::from(u))
            ));
        }
        if let Some(fps) = self.gltf_fps
            && !(f64::from(fps) >= crate::core::limits::MIN_FPS && fps <= 10_000.0)
        {
            return Err(format!(
                "--gltf-fps must be from {} to 10000, found {fps}",
                crate::core::limits::MIN_FPS
            ));
        }
        Ok(ImportOptions {
            unit_cm: self.unit_cm,
            skip_first_frame: self.skip_first_frame,
            gltf_fps: self.gltf_fps,
        })
    }
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// Animation files (.bvh, .glb, .gltf) or compressed clips (.tlc), or folders searched
    /// recursively for both.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub import: ImportArgs,
    /// Print JSON: one object for one file, one line per file for several.
    #[arg(long)]
    pub json: bool,
    /// Worker threads for several files (default: every core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Read only what the summary needs (joints, frames, rate, unit guess) without importing the
    /// motion: much faster; malformed numbers are then only found by a full import.
    #[arg(long)]
    pub fast: bool,
}

#[derive(Debug, Args)]
pub struct SampleArgs {
    /// Animation file (.bvh, .glb, .gltf).
    pub file: PathBuf,
    /// Time in seconds (clamped to the clip).
    #[arg(long)]
    pub time: f32,
    /// A second clip to blend with.
    #[arg(long)]
    pub blend: Option<PathBuf>,
    /// Blend weight: 0 is the first clip, 1 the second.
    #[arg(long, default_value_t = 0.5)]
    pub weight: f32,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Which clip of a multi-clip file (glTF) to use, by name or index; default the first.
    #[arg(long)]
    pub clip: Option<String>,
    #[command(flatten)]
    pub import: ImportArgs,
}

pub fn inspect(args: InspectArgs) -> ExitCode {
    let options = match args.import.options() {
        Ok(o) => o,
        Err(e) => return super::fail_usage(e),
    };
    if args.jobs == Some(0) {
        return super::fail_usage("--jobs must be at least 1");
    }
    if let [file] = args.files.as_slice()
        && !file.is_dir()
    {
        // As one line of several: the object names its file, and an error is a line too.
        return match describe(file, &options, args.fast) {
            Ok(mut d) => {
                super::emit(&if args.json {
                    if let Some(obj) = d.json.as_object_mut() {
                        obj.insert("file".into(), file.display().to_string().into());
                    }
                    format!("{}\n", d.json)
                } else {
                    d.text
                });
                ExitCode::SUCCESS
            }
            Err(e) => {
                if args.json {
                    let line = serde_json::json!({"file": file.display().to_string(), "error": e});
                    super::emit(&format!("{line}\n"));
                }
                super::fail_input(e)
            }
        };
    }
    // Several files (or folders): in parallel, printed in order, one JSON line each.
    let mut files = Vec::new();
    let mut failed = 0usize;
    for f in &args.files {
        if f.is_dir() {
            let walk = find_takes(std::slice::from_ref(f));
            for p in &walk.problems {
                say!("taglane: {p}");
                failed += 1;
            }
            // The takes and the compressed clips of the folder (files the walk for takes lists
            // as not takes), in the order of their paths.
            let mut found: Vec<(PathBuf, u64)> =
                walk.files.into_iter().map(|t| (t.path, t.bytes)).collect();
            found.extend(walk.ignored.into_iter().filter(|p| is_tlc(p)).map(|p| {
                let bytes = std::fs::metadata(&p).map_or(0, |m| m.len());
                (p, bytes)
            }));
            found.sort_by(|a, b| a.0.cmp(&b.0));
            files.extend(found);
        } else {
            let bytes = std::fs::metadata(f).map_or(0, |m| m.len());
            files.push((f.clone(), bytes));
        }
    }
    if files.is_empty() {
        return super::fail_input(format!(
            "nothing to inspect: no take (.bvh, .glb, .gltf) or compressed clip (.tlc) in {}",
            super::path_list(&args.files)
        ));
    }
    let bar = super::library::progress_bar();
    bar.set_length(files.iter().map(|f| f.1).sum());
    let done = AtomicUsize::new(0);
    let total = files.len();
    let work = || {
        files
            .par_iter()
            .with_max_len(1)
            .map(|(path, bytes)| {
                let d = describe(path, &options, args.fast);
                bar.inc(*bytes);
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                bar.set_message(format!("{n}/{total} files"));
                d
            })
            .collect::<Vec<_>>()
    };
    let results = match args.jobs {
        Some(n) => match rayon::ThreadPoolBuilder::new()
            .num_threads(crate::core::limits::workers(n, files.len()))
            .build()
        {
            Ok(pool) => pool.install(work),
            Err(_) => work(),
        },
        None => work(),
    };
    bar.finish_and_clear();
    let mut out = String::new();
    for ((path, _), r) in files.iter().zip(results) {
        match r {
            Ok(mut d) => {
                if args.json {
                    if let Some(obj) = d.json.as_object_mut() {
                        obj.insert("file".into(), path.display().to_string().into());
                    }
                    let _ = writeln!(out, "{}", d.json);
                } else {
                    out.push_str(&d.text);
                }
            }
            Err(e) => {
                failed += 1;
                say!("taglane: {e}");
                if args.json {
                    let line = serde_json::json!({"file": path.display().to_string(), "error": e});
                    let _ = writeln!(out, "{line}");
                }
            }
        }
    }
    super::emit(&out);
    if failed > 0 {
        say!("taglane: {failed} of {total} file(s) could not be read");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// A compressed clip's name (`.tlc`, any case).
fn is_tlc(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("tlc"))
}

/// One file described: its JSON object and its text.
struct Described {
    json: serde_json::Value,
    text: String,
}

/// Describes a file: a full import, or the fast scan with `fast`; a compressed clip (`.tlc`)
/// by [`describe_tlc`]. The error names the file.
fn describe(path: &Path, options: &ImportOptions, fast: bool) -> Result<Described, String> {
    if is_tlc(path) {
        return describe_tlc(path, options);
    }
    let (format, clips, warnings) = if fast {
        let s = scan_animation(path, options).map_err(|e| e.to_string())?;
        (s.format, s.clips, s.warnings)
    } else {
        let imported = load_animation(path, options).map_err(|e| e.to_string())?;
        let format = AnimFormat::from_path(path).unwrap_or(AnimFormat::Bvh);
        let clips = imported.clips.iter().map(ClipScan::of).collect();
        (format, clips, imported.warnings)
    };
    let warnings: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    let summaries: Vec<serde_json::Value> = clips
        .iter()
        .map(|c| clip_summary(c, format, &warnings))
        .collect();
    // One clip (BVH): the object itself; several (glTF): the first clip's fields plus `clips`.
    let mut json = summaries.first().cloned().unwrap_or_else(|| {
        serde_json::json!({"joints": 0, "frames": 0, "fps": 0.0, "duration_s": 0.0,
            "joint_names": [], "warnings": warnings})
    });
    if summaries.len() > 1
        && let Some(obj) = json.as_object_mut()
    {
        obj.insert("clips".into(), serde_json::Value::Array(summaries.clone()));
    }
    let mut text = format!("{}\n", path.display());
    for c in &clips {
        let _ = writeln!(
            text,
            "clip {:?}: {} joints, {} frames at {} fps, duration {:.4} s, unit {} cm",
            c.name,
            c.joint_names.len(),
            c.frames,
            c.fps,
            c.duration_s(),
            c.unit_cm
        );
        let _ = writeln!(text, "  joints: {}", c.joint_names.join(", "));
        let _ = writeln!(
            text,
            "  unit {}",
            choose_unit(UnitSetting::Auto, format, c).reason
        );
    }
    for w in &warnings {
        let _ = writeln!(text, "warning: {w}");
    }
    Ok(Described { json, text })
}

/// A compressed clip described: what `inspect` says of a take (name, joints, frames, rate, unit),
/// then the file's format version (and whether it was converted at load), its size and ratio
/// against the raw clip (10 float32 a joint a frame, as `compress` reports it), the memory a
/// loaded clip holds, and how it is stored. The file is validated as the decoder loads it, so an
/// error names its byte. The import options do not apply: the file records its unit and rate.
fn describe_tlc(path: &Path, options: &ImportOptions) -> Result<Described, String> {
    use crate::core::compress::CompressedClip;
    use crate::core::compress::format::{OLDEST_VERSION, VERSION};
    let max = crate::core::limits::MAX_TLC_FILE_BYTES;
    let bytes = crate::core::limits::read_limited(path, max)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let clip = CompressedClip::from_bytes(bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut warnings = Vec::new();
    if options.unit_cm.is_some() || options.skip_first_frame || options.gltf_fps.is_some() {
        warnings.push(
            "--unit-cm, --skip-first-frame and --gltf-fps do not apply to a compressed clip (it \
             records its own unit, frames and rate)"
                .to_owned(),
        );
    }
    let version = clip.file_version();
    if version < VERSION {
        warnings.push(format!(
            "format version {version}, written by an older taglane: read as version {VERSION} \
             (the same size and the same poses); compressing the take again writes version \
             {VERSION} (this build reads versions {OLDEST_VERSION} to {VERSION})"
        ));
    }
    let names = clip.skeleton().names;
    let raw = crate::core::compress::raw_bytes(clip.frame_count(), clip.joint_count());
    let size = clip.size_bytes();
    let ratio = raw as f64 / size as f64;
    let [rotations, translations, scales] = clip.layout().track_counts;
    let format = super::compress::RotationArg::name_of(clip.rotation_format());
    let json = serde_json::json!({
        "name": clip.name(),
        "joints": clip.joint_count(),
        "frames": clip.frame_count(),
        "fps": clip.fps(),
        "duration_s": clip.duration_s(),
        "unit_cm": clip.unit_cm(),
        "joint_names": names,
        "tlc": {
            "version": VERSION,
            "file_version": version,
            "bytes": size,
            "raw_bytes": raw,
            "ratio": ratio,
            "resident_bytes": clip.resident_bytes(),
            "rotation_format": format,
            "frame_step": clip.frame_step(),
            "keys": clip.key_count(),
            "segment_frames": clip.segment_frames(),
            "segments": clip.segment_count(),
            "segment_ranges": clip.segment_ranges(),
            "scale": clip.has_scale(),
            "animated_tracks": {
                "rotations": rotations,
                "translations": translations,
                "scales": scales,
            },
        },
        "warnings": warnings,
    });
    let mut text = format!("{}\n", path.display());
    let _ = writeln!(
        text,
        "clip {:?}: {} joints, {} frames at {} fps, duration {:.4} s, unit {} cm",
        clip.name(),
        clip.joint_count(),
        clip.frame_count(),
        clip.fps(),
        clip.duration_s(),
        clip.unit_cm()
    );
    let _ = writeln!(text, "  joints: {}", names.join(", "));
    let _ = writeln!(
        text,
        "  compressed clip, format version {version}: {size} bytes (ratio {ratio:.2} against \
         {raw} bytes of 10 float32 a joint a frame), {} bytes loaded",
        clip.resident_bytes()
    );
    let _ = writeln!(
        text,
        "  rotations {format}, a key every {} frame(s), {} keys in {} segment(s) of {} keys{}; \
         animated: {rotations} rotation(s), {translations} translation(s), {scales} scale(s)",
        clip.frame_step(),
        clip.key_count(),
        clip.segment_count(),
        clip.segment_frames(),
        if clip.segment_ranges() {
            " with segment ranges"
        } else {
            ""
        }
    );
    for w in &warnings {
        let _ = writeln!(text, "warning: {w}");
    }
    Ok(Described { json, text })
}

fn clip_summary(c: &ClipScan, format: AnimFormat, warnings: &[String]) -> serde_json::Value {
    let auto = choose_unit(UnitSetting::Auto, format, c);
    serde_json::json!({
        "name": c.name,
        "joints": c.joint_names.len(),
        "frames": c.frames,
        "fps": c.fps,
        "duration_s": c.duration_s(),
        "unit_cm": c.unit_cm,
        "joint_names": c.joint_names,
        "height_units": c.height_units,
        "unit_auto": {"unit_cm": auto.unit_cm, "reason": auto.reason, "confident": auto.confident},
        "warnings": warnings,
    })
}

pub fn sample(args: SampleArgs) -> ExitCode {
    if !args.time.is_finite() {
        return super::fail_usage(format!(
            "--time must be a finite number of seconds, found {}",
            args.time
        ));
    }
    if !(0.0..=1.0).contains(&args.weight) {
        return super::fail_usage(format!("--weight must be in [0, 1], found {}", args.weight));
    }
    let options = match args.import.options() {
        Ok(o) => o,
        Err(e) => return super::fail_usage(e),
    };
    let first = match load_one(&args.file, args.clip.as_deref(), &options) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let settings = SampleSettings::clamped(RotationInterp::Slerp);
    let time_s = f64::from(args.time);
    let mut a = SampleBuffer::new(first.joint_count());
    if let Err(e) = a.sample(&first, time_s, &settings) {
        return super::fail_input(format!("{}: {e}", args.file.display()));
    }
    let pose = if let Some(path) = &args.blend {
        let second = match load_one(path, args.clip.as_deref(), &options) {
            Ok(c) => c,
            Err(code) => return code,
        };
        if second.skeleton.names != first.skeleton.names
            || second.skeleton.parents != first.skeleton.parents
        {
            return super::fail_input(format!(
                "{}: cannot blend with {}: the skeletons differ (joint names or hierarchy)",
                path.display(),
                args.file.display()
            ));
        }
        let mut b = SampleBuffer::new(second.joint_count());
        if let Err(e) = b.sample(&second, time_s, &settings) {
            return super::fail_input(format!("{}: {e}", path.display()));
        }
        let mut out = SampleBuffer::new(first.joint_count());
        let mix_settings = MixSettings {
            weight: args.weight,
            mask: None,
            rotation: RotationInterp::Slerp,
        };
        if let Err(e) = mix(&a, &b, &mix_settings, &mut out) {
            return super::fail_usage(e);
        }
        out
    } else {
        a
    };
    let mut model = vec![Transform::IDENTITY; first.joint_count()];
    if let Err(e) = local_to_model(&first.skeleton, &pose.transforms, &mut model) {
        return super::fail_input(format!("{}: {e}", args.file.display()));
    }
    if args.json {
        let joints: Vec<serde_json::Value> = first
            .skeleton
            .names
            .iter()
            .zip(&model)
            .map(|(name, m)| {
                serde_json::json!({"name": name, "position": [m.translation.x, m.translation.y, m.translation.z]})
            })
            .collect();
        let unit_cm = first.unit_cm;
        super::emit(&format!(
            "{}\n",
            serde_json::json!({ "joints": joints, "unit_cm": unit_cm })
        ));
    } else {
        let mut text = String::new();
        for (name, m) in first.skeleton.names.iter().zip(&model) {
            let p = m.translation;
            let _ = writeln!(text, "{name} {} {} {}", p.x, p.y, p.z);
        }
        super::emit(&text);
    }
    ExitCode::SUCCESS
}

/// Loads a file and picks one clip (by name or index; the first by default). On failure the error is
/// printed and the exit code returned.
fn load_one(path: &Path, which: Option<&str>, options: &ImportOptions) -> Result<Clip, ExitCode> {
    let imported = load_animation(path, options).map_err(super::fail_input)?;
    for w in &imported.warnings {
        let _ = writeln!(
            std::io::stderr(),
            "taglane: warning: {}: {w}",
            path.display()
        );
    }
    let mut clips = imported.clips;
    let index = match which {
        None => 0,
        Some(key) => match clips.iter().position(|c| c.name == key) {
            Some(i) => i,
            None => match key.parse::<usize>() {
                Ok(i) if i < clips.len() => i,
                _ => {
                    let names: Vec<&str> = clips.iter().map(|c| c.name.as_str()).collect();
                    return Err(super::fail_usage(format!(
                        "{}: no clip named {key:?}; clips: {names:?}",
                        path.display()
                    )));
                }
            },
        },
    };
    if index >= clips.len() {
        return Err(super::fail_input(format!(
            "{}: the file holds no animation clip",
            path.display()
        )));
    }
    Ok(clips.swap_remove(index))
}
