//! The open project lives in the core ([`crate::core::project`]); re-exported here for the UI.

pub use crate::core::project::{DEMO_CLIP_FILES, DEMO_PROJECT_JSON, Project};
