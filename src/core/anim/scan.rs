//! The fast scan of an animation file: what a project needs to list its clips (names, joints,
//! frame count, frame rate, the standing height for the unit guess), without building the clips.
//!
//! BVH is scanned without converting the motion values (see `bvh_scan.rs`): about as fast as
//! reading the bytes. glTF keeps its keys in binary buffers whose frame count depends on the key
//! times, so a glTF file is imported fully and summarised (glTF files are small next to BVH).
//! The numbers a scan reports are those the full import gives.

use std::path::Path;

use super::import::{AnimFormat, ImportError, ImportOptions, ImportWarning};
use super::units::standing_height_units;

/// One clip of a scanned file.
#[derive(Debug, Clone, PartialEq)]
pub struct ClipScan {
    /// The clip's name in the file: the file stem for BVH, the animation's name for glTF.
    pub name: String,
    /// Joint names, parents before children.
    pub joint_names: Vec<String>,
    /// Parent of each joint.
    pub parents: Vec<Option<usize>>,
    /// Frames the full import gives (the rows present for BVH, not the header's count).
    pub frames: usize,
    pub fps: f32,
    /// Centimetres per file unit the full import would record: [`ImportOptions::unit_cm`], else the
    /// format's convention (BVH 1.0, glTF 100.0).
    pub unit_cm: f32,
    /// Standing height in file units (see [`crate::core::anim::units`]); `None` when it cannot be
    /// measured.
    pub height_units: Option<f32>,
}

impl ClipScan {
    /// What a scan would say of a fully imported clip.
    pub fn of(c: &super::Clip) -> ClipScan {
        ClipScan {
            name: c.name.clone(),
            joint_names: c.skeleton.names.clone(),
            parents: c.skeleton.parents.clone(),
            frames: c.frame_count,
            fps: c.fps,
            unit_cm: c.unit_cm,
            height_units: standing_height_units(c),
        }
    }

    /// Duration in seconds, as [`crate::core::anim::Clip::duration_s`].
    pub fn duration_s(&self) -> f32 {
        if self.frames < 2 || self.fps <= 0.0 {
            0.0
        } else {
            (self.frames - 1) as f32 / self.fps
        }
    }
}

/// The result of scanning one file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileScan {
    pub format: AnimFormat,
    /// One clip for BVH, one per animation for glTF (possibly none).
    pub clips: Vec<ClipScan>,
    pub warnings: Vec<ImportWarning>,
}

/// Scans an animation file, choosing the scanner from the extension (`.bvh`, `.glb`, `.gltf`,
/// any case). Errors name the file, the place in it and what was expected, as the full import.
pub fn scan_animation(path: &Path, options: &ImportOptions) -> Result<FileScan, ImportError> {
    let f = super::import::AnimFile::read(path)?;
    scan_animation_bytes(&f.bytes, f.format, &f.stem, path.parent(), options)
        .map_err(|e| e.with_file(&f.display))
}

/// Scans an animation held in memory; `name` names a BVH clip, `base_dir` is where a `.gltf`
/// file's external buffers are (see [`super::load_animation_from_bytes`]).
pub fn scan_animation_bytes(
    bytes: &[u8],
    format: AnimFormat,
    name: &str,
    base_dir: Option<&Path>,
    options: &ImportOptions,
) -> Result<FileScan, ImportError> {
    super::import::check_anim_size(bytes)?;
    match format {
        AnimFormat::Bvh => {
            let (clip, warnings) = super::bvh_scan::scan_bvh_bytes(bytes, name, options)?;
            Ok(FileScan {
                format,
                clips: vec![clip],
                warnings,
            })
        }
        AnimFormat::Glb | AnimFormat::Gltf => {
            let imported =
                super::import::load_animation_from_bytes(bytes, format, name, base_dir, options)?;
            let clips = imported.clips.iter().map(ClipScan::of).collect();
            Ok(FileScan {
                format,
                clips,
                warnings: imported.warnings,
            })
        }
    }
}
