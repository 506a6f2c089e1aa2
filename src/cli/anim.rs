//! `taglane inspect` and `taglane sample`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use crate::core::anim::{
    Clip, ImportOptions, MixSettings, RotationInterp, SampleBuffer, SampleSettings, Transform,
    load_animation, local_to_model, mix,
};

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
    /// Which clip of a multi-clip file (glTF) to use, by name or index; default the first.
    #[arg(long)]
    pub clip: Option<String>,
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
        emit(&format!("{out}\n"));
    } else {
        let mut text = format!("{}\n", args.file.display());
        for c in &imported.clips {
            let _ = writeln!(
                text,
                "clip {:?}: {} joints, {} frames at {} fps, duration {:.4} s, unit {} cm",
                c.name,
                c.joint_count(),
                c.frame_count,
                c.fps,
                c.duration_s(),
                c.unit_cm
            );
            let _ = writeln!(text, "  joints: {}", c.skeleton.names.join(", "));
        }
        for w in &warnings {
            let _ = writeln!(text, "warning: {w}");
        }
        emit(&text);
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
    let first = match load_one(&args.file, args.clip.as_deref()) {
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
        let second = match load_one(path, args.clip.as_deref()) {
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
        emit(&format!("{}\n", serde_json::json!({ "joints": joints })));
    } else {
        let mut text = String::new();
        for (name, m) in first.skeleton.names.iter().zip(&model) {
            let p = m.translation;
            let _ = writeln!(text, "{name} {} {} {}", p.x, p.y, p.z);
        }
        emit(&text);
    }
    ExitCode::SUCCESS
}

/// Writes to stdout, ignoring a closed pipe (`taglane sample ... | head` must not panic).
fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Loads a file and picks one clip (by name or index; the first by default). On failure the error is
/// printed and the exit code returned.
fn load_one(path: &Path, which: Option<&str>) -> Result<Clip, ExitCode> {
    let imported = load_animation(path, &ImportOptions::default()).map_err(super::fail_input)?;
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
