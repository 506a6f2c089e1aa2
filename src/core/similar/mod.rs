//! Tag by example: per-frame motion features, a search for windows similar to a query segment, and
//! a per-clip feature cache on disk. See `docs/SIMILAR.md`.

pub mod cache;
pub mod features;
pub mod search;

pub use cache::{
    CACHE_DIR, CacheOutcome, cached_features, load_project_features, project_clip_features,
};
pub use features::{
    ClipFeatures, DIMS, FEATURE_VERSION, FeatureJoints, FeatureScratch, Group, JointOverrides,
    Weights, build_features, clip_features, normalise_name, turn_and_move,
};
pub use search::{Match, Normaliser, Query, SearchError, SearchIndex, SearchSettings};

/// Centimetres per file unit by the format's convention: BVH 1 (centimetres), glTF 100 (metres).
pub fn convention_unit_cm(path: &std::path::Path) -> f32 {
    match crate::core::anim::AnimFormat::from_path(path) {
        Some(crate::core::anim::AnimFormat::Glb | crate::core::anim::AnimFormat::Gltf) => 100.0,
        _ => 1.0,
    }
}
