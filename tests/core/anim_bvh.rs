//! BVH import and export on small hand-made files, one per quirk real files have
//! (see `../shared/mocap/SOURCES.md`), with poses computed by hand.

use glam::{Quat, Vec3};
use proptest::prelude::*;
use taglane::core::anim::{
    Clip, ImportOptions, Place, Transform, joint_to_model, local_to_model, parse_bvh,
    parse_bvh_bytes, write_bvh,
};

fn parse(text: &str) -> Clip {
    let (clip, warnings) = parse_bvh(text, "t", &ImportOptions::default()).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    clip.validate().unwrap();
    clip
}

fn pose(clip: &Clip, f: usize) -> Vec<Transform> {
    let n = clip.joint_count();
    (0..n)
        .map(|j| Transform {
            translation: clip.translations[f * n + j],
            rotation: clip.rotations[f * n + j],
            scale: clip.scales[f * n + j],
        })
        .collect()
}

fn globals(clip: &Clip, f: usize) -> Vec<Vec3> {
    let local = pose(clip, f);
    let mut model = vec![Transform::IDENTITY; local.len()];
    local_to_model(&clip.skeleton, &local, &mut model).unwrap();
    model.iter().map(|t| t.translation).collect()
}

fn assert_close(a: Vec3, b: Vec3) {
    assert!(a.abs_diff_eq(b, 1e-4), "{a} != {b}");
}

/// Root with 6 channels at (1, 2, 3), arm of two 10-unit bones along +Y.
const ARM: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 100 100 100
  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
  JOINT A
  {
    OFFSET 0 10 0
    CHANNELS 3 Zrotation Yrotation Xrotation
    JOINT B
    {
      OFFSET 0 10 0
      CHANNELS 3 Zrotation Yrotation Xrotation
      End Site
      {
        OFFSET 0 5 0
      }
    }
  }
}
MOTION
Frames: 2
Frame Time: .0083333
1 2 3 0 0 0 0 0 0 0 0 0
1 2 3 0 0 0 90 0 0 0 0 0
";

#[test]
fn position_channels_replace_offset_and_z_rotation_bends_the_arm() {
    let clip = parse(ARM);
    assert_eq!(clip.skeleton.names, ["Hips", "A", "B"]);
    assert_eq!(clip.skeleton.parents, [None, Some(0), Some(1)]);
    assert_eq!(clip.frame_count, 2);
    assert!((clip.fps - 120.0005).abs() < 1e-3);
    assert_eq!(clip.skeleton.end_sites.len(), 1);
    assert_eq!(clip.skeleton.end_sites[0].parent, 2);
    assert_eq!(clip.skeleton.end_sites[0].offset, Vec3::new(0.0, 5.0, 0.0));
    // The rest offset is kept, the frame's position replaces it (never 101, 102, 103).
    assert_eq!(clip.skeleton.rest[0].translation, Vec3::splat(100.0));
    let g0 = globals(&clip, 0);
    assert_close(g0[0], Vec3::new(1.0, 2.0, 3.0));
    assert_close(g0[1], Vec3::new(1.0, 12.0, 3.0));
    assert_close(g0[2], Vec3::new(1.0, 22.0, 3.0));
    // Zrotation 90 on A turns +Y into -X: B is at A + (-10, 0, 0).
    let g1 = globals(&clip, 1);
    assert_close(g1[1], Vec3::new(1.0, 12.0, 3.0));
    assert_close(g1[2], Vec3::new(-9.0, 12.0, 3.0));
    // The single-chain FK agrees with the whole-pose FK.
    let local = pose(&clip, 1);
    assert_close(
        joint_to_model(&clip.skeleton, &local, 2)
            .unwrap()
            .translation,
        g1[2],
    );
}

fn two_rotations(order: &str, a: f32, b: f32) -> Clip {
    let text = format!(
        "HIERARCHY\nROOT R\n{{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Yrotation Xrotation\nJOINT A\n{{\nOFFSET 0 0 0\nCHANNELS 2 {order}\nJOINT B\n{{\nOFFSET 0 10 0\nCHANNELS 0\nEnd Site\n{{\nOFFSET 0 0 0\n}}\n}}\n}}\n}}\nMOTION\nFrames: 1\nFrame Time: 0.0333333\n0 0 0 {a} {b}\n"
    );
    parse(&text)
}

#[test]
fn rotation_channels_compose_in_listed_order() {
    // Zrotation Xrotation: R = Rz(90) Rx(90); Rx takes +Y to +Z, Rz keeps +Z.
    let zx = two_rotations("Zrotation Xrotation", 90.0, 90.0);
    assert_close(globals(&zx, 0)[2], Vec3::new(0.0, 0.0, 10.0));
    // Xrotation Zrotation: R = Rx(90) Rz(90); Rz takes +Y to -X, Rx keeps -X.
    let xz = two_rotations("Xrotation Zrotation", 90.0, 90.0);
    assert_close(globals(&xz, 0)[2], Vec3::new(-10.0, 0.0, 0.0));
}

#[test]
fn zyx_and_zxy_joints_in_one_file() {
    // Legs ZYX, arms ZXY (like cmu_131_03): each joint uses its own order.
    let text = "HIERARCHY\r\nROOT Hips\r\n{\n\tOFFSET 0 0 0\r\n\tCHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation \r\n\tJOINT Leg\n\t{\r\n\t\tOFFSET 0 -10 0\n\t\tCHANNELS 3 Zrotation Yrotation Xrotation\r\n\t\tJOINT Foot\n\t\t{\n\t\tOFFSET 0 -10 0\n\t\tCHANNELS 3 Zrotation Yrotation Xrotation\n\t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 0 0\n\t\t}\n\t\t}\n\t}\n\tJOINT Arm\n\t{\n\t\tOFFSET 0 10 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\t\tJOINT Hand\n\t\t{\n\t\t\tOFFSET 10 0 0\n\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\t\t\tEnd Site\n\t\t\t{\n\t\t\t\tOFFSET 0 0 0\n\t\t\t}\n\t\t}\n\t}\n}\r\nMOTION\r\nFrames:\t1\r\nFrame Time:   0.0333333\r\n0 0 0 0 0 0 0 90 90 0 0 0 0 90 90 0 0 0 \r\n";
    let clip = parse(text);
    let g = globals(&clip, 0);
    // Leg (ZYX) with Y=90, X=90: R = Ry(90) Rx(90); Rx(90) takes -Y to -Z, Ry(90) takes -Z to -X.
    assert_close(g[2], Vec3::new(-10.0, -10.0, 0.0));
    // Arm (ZXY) with X=90, Y=90: R = Rx(90) Ry(90); Ry(90) takes +X to -Z, Rx(90) takes -Z to +Y.
    assert_close(g[4], Vec3::new(0.0, 20.0, 0.0));
}

#[test]
fn three_channel_root_keeps_its_offset() {
    let text = "HIERARCHY\nROOT root\n{\nOFFSET 1 2 3\nCHANNELS 3 Zrotation Yrotation Xrotation\nEnd Site\n{\nOFFSET 0 0 0\n}\n}\nMOTION\nFrames: 2\nFrame Time: 0.5\n0 0 0\n0 90 0\n";
    let clip = parse(text);
    assert_eq!(clip.fps, 2.0);
    assert_close(globals(&clip, 1)[0], Vec3::new(1.0, 2.0, 3.0));
    let q = clip.rotations[1];
    assert!(q.abs_diff_eq(Quat::from_rotation_y(90f32.to_radians()), 1e-6));
}

#[test]
fn six_channels_on_every_joint_and_zero_length_bones() {
    // Like Bandai: positions on every joint replace OFFSETs; a zero-length bone and a zero End Site.
    let text = "HIERARCHY
ROOT joint_Root
{
OFFSET 0 0 0
CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
JOINT mixamorig:Hips
{
OFFSET 0 93.9241 -3
CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
JOINT Zero
{
OFFSET 0 0 0
CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
End Site
{
OFFSET 0 0 0
}
}
}
}
MOTION
Frames: 1
Frame Time: 0.0333333
0 0 0 0 0 0 5.1072e-06 95 -2.5E+1 0 0 0 -0 0 0 45 0 0
";
    let clip = parse(text);
    assert_eq!(clip.skeleton.names[1], "mixamorig:Hips");
    let g = globals(&clip, 0);
    assert_close(g[0], Vec3::ZERO);
    assert_close(g[1], Vec3::new(5.1072e-6, 95.0, -25.0));
    assert_close(g[2], g[1]);
    // Sampling, FK and export of a zero-length bone never divide by its length.
    let back = parse(&write_bvh(&clip));
    assert_close(globals(&back, 0)[2], g[2]);
}

#[test]
fn header_frame_count_disagreeing_with_rows_uses_rows_and_warns() {
    let more = ARM.replace("Frames: 2", "Frames: 5");
    let (clip, warnings) = parse_bvh(&more, "t", &ImportOptions::default()).unwrap();
    assert_eq!(clip.frame_count, 2);
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].place, Place::Line(22));
    assert!(
        warnings[0].message.contains("5 frames") && warnings[0].message.contains("2 frame rows")
    );
    let fewer = ARM.replace("Frames: 2", "Frames: 1");
    let (clip, warnings) = parse_bvh(&fewer, "t", &ImportOptions::default()).unwrap();
    assert_eq!(clip.frame_count, 2);
    assert_eq!(warnings.len(), 1);
}

#[test]
fn a_skeleton_without_channels_takes_the_header_count_bounded() {
    let text = "HIERARCHY\nROOT r\n{\nOFFSET 1 2 3\nCHANNELS 0\n}\nMOTION\nFrames: 4\nFrame Time: 0.1\n\n\n\n\n";
    let clip = parse(text);
    assert_eq!(clip.frame_count, 4);
    assert_eq!(clip.translations[3], Vec3::new(1.0, 2.0, 3.0));
    let huge = text.replace("Frames: 4", "Frames: 999999999999");
    let (clip, warnings) = parse_bvh(&huge, "h", &ImportOptions::default()).unwrap();
    // Capped to the frame limit (1,000,000 joint samples would be more frames than allowed).
    assert_eq!(clip.frame_count, taglane::core::limits::MAX_FRAMES);
    assert!(warnings[0].message.contains("capped"));
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend_from_slice(ARM.as_bytes());
    let (clip, _) = parse_bvh_bytes(&bytes, "bom", &ImportOptions::default()).unwrap();
    assert_eq!(clip.frame_count, 2);
}

#[test]
fn skip_first_frame_is_explicit_and_reported() {
    let options = ImportOptions {
        skip_first_frame: true,
        ..ImportOptions::default()
    };
    let (clip, warnings) = parse_bvh(ARM, "t", &options).unwrap();
    assert_eq!(clip.frame_count, 1);
    assert_close(globals(&clip, 0)[2], Vec3::new(-9.0, 12.0, 3.0));
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].message.contains("skipped the first frame"));
    // Without the option, nothing is dropped.
    assert_eq!(parse(ARM).frame_count, 2);
}

#[test]
fn import_scale_sets_the_unit_without_changing_values() {
    let options = ImportOptions {
        unit_cm: Some(5.644),
        ..ImportOptions::default()
    };
    let (clip, _) = parse_bvh(ARM, "t", &options).unwrap();
    assert_eq!(clip.unit_cm, 5.644);
    assert_close(globals(&clip, 0)[2], Vec3::new(1.0, 22.0, 3.0));
    assert_eq!(parse(ARM).unit_cm, 1.0);
}

#[test]
fn euler_wrap_around_keeps_quaternions_on_one_hemisphere() {
    // 170 then -170 (= 190) then 550 (= 190): one short step each, never the long way round.
    let text = "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 1 Zrotation\nJOINT c\n{\nOFFSET 0 10 0\nCHANNELS 0\n}\n}\nMOTION\nFrames: 4\nFrame Time: 1\n170\n-170\n550\n-170\n";
    let clip = parse(text);
    for f in 1..4 {
        let a = clip.rotations[(f - 1) * 2];
        let b = clip.rotations[f * 2];
        assert!(a.dot(b) >= 0.0, "frame {f}");
    }
    // Halfway between 170 and -170 is 180 (pointing down), not 0.
    let mid = clip.rotations[0].lerp(clip.rotations[2], 0.5).normalize();
    assert_close(mid * Vec3::Y * 10.0, Vec3::new(0.0, -10.0, 0.0));
    // 550 and -170 are the same orientation as 190.
    assert!(clip.rotations[4].abs_diff_eq(clip.rotations[6], 1e-6));
}

#[test]
fn numbers_in_every_real_spelling() {
    let text = "HIERARCHY\nROOT r\n{\nOFFSET .5 -0 1e1\nCHANNELS 3 Xposition Yposition Zposition\n}\nMOTION\nFrames: 1\nFrame Time: .0083333\n.25 9.2E-16 -7\n";
    let clip = parse(text);
    assert_eq!(clip.skeleton.rest[0].translation, Vec3::new(0.5, 0.0, 10.0));
    assert_eq!(clip.translations[0], Vec3::new(0.25, 9.2e-16, -7.0));
}

fn error_of(text: &str) -> (Place, String) {
    let e = parse_bvh(text, "t", &ImportOptions::default()).unwrap_err();
    (e.place, e.message)
}

#[test]
fn nan_and_inf_are_rejected_with_the_line() {
    for bad in ["nan", "inf", "-inf", "NaN", "1e999", "infinity", "1e39"] {
        let text = ARM.replace("1 2 3 0 0 0 90", &format!("1 2 3 0 0 0 {bad}"));
        let (place, msg) = error_of(&text);
        assert_eq!(place, Place::Line(25), "{bad}");
        assert!(msg.contains("finite number") && msg.contains(bad), "{msg}");
    }
    let (place, msg) = error_of(&ARM.replace("OFFSET 0 10 0", "OFFSET 0 nan 0"));
    assert_eq!(place, Place::Line(8));
    assert!(msg.contains("OFFSET"), "{msg}");
}

#[test]
fn errors_name_the_line_and_what_was_expected() {
    let cases: &[(&str, &str, usize, &str)] = &[
        ("HIERARCHY", "HIERARCH", 1, "HIERARCHY"),
        (
            "CHANNELS 3 Zrotation Yrotation Xrotation\n    JOINT B",
            "CHANNELS 3 Zrotation Yrotation Wrotation\n    JOINT B",
            9,
            "channel name",
        ),
        (
            "1 2 3 0 0 0 90 0 0 0 0 0",
            "1 2 3 0 0 0 90 0 0 0 0",
            25,
            "expected 12 values",
        ),
        (
            "Frame Time: .0083333",
            "Frame Time: 0",
            23,
            "positive finite frame time",
        ),
        (
            "Frame Time: .0083333",
            "Frame Time: -1",
            23,
            "positive finite frame time",
        ),
        (
            "Frame Time: .0083333",
            "Frame Time:",
            23,
            "found the end of the line",
        ),
        (
            "Frame Time: .0083333",
            "Frame Time: .0083333 .0083333",
            23,
            "the end of the line after the frame time",
        ),
        (
            "Frame Time: .0083333",
            "Frame Time: 1e39",
            23,
            "frames per second",
        ),
        ("Frames: 2", "Frames: x", 22, "frame count"),
        ("  JOINT A\n  {", "  JOINT A\n  (", 7, "`{`"),
        ("End Site", "End Sit", 14, "`Site`"),
    ];
    for &(from, to, line, expected) in cases {
        let text = ARM.replacen(from, to, 1);
        assert_ne!(text, ARM, "{from}");
        let (place, msg) = error_of(&text);
        assert_eq!(place, Place::Line(line), "{to}: {msg}");
        assert!(msg.contains(expected), "{to}: {msg}");
    }
    // Truncated files end with a clear message too.
    let (_, msg) = error_of(&ARM[..ARM.find("MOTION").unwrap() - 3]);
    assert!(msg.contains("end of the file"), "{msg}");
    let (_, msg) = error_of("");
    assert!(msg.contains("HIERARCHY"), "{msg}");
    let (_, msg) = error_of(&ARM.replace("JOINT B", "JOINT A"));
    assert!(msg.contains("unique"), "{msg}");
}

#[test]
fn export_round_trip_on_the_hand_made_files() {
    let clip = parse(ARM);
    let text = write_bvh(&clip);
    let back = parse(&text);
    assert_eq!(back.skeleton.names, clip.skeleton.names);
    assert_eq!(back.skeleton.end_sites, clip.skeleton.end_sites);
    for f in 0..2 {
        for (a, b) in globals(&clip, f).iter().zip(globals(&back, f)) {
            assert_close(*a, b);
        }
    }
}

#[test]
fn sub_clip_and_atomic_save() {
    let clip = parse(ARM);
    let second = clip.sub_clip(1, 2, "cut").unwrap();
    assert_eq!(second.frame_count, 1);
    assert_eq!(second.name, "cut");
    assert_eq!(globals(&second, 0), globals(&clip, 1));
    assert!(clip.sub_clip(1, 1, "x").is_none());
    assert!(clip.sub_clip(0, 3, "x").is_none());
    let dir = crate::common::Scratch::new("bvh-save");
    let path = dir.join("cut.bvh");
    taglane::core::anim::save_bvh(&path, &second, false).unwrap();
    let back = parse(&std::fs::read_to_string(&path).unwrap());
    assert_close(globals(&back, 0)[2], Vec3::new(-9.0, 12.0, 3.0));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = parse_bvh_bytes(&bytes, "p", &ImportOptions::default());
    }

    #[test]
    fn mutated_bvh_never_panics(pos in 0usize..ARM.len(), len in 0usize..20, insert in "[ -~\\n\\r\\t]{0,12}") {
        let bytes = ARM.as_bytes();
        let end = (pos + len).min(bytes.len());
        let mut text = bytes[..pos].to_vec();
        text.extend_from_slice(insert.as_bytes());
        text.extend_from_slice(&bytes[end..]);
        if let Ok((clip, _)) = parse_bvh_bytes(&text, "p", &ImportOptions::default()) {
            prop_assert!(clip.validate().is_ok());
            let _ = write_bvh(&clip);
        }
    }

    #[test]
    fn random_poses_round_trip(angles in proptest::collection::vec(-720.0f64..720.0, 9), pos in proptest::collection::vec(-1000.0f64..1000.0, 3)) {
        let row: Vec<String> = pos.iter().chain(angles.iter()).map(|v| format!("{v}")).collect();
        let text = ARM.replace("1 2 3 0 0 0 0 0 0 0 0 0", &row.join(" "));
        let clip = parse(&text);
        let back = parse(&write_bvh(&clip));
        for (a, b) in globals(&clip, 0).iter().zip(globals(&back, 0)) {
            prop_assert!(a.abs_diff_eq(b, 2e-4), "{} vs {}", a, b);
        }
    }
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    let nest = |depth: usize| {
        let mut s = String::from("HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 0\n");
        for i in 0..depth {
            s.push_str(&format!("JOINT j{i}\n{{\nOFFSET 0 1 0\nCHANNELS 0\n"));
        }
        for _ in 0..=depth {
            s.push_str("}\n");
        }
        s.push_str("MOTION\nFrames: 1\nFrame Time: 1\n\n");
        s
    };
    // Parsing and writing are iterative: 20000 levels are fine.
    let (clip, _) = parse_bvh(&nest(20_000), "d", &ImportOptions::default()).unwrap();
    assert_eq!(clip.joint_count(), 20_001);
    let back = parse(&write_bvh(&clip));
    assert_eq!(back.skeleton.parents, clip.skeleton.parents);
}

/// A random BVH file (hierarchy, per-joint channel layouts and orders, values) and the global joint
/// positions of its frames computed by an obvious model: 3x3 rotation matrices in f64.
#[derive(Debug, Clone)]
struct RandomBvh {
    parents: Vec<Option<usize>>,
    offsets: Vec<[f64; 3]>,
    /// Per joint: channel names in file order.
    channels: Vec<Vec<&'static str>>,
    /// Frames x values.
    rows: Vec<Vec<f64>>,
}

const CHANNEL_NAMES: [&str; 6] = [
    "Xposition",
    "Yposition",
    "Zposition",
    "Xrotation",
    "Yrotation",
    "Zrotation",
];

fn random_bvh() -> impl Strategy<Value = RandomBvh> {
    (1usize..8, 1usize..4).prop_flat_map(|(joints, frames)| {
        (
            proptest::collection::vec(0.0f64..1.0, joints),
            proptest::collection::vec(proptest::array::uniform3(-20.0f64..20.0), joints),
            proptest::collection::vec(
                proptest::sample::subsequence(CHANNEL_NAMES.to_vec(), 0..=6).prop_shuffle(),
                joints,
            ),
            proptest::collection::vec(
                proptest::collection::vec(-400.0f64..400.0, 6 * joints),
                frames,
            ),
        )
            .prop_map(move |(p, offsets, channels, raw)| {
                let parents = (0..joints)
                    .map(|i| (i > 0).then(|| (p[i] * i as f64) as usize))
                    .collect();
                let width: usize = channels.iter().map(Vec::len).sum();
                let rows = raw
                    .into_iter()
                    .map(|r| {
                        r[..width]
                            .iter()
                            .map(|v| (v * 1000.0).round() / 1000.0)
                            .collect()
                    })
                    .collect();
                RandomBvh {
                    parents,
                    offsets,
                    channels,
                    rows,
                }
            })
    })
}

impl RandomBvh {
    fn children(&self, j: usize) -> Vec<usize> {
        (0..self.parents.len())
            .filter(|&c| self.parents[c] == Some(j))
            .collect()
    }

    /// Joints in depth-first order (the file's order).
    fn dfs(&self) -> Vec<usize> {
        let mut order = Vec::new();
        let mut stack: Vec<usize> = (0..self.parents.len())
            .filter(|&j| self.parents[j].is_none())
            .rev()
            .collect();
        while let Some(j) = stack.pop() {
            order.push(j);
            stack.extend(self.children(j).into_iter().rev());
        }
        order
    }

    fn text(&self) -> String {
        let mut s = String::from("HIERARCHY\n");
        fn joint(b: &RandomBvh, j: usize, s: &mut String) {
            let kw = if b.parents[j].is_none() {
                "ROOT"
            } else {
                "JOINT"
            };
            let o = b.offsets[j];
            s.push_str(&format!(
                "{kw} j{j}\n{{\nOFFSET {} {} {}\nCHANNELS {}",
                o[0],
                o[1],
                o[2],
                b.channels[j].len()
            ));
            for c in &b.channels[j] {
                s.push(' ');
                s.push_str(c);
            }
            s.push('\n');
            for c in b.children(j) {
                joint(b, c, s);
            }
            s.push_str("}\n");
        }
        for r in (0..self.parents.len()).filter(|&j| self.parents[j].is_none()) {
            joint(self, r, &mut s);
        }
        s.push_str(&format!(
            "MOTION\nFrames: {}\nFrame Time: 0.04\n",
            self.rows.len()
        ));
        for row in &self.rows {
            let vals: Vec<String> = row.iter().map(|v| v.to_string()).collect();
            s.push_str(&vals.join(" "));
            s.push('\n');
        }
        s
    }

    /// Global positions at a frame, by joint index (not file order), with rotation matrices.
    fn globals(&self, frame: usize) -> Vec<[f64; 3]> {
        type M = [[f64; 3]; 3];
        fn mul(a: &M, b: &M) -> M {
            let mut r = [[0.0; 3]; 3];
            for i in 0..3 {
                for j in 0..3 {
                    r[i][j] = (0..3).map(|k| a[i][k] * b[k][j]).sum();
                }
            }
            r
        }
        fn axis(a: usize, deg: f64) -> M {
            let (s, c) = deg.to_radians().sin_cos();
            match a {
                0 => [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]],
                1 => [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]],
                _ => [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]],
            }
        }
        let n = self.parents.len();
        let mut rot = vec![[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]; n];
        let mut pos = vec![[0.0; 3]; n];
        // Values are in file (depth-first) order.
        let mut col = 0;
        let mut local_r = vec![rot[0]; n];
        let mut local_t = vec![[0.0; 3]; n];
        for j in self.dfs() {
            let mut t = self.offsets[j];
            let mut r = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
            for c in &self.channels[j] {
                let v = self.rows[frame][col];
                col += 1;
                let a = (c.as_bytes()[0] - b'X') as usize;
                if c.ends_with("position") {
                    t[a] = v;
                } else {
                    r = mul(&r, &axis(a, v));
                }
            }
            local_r[j] = r;
            local_t[j] = t;
        }
        for j in 0..n {
            match self.parents[j] {
                None => {
                    rot[j] = local_r[j];
                    pos[j] = local_t[j];
                }
                Some(p) => {
                    rot[j] = mul(&rot[p], &local_r[j]);
                    let rt: Vec<f64> = (0..3)
                        .map(|i| (0..3).map(|k| rot[p][i][k] * local_t[j][k]).sum())
                        .collect();
                    pos[j] = [pos[p][0] + rt[0], pos[p][1] + rt[1], pos[p][2] + rt[2]];
                }
            }
        }
        pos
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// The parser (quaternions, f32, any channel subset and order) against the matrix model.
    #[test]
    fn parser_matches_a_rotation_matrix_model(b in random_bvh()) {
        let (clip, warnings) = parse_bvh(&b.text(), "r", &ImportOptions::default()).unwrap();
        prop_assert!(warnings.is_empty());
        prop_assert_eq!(clip.frame_count, b.rows.len());
        for f in 0..b.rows.len() {
            let expected = b.globals(f);
            let got = globals(&clip, f);
            for (j, e) in expected.iter().enumerate() {
                let k = clip.skeleton.find(&format!("j{j}")).unwrap();
                let g = got[k];
                let d = ((f64::from(g.x) - e[0]).powi(2) + (f64::from(g.y) - e[1]).powi(2) + (f64::from(g.z) - e[2]).powi(2)).sqrt();
                prop_assert!(d < 1e-3, "joint {} frame {}: {} vs {:?}", j, f, g, e);
            }
            // And the export reproduces them.
            let back = parse(&write_bvh(&clip));
            for (k, p) in globals(&back, f).iter().enumerate() {
                prop_assert!(p.abs_diff_eq(got[k], 1e-3));
            }
        }
    }
}

/// A file whose lines end in CR alone is named as such, not reported as ending early.
#[test]
fn cr_only_line_endings_are_named() {
    let text = ARM.replace('\n', "\r");
    let (place, msg) = error_of(&text);
    assert_eq!(place, Place::Line(1));
    assert!(msg.contains("CR alone"), "{msg}");
}

/// The written frame time is the fewest decimals that read back to the same 32-bit rate: a
/// rate read from `0.0333333` writes `0.0333333`, 30 fps `0.033333333`, and every rate a BVH can
/// hold comes back unchanged.
#[test]
fn the_frame_time_is_written_short_and_reads_back_to_the_same_rate() {
    let mut clip = parse(ARM);
    let frame_time = |clip: &Clip| {
        write_bvh(clip)
            .lines()
            .find_map(|l| l.strip_prefix("Frame Time: ").map(str::to_owned))
            .unwrap()
    };
    for (fps, text) in [
        ((1.0 / 0.0333333f64) as f32, Some("0.0333333")),
        (30.0, Some("0.033333333")),
        (24.0, Some("0.041666667")),
        (120.0, Some("0.0083333333")),
        ((1.0 / 0.0083333f64) as f32, Some("0.0083333")),
        (25.0, Some("0.04")),
        (29.97, None),
        (59.94, None),
        (0.001, Some("1000")),
        (100_000.0, Some("0.00001")),
        (0.5, Some("2")),
    ] {
        clip.fps = fps;
        let t = frame_time(&clip);
        if let Some(text) = text {
            assert_eq!(t, text, "{fps}");
        }
        assert!(t.len() <= 20, "{fps}: {t}");
        let back = parse(&write_bvh(&clip));
        assert_eq!(back.fps, fps, "{fps}: {t}");
    }
}
