//! Sidecar mode: each clip's tags in `TAKE.tags.json` next to its take, the project listing
//! folders, tags and queries. Round trip, minimal writes, bad sidecars (reported with file and JSON
//! path, never written over), atomic saves, and the single-file layout still loading.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use taglane::core::doc::Edit;
use taglane::core::doc::exchange::per_clip_json;
use taglane::core::library::sidecar::{
    cliptags_text, cliptags_texts, parse_cliptags, parse_cliptags_fast, parse_cliptags_tree,
};
use taglane::core::library::{
    ImportSettings, is_sidecar_project, load_any, load_sidecar_project, move_sidecars_aside,
    plan_import, save_sidecar_project, scan_library, sidecar_path,
};
use taglane::core::project::{DEMO_CLIP_FILES, Project};
use taglane::core::tags::{Range, SavedQuery, Tag, TagDocument, TagsFileError};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("taglane-side-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Frames `r` of tag 0 on clip `clip` of `p`, as one edit.
fn set(p: &mut Project, clip: u32, r: &[Range]) {
    crate::project_merge::set(p, 0, clip, r);
}

/// `dir/takes/a/` and `dir/takes/b/` with three demo takes, imported into a document.
fn library(dir: &Path) -> TagDocument {
    for (i, (file, text)) in DEMO_CLIP_FILES.iter().take(3).enumerate() {
        let sub = dir.join("takes").join(if i == 0 { "a" } else { "b" });
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(file), text).unwrap();
    }
    let scan = scan_library(
        &[dir.join("takes")],
        &ImportSettings::default(),
        &|_| {},
        &AtomicBool::new(false),
    )
    .unwrap();
    let mut doc = TagDocument::default();
    plan_import(&doc, Some(dir), &scan)
        .edit
        .apply(&mut doc)
        .unwrap();
    let mut walk = Tag {
        name: "locomotion:Walk".into(),
        color: Some([0x4e, 0x9a, 0x06]),
        ranges: Default::default(),
        markers: Default::default(),
        notes: Default::default(),
        version: 0,
    };
    walk.ranges
        .insert(0, vec![Range::new(0, 40), Range::new(60, 90)]);
    walk.ranges.insert(2, vec![Range::new(5, 6)]);
    // Markers and notes travel in the sidecars too.
    walk.markers.insert(0, vec![50]);
    let mut gravel = taglane::core::tags::Note {
        text: "on \"gravel\"".into(),
        ..Default::default()
    };
    gravel.data.insert("surface".into(), "gravel".into());
    walk.notes.insert(
        0,
        vec![
            (
                taglane::core::tags::Anchor::Range(Range::new(0, 40)),
                gravel,
            ),
            (
                taglane::core::tags::Anchor::Marker(50),
                taglane::core::tags::Note {
                    text: "step".into(),
                    ..Default::default()
                },
            ),
        ],
    );
    Edit::InsertTag {
        index: 0,
        tag: walk,
    }
    .apply(&mut doc)
    .unwrap();
    let tired = Tag {
        name: "Tired \"really\"".into(),
        color: None,
        ranges: [(1, vec![Range::new(0, 10)])].into_iter().collect(),
        markers: Default::default(),
        notes: Default::default(),
        version: 0,
    };
    Edit::InsertTag {
        index: 1,
        tag: tired,
    }
    .apply(&mut doc)
    .unwrap();
    // A tag with no range anywhere still survives (the project lists it).
    let empty = Tag {
        name: "Unused".into(),
        color: Some([1, 2, 3]),
        ranges: Default::default(),
        markers: Default::default(),
        notes: Default::default(),
        version: 0,
    };
    Edit::InsertTag {
        index: 2,
        tag: empty,
    }
    .apply(&mut doc)
    .unwrap();
    Edit::SetQueries(vec![SavedQuery {
        name: "walks".into(),
        expr: "locomotion:Walk".into(),
    }])
    .apply(&mut doc)
    .unwrap();
    // The project's autotag settings are kept in sidecar mode too.
    let mut settings = taglane::core::autotag::AutotagSettings::default();
    settings.params.turning.enter_deg_s = 25.0;
    Edit::SetAutotag(Some(Box::new(settings)))
        .apply(&mut doc)
        .unwrap();
    doc
}

/// Clips, tags and queries, without versions.
fn content(doc: &TagDocument) -> String {
    let mut s = format!("{:?}\n{:?}\n{:?}\n", doc.clips, doc.queries, doc.autotag);
    for t in &doc.tags {
        s += &format!(
            "{:?} {:?} {:?} {:?} {:?}\n",
            t.name, t.color, t.ranges, t.markers, t.notes
        );
    }
    s
}

fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(".tmp") {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn round_trip_and_minimal_writes() {
    let dir = temp_dir("round");
    let doc = library(&dir);
    let project = dir.join("lib.taglane.json");
    let first = save_sidecar_project(&project, &doc, Some(&["takes".to_owned()])).unwrap();
    assert_eq!(first.written.len(), 4, "three sidecars and the project");
    assert!(first.folders_added.is_empty() && first.stale.is_empty());
    assert!(temp_files(&dir).is_empty());
    // The project lists folders, tags and queries only.
    let text = std::fs::read_to_string(&project).unwrap();
    assert!(
        text.contains("\"storage\": \"sidecar\"") && text.contains("\"version\": 2"),
        "{text}"
    );
    assert!(
        !text.contains("clips") && !text.contains("ranges"),
        "{text}"
    );
    assert!(is_sidecar_project(&project));
    // Each take has its sidecar.
    let take0 = dir.join(doc.clips[0].source.as_deref().unwrap());
    let side0 = sidecar_path(&take0, None);
    assert_eq!(
        side0,
        dir.join(format!("takes/a/{}.tags.json", DEMO_CLIP_FILES[0].0))
    );
    let side = std::fs::read_to_string(&side0).unwrap();
    assert!(
        side.contains("\"locomotion:Walk\": [[0, 40], [60, 90]]"),
        "{side}"
    );

    let load = load_sidecar_project(&project).unwrap();
    assert!(
        load.warnings.is_empty() && load.bad_sidecars.is_empty(),
        "{:?}",
        load.problem_messages()
    );
    assert!(load.untracked.is_empty());
    assert_eq!(content(&load.doc), content(&doc));
    // The same through the project and the generic loader.
    let (p, warnings) = Project::load(&project).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(content(&p.doc), content(&doc));

    // Saving again writes nothing; tagging one clip rewrites only its sidecar.
    let again = save_sidecar_project(&project, &load.doc, None).unwrap();
    assert!(again.written.is_empty(), "{:?}", again.written);
    let mut p = p;
    p.apply(
        Edit::SetRanges {
            tag: 1,
            clip: 2,
            ranges: vec![Range::new(1, 3)],
        },
        "tag",
    )
    .unwrap();
    let before = std::fs::read(&project).unwrap();
    p.save_to(&project).unwrap();
    assert_eq!(
        std::fs::read(&project).unwrap(),
        before,
        "the project file is untouched"
    );
    let (back, _) = Project::load(&project).unwrap();
    assert_eq!(content(&back.doc), content(&p.doc));
    assert_eq!(back.doc.tags[1].ranges[&2], vec![Range::new(1, 3)]);
    assert!(temp_files(&dir).is_empty());
    std::fs::remove_dir_all(&dir).ok();
}

/// A sidecar save removes the temporaries its earlier saves left when they died (a pid that cannot
/// exist), reading each folder once for all its files; another file's temporary stays.
#[test]
fn a_sidecar_save_removes_the_temporaries_of_dead_saves() {
    let dir = temp_dir("leftovers");
    let doc = library(&dir);
    let take = dir.join(doc.clips[0].source.as_deref().unwrap());
    let side = sidecar_path(&take, None);
    let name = side.file_name().unwrap().to_string_lossy().into_owned();
    let dead = side.with_file_name(format!(".{name}.4194305.tmp"));
    let other = side.with_file_name(".unrelated.json.4194305.tmp");
    std::fs::write(&dead, "half").unwrap();
    std::fs::write(&other, "half").unwrap();
    let project = dir.join("lib.taglane.json");
    let report = save_sidecar_project(&project, &doc, Some(&["takes".to_owned()])).unwrap();
    assert!(report.written.contains(&side));
    assert!(!dead.exists(), "the dead save's temporary is removed");
    assert!(other.exists(), "another file's temporary stays");
    assert_eq!(load_sidecar_project(&project).unwrap().doc.clips.len(), 3);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_bad_sidecar_is_reported_and_never_written_over() {
    let dir = temp_dir("bad");
    let doc = library(&dir);
    let project = dir.join("lib.taglane.json");
    save_sidecar_project(&project, &doc, Some(&["takes".to_owned()])).unwrap();
    // Clip 1 is the take with the `Tired "really"` range.
    let take1 = dir.join(doc.clips[1].source.as_deref().unwrap());
    let side1 = sidecar_path(&take1, None);
    let damaged = std::fs::read_to_string(&side1)
        .unwrap()
        .replace("[[0, 10]]", "[[0, \"ten\"]]");
    std::fs::write(&side1, &damaged).unwrap();
    let load = load_sidecar_project(&project).unwrap();
    assert_eq!(load.bad_sidecars.len(), 1);
    match &load.bad_sidecars[0] {
        TagsFileError::Invalid {
            file,
            path,
            message,
        } => {
            assert!(file.ends_with(".bvh.tags.json"), "{file}");
            assert_eq!(path, "tags[\"Tired \\\"really\\\"\"][0][1]");
            assert!(message.contains("stop frame"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(load.bad_takes, vec![take1.clone()]);
    assert_eq!(load.doc.clips.len(), 2);
    // The other clips still save; the bad sidecar stays as it was.
    save_sidecar_project(&project, &load.doc, None).unwrap();
    assert_eq!(std::fs::read_to_string(&side1).unwrap(), damaged);
    // A document that has the clip again (re-imported) cannot write over it: nothing is saved.
    let e = save_sidecar_project(&project, &doc, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("was not overwritten") && e.contains(".bvh.tags.json"),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&side1).unwrap(), damaged);
    // Nor over one that cannot be read at all (here a folder where the sidecar would be).
    std::fs::remove_file(&side1).unwrap();
    std::fs::create_dir(&side1).unwrap();
    std::fs::write(side1.join("keep"), "mine").unwrap();
    let e = save_sidecar_project(&project, &doc, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot be read"), "{e}");
    assert_eq!(std::fs::read_to_string(side1.join("keep")).unwrap(), "mine");
    std::fs::remove_dir_all(&side1).unwrap();
    // Syntax errors name the line and column.
    std::fs::write(&side1, "{\"format\": ").unwrap();
    let load = load_sidecar_project(&project).unwrap();
    assert!(matches!(
        load.bad_sidecars[0],
        TagsFileError::Syntax { line: 1, .. }
    ));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn untracked_takes_orphans_and_stale_sidecars_are_reported() {
    let dir = temp_dir("untracked");
    let doc = library(&dir);
    let project = dir.join("lib.taglane.json");
    save_sidecar_project(&project, &doc, Some(&["takes".to_owned()])).unwrap();
    // A new take without a sidecar, and a sidecar without its take.
    std::fs::write(dir.join("takes/a/new.bvh"), DEMO_CLIP_FILES[4].1).unwrap();
    std::fs::write(dir.join("takes/a/gone.bvh.tags.json"), "{}").unwrap();
    let load = load_sidecar_project(&project).unwrap();
    assert_eq!(load.untracked, vec![dir.join("takes/a/new.bvh")]);
    assert_eq!(load.orphans, vec![dir.join("takes/a/gone.bvh.tags.json")]);
    let messages = load.problem_messages().join("\n");
    assert!(
        messages.contains("no sidecar") && messages.contains("gone.bvh.tags.json"),
        "{messages}"
    );
    // Removing a clip leaves its sidecar in place, reported as stale: it would bring the clip
    // back. The orphan (no take) is not: it loads as nothing.
    let mut fewer = load.doc.clone();
    let removed_take = dir.join(fewer.clips[0].source.as_deref().unwrap());
    let removed_side = sidecar_path(&removed_take, None);
    Edit::RemoveClip { index: 0 }.apply(&mut fewer).unwrap();
    let report = save_sidecar_project(&project, &fewer, None).unwrap();
    assert_eq!(report.stale, vec![removed_side.clone()]);
    assert_eq!(load_sidecar_project(&project).unwrap().doc.clips.len(), 3);
    // Moved aside (renamed, not deleted), the clip stays removed; restored, it comes back; moved
    // again, the first `.removed` is kept and the new one is numbered.
    let moved = move_sidecars_aside(&report.stale).unwrap();
    let aside = dir.join(format!(
        "{}.removed",
        removed_side.file_name().unwrap().to_string_lossy()
    ));
    assert_eq!(
        moved,
        vec![
            removed_side
                .parent()
                .unwrap()
                .join(aside.file_name().unwrap())
        ]
    );
    assert!(!removed_side.exists() && moved[0].exists());
    assert_eq!(load_sidecar_project(&project).unwrap().doc.clips.len(), 2);
    std::fs::copy(&moved[0], &removed_side).unwrap();
    assert_eq!(load_sidecar_project(&project).unwrap().doc.clips.len(), 3);
    let again = move_sidecars_aside(std::slice::from_ref(&removed_side)).unwrap();
    assert!(
        again[0].to_string_lossy().ends_with(".tags.json.removed.2"),
        "{again:?}"
    );
    assert!(moved[0].exists());
    // A damaged sidecar of a removed clip is not stale (it loads as nothing), and anything that is
    // not a sidecar is refused by name.
    std::fs::rename(&again[0], &removed_side).unwrap();
    std::fs::write(&removed_side, "{\"format\": ").unwrap();
    let report = save_sidecar_project(&project, &fewer, None).unwrap();
    assert!(report.stale.is_empty(), "{:?}", report.stale);
    let e = move_sidecars_aside(std::slice::from_ref(&project))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("lib.taglane.json") && e.contains("not a sidecar"),
        "{e}"
    );
    assert!(project.exists());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn clips_outside_the_folders_add_folders_and_project_errors_name_the_path() {
    let dir = temp_dir("folders");
    let doc = library(&dir);
    let project = dir.join("lib.taglane.json");
    let report = save_sidecar_project(&project, &doc, Some(&["takes/a".to_owned()])).unwrap();
    assert_eq!(report.folders_added, vec!["takes/b".to_owned()]);
    assert_eq!(load_sidecar_project(&project).unwrap().doc.clips.len(), 3);
    // A clip without a take cannot be saved in this mode; nothing is written.
    let mut orphan = doc.clone();
    orphan.clips[0].source = None;
    let before = std::fs::read(&project).unwrap();
    let e = save_sidecar_project(&project, &orphan, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("clips[0].source") && e.contains("no take file"),
        "{e}"
    );
    assert_eq!(std::fs::read(&project).unwrap(), before);
    // Errors in the project file name the JSON path.
    for (from, to, path) in [
        (
            "\"storage\": \"sidecar\"",
            "\"storage\": \"cloud\"",
            "storage",
        ),
        ("\"folders\": [", "\"folders\": [3, ", "folders[0]"),
        (
            "{\"name\": \"Unused\"",
            "{\"name\": \"Unused\", \"ranges\": {}",
            "tags[2].ranges",
        ),
        ("\"version\": 2", "\"version\": 3", "version"),
    ] {
        let text = String::from_utf8(before.clone()).unwrap();
        assert!(text.contains(from), "{from}\n{text}");
        std::fs::write(&project, text.replace(from, to)).unwrap();
        match load_sidecar_project(&project).unwrap_err() {
            TagsFileError::Invalid { path: p, .. } => assert_eq!(p, path),
            other => panic!("{other:?}"),
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn single_file_projects_still_load_and_per_clip_json_reads_as_a_sidecar() {
    let dir = temp_dir("v1");
    let doc = library(&dir);
    let single = dir.join("single.taglane.json");
    let mut p = Project {
        doc: doc.clone(),
        ..Project::default()
    };
    p.save_to(&single).unwrap();
    assert!(!is_sidecar_project(&single));
    // Version 2 only because the fixture has markers and notes (see docs/TAGS_FORMAT.md).
    assert!(
        std::fs::read_to_string(&single)
            .unwrap()
            .contains("\"version\": 2")
    );
    let (back, _) = load_any(&single).unwrap();
    assert_eq!(content(&back), content(&doc));
    // The exchange format's per-clip files are sidecars.
    for (i, (name, text)) in per_clip_json(&doc).iter().enumerate() {
        let (ct, warnings) = parse_cliptags(text, name).unwrap();
        assert!(warnings.is_empty());
        assert_eq!(ct.clip, *name);
        let (mine, _) = parse_cliptags(&cliptags_text(&doc, i as u32), name).unwrap();
        assert_eq!(
            (mine.frames, &mine.tags, &mine.markers, &mine.notes),
            (ct.frames, &ct.tags, &ct.markers, &ct.notes)
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The texts of all sidecars at once are those of each clip alone, byte for byte, and a sidecar's
/// bytes stay what earlier builds wrote (a save leaves unchanged sidecars alone by comparing bytes).
#[test]
fn all_sidecar_texts_at_once_are_each_clips_text() {
    let dir = temp_dir("texts");
    let doc = library(&dir);
    let all = cliptags_texts(&doc);
    assert_eq!(all.len(), doc.clips.len());
    for (i, text) in all.iter().enumerate() {
        assert_eq!(*text, cliptags_text(&doc, i as u32), "clip {i}");
    }
    let expected = format!(
        "{{\n  \"format\": \"taglane.cliptags\",\n  \"version\": 1,\n  \"clip\": \"{}\",\n  \"frames\": {},\n  \"fps\": {:?},\n  \"unit_cm\": {},\n  \"tags\": {{\n    \"locomotion:Walk\": [[0, 40], [60, 90]]\n  }},\n  \"markers\": {{\n    \"locomotion:Walk\": [50]\n  }},\n  \"notes\": {{\n    \"locomotion:Walk\": [{{\"range\": [0, 40], \"note\": \"on \\\"gravel\\\"\", \"data\": {{\"surface\": \"gravel\"}}}}, {{\"marker\": 50, \"note\": \"step\"}}]\n  }}\n}}\n",
        doc.clips[0].name,
        doc.clips[0].frames,
        // Rates and units are written with a decimal point (`30.0`).
        doc.clips[0].fps,
        doc.clips[0]
            .unit_cm
            .map_or("?".into(), |u| format!("{u:?}")),
    );
    assert_eq!(all[0], expected);
    let stress = taglane::core::stress::stress_document(&taglane::core::stress::StressSpec {
        clips: 40,
        tags: 12,
        ranges: 2_000,
        seed: 5,
    });
    for (i, text) in cliptags_texts(&stress).iter().enumerate() {
        assert_eq!(*text, cliptags_text(&stress, i as u32), "stress clip {i}");
        // And each reads back to the clip's lists, in tag order, without a warning, through the
        // fast path, which agrees with the tree reader.
        let (back, warnings) = parse_cliptags(text, "s.tags.json").unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            parse_cliptags_fast(text).as_ref(),
            Some(&back),
            "stress clip {i}"
        );
        assert_eq!(
            parse_cliptags_tree(text, "s.tags.json"),
            Ok((back.clone(), Vec::new()))
        );
        let expected: Vec<(String, Vec<Range>)> = stress
            .tags
            .iter()
            .filter_map(|t| Some((t.name.clone(), t.ranges.get(&(i as u32))?.to_vec())))
            .collect();
        assert_eq!(back.tags, expected, "stress clip {i}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A library of more sidecars than are parsed at once: read block by block, merged in walk order
/// (clip ids and tag lists as saved), a bad sidecar in a later block reported as in a small one.
#[test]
fn a_library_read_in_blocks_loads_in_walk_order() {
    use taglane::core::tags::ClipInfo;
    let dir = temp_dir("blocks");
    std::fs::create_dir_all(dir.join("takes")).unwrap();
    let mut doc = TagDocument::default();
    let n = 1_100;
    for i in 0..n {
        let source = format!("takes/take_{i:05}.bvh");
        std::fs::write(dir.join(&source), b"").unwrap();
        doc.add_clip(ClipInfo {
            name: format!("take_{i:05}"),
            frames: 100 + i,
            fps: 30.0,
            source: Some(source),
            unit_cm: None,
        })
        .unwrap();
    }
    for name in ["Even", "Third"] {
        doc.add_tag(name, None).unwrap();
    }
    for c in 0..n {
        if c % 2 == 0 {
            doc.set_ranges(0, c, vec![Range::new(c % 50, c % 50 + 10)])
                .unwrap();
        }
        if c % 3 == 0 {
            doc.set_ranges(1, c, vec![Range::new(0, 1), Range::new(5, 90)])
                .unwrap();
        }
    }
    let project = dir.join("lib.taglane.json");
    save_sidecar_project(&project, &doc, Some(&["takes".to_owned()])).unwrap();
    let load = load_sidecar_project(&project).unwrap();
    assert!(load.bad_sidecars.is_empty() && load.warnings.is_empty());
    assert_eq!(content(&load.doc), content(&doc));
    // One in the second block read by the tree reader (overlapping ranges, a clip name taken by
    // another sidecar): its warnings in order, its lists merged with the fast path's.
    std::fs::write(
        dir.join("takes/take_00700.bvh.tags.json"),
        r#"{"format": "taglane.cliptags", "version": 1, "clip": "take_00010", "frames": 800,
            "fps": 30, "tags": {"Third": [[0, 10], [5, 20]], "Odd": [[1, 2]]}}"#,
    )
    .unwrap();
    let load = load_sidecar_project(&project).unwrap();
    let said: Vec<&str> = load.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(
        said[0].starts_with("overlapping or adjacent ranges merged"),
        "{said:?}"
    );
    assert!(said[1].contains("loaded as `take_00010_2`"), "{said:?}");
    assert!(load.warnings[1].path.contains("take_00700.bvh.tags.json"));
    assert_eq!(load.doc.clips[700].name, "take_00010_2");
    assert_eq!(load.doc.clips[700].frames, 800);
    assert_eq!(load.doc.tags[1].ranges_on(700), &[Range::new(0, 20)][..]);
    assert!(load.doc.tags[0].ranges_on(700).is_empty());
    assert_eq!(
        load.doc.tags[1].ranges_on(699),
        &[Range::new(0, 1), Range::new(5, 90)][..]
    );
    let odd = load
        .doc
        .tag_index("Odd")
        .expect("a tag only one sidecar names");
    assert_eq!(load.doc.tags[odd].ranges_on(700), &[Range::new(1, 2)][..]);
    assert_eq!(load.doc.tags[0].ranges_on(702), doc.tags[0].ranges_on(702));
    // One sidecar in the third block broken: its take alone is reported, the others load in order.
    let broken = dir.join("takes/take_01040.bvh.tags.json");
    std::fs::write(&broken, "{ not json").unwrap();
    let load = load_sidecar_project(&project).unwrap();
    assert_eq!(load.bad_sidecars.len(), 1);
    assert_eq!(load.bad_takes, vec![dir.join("takes/take_01040.bvh")]);
    assert_eq!(load.doc.clips.len(), n as usize - 1);
    assert_eq!(load.doc.clips[1039].name, "take_01039");
    assert_eq!(load.doc.clips[1040].name, "take_01041");
    assert_eq!(
        load.doc.tags[1].ranges_on(1041 - 1),
        &[Range::new(0, 1), Range::new(5, 90)][..]
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The warnings of a sidecar's markers and notes name the sidecar, like its other warnings: merged
/// into a library's warnings they must not seem to be about the project file.
#[test]
fn marker_and_note_warnings_name_the_sidecar() {
    let text = r#"{"format": "taglane.cliptags", "version": 1, "clip": "walk", "frames": 100,
        "fps": 30, "tags": {"Step": [[0, 10]]}, "markers": {"Step": [5, 5]},
        "notes": {"Step": [{"marker": 5, "note": "a", "colour": "red"},
                           {"range": [2, 4], "note": "b"}, {"range": [0, 10], "note": "c"}]}}"#;
    let (_, warnings) = parse_cliptags_tree(text, "takes/walk.bvh.tags.json").unwrap();
    let paths: Vec<&str> = warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "takes/walk.bvh.tags.json: markers.Step",
            "takes/walk.bvh.tags.json: notes.Step[0].colour",
            "takes/walk.bvh.tags.json: notes.Step[1].range",
            "takes/walk.bvh.tags.json: notes.Step[2]",
        ],
        "{warnings:?}"
    );
}

/// A project file changed on disk that no longer lists a tag its sidecars still hold (edited by
/// hand, or by another tool): the tag keeps its frames, since the sidecars say it is there.
#[test]
fn a_tag_missing_from_a_changed_project_file_keeps_the_frames_its_sidecars_hold() {
    use taglane::core::library::sidecar::{parse_sidecar_project, sidecar_project_text};
    let dir = temp_dir("unlisted");
    let doc = library(&dir);
    let project_file = dir.join("lib.taglane.json");
    save_sidecar_project(&project_file, &doc, Some(&["takes".to_owned()])).unwrap();
    let (mut a, _) = Project::load(&project_file).unwrap();
    let walk = a.doc.tag_index("locomotion:Walk").unwrap();
    let frames = a.doc.tags[walk].ranges.clone();
    assert!(!frames.is_empty());
    let text = std::fs::read_to_string(&project_file).unwrap();
    let (mut p, _) = parse_sidecar_project(&text, "lib.taglane.json").unwrap();
    p.tags.retain(|(n, _)| n != "locomotion:Walk");
    p.queries.clear();
    std::fs::write(&project_file, sidecar_project_text(&p)).unwrap();
    a.apply(
        Edit::SetRanges {
            tag: walk,
            clip: 1,
            ranges: vec![Range::new(3, 4)],
        },
        "edit",
    )
    .unwrap();
    a.save_to(&project_file).unwrap();
    let walk = a.doc.tag_index("locomotion:Walk").expect("kept");
    assert_eq!(a.doc.tags[walk].ranges[&0], frames[&0]);
    assert!(a.doc.queries.is_empty(), "the file's other change is taken");
    let (now, _) = Project::load(&project_file).unwrap();
    assert_eq!(now.doc.clone().unversioned(), a.doc.clone().unversioned());
    std::fs::remove_dir_all(&dir).ok();
}

/// Two sessions on one sidecar project (or a version-control update while it is open): a save
/// never writes over a file changed on disk since the project read or last wrote it. It merges
/// that file into the document first (one undo step): of a clip not edited here, the document
/// takes the file's tags; of a clip edited on both sides, frame by frame. A value both sides
/// changed differently (a colour, a note, the queries) saves nothing and names the file.
#[test]
fn a_save_merges_files_changed_on_disk_meanwhile() {
    let dir = temp_dir("meanwhile");
    let doc = library(&dir);
    let project_file = dir.join("lib.taglane.json");
    save_sidecar_project(&project_file, &doc, Some(&["takes".to_owned()])).unwrap();
    let (mut a, _) = Project::load(&project_file).unwrap();
    let (mut b, _) = Project::load(&project_file).unwrap();
    assert_eq!(a.sidecars.len(), 4, "three sidecars and the project file");
    let sidecars: Vec<PathBuf> = doc
        .clips
        .iter()
        .map(|c| sidecar_path(&dir.join(c.source.as_deref().unwrap()), None))
        .collect();
    let read_all = || -> Vec<String> {
        let files = sidecars.iter().chain(std::iter::once(&project_file));
        files.map(|s| std::fs::read_to_string(s).unwrap()).collect()
    };
    // B tags clip 1 and saves; then A tags clip 2 and saves: A takes B's clip 1 first.
    set(&mut b, 1, &[Range::new(1, 3)]);
    b.save_to(&project_file).unwrap();
    set(&mut a, 2, &[Range::new(4, 6)]);
    a.save_to(&project_file).unwrap();
    assert_eq!(a.merged_from_disk, vec![sidecars[1].clone()]);
    assert!(a.kept_on_disk.is_empty());
    assert_eq!(
        a.doc.tags[0].ranges[&1],
        vec![Range::new(1, 3)],
        "A has B's change"
    );
    assert!(!a.history.is_dirty());
    assert_eq!(a.history.undo_label(), Some("changes made on disk"));
    let (both, _) = Project::load(&project_file).unwrap();
    assert_eq!(
        both.doc.clone().unversioned(),
        a.doc.clone().unversioned(),
        "A's document is what the files hold"
    );
    // A saves again: nothing to merge.
    a.save_to(&project_file).unwrap();
    assert!(a.merged_from_disk.is_empty());
    // Both edit clip 1, each on its own frames: frame by frame, both edits are kept.
    set(&mut b, 1, &[Range::new(1, 3), Range::new(20, 22)]);
    b.save_to(&project_file).unwrap();
    set(&mut a, 1, &[Range::new(2, 3), Range::new(7, 9)]);
    a.save_to(&project_file).unwrap();
    let merged = vec![Range::new(2, 3), Range::new(7, 9), Range::new(20, 22)];
    assert_eq!(
        a.doc.tags[0].ranges[&1], merged,
        "B's frames added, A's frame 1 removed"
    );
    let (now, _) = Project::load(&project_file).unwrap();
    assert_eq!(now.doc.tags[0].ranges[&1], merged);
    assert_eq!(now.doc.tags[0].ranges[&2], vec![Range::new(4, 6)]);
    // Undo of the merge step brings back A's version alone (and the next save writes it).
    assert_eq!(
        a.history.undo(&mut a.doc).as_deref(),
        Some("changes made on disk")
    );
    assert_eq!(
        a.doc.tags[0].ranges[&1],
        vec![Range::new(2, 3), Range::new(7, 9)]
    );
    a.history.redo(&mut a.doc);
    // B adds a tag with a colour and ranges on clip 0, and a query; A, meanwhile, edits clip 0.
    let (mut b, _) = Project::load(&project_file).unwrap();
    let mut jump = Tag::new("Jump");
    jump.color = Some([9, 8, 7]);
    b.apply(
        Edit::InsertTag {
            index: 1,
            tag: jump,
        },
        "tag",
    )
    .unwrap();
    b.apply(
        Edit::SetRanges {
            tag: 1,
            clip: 0,
            ranges: vec![Range::new(10, 20)],
        },
        "jump",
    )
    .unwrap();
    let query = |name: &str| SavedQuery {
        name: name.into(),
        expr: "locomotion:Walk".into(),
    };
    b.apply(Edit::SetQueries(vec![query("walks")]), "query")
        .unwrap();
    b.save_to(&project_file).unwrap();
    set(&mut a, 0, &[Range::new(0, 40), Range::new(60, 95)]);
    a.save_to(&project_file).unwrap();
    assert_eq!(a.merged_from_disk.len(), 2, "{:?}", a.merged_from_disk);
    let j = a.doc.tag_index("Jump").expect("B's tag");
    assert_eq!(a.doc.tags[j].color, Some([9, 8, 7]));
    assert_eq!(a.doc.tags[j].ranges[&0], vec![Range::new(10, 20)]);
    assert_eq!(a.doc.queries, vec![query("walks")]);
    assert_eq!(
        a.doc.tags[0].ranges[&0],
        vec![Range::new(0, 40), Range::new(60, 95)]
    );
    let (now, _) = Project::load(&project_file).unwrap();
    assert_eq!(now.doc.clone().unversioned(), a.doc.clone().unversioned());
    // A tag removed on disk (its project file entry and its sidecars) that this session tagged
    // on another clip: its frames there are kept (the tag stays, with them alone); one this
    // session did not touch is removed.
    let (mut b, _) = Project::load(&project_file).unwrap();
    let j = b.doc.tag_index("Jump").unwrap();
    b.apply(Edit::RemoveTag { index: j }, "remove").unwrap();
    b.save_to(&project_file).unwrap();
    let j = a.doc.tag_index("Jump").unwrap();
    a.apply(
        Edit::SetRanges {
            tag: j,
            clip: 2,
            ranges: vec![Range::new(1, 2)],
        },
        "jump",
    )
    .unwrap();
    a.save_to(&project_file).unwrap();
    let j = a
        .doc
        .tag_index("Jump")
        .expect("kept for this session's frames");
    assert_eq!(
        a.doc.tags[j].ranges.keys().copied().collect::<Vec<_>>(),
        [2]
    );
    assert_eq!(a.doc.tags[j].ranges[&2], vec![Range::new(1, 2)]);
    let (mut b, _) = Project::load(&project_file).unwrap();
    let j = b.doc.tag_index("Jump").unwrap();
    b.apply(Edit::RemoveTag { index: j }, "remove").unwrap();
    b.save_to(&project_file).unwrap();
    set(&mut a, 0, &[Range::new(0, 41), Range::new(60, 95)]);
    a.save_to(&project_file).unwrap();
    assert!(a.doc.tag_index("Jump").is_none(), "untouched here: removed");
    // A value both sides changed differently: nothing is saved, the file is named.
    let (mut b, _) = Project::load(&project_file).unwrap();
    let colour = |p: &mut Project, c: [u8; 3]| {
        p.apply(
            Edit::SetTagColor {
                index: 0,
                color: Some(c),
            },
            "colour",
        )
        .unwrap();
    };
    colour(&mut b, [1, 1, 1]);
    b.save_to(&project_file).unwrap();
    colour(&mut a, [2, 2, 2]);
    set(&mut a, 2, &[Range::new(50, 51)]);
    let before = read_all();
    let undo_steps = a.history.len();
    let e = a.save_to(&project_file).unwrap_err();
    assert!(
        e.contains("lib.taglane.json") && e.contains("colour of tag `locomotion:Walk`"),
        "{e}"
    );
    assert_eq!(read_all(), before, "nothing written");
    assert_eq!(a.history.len(), undo_steps, "nothing merged");
    assert!(a.history.is_dirty());
    // Work whose saved state is not in the history (recovered) cannot be merged: refused.
    colour(&mut a, [1, 1, 1]);
    a.history.mark_unsaved();
    b.apply(Edit::SetQueries(Vec::new()), "no query").unwrap();
    b.save_to(&project_file).unwrap();
    a.apply(Edit::SetQueries(vec![query("mine")]), "query")
        .unwrap();
    let e = a.save_to(&project_file).unwrap_err();
    assert!(e.contains("no longer in the undo history"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The clip list of a sidecar project merges on save too: a clip another session added (its
/// sidecar new in the folders) is added to the document, one it removed (its sidecar moved
/// aside) is removed when this session did not change it, and a conflict when it did.
#[test]
fn a_save_merges_clips_added_and_removed_on_disk_meanwhile() {
    let dir = temp_dir("clips-meanwhile");
    let doc = library(&dir);
    let project_file = dir.join("lib.taglane.json");
    save_sidecar_project(&project_file, &doc, Some(&["takes".to_owned()])).unwrap();
    let (mut a, _) = Project::load(&project_file).unwrap();
    let (mut b, _) = Project::load(&project_file).unwrap();
    let names =
        |p: &Project| -> Vec<String> { p.doc.clips.iter().map(|c| c.name.clone()).collect() };
    // B imports a new take with frames on it, and saves.
    let (file, text) = DEMO_CLIP_FILES[3];
    std::fs::write(dir.join("takes/b").join(file), text).unwrap();
    let mut clip = b.doc.clips[1].clone();
    clip.name = "added".into();
    clip.source = Some(format!("takes/b/{file}"));
    b.apply(
        Edit::InsertClip {
            index: 3,
            clip,
            ranges: vec![(0, vec![Range::new(2, 4)])],
        },
        "import",
    )
    .unwrap();
    assert!(b.save_to(&project_file).unwrap().is_empty());
    // A edits clip 0 and saves: B's clip is in its document, not a stale sidecar.
    set(&mut a, 0, &[Range::new(0, 10)]);
    let stale = a.save_to(&project_file).unwrap();
    assert!(stale.is_empty(), "{stale:?}");
    let added = sidecar_path(&dir.join("takes/b").join(file), None);
    assert!(
        a.merged_from_disk.contains(&added),
        "{:?}",
        a.merged_from_disk
    );
    assert_eq!(names(&a)[3], "added");
    assert_eq!(a.doc.tags[0].ranges[&3], vec![Range::new(2, 4)]);
    let (now, _) = Project::load(&project_file).unwrap();
    assert_eq!(now.doc.clone().unversioned(), a.doc.clone().unversioned());

    // B removes clip 2 (its sidecar moved aside, as the app does) and saves; A, which did not
    // change clip 2, saves an edit of clip 0: clip 2 stays removed.
    let (mut b, _) = Project::load(&project_file).unwrap();
    let removed = names(&b)[2].clone();
    b.apply(Edit::RemoveClip { index: 2 }, "remove").unwrap();
    let stale = b.save_to(&project_file).unwrap();
    assert_eq!(stale.len(), 1);
    move_sidecars_aside(&stale).unwrap();
    set(&mut a, 0, &[Range::new(0, 12)]);
    a.save_to(&project_file).unwrap();
    assert!(!names(&a).contains(&removed), "{:?}", names(&a));
    assert!(!stale[0].exists(), "its sidecar not written again");
    assert_eq!(a.doc.tags[0].ranges[&0], vec![Range::new(0, 12)]);
    let (now, _) = Project::load(&project_file).unwrap();
    assert_eq!(now.doc.clone().unversioned(), a.doc.clone().unversioned());
    assert!(
        a.history.undo(&mut a.doc).is_some(),
        "the merge is one undo step"
    );
    assert!(names(&a).contains(&removed), "undo brings the clip back");
    a.history.redo(&mut a.doc);

    // B removes clip 1 while A tags it: A's save stops, naming the sidecar, and writes nothing.
    let (mut b, _) = Project::load(&project_file).unwrap();
    b.apply(Edit::RemoveClip { index: 1 }, "remove").unwrap();
    let stale = b.save_to(&project_file).unwrap();
    move_sidecars_aside(&stale).unwrap();
    set(&mut a, 1, &[Range::new(7, 8)]);
    set(&mut a, 0, &[Range::new(0, 14)]);
    let before = std::fs::read_dir(dir.join("takes/b"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect::<Vec<_>>()
        .len();
    let sidecar0 = std::fs::read(sidecar_path(
        &dir.join(a.doc.clips[0].source.as_deref().unwrap()),
        None,
    ))
    .unwrap();
    let err = a.save_to(&project_file).unwrap_err();
    assert!(
        err.contains(&stale[0].display().to_string()) && err.contains("removed on disk"),
        "{err}"
    );
    assert!(!stale[0].exists(), "not written again");
    assert_eq!(
        std::fs::read(sidecar_path(
            &dir.join(a.doc.clips[0].source.as_deref().unwrap()),
            None
        ))
        .unwrap(),
        sidecar0,
        "nothing saved"
    );
    assert_eq!(
        std::fs::read_dir(dir.join("takes/b")).unwrap().count(),
        before
    );
    assert!(a.history.is_dirty());
    std::fs::remove_dir_all(&dir).ok();
}

/// What is not a clip removed on disk: a clip this session removed, saved, then brought back by
/// undo (its sidecar moved aside meanwhile) is written again; a folder gone from disk (unmounted,
/// renamed) fails the save instead of removing its clips. And two sessions adding clips of one
/// name (of different takes) both keep saving: the name merges as a value.
#[test]
fn a_save_tells_clips_removed_on_disk_from_missing_files_and_merges_renames() {
    let dir = temp_dir("not-removed");
    let doc = library(&dir);
    let project_file = dir.join("lib.taglane.json");
    save_sidecar_project(&project_file, &doc, Some(&["takes".to_owned()])).unwrap();
    let (mut a, _) = Project::load(&project_file).unwrap();
    let names =
        |p: &Project| -> Vec<String> { p.doc.clips.iter().map(|c| c.name.clone()).collect() };
    // Removed here, saved, moved aside, undone: saved again with the clip.
    let removed = names(&a)[2].clone();
    a.apply(Edit::RemoveClip { index: 2 }, "remove").unwrap();
    let stale = a.save_to(&project_file).unwrap();
    assert_eq!(stale.len(), 1);
    move_sidecars_aside(&stale).unwrap();
    a.history.undo(&mut a.doc).unwrap();
    a.save_to(&project_file).unwrap();
    assert!(names(&a).contains(&removed), "{:?}", names(&a));
    assert!(stale[0].exists(), "its sidecar written again");
    let (now, _) = Project::load(&project_file).unwrap();
    assert_eq!(names(&now), names(&a));

    // Two sessions add a clip named `extra`, of two different takes.
    let (mut b, _) = Project::load(&project_file).unwrap();
    let add = |p: &mut Project, sub: &str, file: &str, text: &str| {
        std::fs::write(dir.join("takes").join(sub).join(file), text).unwrap();
        let mut clip = p.doc.clips[0].clone();
        clip.name = "extra".into();
        clip.source = Some(format!("takes/{sub}/{file}"));
        let index = p.doc.clips.len();
        p.apply(
            Edit::InsertClip {
                index,
                clip,
                ranges: Vec::new(),
            },
            "import",
        )
        .unwrap();
    };
    add(&mut a, "a", "x.bvh", DEMO_CLIP_FILES[3].1);
    add(&mut b, "b", "y.bvh", DEMO_CLIP_FILES[4].1);
    b.save_to(&project_file).unwrap();
    a.save_to(&project_file).unwrap();
    assert_eq!(
        names(&a)[3..],
        ["extra", "extra_2"],
        "B's clip under another name"
    );
    // B saves again: its clip takes the name A gave it, and B gets A's clip.
    set(&mut b, 0, &[Range::new(1, 2)]);
    b.save_to(&project_file).unwrap();
    let mut b_names = names(&b);
    b_names.sort();
    let mut a_names = names(&a);
    a_names.sort();
    assert_eq!(b_names, a_names);
    let (now, _) = Project::load(&project_file).unwrap();
    let mut now_names = names(&now);
    now_names.sort();
    assert_eq!(now_names, a_names);

    // A folder gone from disk: the save fails and the clips stay.
    let before = names(&b);
    std::fs::rename(dir.join("takes/b"), dir.join("moved")).unwrap();
    set(&mut b, 0, &[Range::new(1, 3)]);
    let err = b.save_to(&project_file).unwrap_err();
    assert!(err.contains("takes/b"), "{err}");
    assert_eq!(names(&b), before, "no clip removed");
    std::fs::remove_dir_all(&dir).ok();
}

/// One step of two sessions on one sidecar project (`a`: which session).
#[derive(Debug, Clone)]
pub(crate) enum SessionOp {
    /// Frames `start..start + len` of the session's own half of the clip (session 0: frames
    /// 0-49, session 1: 50-99) become the tag's there; its frames in the other half stay.
    Tag {
        a: bool,
        clip: usize,
        tag: usize,
        start: u32,
        len: u32,
    },
    /// Take `take` as a clip named `name` (0: after the take, `tK`; 1, 2: `c0`, `c1`).
    Add {
        a: bool,
        take: usize,
        name: usize,
    },
    Remove {
        a: bool,
        clip: usize,
    },
    NewTag {
        a: bool,
        name: usize,
    },
    RemoveTag {
        a: bool,
        tag: usize,
    },
    Rename {
        a: bool,
        clip: usize,
        name: usize,
    },
    Save {
        a: bool,
    },
}

pub(crate) fn session_op() -> impl proptest::strategy::Strategy<Value = SessionOp> {
    use proptest::prelude::*;
    prop_oneof![
        4 => (any::<bool>(), 0..6usize, 0..3usize, 0..45u32, 1..10u32)
            .prop_map(|(a, clip, tag, start, len)| SessionOp::Tag { a, clip, tag, start, len }),
        1 => (any::<bool>(), 0..6usize, 0..3usize)
            .prop_map(|(a, take, name)| SessionOp::Add { a, take, name }),
        1 => (any::<bool>(), 0..6usize).prop_map(|(a, clip)| SessionOp::Remove { a, clip }),
        1 => (any::<bool>(), 0..3usize).prop_map(|(a, name)| SessionOp::NewTag { a, name }),
        1 => (any::<bool>(), 0..3usize).prop_map(|(a, tag)| SessionOp::RemoveTag { a, tag }),
        1 => (any::<bool>(), 0..6usize, 0..5usize)
            .prop_map(|(a, clip, name)| SessionOp::Rename { a, clip, name }),
        3 => any::<bool>().prop_map(|a| SessionOp::Save { a }),
    ]
}

/// Applies `op` (not a save) to its session; `take(k)` is the clip of take `k`. Steps that do not
/// apply (a clip or tag not there, a name taken) do nothing.
pub(crate) fn edit_session(
    sessions: &mut [Project; 2],
    op: &SessionOp,
    take: &dyn Fn(usize) -> taglane::core::tags::ClipInfo,
) {
    let (a, edit) = match *op {
        SessionOp::Tag {
            a,
            clip,
            tag,
            start,
            len,
        } => {
            let p = &sessions[usize::from(a)];
            if clip >= p.doc.clips.len() || tag >= p.doc.tags.len() {
                return;
            }
            let (lo, hi) = half(a);
            let frames = p.doc.clips[clip].frames;
            let old = p.doc.tags[tag].ranges.get(&(clip as u32)).unwrap_or(&[]);
            let mut ranges: Vec<Range> = Vec::new();
            for r in old {
                for (s, e) in [(r.start, r.stop.min(lo)), (r.start.max(hi), r.stop)] {
                    if s < e {
                        ranges.push(Range::new(s, e));
                    }
                }
            }
            let (s, e) = (lo + start, (lo + start + len).min(hi).min(frames));
            if s < e {
                ranges.push(Range::new(s, e));
            }
            ranges.sort_by_key(|r| r.start);
            let clip = clip as u32;
            (a, Edit::SetRanges { tag, clip, ranges })
        }
        SessionOp::Add { a, take: k, name } => {
            let p = &sessions[usize::from(a)];
            let mut clip = take(k);
            if name > 0 {
                clip.name = format!("c{}", name - 1);
            }
            if p.doc.clip_index(&clip.name).is_some()
                || p.doc.clips.iter().any(|c| c.source == clip.source)
            {
                return;
            }
            let index = p.doc.clips.len();
            let ranges = Vec::new();
            (
                a,
                Edit::InsertClip {
                    index,
                    clip,
                    ranges,
                },
            )
        }
        SessionOp::Remove { a, clip } => {
            if clip >= sessions[usize::from(a)].doc.clips.len() {
                return;
            }
            (a, Edit::RemoveClip { index: clip })
        }
        SessionOp::NewTag { a, name } => {
            let p = &sessions[usize::from(a)];
            let name = format!("N{name}");
            if p.doc.tag_index(&name).is_some() {
                return;
            }
            let index = p.doc.tags.len();
            (
                a,
                Edit::InsertTag {
                    index,
                    tag: Tag::new(name),
                },
            )
        }
        SessionOp::RemoveTag { a, tag } => {
            if tag >= sessions[usize::from(a)].doc.tags.len() {
                return;
            }
            (a, Edit::RemoveTag { index: tag })
        }
        SessionOp::Rename { a, clip, name } => {
            let p = &sessions[usize::from(a)];
            let name = ["x0", "x1", "t0", "t3", "c0"][name].to_owned();
            if clip >= p.doc.clips.len() || p.doc.clip_index(&name).is_some() {
                return;
            }
            (
                a,
                Edit::RenameClip {
                    clip: clip as u32,
                    name,
                },
            )
        }
        SessionOp::Save { .. } => return,
    };
    sessions[usize::from(a)].apply(edit, "edit").unwrap();
}

/// The frames session `a` tags: its half of a 100-frame clip.
fn half(a: bool) -> (u32, u32) {
    if a { (50, 100) } else { (0, 50) }
}

/// After session `a` saved with a merge (`before_disk`: the file(s) on disk just before, `before`:
/// its document just before, `after`: its document after): each tag's frames on each clip are
/// its own in its half and the files' in the other half (each session tags only its half, so the
/// merge must keep both sides' frames). Clips are matched by take (skipped where a take has
/// several clips), tags by name; a clip or tag missing before holds nothing there.
pub(crate) fn check_halves(
    before_disk: &TagDocument,
    before: &TagDocument,
    after: &TagDocument,
    a: bool,
) -> Result<(), String> {
    let by_take = |doc: &TagDocument, source: &Option<String>| -> Option<Option<u32>> {
        let mut same = doc
            .clips
            .iter()
            .enumerate()
            .filter(|(_, c)| c.source == *source);
        match (same.next(), same.next()) {
            (Some((i, _)), None) => Some(Some(i as u32)),
            (None, _) => Some(None),
            _ => None,
        }
    };
    let frames = |doc: &TagDocument, clip: Option<u32>, tag: &str, (lo, hi): (u32, u32)| {
        let mut out = Vec::new();
        if let (Some(c), Some(t)) = (clip, doc.tag_index(tag)) {
            for r in doc.tags[t].ranges.get(&c).unwrap_or(&[]) {
                out.extend((r.start.max(lo)..r.stop.min(hi)).collect::<Vec<u32>>());
            }
        }
        out
    };
    for (i, c) in after.clips.iter().enumerate() {
        let (Some(Some(_)), Some(disk), Some(ours)) = (
            by_take(after, &c.source),
            by_take(before_disk, &c.source),
            by_take(before, &c.source),
        ) else {
            continue;
        };
        for t in &after.tags {
            let now_own = frames(after, Some(i as u32), &t.name, half(a));
            let now_other = frames(after, Some(i as u32), &t.name, half(!a));
            let own = frames(before, ours, &t.name, half(a));
            let other = frames(before_disk, disk, &t.name, half(!a));
            if now_own != own || now_other != other {
                return Err(format!(
                    "clip `{}` tag `{}`: own half {now_own:?}, was {own:?}; other half \
                     {now_other:?}, on disk {other:?}",
                    c.name, t.name
                ));
            }
        }
    }
    Ok(())
}

/// Session `a` saves `p` to `file` and checks what the two-session proptests ask of a save:
/// either it stops on a conflict made on disk (the session then reopens the project), or its
/// frames and the other session's survive the merge ([`check_halves`]), the files hold what the
/// session shows, and nothing is left unsaved. Stale sidecars are moved aside, as the app does.
pub(crate) fn save_session(p: &mut Project, file: &Path, a: bool) -> Result<(), String> {
    let before_disk = Project::load(file).unwrap().0.doc;
    let before = p.doc.clone();
    match p.save_to(file) {
        Ok(stale) => {
            check_halves(&before_disk, &before, &p.doc, a)?;
            move_sidecars_aside(&stale).unwrap();
            for f in &stale {
                p.sidecars.forget(f);
            }
            let (now, warnings) = Project::load(file).unwrap();
            // (Takes with no clip yet are reported, as they should be.)
            let other: Vec<&String> = warnings
                .iter()
                .filter(|w| !w.contains("have no sidecar yet"))
                .collect();
            if !other.is_empty() {
                return Err(format!("warnings: {other:?}"));
            }
            if by_name(&now.doc) != by_name(&p.doc) {
                return Err(format!(
                    "the files hold {:?}, the session shows {:?}",
                    by_name(&now.doc),
                    by_name(&p.doc)
                ));
            }
            if p.history.is_dirty() {
                return Err("saved, but still dirty".into());
            }
            Ok(())
        }
        Err(e) if e.contains("changed on disk") || e.contains("removed on disk") => {
            *p = Project::load(file).unwrap().0;
            Ok(())
        }
        Err(e) => Err(format!("not a conflict made on disk: {e}")),
    }
}

/// What a project holds, by clip and tag name: each clip's length and each tag's ranges on it.
pub(crate) type ByName =
    std::collections::BTreeMap<String, (u32, std::collections::BTreeMap<String, Vec<Range>>)>;

pub(crate) fn by_name(doc: &TagDocument) -> ByName {
    doc.clips
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let tags = doc
                .tags
                .iter()
                .filter_map(|t| {
                    let r = t.ranges.get(&(i as u32))?;
                    Some((t.name.clone(), r.to_vec()))
                })
                .collect();
            (c.name.clone(), (c.frames, tags))
        })
        .collect()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]
    /// Two sessions editing, adding and removing clips and tags on one sidecar project, saving
    /// in any order: every save either fails (a conflict, named; the session then reopens the
    /// project) or leaves the files holding exactly what the saving session shows.
    #[test]
    fn two_sessions_saving_in_any_order_leave_the_files_as_the_saver_shows(
        ops in proptest::collection::vec(session_op(), 1..16)
    ) {
        use taglane::core::tags::ClipInfo;
        let dir = std::env::temp_dir().join(format!(
            "taglane-side-{}-sessions-{}",
            std::process::id(),
            taglane::core::tags::query::next_version()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("takes")).unwrap();
        for k in 0..6 {
            std::fs::write(dir.join(format!("takes/t{k}.bvh")), b"").unwrap();
        }
        let take = |k: usize| ClipInfo {
            name: format!("t{k}"),
            frames: 100,
            fps: 30.0,
            source: Some(format!("takes/t{k}.bvh")),
            unit_cm: None,
        };
        let doc = TagDocument {
            clips: (0..3).map(take).collect(),
            tags: vec![Tag::new("T0")],
            ..Default::default()
        };
        let project_file = dir.join("lib.taglane.json");
        save_sidecar_project(&project_file, &doc, Some(&["takes".to_owned()])).unwrap();
        let mut sessions = [
            Project::load(&project_file).unwrap().0,
            Project::load(&project_file).unwrap().0,
        ];
        for op in ops {
            match op {
                SessionOp::Save { a } => {
                    let saved = save_session(&mut sessions[usize::from(a)], &project_file, a);
                    proptest::prop_assert!(saved.is_ok(), "{:?}", saved);
                }
                edit => edit_session(&mut sessions, &edit, &take),
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}

/// A clip renamed here while another session tags it: the sidecar on disk (the old name, new
/// frames) merges into the renamed clip, matched by its take, and the rename stands.
#[test]
fn a_clip_renamed_here_merges_with_its_sidecar_changed_on_disk() {
    let dir = temp_dir("renamed-here");
    let doc = library(&dir);
    let project_file = dir.join("lib.taglane.json");
    save_sidecar_project(&project_file, &doc, Some(&["takes".to_owned()])).unwrap();
    let (mut a, _) = Project::load(&project_file).unwrap();
    let (mut b, _) = Project::load(&project_file).unwrap();
    let before = a.doc.tags[0].ranges.get(&1).unwrap_or(&[]).to_vec();
    set(&mut b, 1, &[Range::new(30, 35)]);
    b.save_to(&project_file).unwrap();
    a.apply(
        Edit::RenameClip {
            clip: 1,
            name: "renamed".into(),
        },
        "rename",
    )
    .unwrap();
    a.save_to(&project_file).unwrap();
    assert_eq!(a.doc.clips[1].name, "renamed");
    assert_eq!(
        a.doc.tags[0].ranges[&1],
        vec![Range::new(30, 35)],
        "was {before:?}"
    );
    let (now, _) = Project::load(&project_file).unwrap();
    let c = now.doc.clip_index("renamed").unwrap();
    assert_eq!(now.doc.tags[0].ranges[&c], vec![Range::new(30, 35)]);
    std::fs::remove_dir_all(&dir).ok();
}

/// `doc` saved as a sidecar project `dir/lib.taglane.json` listing `takes`: the project file and
/// clip 0's sidecar.
fn saved(dir: &Path, doc: &TagDocument) -> (PathBuf, PathBuf) {
    let project = dir.join("lib.taglane.json");
    save_sidecar_project(&project, doc, Some(&["takes".to_owned()])).unwrap();
    let take0 = dir.join(doc.clips[0].source.as_deref().unwrap());
    (project, sidecar_path(&take0, None))
}

/// A sidecar or project file laid out by hand (or by another tool) that holds what the document
/// would write is left as it is by a save: no rewrite for its layout alone, so version control
/// sees no change and another session that has the project open sees nothing changed on disk.
#[test]
fn files_in_another_layout_with_the_same_tags_are_not_rewritten() {
    let dir = temp_dir("layout");
    let doc = library(&dir);
    let (project, side0) = saved(&dir, &doc);
    // One line each, as a hand or another JSON writer might leave them.
    let one_line = |p: &Path| {
        let text = std::fs::read_to_string(p).unwrap();
        let compact: String = text.lines().map(str::trim).collect();
        assert_ne!(compact, text);
        std::fs::write(p, &compact).unwrap();
        compact
    };
    let side_text = one_line(&side0);
    let project_text = one_line(&project);
    // Two sessions open the project; the first tags clip 2 and saves.
    let (mut first, _) = Project::load(&project).unwrap();
    let (mut second, _) = Project::load(&project).unwrap();
    crate::project_merge::set(&mut first, 1, 2, &[Range::new(1, 3)]);
    first.save_to(&project).unwrap();
    assert_eq!(std::fs::read_to_string(&side0).unwrap(), side_text);
    assert_eq!(std::fs::read_to_string(&project).unwrap(), project_text);
    // The second tags clip 0, whose sidecar it read as it still is: nothing to merge.
    crate::project_merge::set(&mut second, 1, 0, &[Range::new(5, 9)]);
    second.save_to(&project).unwrap();
    assert!(
        second.merged_from_disk.iter().all(|f| *f != side0),
        "{:?}",
        second.merged_from_disk
    );
    let (back, _) = Project::load(&project).unwrap();
    assert_eq!(back.doc.tags[1].ranges[&0], vec![Range::new(5, 9)]);
    assert_eq!(back.doc.tags[1].ranges[&2], vec![Range::new(1, 3)]);
    // Its own edit rewrote clip 0's sidecar (in taglane's layout).
    assert_ne!(std::fs::read_to_string(&side0).unwrap(), side_text);
    std::fs::remove_dir_all(&dir).ok();
}

/// A sidecar in another layout that changes on disk while a project has it open, where this
/// session did not change its clip: the save keeps the version on disk (no conflict). The project
/// knows what such a file holds in the writer's layout too, so its own unchanged clip does not
/// look edited.
#[test]
fn a_file_in_another_layout_changed_on_disk_is_kept_when_its_clip_was_not_edited_here() {
    use taglane::core::library::save_sidecar_project_since;
    let dir = temp_dir("layout_changed");
    let doc = library(&dir);
    let (project, side0) = saved(&dir, &doc);
    let one_line = |text: &str| -> String { text.lines().map(str::trim).collect() };
    std::fs::write(&side0, one_line(&std::fs::read_to_string(&side0).unwrap())).unwrap();
    std::fs::write(
        &project,
        one_line(&std::fs::read_to_string(&project).unwrap()),
    )
    .unwrap();
    let mut load = load_sidecar_project(&project).unwrap();
    // Someone else tags clip 0 (its sidecar rewritten), and renames nothing in the project file.
    let (mut other, _) = Project::load(&project).unwrap();
    crate::project_merge::set(&mut other, 1, 0, &[Range::new(100, 120)]);
    other.save_to(&project).unwrap();
    let theirs = std::fs::read_to_string(&side0).unwrap();
    // This session tags clip 2 and saves as the command line does.
    Edit::SetRanges {
        tag: 1,
        clip: 2,
        ranges: vec![Range::new(1, 3)],
    }
    .apply(&mut load.doc)
    .unwrap();
    let saved =
        save_sidecar_project_since(&project, &load.doc, None, Some(&mut load.baseline)).unwrap();
    assert!(saved.kept.contains(&side0), "{saved:?}");
    assert_eq!(std::fs::read_to_string(&side0).unwrap(), theirs);
    let (back, _) = Project::load(&project).unwrap();
    assert_eq!(back.doc.tags[1].ranges[&0], vec![Range::new(100, 120)]);
    assert_eq!(back.doc.tags[1].ranges[&2], vec![Range::new(1, 3)]);
    std::fs::remove_dir_all(&dir).ok();
}

/// The tags of a sidecar in another order are the same tags: the file is not rewritten (and an
/// unknown key in it stays).
#[test]
fn a_sidecar_with_its_tags_in_another_order_is_not_rewritten() {
    let dir = temp_dir("tag_order");
    let mut doc = library(&dir);
    let project = dir.join("lib.taglane.json");
    Edit::SetRanges {
        tag: 1,
        clip: 0,
        ranges: vec![Range::new(3, 4)],
    }
    .apply(&mut doc)
    .unwrap();
    save_sidecar_project(&project, &doc, Some(&["takes".to_owned()])).unwrap();
    let take0 = dir.join(doc.clips[0].source.as_deref().unwrap());
    let side0 = sidecar_path(&take0, None);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&side0).unwrap()).unwrap();
    // Tags reversed (serde_json keeps the order it is given) and a key of another tool.
    let tags = v["tags"].as_object().unwrap().clone();
    assert!(tags.len() >= 2, "{tags:?}");
    let reversed: serde_json::Map<String, serde_json::Value> = tags.into_iter().rev().collect();
    v["tags"] = serde_json::Value::Object(reversed);
    v["reviewed_by"] = serde_json::json!("ana");
    let text = serde_json::to_string_pretty(&v).unwrap();
    std::fs::write(&side0, &text).unwrap();
    let (mut p, _) = Project::load(&project).unwrap();
    crate::project_merge::set(&mut p, 1, 2, &[Range::new(1, 3)]);
    p.save_to(&project).unwrap();
    assert_eq!(std::fs::read_to_string(&side0).unwrap(), text);
    std::fs::remove_dir_all(&dir).ok();
}

/// A sidecar save whose project file cannot be written (read-only) writes nothing, not the
/// sidecars alone.
#[test]
fn a_sidecar_save_writes_nothing_when_the_project_file_cannot_be_written() {
    let dir = temp_dir("readonly_project");
    let doc = library(&dir);
    let (project, _) = saved(&dir, &doc);
    let (mut p, _) = Project::load(&project).unwrap();
    // A new tag: the project file and clip 2's sidecar change.
    p.apply(
        Edit::InsertTag {
            index: p.doc.tags.len(),
            tag: Tag::new("Fresh"),
        },
        "tag",
    )
    .unwrap();
    let fresh = p.doc.tags.len() - 1;
    crate::project_merge::set(&mut p, fresh, 2, &[Range::new(1, 3)]);
    let take2 = dir.join(p.doc.clips[2].source.as_deref().unwrap());
    let side2 = sidecar_path(&take2, None);
    let before = std::fs::read(&side2).unwrap();
    let mut perms = std::fs::metadata(&project).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&project, perms).unwrap();
    let e = p.save_to(&project).unwrap_err();
    assert!(e.to_string().contains("read-only"), "{e}");
    assert_eq!(
        std::fs::read(&side2).unwrap(),
        before,
        "the sidecar was written"
    );
    let mut perms = std::fs::metadata(&project).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&project, perms).unwrap();
    std::fs::remove_dir_all(&dir).ok();
}

/// A save that wrote some sidecars and then failed on another (read-only) recorded none of them:
/// an edit of a written clip undone, then saved, came back as "changes made on disk". The files
/// written are recorded, so the next save writes the undone state and merges nothing.
#[test]
fn a_save_that_fails_part_way_records_the_sidecars_it_wrote() {
    let dir = temp_dir("partial_save");
    let doc = library(&dir);
    let (project, _) = saved(&dir, &doc);
    let (mut p, _) = Project::load(&project).unwrap();
    let original = p.doc.tags[0].ranges_on(0).to_vec();
    set(&mut p, 0, &[Range::new(5, 9)]);
    set(&mut p, 1, &[Range::new(5, 9)]);
    let take1 = dir.join(p.doc.clips[1].source.as_deref().unwrap());
    let side1 = sidecar_path(&take1, None);
    let writable = std::fs::metadata(&side1).unwrap().permissions();
    let mut read_only = writable.clone();
    read_only.set_readonly(true);
    std::fs::set_permissions(&side1, read_only).unwrap();
    let e = p.save_to(&project).unwrap_err();
    assert!(e.to_string().contains("read-only"), "{e}");
    std::fs::set_permissions(&side1, writable).unwrap();
    // Clip 0's edit undone (clip 1's kept), then saved.
    let mut steps = p.history.len();
    while steps > 0 && p.doc.tags[0].ranges_on(0) != original.as_slice() {
        p.history.undo(&mut p.doc).unwrap();
        steps -= 1;
    }
    assert_eq!(p.doc.tags[0].ranges_on(0), original.as_slice());
    p.save_to(&project).unwrap();
    assert!(
        p.merged_from_disk.is_empty(),
        "merged: {:?}",
        p.merged_from_disk
    );
    let (back, _) = Project::load(&project).unwrap();
    assert_eq!(back.doc.tags[0].ranges_on(0), original.as_slice());
    std::fs::remove_dir_all(&dir).ok();
}

/// A project file there that cannot be read at save time (here too large; on a share, a read
/// error) is not written over as a single file: the save refuses, naming it, and leaves it.
#[test]
fn a_save_over_a_project_file_that_cannot_be_read_refuses() {
    let dir = temp_dir("unreadable_project");
    let doc = library(&dir);
    let (project, _) = saved(&dir, &doc);
    let (mut p, _) = Project::load(&project).unwrap();
    set(&mut p, 0, &[Range::new(5, 9)]);
    let big = taglane::core::limits::MAX_TAGS_FILE_BYTES + 1;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&project)
        .unwrap()
        .set_len(big)
        .unwrap();
    let e = p.save_to(&project).unwrap_err();
    assert!(
        e.contains("cannot be read to tell its layout") && e.contains("nothing was saved"),
        "{e}"
    );
    assert_eq!(std::fs::metadata(&project).unwrap().len(), big);
    std::fs::remove_dir_all(&dir).ok();
}

/// A save that does not merge (an import into the project) keeps a sidecar another session moved
/// aside meanwhile gone, when this document did not change its clip: it came back with the save.
#[test]
fn a_save_without_merging_leaves_a_sidecar_removed_meanwhile_removed() {
    let dir = temp_dir("removed_meanwhile");
    let doc = library(&dir);
    let (project, _) = saved(&dir, &doc);
    let (mut p, _) = Project::load(&project).unwrap();
    let take1 = dir.join(p.doc.clips[1].source.as_deref().unwrap());
    let side1 = sidecar_path(&take1, None);
    std::fs::rename(&side1, side1.with_extension("json.removed")).unwrap();
    let save = taglane::core::library::save_sidecar_project_since(
        &project,
        &p.doc,
        None,
        Some(&mut p.sidecars),
    )
    .unwrap();
    assert!(!side1.exists(), "the removed sidecar came back");
    assert_eq!(save.kept, vec![side1.clone()]);
    std::fs::remove_dir_all(&dir).ok();
}
