//! `taglane query` and `taglane tags`, run as the built binary on a small file.

use crate::common::{Scratch, run, run_with_closed_stderr, run_with_closed_stdout, text};
use std::path::PathBuf;

const FILE: &str = r##"{ "format": "taglane.tags", "version": 1,
  "clips": [ {"name": "walk_01", "frames": 195, "fps": 30.0},
             {"name": "idle", "frames": 60, "fps": 30.0},
             {"name": "run_02", "frames": 100, "fps": 25.0} ],
  "tags":  [ {"name": "locomotion:Walk", "color": "#4e9a06",
              "ranges": {"walk_01": [[0, 120], [150, 195]], "run_02": [[0, 10]]}},
             {"name": "Tired", "ranges": {"walk_01": [[100, 160]], "run_02": [[5, 50]]}},
             {"name": "Male", "ranges": {"run_02": [[0, 100]], "walk_01": [[0, 195]]}} ],
  "queries": [ {"name": "tired walkers", "expr": "locomotion:Walk & Tired"} ] }"##;

/// `text` written to `tags.json` in a folder of its own, removed when the first value drops.
fn setup(name: &str, text: &str) -> (Scratch, PathBuf) {
    let dir = Scratch::new(&format!("cli-{name}"));
    let path = dir.join("tags.json");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

#[test]
fn query_json_has_the_documented_shape() {
    let (_dir, path) = setup("json", FILE);
    let p = path.to_str().unwrap();
    for engine in ["ranges", "masks", "auto"] {
        let out = run(&[
            "query",
            p,
            "locomotion:Walk & Tired",
            "--engine",
            engine,
            "--json",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert_eq!(stdout.lines().count(), 1, "{stdout}");
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let obj = v.as_object().unwrap();
        let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["clips", "engine", "expr", "frames", "ranges"]);
        assert_eq!(v["expr"], "locomotion:Walk & Tired");
        assert_eq!(v["engine"], engine);
        assert_eq!(
            v["clips"]["walk_01"],
            serde_json::json!([[100, 120], [150, 160]])
        );
        assert_eq!(v["clips"]["run_02"], serde_json::json!([[5, 10]]));
        assert!(
            v["clips"].get("idle").is_none(),
            "clips without frames are omitted"
        );
        assert_eq!(v["frames"], 35);
        assert_eq!(v["ranges"], 3);
        // Clip keys follow the file's clip order (walk_01 before run_02).
        assert!(stdout.find("walk_01").unwrap() < stdout.find("run_02").unwrap());
    }
}

#[test]
fn query_json_with_complement_and_functions() {
    let (_dir, path) = setup("complement", FILE);
    let out = run(&[
        "query",
        path.to_str().unwrap(),
        "!Male | first(Tired, 3)",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(v["clips"]["idle"], serde_json::json!([[0, 60]]));
    assert_eq!(v["clips"]["walk_01"], serde_json::json!([[100, 103]]));
    assert_eq!(v["clips"]["run_02"], serde_json::json!([[5, 8]]));
}

#[test]
fn query_table() {
    let (_dir, path) = setup("table", FILE);
    let out = run(&["query", path.to_str().unwrap(), "Male - Tired"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let lines: Vec<&str> = s.lines().collect();
    assert!(
        lines[0].starts_with("clip") && lines[0].contains("ranges") && lines[0].contains("frames")
    );
    assert!(lines[0].contains("seconds"));
    // walk_01: [0,100) [160,195) = 135 frames = 4.50 s; run_02: [0,5) [50,100) = 55 frames at 25 fps.
    let walk: Vec<&str> = lines
        .iter()
        .find(|l| l.starts_with("walk_01"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(walk, ["walk_01", "2", "135", "4.50"]);
    let run2: Vec<&str> = lines
        .iter()
        .find(|l| l.starts_with("run_02"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(run2, ["run_02", "2", "55", "2.20"]);
    let total: Vec<&str> = lines
        .iter()
        .find(|l| l.starts_with("total"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(total, ["total", "4", "190", "6.70"]);
    assert!(s.contains("engine: auto"));
}

#[test]
fn bad_queries_exit_2_with_a_caret() {
    let (_dir, path) = setup("bad", FILE);
    let out = run(&["query", path.to_str().unwrap(), "Male & Tird"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(
        lines[0].contains("column 8") && lines[0].contains("unknown tag `Tird`"),
        "{err}"
    );
    assert!(lines[0].contains("did you mean `Tired`"), "{err}");
    assert_eq!(lines[1], "  Male & Tird");
    assert_eq!(lines[2], "         ^^^^");

    let out = run(&["query", path.to_str().unwrap(), "Male & (Tired |"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.lines().next().unwrap().contains("expected a tag name"),
        "{err}"
    );
    assert!(err.lines().nth(2).unwrap().ends_with('^'));

    let out = run(&["query", path.to_str().unwrap(), "Male", "--engine", "bogus"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bad_files_exit_1_naming_the_file_and_path() {
    let (_dir, path) = setup("badfile", &FILE.replacen("[150, 195]", "[150, 196]", 1));
    let out = run(&["query", path.to_str().unwrap(), "Male", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains(path.to_str().unwrap()), "{err}");
    assert!(err.contains("tags[0].ranges.walk_01[1]"), "{err}");

    let out = run(&["query", "/nonexistent/tags.json", "Male"]);
    assert_eq!(out.status.code(), Some(1));
    let out = run(&["tags", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn tags_lists_counts() {
    let (_dir, path) = setup("tags", FILE);
    let out = run(&["tags", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let walk: Vec<&str> = s
        .lines()
        .find(|l| l.starts_with("locomotion:Walk"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(walk, ["locomotion:Walk", "#4e9a06", "2", "3", "175"]);
    let tired: Vec<&str> = s
        .lines()
        .find(|l| l.starts_with("Tired"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(tired, ["Tired", "-", "2", "2", "105"]);
}

#[test]
fn warnings_go_to_stderr_and_do_not_fail() {
    let (_dir, path) = setup(
        "warn",
        &FILE.replacen("[[100, 160]]", "[[100, 160], [160, 170]]", 1),
    );
    let out = run(&["query", path.to_str().unwrap(), "Tired", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("warning"),
        "{}",
        text(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(v["clips"]["walk_01"], serde_json::json!([[100, 170]]));
}

/// A file of `clips` clips and `tags` tags: `Walk` on every clip, tag `t{i}` on clip `i`; the
/// first clip and the first `t` tag are named by `first_clip` and `first_tag`.
fn many(clips: usize, tags: usize, first_clip: &str, first_tag: &str) -> String {
    let names: Vec<String> = (0..clips)
        .map(|i| {
            if i == 0 {
                first_clip.to_owned()
            } else {
                format!("clip{i}")
            }
        })
        .collect();
    let clip_list: Vec<serde_json::Value> = names
        .iter()
        .map(|n| serde_json::json!({"name": n, "frames": 100, "fps": 30.0}))
        .collect();
    let mut tag_list = vec![serde_json::json!({
        "name": "Walk",
        "ranges": names.iter().map(|n| (n.clone(), serde_json::json!([[0, 50]]))).collect::<serde_json::Map<_, _>>(),
    })];
    for i in 0..tags {
        let name = if i == 0 {
            first_tag.to_owned()
        } else {
            format!("t{i}")
        };
        tag_list.push(serde_json::json!({
            "name": name,
            "ranges": {names[i % clips].clone(): [[10, 20]]},
        }));
    }
    serde_json::json!({"format": "taglane.tags", "version": 1, "clips": clip_list, "tags": tag_list})
        .to_string()
}

/// `query` and `tags` into a pipe closed before they write (`taglane query ... | head -1`): no
/// panic. The outputs are larger than a pipe holds, so every write after the first screenful
/// fails.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let (_dir, path) = setup("closed", &many(5_000, 5_000, "clip0", "t0"));
    let p = path.to_str().unwrap();
    for args in [
        vec!["query", p, "Walk"],
        vec!["query", p, "Walk", "--json"],
        vec!["tags", p],
    ] {
        let out = run_with_closed_stdout(&args);
        let err = text(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_ne!(out.status.code(), Some(101), "{args:?}: {err}");
    }
}

/// Errors and warnings into a stderr pipe closed before they are written (`taglane ... 2>&1 |
/// head -1` once `head` is done): the command ends with its own exit code, not a panic's 101.
#[test]
fn a_closed_stderr_is_not_a_panic() {
    let (dir, path) = setup("closed-err", &many(10, 10, "clip0", "t0"));
    let p = path.to_str().unwrap();
    let missing = dir.join("missing.json");
    let missing = missing.to_str().unwrap();
    for (args, code) in [
        (vec!["query", missing, "Walk"], 1),
        (vec!["query", p, "Walk &"], 2),
        (vec!["query", p, "NoSuchTag"], 2),
    ] {
        let out = run_with_closed_stderr(&args);
        assert_eq!(out.status.code(), Some(code), "{args:?}");
    }
}

/// A 100,000-character tag or clip name is printed once, not padded into every row of the table.
#[test]
fn long_names_do_not_widen_every_row() {
    let long_clip = "c".repeat(100_000);
    let long_tag = "T".repeat(100_000);
    let (_dir, path) = setup("long", &many(300, 300, &long_clip, &long_tag));
    let p = path.to_str().unwrap();
    for (args, long) in [
        (vec!["query", p, "Walk"], &long_clip),
        (vec!["tags", p], &long_tag),
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let s = text(&out.stdout);
        // Padded to the long name, the 300 rows would be 30 MB.
        assert!(s.len() < 150_000, "{args:?}: {} bytes", s.len());
        assert!(s.lines().any(|l| l.starts_with(long.as_str())), "{args:?}");
        let row = s
            .lines()
            .find(|l| l.starts_with("clip7 ") || l.starts_with("t7 "));
        assert!(row.is_some_and(|r| r.len() < 120), "{args:?}: {row:?}");
    }
}

/// A query that matches nothing totals 0.00 seconds, not `-0.00`.
#[test]
fn an_empty_result_totals_zero_seconds() {
    let (_dir, path) = setup("empty", FILE);
    let out = run(&["query", path.to_str().unwrap(), "Tired - Tired"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let total = stdout.lines().find(|l| l.starts_with("total")).unwrap();
    assert!(total.trim_end().ends_with(" 0.00"), "{stdout}");
}

/// `tags` counts what queries see: a tag of markers alone is not empty, and a marker inside a
/// range adds nothing.
#[test]
fn tags_counts_markers_as_queries_see_them() {
    let dir = Scratch::new("tags-markers");
    let doc = dir.join("mk.json");
    std::fs::write(
        &doc,
        r#"{"format":"taglane.tags","version":2,
            "clips":[{"name":"c","frames":100,"fps":30},{"name":"d","frames":50,"fps":30}],
            "tags":[{"name":"Step","markers":{"c":[10,20,30]}},
                    {"name":"Walk","ranges":{"c":[[0,50]]},"markers":{"c":[10],"d":[5]}}]}"#,
    )
    .unwrap();
    let out = run(&["tags", doc.to_str().unwrap()]);
    let text = text(&out.stdout);
    assert!(out.status.success(), "{}", crate::common::text(&out.stderr));
    let row = |name: &str| -> Vec<String> {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{text}"))
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    };
    // tag, colour, clips, ranges, frames
    assert_eq!(row("Step")[2..], ["1", "3", "3"], "{text}");
    assert_eq!(row("Walk")[2..], ["2", "2", "51"], "{text}");
    let q = crate::common::run(&["query", doc.to_str().unwrap(), "Walk", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&q.stdout).unwrap();
    assert_eq!((&v["ranges"], &v["frames"]), (&2.into(), &51.into()), "{v}");
}
