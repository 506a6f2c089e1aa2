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
    for bad in ["nan", "inf", "-inf", "NaN", "1e999", "infinity"] {
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
