//! glTF import: hand-made documents (embedded, external and GLB buffers; STEP, LINEAR and
//! CUBICSPLINE samplers) with hand-computed values, errors with places, and the Fox sample.

use std::path::PathBuf;

use glam::{Quat, Vec3};
use proptest::prelude::*;
use taglane::core::anim::{
    AnimFormat, Clip, ImportOptions, Place, Transform, load_animation, load_animation_from_bytes,
    local_to_model, parse_bvh, write_bvh,
};

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in bytes.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= c.len() {
                s.push(A[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// Binary data: times [0, 1, 2] (12 bytes), translations for LINEAR (3 x vec3, 36 bytes),
/// rotations for STEP (3 x vec4, 48 bytes), cubic translations (3 keys x 3 vec3, 108 bytes).
fn data() -> Vec<u8> {
    let mut d = f32s(&[0.0, 1.0, 2.0]);
    d.extend(f32s(&[0.0, 0.0, 0.0, 10.0, 0.0, 0.0, 10.0, 20.0, 0.0]));
    let q90 = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    d.extend(f32s(&[0.0, 0.0, 0.0, 1.0]));
    d.extend(f32s(&q90.to_array()));
    d.extend(f32s(&[0.0, 0.0, 0.0, 1.0]));
    // Cubic: key k = (in-tangent, value, out-tangent); values y = 0, 1, 0; tangents 0 except the
    // out-tangent of key 0, which is 3 (a Hermite curve with p0 = 0, m0 = 3, p1 = 1, m1 = 0).
    d.extend(f32s(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0]));
    d.extend(f32s(&[0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]));
    d.extend(f32s(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]));
    d
}

fn document(buffer: &str) -> String {
    let len = data().len();
    format!(
        r#"{{
  "asset": {{"version": "2.0"}},
  "scene": 0,
  "scenes": [{{"nodes": [0]}}],
  "nodes": [
    {{"name": "Armature", "children": [1], "translation": [0, 0, 5]}},
    {{"name": "root", "children": [2]}},
    {{"name": "mid", "children": [3], "translation": [0, 1, 0]}},
    {{"name": "tip", "translation": [0, 10, 0]}}
  ],
  "skins": [{{"joints": [1, 3]}}],
  "buffers": [{buffer}],
  "bufferViews": [{{"buffer": 0, "byteOffset": 0, "byteLength": {len}}}],
  "accessors": [
    {{"bufferView": 0, "byteOffset": 0, "componentType": 5126, "count": 3, "type": "SCALAR", "min": [0], "max": [2]}},
    {{"bufferView": 0, "byteOffset": 12, "componentType": 5126, "count": 3, "type": "VEC3"}},
    {{"bufferView": 0, "byteOffset": 48, "componentType": 5126, "count": 3, "type": "VEC4"}},
    {{"bufferView": 0, "byteOffset": 96, "componentType": 5126, "count": 9, "type": "VEC3"}}
  ],
  "animations": [
    {{"name": "lin_step", "samplers": [
        {{"input": 0, "output": 1, "interpolation": "LINEAR"}},
        {{"input": 0, "output": 2, "interpolation": "STEP"}}],
      "channels": [
        {{"sampler": 0, "target": {{"node": 1, "path": "translation"}}}},
        {{"sampler": 1, "target": {{"node": 1, "path": "rotation"}}}}]}},
    {{"name": "cubic", "samplers": [{{"input": 0, "output": 3, "interpolation": "CUBICSPLINE"}}],
      "channels": [{{"sampler": 0, "target": {{"node": 3, "path": "translation"}}}}]}}
  ]
}}"#
    )
}

/// The hand-made document with its buffer embedded (two clips, "lin_step" and "cubic").
pub(crate) fn embedded() -> String {
    let len = data().len();
    document(&format!(
        r#"{{"byteLength": {len}, "uri": "data:application/octet-stream;base64,{}"}}"#,
        base64(&data())
    ))
}

fn glb(json: &str, bin: &[u8]) -> Vec<u8> {
    let mut j = json.as_bytes().to_vec();
    while !j.len().is_multiple_of(4) {
        j.push(b' ');
    }
    let mut b = bin.to_vec();
    while !b.len().is_multiple_of(4) {
        b.push(0);
    }
    let total = 12 + 8 + j.len() + 8 + b.len();
    let mut out = b"glTF".to_vec();
    out.extend(2u32.to_le_bytes());
    out.extend((total as u32).to_le_bytes());
    out.extend((j.len() as u32).to_le_bytes());
    out.extend(0x4E4F_534Au32.to_le_bytes());
    out.extend(j);
    out.extend((b.len() as u32).to_le_bytes());
    out.extend(0x004E_4942u32.to_le_bytes());
    out.extend(b);
    out
}

fn options(fps: f32) -> ImportOptions {
    ImportOptions {
        gltf_fps: Some(fps),
        ..ImportOptions::default()
    }
}

fn check_hand_made(clips: &[Clip]) {
    assert_eq!(clips.len(), 2);
    let c = &clips[0];
    c.validate().unwrap();
    assert_eq!(c.name, "lin_step");
    assert_eq!(c.unit_cm, 100.0);
    // The skeleton is the skin's joints; `mid` (not a joint) folds into `tip`, `Armature` into `root`.
    assert_eq!(c.skeleton.names, ["root", "tip"]);
    assert_eq!(c.skeleton.parents, [None, Some(0)]);
    assert_eq!(c.skeleton.rest[0].translation, Vec3::new(0.0, 0.0, 5.0));
    assert_eq!(c.skeleton.rest[1].translation, Vec3::new(0.0, 11.0, 0.0));
    // 2 s at 4 fps: 9 frames.
    assert_eq!(c.frame_count, 9);
    assert_eq!(c.fps, 4.0);
    assert_eq!(c.duration_s(), 2.0);
    // LINEAR translation at 0.5 s: (5, 0, 0), plus the folded Armature offset (0, 0, 5).
    assert!(c.translations[2 * 2].abs_diff_eq(Vec3::new(5.0, 0.0, 5.0), 1e-5));
    // At 1.5 s: halfway between (10, 0, 0) and (10, 20, 0).
    assert!(c.translations[6 * 2].abs_diff_eq(Vec3::new(10.0, 10.0, 5.0), 1e-5));
    // STEP rotation: identity before 1 s, 90 degrees about Z from 1 s to 2 s, identity at 2 s.
    let q90 = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    assert!(c.rotations[3 * 2].abs_diff_eq(Quat::IDENTITY, 1e-6));
    assert!(c.rotations[4 * 2].abs_diff_eq(q90, 1e-6));
    assert!(c.rotations[7 * 2].abs_diff_eq(q90, 1e-6));
    assert!(c.rotations[8 * 2].dot(Quat::IDENTITY).abs() > 1.0 - 1e-6);
    // The tip is 11 units above the root: at frame 4 (rotated 90 degrees about Z) it points to -X.
    let mut local = vec![Transform::IDENTITY; 2];
    let mut model = vec![Transform::IDENTITY; 2];
    assert!(c.copy_pose(4, &mut local));
    local_to_model(&c.skeleton, &local, &mut model).unwrap();
    assert!(
        model[1]
            .translation
            .abs_diff_eq(Vec3::new(10.0 - 11.0, 0.0, 5.0), 1e-4)
    );
    // CUBICSPLINE: Hermite with p0 = 0, m0 = 3, p1 = 1, m1 = 0, dt = 1; at s = 0.5:
    // 0.5 * 0 + 0.125 * 3 + 0.5 * 1 + (-0.125) * 0 = 0.875; plus the folded `mid` offset (1).
    let cubic = &clips[1];
    assert!((cubic.translations[2 * 2 + 1].y - 1.875).abs() < 1e-5);
    assert!((cubic.translations[4 * 2 + 1].y - 2.0).abs() < 1e-5);
    // Joints an animation does not touch keep their rest transform.
    assert_eq!(cubic.translations[2 * 2], Vec3::new(0.0, 0.0, 5.0));
}

#[test]
fn embedded_buffers() {
    let imported = load_animation_from_bytes(
        embedded().as_bytes(),
        AnimFormat::Gltf,
        "x",
        None,
        &options(4.0),
    )
    .unwrap();
    check_hand_made(&imported.clips);
}

#[test]
fn external_buffers_and_glb() {
    let dir = crate::common::Scratch::new("gltf");
    std::fs::write(dir.join("my data.bin"), data()).unwrap();
    let len = data().len();
    let json = document(&format!(
        r#"{{"byteLength": {len}, "uri": "my%20data.bin"}}"#
    ));
    let path = dir.join("rig.gltf");
    std::fs::write(&path, &json).unwrap();
    check_hand_made(&load_animation(&path, &options(4.0)).unwrap().clips);
    // From bytes without a folder, the external buffer is an error naming the buffer.
    let e = load_animation_from_bytes(json.as_bytes(), AnimFormat::Gltf, "x", None, &options(4.0))
        .unwrap_err();
    assert_eq!(e.place, Place::Json("buffers[0].uri".into()));
    // Escaping the folder is refused.
    let evil = document(&format!(
        r#"{{"byteLength": {len}, "uri": "../etc/passwd"}}"#
    ));
    let e = load_animation_from_bytes(
        evil.as_bytes(),
        AnimFormat::Gltf,
        "x",
        Some(&*dir),
        &options(4.0),
    )
    .unwrap_err();
    assert!(e.message.contains("relative path"), "{e}");
    // GLB with the BIN chunk.
    let bin_json = document(&format!(r#"{{"byteLength": {len}}}"#));
    let bytes = glb(&bin_json, &data());
    let glb_path = dir.join("rig.glb");
    std::fs::write(&glb_path, &bytes).unwrap();
    check_hand_made(&load_animation(&glb_path, &options(4.0)).unwrap().clips);
    // The files a cache of the take must watch besides it: the external buffer (once, decoded),
    // not the embedded one, the BIN chunk or a file outside the folder.
    let uris = taglane::core::anim::gltf::external_buffer_uris;
    assert_eq!(uris(json.as_bytes()), ["my data.bin"]);
    assert!(uris(embedded().as_bytes()).is_empty());
    assert!(uris(evil.as_bytes()).is_empty());
    assert!(uris(&bytes).is_empty());
    let two = format!(
        r#"{{"byteLength": {len}, "uri": "a.bin"}}, {{"byteLength": {len}, "uri": "a.bin"}}"#
    );
    assert_eq!(uris(glb(&document(&two), &[]).as_slice()), ["a.bin"]);
    assert!(uris(b"{ not json").is_empty());
}

#[test]
fn required_mesh_extensions_are_ignored_with_a_warning_meshopt_is_refused() {
    let doc = embedded().replacen(
        r#""asset": {"version": "2.0"},"#,
        r#""asset": {"version": "2.0"}, "extensionsUsed": ["KHR_mesh_quantization"], "extensionsRequired": ["KHR_mesh_quantization"],"#,
        1,
    );
    let i = load_animation_from_bytes(doc.as_bytes(), AnimFormat::Gltf, "x", None, &options(4.0))
        .unwrap();
    check_hand_made(&i.clips);
    assert!(
        i.warnings
            .iter()
            .any(|w| w.message.contains("KHR_mesh_quantization"))
    );
    let doc = embedded().replacen(
        r#""asset": {"version": "2.0"},"#,
        r#""asset": {"version": "2.0"}, "extensionsUsed": ["EXT_meshopt_compression"], "extensionsRequired": ["EXT_meshopt_compression"],"#,
        1,
    );
    let e = load_animation_from_bytes(doc.as_bytes(), AnimFormat::Gltf, "x", None, &options(4.0))
        .unwrap_err();
    assert!(
        matches!(e.place, Place::Json(ref p) if p.contains("extensionsRequired")),
        "{e}"
    );
}

#[test]
fn resampling_rounds_the_frame_count_up() {
    // 2 s at 3 fps is exactly 7 frames; at 2.5 fps, 5 intervals cover 2 s exactly; at 2.2 fps the
    // 4.4 intervals round up to 5 (6 frames, 2.27 s) and the last frame holds the last key.
    for (fps, frames) in [(3.0, 7), (2.5, 6), (2.2, 6)] {
        let c = &load_animation_from_bytes(
            embedded().as_bytes(),
            AnimFormat::Gltf,
            "x",
            None,
            &options(fps),
        )
        .unwrap()
        .clips[0];
        assert_eq!(c.frame_count, frames, "{fps}");
        assert!(c.duration_s() >= 2.0 - 1e-5 && c.duration_s() < 2.0 + 1.0 / fps);
    }
    let skip = ImportOptions {
        skip_first_frame: true,
        gltf_fps: Some(4.0),
        ..ImportOptions::default()
    };
    let i = load_animation_from_bytes(embedded().as_bytes(), AnimFormat::Gltf, "x", None, &skip)
        .unwrap();
    assert_eq!(i.clips[0].frame_count, 8);
    assert!(
        i.warnings
            .iter()
            .any(|w| w.message.contains("skipped the first frame"))
    );
}

#[test]
fn errors_name_the_place() {
    let bad = |bytes: &[u8], format: AnimFormat| {
        load_animation_from_bytes(bytes, format, "x", None, &options(30.0)).unwrap_err()
    };
    assert_eq!(bad(b"glTX....", AnimFormat::Glb).place, Place::Byte(0));
    let mut v1 = glb(&embedded(), &[]);
    v1[4] = 1;
    assert_eq!(bad(&v1, AnimFormat::Glb).place, Place::Byte(4));
    let mut truncated = glb(&embedded(), &data());
    truncated.truncate(truncated.len() - 10);
    assert_eq!(bad(&truncated, AnimFormat::Glb).place, Place::Byte(8));
    let e = bad(b"{ not json", AnimFormat::Gltf);
    assert!(
        matches!(e.place, Place::Json(ref p) if p.contains("line 1")),
        "{e}"
    );
    // An accessor running past its view.
    let e = bad(
        embedded()
            .replace(r#""count": 9"#, r#""count": 90"#)
            .as_bytes(),
        AnimFormat::Gltf,
    );
    assert_eq!(e.place, Place::Json("accessors[3]".into()), "{e}");
    // Output count mismatch for a cubic sampler.
    let e = bad(
        embedded()
            .replace(r#""count": 9"#, r#""count": 3"#)
            .as_bytes(),
        AnimFormat::Gltf,
    );
    assert_eq!(
        e.place,
        Place::Json("animations[1].samplers[0].output".into()),
        "{e}"
    );
    // Decreasing key times.
    let mut d = data();
    d[4..8].copy_from_slice(&5.0f32.to_le_bytes());
    let doc = document(&format!(
        r#"{{"byteLength": {}, "uri": "data:application/octet-stream;base64,{}"}}"#,
        d.len(),
        base64(&d)
    ));
    let e = bad(doc.as_bytes(), AnimFormat::Gltf);
    assert_eq!(
        e.place,
        Place::Json("animations[0].samplers[0].input".into()),
        "{e}"
    );
    // A node index out of range, caught by validation with its JSON path.
    let e = bad(
        embedded()
            .replace(r#""joints": [1, 3]"#, r#""joints": [1, 30]"#)
            .as_bytes(),
        AnimFormat::Gltf,
    );
    assert!(
        matches!(e.place, Place::Json(ref p) if p.contains("skins")),
        "{e}"
    );
    // Key times far in the future would need too many frames.
    let mut d = data();
    d[8..12].copy_from_slice(&1.0e9f32.to_le_bytes());
    let doc = document(&format!(
        r#"{{"byteLength": {}, "uri": "data:application/octet-stream;base64,{}"}}"#,
        d.len(),
        base64(&d)
    ));
    let e = bad(doc.as_bytes(), AnimFormat::Gltf);
    assert_eq!(e.place, Place::Json("animations[0]".into()), "{e}");
    // A bad rate option.
    let e = load_animation_from_bytes(
        embedded().as_bytes(),
        AnimFormat::Gltf,
        "x",
        None,
        &options(0.0),
    )
    .unwrap_err();
    assert!(e.message.contains("resampling rate"));
}

#[test]
fn gltf_clips_export_to_bvh() {
    let clips = load_animation_from_bytes(
        embedded().as_bytes(),
        AnimFormat::Gltf,
        "x",
        None,
        &options(4.0),
    )
    .unwrap()
    .clips;
    let text = write_bvh(&clips[0]);
    let (back, _) = parse_bvh(&text, "b", &ImportOptions::default()).unwrap();
    assert_eq!(back.frame_count, 9);
    let mut l = vec![Transform::IDENTITY; 2];
    let mut a = vec![Transform::IDENTITY; 2];
    let mut b = vec![Transform::IDENTITY; 2];
    for f in 0..9 {
        clips[0].copy_pose(f, &mut l);
        local_to_model(&clips[0].skeleton, &l, &mut a).unwrap();
        back.copy_pose(f, &mut l);
        local_to_model(&back.skeleton, &l, &mut b).unwrap();
        for j in 0..2 {
            assert!(a[j].translation.abs_diff_eq(b[j].translation, 1e-4));
        }
    }
}

fn fox() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/mocap/gltf_Fox.glb"
    ))
}

#[test]
#[ignore = "needs ../shared/mocap"]
fn fox_has_three_clips_of_24_joints() {
    let i = load_animation(&fox(), &ImportOptions::default()).unwrap();
    let names: Vec<&str> = i.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["Survey", "Walk", "Run"]);
    // By default each animation keeps its keys' rate: Survey and Walk are keyed every 1/24 s,
    // so their keys are their frames and their last key their last frame (SOURCES.md: 83 and
    // 18 keys). Run's keys jump from 16/24 s to 20.8/24 s, then go on every 1/24 s: 23 of its 24
    // gaps are 1/24 s, so 24 fps all the same (the keys before the jump on frames), rounded up to
    // 29 frames, with a warning naming the animation.
    for (c, source, fps, frames) in [
        (&i.clips[0], 3.416_666_7f32, 24.0, 83),
        (&i.clips[1], 0.708_333_3, 24.0, 18),
        (&i.clips[2], 1.158_333_3, 24.0, 29),
    ] {
        c.validate().unwrap();
        assert_eq!(c.joint_count(), 24);
        assert_eq!(c.fps, fps, "{}", c.name);
        assert_eq!(c.frame_count, frames, "{}", c.name);
        assert!(
            c.duration_s() >= source - 1e-4 && c.duration_s() < source + 1.0 / fps,
            "{}",
            c.name
        );
    }
    assert!((i.clips[0].duration_s() - 3.416_666_7).abs() < 1e-4);
    assert_eq!(i.warnings.len(), 1, "{:?}", i.warnings);
    assert!(
        i.warnings[0]
            .to_string()
            .starts_with("animations[2]: its keys are not all evenly spaced: resampled at 24 fps"),
        "{}",
        i.warnings[0]
    );
    // A rate asked for is used as it is, with no warning.
    let i30 = load_animation(&fox(), &options(30.0)).unwrap();
    assert!(i30.warnings.is_empty(), "{:?}", i30.warnings);
    assert_eq!(i30.clips[1].frame_count, 23);
    assert_eq!(i30.clips[1].fps, 30.0);
}

/// The key rate: one even grid of every channel's keys from the start, an integer rate when
/// it is one to within 1/1000, raised to a multiple of at least 24 fps when sparser.
#[test]
fn key_rates_are_found_on_an_even_grid() {
    use taglane::core::anim::gltf::key_rate;
    let grid = |n: usize, rate: f32| -> Vec<f32> { (0..n).map(|k| k as f32 / rate).collect() };
    let a = grid(40, 24.0);
    let b = grid(10, 12.0); // every other key of a, on the same grid
    assert_eq!(
        key_rate([a.as_slice(), b.as_slice()].into_iter(), 0.0),
        Some(24.0)
    );
    assert_eq!(
        key_rate([grid(90, 60.0).as_slice()].into_iter(), 0.0),
        Some(60.0)
    );
    let ntsc = grid(30, 29.97);
    let r = key_rate([ntsc.as_slice()].into_iter(), 0.0).unwrap();
    assert!((r - 29.97).abs() < 1e-3, "{r}");
    // Two keys a second apart: 1 fps, raised to 24 (the keys stay on frames 0 and 24).
    assert_eq!(
        key_rate([[0.0f32, 1.0].as_slice()].into_iter(), 0.0),
        Some(24.0)
    );
    // Two keys 0.3 s apart: 3.33 fps, raised to 8 x 3.33 = 26.7.
    let r = key_rate([[0.0f32, 0.3].as_slice()].into_iter(), 0.0).unwrap();
    assert!((r - 80.0 / 3.0).abs() < 1e-3, "{r}");
    // Off the grid of the smallest gap: none.
    assert_eq!(
        key_rate([[0.0f32, 0.1, 0.25].as_slice()].into_iter(), 0.0),
        None
    );
    // Mostly evenly spaced: the rate of the smallest gap, where at least 80 % of the gaps are it
    // (8 of 9 here; 1 of 2 above is too few).
    use taglane::core::anim::gltf::closest_key_rate;
    let mut most = grid(9, 24.0);
    most.push(8.0 / 24.0 + 0.2);
    assert_eq!(key_rate([most.as_slice()].into_iter(), 0.0), None);
    assert_eq!(closest_key_rate([most.as_slice()].into_iter()), Some(24.0));
    assert_eq!(
        closest_key_rate([[0.0f32, 0.1, 0.25].as_slice()].into_iter()),
        None
    );
    assert_eq!(
        closest_key_rate([grid(90, 60.0).as_slice()].into_iter()),
        Some(60.0)
    );
    // Keys starting off the grid from the start.
    assert_eq!(
        key_rate([[0.03f32, 0.13, 0.23].as_slice()].into_iter(), 0.0),
        None
    );
    // One distinct time, or none: none.
    assert_eq!(key_rate([[0.5f32, 0.5].as_slice()].into_iter(), 0.0), None);
    assert_eq!(key_rate(std::iter::empty(), 0.0), None);
    // Faster than 1000 fps: none.
    assert_eq!(
        key_rate([grid(10, 2000.0).as_slice()].into_iter(), 0.0),
        None
    );
}

#[test]
#[ignore = "needs ../shared/mocap"]
fn fox_matches_the_gltf_crate_reader_at_key_times() {
    // Independent oracle: the `gltf` crate's own GLB parser and accessor reader.
    let bytes = std::fs::read(fox()).unwrap();
    let g = gltf::Gltf::from_slice(&bytes).unwrap();
    let blob = g.blob.clone().unwrap();
    let ours = load_animation(&fox(), &options(24.0)).unwrap().clips;
    let anim = g.animations().next().unwrap(); // Survey, keys every 1/24 s
    let clip = &ours[0];
    let n = clip.joint_count();
    let mut checked = 0;
    for ch in anim.channels() {
        let node = ch.target().node();
        let name = node.name().unwrap();
        let j = clip.skeleton.find(name).unwrap();
        let reader = ch.reader(|_| Some(&blob[..]));
        let times: Vec<f32> = reader.read_inputs().unwrap().collect();
        match reader.read_outputs().unwrap() {
            gltf::animation::util::ReadOutputs::Rotations(r) => {
                for (k, q) in r.into_f32().enumerate() {
                    let f = (times[k] * 24.0).round() as usize;
                    let q = Quat::from_array(q).normalize();
                    let ours_q = clip.rotations[f * n + j];
                    assert!(ours_q.dot(q).abs() > 1.0 - 1e-5, "{name} key {k}");
                    checked += 1;
                }
            }
            gltf::animation::util::ReadOutputs::Translations(t) => {
                for (k, v) in t.enumerate() {
                    let f = (times[k] * 24.0).round() as usize;
                    assert!(
                        clip.translations[f * n + j].abs_diff_eq(Vec3::from_array(v), 1e-3),
                        "{name} key {k}"
                    );
                    checked += 1;
                }
            }
            _ => {}
        }
    }
    assert!(checked > 1000, "{checked}");
}

#[test]
#[ignore = "needs ../shared/mocap"]
fn fox_bone_lengths_are_constant() {
    for c in load_animation(&fox(), &ImportOptions::default())
        .unwrap()
        .clips
    {
        let n = c.joint_count();
        let mut l = vec![Transform::IDENTITY; n];
        let mut m = vec![Transform::IDENTITY; n];
        let mut first = Vec::new();
        for f in 0..c.frame_count {
            c.copy_pose(f, &mut l);
            local_to_model(&c.skeleton, &l, &mut m).unwrap();
            let len: Vec<f32> = (0..n)
                .map(|j| {
                    c.skeleton.parents[j]
                        .map_or(0.0, |p| m[j].translation.distance(m[p].translation))
                })
                .collect();
            if f == 0 {
                first = len;
            } else {
                for j in 0..n {
                    // b_Hip_01 carries the translation channel.
                    if c.skeleton.names[j] != "b_Hip_01" {
                        assert!(
                            (len[j] - first[j]).abs() < 1e-3,
                            "{} {} frame {f}",
                            c.name,
                            c.skeleton.names[j]
                        );
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn mutated_glb_never_panics(pos in 0usize..2000, bytes in proptest::collection::vec(any::<u8>(), 1..8)) {
        let mut g = glb(&document(&format!(r#"{{"byteLength": {}}}"#, data().len())), &data());
        let pos = pos % g.len();
        for (k, b) in bytes.iter().enumerate() {
            if pos + k < g.len() {
                g[pos + k] = *b;
            }
        }
        let _ = load_animation_from_bytes(&g, AnimFormat::Glb, "x", None, &options(30.0));
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = load_animation_from_bytes(&bytes, AnimFormat::Glb, "x", None, &options(30.0));
        let _ = load_animation_from_bytes(&bytes, AnimFormat::Gltf, "x", None, &options(30.0));
    }
}

#[test]
#[ignore = "needs ../shared/mocap"]
fn fox_sampling_at_frame_times_and_bvh_round_trip() {
    use taglane::core::anim::{RotationInterp, SampleSettings, sample_clip};
    for c in load_animation(&fox(), &ImportOptions::default())
        .unwrap()
        .clips
    {
        let n = c.joint_count();
        let mut s = vec![Transform::IDENTITY; n];
        let mut f_pose = vec![Transform::IDENTITY; n];
        for f in 0..c.frame_count {
            sample_clip(
                &c,
                f as f64 / f64::from(c.fps),
                &SampleSettings::clamped(RotationInterp::Slerp),
                &mut s,
            )
            .unwrap();
            assert!(c.copy_pose(f, &mut f_pose));
            assert_eq!(s, f_pose, "{} frame {f}", c.name);
        }
        // Export to BVH: joint names, order and global positions survive.
        let (back, _) = parse_bvh(&write_bvh(&c), "fox", &ImportOptions::default()).unwrap();
        assert_eq!(back.skeleton.names, c.skeleton.names);
        assert_eq!(back.frame_count, c.frame_count);
        let mut l = vec![Transform::IDENTITY; n];
        let (mut a, mut b) = (vec![Transform::IDENTITY; n], vec![Transform::IDENTITY; n]);
        let mut worst = 0.0f32;
        for f in 0..c.frame_count {
            c.copy_pose(f, &mut l);
            local_to_model(&c.skeleton, &l, &mut a).unwrap();
            back.copy_pose(f, &mut l);
            local_to_model(&back.skeleton, &l, &mut b).unwrap();
            for j in 0..n {
                worst = worst.max(a[j].translation.distance(b[j].translation));
            }
        }
        assert!(worst < 1e-4, "{}: {worst}", c.name);
    }
}
