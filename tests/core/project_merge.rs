//! A single-file project saved by two sessions (or updated by version control while it is open):
//! a save merges the file changed on disk into the document first (one undo step), and saves
//! nothing on a conflict. Sidecar projects: `library_sidecar::a_save_merges_files_changed_on_disk_meanwhile`.

use crate::common::{Scratch, temp_dir};
use taglane::core::doc::Edit;
use taglane::core::project::Project;
use taglane::core::tags::{ClipInfo, Range, SavedQuery, Tag, TagDocument};

fn clip(name: &str) -> ClipInfo {
    ClipInfo {
        name: name.into(),
        frames: 100,
        fps: 30.0,
        source: Some(format!("{name}.bvh")),
        unit_cm: None,
    }
}

pub(crate) fn set(p: &mut Project, tag: usize, clip: u32, ranges: &[Range]) {
    p.apply(
        Edit::SetRanges {
            tag,
            clip,
            ranges: ranges.to_vec(),
        },
        "edit",
    )
    .unwrap();
}

#[test]
fn a_single_file_save_merges_the_file_changed_on_disk_meanwhile() {
    let dir = temp_dir("single-merge");
    let file = dir.join("p.taglane.json");
    let mut walk = Tag::new("Walk");
    walk.ranges.insert(0, vec![Range::new(0, 50)]);
    let doc = TagDocument {
        clips: vec![clip("walk"), clip("run"), clip("idle")],
        tags: vec![walk, Tag::new("Run")],
        ..Default::default()
    };
    doc.save(&file, true).unwrap();
    let (mut a, _) = Project::load(&file).unwrap();
    let (mut b, _) = Project::load(&file).unwrap();
    // B: frames of clip 0 and a clip added, a query, a tag, and clip `idle` removed; saves.
    set(&mut b, 0, 0, &[Range::new(0, 50), Range::new(80, 90)]);
    b.apply(
        Edit::InsertClip {
            index: 3,
            clip: clip("jump"),
            ranges: vec![(1, vec![Range::new(3, 7)])],
        },
        "import",
    )
    .unwrap();
    b.apply(
        Edit::SetQueries(vec![SavedQuery {
            name: "walks".into(),
            expr: "Walk".into(),
        }]),
        "query",
    )
    .unwrap();
    let mut turn = Tag::new("Turn");
    turn.color = Some([1, 2, 3]);
    b.apply(
        Edit::InsertTag {
            index: 2,
            tag: turn,
        },
        "tag",
    )
    .unwrap();
    b.apply(Edit::RemoveClip { index: 2 }, "remove").unwrap();
    b.save_to(&file).unwrap();
    // A, meanwhile: other frames of clip 0, and clip 1.
    set(&mut a, 0, 0, &[Range::new(10, 50)]);
    set(&mut a, 1, 1, &[Range::new(5, 9)]);
    a.save_to(&file).unwrap();
    assert_eq!(a.merged_from_disk, vec![file.clone()]);
    assert_eq!(a.history.undo_label(), Some("changes made on disk"));
    assert!(!a.history.is_dirty());
    let names: Vec<&str> = a.doc.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["walk", "run", "jump"],
        "B's clip added, B's removal made"
    );
    assert_eq!(
        a.doc.tags[0].ranges[&0],
        vec![Range::new(10, 50), Range::new(80, 90)],
        "frame by frame: A's removal of 0-10 and B's 80-90"
    );
    assert_eq!(a.doc.tags[1].ranges[&1], vec![Range::new(5, 9)]);
    assert_eq!(a.doc.tags[1].ranges[&2], vec![Range::new(3, 7)]);
    let turn = a.doc.tag_index("Turn").unwrap();
    assert_eq!(a.doc.tags[turn].color, Some([1, 2, 3]));
    assert_eq!(a.doc.queries.len(), 1);
    let (on_disk, _) = TagDocument::load(&file).unwrap();
    assert_eq!(on_disk.unversioned(), a.doc.clone().unversioned());
    // Saved again with nothing changed on disk: no merge.
    set(&mut a, 0, 1, &[Range::new(1, 2)]);
    a.save_to(&file).unwrap();
    assert!(a.merged_from_disk.is_empty());

    // Conflicts save nothing: B removes a clip A changed; B and A relink one clip differently.
    let (mut b, _) = Project::load(&file).unwrap();
    b.apply(Edit::RemoveClip { index: 2 }, "remove").unwrap();
    b.save_to(&file).unwrap();
    set(&mut a, 1, 2, &[Range::new(0, 1)]);
    let before = std::fs::read_to_string(&file).unwrap();
    let steps = a.history.len();
    let e = a.save_to(&file).unwrap_err();
    assert!(
        e.contains("p.taglane.json")
            && e.contains("clip `jump` was removed on disk and changed here"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        before,
        "nothing written"
    );
    assert_eq!(a.history.len(), steps, "nothing merged");
    let (mut a, _) = Project::load(&file).unwrap();
    let (mut b, _) = Project::load(&file).unwrap();
    let relink = |p: &mut Project, to: &str| {
        p.apply(
            Edit::SetClipSource {
                clip: 0,
                source: Some(to.into()),
            },
            "relink",
        )
        .unwrap();
    };
    relink(&mut b, "moved/walk.bvh");
    b.save_to(&file).unwrap();
    relink(&mut a, "elsewhere/walk.bvh");
    let e = a.save_to(&file).unwrap_err();
    assert!(e.contains("relinked here and on disk"), "{e}");
    // A relink made on one side only is taken.
    let (mut a, _) = Project::load(&file).unwrap();
    let (mut b, _) = Project::load(&file).unwrap();
    relink(&mut b, "again/walk.bvh");
    b.save_to(&file).unwrap();
    set(&mut a, 0, 1, &[Range::new(40, 41)]);
    a.save_to(&file).unwrap();
    assert_eq!(a.doc.clips[0].source.as_deref(), Some("again/walk.bvh"));
    // A clip renamed here and tagged there: the same clip (by its take), renamed and tagged.
    let (mut a, _) = Project::load(&file).unwrap();
    let (mut b, _) = Project::load(&file).unwrap();
    set(&mut b, 1, 0, &[Range::new(60, 70)]);
    b.save_to(&file).unwrap();
    let rename = |p: &mut Project, name: &str| {
        p.apply(
            Edit::RenameClip {
                clip: 0,
                name: name.into(),
            },
            "rename",
        )
        .unwrap();
    };
    rename(&mut a, "walk forward");
    a.save_to(&file).unwrap();
    assert_eq!(a.doc.clips[0].name, "walk forward");
    assert_eq!(a.doc.tags[1].ranges[&0], vec![Range::new(60, 70)]);
    // Renamed there and tagged here: the rename is taken; renamed on both sides differently: a
    // conflict, named.
    let (mut b, _) = Project::load(&file).unwrap();
    rename(&mut b, "walk ahead");
    b.save_to(&file).unwrap();
    set(&mut a, 1, 0, &[Range::new(60, 72)]);
    a.save_to(&file).unwrap();
    assert_eq!(a.doc.clips[0].name, "walk ahead");
    assert_eq!(a.doc.tags[1].ranges[&0], vec![Range::new(60, 72)]);
    let (mut b, _) = Project::load(&file).unwrap();
    rename(&mut b, "walk");
    b.save_to(&file).unwrap();
    rename(&mut a, "walk on");
    let e = a.save_to(&file).unwrap_err();
    assert!(
        e.contains("clip `walk on` was renamed here and to `walk` on disk"),
        "{e}"
    );
    // A clip removed here (the clip ids after it move down) and a tag removed there that this
    // session never touched: the tag goes, no conflict.
    let (mut b, _) = Project::load(&file).unwrap();
    let mut jog = Tag::new("Jog");
    jog.ranges.insert(1, vec![Range::new(1, 4)]);
    let at = b.doc.tags.len();
    b.apply(
        Edit::InsertTag {
            index: at,
            tag: jog,
        },
        "jog",
    )
    .unwrap();
    b.save_to(&file).unwrap();
    let (mut a, _) = Project::load(&file).unwrap();
    assert_eq!(a.doc.clips[1].name, "run");
    b.apply(Edit::RemoveTag { index: at }, "remove tag")
        .unwrap();
    b.save_to(&file).unwrap();
    a.apply(Edit::RemoveClip { index: 0 }, "remove clip")
        .unwrap();
    a.save_to(&file).unwrap();
    assert!(a.doc.tag_index("Jog").is_none());
    let names: Vec<&str> = a.doc.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["run"]);
    let (on_disk, _) = TagDocument::load(&file).unwrap();
    assert_eq!(on_disk.unversioned(), a.doc.clone().unversioned());
    // A tag removed on both sides (and something else changed there): no conflict.
    let (mut a, _) = Project::load(&file).unwrap();
    let (mut b, _) = Project::load(&file).unwrap();
    let walk = a.doc.tag_index("Walk").unwrap();
    assert!(!a.doc.tags[walk].ranges.is_empty());
    a.apply(Edit::RemoveTag { index: walk }, "remove").unwrap();
    b.apply(Edit::RemoveTag { index: walk }, "remove").unwrap();
    b.apply(Edit::SetQueries(Vec::new()), "queries").unwrap();
    b.save_to(&file).unwrap();
    a.save_to(&file).unwrap();
    assert!(a.doc.tag_index("Walk").is_none());
    assert!(a.doc.queries.is_empty(), "B's change taken");
    // A file on disk that no longer reads: refused, named, nothing written.
    std::fs::write(&file, "{ not json").unwrap();
    set(&mut a, 0, 0, &[Range::new(50, 51)]);
    let e = a.save_to(&file).unwrap_err();
    assert!(e.contains("cannot be read"), "{e}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{ not json");
    // One that cannot be read at all (here: a folder in its place) is not written over either.
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    let e = a.save_to(&file).unwrap_err();
    assert!(e.contains("cannot be read"), "{e}");
    assert!(file.is_dir());
    std::fs::remove_dir_all(&dir).ok();
}

/// `taglane import --sidecar` turning a single file into a sidecar project merges what changed
/// in the file during the scan first (`Project::merge_file_changes`), and then knows the file
/// as merged: the sidecar save writes over it, and only it.
#[test]
fn a_single_file_turned_into_a_sidecar_project_keeps_what_changed_on_disk_meanwhile() {
    use taglane::core::library::{load_sidecar_project, save_sidecar_project_since};
    let dir = temp_dir("single-to-sidecar");
    std::fs::create_dir_all(dir.join("takes")).unwrap();
    for name in ["walk", "run"] {
        std::fs::write(dir.join(format!("takes/{name}.bvh")), b"").unwrap();
    }
    let file = dir.join("p.taglane.json");
    let take = |name: &str| ClipInfo {
        source: Some(format!("takes/{name}.bvh")),
        ..clip(name)
    };
    let doc = TagDocument {
        clips: vec![take("walk"), take("run")],
        tags: vec![Tag::new("Walk")],
        ..Default::default()
    };
    doc.save(&file, true).unwrap();
    let (mut import, _) = Project::load(&file).unwrap();
    // Another session saves frames of `walk` while the import scans.
    let (mut other, _) = Project::load(&file).unwrap();
    set(&mut other, 0, 0, &[Range::new(5, 9)]);
    other.save_to(&file).unwrap();
    // The import's own change.
    set(&mut import, 0, 1, &[Range::new(1, 2)]);
    assert_eq!(import.merge_file_changes(), Ok(true));
    assert_eq!(import.merged_from_disk, vec![file.clone()]);
    assert_eq!(import.history.undo_label(), Some("changes made on disk"));
    // Nothing more to merge, and the sidecar save may write over the file it merged.
    assert_eq!(import.merge_file_changes(), Ok(false));
    let mut baseline = import.sidecars.clone();
    baseline.set_hash(&file, import.file_seen.expect("the file's hash"));
    let folders = ["takes".to_owned()];
    save_sidecar_project_since(&file, &import.doc, Some(&folders), Some(&mut baseline)).unwrap();
    let loaded = load_sidecar_project(&file).unwrap();
    let walk = &loaded.doc.tags[0];
    let on = |name: &str| {
        let c = loaded
            .doc
            .clips
            .iter()
            .position(|c| c.name == name)
            .unwrap();
        walk.ranges.get(&(c as u32)).unwrap().to_vec()
    };
    assert_eq!(on("walk"), [Range::new(5, 9)], "the other session's frames");
    assert_eq!(on("run"), [Range::new(1, 2)], "the import's own");

    // A file changed again after the merge is not written over.
    let q = dir.join("q.taglane.json");
    // Its takes elsewhere (those of `takes/` have p's sidecars now).
    std::fs::create_dir_all(dir.join("takes2")).unwrap();
    std::fs::write(dir.join("takes2/walk.bvh"), b"").unwrap();
    let mut doc = doc.clone();
    doc.clips.truncate(1);
    doc.clips[0].source = Some("takes2/walk.bvh".into());
    doc.save(&q, false).unwrap();
    let (mut again, _) = Project::load(&q).unwrap();
    assert_eq!(again.merge_file_changes(), Ok(false));
    let mut baseline = again.sidecars.clone();
    baseline.set_hash(&q, again.file_seen.unwrap());
    let mut changed = doc.clone();
    changed.tags.push(Tag::new("Idle"));
    changed.save(&q, false).unwrap();
    let before = std::fs::read(&q).unwrap();
    set(&mut again, 0, 0, &[Range::new(20, 30)]);
    let folders = ["takes2".to_owned()];
    let err = save_sidecar_project_since(&q, &again.doc, Some(&folders), Some(&mut baseline))
        .expect_err("the project file changed after the merge");
    assert!(
        err.to_string().contains("q.taglane.json")
            && err.to_string().contains("the project file changed on disk"),
        "{err}"
    );
    assert_eq!(std::fs::read(&q).unwrap(), before, "nothing written over");
    std::fs::remove_dir_all(&dir).ok();
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]
    /// Two sessions on one single-file project, adding, removing, renaming and tagging clips and
    /// tags and saving in random order: every save either stops on a named conflict (the session
    /// then reopens the project) or leaves the file holding what the saving session shows.
    #[test]
    fn two_sessions_on_a_single_file_leave_it_as_the_saver_shows(
        ops in proptest::collection::vec(crate::library_sidecar::session_op(), 1..16)
    ) {
        use crate::library_sidecar::{SessionOp, edit_session, save_session};
        let dir = temp_dir("single-sessions");
        let take = |k: usize| ClipInfo {
            name: format!("t{k}"),
            ..clip(&format!("t{k}"))
        };
        let file = dir.join("p.taglane.json");
        TagDocument {
            clips: (0..3).map(take).collect(),
            tags: vec![Tag::new("T0")],
            ..Default::default()
        }
        .save(&file, false)
        .unwrap();
        let mut sessions = [Project::load(&file).unwrap().0, Project::load(&file).unwrap().0];
        for op in ops {
            match op {
                SessionOp::Save { a } => {
                    let saved = save_session(&mut sessions[usize::from(a)], &file, a);
                    proptest::prop_assert!(saved.is_ok(), "{:?}", saved);
                }
                edit => edit_session(&mut sessions, &edit, &take),
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}

#[test]
fn a_new_projects_first_save_merges_a_file_another_session_created_meanwhile() {
    let dir = Scratch::new("new-file-merge");
    let file = dir.join("p.taglane.json");
    // Two imports into a project that does not exist yet: each starts from nothing.
    let new = || Project {
        path: Some(file.clone()),
        file_was_absent: true,
        ..Project::default()
    };
    let (mut a, mut b) = (new(), new());
    let add = |p: &mut Project, name: &str| {
        p.apply(
            Edit::InsertClip {
                index: p.doc.clips.len(),
                clip: clip(name),
                ranges: Vec::new(),
            },
            "import folders",
        )
        .unwrap();
    };
    add(&mut a, "walk");
    add(&mut b, "run");
    add(&mut b, "jump");
    a.save_to(&file).unwrap();
    b.save_to(&file).unwrap();
    assert_eq!(b.merged_from_disk, vec![file.clone()]);
    let names = |p: &Project| {
        p.doc
            .clips
            .iter()
            .map(|c| c.name.clone())
            .collect::<Vec<_>>()
    };
    let (on_disk, _) = Project::load(&file).unwrap();
    assert_eq!(names(&on_disk), ["run", "jump", "walk"]);
    // Saved once, the project is no longer new: a later save compares with what it wrote.
    assert!(!b.file_was_absent);
    // A project not marked new (Save As to a file the user chose to replace) writes over it.
    let mut c = Project {
        path: Some(file.clone()),
        ..Project::default()
    };
    add(&mut c, "idle");
    c.save_to(&file).unwrap();
    assert!(c.merged_from_disk.is_empty());
    assert_eq!(names(&Project::load(&file).unwrap().0), ["idle"]);
}

#[test]
fn a_save_waits_for_another_taglane_save_of_a_project_in_its_folder() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = Scratch::new("save-lock");
    let file = dir.join("p.taglane.json");
    let mut p = Project {
        path: Some(file.clone()),
        ..Project::default()
    };
    p.apply(
        Edit::InsertClip {
            index: 0,
            clip: clip("walk"),
            ranges: Vec::new(),
        },
        "import folders",
    )
    .unwrap();
    // Another process's save in progress (a lock held elsewhere in this process conflicts
    // the same way: each `flock` is its own open file).
    let held = taglane::core::io::lock_for_save(&file).unwrap();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let saver = s.spawn(|| {
            let r = p.save_to(&file);
            done.store(true, Ordering::SeqCst);
            r
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(
            !done.load(Ordering::SeqCst),
            "saved while another save held the lock"
        );
        assert!(!file.exists());
        drop(held);
        saver.join().unwrap().unwrap();
    });
    assert!(file.exists());
}

/// A new project made from something (an import that adopted the sidecars beside its takes) whose
/// file another session created meanwhile with the same clips untagged: the common ancestor is the
/// empty document, so this session's tags are kept, not read as removed there.
#[test]
fn a_new_project_made_from_tags_keeps_them_when_the_file_appears_untagged() {
    let dir = Scratch::new("new-file-tags");
    let file = dir.join("p.taglane.json");
    let mut walk = Tag::new("Walk");
    walk.ranges.insert(0, vec![Range::new(10, 40)]);
    let ours = TagDocument {
        clips: vec![clip("walk")],
        tags: vec![walk],
        ..Default::default()
    };
    let mut p = Project {
        doc: ours.clone(),
        path: Some(file.clone()),
        file_was_absent: true,
        ..Project::default()
    };
    // The other session: the same take, no tags.
    TagDocument {
        clips: vec![clip("walk")],
        ..Default::default()
    }
    .save(&file, false)
    .unwrap();
    p.save_to(&file).unwrap();
    let (on_disk, _) = Project::load(&file).unwrap();
    assert_eq!(on_disk.doc.clips.len(), 1);
    let t = on_disk.doc.tag_index("Walk").expect("the tag is kept");
    assert_eq!(on_disk.doc.tags[t].ranges_on(0), &[Range::new(10, 40)][..]);
}
