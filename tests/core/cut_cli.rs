//! `taglane cut`, run as the built binary on the demo project written to a temp folder.

use std::path::{Path, PathBuf};

use crate::common::run;
use taglane::core::anim::{ImportOptions, load_animation};
use taglane::core::tags::query::{Engine, evaluate};
use taglane::core::tags::{TagDocument, load_tags_file};

fn demo_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("taglane-cut-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in taglane::core::demo::demo_files() {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

fn frames_of(path: &Path) -> usize {
    let imported = load_animation(path, &ImportOptions::default()).unwrap();
    imported.clips[0].frame_count
}

fn expected(doc: &TagDocument, expr: &str) -> Vec<(String, u32, u32)> {
    let q = doc.parse_query(expr).unwrap();
    let (r, _) = evaluate(doc, &q, Engine::Ranges).unwrap();
    r.iter()
        .flat_map(|(c, ranges)| {
            let name = doc.clips[c as usize].name.clone();
            ranges
                .iter()
                .map(move |x| (name.clone(), x.start, x.stop))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn cut_writes_one_bvh_per_range_with_its_frame_count() {
    let dir = demo_dir("default");
    let project = dir.join("demo.taglane.json");
    let out = dir.join("out");
    let expr = "Running & Male";
    let o = run(&[
        "cut",
        project.to_str().unwrap(),
        expr,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (doc, _) = load_tags_file(&project).unwrap();
    let want = expected(&doc, expr);
    assert!(want.len() >= 2, "{want:?}");
    let mut n_per_clip = std::collections::BTreeMap::<String, usize>::new();
    for (clip, start, stop) in &want {
        let n = n_per_clip.entry(clip.clone()).or_default();
        *n += 1;
        let file = out.join(format!("{clip}_Running_Male_{n}.bvh"));
        assert!(file.exists(), "{} missing", file.display());
        assert_eq!(
            frames_of(&file),
            (stop - start) as usize,
            "{}",
            file.display()
        );
    }
    let written = std::fs::read_dir(&out).unwrap().count();
    assert_eq!(written, want.len());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains(&format!("wrote {} BVH file(s)", want.len())),
        "{stdout}"
    );
    // Again into the same folder: nothing replaced without --overwrite.
    let first = out.join(format!("{}_Running_Male_1.bvh", want[0].0));
    std::fs::write(&first, "edited by hand").unwrap();
    let again = |extra: &[&str]| {
        let mut args = vec!["cut", project.to_str().unwrap(), expr, "--out"];
        args.push(out.to_str().unwrap());
        args.extend(extra);
        run(&args)
    };
    let o = again(&[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("{} of the cut's files already exist", want.len()))
            && err.contains("--overwrite"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&first).unwrap(), "edited by hand");
    let o = again(&["--overwrite"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(frames_of(&first), (want[0].2 - want[0].1) as usize);
    // A cut named like the takes, into the takes' own folder: refused even with --overwrite.
    let take = dir.join("idle_female_01.bvh");
    let before = std::fs::read(&take).unwrap();
    let o = run(&[
        "cut",
        project.to_str().unwrap(),
        "Idle",
        "--out",
        dir.to_str().unwrap(),
        "--pattern",
        "{clip}",
        "--overwrite",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("source take"), "{err}");
    assert_eq!(std::fs::read(&take).unwrap(), before);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cut_with_a_pattern_and_errors() {
    let dir = demo_dir("pattern");
    let project = dir.join("demo.taglane.json");
    let p = project.to_str().unwrap();
    let out = dir.join("o2");
    let o = run(&[
        "cut",
        p,
        "contact:LeftFootDown & Idle",
        "--out",
        out.to_str().unwrap(),
        "--pattern",
        "{clip}-{start}-{stop}",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (doc, _) = load_tags_file(&project).unwrap();
    let want = expected(&doc, "contact:LeftFootDown & Idle");
    assert!(!want.is_empty());
    for (clip, start, stop) in &want {
        let file = out.join(format!("{clip}-{start}-{stop}.bvh"));
        assert_eq!(frames_of(&file), (stop - start) as usize);
    }
    // Bad query: exit 2 with a caret, nothing written.
    let bad_out = dir.join("bad");
    let o = run(&["cut", p, "Runing", "--out", bad_out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("did you mean") && err.contains('^'), "{err}");
    assert!(!bad_out.exists());
    // A pattern that would overwrite files: exit 2.
    let o = run(&[
        "cut",
        p,
        "Running",
        "--out",
        bad_out.to_str().unwrap(),
        "--pattern",
        "{query}",
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Missing animation: exit 1 and the file is named.
    std::fs::remove_file(dir.join("run_male_01.bvh")).unwrap();
    let o = run(&[
        "cut",
        p,
        "Running",
        "--out",
        dir.join("o3").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("run_male_01.bvh"));
    // Unreadable project: exit 1.
    let o = run(&[
        "cut",
        dir.join("nope.json").to_str().unwrap(),
        "Running",
        "--out",
        "x",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let _ = std::fs::remove_dir_all(&dir);
}
