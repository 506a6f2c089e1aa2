//! Every input the fuzzers (`fuzz/`, see docs/ROBUSTNESS.md) found to crash, hang or exhaust
//! memory, replayed with the same checks as the fuzz target. The inputs live in
//! `tests/fuzz_regressions/<target>/`, one file each, named after the libFuzzer artifact.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use taglane::core::anim::{AnimFormat, ImportOptions, Transform, load_animation_from_bytes};
use taglane::core::compress::bits::crc32;
use taglane::core::compress::format::{CompressedClip, HEADER_BYTES};
use taglane::core::tags::query::evaluate;
use taglane::core::tags::{ClipInfo, Engine, Range, Tag, TagDocument, load_tags_str, parse_query};

/// The inputs of one target: the fuzz target's seed corpus (`fuzz/seeds/<target>`, minimised
/// inputs that reach every part of the parser) and every crash input found so far
/// (`tests/fuzz_regressions/<target>`, when there is one), sorted by name. A folder that exists but
/// holds nothing fails the test: a replay over nothing checks nothing.
fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let seeds = root.join("fuzz/seeds").join(target);
    let crashes = root.join("tests/fuzz_regressions").join(target);
    assert!(seeds.is_dir(), "{}: no seed corpus", seeds.display());
    let mut all = Vec::new();
    for dir in [seeds, crashes] {
        if !dir.exists() {
            continue;
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file() && p.file_name().is_none_or(|n| n != ".gitkeep"))
            .collect();
        assert!(
            !files.is_empty(),
            "{}: empty, so its replay would check nothing",
            dir.display()
        );
        files.sort();
        all.extend(files.into_iter().map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        }));
    }
    all
}

/// Runs `check` on each input of `target`, each within a time budget (a hang is a failure too).
/// `check` returns whether the input got past parsing; the seeds are valid inputs, so at least one
/// must, or the replay would only exercise the first error path.
fn replay(target: &str, check: impl Fn(&[u8]) -> Result<bool, String>) -> usize {
    let all = inputs(target);
    let mut accepted = 0;
    for (path, bytes) in &all {
        let t = Instant::now();
        match check(bytes) {
            Ok(true) => accepted += 1,
            Ok(false) => {}
            Err(e) => panic!("{}: {e}", path.display()),
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{}: took {:?}",
            path.display(),
            t.elapsed()
        );
    }
    assert!(accepted > 0, "{target}: no input got past parsing");
    all.len()
}

fn check_clips(imported: &taglane::core::anim::Imported) -> Result<(), String> {
    for clip in &imported.clips {
        clip.validate()?;
    }
    Ok(())
}

#[test]
fn bvh_regressions() {
    replay("bvh", |data| {
        let mut accepted = false;
        for skip_first_frame in [false, true] {
            let options = ImportOptions {
                skip_first_frame,
                ..ImportOptions::default()
            };
            if let Ok(i) = load_animation_from_bytes(data, AnimFormat::Bvh, "fuzz", None, &options)
            {
                check_clips(&i)?;
                accepted = true;
            }
        }
        Ok(accepted)
    });
}

#[test]
fn gltf_regressions() {
    let n = replay("gltf", |data| {
        let mut accepted = false;
        for format in [AnimFormat::Glb, AnimFormat::Gltf] {
            let r =
                load_animation_from_bytes(data, format, "fuzz", None, &ImportOptions::default());
            if let Ok(i) = r {
                check_clips(&i)?;
                accepted = true;
            }
        }
        Ok(accepted)
    });
    assert!(n >= 1);
}

#[test]
fn tags_json_regressions() {
    replay("tags_json", |data| {
        let Ok(text) = std::str::from_utf8(data) else {
            return Ok(false);
        };
        let Ok((doc, _)) = load_tags_str(text, "fuzz.taglane.json") else {
            return Ok(false);
        };
        let saved = doc.to_json_string().map_err(|e| e.to_string())?;
        let (again, _) = load_tags_str(&saved, "saved").map_err(|e| e.to_string())?;
        if again.clips != doc.clips || again.queries != doc.queries {
            return Err("clips or queries changed in a save/load round trip".into());
        }
        for (a, b) in again.tags.iter().zip(&doc.tags) {
            if (&a.name, a.color, &a.ranges) != (&b.name, b.color, &b.ranges) {
                return Err(format!("tag {} changed in a save/load round trip", a.name));
            }
        }
        Ok(true)
    });
}

/// The fixed document of the query fuzz target.
fn query_doc() -> TagDocument {
    let clip = |name: &str, frames: u32| ClipInfo {
        name: name.to_string(),
        frames,
        fps: 30.0,
        source: None,
        unit_cm: None,
    };
    let tag = |name: &str, ranges: &[(u32, &[(u32, u32)])]| Tag {
        name: name.to_string(),
        color: None,
        ranges: ranges
            .iter()
            .map(|(c, rs)| (*c, rs.iter().map(|&(a, b)| Range::new(a, b)).collect()))
            .collect::<BTreeMap<_, Vec<Range>>>()
            .into(),
        markers: Default::default(),
        notes: Default::default(),
        version: 0,
    };
    TagDocument {
        clips: vec![clip("a", 100), clip("b", 300), clip("c", 1), clip("d", 64)],
        tags: vec![
            tag(
                "walk",
                &[(0, &[(0, 10), (20, 40), (90, 100)]), (1, &[(5, 200)])],
            ),
            tag(
                "run",
                &[(0, &[(5, 25)]), (1, &[(150, 300)]), (3, &[(0, 64)])],
            ),
            tag("idle", &[(2, &[(0, 1)]), (3, &[(1, 2), (3, 4), (62, 63)])]),
            tag("loco:turn left", &[(1, &[(0, 1), (299, 300)])]),
            tag("empty", &[]),
        ],
        queries: vec![],
        ..Default::default()
    }
}

#[test]
fn query_regressions() {
    let doc = query_doc();
    let names: Vec<&str> = doc.tags.iter().map(|t| t.name.as_str()).collect();
    replay("query", |data| {
        let Ok(text) = std::str::from_utf8(data) else {
            return Ok(false);
        };
        let Ok(q) = parse_query(text, &names) else {
            return Ok(false);
        };
        let (ranges, _) = evaluate(&doc, &q, Engine::Ranges).map_err(|e| e.to_string())?;
        for engine in [Engine::Masks, Engine::Auto] {
            let (other, _) = evaluate(&doc, &q, engine).map_err(|e| e.to_string())?;
            if other != ranges {
                return Err(format!("engine {} disagrees on {text:?}", engine.name()));
            }
        }
        Ok(true)
    });
}

/// Decodes a `.tlc` every way a runtime would; false when it does not load.
fn exercise_tlc(bytes: Vec<u8>) -> bool {
    let Ok(clip) = CompressedClip::from_bytes(bytes) else {
        return false;
    };
    let mut pose = vec![Transform::IDENTITY; clip.joint_count()];
    let last = clip.frame_count().saturating_sub(1) as f32;
    for frame in [0.0, last * 0.37, last, -1.0, last + 2.0] {
        clip.sample_pose_at_frame(frame, &mut pose);
    }
    clip.sample_pose(clip.duration_s() * 0.5, &mut pose);
    let _ = clip.sample_joint(0.0, clip.joint_count() - 1);
    assert_eq!(clip.to_clip().frame_count, clip.frame_count());
    true
}

#[test]
fn tlc_regressions() {
    replay("tlc", |data| {
        let mut accepted = exercise_tlc(data.to_vec());
        if data.len() >= HEADER_BYTES + 4 {
            let mut fixed = data.to_vec();
            let len = fixed.len();
            fixed[48..52].copy_from_slice(&(len as u32).to_le_bytes());
            let crc = crc32(&fixed[..len - 4]);
            fixed[len - 4..].copy_from_slice(&crc.to_le_bytes());
            accepted |= exercise_tlc(fixed);
        }
        Ok(accepted)
    });
}

/// The `tlc` finding on a file the encoder writes: a clip without motion has no animated tracks,
/// and sampling it between two frames used to index its empty segment table.
#[test]
fn static_compressed_clip_samples_between_frames() {
    use taglane::core::anim::parse_bvh;
    use taglane::core::compress::{CompressSettings, compress};
    let text = "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 3 Xposition Yposition Zposition\n JOINT Leg\n {\n  OFFSET 0 -10 0\n  End Site\n  {\n   OFFSET 0 -10 0\n  }\n }\n}\nMOTION\nFrames: 3\nFrame Time: 0.033333\n0 90 0\n0 90 0\n0 90 0\n";
    let (clip, _) = parse_bvh(text, "static", &ImportOptions::default()).unwrap();
    let result = compress(&clip, &CompressSettings::default()).unwrap();
    let tlc = CompressedClip::from_bytes(result.clip.bytes().to_vec()).unwrap();
    assert!(tlc.animated_tracks().is_empty());
    let mut pose = vec![Transform::IDENTITY; tlc.joint_count()];
    tlc.sample_pose_at_frame(0.5, &mut pose);
    assert_eq!(pose[0].translation, glam::Vec3::new(0.0, 90.0, 0.0));
    tlc.sample_pose(tlc.duration_s() * 0.7, &mut pose);
    assert_eq!(pose[1].translation, glam::Vec3::new(0.0, -10.0, 0.0));
}
