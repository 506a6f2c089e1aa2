//! The `inspect` and `sample` commands, run as a process.

use std::path::PathBuf;
use std::process::Command;

use crate::common::Scratch;

const ARM: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
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
Frames: 3
Frame Time: 0.5
0 0 0 0 0 0 0 0 0 0 0 0
10 0 0 0 0 0 90 0 0 0 0 0
20 0 0 0 0 0 90 0 0 0 0 0
";

/// `text` written to `name` in a folder of its own, removed when the first value drops.
fn temp_file(name: &str, text: &str) -> (Scratch, PathBuf) {
    let dir = Scratch::new("anim-cli");
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_taglane"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn positions(json: &str) -> Vec<(String, [f64; 3])> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    v["joints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let p = j["position"].as_array().unwrap();
            (
                j["name"].as_str().unwrap().to_owned(),
                [
                    p[0].as_f64().unwrap(),
                    p[1].as_f64().unwrap(),
                    p[2].as_f64().unwrap(),
                ],
            )
        })
        .collect()
}

fn close(a: [f64; 3], b: [f64; 3]) -> bool {
    (0..3).all(|i| (a[i] - b[i]).abs() < 1e-4)
}

#[test]
fn inspect_json_reports_counts_names_and_warnings() {
    let (_dir, path) = temp_file("arm.bvh", &ARM.replace("Frames: 3", "Frames: 4"));
    let (code, out, _) = run(&["inspect", path.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["joints"], 3);
    assert_eq!(v["frames"], 3);
    assert_eq!(v["fps"], 2.0);
    assert_eq!(v["duration_s"], 1.0);
    assert_eq!(v["joint_names"], serde_json::json!(["Hips", "A", "B"]));
    let w = v["warnings"].as_array().unwrap();
    assert_eq!(w.len(), 1);
    assert!(w[0].as_str().unwrap().starts_with("line 22:"), "{w:?}");
}

#[test]
fn sample_interpolates_with_slerp_and_blends() {
    let (_dir, path) = temp_file("arm2.bvh", ARM);
    let p = path.to_str().unwrap();
    // t = 0.25 s is halfway between frames 0 and 1: root x = 5, A turned 45 degrees about Z.
    let (code, out, err) = run(&["sample", p, "--time", "0.25", "--json"]);
    assert_eq!(code, 0, "{err}");
    let pos = positions(&out);
    assert_eq!(pos[0].0, "Hips");
    assert!(close(pos[0].1, [5.0, 0.0, 0.0]));
    assert!(close(pos[1].1, [5.0, 10.0, 0.0]));
    let h = 10.0 * std::f64::consts::FRAC_1_SQRT_2;
    assert!(close(pos[2].1, [5.0 - h, 10.0 + h, 0.0]), "{:?}", pos[2]);
    // Clamped past the end.
    let (_, out, _) = run(&["sample", p, "--time", "9", "--json"]);
    assert!(close(positions(&out)[2].1, [10.0, 10.0, 0.0]));
    // The unit is reported beside the positions (which stay in file units).
    let unit =
        |out: &str| serde_json::from_str::<serde_json::Value>(out).unwrap()["unit_cm"].clone();
    assert_eq!(unit(&out), serde_json::json!(1.0));
    let (_, out, _) = run(&["sample", p, "--time", "9", "--json", "--unit-cm", "2.54"]);
    assert!(close(positions(&out)[2].1, [10.0, 10.0, 0.0]));
    assert!((unit(&out).as_f64().unwrap() - 2.54).abs() < 1e-6, "{out}");
    // Blend frame 0 of the file with frame 0 of a copy rotated by 90: weight 0.5 gives 45 degrees.
    let (_other_dir, other) = temp_file(
        "arm3.bvh",
        &ARM.replacen("0 0 0 0 0 0 0 0 0 0 0 0", "0 0 0 0 0 0 90 0 0 0 0 0", 1),
    );
    let (code, out, _) = run(&[
        "sample",
        p,
        "--time",
        "0",
        "--blend",
        other.to_str().unwrap(),
        "--weight",
        "0.5",
        "--json",
    ]);
    assert_eq!(code, 0);
    assert!(close(positions(&out)[2].1, [-h, 10.0 + h, 0.0]));
    // Text output: one line per joint.
    let (code, out, _) = run(&["sample", p, "--time", "0"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 3);
}

#[test]
fn bad_files_exit_1_and_bad_arguments_exit_2() {
    let (_bad_dir, bad) = temp_file(
        "bad.bvh",
        &ARM.replace(
            "Zrotation Yrotation Xrotation\n  JOINT",
            "Zrotation Yrotation Xrotation\n  JIONT",
        ),
    );
    let (code, _, err) = run(&["inspect", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("bad.bvh") && err.contains("line 6"), "{err}");
    let (code, _, _) = run(&["inspect", "/nonexistent/x.bvh"]);
    assert_eq!(code, 1);
    let (_dir, path) = temp_file("arm4.bvh", ARM);
    let (code, _, _) = run(&[
        "sample",
        path.to_str().unwrap(),
        "--time",
        "0",
        "--blend",
        path.to_str().unwrap(),
        "--weight",
        "2",
    ]);
    assert_eq!(code, 2);
    let (code, _, _) = run(&["sample", path.to_str().unwrap(), "--time", "NaN"]);
    assert_eq!(code, 2);
    let (_other_dir, other) = temp_file("other.bvh", &ARM.replace("JOINT B", "JOINT C"));
    let (code, _, err) = run(&[
        "sample",
        path.to_str().unwrap(),
        "--time",
        "0",
        "--blend",
        other.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("skeletons differ"), "{err}");
}

/// A mistyped subcommand is a usage error naming the nearest one, not a project that cannot be
/// read (`taglane inspec`) or a conflict between a project and a subcommand.
#[test]
fn a_mistyped_subcommand_names_the_nearest_one() {
    let (_dir, path) = temp_file("arm3.bvh", ARM);
    let p = path.to_str().unwrap();
    for (args, nearest) in [
        (vec!["inspec"], Some("inspect")),
        (vec!["inpsect", p], Some("inspect")),
        (vec!["qeury", p, "Walk"], Some("query")),
        (vec!["frobnicate"], None),
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains(&format!("unknown subcommand `{}`", args[0])),
            "{err}"
        );
        match nearest {
            Some(n) => assert!(err.contains(&format!("did you mean `{n}`?")), "{err}"),
            None => assert!(!err.contains("did you mean"), "{err}"),
        }
    }
    // Help and version still go through clap, `help` included.
    let (code, out, _) = run(&["--version"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("taglane "), "{out}");
    for args in [vec!["help"], vec!["help", "inspect"]] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(out.contains("Usage: taglane"), "{args:?}: {out}");
    }
    let (code, _, err) = run(&["inspect", "--no-such-flag"]);
    assert_eq!(code, 2, "{err}");
}
