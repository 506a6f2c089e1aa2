//! `taglane inspect` and `taglane sample`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::core::anim::{Clip, ImportOptions, load_animation};

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// Animation file (.bvh, .glb, .gltf).
    pub file: PathBuf,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
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
}

pub fn inspect(args: InspectArgs) -> ExitCode {
    let imported = match load_animation(&args.file, &ImportOptions::default()) {
        Ok(i) => i,
        Err(e) => return super::fail_input(e),
    };
    let warnings: Vec<String> = imported.warnings.iter().map(ToString::to_string).collect();
    let clips: Vec<serde_json::Value> = imported
        .clips
        .iter()
        .map(|c| clip_summary(c, &warnings))
        .collect();
    if args.json {
        // One clip (BVH): the object itself; several (glTF): the first clip's fields plus `clips`.
        let mut out = clips.first().cloned().unwrap_or_else(|| {
            serde_json::json!({"joints": 0, "frames": 0, "fps": 0.0, "duration_s": 0.0,
                "joint_names": [], "warnings": warnings})
        });
        if clips.len() > 1
            && let Some(obj) = out.as_object_mut()
        {
            obj.insert("clips".into(), serde_json::Value::Array(clips.clone()));
        }
        println!("{out}");
    } else {
        println!("{}", args.file.display());
        for c in &imported.clips {
            println!(
                "clip {:?}: {} joints, {} frames at {} fps, duration {:.4} s, unit {} cm",
                c.name,
                c.joint_count(),
                c.frame_count,
                c.fps,
                c.duration_s(),
                c.unit_cm
            );
            println!("  joints: {}", c.skeleton.names.join(", "));
        }
        for w in &warnings {
            println!("warning: {w}");
        }
    }
    ExitCode::SUCCESS
}

fn clip_summary(c: &Clip, warnings: &[String]) -> serde_json::Value {
    serde_json::json!({
        "name": c.name,
        "joints": c.joint_count(),
        "frames": c.frame_count,
        "fps": c.fps,
        "duration_s": c.duration_s(),
        "unit_cm": c.unit_cm,
        "joint_names": c.skeleton.names,
        "warnings": warnings,
    })
}

pub fn sample(_args: SampleArgs) -> ExitCode {
    super::fail_usage("sample: not built yet")
}
