//! `taglane compress`, `decompress`, `compare` and `export-acl`.

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

/// CMU conversions: one file unit is about 1/0.45 inch.
pub const CMU_UNIT_CM: f32 = 5.644;

/// Parses `--units`: `cm`, `m`, `in`, `cmu` (5.644 cm) or a number of centimetres per unit.
pub fn parse_units(s: &str) -> Result<f32, String> {
    let v = match s.to_ascii_lowercase().as_str() {
        "cm" => 1.0,
        "m" => 100.0,
        "in" => 2.54,
        "cmu" => CMU_UNIT_CM,
        other => other.parse::<f32>().map_err(|_| {
            format!("--units: expected cm, m, in, cmu or a number of cm per unit, found {s:?}")
        })?,
    };
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!("--units must be positive, found {s:?}"))
    }
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

/// Settings flags shared by `compress`.
#[derive(Debug, Args)]
pub struct CompressArgs {
    /// Input animation (.bvh; .glb/.gltf: the first clip).
    pub input: PathBuf,
    /// Output compressed clip (.tlc).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Automatic bit widths under this error (cm at 3 cm from each joint). Default 0.01.
    #[arg(long, conflicts_with_all = ["bits", "preset", "settings"])]
    pub error_cm: Option<f32>,
    /// Fixed bit width for every track (3..=16 or 32 = raw float).
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
    /// A JSON settings file (fields of `CompressSettings`; missing fields take their defaults).
    #[arg(long)]
    pub settings: Option<PathBuf>,
    /// What one file unit is: cm, m, in, cmu (5.644 cm) or a number of cm. Default cm.
    #[arg(long, default_value = "cm")]
    pub units: String,
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
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Input animation (.bvh).
    pub input: PathBuf,
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
    /// What one file unit is: cm, m, in, cmu (5.644 cm) or a number of cm. Default cm.
    #[arg(long, default_value = "cm")]
    pub units: String,
    /// Print one JSON array instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExportAclArgs {
    /// Input animation (.bvh).
    pub input: PathBuf,
    /// Output ACL SJSON clip (.acl.sjson).
    #[arg(short, long)]
    pub output: PathBuf,
    /// What one file unit is: cm, m, in, cmu (5.644 cm) or a number of cm. Translations are
    /// written in cm. Default cm.
    #[arg(long, default_value = "cm")]
    pub units: String,
}

fn load_clip(path: &Path, unit_cm: f32) -> Result<Clip, String> {
    let options = ImportOptions {
        unit_cm: Some(unit_cm),
        ..ImportOptions::default()
    };
    let imported = load_animation(path, &options).map_err(|e| e.to_string())?;
    for w in &imported.warnings {
        eprintln!("taglane: warning: {w}");
    }
    imported
        .clips
        .into_iter()
        .next()
        .ok_or_else(|| format!("{}: the file holds no animation", path.display()))
}

fn settings_from_file(path: &Path) -> Result<CompressSettings, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let s: CompressSettings = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}: line {} column {}: {e}",
            path.display(),
            e.line(),
            e.column()
        )
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
        s.rotation_format = match r {
            RotationArg::Full => RotationFormat::Full,
            RotationArg::DropW => RotationFormat::DropW,
            RotationArg::Smallest3_32 => RotationFormat::SmallestThree32,
            RotationArg::Smallest3_48 => RotationFormat::SmallestThree48,
        };
    }
    if let Some(f) = args.segment_frames {
        s.segment_frames = f;
    }
    if let Some(f) = args.frame_step {
        s.frame_step = f;
    }
    s.validate().map_err(|e| (2, e))?;
    Ok(s)
}

fn report_json(r: &CompressResult) -> serde_json::Value {
    serde_json::json!({
        "raw_bytes": r.raw_bytes,
        "compressed_bytes": r.compressed_bytes,
        "ratio": r.ratio,
        "max_error_cm": r.error.max_error_cm,
        "mean_error_cm": r.error.mean_error_cm,
        "worst": {
            "joint": r.error.worst.joint_name,
            "frame": r.error.worst.frame,
            "error_cm": r.error.worst.error_cm,
        },
        "compress_ms": r.compress_ms,
    })
}

pub fn compress(args: CompressArgs) -> ExitCode {
    let unit_cm = match parse_units(&args.units) {
        Ok(u) => u,
        Err(e) => return super::fail_usage(e),
    };
    let settings = match compress_settings(&args) {
        Ok(s) => s,
        Err((1, e)) => return super::fail_input(e),
        Err((_, e)) => return super::fail_usage(e),
    };
    let clip = match load_clip(&args.input, unit_cm) {
        Ok(c) => c,
        Err(e) => return super::fail_input(e),
    };
    let r = match crate::core::compress::compress(&clip, &settings) {
        Ok(r) => r,
        Err(e) => return super::fail_input(format!("{}: {e}", args.input.display())),
    };
    if let Err(e) = write_atomic(&args.output, r.clip.bytes(), false) {
        return super::fail_input(format!("{}: cannot write: {e}", args.output.display()));
    }
    if args.report == Some(ReportFormat::Json) {
        println!("{}", report_json(&r));
    } else {
        println!(
            "{} -> {}: {} -> {} bytes, ratio {:.2}, max error {:.5} cm ({} at frame {}), mean {:.6} cm, {:.0} ms",
            args.input.display(),
            args.output.display(),
            r.raw_bytes,
            r.compressed_bytes,
            r.ratio,
            r.error.max_error_cm,
            r.error.worst.joint_name,
            r.error.worst.frame,
            r.error.mean_error_cm,
            r.compress_ms
        );
    }
    ExitCode::SUCCESS
}

pub fn decompress(args: DecompressArgs) -> ExitCode {
    let max = crate::core::limits::MAX_TLC_FILE_BYTES;
    let bytes = match crate::core::limits::read_limited(&args.input, max) {
        Ok(b) => b,
        Err(e) => return super::fail_input(format!("{}: cannot read: {e}", args.input.display())),
    };
    let clip = match CompressedClip::from_bytes(bytes) {
        Ok(c) => c,
        Err(e) => return super::fail_input(format!("{}: {e}", args.input.display())),
    };
    let text = write_bvh(&clip.to_clip());
    if let Err(e) = write_atomic(&args.output, text.as_bytes(), false) {
        return super::fail_input(format!("{}: cannot write: {e}", args.output.display()));
    }
    ExitCode::SUCCESS
}

/// Mean decode time of one pose at scattered times, microseconds.
fn decode_us(clip: &CompressedClip) -> f64 {
    let mut pose = vec![Transform::IDENTITY; clip.joint_count()];
    let d = clip.duration_s();
    let n = 20_000;
    let start = Instant::now();
    for i in 0..n {
        let t = d * ((i as f32 * 0.618_034).fract());
        clip.sample_pose(t, &mut pose);
        std::hint::black_box(&pose);
    }
    start.elapsed().as_secs_f64() * 1e6 / f64::from(n)
}

pub fn compare(args: CompareArgs) -> ExitCode {
    let unit_cm = match parse_units(&args.units) {
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
    let clip = match load_clip(&args.input, unit_cm) {
        Ok(c) => c,
        Err(e) => return super::fail_input(e),
    };
    let mut rows = Vec::new();
    for (name, s) in &candidates {
        let r = match crate::core::compress::compress(&clip, s) {
            Ok(r) => r,
            Err(e) => return super::fail_input(format!("{}: {name}: {e}", args.input.display())),
        };
        rows.push(serde_json::json!({
            "candidate": name,
            "compressed_bytes": r.compressed_bytes,
            "raw_bytes": r.raw_bytes,
            "ratio": r.ratio,
            "max_error_cm": r.error.max_error_cm,
            "mean_error_cm": r.error.mean_error_cm,
            "p99_error_cm": r.error.p99_error_cm,
            "worst": {"joint": r.error.worst.joint_name, "frame": r.error.worst.frame},
            "decode_us": decode_us(&r.clip),
            "compress_ms": r.compress_ms,
        }));
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
        rows.push(serde_json::json!({
            "candidate": format!("stream {e} cm, jump {}", args.jump_frames),
            "compressed_bytes": rep.total_bytes,
            "raw_bytes": clip.frame_count * clip.joint_count() * 40,
            "ratio": rep.ratio,
            "max_error_cm": rep.error.max_error_cm,
            "mean_error_cm": rep.error.mean_error_cm,
            "p99_error_cm": rep.error.p99_error_cm,
            "worst": {"joint": rep.error.worst.joint_name, "frame": rep.error.worst.frame},
            "decode_us": us,
            "jump_bytes": rep.jump_bytes,
            "mean_seek_entries": rep.mean_seek_entries,
        }));
    }
    if args.json {
        println!("{}", serde_json::Value::Array(rows));
        return ExitCode::SUCCESS;
    }
    let mut out = format!(
        "{:<32} {:>10} {:>8} {:>10} {:>10} {:>10} {:>10}\n",
        "candidate", "bytes", "ratio", "max cm", "mean cm", "p99 cm", "decode us"
    );
    for r in &rows {
        let _ = writeln!(
            out,
            "{:<32} {:>10} {:>8.2} {:>10.5} {:>10.6} {:>10.5} {:>10.3}",
            r["candidate"].as_str().unwrap_or(""),
            r["compressed_bytes"],
            r["ratio"].as_f64().unwrap_or(0.0),
            r["max_error_cm"].as_f64().unwrap_or(0.0),
            r["mean_error_cm"].as_f64().unwrap_or(0.0),
            r["p99_error_cm"].as_f64().unwrap_or(0.0),
            r["decode_us"].as_f64().unwrap_or(0.0),
        );
    }
    print!("{out}");
    ExitCode::SUCCESS
}

pub fn export_acl(args: ExportAclArgs) -> ExitCode {
    let unit_cm = match parse_units(&args.units) {
        Ok(u) => u,
        Err(e) => return super::fail_usage(e),
    };
    let clip = match load_clip(&args.input, unit_cm) {
        Ok(c) => c,
        Err(e) => return super::fail_input(e),
    };
    let text = to_acl_sjson(&clip, crate::core::compress::settings::DEFAULT_SHELL_CM);
    if let Err(e) = write_atomic(&args.output, text.as_bytes(), false) {
        return super::fail_input(format!("{}: cannot write: {e}", args.output.display()));
    }
    ExitCode::SUCCESS
}
