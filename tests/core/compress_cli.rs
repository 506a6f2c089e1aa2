//! The compression subcommands on the built binary, with a small BVH written to a temp dir.

use crate::common::temp_dir;
use crate::common::{Scratch, bin, run, run_with_closed_stdout, text};

const BVH: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
  JOINT Spine
  {
    OFFSET 0 5 0
    CHANNELS 3 Zrotation Yrotation Xrotation
    JOINT Head
    {
      OFFSET 0 6 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {
        OFFSET 0 2 0
      }
    }
  }
  JOINT Leg
  {
    OFFSET 1 -8 0
    CHANNELS 3 Zrotation Yrotation Xrotation
    End Site
    {
      OFFSET 0 -8 0
    }
  }
}
MOTION
Frames: 6
Frame Time: .0083333
0 17 0 0 0 0 0 0 0 0 0 0 0 0 0
0.1 17.1 0 1 2 3 4 5 6 -7 8 9 10 0 0
0.2 17.2 0.1 2 4 6 8 10 12 -14 16 18 20 0 0
0.3 17.3 0.2 3 6 9 12 15 18 -21 24 27 30 0 0
0.4 17.2 0.3 4 8 12 16 20 24 -28 32 36 40 0 0
0.5 17.1 0.4 5 10 15 20 25 30 -35 40 45 50 0 0
";

fn global_positions(path: &std::path::Path, unit_cm: f32) -> Vec<glam::Vec3> {
    use taglane::core::anim::{ImportOptions, Transform, load_animation, local_to_model};
    let opts = ImportOptions {
        unit_cm: Some(unit_cm),
        ..Default::default()
    };
    let clip = load_animation(path, &opts).unwrap().clips.remove(0);
    let n = clip.joint_count();
    let mut local = vec![Transform::IDENTITY; n];
    let mut model = vec![Transform::IDENTITY; n];
    let mut out = Vec::new();
    for f in 0..clip.frame_count {
        assert!(clip.copy_pose(f, &mut local));
        local_to_model(&clip.skeleton, &local, &mut model).unwrap();
        out.extend(model.iter().map(|m| m.translation * unit_cm));
    }
    out
}

/// [`BVH`] written to `dir/in.bvh` and compressed to `dir/out.tlc` in CMU units with `extra`
/// flags and a JSON report: the two paths and the report.
fn compressed_bvh(
    dir: &std::path::Path,
    extra: &[&str],
) -> (std::path::PathBuf, std::path::PathBuf, serde_json::Value) {
    let bvh = dir.join("in.bvh");
    std::fs::write(&bvh, BVH).unwrap();
    let tlc = dir.join("out.tlc");
    let out = bin()
        .args(["compress"])
        .arg(&bvh)
        .arg("-o")
        .arg(&tlc)
        .args(extra)
        .args(["--units", "cmu", "--report", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    (bvh, tlc, serde_json::from_slice(&out.stdout).unwrap())
}

/// `taglane compress IN -o OUT EXTRA...`, its exit status.
fn compress(
    input: &std::path::Path,
    out: &std::path::Path,
    extra: &[&str],
) -> std::process::ExitStatus {
    bin()
        .arg("compress")
        .arg(input)
        .arg("-o")
        .arg(out)
        .args(extra)
        .status()
        .unwrap()
}

#[test]
fn compress_report_decompress_round_trip() {
    let dir = temp_dir("round");
    let (bvh, tlc, v) = compressed_bvh(&dir, &["--error-cm", "0.01"]);
    for key in [
        "raw_bytes",
        "compressed_bytes",
        "ratio",
        "max_error_cm",
        "mean_error_cm",
        "compress_ms",
    ] {
        assert!(v[key].is_number(), "{key} missing in {v}");
    }
    assert_eq!(v["raw_bytes"], 4 * 6 * 40);
    assert_eq!(
        v["compressed_bytes"].as_u64().unwrap(),
        std::fs::metadata(&tlc).unwrap().len()
    );
    assert!(v["max_error_cm"].as_f64().unwrap() <= 0.01);
    assert!(
        v["worst"]["joint"].is_string()
            && v["worst"]["frame"].is_number()
            && v["worst"]["error_cm"].is_number()
    );

    // Decompress: same joints, order, frame count; positions within the budget (+ text rounding).
    let back = dir.join("back.bvh");
    let st = bin()
        .args(["decompress"])
        .arg(&tlc)
        .arg("-o")
        .arg(&back)
        .status()
        .unwrap();
    assert!(st.success());
    // Written in centimetres (BVH records no unit); `--source-units` keeps the source's.
    let a = global_positions(&bvh, 5.644);
    let b = global_positions(&back, 1.0);
    assert_eq!(a.len(), b.len());
    for (p, q) in a.iter().zip(&b) {
        assert!((*p - *q).length() <= 0.0101, "{p} vs {q}");
    }
    let same_units = dir.join("same_units.bvh");
    let st = bin()
        .args(["decompress"])
        .arg(&tlc)
        .arg("-o")
        .arg(&same_units)
        .arg("--source-units")
        .status()
        .unwrap();
    assert!(st.success());
    let c = global_positions(&same_units, 5.644);
    for (p, q) in a.iter().zip(&c) {
        assert!((*p - *q).length() <= 0.0101, "{p} vs {q}");
    }
    let text = std::fs::read_to_string(&back).unwrap();
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("JOINT "))
        .collect();
    assert_eq!(names, ["Spine", "Head", "Leg"]);
    assert!(text.contains("Frames: 6"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn compare_prints_each_candidate_and_export_acl_writes_sjson() {
    let dir = temp_dir("compare");
    let bvh = dir.join("in.bvh");
    std::fs::write(&bvh, BVH).unwrap();
    let settings = dir.join("s.json");
    std::fs::write(
        &settings,
        r#"{"bits": {"fixed": {"rotation_bits": 8, "translation_bits": 8, "scale_bits": 8}}}"#,
    )
    .unwrap();
    let out = bin()
        .args(["compare"])
        .arg(&bvh)
        .arg("--settings")
        .arg(&settings)
        .args([
            "--error-cm",
            "0.01",
            "--error-cm",
            "0.1",
            "--preset",
            "smallest3-32",
            "--stream-error-cm",
            "0.05",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.len(), 5);
    for r in &rows {
        for key in [
            "compressed_bytes",
            "ratio",
            "max_error_cm",
            "mean_error_cm",
            "p99_error_cm",
            "decode_us",
        ] {
            assert!(r[key].is_number(), "{key} in {r}");
        }
    }
    let table = bin()
        .args(["compare"])
        .arg(&bvh)
        .args(["--error-cm", "0.01", "--stream-error-cm", "0.05"])
        .output()
        .unwrap();
    assert!(table.status.success());
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("auto 0.01 cm"));
    // Every row as wide as the header, each column ending where the header's does.
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    for l in &lines[1..] {
        assert_eq!(l.len(), lines[0].len(), "{table}");
        let end = lines[0].find("bytes").unwrap() + "bytes".len();
        assert!(l[..end].ends_with(|c: char| c.is_ascii_digit()), "{table}");
    }

    let acl = dir.join("out.acl.sjson");
    let st = bin()
        .args(["export-acl"])
        .arg(&bvh)
        .arg("-o")
        .arg(&acl)
        .args(["--units", "2.0"])
        .status()
        .unwrap();
    assert!(st.success());
    let text = std::fs::read_to_string(&acl).unwrap();
    assert!(text.contains("version = 5") && text.contains("num_samples = 6"));
    // The root height 17 units at 2 cm per unit is written in cm.
    assert!(
        text.contains("[ 0.0, 34.0, 0.0 ]"),
        "{}",
        &text[..text.len().min(2000)]
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn errors_have_the_documented_exit_codes() {
    let dir = temp_dir("errors");
    let bvh = dir.join("in.bvh");
    std::fs::write(&bvh, BVH).unwrap();
    let tlc = dir.join("x.tlc");
    // Bad units and bad preset: usage (2).
    let st = compress(&bvh, &tlc, &["--units", "furlong"]);
    assert_eq!(st.code(), Some(2));
    let st = compress(&bvh, &tlc, &["--preset", "nope"]);
    assert_eq!(st.code(), Some(2));
    let st = compress(&bvh, &tlc, &["--bits", "2"]);
    assert_eq!(st.code(), Some(2));
    // Errors of settings given as flags name the flag.
    for (flag, value) in [
        ("--bits", "2"),
        ("--error-cm", "NaN"),
        ("--frame-step", "0"),
    ] {
        let out = run(&[
            "compress",
            bvh.to_str().unwrap(),
            "-o",
            tlc.to_str().unwrap(),
            flag,
            value,
        ]);
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = text(&out.stderr);
        assert!(err.starts_with(&format!("taglane: {flag} ")), "{err}");
    }
    // Broken input: 1.
    let broken = dir.join("broken.bvh");
    std::fs::write(&broken, "HIERARCHY\nROOT a\n{\n OFFSET 0 0\n").unwrap();
    let st = compress(&broken, &tlc, &[]);
    assert_eq!(st.code(), Some(1));
    // A corrupted .tlc: 1, with the reason on stderr, and no output written.
    let bad = dir.join("bad.tlc");
    std::fs::write(&bad, b"TAGLNTLC\x01\x00garbage").unwrap();
    let out = bin()
        .args(["decompress"])
        .arg(&bad)
        .arg("-o")
        .arg(dir.join("o.bvh"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.tlc"));
    assert!(!dir.join("o.bvh").exists());
    // Compare without candidates: usage.
    let st = bin().args(["compare"]).arg(&bvh).status().unwrap();
    assert_eq!(st.code(), Some(2));
    // An output that is the input, or a file of a kind the command does not write: usage, and
    // the file as it was.
    let good = compress(&bvh, &tlc, &["--units", "cmu"]);
    assert!(good.success());
    let link = dir.join("link.bvh");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&bvh, &link).unwrap();
    #[cfg(not(unix))]
    std::fs::copy(&bvh, &link).unwrap();
    let take = dir.join("other.bvh");
    std::fs::write(&take, BVH).unwrap();
    for (cmd, input, output) in [
        ("compress", &bvh, &bvh),
        ("compress", &bvh, &take),
        ("export-acl", &bvh, &bvh),
        ("export-acl", &bvh, &tlc),
        ("decompress", &tlc, &tlc),
        ("decompress", &tlc, &dir.join("x.glb")),
    ] {
        let before = std::fs::read(output).ok();
        let out = bin()
            .arg(cmd)
            .arg(input)
            .arg("-o")
            .arg(output)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd} -o {}", output.display());
        assert!(
            text(&out.stderr).contains("expected"),
            "{}",
            text(&out.stderr)
        );
        assert_eq!(
            std::fs::read(output).ok(),
            before,
            "{cmd} wrote {}",
            output.display()
        );
    }
    #[cfg(unix)]
    {
        // The input through a link to it: the same file.
        let out = run(&[
            "export-acl",
            &link.to_string_lossy(),
            "-o",
            &bvh.to_string_lossy(),
        ]);
        assert!(
            text(&out.stderr).contains("the output is the input"),
            "{}",
            text(&out.stderr)
        );
    }
    // A clip with no frame: export-acl refuses it as compress does.
    let empty = dir.join("empty.bvh");
    std::fs::write(
        &empty,
        BVH.split("MOTION").next().unwrap().to_owned()
            + "MOTION
Frames: 0
Frame Time: 0.1
",
    )
    .unwrap();
    let out = run(&[
        "export-acl",
        &empty.to_string_lossy(),
        "-o",
        &dir.join("e.sjson").to_string_lossy(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(!dir.join("e.sjson").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// `compress IN... -o OUTDIR`: every good input is compressed (in parallel, `--jobs 2`), bad ones
/// are listed with their reason, and the exit code is 1 when any failed.
#[test]
fn batch_compress_into_a_folder_lists_bad_files() {
    let dir = temp_dir("batch");
    let (a, b, broken) = (dir.join("a.bvh"), dir.join("b.bvh"), dir.join("broken.bvh"));
    std::fs::write(&a, BVH).unwrap();
    std::fs::write(&b, BVH.replace("0.5 17.1", "0.7 17.3")).unwrap();
    std::fs::write(&broken, "HIERARCHY\nROOT a\n{\n OFFSET 0 0\n").unwrap();
    let out_dir = dir.join("out");
    let out = bin()
        .args(["compress"])
        .args([&a, &b, &broken])
        .arg("-o")
        .arg(&out_dir)
        .args(["--jobs", "2", "--units", "cmu", "--report", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("broken.bvh") && stderr.contains("OFFSET"),
        "{stderr}"
    );
    assert!(
        stderr.contains("compressed 2 clip(s) of 3 file(s)"),
        "{stderr}"
    );
    let reports: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    // Every input has its entry: the two written, and the failure with its reason.
    assert_eq!(reports.len(), 3, "{reports:?}");
    let failed: Vec<&serde_json::Value> =
        reports.iter().filter(|r| r["error"].is_string()).collect();
    assert_eq!(failed.len(), 1, "{reports:?}");
    assert_eq!(failed[0]["input"], broken.display().to_string());
    assert!(failed[0]["error"].as_str().unwrap().contains("OFFSET"));
    let written: Vec<&serde_json::Value> =
        reports.iter().filter(|r| r["error"].is_null()).collect();
    for (r, name) in written.into_iter().zip(["a", "b"]) {
        assert_eq!(r["unit_cm"], 5.644f32 as f64);
        assert_eq!(r["budget_cm"], 0.01f32 as f64);
        assert_eq!(r["within_budget"], true);
        let tlc = out_dir.join(format!("{name}.tlc"));
        assert_eq!(r["output"], tlc.display().to_string());
        let bytes = std::fs::read(&tlc).unwrap();
        assert_eq!(r["compressed_bytes"].as_u64().unwrap(), bytes.len() as u64);
        assert!(taglane::core::compress::CompressedClip::from_bytes(bytes).is_ok());
        assert!(r["max_error_cm"].as_f64().unwrap() <= 0.01);
        assert!(
            r["between"]["max_error_cm"].as_f64().unwrap() <= 0.01,
            "{r}"
        );
        assert!(r["resident_bytes"].is_number());
    }
    assert!(!out_dir.join("broken.tlc").exists());
    // Two inputs with the same name: the second is refused, not written over the first.
    let other = dir.join("sub");
    std::fs::create_dir_all(&other).unwrap();
    // `a` and another take of the name `name`, into `out_dir`: refused, exit 1.
    let with_a = |name: &str| {
        std::fs::write(other.join(name), BVH).unwrap();
        let out = bin()
            .args(["compress"])
            .arg(&a)
            .arg(other.join(name))
            .arg("-o")
            .arg(&out_dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(with_a("a.bvh").contains("already the output of"));
    // Names that differ only in case are one file where case is ignored (macOS, Windows): the
    // second is refused on every system.
    assert!(with_a("A.bvh").contains("A.tlc is already the output of"));
    assert!(!out_dir.join("A.tlc").exists());
    // All written: 0.
    let st = bin()
        .args(["compress"])
        .args([&a, &b])
        .arg("-o")
        .arg(&out_dir)
        .status()
        .unwrap();
    assert!(st.success());
    // Nothing compresses: exit 1.
    let st = bin()
        .args(["compress"])
        .args([&broken, &broken])
        .arg("-o")
        .arg(&out_dir)
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(1));
    // --jobs 0 is a usage error.
    let st = bin()
        .args(["compress"])
        .args([&a, &b])
        .arg("-o")
        .arg(&out_dir)
        .args(["--jobs", "0"])
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

/// `decompress --fps F` writes frame k at time k / F through the runtime decoder: at twice the
/// clip's rate, even frames are the original frames and odd ones the decoder's in-between poses.
#[test]
fn decompress_fps_resamples_through_the_decoder() {
    use taglane::core::anim::{ImportOptions, Transform, load_animation, local_to_model};
    use taglane::core::compress::CompressedClip;
    let dir = temp_dir("fps");
    let bvh = dir.join("in.bvh");
    std::fs::write(&bvh, BVH).unwrap();
    let tlc = dir.join("in.tlc");
    let st = compress(&bvh, &tlc, &["--error-cm", "0.01", "--units", "cmu"]);
    assert!(st.success());
    let fps = 2.0 * (1.0 / 0.0083333f64);
    let back = dir.join("fps.bvh");
    let out = bin()
        .args(["decompress"])
        .arg(&tlc)
        .arg("-o")
        .arg(&back)
        .args(["--fps", &format!("{fps}")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // (written in centimetres)
    let opts = ImportOptions {
        unit_cm: Some(1.0),
        ..Default::default()
    };
    let resampled = load_animation(&back, &opts).unwrap().clips.remove(0);
    assert_eq!(
        resampled.frame_count, 11,
        "6 frames at 120 fps are 11 at 240"
    );
    assert!((f64::from(resampled.fps) - fps).abs() < 0.01 * fps);
    // Each written frame against the decoder sampled at k / F (model-space positions, cm).
    let clip = CompressedClip::from_bytes(std::fs::read(&tlc).unwrap()).unwrap();
    let skeleton = clip.skeleton();
    let n = clip.joint_count();
    let (mut local, mut model) = (vec![Transform::IDENTITY; n], vec![Transform::IDENTITY; n]);
    let (mut written, mut model_w) = (vec![Transform::IDENTITY; n], vec![Transform::IDENTITY; n]);
    for k in 0..resampled.frame_count {
        clip.sample_pose((k as f64 / fps) as f32, &mut local);
        local_to_model(&skeleton, &local, &mut model).unwrap();
        assert!(resampled.copy_pose(k, &mut written));
        local_to_model(&resampled.skeleton, &written, &mut model_w).unwrap();
        for j in 0..n {
            let d = (model[j].translation * 5.644 - model_w[j].translation).length();
            assert!(d < 2e-3, "frame {k} joint {j}: {d} cm");
        }
    }
    // Every frame up to the duration, though the rate in the file is a 32-bit float (the
    // frame time .0083333 is 120.0005 fps): the clip's own rate writes its 6 frames, half of it
    // frames 0, 2 and 4 (the last at 4/60 s, inside the 5/120.0005 s), a third of it 0 and 3
    // ... and none is a frame short.
    for (rate, frames) in [("120", 6), ("60", 3), ("40", 2), ("24.0001", 2)] {
        let out_path = dir.join(format!("rate{rate}.bvh"));
        let out = bin()
            .args(["decompress"])
            .arg(&tlc)
            .arg("-o")
            .arg(&out_path)
            .args(["--fps", rate])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let written = load_animation(&out_path, &opts).unwrap().clips.remove(0);
        assert_eq!(written.frame_count, frames, "--fps {rate}");
    }
    // A rate that is not a positive number, or one a BVH cannot hold, is a usage error.
    for rate in ["0", "-3", "0.0005", "200000", "NaN"] {
        let out_path = dir.join("bad_rate.bvh");
        let st = bin()
            .args(["decompress"])
            .arg(&tlc)
            .arg("-o")
            .arg(&out_path)
            .args(["--fps", rate])
            .status()
            .unwrap();
        assert_eq!(st.code(), Some(2), "--fps {rate}");
        assert!(!out_path.exists(), "--fps {rate}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `decompress` never replaces a file without `--overwrite` (a BVH there may be a take); with
/// it, the old file is kept as `OUT.bak`.
#[test]
fn decompress_refuses_an_existing_output_without_overwrite() {
    let dir = Scratch::new("decompress-exists");
    let bvh = dir.join("in.bvh");
    std::fs::write(&bvh, BVH).unwrap();
    let tlc = dir.join("in.tlc");
    assert!(compress(&bvh, &tlc, &["--units", "cmu"]).success());
    let take = dir.join("take.bvh");
    std::fs::write(&take, "a take of its own").unwrap();
    let args = [
        "decompress",
        tlc.to_str().unwrap(),
        "-o",
        take.to_str().unwrap(),
    ];
    let out = run(&args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("take.bvh") && err.contains("--overwrite"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&take).unwrap(), "a take of its own");
    let out = run(&[&args[..], &["--overwrite"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        std::fs::read_to_string(&take)
            .unwrap()
            .starts_with("HIERARCHY")
    );
    let bak = dir.join("take.bvh.bak");
    assert_eq!(std::fs::read_to_string(&bak).unwrap(), "a take of its own");
    // A second --overwrite keeps the first backup (the original) as .bak.2, and says so.
    let out = run(&[&args[..], &["--overwrite"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("take.bvh.bak.2"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("take.bvh.bak.2")).unwrap(),
        "a take of its own"
    );
    assert!(
        std::fs::read_to_string(&bak)
            .unwrap()
            .starts_with("HIERARCHY")
    );
    // A folder as the output is named as one.
    let args = [
        "decompress",
        tlc.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
    ];
    let out = run(&args);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("is a folder"),
        "{}",
        text(&out.stderr)
    );
}

/// `compress` and `export-acl` replace their own outputs (a `.tlc`, an SJSON they wrote), and
/// refuse any other file at the output: a project there once was overwritten with exit 0.
#[test]
fn compress_and_export_acl_replace_only_their_own_outputs() {
    let dir = Scratch::new("own-outputs");
    let bvh = dir.join("in.bvh");
    std::fs::write(&bvh, BVH).unwrap();
    let project = dir.join("victim.taglane.json");
    let kept = "{\"format\": \"taglane.tags\", \"version\": 1, \"clips\": [], \"tags\": []}";
    std::fs::write(&project, kept).unwrap();
    let out = compress(&bvh, &project, &["--units", "cmu"]);
    assert_eq!(out.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&project).unwrap(), kept);
    let args = [
        "export-acl",
        bvh.to_str().unwrap(),
        "-o",
        project.to_str().unwrap(),
    ];
    let o = run(&args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("victim.taglane.json") && err.contains("is not an ACL clip"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&project).unwrap(), kept);
    // Their own outputs are replaced.
    let tlc = dir.join("in.tlc");
    assert!(compress(&bvh, &tlc, &["--units", "cmu"]).success());
    assert!(compress(&bvh, &tlc, &["--units", "cmu", "--error-cm", "0.5"]).success());
    // Every unit word `import` takes (mm too).
    assert!(compress(&bvh, &tlc, &["--units", "mm"]).success());
    let sjson = dir.join("in.acl.sjson");
    let args = [
        "export-acl",
        bvh.to_str().unwrap(),
        "-o",
        sjson.to_str().unwrap(),
    ];
    assert!(run(&args).status.success());
    assert!(run(&args).status.success());
    // A folder given as the output of export-acl is named as one.
    let args = [
        "export-acl",
        bvh.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
    ];
    let o = run(&args);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("is a folder"),
        "{}",
        text(&o.stderr)
    );
}

/// A file of several clips (glTF animations): into a folder, every clip to `STEM.CLIP.tlc`;
/// `--clip` picks one (an unknown name lists the file's clips and writes nothing); into one file
/// without `--clip`, the first clip with a warning naming the others. `compare` and `export-acl`
/// take `--clip` too.
#[test]
fn several_clips_of_one_file() {
    use taglane::core::compress::CompressedClip;
    let dir = temp_dir("clips");
    let gltf = dir.join("two.gltf");
    std::fs::write(&gltf, crate::anim_gltf::embedded()).unwrap();
    let load = |p: &std::path::Path| CompressedClip::from_bytes(std::fs::read(p).unwrap()).unwrap();
    // `taglane CMD two.gltf -o OUT EXTRA...`.
    let run = |cmd: &str, out: &std::path::Path, extra: &[&str]| {
        bin()
            .arg(cmd)
            .arg(&gltf)
            .arg("-o")
            .arg(out)
            .args(extra)
            .output()
            .unwrap()
    };

    let out_dir = dir.join("out");
    let out = run(
        "compress",
        std::path::Path::new(&format!("{}/", out_dir.display())),
        &["--report", "json"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("compressed 2 clip(s) of 1 file(s)"),
        "{stderr}"
    );
    let reports: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let mut names: Vec<&str> = reports
        .iter()
        .map(|r| r["clip"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["cubic", "lin_step"]);
    for name in ["lin_step", "cubic"] {
        let tlc = out_dir.join(format!("two.{name}.tlc"));
        assert_eq!(load(&tlc).name(), name);
    }
    assert!(!out_dir.join("two.tlc").exists());

    let one = dir.join("one.tlc");
    assert!(run("compress", &one, &["--clip", "cubic"]).status.success());
    assert_eq!(load(&one).name(), "cubic");
    // Without --units a glTF is in its own unit, metres (BVH: centimetres).
    assert_eq!(load(&one).unit_cm(), 100.0);
    let inches = dir.join("inches.tlc");
    let out = run("compress", &inches, &["--clip", "cubic", "--units", "in"]);
    assert!(out.status.success());
    assert_eq!(load(&inches).unit_cm(), 2.54);

    let missing = dir.join("missing.tlc");
    let out = run("compress", &missing, &["--clip", "walk"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("two.gltf")
            && stderr.contains("no clip named \"walk\"")
            && stderr.contains("\"lin_step\", \"cubic\""),
        "{stderr}"
    );
    assert!(!missing.exists());

    let first = dir.join("first.tlc");
    let out = run("compress", &first, &[]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("holds 2 clips") && stderr.contains("--clip"),
        "{stderr}"
    );
    assert_eq!(load(&first).name(), "lin_step");

    let acl = dir.join("cubic.acl.sjson");
    assert!(
        run("export-acl", &acl, &["--clip", "cubic"])
            .status
            .success()
    );
    assert!(std::fs::read_to_string(&acl).unwrap().contains("\"cubic\""));
    let out = bin()
        .args(["compare"])
        .arg(&gltf)
        .args(["--clip", "cubic", "--error-cm", "0.01", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = bin()
        .args(["compare"])
        .arg(&gltf)
        .args(["--clip", "nope", "--error-cm", "0.01"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    std::fs::remove_dir_all(&dir).ok();
}

/// `decompress --fps` with a rate whose frame count no integer holds is refused with the limits,
/// not wrapped around into a clip without frames.
#[test]
fn decompress_fps_beyond_the_frame_limit_is_refused() {
    let dir = Scratch::new("fps-huge");
    let bvh = dir.join("in.bvh");
    std::fs::write(&bvh, BVH).unwrap();
    let tlc = dir.join("in.tlc");
    assert!(compress(&bvh, &tlc, &["--units", "cmu"]).success());
    let back = dir.join("back.bvh");
    for fps in ["1e30", "1e9"] {
        let out = run(&[
            "decompress",
            tlc.to_str().unwrap(),
            "-o",
            back.to_str().unwrap(),
            "--fps",
            fps,
        ]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--fps {fps}: {err}");
        assert!(
            err.contains("expected a rate of 0.001 to 100000 frames per second"),
            "--fps {fps}: {err}"
        );
        assert!(!back.exists(), "--fps {fps}: nothing is written");
    }
    // A rate a BVH holds, on a clip so long that its frames pass the limit: 10,000 frames at
    // 1 fps (2.8 h) at 100,000 fps.
    let long = dir.join("long.bvh");
    let mut text_long = BVH
        .replace("Frames: 6", "Frames: 10000")
        .replace(".0083333", "1");
    let last = text_long.trim_end().lines().last().unwrap().to_owned();
    for _ in 6..10_000 {
        text_long.push_str(&last);
        text_long.push('\n');
    }
    std::fs::write(&long, text_long).unwrap();
    let long_tlc = dir.join("long.tlc");
    assert!(compress(&long, &long_tlc, &["--units", "cmu"]).success());
    let out = run(&[
        "decompress",
        long_tlc.to_str().unwrap(),
        "-o",
        back.to_str().unwrap(),
        "--fps",
        "100000",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("long.tlc") && err.contains("expected at most 432000 frames"),
        "{err}"
    );
    assert!(!back.exists());
}

/// The reports of `compress` and `compare` into a pipe closed before they write: no panic.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let dir = Scratch::new("closed");
    let bvh = dir.join("in.bvh");
    std::fs::write(&bvh, BVH).unwrap();
    let (b, tlc) = (bvh.to_str().unwrap(), dir.join("in.tlc"));
    let t = tlc.to_str().unwrap();
    for args in [
        vec!["compress", b, "-o", t],
        vec!["compress", b, "-o", t, "--report", "json"],
        vec!["compare", b, "--preset", "raw"],
        vec!["compare", b, "--preset", "raw", "--json"],
    ] {
        let out = run_with_closed_stdout(&args);
        let err = text(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_ne!(out.status.code(), Some(101), "{args:?}: {err}");
    }
}

/// `--bits` takes what the settings accept, 0 included, and its help says what 0 means.
#[test]
fn bits_help_matches_the_accepted_widths() {
    let dir = Scratch::new("bits");
    let bvh = dir.join("in.bvh");
    std::fs::write(&bvh, BVH).unwrap();
    for bits in ["0", "3", "16", "32"] {
        let st = compress(&bvh, &dir.join("out.tlc"), &["--bits", bits]);
        assert!(st.success(), "--bits {bits}");
    }
    for bits in ["1", "2", "17", "31"] {
        let st = compress(&bvh, &dir.join("out.tlc"), &["--bits", bits]);
        assert_eq!(st.code(), Some(2), "--bits {bits}");
    }
    let help = text(&run(&["compress", "--help"]).stdout);
    let bits = help
        .split("--bits <BITS>")
        .nth(1)
        .and_then(|h| h.split("--rotation").next())
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        bits.contains("0 (each track constant over each segment")
            && bits.contains("3..=16")
            && bits.contains("32 (the raw float)"),
        "{help}"
    );
}

/// A settings file with a misspelt field is refused, naming the field, instead of compressing
/// with the default it meant to change.
#[test]
fn a_misspelt_setting_is_named() {
    let dir = temp_dir("settings-typo");
    let bvh = dir.join("in.bvh");
    std::fs::write(&bvh, BVH).unwrap();
    // Compresses with `json` as the settings file: the error printed (exit 1, nothing written).
    let refused = |json: &str| -> String {
        let settings = dir.join("s.json");
        std::fs::write(&settings, json).unwrap();
        let out = bin()
            .args(["compress"])
            .arg(&bvh)
            .arg("-o")
            .arg(dir.join("o.tlc"))
            .arg("--settings")
            .arg(&settings)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(!dir.join("o.tlc").exists());
        err
    };
    for (json, field) in [
        (r#"{"frame_stp": 4}"#, "frame_stp"),
        (r#"{"bits": {"auto": {"error_cn": 0.1}}}"#, "error_cn"),
    ] {
        let err = refused(json);
        assert!(err.contains(&format!("unknown field `{field}`")), "{err}");
        // The place once, at the start.
        assert_eq!(err.matches("column").count(), 1, "{err}");
    }
    // serde's words for an enum, and a file that is not an object, come with the forms expected.
    for (json, expected) in [
        (
            r#"{"bits": "auto"}"#,
            r#"`bits` is {"auto": {"error_cm": E}}"#,
        ),
        ("[1, 2]", "expected a JSON object of settings"),
    ] {
        let err = refused(json);
        assert!(
            err.contains("s.json: line 1, column ") && err.contains(expected),
            "{err}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Without `--units`, compress takes the unit `import` and `inspect` choose (this skeleton is
/// 29 units tall: the CMU unit makes it human), and says it; a budget the settings cannot meet
/// is a warning naming the file and what limits it, and the report says so; a reader's warning
/// names its file.
#[test]
fn compress_chooses_the_unit_as_import_does_and_says_what_it_cannot_meet() {
    let dir = Scratch::new("auto-units");
    let bvh = dir.join("in.bvh");
    std::fs::write(&bvh, BVH).unwrap();
    let tlc = dir.join("in.tlc");
    let (b, t) = (bvh.to_str().unwrap(), tlc.to_str().unwrap());
    let out = run(&["compress", b, "-o", t, "--report", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["unit_cm"], 5.644f32 as f64, "{v}");
    assert_eq!(v["within_budget"], true, "{v}");
    let out = run(&["compress", b, "-o", t, "--units", "cm"]);
    assert!(
        text(&out.stdout).contains("(units cm)"),
        "{}",
        text(&out.stdout)
    );
    let out = run(&["compress", b, "-o", t, "--units", "auto"]);
    assert!(
        text(&out.stdout).contains("(units cmu (5.644 cm))"),
        "{}",
        text(&out.stdout)
    );
    // smallest3-32 packs rotations in 32 bits whatever the budget.
    let out = run(&[
        "compress",
        b,
        "-o",
        t,
        "--rotation",
        "smallest3-32",
        "--error-cm",
        "0.0001",
        "--report",
        "json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("in.bvh: the budget of 0.0001 cm is not met") && err.contains("smallest3-32"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["within_budget"], false, "{v}");
    // A header that promises more frames than the file holds: the warning names the file.
    let short = dir.join("short.bvh");
    std::fs::write(&short, BVH.replace("Frames: 6", "Frames: 9")).unwrap();
    let out = run(&["compress", short.to_str().unwrap(), "-o", t]);
    let err = text(&out.stderr);
    assert!(
        err.contains("warning: ") && err.contains("short.bvh: line"),
        "{err}"
    );
}

/// `inspect` of a compressed clip: what it says of a take, then its format version, size, ratio
/// (as `compress` reported it), loaded bytes and layout; a version 2 file says it was converted;
/// a damaged file is refused naming its byte; import options are said not to apply; a folder
/// gives its takes and compressed clips in the order of their paths.
#[test]
fn inspect_describes_a_compressed_clip() {
    let dir = Scratch::new("inspect-tlc");
    let (_, tlc, report) = compressed_bvh(&dir, &[]);
    let path = tlc.to_str().unwrap();
    let o = run(&["inspect", path, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["file"], path);
    assert_eq!(v["joints"], 4);
    assert_eq!(v["frames"], 6);
    assert_eq!(
        v["joint_names"],
        serde_json::json!(["Hips", "Spine", "Head", "Leg"])
    );
    assert!((v["unit_cm"].as_f64().unwrap() - 5.644).abs() < 1e-4, "{v}");
    let t = &v["tlc"];
    assert_eq!(t["version"], 3);
    assert_eq!(t["file_version"], 3);
    assert_eq!(
        t["bytes"].as_u64(),
        Some(std::fs::metadata(&tlc).unwrap().len())
    );
    assert_eq!(t["raw_bytes"], report["raw_bytes"]);
    assert_eq!(t["ratio"], report["ratio"]);
    assert_eq!(
        t["resident_bytes"].as_u64().unwrap(),
        t["bytes"].as_u64().unwrap() + 136
    );
    assert_eq!(t["rotation_format"], "drop-w");
    assert_eq!(t["frame_step"], 1);
    assert_eq!(t["keys"], 6);
    assert_eq!(v["warnings"], serde_json::json!([]));
    let o = run(&["inspect", path]);
    let said = text(&o.stdout);
    assert!(
        said.contains("4 joints, 6 frames at")
            && said.contains("compressed clip, format version 3:")
            && said.contains("rotations drop-w"),
        "{said}"
    );
    // Import options: said not to apply, the description unchanged.
    let o = run(&["inspect", path, "--json", "--unit-cm", "2"]);
    let w: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(w["unit_cm"], v["unit_cm"]);
    assert!(
        w["warnings"][0].as_str().unwrap().contains("do not apply"),
        "{w}"
    );
    // A version 2 file: read as version 3, and said so.
    let v2 = dir.join("v2.tlc");
    std::fs::write(&v2, include_bytes!("../fixtures/tlc_v2_synthetic.tlc")).unwrap();
    let o = run(&["inspect", v2.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let w: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(w["tlc"]["file_version"], 2);
    assert_eq!(w["tlc"]["version"], 3);
    assert!(
        w["warnings"][0]
            .as_str()
            .unwrap()
            .contains("format version 2, written by an older taglane"),
        "{w}"
    );
    // Damaged: refused, naming the file and the byte; nothing on stdout without --json.
    let mut bytes = std::fs::read(&tlc).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    let bad = dir.join("bad.tlc");
    std::fs::write(&bad, &bytes).unwrap();
    let o = run(&["inspect", bad.to_str().unwrap()]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("bad.tlc") && err.contains("byte"), "{err}");
    assert!(o.stdout.is_empty());
    // A folder: its takes and compressed clips in the order of their paths, subfolders too,
    // hidden files and folders reached through a link left out; the damaged one is a line with
    // its error, and the exit status says one file could not be read.
    std::fs::create_dir(dir.join("sub")).unwrap();
    std::fs::copy(&tlc, dir.join("sub/again.TLC")).unwrap();
    std::fs::copy(&tlc, dir.join(".hidden.tlc")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.join("sub"), dir.join("zlink")).unwrap();
    let o = run(&["inspect", dir.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let lines: Vec<serde_json::Value> = text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let names: Vec<&str> = lines
        .iter()
        .map(|l| {
            let f = l["file"].as_str().unwrap();
            &f[f.rfind("inspect-tlc").unwrap()..]
        })
        .map(|f| f.split_once('/').unwrap().1)
        .collect();
    assert_eq!(
        names,
        ["bad.tlc", "in.bvh", "out.tlc", "sub/again.TLC", "v2.tlc"]
    );
    assert!(lines[0]["error"].as_str().unwrap().contains("checksum"));
    assert_eq!(lines[3]["tlc"]["bytes"], t["bytes"]);
    assert!(lines[1].get("tlc").is_none() && lines[1]["joints"] == 4);
    // Each packing named as `compress --rotation` names it.
    let other = Scratch::new("inspect-tlc-s48");
    let (_, s48, _) = compressed_bvh(&other, &["--rotation", "smallest3-48"]);
    let o = run(&["inspect", s48.to_str().unwrap(), "--json"]);
    let w: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(w["tlc"]["rotation_format"], "smallest3-48");
}

/// A long take at a CMU rate (frame time 0.0083333: 120.0005 fps in the file) resampled to 60
/// fps keeps its last frame: 1,001 frames are 501 (an absolute tolerance of a thousandth of an
/// output frame wrote 500, and the take's last pose was never written).
#[test]
fn decompress_fps_keeps_the_last_frame_of_a_long_take() {
    use taglane::core::anim::{ImportOptions, Transform, load_animation};
    use taglane::core::compress::CompressedClip;
    let dir = Scratch::new("fps-long");
    let hierarchy = &BVH[..BVH.find("MOTION").unwrap()];
    let mut take = format!("{hierarchy}MOTION\nFrames: 1001\nFrame Time: 0.0083333\n");
    for k in 0..1001 {
        let a = k as f32 * 0.09;
        take.push_str(&format!(
            "{} 0 0 {} 0 0 {} 0 0 0 0 0 {} 0 0\n",
            k as f32 * 0.01,
            a.sin() * 20.0,
            a.cos() * 15.0,
            a.sin() * 30.0
        ));
    }
    let bvh = dir.join("long.bvh");
    std::fs::write(&bvh, take).unwrap();
    let tlc = dir.join("long.tlc");
    assert!(compress(&bvh, &tlc, &["--units", "cm"]).success());
    let back = dir.join("back.bvh");
    let out = run(&[
        "decompress",
        tlc.to_str().unwrap(),
        "-o",
        back.to_str().unwrap(),
        "--fps",
        "60",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let opts = ImportOptions {
        unit_cm: Some(1.0),
        ..Default::default()
    };
    let resampled = load_animation(&back, &opts).unwrap().clips.remove(0);
    assert_eq!(resampled.frame_count, 501);
    // The last written pose is the take's last frame.
    let clip = CompressedClip::from_bytes(std::fs::read(&tlc).unwrap()).unwrap();
    let n = clip.joint_count();
    let mut last = vec![Transform::IDENTITY; n];
    clip.sample_pose_at_frame(1000.0, &mut last);
    let mut written = vec![Transform::IDENTITY; n];
    assert!(resampled.copy_pose(500, &mut written));
    let d = (last[0].translation - written[0].translation).length();
    assert!(d < 1e-3, "{d} cm");
}
