//! Integration tests of the core and the command line, in one test binary (one link instead of
//! twenty; see scripts/test.sh). Each module is one area.

#[path = "../common/mod.rs"]
mod common;

mod anim_bvh;
mod anim_cli;
mod anim_gltf;
mod anim_mocap;
mod anim_root_motion;
mod anim_sample;
mod architecture;
mod autotag_cli;
mod autotag_common;
mod autotag_quality;
mod compress_cli;
mod compress_format;
mod compress_mocap;
mod compress_roundtrip;
mod cut_cli;
mod find_cli;
mod library_cli;
mod library_import;
mod library_mocap;
mod library_sidecar;
mod project_merge;
mod robust_crash_save;
mod robust_errors;
mod robust_limits;
mod robust_regressions;
mod similar_quality;
mod tags_cli;
mod tags_engine;
mod tags_format;
mod tags_oracle;
mod tags_roundtrip;
