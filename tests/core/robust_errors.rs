//! The error-message catalogue: a bad example of each error a user can meet when opening or typing
//! something (BVH, glTF/GLB, tag JSON, query, compressed clip, CSV). Every message must name the
//! file, the place (line, JSON path, byte offset or query column) and what was expected.
//! Run with `--nocapture` to print the catalogue.

use crate::common::temp_dir;
use std::path::{Path, PathBuf};

use taglane::core::anim::{ImportOptions, load_animation};
use taglane::core::doc::exchange::load_csv_file;
use taglane::core::tags::{TagDocument, parse_query};

/// One catalogue entry: the message shown, and what it must contain.
struct Case {
    what: &'static str,
    message: String,
    file: Option<String>,
    place: String,
    expected: &'static str,
}

fn check(cases: &[Case]) {
    let mut failures = Vec::new();
    for c in cases {
        println!("[{}]\n  {}", c.what, c.message.replace('\n', "\n  "));
        if let Some(file) = &c.file
            && !c.message.contains(file.as_str())
        {
            failures.push(format!("{}: does not name the file {file}", c.what));
        }
        if !c.message.contains(&c.place) {
            failures.push(format!("{}: does not name the place `{}`", c.what, c.place));
        }
        if !c.message.contains(c.expected) {
            failures.push(format!("{}: does not say `{}`", c.what, c.expected));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn anim_error(path: &Path) -> String {
    load_animation(path, &ImportOptions::default())
        .unwrap_err()
        .to_string()
}

const BVH_HEAD: &str = "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 3 Xposition Yposition Zposition\n}\nMOTION\nFrames: 1\nFrame Time: 0.033\n";

#[test]
fn animation_errors_name_file_place_and_expectation() {
    let dir = temp_dir("errors-anim");
    let f = |name: &str| Some(dir.join(name).display().to_string());
    let mut cases = Vec::new();

    let p = write(&dir, "short_row.bvh", format!("{BVH_HEAD}1 2\n"));
    cases.push(Case {
        what: "BVH: a frame row with too few values",
        message: anim_error(&p),
        file: f("short_row.bvh"),
        place: "line 10".into(),
        expected: "expected 3 values",
    });
    // Bytes that would drive a terminal are shown escaped, never printed raw.
    let p = write(&dir, "escape.bvh", b"\x00\x01\x1b[31mgarbage\n");
    let message = anim_error(&p);
    assert!(
        !message.contains('\u{1b}') && !message.contains('\0'),
        "{message:?}"
    );
    cases.push(Case {
        what: "BVH: control characters where the header should be",
        message,
        file: f("escape.bvh"),
        place: "line 1".into(),
        expected: "found `\\0\\u{1}\\u{1b}[31mgarbage`",
    });
    let p = write(&dir, "nan.bvh", format!("{BVH_HEAD}1 nan 2\n"));
    cases.push(Case {
        what: "BVH: a value that is not a finite number",
        message: anim_error(&p),
        file: f("nan.bvh"),
        place: "line 10".into(),
        expected: "expected a finite number",
    });
    let p = write(
        &dir,
        "channel.bvh",
        BVH_HEAD.replace("Zposition", "Wposition"),
    );
    cases.push(Case {
        what: "BVH: an unknown channel name",
        message: anim_error(&p),
        file: f("channel.bvh"),
        place: "line 5".into(),
        expected: "expected a channel name",
    });
    let p = write(
        &dir,
        "keyword.bvh",
        "HIERARCHY\nROOT Hips\n{\n  OFSET 0 0 0\n}\n",
    );
    cases.push(Case {
        what: "BVH: a misspelt keyword",
        message: anim_error(&p),
        file: f("keyword.bvh"),
        place: "line 4".into(),
        expected: "expected OFFSET, CHANNELS, JOINT, End Site or `}`, found `OFSET`",
    });
    let p = write(&dir, "cut.bvh", "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0");
    cases.push(Case {
        what: "BVH: a file cut short",
        message: anim_error(&p),
        file: f("cut.bvh"),
        place: "line 4".into(),
        expected: "found the end of the file",
    });

    let p = write(
        &dir,
        "syntax.gltf",
        "{\"asset\": {\"version\": \"2.0\"},\n \"nodes\": [}",
    );
    cases.push(Case {
        what: "glTF: not JSON",
        message: anim_error(&p),
        file: f("syntax.gltf"),
        place: "JSON line 2, column".into(),
        expected: "expected a glTF JSON document",
    });
    let p = write(
        &dir,
        "child.gltf",
        r#"{"asset":{"version":"2.0"},"nodes":[{"children":[5]}]}"#,
    );
    cases.push(Case {
        what: "glTF: a node child that does not exist",
        message: anim_error(&p),
        file: f("child.gltf"),
        place: "nodes[0].children[0]".into(),
        expected: "expected",
    });
    let p = write(
        &dir,
        "buffer.gltf",
        r#"{"asset":{"version":"2.0"},"buffers":[{"byteLength":4,"uri":"data:application/octet-stream;base64,@@@@"}]}"#,
    );
    cases.push(Case {
        what: "glTF: a data URI that is not base64",
        message: anim_error(&p),
        file: f("buffer.gltf"),
        place: "buffers[0].uri".into(),
        expected: "expected valid base64 data",
    });
    let p = write(&dir, "magic.glb", b"gLTF\x02\0\0\0\x0c\0\0\0");
    cases.push(Case {
        what: "GLB: a wrong magic",
        message: anim_error(&p),
        file: f("magic.glb"),
        place: "byte 0".into(),
        expected: "expected the GLB magic",
    });
    let p = write(&dir, "length.glb", b"glTF\x02\0\0\0\xff\0\0\0");
    cases.push(Case {
        what: "GLB: a declared length past the end",
        message: anim_error(&p),
        file: f("length.glb"),
        place: "byte 8".into(),
        expected: "declares 255 bytes but the file has 12",
    });
    check(&cases);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tag_file_errors_name_file_place_and_expectation() {
    let dir = temp_dir("errors-tags");
    let f = |name: &str| Some(dir.join(name).display().to_string());
    let load = |p: &Path| TagDocument::load(p).unwrap_err().to_string();
    let mut cases = Vec::new();
    let head = r#"{"format": "taglane.tags", "version": 1,"#;

    let p = write(&dir, "syntax.json", format!("{head}\n \"clips\": [,]}}"));
    cases.push(Case {
        what: "tag JSON: not JSON",
        message: load(&p),
        file: f("syntax.json"),
        place: "line 2, column".into(),
        expected: "expected",
    });
    let p = write(
        &dir,
        "frames.json",
        format!(r#"{head} "clips": [{{"name": "a", "frames": -3, "fps": 30}}], "tags": []}}"#),
    );
    cases.push(Case {
        what: "tag JSON: a negative frame count",
        message: load(&p),
        file: f("frames.json"),
        place: "clips[0].frames".into(),
        expected: "expected",
    });
    let p = write(
        &dir,
        "range.json",
        format!(
            r#"{head} "clips": [{{"name": "a", "frames": 10, "fps": 30}}], "tags": [{{"name": "t", "ranges": {{"a": [[0, "x"]]}}}}]}}"#
        ),
    );
    cases.push(Case {
        what: "tag JSON: a range bound that is not a number",
        message: load(&p),
        file: f("range.json"),
        place: "tags[0].ranges.a[0]".into(),
        expected: "expected",
    });
    let p = write(&dir, "format.json", r#"{"format": "other", "version": 1}"#);
    cases.push(Case {
        what: "tag JSON: another format",
        message: load(&p),
        file: f("format.json"),
        place: "format".into(),
        expected: "taglane.tags",
    });
    let p = write(&dir, "latin1.json", b"{\"format\": \"taglane.tags\xe9\"}");
    cases.push(Case {
        what: "tag JSON: not UTF-8",
        message: load(&p),
        file: f("latin1.json"),
        place: "byte 24".into(),
        expected: "expected UTF-8 text",
    });

    let csv = |name: &str, text: &str| load_csv_file(&write(&dir, name, text)).unwrap_err();
    cases.push(Case {
        what: "CSV: a wrong header",
        message: csv("header.csv", "name,clip\n"),
        file: f("header.csv"),
        place: "line 1".into(),
        expected: "expected the header",
    });
    cases.push(Case {
        what: "CSV: a frame that is not a number",
        message: csv("frame.csv", "tag,clip,start,stop\nWalk,a,x,3\n"),
        file: f("frame.csv"),
        place: "line 2".into(),
        expected: "expected a whole frame number",
    });
    cases.push(Case {
        what: "CSV: start after stop",
        message: csv("order.csv", "tag,clip,start,stop\nWalk,a,1,2\nWalk,a,5,3\n"),
        file: f("order.csv"),
        place: "line 3".into(),
        expected: "expected start < stop",
    });
    check(&cases);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn query_errors_name_the_column_and_expectation() {
    let names = ["Walk", "Run", "loco:turn left"];
    let err = |q: &str| parse_query(q, &names).unwrap_err().render(q);
    check(&[
        Case {
            what: "query: a missing operand",
            message: err("Walk & "),
            file: None,
            place: "column 8".into(),
            expected: "expected",
        },
        Case {
            what: "query: an unknown tag, with a suggestion",
            message: err("Walk | Rnu"),
            file: None,
            place: "column 8".into(),
            expected: "`Run`",
        },
        Case {
            what: "query: an unclosed parenthesis",
            message: err("(Walk | Run"),
            file: None,
            place: "column".into(),
            expected: "expected `)`",
        },
        Case {
            what: "query: a filter without its argument",
            message: err("grow(Walk)"),
            file: None,
            place: "column".into(),
            expected: "expected",
        },
    ]);
}

#[test]
fn compressed_clip_errors_name_file_byte_and_expectation() {
    let dir = temp_dir("errors-tlc");
    let good = include_bytes!("../../fuzz/seeds/tlc/tiny0_raw.tlc").to_vec();
    let decompress = |name: &str, bytes: &[u8]| {
        let p = write(&dir, name, bytes);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_taglane"))
            .arg("decompress")
            .arg(&p)
            .arg("-o")
            .arg(dir.join("out.bvh"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{name}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let f = |name: &str| Some(dir.join(name).display().to_string());
    let mut wrong_magic = good.clone();
    wrong_magic[0] = b'X';
    let mut cut = good.clone();
    cut.truncate(good.len() - 10);
    let mut flipped = good.clone();
    flipped[60] ^= 0x40;
    // A field changed, and the checksum made to match, so that the field's own check is reached.
    let with = |at: usize, bytes: [u8; 4]| {
        let mut b = good.clone();
        b[at..at + 4].copy_from_slice(&bytes);
        let n = b.len();
        let crc = taglane::core::compress::bits::crc32(&b[..n - 4]);
        b[n - 4..].copy_from_slice(&crc.to_le_bytes());
        b
    };
    let zero_frames = with(16, [0; 4]);
    // Accepted before, and decompressed into a BVH that taglane refuses (a frame time of 1e30 s,
    // offsets of 1e31).
    let slow = with(20, 1e-30f32.to_le_bytes());
    let huge_unit = with(24, 1e30f32.to_le_bytes());
    check(&[
        Case {
            what: ".tlc: not a compressed clip",
            message: decompress("magic.tlc", &wrong_magic),
            file: f("magic.tlc"),
            place: "byte 0".into(),
            expected: "expected magic",
        },
        Case {
            what: ".tlc: a truncated file",
            message: decompress("cut.tlc", &cut),
            file: f("cut.tlc"),
            place: "byte 48".into(),
            expected: "expected",
        },
        Case {
            what: ".tlc: a corrupted byte",
            message: decompress("flipped.tlc", &flipped),
            file: f("flipped.tlc"),
            place: "last 4 bytes".into(),
            expected: "expected",
        },
        Case {
            what: ".tlc: an invalid field",
            message: decompress("frames.tlc", &zero_frames),
            file: f("frames.tlc"),
            place: "byte 16".into(),
            expected: "expected at least one frame",
        },
        Case {
            what: ".tlc: a frame rate no take has",
            message: decompress("fps.tlc", &slow),
            file: f("fps.tlc"),
            place: "byte 20".into(),
            expected: "expected 0.001 to 100000 frames per second",
        },
        Case {
            what: ".tlc: a unit no take has",
            message: decompress("unit.tlc", &huge_unit),
            file: f("unit.tlc"),
            place: "byte 24".into(),
            expected: "centimetres per unit must be from",
        },
    ]);
    assert!(!dir.join("out.bvh").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What a review of the command line found (2026-11-29), each refused with its file named and
/// nothing written: a tag document written through a link to a take, compression settings given
/// as an array (serde read it as the settings' fields in order), a save over a pipe (it waited
/// forever for a writer), a unit past a kilometre, and a take with no joints in an autotag batch
/// (it panicked, and the batch's other takes were lost).
#[cfg(unix)]
#[test]
fn links_pipes_array_settings_huge_units_and_jointless_takes_are_refused() {
    use crate::common::{run, text};
    let dir = crate::common::Scratch::new("review-refusals");
    let take = write(
        &dir,
        "take.bvh",
        taglane::core::project::DEMO_CLIP_FILES[0].1,
    );
    let take_text = std::fs::read(&take).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_owned();

    let link = dir.join("out.taglane.json");
    std::os::unix::fs::symlink("take.bvh", &link).unwrap();
    // Another take tagged into a link to this one.
    let walk = write(
        &dir,
        "walk.bvh",
        taglane::core::project::DEMO_CLIP_FILES[1].1,
    );
    let out = run(&["autotag", &s(&walk), "-o", &s(&link), "--overwrite"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("a link to"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read(&take).unwrap(), take_text);
    assert!(!dir.join("take.bvh.bak").exists());

    let settings = write(&dir, "s.json", "\n  [\"full\"]");
    let tlc = dir.join("x.tlc");
    let out = run(&[
        "compress",
        &s(&take),
        "-o",
        &s(&tlc),
        "--settings",
        &s(&settings),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let e = text(&out.stderr);
    assert!(
        e.contains("s.json: line 2, column 3: expected a JSON object") && e.contains("array"),
        "{e}"
    );
    assert!(!tlc.exists());

    let out = run(&["compress", &s(&take), "-o", &s(&tlc)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let fifo = dir.join("p.bvh");
    if std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|st| st.success())
    {
        let out = run(&["decompress", &s(&tlc), "-o", &s(&fifo), "--overwrite"]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains("not a regular file"));
    }

    let out = run(&["autotag", &s(&take), "--units", "1e38", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("centimetres per unit must be from 0.0001"),
        "{}",
        text(&out.stderr)
    );

    let empty = write(
        &dir,
        "empty.gltf",
        r#"{"asset":{"version":"2.0"},"animations":[{"channels":[],"samplers":[]}]}"#,
    );
    let batch = dir.join("batch.taglane.json");
    let out = run(&["autotag", &s(&take), &s(&empty), "-o", &s(&batch)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let e = text(&out.stderr);
    assert!(
        e.contains("skipped: ")
            && e.contains("empty.gltf")
            && e.contains("expected at least one joint"),
        "{e}"
    );
    assert!(!e.contains("panicked"), "{e}");
    let (doc, _) = TagDocument::load(&batch).unwrap();
    assert_eq!(doc.clips.len(), 1);

    // A take named as the project of an import: refused as one (it was read as broken JSON).
    let out = run(&["import", &s(&walk), "-o", &s(&take)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("nothing imported"));
    assert_eq!(std::fs::read(&take).unwrap(), take_text);
    // A path that names nothing says so (not "unknown animation file extension").
    let out = run(&["inspect", &s(&dir.join("no-such-folder/"))]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no such file"),
        "{}",
        text(&out.stderr)
    );
    // A shell past any rig made every error infinite, and the file was written all the same.
    let far = write(&dir, "far.json", r#"{"shell_cm": 3e38}"#);
    let out = run(&[
        "compress",
        &s(&take),
        "-o",
        &s(&dir.join("far.tlc")),
        "--settings",
        &s(&far),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("shell_cm must be above 0 and at most"));
    assert!(!dir.join("far.tlc").exists());
}
