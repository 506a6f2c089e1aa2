//! Loading animation files: options, errors and the dispatch on file extension.

use std::fmt;
use std::path::Path;

use super::clip::Clip;

/// Import settings shared by every format.
#[derive(Default, Debug, Clone, PartialEq)]
pub struct ImportOptions {
    /// Centimetres per file unit, stored as [`Clip::unit_cm`]. Values are kept in file units (never
    /// rescaled); this only records what a unit means. `None` uses the format's convention: BVH has no
    /// unit and defaults to 1.0 (centimetres); glTF is in metres, 100.0. The CMU BVH conversions are in
    /// units of about 1/0.45 inch: pass `Some(5.644)`.
    pub unit_cm: Option<f32>,
    /// Drop the first frame of every clip (the CMU conversions prepend a synthetic T-pose as frame 0).
    /// Default `false`: frames are never dropped unless asked.
    pub skip_first_frame: bool,
    /// Rate, in frames per second, at which glTF animations (keyframes at arbitrary times) are
    /// resampled into fixed-rate clips. `None` (the default): each animation's own key rate when
    /// its keys lie on one even grid from its start (a take exported at 24 fps keeps its 24 keys a
    /// second, and its last key is its last frame), else 30 with a warning. Ignored for BVH
    /// (which has a fixed rate).
    pub gltf_fps: Option<f32>,
}

/// Where in a file an error or warning is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// 1-based line number in a text file.
    Line(usize),
    /// Byte offset in a binary file.
    Byte(usize),
    /// A JSON path such as `animations[2].channels[0].sampler`.
    Json(String),
    /// The file as a whole (size, extension, I/O).
    File,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Line(n) => write!(f, "line {n}"),
            Place::Byte(b) => write!(f, "byte {b}"),
            Place::Json(p) => write!(f, "{p}"),
            Place::File => write!(f, "file"),
        }
    }
}

/// An import failure: the file, the place in it and what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}: {place}: {message}")]
pub struct ImportError {
    /// The file name (or `<memory>` for bytes without a name).
    pub file: String,
    pub place: Place,
    pub message: String,
}

impl ImportError {
    pub(crate) fn new(place: Place, message: impl Into<String>) -> Self {
        Self {
            file: String::from("<memory>"),
            place,
            message: message.into(),
        }
    }

    pub(crate) fn with_file(mut self, file: &str) -> Self {
        self.file = file.to_owned();
        self
    }
}

/// A non-fatal import observation (data used differently from what the header claims, channels
/// ignored, ...). Always reported to the user, never silently swallowed.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportWarning {
    pub place: Place,
    pub message: String,
}

impl fmt::Display for ImportWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.place, self.message)
    }
}

/// The result of a successful import: one clip for a BVH file, one per animation for glTF.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub clips: Vec<Clip>,
    pub warnings: Vec<ImportWarning>,
}

/// A supported animation file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnimFormat {
    Bvh,
    /// Binary glTF container.
    Glb,
    /// JSON glTF with external or embedded (data URI) buffers.
    Gltf,
}

impl AnimFormat {
    /// The format for a file extension (case-insensitive), or `None`.
    pub fn from_path(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "bvh" => Some(Self::Bvh),
            "glb" => Some(Self::Glb),
            "gltf" => Some(Self::Gltf),
            _ => None,
        }
    }
}

/// An animation file read into memory, as both the importer and the scanner start: its format
/// from the extension, its bytes (within the size limit), its stem (the BVH clip's name) and the
/// name errors give it.
pub(crate) struct AnimFile {
    pub format: AnimFormat,
    pub bytes: Vec<u8>,
    pub stem: String,
    pub display: String,
}

impl AnimFile {
    pub(crate) fn read(path: &Path) -> Result<AnimFile, ImportError> {
        let display = path.display().to_string();
        let format = AnimFormat::from_path(path).ok_or_else(|| {
            // What is wrong first: a path that names nothing is not a question of extension.
            let message = match std::fs::metadata(path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    "no such file: expected an animation file (.bvh, .glb or .gltf)"
                }
                Ok(m) if m.is_dir() => {
                    "is a folder: expected an animation file (.bvh, .glb or .gltf)"
                }
                _ => "unknown animation file extension: expected .bvh, .glb or .gltf",
            };
            ImportError::new(Place::File, message).with_file(&display)
        })?;
        let bytes =
            crate::core::limits::read_limited(path, crate::core::limits::MAX_ANIM_FILE_BYTES)
                .map_err(|e| {
                    ImportError::new(Place::File, format!("cannot read the file: {e}"))
                        .with_file(&display)
                })?;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(AnimFile {
            format,
            bytes,
            stem,
            display,
        })
    }
}

/// Refuses bytes beyond the animation file size limit (`core::limits`).
pub(crate) fn check_anim_size(bytes: &[u8]) -> Result<(), ImportError> {
    let max = crate::core::limits::MAX_ANIM_FILE_BYTES;
    if bytes.len() as u64 > max {
        return Err(ImportError::new(
            Place::File,
            crate::core::limits::size_message(bytes.len() as u64, max),
        ));
    }
    Ok(())
}

/// Loads an animation file, choosing the importer from the extension (`.bvh`, `.glb`, `.gltf`).
/// Clips are named after the file stem (BVH) or the animation (glTF).
pub fn load_animation(path: &Path, options: &ImportOptions) -> Result<Imported, ImportError> {
    let f = AnimFile::read(path)?;
    load_animation_from_bytes(&f.bytes, f.format, &f.stem, path.parent(), options)
        .map_err(|e| e.with_file(&f.display))
}

/// Loads an animation from bytes already in memory. `name` names the BVH clip; `base_dir` is where
/// a `.gltf` file's external buffers are looked up (`None`: external buffers are an error).
/// Errors carry `<memory>` as the file name.
pub fn load_animation_from_bytes(
    bytes: &[u8],
    format: AnimFormat,
    name: &str,
    base_dir: Option<&Path>,
    options: &ImportOptions,
) -> Result<Imported, ImportError> {
    check_anim_size(bytes)?;
    match format {
        AnimFormat::Bvh => {
            let (clip, warnings) = super::bvh::parse_bvh_bytes(bytes, name, options)?;
            Ok(Imported {
                clips: vec![clip],
                warnings,
            })
        }
        AnimFormat::Glb => super::gltf::import_glb(bytes, base_dir, options),
        AnimFormat::Gltf => super::gltf::import_gltf_json(bytes, base_dir, options),
    }
}
