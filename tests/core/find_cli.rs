//! `taglane find`, run as the built binary on the demo project written to a temp folder.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{bin, temp_dir};

fn demo_dir(name: &str) -> PathBuf {
    let dir = temp_dir(&format!("find-{name}"));
    for (file, text) in taglane::core::demo::demo_files() {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `(clip, start, stop, score)` of each match.
fn matches(v: &serde_json::Value) -> Vec<(String, u64, u64, f64)> {
    v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["clip"].as_str().unwrap().to_owned(),
                m["start"].as_u64().unwrap(),
                m["stop"].as_u64().unwrap(),
                m["score"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn project_search_ranks_walks_first_and_caches_features() {
    let dir = demo_dir("project");
    let project = dir.join("demo.taglane.json");
    let args = [
        "find",
        s(&project),
        "--clip",
        "walk_male_01",
        "--range",
        "120:150",
        "--top",
        "8",
        "--json",
    ];
    let o = run(&args);
    let v = json(&o);
    assert!(
        stderr(&o).contains("0 from the cache, 10 built"),
        "{}",
        stderr(&o)
    );
    assert_eq!(v["query"]["clip"], "walk_male_01");
    assert_eq!(v["query"]["start"], 120);
    assert_eq!(v["query"]["stop"], 150);
    assert_eq!(v["query"]["frames"], 241);
    let m = matches(&v);
    assert_eq!(m.len(), 8);
    for (i, (clip, start, stop, score)) in m.iter().enumerate() {
        assert!(clip.contains("walk"), "{m:?}");
        assert!(
            !(clip == "walk_male_01" && *start < 150 && 120 < *stop),
            "{m:?}"
        );
        assert!(stop > start && *score >= 0.0);
        if i > 0 {
            assert!(m[i - 1].3 <= *score, "{m:?}");
        }
    }
    // The cache folder beside the project; a second run reads it and gives the same answer.
    assert!(dir.join(".taglane-cache").is_dir());
    let o = run(&args);
    assert_eq!(matches(&json(&o)), m);
    assert!(
        stderr(&o).contains("10 from the cache, 0 built"),
        "{}",
        stderr(&o)
    );
    // --no-cache: no cache line, same answer.
    let mut no_cache = args.to_vec();
    no_cache.push("--no-cache");
    let o = run(&no_cache);
    assert_eq!(matches(&json(&o)), m);
    assert!(!stderr(&o).contains("from the cache"));
    // The text table.
    let o = run(&args[..8]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.starts_with("query: walk_male_01 120:150 (30 of 241 frames)\n"),
        "{text}"
    );
    assert!(text.contains("rank") && text.contains(&m[0].0), "{text}");
    assert_eq!(text.lines().count(), 2 + 8, "{text}");
    // Weights and joints change the search.
    let mut weighted = args.to_vec();
    weighted.extend(["--weight", "root_velocity=0", "--weight", "trajectory=0"]);
    weighted.extend(["--joint", "left_hand=LeftForeArm"]);
    let o = run(&weighted);
    assert_ne!(matches(&json(&o)), m);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn project_usage_errors_exit_2_with_the_frame_count() {
    let dir = demo_dir("usage");
    let project = dir.join("demo.taglane.json");
    let p = s(&project);
    for (extra, want) in [
        (
            vec!["--clip", "walk_male_01", "--range", "200:400"],
            "241 frames",
        ),
        (
            vec!["--clip", "walk_male_01", "--range", "10:10"],
            "241 frames",
        ),
        (vec!["--clip", "walk_male_01", "--range", "30:20"], "empty"),
        (
            vec!["--clip", "walk_male_01", "--range", "ten:20"],
            "START:STOP",
        ),
        (
            vec!["--clip", "nobody", "--range", "0:10"],
            "no clip named `nobody`",
        ),
        (vec!["--clip", "walk_male_01"], "--range"),
        (
            vec!["--clip", "walk_male_01", "--range", "0:30", "--top", "0"],
            "--top",
        ),
        (
            vec![
                "--clip",
                "walk_male_01",
                "--range",
                "0:30",
                "--weight",
                "speed=2",
            ],
            "root_velocity",
        ),
        (
            vec![
                "--clip",
                "walk_male_01",
                "--range",
                "0:30",
                "--weight",
                "trajectory",
            ],
            "NAME=VALUE",
        ),
        (
            vec![
                "--clip",
                "walk_male_01",
                "--range",
                "0:30",
                "--joint",
                "elbow=X",
            ],
            "left_hand",
        ),
        (
            vec!["--clip", "walk_male_01", "--range", "0:30", "--units", "cm"],
            "--units",
        ),
        (
            vec![
                "--clip",
                "walk_male_01",
                "--range",
                "0:30",
                "--max-score=-1",
            ],
            "--max-score",
        ),
    ] {
        let mut args = vec!["find", p];
        args.extend(&extra);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{extra:?}: {}", stderr(&o));
    }
    // Input errors exit 1: a missing project, a query clip whose animation is gone, a joint the
    // query clip lacks.
    let o = run(&[
        "find",
        s(&dir.join("nope.json")),
        "--clip",
        "a",
        "--range",
        "0:1",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    std::fs::remove_file(dir.join("run_male_01.bvh")).unwrap();
    let o = run(&["find", p, "--clip", "run_male_01", "--range", "0:30"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("run_male_01.bvh"), "{}", stderr(&o));
    // ... while another query still runs, skipping that clip with a warning.
    let o = run(&[
        "find",
        p,
        "--clip",
        "walk_male_01",
        "--range",
        "0:30",
        "--json",
    ]);
    assert!(
        stderr(&o).contains("skipped clip `run_male_01`"),
        "{}",
        stderr(&o)
    );
    assert!(matches(&json(&o)).iter().all(|m| m.0 != "run_male_01"));
    let o = run(&[
        "find",
        p,
        "--clip",
        "walk_male_01",
        "--range",
        "0:30",
        "--joint",
        "root=Nope",
    ]);
    // A --joint naming no joint of the clip is a bad argument: exit 2.
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("Nope"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn loose_files_search_with_units_and_a_file_query() {
    let dir = demo_dir("loose");
    let walk = dir.join("walk_male_01.bvh");
    let turn = dir.join("walk_turn_left_male_04.bvh");
    let run_take = dir.join("run_male_01.bvh");
    let o = run(&[
        "find",
        s(&turn),
        s(&run_take),
        "--query",
        &format!("{}:120:150", s(&walk)),
        "--top",
        "8",
        "--json",
    ]);
    let v = json(&o);
    // The query's file is searched too; units guessed and reported.
    assert!(stderr(&o).contains("units: cm"), "{}", stderr(&o));
    assert_eq!(v["query"]["clip"], "walk_male_01");
    assert_eq!(v["query"]["frames"], 241);
    let m = matches(&v);
    assert_eq!(m.len(), 8);
    assert!(m.iter().all(|x| x.0.starts_with("walk")), "{m:?}");
    assert!(m.iter().any(|x| x.0 == "walk_turn_left_male_04"), "{m:?}");
    // Each clip names its file (two files of one stem are `x` and `x_2`).
    assert_eq!(v["query"]["file"], s(&walk));
    for x in v["matches"].as_array().unwrap() {
        let file = x["file"].as_str().unwrap();
        let stem = std::path::Path::new(file)
            .file_stem()
            .unwrap()
            .to_str()
            .unwrap();
        assert_eq!(x["clip"].as_str().unwrap(), stem, "{x}");
    }
    // Given units: lengths in inches make every clip 2.54 times larger alike; still walks.
    let o = run(&[
        "find",
        s(&walk),
        s(&run_take),
        "--query",
        &format!("{}:120:150", s(&walk)),
        "--units",
        "in",
        "--json",
    ]);
    assert!(
        matches(&json(&o))
            .iter()
            .take(3)
            .all(|x| x.0.starts_with("walk"))
    );
    // Usage errors: the range, the query's syntax, the units, project flags.
    for (args, want) in [
        (vec!["--query", "WALK:100:400"], "241 frames"),
        (vec!["--query", "WALK:7:7"], "empty"),
        (vec!["--query", "WALK:7"], "ANIM:START:STOP"),
        (
            vec!["--query", "WALK:0:30", "--units", "furlong"],
            "--units",
        ),
        (vec!["--query", "WALK:0:30", "--clip", "x"], "--clip"),
        (vec!["--query", "WALK#Other:0:30"], "no animation named"),
        (
            vec!["--query", "WALK:0:30", "--joint", "left_foot=Nope"],
            "no joint named `Nope`",
        ),
    ] {
        let args: Vec<String> = args.iter().map(|a| a.replace("WALK", s(&walk))).collect();
        let mut all = vec!["find".to_owned(), s(&run_take).to_owned()];
        all.extend(args);
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let o = run(&all);
        assert_eq!(o.status.code(), Some(2), "{all:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{all:?}: {}", stderr(&o));
    }
    // Input errors: a missing or broken file.
    let o = run(&[
        "find",
        s(&run_take),
        "--query",
        &format!("{}:0:10", s(&dir.join("gone.bvh"))),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    std::fs::write(dir.join("broken.bvh"), "HIERARCHY\nROOT").unwrap();
    let o = run(&[
        "find",
        s(&dir.join("broken.bvh")),
        "--query",
        &format!("{}:0:10", s(&walk)),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("broken.bvh"), "{}", stderr(&o));
    // Two files of one stem: told apart by the file column.
    let other = dir.join("again");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(&run_take, other.join("walk_male_01.bvh")).unwrap();
    let o = run(&[
        "find",
        s(&other.join("walk_male_01.bvh")),
        "--query",
        &format!("{}:120:150", s(&walk)),
        "--top",
        "40",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    // The input comes first: it is `walk_male_01`, the query's file `walk_male_01_2`.
    let rows: Vec<&str> = text.lines().skip(2).collect();
    let row = |clip: &str| {
        *rows
            .iter()
            .find(|l| l.split_whitespace().nth(2) == Some(clip))
            .unwrap_or_else(|| panic!("no row of {clip}: {text}"))
    };
    assert!(
        row("walk_male_01").ends_with(s(&other.join("walk_male_01.bvh"))),
        "{text}"
    );
    assert!(row("walk_male_01_2").ends_with(s(&walk)), "{text}");
    // Nothing was written next to the loose files.
    assert!(!dir.join(".taglane-cache").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A take that no longer matches its clip in the project (another rate here) is left out of the
/// search with the reason, as `cut` leaves it out; as the query's clip it stops the search.
#[test]
fn a_take_changed_since_it_was_tagged_is_not_searched() {
    let dir = demo_dir("changed-take");
    let project = dir.join("demo.taglane.json");
    let run_take = dir.join("run_male_01.bvh");
    let text = std::fs::read_to_string(&run_take).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("Frame Time:"))
        .unwrap()
        .to_owned();
    std::fs::write(&run_take, text.replace(&line, "Frame Time: 0.0166667")).unwrap();
    let o = run(&[
        "find",
        s(&project),
        "--clip",
        "walk_male_01",
        "--range",
        "120:150",
        "--top",
        "40",
        "--json",
    ]);
    let v = json(&o);
    let err = stderr(&o);
    assert!(
        err.contains("skipped clip `run_male_01`") && err.contains("where the project has"),
        "{err}"
    );
    assert!(
        matches(&v).iter().all(|m| m.0 != "run_male_01"),
        "{:?}",
        matches(&v)
    );
    let o = run(&[
        "find",
        s(&project),
        "--clip",
        "run_male_01",
        "--range",
        "0:30",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the query clip `run_male_01`"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
