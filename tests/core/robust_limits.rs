//! Limits instead of crashes: file size, joint count, frame count (and joint samples) and query
//! depth, each refused with a clear error naming the place and the limit.

use crate::common::temp_dir;
use std::fmt::Write as _;

use taglane::core::anim::{
    AnimFormat, ImportError, ImportOptions, Imported, Place, load_animation,
    load_animation_from_bytes,
};
use taglane::core::compress::bits::crc32;
use taglane::core::compress::format::CompressedClip;
use taglane::core::limits::{
    MAX_ANIM_FILE_BYTES, MAX_FRAMES, MAX_JOINT_SAMPLES, MAX_JOINTS, MAX_QUERY_DEPTH,
    MAX_TAGS_FILE_BYTES, MAX_TLC_FILE_BYTES,
};
use taglane::core::tags::{TagDocument, parse_query};

/// A sparse file of `len` bytes (no disk space used).
fn sparse_file(path: &std::path::Path, len: u64) {
    let f = std::fs::File::create(path).unwrap();
    f.set_len(len).unwrap();
}

fn bvh(joints: usize, channels_on_root: &str, rows: usize, row: &str) -> String {
    let mut s = String::from("HIERARCHY\nROOT j0\n{\nOFFSET 0 0 0\n");
    writeln!(s, "{channels_on_root}").unwrap();
    for j in 1..joints {
        write!(s, "JOINT j{j}\n{{\nOFFSET 0 1 0\n}}\n").unwrap();
    }
    write!(s, "}}\nMOTION\nFrames: {rows}\nFrame Time: 0.01\n").unwrap();
    for _ in 0..rows {
        s.push_str(row);
        s.push('\n');
    }
    s
}

fn import_bvh(text: &str) -> Result<usize, taglane::core::anim::ImportError> {
    load_animation_from_bytes(
        text.as_bytes(),
        AnimFormat::Bvh,
        "t",
        None,
        &ImportOptions::default(),
    )
    .map(|i| i.clips[0].frame_count)
}

#[test]
fn bvh_joint_count_limit() {
    assert!(import_bvh(&bvh(MAX_JOINTS, "CHANNELS 1 Xrotation", 1, "0")).is_ok());
    let e = import_bvh(&bvh(MAX_JOINTS + 1, "CHANNELS 1 Xrotation", 1, "0")).unwrap_err();
    // The joint past the limit is on line 6 + 4 * (MAX_JOINTS - 1).
    assert_eq!(e.place, Place::Line(5 + 4 * (MAX_JOINTS - 1) + 1), "{e}");
    assert!(
        e.message.contains(&format!("at most {MAX_JOINTS} joints")),
        "{e}"
    );
}

#[test]
fn bvh_frame_count_limit() {
    let ok = bvh(1, "CHANNELS 1 Xrotation", MAX_FRAMES, "0");
    assert_eq!(import_bvh(&ok).unwrap(), MAX_FRAMES);
    let too_many = bvh(1, "CHANNELS 1 Xrotation", MAX_FRAMES + 1, "0");
    let e = import_bvh(&too_many).unwrap_err();
    // Header lines: 6, then rows from line 10 (1 joint); the failing row is the last one.
    assert_eq!(e.place, Place::Line(10 + MAX_FRAMES), "{e}");
    assert!(
        e.message.contains(&format!("at most {MAX_FRAMES} frames")),
        "{e}"
    );
}

#[test]
fn bvh_joint_sample_limit_stops_a_small_file_from_allocating_gigabytes() {
    // 4,000 joints but one channel: each 2-byte row is 4,000 joint samples (160 kB of tracks).
    let joints = 4_000;
    assert!(joints <= MAX_JOINTS);
    let rows = MAX_JOINT_SAMPLES / joints + 1;
    let text = bvh(joints, "CHANNELS 1 Xrotation", rows, "0");
    assert!(text.len() < 200_000);
    let e = import_bvh(&text).unwrap_err();
    assert!(e.message.contains("joint samples"), "{e}");
    assert!(matches!(e.place, Place::Line(_)));
}

#[test]
fn bvh_header_frame_count_is_not_trusted() {
    // The header claims a trillion frames; two rows are present.
    let text = bvh(3, "CHANNELS 3 Xrotation Yrotation Zrotation", 2, "1 2 3")
        .replace("Frames: 2", "Frames: 999999999999");
    let (clip, warnings) = {
        let i = load_animation_from_bytes(
            text.as_bytes(),
            AnimFormat::Bvh,
            "t",
            None,
            &ImportOptions::default(),
        )
        .unwrap();
        (i.clips.into_iter().next().unwrap(), i.warnings)
    };
    assert_eq!(clip.frame_count, 2);
    assert!(
        clip.rotations.capacity() < 1_000,
        "reserved from the header claim"
    );
    assert!(warnings.iter().any(|w| w.message.contains("999999999999")));
    // Without channels the header is all there is: capped rest poses, with a warning.
    let text = bvh(2, "", 0, "").replace("Frames: 0", "Frames: 999999999999");
    let i = load_animation_from_bytes(
        text.as_bytes(),
        AnimFormat::Bvh,
        "t",
        None,
        &ImportOptions::default(),
    )
    .unwrap();
    assert!(i.clips[0].frame_count <= MAX_FRAMES);
    assert!(i.warnings.iter().any(|w| w.message.contains("capped")));
}

const NO_SKIN_GLTF: &str = include_str!("../../fuzz/seeds/gltf/no_skin.gltf");

/// `doc` imported as a glTF file with the default options.
fn import_gltf(doc: &serde_json::Value) -> Result<Imported, ImportError> {
    load_animation_from_bytes(
        doc.to_string().as_bytes(),
        AnimFormat::Gltf,
        "t",
        None,
        &ImportOptions::default(),
    )
}

#[test]
fn gltf_joint_count_limit() {
    let mut doc: serde_json::Value = serde_json::from_str(NO_SKIN_GLTF).unwrap();
    let import = import_gltf;
    assert_eq!(import(&doc).unwrap().clips[0].skeleton.names.len(), 3);
    let nodes = doc["nodes"].as_array_mut().unwrap();
    // Without a skin every node is a joint: MAX_JOINTS nodes pass, one more does not.
    for i in nodes.len()..MAX_JOINTS {
        nodes.push(serde_json::json!({ "name": format!("n{i}") }));
    }
    assert_eq!(
        import(&doc).unwrap().clips[0].skeleton.names.len(),
        MAX_JOINTS
    );
    doc["nodes"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({}));
    let e = import(&doc).unwrap_err();
    assert_eq!(e.place, Place::Json("nodes".into()), "{e}");
    assert!(
        e.message.contains(&format!("at most {MAX_JOINTS} joints")),
        "{e}"
    );
}

/// The small glTF with its key times moved to 0, 0.5 and 100 s (a second buffer).
fn hundred_second_gltf() -> serde_json::Value {
    let mut doc: serde_json::Value = serde_json::from_str(NO_SKIN_GLTF).unwrap();
    doc["buffers"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "byteLength": 12,
            "uri": "data:application/octet-stream;base64,AAAAAAAAAD8AAMhC"
        }));
    doc["bufferViews"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"buffer": 1, "byteOffset": 0, "byteLength": 12}));
    let views = doc["bufferViews"].as_array().unwrap().len();
    doc["accessors"][0]["bufferView"] = serde_json::json!(views - 1);
    doc["accessors"][0]["max"] = serde_json::json!([100.0]);
    doc
}

#[test]
fn gltf_frame_count_limit() {
    // At 10,000 fps the key times 0, 0.5 and 100 s are 1,000,001 frames.
    let doc = hundred_second_gltf();
    let import = |fps: f32| {
        let options = ImportOptions {
            gltf_fps: Some(fps),
            ..ImportOptions::default()
        };
        load_animation_from_bytes(
            doc.to_string().as_bytes(),
            AnimFormat::Gltf,
            "t",
            None,
            &options,
        )
    };
    assert_eq!(import(30.0).unwrap().clips[0].frame_count, 3001);
    let e = import(10_000.0).unwrap_err();
    assert_eq!(e.place, Place::Json("animations[0]".into()), "{e}");
    assert!(e.message.contains(&format!("{MAX_FRAMES} frames")), "{e}");
}

#[test]
fn gltf_joint_sample_limit_counts_every_animation_of_the_file() {
    // Key times 0, 0.5 and 100 s on 3 joints: at 4,000 fps each animation is 400,001 frames,
    // 1,200,003 joint samples, within the limits of one clip. 17 of them are past the limit for
    // the file; it is refused before any clip is resampled.
    let mut doc = hundred_second_gltf();
    let per_clip = 400_001 * 3;
    let clips = MAX_JOINT_SAMPLES / per_clip + 1;
    let anim = doc["animations"][0].clone();
    doc["animations"] = serde_json::Value::Array(vec![anim; clips]);
    let options = ImportOptions {
        gltf_fps: Some(4_000.0),
        ..ImportOptions::default()
    };
    let e = load_animation_from_bytes(
        doc.to_string().as_bytes(),
        AnimFormat::Gltf,
        "t",
        None,
        &options,
    )
    .unwrap_err();
    assert_eq!(
        e.place,
        Place::Json(format!("animations[{}]", clips - 1)),
        "{e}"
    );
    assert!(
        e.message.contains(&format!(
            "at most {MAX_JOINT_SAMPLES} joint samples (frames x 3 joints) in all the animations"
        )),
        "{e}"
    );
    assert!(e.message.contains(&(clips * per_clip).to_string()), "{e}");
}

#[test]
fn gltf_accessors_decode_once_and_may_not_overlap_without_end() {
    // 40 samplers on the node `head`'s scale: each a copy of the cubic sampler (27 values of the
    // 396-byte buffer). Sharing one output accessor, it is decoded once; 40 accessors over the
    // same bytes would decode to 1,080 values, more than one per byte of the buffer.
    let base: serde_json::Value = serde_json::from_str(NO_SKIN_GLTF).unwrap();
    let import = import_gltf;
    let copies = 40;
    let mut shared = base.clone();
    let mut overlapping = base.clone();
    for (doc, distinct) in [(&mut shared, false), (&mut overlapping, true)] {
        let cubic = doc["accessors"][3].clone();
        let mut samplers = Vec::new();
        let mut channels = Vec::new();
        for k in 0..copies {
            let output = if distinct {
                let accessors = doc["accessors"].as_array_mut().unwrap();
                accessors.push(cubic.clone());
                accessors.len() - 1
            } else {
                3
            };
            samplers.push(
                serde_json::json!({"input": 0, "output": output, "interpolation": "CUBICSPLINE"}),
            );
            channels
                .push(serde_json::json!({"sampler": k, "target": {"node": 2, "path": "scale"}}));
        }
        doc["animations"][0]["samplers"] = serde_json::Value::Array(samplers);
        doc["animations"][0]["channels"] = serde_json::Value::Array(channels);
    }
    let i = import(&shared).unwrap();
    assert_eq!(i.clips.len(), 1);
    let e = import(&overlapping).unwrap_err();
    assert!(
        matches!(&e.place, Place::Json(p) if p.starts_with("accessors[")),
        "{e}"
    );
    assert!(
        e.message
            .contains("at most 396 values in all (one per byte of its buffers"),
        "{e}"
    );
}

#[test]
fn gltf_external_buffers_are_read_once_and_limited_together() {
    use taglane::core::limits::MAX_GLTF_BUFFER_BYTES;
    // Two buffers naming one file of 60% of the limit: read once, within the limit. Two files of
    // that size: refused at the second, before it is read.
    let dir = crate::common::Scratch::new("gltf-buffers");
    let size = MAX_GLTF_BUFFER_BYTES / 10 * 6;
    sparse_file(&dir.join("big.bin"), size);
    sparse_file(&dir.join("big2.bin"), size);
    let with = |uris: [&str; 2]| {
        let mut doc: serde_json::Value = serde_json::from_str(NO_SKIN_GLTF).unwrap();
        let buffers = doc["buffers"].as_array_mut().unwrap();
        for uri in uris {
            buffers.push(serde_json::json!({"byteLength": size, "uri": uri}));
        }
        let path = dir.join("doc.gltf");
        std::fs::write(&path, doc.to_string()).unwrap();
        load_animation(&path, &ImportOptions::default())
    };
    assert_eq!(with(["big.bin", "big.bin"]).unwrap().clips.len(), 1);
    let e = with(["big.bin", "big2.bin"]).unwrap_err();
    assert!(e.file.ends_with("doc.gltf"), "{e}");
    assert_eq!(e.place, Place::Json("buffers[2].uri".into()), "{e}");
    assert!(
        e.message.contains(&format!(
            "at most {MAX_GLTF_BUFFER_BYTES} bytes (512 MiB) together"
        )),
        "{e}"
    );
}

#[test]
fn file_size_limits_name_the_file() {
    let dir = temp_dir("size-limits");
    let big_bvh = dir.join("huge.bvh");
    sparse_file(&big_bvh, MAX_ANIM_FILE_BYTES + 1);
    let e = load_animation(&big_bvh, &ImportOptions::default()).unwrap_err();
    assert_eq!(e.file, big_bvh.display().to_string());
    assert_eq!(e.place, Place::File);
    assert!(
        e.message
            .contains(&format!("at most {MAX_ANIM_FILE_BYTES} bytes")),
        "{e}"
    );

    let big_tags = dir.join("huge.taglane.json");
    sparse_file(&big_tags, MAX_TAGS_FILE_BYTES + 1);
    let e = TagDocument::load(&big_tags).unwrap_err().to_string();
    assert!(e.contains("huge.taglane.json"), "{e}");
    assert!(
        e.contains(&format!("at most {MAX_TAGS_FILE_BYTES} bytes")),
        "{e}"
    );

    let big_csv = dir.join("huge.csv");
    sparse_file(&big_csv, taglane::core::limits::MAX_CSV_FILE_BYTES + 1);
    let e = taglane::core::doc::exchange::load_csv_file(&big_csv).unwrap_err();
    assert!(e.contains("huge.csv") && e.contains("at most"), "{e}");

    // The compressed clip reader, through the command line (which reads .tlc files).
    let big_tlc = dir.join("huge.tlc");
    sparse_file(&big_tlc, MAX_TLC_FILE_BYTES + 1);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_taglane"))
        .arg("decompress")
        .arg(&big_tlc)
        .arg("-o")
        .arg(dir.join("out.bvh"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("huge.tlc") && err.contains(&format!("at most {MAX_TLC_FILE_BYTES} bytes")),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Patches a header field of a valid `.tlc` and fixes the checksum, so the field check is reached.
fn patched_tlc(at: usize, value: &[u8]) -> Vec<u8> {
    let mut b = include_bytes!("../../fuzz/seeds/tlc/tiny0_raw.tlc").to_vec();
    b[at..at + value.len()].copy_from_slice(value);
    let n = b.len();
    let crc = crc32(&b[..n - 4]);
    b[n - 4..].copy_from_slice(&crc.to_le_bytes());
    b
}

#[test]
fn tlc_frame_and_joint_limits() {
    assert!(CompressedClip::from_bytes(patched_tlc(16, &[2, 0, 0, 0])).is_ok());
    let frames = (MAX_FRAMES as u32 + 1).to_le_bytes();
    let e = CompressedClip::from_bytes(patched_tlc(16, &frames))
        .unwrap_err()
        .to_string();
    assert!(e.contains("frame count at byte 16"), "{e}");
    assert!(e.contains(&format!("at most {MAX_FRAMES} frames")), "{e}");
    // 10,000 frames x 2 joints is within the limits: the key count check refuses the patched file.
    let e = CompressedClip::from_bytes(patched_tlc(16, &10_000u32.to_le_bytes()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("key count"), "{e}");
    let joints = (MAX_JOINTS as u16 + 1).to_le_bytes();
    let e = CompressedClip::from_bytes(patched_tlc(12, &joints))
        .unwrap_err()
        .to_string();
    assert!(e.contains("joint count at byte 12"), "{e}");
    assert!(e.contains(&format!("at most {MAX_JOINTS} joints")), "{e}");
}

#[test]
fn query_depth_limit() {
    let names = ["walk"];
    let nested = |depth: usize| format!("{}walk{}", "(".repeat(depth), ")".repeat(depth));
    assert!(parse_query(&nested(MAX_QUERY_DEPTH - 1), &names).is_ok());
    let text = nested(MAX_QUERY_DEPTH + 1);
    let e = parse_query(&text, &names).unwrap_err();
    assert!(
        e.message.contains(&format!("{MAX_QUERY_DEPTH} levels")),
        "{e}"
    );
    assert!(
        e.column() > MAX_QUERY_DEPTH - 5 && e.column() <= MAX_QUERY_DEPTH + 2,
        "{e}"
    );
    // Deep `!` chains and a huge flat query are fine or refused, never a stack overflow.
    let nots = format!("{}walk", "!".repeat(100_000));
    assert!(parse_query(&nots, &names).is_err());
    let flat = vec!["walk"; 100_000].join(" | ");
    assert!(parse_query(&flat, &names).is_ok());
}
