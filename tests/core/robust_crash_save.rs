//! Crash-safe saving: a child process (this test binary, re-invoked with `TAGLANE_CRASH_CHILD`
//! set) saves a large project in a loop, alternating two versions, the way the app saves
//! (`write_atomic` with a `.bak` backup: one save in four through `TagDocument::save`, the others
//! write the same bytes serialised beforehand, so that most kills land while files are written). The parent kills it with
//! SIGKILL at many different moments and checks, after each kill, that the project file and its
//! backup are each one of the known versions, byte for byte, and load completely.

use crate::common::temp_dir;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use taglane::core::io::{backup_path, write_atomic};
use taglane::core::stress::{StressSpec, stress_document};
use taglane::core::tags::TagDocument;

const CHILD_ENV: &str = "TAGLANE_CRASH_CHILD";

/// Three versions of a large project (about 1.3 MB of JSON each): the one on disk before the child
/// starts (seed 0) and the two the child alternates between (seeds 1 and 2).
fn version(seed: u64) -> TagDocument {
    stress_document(&StressSpec {
        clips: 1_000,
        tags: 30,
        ranges: 50_000,
        seed,
    })
}

/// The child: saves versions 1 and 2 alternately until it is killed. Does nothing in a normal run.
#[test]
fn crash_save_child() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    let path = PathBuf::from(path);
    let docs = [version(1), version(2)];
    // The same bytes `save` writes, serialised once: most of the loop is then spent writing,
    // flushing and renaming, where a kill is most likely to tear a file.
    let texts = [
        docs[0].to_json_string().unwrap(),
        docs[1].to_json_string().unwrap(),
    ];
    println!("ready");
    let mut k = 0usize;
    loop {
        if k % 4 == 3 {
            docs[k % 2].save(&path, true).expect("save");
        } else {
            write_atomic(&path, texts[k % 2].as_bytes(), true).expect("save");
        }
        k += 1;
    }
}

/// Which known version `path` holds (panics when it is none of them).
fn which_version(path: &Path, known: &[(u64, String)], what: &str, kill: usize) -> u64 {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("kill {kill}: {what}: {e}"));
    let Some((seed, _)) = known.iter().find(|(_, text)| text.as_bytes() == bytes) else {
        panic!(
            "kill {kill}: {what} ({} bytes) is none of the known versions: a torn or partial save",
            bytes.len()
        );
    };
    *seed
}

#[test]
fn killing_a_save_leaves_the_old_or_the_new_project() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let dir = temp_dir("crash-save");
    let path = dir.join("project.taglane.json");
    let known: Vec<(u64, String)> = (0..3)
        .map(|seed| (seed, version(seed).to_json_string().unwrap()))
        .collect();
    let docs: Vec<TagDocument> = (0..3).map(version).collect();
    // How long one save takes here, to spread the kills over several saves.
    let t = Instant::now();
    docs[0].save(&path, true).unwrap();
    let save_time = t.elapsed().max(Duration::from_millis(2));
    assert_eq!(which_version(&path, &known, "the first save", 0), 0);

    let kills = 60;
    let mut changed = 0;
    let mut on_disk = 0u64;
    let mut mid_write = 0;
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    for kill in 0..kills {
        // Started once the child has built its documents and starts saving.
        let mut child = crate::common::child_test(
            "robust_crash_save::crash_save_child",
            CHILD_ENV,
            &path,
            "ready",
        );
        // A different moment each time: from 0 to 3 save durations into the save loop (xorshift).
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let frac = (rng % 10_000) as f64 / 10_000.0;
        std::thread::sleep(save_time.mul_f64(3.0 * frac));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();

        let current = which_version(&path, &known, "the project file", kill);
        // The backup is a complete known version too.
        which_version(&backup_path(&path), &known, "the backup", kill);
        if current != on_disk {
            changed += 1;
        }
        on_disk = current;
        // A temporary file left behind means the kill landed in the middle of writing one.
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            if entry.file_name().to_string_lossy().ends_with(".tmp") {
                mid_write += 1;
                std::fs::remove_file(entry.path()).unwrap();
            }
        }
        // Complete and loadable: it loads back to the very document that was saved.
        let (loaded, _) = TagDocument::load(&path)
            .unwrap_or_else(|e| panic!("kill {kill}: the project does not load: {e}"));
        assert_eq!(loaded.clips, docs[current as usize].clips, "kill {kill}");
        assert_eq!(loaded.tags.len(), docs[current as usize].tags.len());
        for (a, b) in loaded.tags.iter().zip(&docs[current as usize].tags) {
            assert_eq!(a.ranges, b.ranges, "kill {kill}: tag {}", a.name);
        }
    }
    eprintln!(
        "{kills} kills over {:.1} ms saves: {changed} changed the file on disk, {mid_write} in the middle of writing a file",
        save_time.as_secs_f64() * 1e3
    );
    // The kills landed both after completed saves and in the middle of writing.
    assert!(changed > 0, "the child never completed a save");
    assert!(
        mid_write > 0,
        "no kill happened in the middle of writing a file"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
