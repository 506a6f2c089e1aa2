//! Tag by example: per-frame motion features, a search for the windows of every clip most similar
//! to a query segment, a per-clip feature cache on disk, building features for many clips on all
//! cores, and accepting matches as ranges of a tag in one edit. See `docs/SIMILAR.md`.
//!
//! Typical use (the app and `taglane find`):
//!
//! 1. [`project_features`] (or [`clips_features_par`] for loose clips): one result per clip, with
//!    a progress callback and a cancel flag;
//! 2. [`SearchIndex::build_sparse`] over them with the user's [`Weights`] (clip numbers stay the
//!    document's clip ids; clips that failed are holes);
//! 3. [`SearchIndex::search`] for a [`Query`]: ranked, non-overlapping [`Match`]es;
//! 4. [`accept_matches`]: one undoable `Edit` adding the accepted matches to a tag.

pub mod cache;
pub mod features;
pub mod library;
pub mod search;

pub use cache::{CACHE_DIR, CacheOutcome, cache_file, cached_features};
pub use features::{
    ClipFeatures, DIMS, FEATURE_VERSION, FeatureJoints, FeatureScratch, Group, JointOverrides,
    Weights, build_features, clip_features, clip_features_by_name, group_of, turn_and_move,
};
pub use library::{
    Cancelled, FeatureJob, FeatureOptions, FeatureResult, accept_matches, build_features_par,
    clips_features_par, convention_unit_cm, job_features, par_map_with_progress, project_features,
};
pub use search::{
    Match, Normaliser, Query, SUGGESTED_MAX_SCORE, SearchError, SearchIndex, SearchSettings,
};
