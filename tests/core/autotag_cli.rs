//! `taglane autotag`, run as the built binary on the demo takes (written to a temporary folder),
//! with bad files, bad rule files and bad arguments.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{Scratch, text};
use taglane::core::project::DEMO_CLIP_FILES;
use taglane::core::tags::TagDocument;

fn dir(name: &str) -> Scratch {
    Scratch::new(&format!("autotag-cli-{name}"))
}

/// Writes the first `n` demo takes into `d`; returns their paths.
fn demo_takes(d: &Path, n: usize) -> Vec<String> {
    DEMO_CLIP_FILES[..n]
        .iter()
        .map(|(name, text)| {
            let p = d.join(name);
            std::fs::write(&p, text).unwrap();
            p.to_str().unwrap().to_owned()
        })
        .collect()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_taglane"))
        .arg("autotag")
        .args(args)
        .output()
        .unwrap()
}

const RULES: &str = r#"{"version": 1,
  "params": {"contacts": {"enter_height_cm": 4.5}},
  "rules": [{"tag": "pose:ArmsDown", "when": [
    {"signal": "y", "joint": "LeftHand", "relative_to": "Hips", "below": 0}]}]}"#;

#[test]
fn tags_several_files_into_one_project_document() {
    let d = dir("ok");
    let takes = demo_takes(&d, 3);
    let rules = d.join("rules.json");
    std::fs::write(&rules, RULES).unwrap();
    let out = d.join("out.taglane.json");
    // A project already there is refused, left as it was...
    std::fs::write(&out, "{\"hand\": \"made\"}").unwrap();
    let mut args: Vec<&str> = takes.iter().map(String::as_str).collect();
    args.extend([
        "--rules",
        rules.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--jobs",
        "2",
    ]);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("--overwrite"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "{\"hand\": \"made\"}"
    );
    assert!(!d.join("out.taglane.json.bak").exists());
    // ...and with --overwrite kept as a backup.
    args.push("--overwrite");
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let stdout = text(&o.stdout);
    assert!(stdout.contains("walk_male_01 (241 frames"), "{stdout}");
    assert!(stdout.contains("wrote"), "{stdout}");
    let backup = d.join("out.taglane.json.bak");
    assert_eq!(
        std::fs::read_to_string(backup).unwrap(),
        "{\"hand\": \"made\"}"
    );
    // Units were guessed and reported per file.
    assert!(text(&o.stderr).contains("units: cm"), "{}", text(&o.stderr));
    let (doc, warnings) = TagDocument::load(&out).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let names: Vec<&str> = doc.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["walk_male_01", "run_male_01", "idle_female_01"]);
    for c in &doc.clips {
        assert!((c.fps - 30.0).abs() < 1e-3, "{}", c.fps);
        assert_eq!(c.unit_cm, Some(1.0));
        // Sources are relative to the output document.
        assert_eq!(
            c.source.as_deref(),
            Some(format!("{}.bvh", c.name).as_str())
        );
    }
    let tag = |name: &str| &doc.tags[doc.tag_index(name).unwrap()];
    // Walking take: walks and steps; running take runs; idle take idles.
    assert!(tag("locomotion:Walk").ranges.contains_key(&0));
    assert!(tag("locomotion:Run").ranges.contains_key(&1));
    assert_eq!(tag("locomotion:Idle").ranges[&2].len(), 1);
    assert!(tag("contact:LeftFoot").ranges[&0].len() >= 5);
    assert!(tag("pose:ArmsDown").ranges.contains_key(&0));
    // The settings used are saved in the document.
    let saved = doc.autotag.as_ref().unwrap();
    assert_eq!(saved.params.contacts.enter_height_cm, 4.5);
    assert_eq!(saved.rules[0].tag, "pose:ArmsDown");

    // --json prints the same document; one job gives the same result as two.
    let mut args: Vec<&str> = takes.iter().map(String::as_str).collect();
    args.extend(["--rules", rules.to_str().unwrap(), "--json", "--jobs", "1"]);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let (printed, _) = TagDocument::from_json_str(&text(&o.stdout), "stdout").unwrap();
    let strip = |d: &TagDocument| {
        (
            d.tags
                .iter()
                .map(|t| (t.name.clone(), t.ranges.clone()))
                .collect::<Vec<_>>(),
            d.clips.iter().map(|c| c.frames).collect::<Vec<_>>(),
        )
    };
    assert_eq!(strip(&printed), strip(&doc));
}

#[test]
fn only_keeps_the_named_tags_and_units_can_be_given() {
    let d = dir("only");
    let takes = demo_takes(&d, 1);
    let o = run(&[
        &takes[0],
        "--only",
        "locomotion:Walk,contact:Airborne",
        "--units",
        "cm",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let (doc, _) = TagDocument::from_json_str(&text(&o.stdout), "stdout").unwrap();
    let names: Vec<&str> = doc.tags.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["contact:Airborne", "locomotion:Walk"]);
    assert!(
        !text(&o.stderr).contains("units:"),
        "no guess when units are given"
    );
    // Without rules, no settings are saved.
    assert!(doc.autotag.is_none());
}

#[test]
fn unreadable_files_are_named_and_skipped() {
    let d = dir("bad");
    let takes = demo_takes(&d, 1);
    let garbage = d.join("garbage.bvh");
    std::fs::write(&garbage, "HIERARCHY\nROOT Hips\n{ OFFSET 0 0 x }").unwrap();
    let missing = d.join("missing.bvh");
    let text_file = d.join("notes.txt");
    std::fs::write(&text_file, "hello").unwrap();
    let o = run(&[
        garbage.to_str().unwrap(),
        &takes[0],
        missing.to_str().unwrap(),
        text_file.to_str().unwrap(),
        "--json",
    ]);
    let err = text(&o.stderr);
    // The others are tagged, and the command exits 1: a pipeline sees what was left out.
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("3 file(s) not tagged"), "{err}");
    for name in ["garbage.bvh", "missing.bvh", "notes.txt"] {
        assert!(
            err.lines()
                .any(|l| l.contains("skipped") && l.contains(name)),
            "{name}: {err}"
        );
    }
    assert!(err.contains("line 3"), "the place in the file: {err}");
    let (doc, _) = TagDocument::from_json_str(&text(&o.stdout), "stdout").unwrap();
    assert_eq!(doc.clips.len(), 1);
    // Nothing readable: exit 1, and no output file is written.
    let out = d.join("none.taglane.json");
    let o = run(&[
        garbage.to_str().unwrap(),
        missing.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("no clip could be tagged"));
    assert!(!out.exists());
}

#[test]
fn a_clip_without_feet_is_named_and_skipped() {
    let d = dir("nofeet");
    let bvh = "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n JOINT Head\n {\n  OFFSET 0 60 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  End Site\n  {\n   OFFSET 0 100 0\n  }\n }\n}\nMOTION\nFrames: 3\nFrame Time: 0.0333333\n0 90 0 0 0 0 0 0 0\n1 90 0 0 0 0 0 0 0\n2 90 0 0 0 0 0 0 0\n";
    let path = d.join("blob.bvh");
    std::fs::write(&path, bvh).unwrap();
    let o = run(&[path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("blob.bvh")
            && err.contains("no left foot joint")
            && err.contains("contacts.left_ankle"),
        "{err}"
    );
    // Locomotion alone needs no feet.
    let o = run(&[
        path.to_str().unwrap(),
        "--only",
        "locomotion:Idle",
        "--units",
        "cm",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // A rule on a joint the clip lacks is skipped, and the table says so (not "0 ranges").
    let rules = d.join("rules.json");
    std::fs::write(
        &rules,
        r#"{"version": 1, "rules": [{"tag": "pose:Up", "when": [{"signal": "y", "joint": "Nope", "above": 5}]}]}"#,
    )
    .unwrap();
    let o = run(&[
        path.to_str().unwrap(),
        "--only",
        "locomotion:Idle,pose:Up",
        "--units",
        "cm",
        "--rules",
        rules.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let line = out
        .lines()
        .find(|l| l.contains("pose:Up"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("skipped") && !line.contains("ranges"),
        "{out}"
    );
    assert!(
        text(&o.stderr).contains("no joint named `Nope`"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn bad_rule_files_exit_1_and_bad_arguments_2_with_the_place() {
    let d = dir("rules");
    let takes = demo_takes(&d, 1);
    let cases = [
        (
            r#"{"version": 1, "rules": [{"tag": "A", "when": [{"signal": "y", "joint": "Head", "above": 1, "leave": 5}]}]}"#,
            "rules[0].when[0].leave",
        ),
        (
            r#"{"version": 1, "rules": [{"tag": "A"}]}"#,
            "rules[0]: missing required field `when`",
        ),
        (
            r#"{"version": 1, "params": {"contacts": {"enter_hieght_cm": 1}}}"#,
            "params.contacts.enter_hieght_cm",
        ),
        ("{\"version\": 1,\n \"rules\": [}", "line 2, column"),
        (r#"{"version": 4}"#, "version"),
    ];
    for (k, (body, place)) in cases.iter().enumerate() {
        let rules = d.join(format!("rules{k}.json"));
        std::fs::write(&rules, body).unwrap();
        let o = run(&[&takes[0], "--rules", rules.to_str().unwrap()]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{body}: {err}");
        assert!(
            err.contains(&format!("rules{k}.json")) && err.contains(place),
            "{body}: {err}"
        );
    }
    let missing = d.join("nope.json");
    let o = run(&[&takes[0], "--rules", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("nope.json"));
    for args in [
        vec![takes[0].as_str(), "--only", "locomotion:Jog"],
        vec![takes[0].as_str(), "--units", "furlongs"],
        vec![takes[0].as_str(), "--units", "-1"],
        vec![takes[0].as_str(), "--jobs", "0"],
        vec![],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
    }
    let o = run(&[&takes[0], "--only", "locomotion:Jog"]);
    assert!(text(&o.stderr).contains("known tags: contact:LeftFoot"));
}

/// Sources are relative to the output document however the paths are written (`..` in `-o`, run
/// from the takes' folder): each names its take from the document's folder.
#[test]
fn sources_are_relative_to_the_output_written_with_dot_dot() {
    let d = dir("dotdot");
    let takes = d.join("takes");
    std::fs::create_dir_all(&takes).unwrap();
    std::fs::create_dir_all(d.join("proj")).unwrap();
    let (name, bvh) = DEMO_CLIP_FILES[0];
    std::fs::write(takes.join(name), bvh).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_taglane"))
        .current_dir(&takes)
        .args(["autotag", name, "-o", "../proj/t.taglane.json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let (doc, _) = TagDocument::load(&d.join("proj/t.taglane.json")).unwrap();
    assert_eq!(
        doc.clips[0].source.as_deref(),
        Some(format!("../takes/{name}").as_str())
    );
}

/// The clips of a file with several animations are named `FILE#ANIMATION`, as the import names
/// them, so the project's commands load them.
#[test]
#[ignore = "needs ../shared/mocap"]
fn clips_of_several_animations_are_named_file_hash_animation() {
    let d = dir("fox");
    let fox = crate::common::mocap("gltf_Fox.glb");
    let out = d.join("fox.taglane.json");
    // A rule on the fox's own joints (it has no feet the contact generator knows).
    let rules = d.join("rules.json");
    std::fs::write(
        &rules,
        r#"{"version": 1, "rules": [{"tag": "HeadUp", "when": [
            {"signal": "y", "joint": "b_Head_05", "relative_to": "b_Hip_01", "above": 0}]}]}"#,
    )
    .unwrap();
    let o = run(&[
        fox.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
        "--only",
        "HeadUp",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let (doc, _) = TagDocument::load(&out).unwrap();
    assert!(doc.clips.len() > 1);
    for c in &doc.clips {
        assert!(c.name.starts_with("gltf_Fox#"), "{}", c.name);
    }
    let project = taglane::core::project::Project::load(&out).unwrap().0;
    for i in 0..doc.clips.len() {
        project.load_clip(i as u32).unwrap();
    }
}

/// `auto` chooses a clip's unit as `import` and `inspect` do: the same file gets one unit from
/// every command (a glTF in metres, flagged when its height is implausible).
#[test]
#[ignore = "needs ../shared/mocap"]
fn auto_units_are_those_of_import() {
    let fox = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/mocap/gltf_Fox.glb");
    let fox = fox.to_str().unwrap();
    let o = run(&[fox, "--json"]);
    let err = text(&o.stderr);
    assert!(
        err.contains("units: m (100 cm): glTF is in metres"),
        "{err}"
    );
    assert!(err.contains("check this clip"), "{err}");
    let inspect = crate::common::run(&["inspect", fox, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&text(&inspect.stdout)).unwrap();
    assert_eq!(v["unit_auto"]["unit_cm"], 100.0, "{v}");
}

/// `-o` never names one of the takes it reads, nor any take or compressed clip, even with
/// `--overwrite`: exit 2, the take untouched.
#[test]
fn the_output_is_never_a_take() {
    let d = dir("output-take");
    let takes = demo_takes(&d, 2);
    let before = std::fs::read(&takes[1]).unwrap();
    let other = d.join("other.glb");
    for out in [takes[1].as_str(), other.to_str().unwrap()] {
        let o = run(&[&takes[0], &takes[1], "-o", out, "--overwrite"]);
        assert_eq!(o.status.code(), Some(2), "{out}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("nothing written"),
            "{}",
            text(&o.stderr)
        );
    }
    assert_eq!(std::fs::read(&takes[1]).unwrap(), before);
    assert!(!other.exists());
    assert!(!Path::new(&format!("{}.bak", takes[1])).exists());
}
