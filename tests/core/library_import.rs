//! Library import on a generated tree: nested folders, duplicate names, broken files, a text file,
//! a glTF with two animations; re-import, changed takes, progress, cancellation, units and loading
//! the imported clips in their units.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::common::temp_dir;
use taglane::core::anim::units::CMU_CM_PER_UNIT;
use taglane::core::anim::{ImportOptions, parse_bvh, write_bvh};
use taglane::core::library::{
    Cancelled, ImportSettings, LibraryScan, Progress, UnitSetting, plan_import, scan_library,
};
use taglane::core::project::{DEMO_CLIP_FILES, Project};
use taglane::core::tags::TagDocument;

fn demo(file: &str) -> &'static str {
    DEMO_CLIP_FILES.iter().find(|(f, _)| *f == file).unwrap().1
}

/// A demo take rewritten in another unit (`unit_cm` centimetres per file unit).
fn in_unit(file: &str, unit_cm: f32) -> String {
    let (mut clip, _) = parse_bvh(demo(file), "x", &ImportOptions::default()).unwrap();
    for t in &mut clip.translations {
        *t /= unit_cm;
    }
    for r in &mut clip.skeleton.rest {
        r.translation /= unit_cm;
    }
    for e in &mut clip.skeleton.end_sites {
        e.offset /= unit_cm;
    }
    write_bvh(&clip)
}

fn write(path: &Path, text: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

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

/// A glTF with a two-joint skin 1.7 m tall and two animations, `Walk` (1 s) and `Run` (2 s).
fn gltf() -> String {
    let mut d = f32s(&[0.0, 1.0, 2.0]);
    d.extend(f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0]));
    format!(
        r#"{{"asset": {{"version": "2.0"}}, "scene": 0, "scenes": [{{"nodes": [0]}}],
  "nodes": [{{"name": "hips", "children": [1]}}, {{"name": "head", "translation": [0, 1.7, 0]}}],
  "skins": [{{"joints": [0, 1]}}],
  "buffers": [{{"byteLength": {len}, "uri": "data:application/octet-stream;base64,{b64}"}}],
  "bufferViews": [{{"buffer": 0, "byteOffset": 0, "byteLength": {len}}}],
  "accessors": [
    {{"bufferView": 0, "byteOffset": 0, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0], "max": [1]}},
    {{"bufferView": 0, "byteOffset": 0, "componentType": 5126, "count": 3, "type": "SCALAR", "min": [0], "max": [2]}},
    {{"bufferView": 0, "byteOffset": 12, "componentType": 5126, "count": 2, "type": "VEC3"}},
    {{"bufferView": 0, "byteOffset": 12, "componentType": 5126, "count": 3, "type": "VEC3"}}],
  "animations": [
    {{"name": "Walk", "samplers": [{{"input": 0, "output": 2}}], "channels": [{{"sampler": 0, "target": {{"node": 0, "path": "translation"}}}}]}},
    {{"name": "Run", "samplers": [{{"input": 1, "output": 3}}], "channels": [{{"sampler": 0, "target": {{"node": 0, "path": "translation"}}}}]}}]}}"#,
        len = d.len(),
        b64 = base64(&d)
    )
}

/// The tree:
/// ```text
/// lib/day1/walk.bvh          demo walk, cm
/// lib/day2/walk.bvh          demo run, CMU unit (same name as day1's)
/// lib/day2/deep/idle.BVH     upper-case extension, metres
/// lib/day2/deep/rig.gltf     two animations
/// lib/broken/cut.bvh         truncated in the hierarchy
/// lib/broken/row.bvh         a frame row with a missing value
/// lib/notes.txt              not a take
/// lib/.hidden/x.bvh          hidden folder: skipped
/// ```
fn tree(name: &str) -> (PathBuf, PathBuf) {
    let dir = temp_dir(name);
    let lib = dir.join("lib");
    write(&lib.join("day1/walk.bvh"), demo("walk_male_01.bvh"));
    write(
        &lib.join("day2/walk.bvh"),
        in_unit("run_male_01.bvh", CMU_CM_PER_UNIT),
    );
    write(
        &lib.join("day2/deep/idle.BVH"),
        in_unit("idle_female_01.bvh", 100.0),
    );
    write(&lib.join("day2/deep/rig.gltf"), gltf());
    let text = demo("walk_male_01.bvh");
    write(
        &lib.join("broken/cut.bvh"),
        &text[..text.find("MOTION").unwrap() / 2],
    );
    let motion = text.find("Frame Time").unwrap();
    let row_start = motion + text[motion..].find('\n').unwrap() + 1;
    let row_end = row_start + text[row_start..].find('\n').unwrap();
    let row = &text[row_start..row_end];
    let shorter = &row[..row.rfind(' ').unwrap()];
    write(
        &lib.join("broken/row.bvh"),
        format!("{}{shorter}{}", &text[..row_start], &text[row_end..]),
    );
    write(&lib.join("notes.txt"), "session notes");
    write(&lib.join(".hidden/x.bvh"), demo("walk_male_01.bvh"));
    (dir, lib)
}

fn scan(roots: &[PathBuf], settings: &ImportSettings) -> LibraryScan {
    scan_library(roots, settings, &|_| {}, &AtomicBool::new(false)).unwrap()
}

#[test]
fn a_tree_imports_with_unique_names_units_and_a_report() {
    let (dir, lib) = tree("tree");
    let s = scan(std::slice::from_ref(&lib), &ImportSettings::default());
    assert_eq!(s.files.len(), 6, "{:?}", s.files);
    let base = dir.clone();
    let doc = TagDocument::default();
    let plan = plan_import(&doc, Some(&base), &s);
    let names: Vec<&str> = plan.added.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        ["day1/walk", "day2/walk", "idle", "rig#Walk", "rig#Run"],
        "{}",
        plan.report_text(true)
    );
    let sources: Vec<&str> = plan.added.iter().map(|a| a.source.as_str()).collect();
    assert_eq!(sources[0], "lib/day1/walk.bvh");
    assert_eq!(sources[3], "lib/day2/deep/rig.gltf");
    // Units: cm, the CMU unit, metres (BVH guessed), metres (glTF by specification).
    let units: Vec<f32> = plan.added.iter().map(|a| a.unit.unit_cm).collect();
    assert_eq!(units, [1.0, CMU_CM_PER_UNIT, 100.0, 100.0, 100.0]);
    assert!(
        plan.added[1].unit.reason.starts_with("auto: cmu"),
        "{}",
        plan.added[1].unit.reason
    );
    assert!(plan.added.iter().all(|a| a.unit.confident));
    // Keys a second apart: 1 fps raised to 24 (glTF clips keep their key rate, at least 24).
    assert_eq!((plan.added[3].frames, plan.added[4].frames), (25, 49));
    // Bad files: the importer's message, with the file and the line.
    assert_eq!(plan.failed.len(), 2, "{:?}", plan.failed);
    assert!(
        plan.failed[0].message.contains("cut.bvh: line "),
        "{}",
        plan.failed[0].message
    );
    let row = &plan.failed[1].message;
    assert!(
        row.contains("row.bvh: line ") && row.contains("values in the frame row"),
        "{row}"
    );
    assert_eq!(plan.ignored, vec![lib.join("notes.txt")]);
    let report = plan.report_text(false);
    for needle in [
        "added 5 clip(s) from 6 take file(s)",
        "2 failed",
        "notes.txt",
        "row.bvh: line",
    ] {
        assert!(report.contains(needle), "{needle}\n{report}");
    }

    // One undoable step through the project's history.
    let mut project = Project {
        path: Some(dir.join("p.taglane.json")),
        ..Project::default()
    };
    project.apply(plan.edit.clone(), "import").unwrap();
    assert_eq!(project.doc.clips.len(), 5);
    assert_eq!(project.doc.clips[1].unit_cm, Some(CMU_CM_PER_UNIT));
    project.save_to(&dir.join("p.taglane.json")).unwrap();
    project.history.undo(&mut project.doc).unwrap();
    assert!(project.doc.clips.is_empty());
    project.history.redo(&mut project.doc).unwrap();

    // Loading a clip applies its stored unit; the glTF animations are found by name.
    let (loaded, _) = Project::load(&dir.join("p.taglane.json")).unwrap();
    let run = loaded.load_clip(1).unwrap();
    assert_eq!(run.unit_cm, CMU_CM_PER_UNIT);
    let walk = loaded.load_clip(0).unwrap();
    assert_eq!(walk.unit_cm, 1.0);
    let rig_run = loaded.load_clip(4).unwrap();
    assert_eq!((rig_run.name.as_str(), rig_run.frame_count), ("Run", 49));
    for (i, c) in loaded.doc.clips.iter().enumerate() {
        assert_eq!(
            loaded.load_clip(i as u32).unwrap().frame_count as u32,
            c.frames,
            "{}",
            c.name
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn reimporting_adds_nothing_and_reports_changed_and_missing_takes() {
    let (dir, lib) = tree("reimport");
    let mut doc = TagDocument::default();
    let s = scan(std::slice::from_ref(&lib), &ImportSettings::default());
    plan_import(&doc, Some(&dir), &s)
        .edit
        .apply(&mut doc)
        .unwrap();
    let again = plan_import(&doc, Some(&dir), &s);
    assert!(
        again.added.is_empty() && again.edit.is_empty(),
        "{}",
        again.report_text(true)
    );
    assert_eq!(again.unchanged.len(), 5);
    // Named in the full report (with the added clips), counted in the summary.
    let full = again.report_text(true);
    assert!(
        full.contains("already in the project, unchanged (5):"),
        "{full}"
    );
    for u in &again.unchanged {
        assert_eq!(u.name, doc.clips[u.clip as usize].name);
        assert!(
            full.contains(&format!("  {} ({})", u.name, u.path.display())),
            "{full}"
        );
    }
    assert!(!again.report_text(false).contains("unchanged (5)"));
    assert!(
        again.summary().contains("5 already in the project"),
        "{}",
        again.summary()
    );
    // One take grows, one disappears, one is new.
    let walk = lib.join("day1/walk.bvh");
    let text = std::fs::read_to_string(&walk).unwrap();
    let last_row = text.trim_end().rsplit('\n').next().unwrap().to_owned();
    std::fs::write(&walk, format!("{}\n{last_row}\n", text.trim_end())).unwrap();
    std::fs::remove_file(lib.join("day2/deep/idle.BVH")).unwrap();
    write(&lib.join("day3/walk.bvh"), demo("tired_walk_female_03.bvh"));
    let s = scan(std::slice::from_ref(&lib), &ImportSettings::default());
    let plan = plan_import(&doc, Some(&dir), &s);
    assert_eq!(
        plan.added
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>(),
        ["day3/walk"]
    );
    assert_eq!(plan.changed.len(), 1);
    let c = &plan.changed[0];
    assert_eq!(
        (c.name.as_str(), c.frames_now),
        ("day1/walk", c.frames_before + 1)
    );
    assert_eq!(plan.missing.len(), 1);
    assert_eq!(plan.missing[0].name, "idle");
    let report = plan.report_text(false);
    assert!(
        report.contains("1 changed") && report.contains("1 missing"),
        "{report}"
    );
    // Applying the update edit gives the clip its new length.
    plan.update_changed_edit(&doc).apply(&mut doc).unwrap();
    assert_eq!(doc.clips[0].frames, c.frames_now);
    // Asked again, or for another document (the clip renamed), it changes nothing.
    assert!(plan.update_changed_edit(&doc).is_empty());
    // A take that gets shorter: what its update cuts off is listed, range by range and marker
    // by marker, before it is applied.
    {
        use taglane::core::tags::{Range, document::Tag};
        let n = doc.clips[0].frames;
        let mut tag = Tag::new("Late");
        tag.ranges.insert(
            0,
            vec![
                Range::new(0, 10),
                Range::new(n - 20, n - 12),
                Range::new(n - 8, n),
            ],
        );
        tag.markers.insert(0, vec![3, n - 1]);
        let mut shorter = doc.clone();
        shorter.tags.push(tag);
        let text = std::fs::read_to_string(&walk).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        lines.truncate(lines.len() - 15);
        let frames_line = lines.iter().position(|l| l.starts_with("Frames:")).unwrap();
        lines[frames_line] = format!("Frames: {}", n - 15);
        std::fs::write(&walk, lines.join("\n") + "\n").unwrap();
        let s = scan(std::slice::from_ref(&lib), &ImportSettings::default());
        let plan = plan_import(&shorter, Some(&dir), &s);
        let losses = plan.update_changed_losses(&shorter);
        let end = n - 15;
        assert_eq!(
            losses,
            [
                format!(
                    "tag `Late` on day1/walk (now {end} frames): range [{}, {}) cut to [{}, {end})",
                    n - 20,
                    n - 12,
                    n - 20
                ),
                format!(
                    "tag `Late` on day1/walk (now {end} frames): range [{}, {n}) dropped",
                    n - 8
                ),
                format!(
                    "tag `Late` on day1/walk (now {end} frames): marker {} dropped",
                    n - 1
                ),
            ]
        );
        assert!(
            plan.report_text_updating(false, true)
                .contains("updated to the file's length")
        );
        assert!(
            plan.report_text(false)
                .contains("the project keeps its values")
        );
        // Put back as it was for the rest of the test.
        std::fs::write(&walk, text).unwrap();
    }
    let mut other = doc.clone();
    other.clips[0].frames = c.frames_before;
    other.clips[0].name = "someone else".to_owned();
    assert!(plan.update_changed_edit(&other).is_empty());
    // Importing a subfolder of what is already there adds nothing either.
    let sub = scan(&[lib.join("day2")], &ImportSettings::default());
    assert!(plan_import(&doc, Some(&dir), &sub).added.is_empty());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn fixed_units_and_thread_counts_give_the_same_import() {
    let (dir, lib) = tree("settings");
    let doc = TagDocument::default();
    let one = scan(
        std::slice::from_ref(&lib),
        &ImportSettings {
            jobs: Some(1),
            ..ImportSettings::default()
        },
    );
    let all = scan(std::slice::from_ref(&lib), &ImportSettings::default());
    assert_eq!(
        plan_import(&doc, Some(&dir), &one).edit,
        plan_import(&doc, Some(&dir), &all).edit
    );
    let inches = scan(
        std::slice::from_ref(&lib),
        &ImportSettings {
            units: "in".parse::<UnitSetting>().unwrap(),
            ..ImportSettings::default()
        },
    );
    let plan = plan_import(&doc, Some(&dir), &inches);
    assert!(plan.added.iter().all(|a| a.unit.unit_cm == 2.54));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn progress_is_reported_and_cancel_stops_the_scan() {
    let (dir, lib) = tree("progress");
    let seen: Mutex<Vec<Progress>> = Mutex::new(Vec::new());
    let s = scan_library(
        std::slice::from_ref(&lib),
        &ImportSettings::default(),
        &|p| seen.lock().unwrap().push(*p),
        &AtomicBool::new(false),
    )
    .unwrap();
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 7, "the start and one per file");
    assert_eq!(seen[0].files_done, 0);
    let last = seen.iter().max_by_key(|p| p.files_done).unwrap();
    assert_eq!((last.files_done, last.files_total), (6, 6));
    assert_eq!((last.bytes_done, last.bytes_total), (s.bytes(), s.bytes()));

    // Cancelled before it starts, and from the progress callback after the first file.
    let cancel = AtomicBool::new(true);
    let r = scan_library(
        std::slice::from_ref(&lib),
        &ImportSettings::default(),
        &|_| {},
        &cancel,
    );
    assert_eq!(r.unwrap_err(), Cancelled);
    let cancel = AtomicBool::new(false);
    let done = Mutex::new(0usize);
    let r = scan_library(
        std::slice::from_ref(&lib),
        &ImportSettings {
            jobs: Some(1),
            ..ImportSettings::default()
        },
        &|p| {
            *done.lock().unwrap() = p.files_done;
            if p.files_done >= 1 {
                cancel.store(true, Ordering::Relaxed);
            }
        },
        &cancel,
    );
    assert_eq!(r.unwrap_err(), Cancelled);
    assert_eq!(*done.lock().unwrap(), 1, "no file started after the cancel");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn missing_roots_and_files_are_reported() {
    let dir = temp_dir("missing");
    let s = scan(
        &[dir.join("nope"), dir.join("take.bvh")],
        &ImportSettings::default(),
    );
    assert!(s.files.is_empty());
    assert_eq!(s.problems.len(), 2, "{:?}", s.problems);
    assert!(s.problems[0].contains("nope"), "{:?}", s.problems);
    // A take file given directly is imported.
    write(&dir.join("take.bvh"), demo("walk_male_01.bvh"));
    let s = scan(&[dir.join("take.bvh")], &ImportSettings::default());
    let plan = plan_import(&TagDocument::default(), None, &s);
    assert_eq!(plan.added.len(), 1);
    assert_eq!(plan.added[0].name, "take");
    assert!(
        plan.added[0].source.starts_with('/'),
        "absolute without a project folder"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The walk reads the kind of each entry from the folder listing, and `stat`s only takes (for
/// their size) and entries that are not plain files: a symbolic link is followed to its target
/// (a folder is walked, a take is found with the target's size), a folder named like a take is a
/// folder, a broken link is reported, and sidecars and other files are sorted without a `stat`.
#[cfg(unix)]
#[test]
fn the_walk_follows_links_and_sorts_entries_by_kind() {
    use std::os::unix::fs::symlink;
    use taglane::core::library::find_takes;
    let dir = temp_dir("walk_kinds");
    let elsewhere = dir.join("elsewhere");
    let walk_text = demo("walk_male_01.bvh");
    write(&elsewhere.join("inside/run.bvh"), walk_text);
    let lib = dir.join("lib");
    write(&lib.join("a.bvh"), walk_text);
    write(&lib.join("a.bvh.tags.json"), "{}");
    write(&lib.join("notes.txt"), "not a take");
    write(&lib.join("odd.bvh/b.bvh"), walk_text);
    symlink(elsewhere.join("inside"), lib.join("linked")).unwrap();
    symlink(elsewhere.join("inside/run.bvh"), lib.join("c.bvh")).unwrap();
    symlink(dir.join("gone.bvh"), lib.join("d.bvh")).unwrap();
    let walk = find_takes(std::slice::from_ref(&lib));
    let found: Vec<(String, Vec<String>, u64)> = walk
        .files
        .iter()
        .map(|f| {
            let rel = f.path.strip_prefix(&lib).unwrap().display().to_string();
            (rel, f.folders.clone(), f.bytes)
        })
        .collect();
    let size = walk_text.len() as u64;
    let lib_name = || vec!["lib".to_string()];
    let with = |sub: &str| vec!["lib".to_string(), sub.to_string()];
    assert_eq!(
        found,
        [
            ("a.bvh".to_string(), lib_name(), size),
            ("c.bvh".to_string(), lib_name(), size),
            ("linked/run.bvh".to_string(), with("linked"), size),
            ("odd.bvh/b.bvh".to_string(), with("odd.bvh"), size),
        ]
    );
    assert_eq!(walk.sidecars, [lib.join("a.bvh.tags.json")]);
    assert_eq!(walk.ignored, [lib.join("notes.txt")]);
    assert_eq!(walk.problems.len(), 1, "{:?}", walk.problems);
    assert!(walk.problems[0].contains("d.bvh"), "{:?}", walk.problems);
    std::fs::remove_dir_all(&dir).ok();
}

/// A folder reached through a link under the first root and at its own path under the second is
/// walked at its own path: links wait for every root's other folders, not only their own root's.
#[cfg(unix)]
#[test]
fn a_folder_linked_from_one_root_is_walked_at_its_own_path_under_another() {
    use taglane::core::library::find_takes;
    let dir = temp_dir("walk_two_roots");
    let walk_text = demo("walk_male_01.bvh");
    write(&dir.join("b/sub/x.bvh"), walk_text);
    write(&dir.join("a/own.bvh"), walk_text);
    std::os::unix::fs::symlink(dir.join("b/sub"), dir.join("a/link")).unwrap();
    let roots = [dir.join("a"), dir.join("b")];
    let walk = find_takes(&roots);
    let found: Vec<(PathBuf, usize)> = walk
        .files
        .iter()
        .map(|f| (f.path.clone(), f.root))
        .collect();
    assert_eq!(
        found,
        [(dir.join("a/own.bvh"), 0), (dir.join("b/sub/x.bvh"), 1)],
        "{:?}",
        walk.problems
    );
    // The link alone (its target under no root) is still walked, through the link.
    let walk = find_takes(&roots[..1]);
    let found: Vec<PathBuf> = walk.files.iter().map(|f| f.path.clone()).collect();
    assert_eq!(found, [dir.join("a/own.bvh"), dir.join("a/link/x.bvh")]);
    std::fs::remove_dir_all(&dir).ok();
}

/// A take in the project through a link (its clip's source is the link) and scanned at its own
/// path: `identify_sources`, run where the scan ran, reads the sources' file identities, and the
/// plan matches the take by them without reading the file system (the link is gone when it is
/// made, and the take is still known); a scan whose takes are all at the sources' paths reads
/// nothing.
#[cfg(unix)]
#[test]
fn source_identities_are_read_with_the_scan() {
    use taglane::core::library::identify_sources;
    use taglane::core::tags::ClipInfo;
    let dir = temp_dir("source_ids");
    let lib = dir.join("lib");
    write(&lib.join("walk.bvh"), demo("walk_male_01.bvh"));
    std::fs::create_dir_all(dir.join("picks")).unwrap();
    let link = dir.join("picks/walk.bvh");
    std::os::unix::fs::symlink(lib.join("walk.bvh"), &link).unwrap();
    let mut doc = TagDocument::default();
    doc.add_clip(ClipInfo {
        name: "walk".into(),
        frames: 241,
        fps: 30.0,
        source: Some("picks/walk.bvh".into()),
        unit_cm: Some(1.0),
    })
    .unwrap();
    let mut s = scan(std::slice::from_ref(&lib), &ImportSettings::default());
    let sources = vec![link.clone()];
    identify_sources(&mut s, &sources);
    let take_id = s.files[0].file.id.clone();
    assert!(take_id.is_some());
    assert_eq!(s.source_ids.get(&link), Some(&take_id));
    std::fs::remove_file(&link).unwrap();
    let plan = plan_import(&doc, Some(&dir), &s);
    assert!(plan.added.is_empty(), "{}", plan.report_text(true));
    assert_eq!(plan.unchanged.len(), 1);
    // The report says which take it is, and that the project has it through another path.
    assert_eq!(plan.linked.len(), 1);
    assert_eq!(
        (plan.linked[0].name.as_str(), plan.linked[0].source.as_str()),
        ("walk", "picks/walk.bvh")
    );
    assert!(
        plan.summary()
            .contains("1 already in the project (1 through another path to the same file)"),
        "{}",
        plan.summary()
    );
    let report = plan.report_text(false);
    assert!(
        report.contains("  walk (") && report.contains("): the clip's source is picks/walk.bvh"),
        "{report}"
    );
    // Without the identities read beforehand, the plan reads them itself: the link is gone, so the
    // take is new.
    s.source_ids.clear();
    let plan = plan_import(&doc, Some(&dir), &s);
    assert_eq!(plan.added.len(), 1, "{}", plan.report_text(true));
    // Every take at a source's path: nothing to read.
    let mut s = scan(std::slice::from_ref(&lib), &ImportSettings::default());
    identify_sources(&mut s, &[lib.join("walk.bvh")]);
    assert!(s.source_ids.is_empty());
    std::fs::remove_dir_all(&dir).ok();
}

/// Files of several animations whose clips cannot be plain `FILE#ANIMATION`: two files of one
/// name and another extension in one folder, two animations of one name in a file, and an
/// animation named with a `#`. Every clip loads its own animation, and importing again adds
/// nothing (before, such clips named no animation, and each import added them again).
#[test]
fn clips_of_several_animations_load_back_and_import_once() {
    let dir = crate::common::Scratch::new("several-animations");
    let lib = dir.join("lib");
    let rig = gltf();
    write(&lib.join("a/rig.gltf"), &rig);
    write(&lib.join("a/rig.GLTF"), &rig);
    write(
        &lib.join("a/dup.gltf"),
        rig.replacen(r#""name": "Walk""#, r#""name": "Run""#, 1),
    );
    write(
        &lib.join("a/hash.gltf"),
        rig.replacen(r#""name": "Walk""#, r#""name": "Take#1""#, 1),
    );
    let s = scan(std::slice::from_ref(&lib), &ImportSettings::default());
    let mut project = Project {
        path: Some(dir.join("p.taglane.json")),
        ..Project::default()
    };
    let plan = plan_import(&project.doc, Some(&dir), &s);
    assert!(plan.failed.is_empty(), "{}", plan.report_text(true));
    project.apply(plan.edit, "import").unwrap();
    assert_eq!(project.doc.clips.len(), 8);
    project.save_to(&dir.join("p.taglane.json")).unwrap();
    let (loaded, _) = Project::load(&dir.join("p.taglane.json")).unwrap();
    // Walk is 1 s (25 frames at 24 fps), Run 2 s (49).
    let mut seen = Vec::new();
    for (i, c) in loaded.doc.clips.iter().enumerate() {
        let clip = loaded
            .load_clip(i as u32)
            .unwrap_or_else(|e| panic!("{}: {e}", c.name));
        assert_eq!(clip.frame_count as u32, c.frames, "{}", c.name);
        seen.push((c.name.clone(), clip.name, clip.frame_count));
    }
    let names: Vec<&str> = seen.iter().map(|s| s.0.as_str()).collect();
    assert!(
        names.contains(&"lib/a/rig.gltf#Walk") && names.contains(&"lib/a/rig.GLTF#Run"),
        "{names:?}"
    );
    let dup: Vec<_> = seen.iter().filter(|s| s.0.contains("dup")).collect();
    assert_eq!(dup.len(), 2);
    assert_eq!((dup[0].2, dup[1].2), (25, 49), "{dup:?}");
    assert!(
        seen.iter()
            .any(|s| s.0 == "hash#Take#1" && s.1 == "Take#1" && s.2 == 25),
        "{seen:?}"
    );
    let again = plan_import(&loaded.doc, Some(&dir), &s);
    assert!(
        again.added.is_empty() && again.edit.is_empty(),
        "{}",
        again.report_text(true)
    );
    assert_eq!(again.unchanged.len(), 8);
}

/// A take whose name is not UTF-8 text (Latin-1 `caf\xe9.bvh`) is refused, named: a project
/// stores its sources as text, and a source with its bytes replaced named no file (each import
/// added the take again, and its sidecar never loaded).
#[cfg(unix)]
#[test]
fn a_take_whose_path_is_not_text_is_refused() {
    use std::os::unix::ffi::OsStrExt;
    let dir = crate::common::Scratch::new("not-utf8");
    let lib = dir.join("lib");
    write(&lib.join("walk.bvh"), demo("walk_male_01.bvh"));
    let latin1 = lib.join(std::ffi::OsStr::from_bytes(b"caf\xe9.bvh"));
    write(&latin1, demo("run_male_01.bvh"));
    let s = scan(std::slice::from_ref(&lib), &ImportSettings::default());
    let plan = plan_import(&TagDocument::default(), Some(&dir), &s);
    assert_eq!(plan.added.len(), 1, "{}", plan.report_text(true));
    assert_eq!(plan.failed.len(), 1);
    assert_eq!(plan.failed[0].path, latin1);
    assert!(
        plan.failed[0].message.contains("not UTF-8"),
        "{}",
        plan.failed[0].message
    );
}

/// A glTF take imported with one animation (its clip named after the file alone) that has two
/// when imported again: the clip is its first animation (unchanged), and only the second is
/// added (the first was added again, and the clip and its tags no longer loaded).
#[test]
fn a_take_that_gained_an_animation_adds_only_the_new_one() {
    let dir = crate::common::Scratch::new("gained-animation");
    let lib = dir.join("lib");
    let rig = gltf();
    let one = rig.replacen(
        r#",
    {"name": "Run", "samplers": [{"input": 1, "output": 3}], "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}]}"#,
        "",
        1,
    );
    assert_ne!(one, rig, "test bug: the second animation was not removed");
    write(&lib.join("fox.gltf"), &one);
    let mut project = Project {
        path: Some(dir.join("p.taglane.json")),
        ..Project::default()
    };
    let s = scan(std::slice::from_ref(&lib), &ImportSettings::default());
    let plan = plan_import(&project.doc, Some(&dir), &s);
    assert!(plan.failed.is_empty(), "{}", plan.report_text(true));
    project.apply(plan.edit, "import").unwrap();
    let names: Vec<&str> = project.doc.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["fox"]);
    write(&lib.join("fox.gltf"), &rig);
    let s = scan(std::slice::from_ref(&lib), &ImportSettings::default());
    let again = plan_import(&project.doc, Some(&dir), &s);
    assert_eq!(again.unchanged.len(), 1, "{}", again.report_text(true));
    assert_eq!(again.added.len(), 1, "{}", again.report_text(true));
    project.apply(again.edit, "import").unwrap();
    let names: Vec<&str> = project.doc.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["fox", "fox#Run"]);
    // Both load: the first is Walk (25 frames), the new one Run (49).
    let frames: Vec<usize> = (0..2)
        .map(|i| project.load_clip(i).unwrap().frame_count)
        .collect();
    assert_eq!(frames, [25, 49]);
}
