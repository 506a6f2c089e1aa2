//! Limits on what an input file may ask for. Every reader refuses a file beyond them with an error
//! naming the file, the place and the limit, instead of allocating what the file claims.
//!
//! The values are generous for real data (see docs/ROBUSTNESS.md) and bound the memory one file
//! can make taglane use.

use std::io::{self, Read};
use std::path::Path;

/// Largest animation file (BVH, glTF, GLB, and each external glTF buffer) read, in bytes: 512 MiB.
pub const MAX_ANIM_FILE_BYTES: u64 = 512 << 20;
/// Largest tag document read, in bytes: 256 MiB (a document with 1,000,000 ranges is about 20 MB).
pub const MAX_TAGS_FILE_BYTES: u64 = 256 << 20;
/// Largest compressed clip (`.tlc`) read, in bytes: 256 MiB.
pub const MAX_TLC_FILE_BYTES: u64 = 256 << 20;
/// Largest CSV range list read, in bytes: 256 MiB.
pub const MAX_CSV_FILE_BYTES: u64 = 256 << 20;
/// Largest compression settings file (`taglane compress --settings`): 1 MiB.
pub const MAX_SETTINGS_FILE_BYTES: u64 = 1 << 20;
/// Most joints in one imported skeleton (BVH, glTF, `.tlc`): 32,768. Motion-capture skeletons have
/// 20 to 150 joints, game rigs a few hundred; the limit leaves room (the BVH tests parse a chain of
/// 20,001 joints) while bounding per-frame work; memory is bounded by [`MAX_JOINT_SAMPLES`].
pub const MAX_JOINTS: usize = 32_768;
/// Most worker threads a command starts, whatever `--jobs` asks for.
pub const MAX_WORKERS: usize = 256;

/// The worker threads for `items` pieces of work when `asked` were asked for: never more than
/// there are pieces (a thread with nothing to do is only its start-up cost) nor than
/// [`MAX_WORKERS`] (`--jobs 100000` started 100,000 threads for two files), at least one.
pub fn workers(asked: usize, items: usize) -> usize {
    asked.min(items).clamp(1, MAX_WORKERS)
}

/// Slowest frame rate a BVH take may give (`Frame Time` at most 1,000 s): checked when it is
/// imported, on the value as written.
pub const MIN_FPS: f64 = 0.001;
/// Fastest frame rate of a clip, in a BVH take or a tag document.
pub const MAX_FPS: f64 = 100_000.0;

/// Whether a tag document's or sidecar's `fps` (read as written, stored as f32) is one taglane
/// reads and writes: above 0, at most [`MAX_FPS`], and not rounding to 0 or to a subnormal f32
/// (which a duration is not divided by). Documents of earlier versions, which took any rate in
/// `(0, 100000]`, still open unless theirs rounded to 0 and could not be saved anyway.
pub fn fps_ok(fps: f64) -> bool {
    fps > 0.0 && fps <= MAX_FPS && (fps as f32).is_normal()
}

/// The error of an `fps` that [`fps_ok`] refuses.
pub fn fps_message(fps: f64) -> String {
    format!(
        "frames per second must be above 0 and at most {MAX_FPS} (and not round to 0 as a 32-bit float), found {fps:?}"
    )
}
/// Fewest centimetres per unit a clip may have (`--units`, `--unit-cm`, a document's or a `.tlc`
/// file's `unit_cm`): a micrometre.
pub const MIN_UNIT_CM: f32 = 0.0001;
/// Most centimetres per unit a clip may have: a kilometre. Past these, positions in centimetres
/// overflow float32 or lose their precision, and what taglane writes from them (a BVH with `inf`
/// offsets) it would refuse to read.
pub const MAX_UNIT_CM: f32 = 100_000.0;

/// Whether `unit_cm` (centimetres per unit) is one taglane takes: within
/// [`MIN_UNIT_CM`]..=[`MAX_UNIT_CM`].
pub fn unit_cm_ok(unit_cm: f64) -> bool {
    (f64::from(MIN_UNIT_CM)..=f64::from(MAX_UNIT_CM)).contains(&unit_cm)
}

/// The error of a unit that [`unit_cm_ok`] refuses (`unit_cm` as read, or as typed).
pub fn unit_cm_message(unit_cm: impl std::fmt::Display) -> String {
    format!(
        "centimetres per unit must be from {MIN_UNIT_CM} (a micrometre) to {MAX_UNIT_CM} (a kilometre), found {unit_cm}"
    )
}

/// Most frames in one imported clip: 432,000 (an hour at 120 fps, four hours at 30 fps).
pub const MAX_FRAMES: usize = 432_000;
/// Most joint samples (frames x joints) in one imported clip, and in all the clips of one imported
/// file together (a glTF file's animations): 20,000,000, about 800 MB of tracks (16-byte rotation,
/// 12-byte translation and 12-byte scale per sample).
pub const MAX_JOINT_SAMPLES: usize = 20_000_000;
/// Most buffer bytes one glTF file may use, all its buffers together (the GLB BIN chunk, data URIs
/// and external files; an external file named by several buffers is read and counted once):
/// 512 MiB, as much as one animation file.
pub const MAX_GLTF_BUFFER_BYTES: u64 = 512 << 20;
/// Deepest query nesting (parentheses, `!`, functions): the query parser refuses deeper queries.
pub const MAX_QUERY_DEPTH: usize = 256;

/// The most rules an auto-tag settings file holds, and conditions a rule: each is evaluated on
/// every frame of every clip, so a file of a megabyte of conditions is refused, not run.
pub const MAX_RULES: usize = 256;
/// See [`MAX_RULES`].
pub const MAX_CONDITIONS: usize = 64;

/// Reads a whole file of at most `max_bytes` bytes. A larger file (by its metadata, or by what is
/// actually read, for files that grow or report no size) is an `InvalidData` error saying the size
/// and the limit; nothing larger than the limit is ever allocated.
pub fn read_limited(path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    let declared = file.metadata().map(|m| m.len()).unwrap_or(0);
    if declared > max_bytes {
        return Err(too_large(declared, max_bytes));
    }
    let mut bytes = Vec::with_capacity(declared as usize);
    file.take(max_bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(bytes.len() as u64, max_bytes));
    }
    Ok(bytes)
}

fn too_large(size: u64, max_bytes: u64) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, size_message(size, max_bytes))
}

/// The message for a file over a size limit: `expected at most M bytes (N MiB), the file has S bytes`.
pub fn size_message(size: u64, max_bytes: u64) -> String {
    format!(
        "expected a file of at most {max_bytes} bytes ({} MiB), found {size} bytes",
        max_bytes >> 20
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn workers_are_capped_by_the_work_and_the_limit() {
        assert_eq!(super::workers(10_000, 2), 2);
        assert_eq!(super::workers(4, 100), 4);
        assert_eq!(super::workers(100_000, 1_000_000), super::MAX_WORKERS);
        assert_eq!(super::workers(3, 0), 1);
    }

    use super::*;

    #[test]
    fn read_limited_refuses_files_over_the_limit() {
        let dir = std::env::temp_dir().join(format!("taglane-limits-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.bin");
        std::fs::write(&path, [7u8; 100]).unwrap();
        assert_eq!(read_limited(&path, 100).unwrap(), vec![7u8; 100]);
        let e = read_limited(&path, 99).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("at most 99 bytes"), "{e}");
        assert!(e.to_string().contains("found 100 bytes"), "{e}");
        assert!(read_limited(&dir.join("missing"), 10).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
