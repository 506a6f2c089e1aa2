//! `taglane import` and `taglane inspect` over many files, run as the built binary.

use std::path::{Path, PathBuf};

use crate::common::{Scratch, run, temp_dir, text};
use taglane::core::project::DEMO_CLIP_FILES;

/// The exit code of an import of [`library`]: its broken take is named and left out, the others
/// are imported, and the command exits 1 so that a pipeline sees it.
const PARTIAL: i32 = 1;

/// `lib/s1/` with two demo takes, `lib/s2/` with one named like one of them and a broken take.
fn library(dir: &Path) -> PathBuf {
    let lib = dir.join("lib");
    for (sub, i, name) in [
        ("s1", 0, "walk.bvh"),
        ("s1", 1, "run.bvh"),
        ("s2", 2, "walk.bvh"),
    ] {
        std::fs::create_dir_all(lib.join(sub)).unwrap();
        std::fs::write(lib.join(sub).join(name), DEMO_CLIP_FILES[i].1).unwrap();
    }
    std::fs::write(
        lib.join("s2/broken.bvh"),
        "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 zero\n",
    )
    .unwrap();
    lib
}

/// `taglane import INPUT -o PROJECT --report REPORT`.
fn import_with_report(input: &Path, project: &Path, report: &Path) -> std::process::Output {
    run(&[
        "import",
        input.to_str().unwrap(),
        "-o",
        project.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ])
}

#[test]
fn import_creates_then_reimports_a_project() {
    let dir = temp_dir("import");
    let lib = library(&dir);
    let project = dir.join("p.taglane.json");
    let p = project.to_str().unwrap();
    let out = run(&["import", lib.to_str().unwrap(), "-o", p, "--jobs", "2"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(PARTIAL), "{err}");
    assert!(err.contains("added 3 clip(s) from 4 take file(s)"), "{err}");
    assert!(
        err.contains("1 take(s) and 0 folder(s) could not be read (named above)"),
        "{err}"
    );
    assert!(
        err.contains("broken.bvh: line 4"),
        "the bad file with its line: {err}"
    );
    assert!(err.contains("units: cm: 3"), "{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&project).unwrap()).unwrap();
    let names: Vec<&str> = doc["clips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["run", "s1/walk", "s2/walk"]);
    assert_eq!(doc["clips"][0]["source"], "lib/s1/run.bvh");
    assert_eq!(doc["clips"][0]["unit_cm"], 1.0);
    // Re-import: nothing added, the file is not rewritten.
    let before = std::fs::read(&project).unwrap();
    let report = dir.join("report.txt");
    let out = import_with_report(&lib, &project, &report);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(PARTIAL), "{err}");
    assert!(
        err.contains("added 0 clip(s)") && err.contains("3 already in the project"),
        "{err}"
    );
    assert_eq!(std::fs::read(&project).unwrap(), before);
    assert!(
        std::fs::read_to_string(&report)
            .unwrap()
            .contains("failed (1)")
    );
    // The project's commands read it.
    let out = run(&["tags", p]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn import_units_sidecar_and_exit_codes() {
    let dir = temp_dir("codes");
    let lib = library(&dir);
    let project = dir.join("p.taglane.json");
    let p = project.to_str().unwrap();
    let l = lib.to_str().unwrap();
    // Usage errors: 2.
    for bad in [
        vec!["import", l, "-o", p, "--units", "feet"],
        vec!["import", l, "-o", p, "--jobs", "0"],
        vec!["import", "-o", p],
        vec!["import", l],
    ] {
        let out = run(&bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", text(&out.stderr));
    }
    // Nothing importable: 1, and no project written.
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("a.bvh"), "not a take").unwrap();
    let out = run(&["import", empty.to_str().unwrap(), "-o", p]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("a.bvh: line 1"),
        "{}",
        text(&out.stderr)
    );
    assert!(!project.exists());
    // A fixed unit, in sidecar mode.
    let out = run(&["import", l, "-o", p, "--units", "cmu", "--sidecar"]);
    assert_eq!(out.status.code(), Some(PARTIAL), "{}", text(&out.stderr));
    let side = lib.join("s1/run.bvh.tags.json");
    let sidecar: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&side).unwrap()).unwrap();
    assert_eq!(sidecar["unit_cm"], 5.644);
    assert_eq!(sidecar["clip"], "run");
    let project_text = std::fs::read_to_string(&project).unwrap();
    assert!(
        project_text.contains("\"folders\": [\"lib\"]"),
        "{project_text}"
    );
    // Re-importing into the sidecar project adds nothing.
    let out = run(&["import", l, "-o", p]);
    assert!(
        text(&out.stderr).contains("added 0 clip(s)"),
        "{}",
        text(&out.stderr)
    );
    // The other commands read a sidecar-mode project.
    let out = run(&["tags", p]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // A sidecar that cannot be read: its clip is not in the project, so a query, a cut, a search
    // and the tag list would answer for the others only: each fails (1), naming the sidecar once.
    let good_side = std::fs::read_to_string(&side).unwrap();
    std::fs::write(&side, "{ \"clip\": \"run\", \"frames\": x }").unwrap();
    let cuts = dir.join("cuts");
    for args in [
        vec!["tags", p],
        vec!["query", p, "Walk"],
        vec!["cut", p, "Walk", "--out", cuts.to_str().unwrap()],
        vec!["find", p, "--clip", "s1/walk", "--range", "0:10"],
    ] {
        let out = run(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("run.bvh.tags.json"), "{args:?}: {err}");
        assert!(
            err.contains("1 sidecar(s) or folder(s) cannot be read"),
            "{args:?}: {err}"
        );
        assert!(!err.contains(&format!("{p}: {p}")), "{args:?}: {err}");
    }
    assert!(!cuts.exists());
    // A folder of the project that is gone (unmounted, say) leaves its clips out the same way.
    std::fs::write(&side, &good_side).unwrap();
    let saved = std::fs::read_to_string(&project).unwrap();
    let gone = saved.replacen("\"folders\": [", "\"folders\": [\"gone\", ", 1);
    assert_ne!(gone, saved);
    std::fs::write(&project, gone).unwrap();
    for args in [vec!["tags", p], vec!["query", p, "Walk"]] {
        let out = run(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("gone") && err.contains("folder(s) cannot be read"),
            "{args:?}: {err}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn inspect_json_over_many_files_prints_one_line_each() {
    let dir = temp_dir("inspect");
    let lib = library(&dir);
    for fast in [false, true] {
        let mut args = vec!["inspect", lib.to_str().unwrap(), "--json", "--jobs", "2"];
        if fast {
            args.push("--fast");
        }
        let out = run(&args);
        assert_eq!(out.status.code(), Some(1), "one file is broken");
        let stdout = text(&out.stdout);
        let lines: Vec<serde_json::Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 4, "{stdout}");
        let files: Vec<&str> = lines.iter().map(|v| v["file"].as_str().unwrap()).collect();
        assert!(
            files[0].ends_with("s1/run.bvh") && files[3].ends_with("s2/walk.bvh"),
            "{files:?}"
        );
        assert!(
            lines[2]["error"]
                .as_str()
                .unwrap()
                .contains("broken.bvh: line 4")
        );
        assert_eq!(lines[0]["frames"].as_u64(), Some(u64::from(demo_frames(1))));
        assert_eq!(lines[0]["unit_auto"]["unit_cm"], 1.0);
        assert!(text(&out.stderr).contains("1 of 4 file(s) could not be read"));
    }
    // Two good files: exit 0.
    let a = lib.join("s1/run.bvh");
    let b = lib.join("s1/walk.bvh");
    let out = run(&[
        "inspect",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout).lines().count(), 2);
    // One file: the same line, with its file; a bad one prints its error line and exits 1.
    let broken = lib.join("s2/broken.bvh");
    for (file, code) in [(&a, 0), (&broken, 1)] {
        let out = run(&["inspect", file.to_str().unwrap(), "--json"]);
        assert_eq!(out.status.code(), Some(code), "{}", text(&out.stderr));
        let line: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
        assert_eq!(line["file"], file.display().to_string());
        assert_eq!(line.get("error").is_some(), code == 1, "{line}");
    }
    // Nothing to inspect (an empty folder, a folder named like a take): 1, saying so.
    let empty = dir.join("empty.bvh");
    std::fs::create_dir_all(&empty).unwrap();
    for json in [false, true] {
        let mut args = vec!["inspect", empty.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let out = run(&args);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            text(&out.stderr).contains("nothing to inspect"),
            "{}",
            text(&out.stderr)
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

fn demo_frames(i: usize) -> u32 {
    let (doc, _) = taglane::core::tags::TagDocument::from_json_str(
        taglane::core::project::DEMO_PROJECT_JSON,
        "demo",
    )
    .unwrap();
    let file = DEMO_CLIP_FILES[i].0;
    doc.clips
        .iter()
        .find(|c| c.source.as_deref() == Some(file))
        .unwrap()
        .frames
}

/// `--report FILE` replaces the file whole (written beside it, then renamed over it), as every
/// save does: a second name of the old file (a hard link) keeps the old text, and no temporary
/// file is left behind.
#[test]
fn import_report_is_saved_atomically() {
    let dir = crate::common::Scratch::new("report");
    let lib = library(&dir);
    let project = dir.join("p.taglane.json");
    let report = dir.join("report.txt");
    let other = dir.join("other-name.txt");
    std::fs::write(&report, "added 0 clip(s): the old report\n").unwrap();
    std::fs::hard_link(&report, &other).unwrap();
    let out = import_with_report(&lib, &project, &report);
    assert_eq!(out.status.code(), Some(PARTIAL), "{}", text(&out.stderr));
    assert!(
        std::fs::read_to_string(&report)
            .unwrap()
            .contains("failed (1)")
    );
    assert_eq!(
        std::fs::read_to_string(&other).unwrap(),
        "added 0 clip(s): the old report\n",
        "the report was written into the old file instead of replacing it"
    );
    let mut names: Vec<String> = std::fs::read_dir(&*dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["lib", "other-name.txt", "p.taglane.json", "report.txt"]
    );
}

/// Re-import into a sidecar project with `--update-changed`: the changed take's sidecar gets its new
/// length (the save compares with what the import read, so its own change is not taken for
/// someone else's).
#[test]
fn update_changed_in_a_sidecar_project() {
    let dir = temp_dir("sidecar-update");
    let lib = library(&dir);
    let project = dir.join("p.taglane.json");
    let (l, p) = (lib.to_str().unwrap(), project.to_str().unwrap());
    let out = run(&["import", l, "-o", p, "--sidecar"]);
    assert_eq!(out.status.code(), Some(PARTIAL), "{}", text(&out.stderr));
    // The run take is replaced by a take of another length.
    let (longer, _) = DEMO_CLIP_FILES
        .iter()
        .enumerate()
        .skip(2)
        .map(|(i, f)| (f.1, i))
        .find(|(_, i)| demo_frames(*i) != demo_frames(1))
        .expect("a take of another length");
    std::fs::write(lib.join("s1/run.bvh"), longer).unwrap();
    let out = run(&["import", l, "-o", p, "--update-changed"]);
    assert_eq!(out.status.code(), Some(PARTIAL), "{}", text(&out.stderr));
    let side = std::fs::read_to_string(lib.join("s1/run.bvh.tags.json")).unwrap();
    let frames = taglane::core::anim::load_animation(
        &lib.join("s1/run.bvh"),
        &taglane::core::anim::ImportOptions::default(),
    )
    .unwrap()
    .clips[0]
        .frame_count;
    assert!(side.contains(&format!("\"frames\": {frames}")), "{side}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `import --sidecar` into an existing single file turns it into a sidecar project; a sidecar
/// already beside a take that holds other tags (another project's) stops it, with nothing
/// written, instead of being written over.
#[test]
fn import_sidecar_into_a_single_file_never_writes_over_another_projects_sidecar() {
    use taglane::core::tags::{Range, TagDocument};
    let dir = temp_dir("sidecar-convert");
    let lib = library(&dir);
    let project = dir.join("p.taglane.json");
    let other = dir.join("other.taglane.json");
    let (l, p) = (lib.to_str().unwrap(), project.to_str().unwrap());
    // A single-file project with frames on `run`.
    let out = run(&["import", l, "-o", p]);
    assert_eq!(out.status.code(), Some(PARTIAL), "{}", text(&out.stderr));
    let (mut doc, _) = TagDocument::load(&project).unwrap();
    let run_clip = doc.clips.iter().position(|c| c.name == "run").unwrap() as u32;
    let mut tag = taglane::core::tags::Tag::new("Walk");
    tag.ranges.insert(run_clip, vec![Range::new(2, 5)]);
    doc.tags.push(tag);
    doc.save(&project, false).unwrap();
    // Another sidecar project over the same takes wrote its (untagged) sidecars.
    let out = run(&["import", l, "-o", other.to_str().unwrap(), "--sidecar"]);
    assert_eq!(out.status.code(), Some(PARTIAL), "{}", text(&out.stderr));
    let side = lib.join("s1/run.bvh.tags.json");
    let theirs = std::fs::read(&side).unwrap();
    let ours = std::fs::read(&project).unwrap();
    let out = run(&["import", l, "-o", p, "--sidecar"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("run.bvh.tags.json") && err.contains("never read"),
        "the sidecar named: {err}"
    );
    assert_eq!(std::fs::read(&side).unwrap(), theirs, "their sidecar kept");
    assert_eq!(std::fs::read(&project).unwrap(), ours, "the project kept");
    // With the other project's sidecars moved away, the project becomes a sidecar project.
    for f in [
        "s1/run.bvh.tags.json",
        "s1/walk.bvh.tags.json",
        "s2/walk.bvh.tags.json",
    ] {
        std::fs::remove_file(lib.join(f)).unwrap();
    }
    let out = run(&["import", l, "-o", p, "--sidecar"]);
    assert_eq!(out.status.code(), Some(PARTIAL), "{}", text(&out.stderr));
    let sidecar = std::fs::read_to_string(&side).unwrap();
    assert!(sidecar.contains("Walk"), "{sidecar}");
    assert!(
        std::fs::read_to_string(&project)
            .unwrap()
            .contains("\"folders\""),
        "a sidecar project now"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `import --sidecar` into a new project file over takes that have sidecars already (a project
/// file that was lost, or another project over the same folders) takes their clips and tags, as
/// opening the project would, instead of writing over them.
#[test]
fn import_sidecar_into_a_new_project_takes_the_sidecars_already_there() {
    use taglane::core::doc::Edit;
    use taglane::core::project::Project;
    use taglane::core::tags::{Range, Tag};
    let dir = temp_dir("sidecar-adopt");
    let lib = library(&dir);
    let first = dir.join("first.taglane.json");
    let l = lib.to_str().unwrap();
    let out = run(&["import", l, "-o", first.to_str().unwrap(), "--sidecar"]);
    assert_eq!(out.status.code(), Some(PARTIAL), "{}", text(&out.stderr));
    // Frames on `run`, saved into its sidecar; then the project file is lost.
    let (mut p, _) = Project::load(&first).unwrap();
    let run_clip = p.doc.clips.iter().position(|c| c.name == "run").unwrap() as u32;
    p.apply(
        Edit::InsertTag {
            index: 0,
            tag: Tag::new("Walk"),
        },
        "tag",
    )
    .unwrap();
    p.apply(
        Edit::SetRanges {
            tag: 0,
            clip: run_clip,
            ranges: vec![Range::new(2, 5)],
        },
        "edit",
    )
    .unwrap();
    p.save_to(&first).unwrap();
    let side = lib.join("s1/run.bvh.tags.json");
    let before = std::fs::read(&side).unwrap();
    std::fs::remove_file(&first).unwrap();
    // A take added since.
    std::fs::write(lib.join("s1/idle.bvh"), DEMO_CLIP_FILES[2].1).unwrap();
    let again = dir.join("again.taglane.json");
    let out = run(&["import", l, "-o", again.to_str().unwrap(), "--sidecar"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(PARTIAL), "{err}");
    assert!(
        err.contains("added 1 clip(s)"),
        "only the new take added: {err}"
    );
    assert_eq!(std::fs::read(&side).unwrap(), before, "the sidecar kept");
    let (q, _) = Project::load(&again).unwrap();
    let walk = q.doc.tag_index("Walk").expect("the sidecar's tag");
    let run_clip = q.doc.clips.iter().position(|c| c.name == "run").unwrap() as u32;
    assert_eq!(q.doc.tags[walk].ranges[&run_clip], vec![Range::new(2, 5)]);
    assert_eq!(q.doc.clips.len(), 4, "three adopted, one added");
    // A take file given alone: its folder's sidecars are taken too.
    let third = dir.join("third.taglane.json");
    let take = lib.join("s1/run.bvh");
    let out = run(&[
        "import",
        take.to_str().unwrap(),
        "-o",
        third.to_str().unwrap(),
        "--sidecar",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(std::fs::read(&side).unwrap(), before, "the sidecar kept");
    let (r, _) = Project::load(&third).unwrap();
    let walk = r.doc.tag_index("Walk").expect("the sidecar's tag");
    let run_clip = r.doc.clip_index("run").unwrap();
    assert_eq!(r.doc.tags[walk].ranges[&run_clip], vec![Range::new(2, 5)]);
    std::fs::remove_dir_all(&dir).ok();
}

/// `--report` never replaces the project, a tag document, a take or a folder's worth of nothing:
/// such a path is refused before anything is imported (exit 2), the file untouched.
#[test]
fn import_report_refuses_the_project_a_take_and_a_folder() {
    let dir = crate::common::Scratch::new("report-refused");
    let lib = library(&dir);
    let project = dir.join("p.taglane.json");
    let ok = run(&[
        "import",
        lib.to_str().unwrap(),
        "-o",
        project.to_str().unwrap(),
    ]);
    assert_eq!(ok.status.code(), Some(PARTIAL), "{}", text(&ok.stderr));
    let before = std::fs::read(&project).unwrap();
    let take = lib.join("s1/walk.bvh");
    let take_before = std::fs::read(&take).unwrap();
    for (report, input) in [
        (project.clone(), lib.clone()),
        (dir.join("other.taglane.json"), lib.clone()),
        (take.clone(), lib.clone()),
        (take.clone(), take.clone()),
        (dir.join("out.tlc"), lib.clone()),
        (lib.clone(), lib.clone()),
    ] {
        let out = import_with_report(&input, &project, &report);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}: {}",
            report.display(),
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains("nothing"),
            "{}",
            text(&out.stderr)
        );
    }
    assert_eq!(std::fs::read(&project).unwrap(), before);
    assert_eq!(std::fs::read(&take).unwrap(), take_before);
    // A report whose folder does not exist is refused before anything is imported (it was
    // found only after the project was saved).
    let nowhere = dir.join("no-such-folder/report.txt");
    let out = import_with_report(&lib, &project, &nowhere);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("nothing imported"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read(&project).unwrap(), before);
    assert!(!dir.join("other.taglane.json").exists() && !dir.join("out.tlc").exists());
    // A project named like a take's sidecar is refused before anything is written.
    let sidecar_named = lib.join("s1/walk.bvh.tags.json");
    let out = run(&[
        "import",
        lib.to_str().unwrap(),
        "-o",
        sidecar_named.to_str().unwrap(),
        "--sidecar",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("sidecar"),
        "{}",
        text(&out.stderr)
    );
    assert!(!sidecar_named.exists());
    // Any other file at the report's path is kept (exit 2); an earlier report is replaced.
    let notes = dir.join("notes.txt");
    std::fs::write(&notes, "my notes").unwrap();
    let out = import_with_report(&lib, &project, &notes);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes");
    let report = dir.join("report.txt");
    for _ in 0..2 {
        let out = import_with_report(&lib, &project, &report);
        assert_eq!(out.status.code(), Some(PARTIAL), "{}", text(&out.stderr));
    }
    assert!(
        std::fs::read_to_string(&report)
            .unwrap()
            .starts_with("added ")
    );
}

/// A sidecar project whose takes lie in its own folder lists that folder as `.`, and opens; one
/// written with an empty folder path (as before this was fixed) opens too.
#[test]
fn import_sidecar_of_the_projects_own_folder_opens_again() {
    let dir = crate::common::Scratch::new("sidecar-own-folder");
    for (name, bvh) in DEMO_CLIP_FILES.iter().take(2) {
        std::fs::write(dir.join(name), bvh).unwrap();
    }
    let project = dir.join("p.taglane.json");
    let out = run(&[
        "import",
        dir.to_str().unwrap(),
        "-o",
        project.to_str().unwrap(),
        "--sidecar",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let saved = std::fs::read_to_string(&project).unwrap();
    assert!(saved.contains(r#""folders": ["."]"#), "{saved}");
    let tags = run(&["tags", project.to_str().unwrap()]);
    assert_eq!(tags.status.code(), Some(0), "{}", text(&tags.stderr));
    // The empty path of the earlier versions.
    std::fs::write(&project, saved.replace(r#"["."]"#, r#"[""]"#)).unwrap();
    let tags = run(&["tags", project.to_str().unwrap()]);
    assert_eq!(tags.status.code(), Some(0), "{}", text(&tags.stderr));
    assert!(
        text(&tags.stdout).contains("2 clip"),
        "{}",
        text(&tags.stdout)
    );
}

/// A BVH take with `#` in its name holds one animation: its sidecar is `TAKE.tags.json`, the one
/// already there is adopted, and importing again adds nothing (its clip name read as
/// `FILE#ANIMATION` once put the tags in `t#1.bvh#1.tags.json` and the clips multiplied).
#[test]
fn a_take_with_a_hash_in_its_name_keeps_its_one_sidecar() {
    let dir = temp_dir("sidecar-hash");
    let lib = dir.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    let (_, bvh) = DEMO_CLIP_FILES[0];
    std::fs::write(lib.join("t#1.bvh"), bvh).unwrap();
    let clip = taglane::core::anim::load_animation(
        &lib.join("t#1.bvh"),
        &taglane::core::anim::ImportOptions::default(),
    )
    .unwrap()
    .clips
    .remove(0);
    let (frames, fps) = (clip.frame_count, clip.fps);
    std::fs::write(
        lib.join("t#1.bvh.tags.json"),
        format!(
            "{{\"format\": \"taglane.cliptags\", \"version\": 1, \"clip\": \"t#1\", \"frames\": {frames}, \"fps\": {fps:?}, \"tags\": {{\"Walk\": [[0, 20]]}}}}"
        ),
    )
    .unwrap();
    let project = dir.join("p.taglane.json");
    let (l, p) = (lib.to_str().unwrap(), project.to_str().unwrap());
    for extra in [&["--sidecar"][..], &[][..]] {
        let out = run(&[&["import", l, "-o", p][..], extra].concat());
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let mut files: Vec<String> = std::fs::read_dir(&lib)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert_eq!(files, ["t#1.bvh", "t#1.bvh.tags.json"]);
        let out = run(&["tags", p]);
        let listing = text(&out.stdout);
        assert!(listing.contains("1 tags, 1 clips"), "{listing}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// An import through a symbolic link to the project writes its sources relative to the folder
/// of the file the link names, where the save goes (they were relative to the link's folder, so
/// the clips it added were broken when the project was opened by its real path).
#[cfg(unix)]
#[test]
fn an_import_through_a_link_to_the_project_keeps_its_sources_right() {
    let dir = temp_dir("import-link");
    let lib = library(&dir);
    let store = dir.join("store");
    std::fs::create_dir_all(&store).unwrap();
    let real = store.join("p.taglane.json");
    let out = run(&[
        "import",
        lib.to_str().unwrap(),
        "-o",
        real.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(PARTIAL), "{}", text(&out.stderr));
    let link = dir.join("link.taglane.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let (name, bvh) = DEMO_CLIP_FILES[0];
    std::fs::write(lib.join(format!("new_{name}")), bvh).unwrap();
    let out = run(&[
        "import",
        lib.to_str().unwrap(),
        "-o",
        link.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(PARTIAL), "{}", text(&out.stderr));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // Opened by its real path, every clip's take is found, and importing again adds nothing.
    let (project, _) = taglane::core::project::Project::load(&real).unwrap();
    for c in 0..project.doc.clips.len() as u32 {
        project
            .load_clip(c)
            .unwrap_or_else(|e| panic!("{}: {e}", project.doc.clips[c as usize].name));
    }
    let out = run(&[
        "import",
        lib.to_str().unwrap(),
        "-o",
        real.to_str().unwrap(),
    ]);
    assert!(
        text(&out.stderr).contains("added 0 clip(s)"),
        "{}",
        text(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// An import whose save fails says so and that nothing was imported, and prints no "added N" (nor
/// writes a report saying so) before the error: the project and the report are unchanged.
#[test]
fn a_failed_save_reports_nothing_imported() {
    let dir = Scratch::new("import_save_fails");
    let lib = library(&dir);
    let project = dir.join("p.taglane.json");
    let p = project.to_str().unwrap();
    let out = run(&["import", lib.join("s1").to_str().unwrap(), "-o", p]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let before = std::fs::read(&project).unwrap();
    let mut perms = std::fs::metadata(&project).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&project, perms).unwrap();
    let report = dir.join("report.txt");
    let out = import_with_report(&lib, &project, &report);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("read-only"), "{err}");
    assert!(
        err.contains("nothing imported (1 clip(s) found to add were not added)"),
        "{err}"
    );
    assert!(!err.contains("added 1 clip(s)"), "{err}");
    assert!(
        !report.exists(),
        "a report of an import that did not happen"
    );
    assert_eq!(std::fs::read(&project).unwrap(), before);
}

/// A take reached by two paths (a symbolic link to it in another folder) is imported once: in one
/// import, the second path is reported; in a later one, the link finds the clip already there.
#[cfg(unix)]
#[test]
fn a_linked_take_is_imported_once() {
    let dir = Scratch::new("import_link");
    let lib = dir.join("lib");
    std::fs::create_dir_all(lib.join("takes")).unwrap();
    std::fs::create_dir_all(lib.join("picks")).unwrap();
    std::fs::write(lib.join("takes/run.bvh"), DEMO_CLIP_FILES[1].1).unwrap();
    std::fs::write(lib.join("takes/walk.bvh"), DEMO_CLIP_FILES[0].1).unwrap();
    std::os::unix::fs::symlink("../takes/run.bvh", lib.join("picks/run.bvh")).unwrap();
    let project = dir.join("p.taglane.json");
    let p = project.to_str().unwrap();
    let out = run(&["import", lib.to_str().unwrap(), "-o", p]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("added 2 clip(s)"), "{err}");
    assert!(
        err.contains("the same file as") && err.contains("imported once"),
        "{err}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&project).unwrap()).unwrap();
    let sources: Vec<&str> = doc["clips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["source"].as_str().unwrap())
        .collect();
    // From the take's own path, not the link's (walked first).
    assert!(sources.contains(&"lib/takes/run.bvh"), "{sources:?}");
    assert_eq!(sources.len(), 2, "{sources:?}");
    // The link's folder alone: the take is in the project already.
    let before = std::fs::read(&project).unwrap();
    let out = run(&["import", lib.join("picks").to_str().unwrap(), "-o", p]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("added 0 clip(s)") && err.contains("1 already in the project"),
        "{err}"
    );
    assert_eq!(std::fs::read(&project).unwrap(), before);
}

/// A folder reached through a link that sorts before the folder itself (`alias -> takes`), and a
/// library reached through a link: the takes are imported at their own paths, once each.
#[cfg(unix)]
#[test]
fn linked_folders_give_way_to_the_folders_themselves() {
    let dir = Scratch::new("import_link_dir");
    let lib = dir.join("lib");
    std::fs::create_dir_all(lib.join("takes")).unwrap();
    std::fs::create_dir_all(lib.join("picks")).unwrap();
    std::fs::write(lib.join("takes/run.bvh"), DEMO_CLIP_FILES[1].1).unwrap();
    std::fs::write(lib.join("takes/walk.bvh"), DEMO_CLIP_FILES[0].1).unwrap();
    std::os::unix::fs::symlink("takes", lib.join("alias")).unwrap();
    std::os::unix::fs::symlink("../takes/run.bvh", lib.join("picks/run.bvh")).unwrap();
    let sources = |project: &Path| -> Vec<String> {
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(project).unwrap()).unwrap();
        let mut s: Vec<String> = doc["clips"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["source"].as_str().unwrap().to_owned())
            .collect();
        s.sort();
        s
    };
    let project = dir.join("p.taglane.json");
    let out = run(&[
        "import",
        lib.to_str().unwrap(),
        "-o",
        project.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        sources(&project),
        ["lib/takes/run.bvh", "lib/takes/walk.bvh"]
    );
    // The library through a link: each take once, at the path with no link of its own.
    std::os::unix::fs::symlink("lib", dir.join("libl")).unwrap();
    let linked = dir.join("q.taglane.json");
    let out = run(&[
        "import",
        dir.join("libl").to_str().unwrap(),
        "-o",
        linked.to_str().unwrap(),
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        sources(&linked),
        ["libl/takes/run.bvh", "libl/takes/walk.bvh"]
    );
    assert!(
        err.contains("picks/run.bvh: the same file as"),
        "the link is the one left out: {err}"
    );
}
