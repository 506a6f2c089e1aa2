//! `taglane inspect` and `taglane sample`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

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

pub fn inspect(_args: InspectArgs) -> ExitCode {
    super::fail_usage("inspect: not built yet")
}

pub fn sample(_args: SampleArgs) -> ExitCode {
    super::fail_usage("sample: not built yet")
}
