//! The library import on the shared takes: units guessed per file (CMU files in the CMU unit,
//! Bandai in centimetres, the glTF Fox in its own unit, the metre, flagged for a check), and the
//! fast scan agreeing with the full import on every take.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use taglane::core::anim::units::{CMU_CM_PER_UNIT, guess_unit};
use taglane::core::anim::{ImportOptions, load_animation, scan_animation};
use taglane::core::library::{ImportSettings, plan_import, scan_library};
use taglane::core::tags::TagDocument;

fn mocap() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/mocap")
}

#[test]
#[ignore = "needs ../shared/mocap"]
fn units_are_guessed_on_every_shared_take() {
    let scan = scan_library(
        &[mocap()],
        &ImportSettings::default(),
        &|_| {},
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(scan.files.len(), 10, "9 BVH takes and the Fox");
    let plan = plan_import(&TagDocument::default(), None, &scan);
    assert!(plan.failed.is_empty(), "{}", plan.report_text(true));
    let mut checked = 0;
    for a in &plan.added {
        let file = a.path.file_name().unwrap().to_string_lossy().into_owned();
        let expected = if file.starts_with("cmu_") {
            CMU_CM_PER_UNIT
        } else if file.starts_with("bandai_") {
            1.0
        } else {
            assert_eq!(file, "gltf_Fox.glb");
            100.0
        };
        assert_eq!(a.unit.unit_cm, expected, "{file}: {}", a.unit.reason);
        // The Fox stands about 60 m tall in metres (it was authored in centimetres): flagged.
        let fox = file == "gltf_Fox.glb";
        assert_eq!(a.unit.confident, !fox, "{file}: {}", a.unit.reason);
        assert_eq!(
            a.unit.reason.contains("check this clip"),
            fox,
            "{file}: {}",
            a.unit.reason
        );
        checked += 1;
    }
    // Three Fox animations.
    assert_eq!(checked, 12, "{}", plan.report_text(true));
    let fox: Vec<&str> = plan
        .added
        .iter()
        .filter(|a| a.name.starts_with("gltf_Fox#"))
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(fox, ["gltf_Fox#Survey", "gltf_Fox#Walk", "gltf_Fox#Run"]);
}

#[test]
#[ignore = "needs ../shared/mocap"]
fn the_fast_scan_agrees_with_the_full_import_on_every_shared_take() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(mocap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bvh" || e == "glb"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 10);
    for path in files {
        for skip in [false, true] {
            let options = ImportOptions {
                skip_first_frame: skip,
                ..ImportOptions::default()
            };
            let scan = scan_animation(&path, &options).unwrap();
            let full = load_animation(&path, &options).unwrap();
            assert_eq!(scan.clips.len(), full.clips.len());
            assert_eq!(scan.warnings, full.warnings, "{}", path.display());
            for (s, c) in scan.clips.iter().zip(&full.clips) {
                assert_eq!(s.frames, c.frame_count, "{}", path.display());
                assert_eq!(s.fps, c.fps);
                assert_eq!(s.joint_names, c.skeleton.names);
                assert_eq!(s.parents, c.skeleton.parents);
                assert_eq!(s.unit_cm, c.unit_cm);
                assert_eq!(
                    s.height_units
                        .and_then(taglane::core::anim::units::guess_unit_from_height),
                    guess_unit(c),
                    "{}",
                    path.display()
                );
            }
        }
    }
}
