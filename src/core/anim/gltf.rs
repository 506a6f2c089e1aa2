//! glTF 2.0 import (placeholder until the importer lands in this branch).

use std::path::Path;

use super::import::{ImportError, ImportOptions, Imported, Place};

pub(crate) fn import_glb(
    _bytes: &[u8],
    _base_dir: Option<&Path>,
    _options: &ImportOptions,
) -> Result<Imported, ImportError> {
    Err(ImportError::new(
        Place::File,
        "glTF import is not available yet",
    ))
}

pub(crate) fn import_gltf_json(
    _bytes: &[u8],
    _base_dir: Option<&Path>,
    _options: &ImportOptions,
) -> Result<Imported, ImportError> {
    Err(ImportError::new(
        Place::File,
        "glTF import is not available yet",
    ))
}
