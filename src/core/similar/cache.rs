//! Feature databases cached on disk, one small binary file per clip in a cache folder beside the
//! project ([`CACHE_DIR`]).
//!
//! A cache file is valid when its feature version, the source file's size and modification time,
//! the unit and the joint overrides all equal the current ones; otherwise the clip is loaded, its
//! features rebuilt and the file rewritten (atomically). Layout, all little-endian:
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `TLSIMFT\0` |
//! | 4 | file format version (1) |
//! | 4 | [`FEATURE_VERSION`] |
//! | 4 | dims ([`DIMS`]) |
//! | 8 | source file size in bytes |
//! | 8 + 4 | source modification time: seconds and nanoseconds since the Unix epoch |
//! | 4 | unit_cm (f32) |
//! | 4 | fps (f32) |
//! | 4 | frames |
//! | 4 + n | key: the clip name, a newline and the joint overrides, UTF-8 |
//! | frames x dims x 4 | features (f32), frame-major |

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::features::{
    ClipFeatures, DIMS, FEATURE_VERSION, FeatureJoints, JointOverrides, clip_features,
};
use crate::core::anim::Clip;
use crate::core::tags::ClipInfo;

/// The cache folder's name, created beside the project file.
pub const CACHE_DIR: &str = ".taglane-cache";

const MAGIC: &[u8; 8] = b"TLSIMFT\0";
const FILE_VERSION: u32 = 1;

/// Whether features came from the cache or were built (and why).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheOutcome {
    Hit,
    Built { reason: String },
}

/// What identifies a valid cache file.
#[derive(Debug, Clone, PartialEq)]
struct Key {
    size: u64,
    secs: i64,
    nanos: u32,
    unit_cm: f32,
    text: String,
}

fn source_key(
    source: &Path,
    clip_name: &str,
    unit_cm: f32,
    joints: &JointOverrides,
) -> Result<Key, String> {
    let meta = std::fs::metadata(source)
        .map_err(|e| format!("{}: cannot read the file: {e}", source.display()))?;
    let (secs, nanos) = match meta.modified().ok().map(|t| t.duration_since(UNIX_EPOCH)) {
        Some(Ok(d)) => (d.as_secs() as i64, d.subsec_nanos()),
        Some(Err(e)) => (
            -(e.duration().as_secs() as i64),
            e.duration().subsec_nanos(),
        ),
        None => (0, 0),
    };
    Ok(Key {
        size: meta.len(),
        secs,
        nanos,
        unit_cm,
        text: format!("{clip_name}\n{}", joints.key()),
    })
}

/// The cache file of a clip: its name made file-safe plus a hash of the source path and clip name.
pub fn cache_file(cache_dir: &Path, source: &Path, clip_name: &str) -> PathBuf {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in source
        .to_string_lossy()
        .bytes()
        .chain([0])
        .chain(clip_name.bytes())
    {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let safe: String = clip_name
        .chars()
        .take(40)
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    cache_dir.join(format!("{safe}-{h:016x}.tlfeat"))
}

fn encode(key: &Key, f: &ClipFeatures) -> Vec<u8> {
    let mut b = Vec::with_capacity(64 + key.text.len() + f.values.len() * 4);
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&FILE_VERSION.to_le_bytes());
    b.extend_from_slice(&FEATURE_VERSION.to_le_bytes());
    b.extend_from_slice(&(DIMS as u32).to_le_bytes());
    b.extend_from_slice(&key.size.to_le_bytes());
    b.extend_from_slice(&key.secs.to_le_bytes());
    b.extend_from_slice(&key.nanos.to_le_bytes());
    b.extend_from_slice(&key.unit_cm.to_le_bytes());
    b.extend_from_slice(&f.fps.to_le_bytes());
    b.extend_from_slice(&(f.frames as u32).to_le_bytes());
    b.extend_from_slice(&(key.text.len() as u32).to_le_bytes());
    b.extend_from_slice(key.text.as_bytes());
    for v in &f.values {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or_else(|| format!("truncated at byte {}", self.at))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().unwrap_or([0; 4]),
        ))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().unwrap_or([0; 8]),
        ))
    }
    fn f32(&mut self) -> Result<f32, String> {
        Ok(f32::from_bits(self.u32()?))
    }
}

/// Decodes a cache file; `Err` says why it cannot be used (stale or damaged).
fn decode(bytes: &[u8], key: &Key) -> Result<ClipFeatures, String> {
    let mut r = Reader { b: bytes, at: 0 };
    if r.take(8)? != MAGIC {
        return Err("not a taglane feature cache file".to_owned());
    }
    let v = r.u32()?;
    if v != FILE_VERSION {
        return Err(format!("cache file format {v}, expected {FILE_VERSION}"));
    }
    let v = r.u32()?;
    if v != FEATURE_VERSION {
        return Err(format!("feature version {v}, current {FEATURE_VERSION}"));
    }
    let dims = r.u32()? as usize;
    if dims != DIMS {
        return Err(format!("{dims} dims, expected {DIMS}"));
    }
    let size = r.u64()?;
    if size != key.size {
        return Err(format!(
            "source size changed ({size} -> {} bytes)",
            key.size
        ));
    }
    let secs = r.u64()? as i64;
    let nanos = r.u32()?;
    if (secs, nanos) != (key.secs, key.nanos) {
        return Err("source modification time changed".to_owned());
    }
    let unit = r.f32()?;
    if unit.to_bits() != key.unit_cm.to_bits() {
        return Err(format!("unit changed ({unit} -> {} cm)", key.unit_cm));
    }
    let fps = r.f32()?;
    let frames = r.u32()? as usize;
    let klen = r.u32()? as usize;
    if r.take(klen)? != key.text.as_bytes() {
        return Err("clip name or joint overrides changed".to_owned());
    }
    let n = frames
        .checked_mul(DIMS * 4)
        .ok_or_else(|| "frame count overflows".to_owned())?;
    let data = r.take(n)?;
    if r.at != bytes.len() {
        return Err(format!(
            "{} unexpected bytes at the end",
            bytes.len() - r.at
        ));
    }
    let values = data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Ok(ClipFeatures {
        fps,
        frames,
        values,
    })
}

/// Features of clip `clip_name` of `source`: read from `cache_dir` when valid, otherwise built from
/// `load()` (whose clip gets `unit_cm`) and written there. A cache that cannot be written is not an
/// error (the features are still returned).
pub fn cached_features(
    source: &Path,
    clip_name: &str,
    cache_dir: &Path,
    unit_cm: f32,
    joints: &JointOverrides,
    load: impl FnOnce() -> Result<Clip, String>,
) -> Result<(ClipFeatures, CacheOutcome), String> {
    let key = source_key(source, clip_name, unit_cm, joints)?;
    let file = cache_file(cache_dir, source, clip_name);
    let reason = match std::fs::read(&file) {
        Ok(bytes) => match decode(&bytes, &key) {
            Ok(f) => return Ok((f, CacheOutcome::Hit)),
            Err(why) => why,
        },
        Err(_) => "no cache file".to_owned(),
    };
    let mut clip = load()?;
    clip.unit_cm = unit_cm;
    let fj = FeatureJoints::find(&clip.skeleton, joints)
        .map_err(|e| format!("{}: {e}", source.display()))?;
    let f = clip_features(&clip, &fj).map_err(|e| format!("{}: {e}", source.display()))?;
    if std::fs::create_dir_all(cache_dir).is_ok() {
        let _ = crate::core::io::write_atomic(&file, &encode(&key, &f), false);
    }
    Ok((f, CacheOutcome::Built { reason }))
}

/// Features of one clip of a project: its `source` (relative to `project_dir`) loaded with
/// `unit_cm` centimetres per file unit, cached in `project_dir/.taglane-cache`.
pub fn project_clip_features(
    project_dir: &Path,
    clip: crate::core::tags::ClipId,
    info: &ClipInfo,
    unit_cm: f32,
    joints: &JointOverrides,
) -> Result<(ClipFeatures, CacheOutcome), String> {
    let source = info
        .source
        .as_deref()
        .ok_or_else(|| format!("clip `{}` has no source animation file", info.name))?;
    let path = project_dir.join(source);
    cached_features(
        &path,
        &info.name,
        &project_dir.join(CACHE_DIR),
        unit_cm,
        joints,
        || crate::core::cut::load_source_clip(project_dir, clip, info),
    )
}

/// Features of every clip of a project, each with the unit `unit_cm_of(clip)` gives; one result per
/// clip, in document order.
pub fn load_project_features(
    project_dir: &Path,
    clips: &[ClipInfo],
    unit_cm_of: impl Fn(&ClipInfo) -> f32,
    joints: &JointOverrides,
) -> Vec<Result<(ClipFeatures, CacheOutcome), String>> {
    clips
        .iter()
        .enumerate()
        .map(|(c, info)| {
            project_clip_features(project_dir, c as u32, info, unit_cm_of(info), joints)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::demo::demo_files;
    use std::fs::File;
    use std::time::{Duration, SystemTime};

    fn demo_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("taglane-simcache-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in demo_files() {
            if file.starts_with("idle_female_01") || file.ends_with(".json") {
                std::fs::write(dir.join(file), text).unwrap();
            }
        }
        dir
    }

    fn info() -> ClipInfo {
        ClipInfo {
            name: "idle_female_01".into(),
            frames: 151,
            fps: 30.0,
            source: Some("idle_female_01.bvh".into()),
            unit_cm: None,
        }
    }

    fn get(dir: &Path, unit: f32) -> (ClipFeatures, CacheOutcome) {
        project_clip_features(dir, 0, &info(), unit, &JointOverrides::default()).unwrap()
    }

    #[test]
    fn cache_is_reused_and_invalidated_by_size_mtime_version_unit_and_joints() {
        let dir = demo_dir("inval");
        let (built, o) = get(&dir, 1.0);
        assert_eq!(
            o,
            CacheOutcome::Built {
                reason: "no cache file".into()
            }
        );
        let (hit, o) = get(&dir, 1.0);
        assert_eq!(o, CacheOutcome::Hit);
        assert_eq!(hit, built);
        // Another unit or other joints: rebuilt.
        let (_, o) = get(&dir, 2.54);
        assert!(
            matches!(o, CacheOutcome::Built { ref reason } if reason.contains("unit")),
            "{o:?}"
        );
        let over = JointOverrides {
            left_hand: Some("LeftForeArm".into()),
            ..Default::default()
        };
        let (_, o) = project_clip_features(&dir, 0, &info(), 2.54, &over).unwrap();
        assert!(
            matches!(o, CacheOutcome::Built { ref reason } if reason.contains("joint")),
            "{o:?}"
        );
        assert!(matches!(get(&dir, 1.0).1, CacheOutcome::Built { .. }));
        assert_eq!(get(&dir, 1.0).1, CacheOutcome::Hit);
        // The source touched (same size, new modification time): rebuilt.
        let src = dir.join("idle_female_01.bvh");
        let t = SystemTime::now() + Duration::from_secs(3600);
        File::options()
            .write(true)
            .open(&src)
            .unwrap()
            .set_modified(t)
            .unwrap();
        let (_, o) = get(&dir, 1.0);
        assert!(
            matches!(o, CacheOutcome::Built { ref reason } if reason.contains("modification")),
            "{o:?}"
        );
        assert_eq!(get(&dir, 1.0).1, CacheOutcome::Hit);
        // The source grown: rebuilt.
        let mut text = std::fs::read_to_string(&src).unwrap();
        text.push('\n');
        std::fs::write(&src, text).unwrap();
        let (again, o) = get(&dir, 1.0);
        assert!(
            matches!(o, CacheOutcome::Built { ref reason } if reason.contains("size")),
            "{o:?}"
        );
        assert_eq!(again, built);
        // A file of another feature version, or a damaged one: rebuilt, never an error.
        let file = cache_file(&dir.join(CACHE_DIR), &src, "idle_female_01");
        let mut bytes = std::fs::read(&file).unwrap();
        bytes[12..16].copy_from_slice(&(FEATURE_VERSION + 1).to_le_bytes());
        std::fs::write(&file, &bytes).unwrap();
        let (_, o) = get(&dir, 1.0);
        assert!(
            matches!(o, CacheOutcome::Built { ref reason } if reason.contains("feature version")),
            "{o:?}"
        );
        let bytes = std::fs::read(&file).unwrap();
        std::fs::write(&file, &bytes[..bytes.len() - 3]).unwrap();
        let (f, o) = get(&dir, 1.0);
        assert!(
            matches!(o, CacheOutcome::Built { ref reason } if reason.contains("truncated")),
            "{o:?}"
        );
        assert_eq!(f, built);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn missing_source_is_an_error_naming_the_file() {
        let dir = demo_dir("missing");
        let mut i = info();
        i.source = Some("nope.bvh".into());
        let e = project_clip_features(&dir, 0, &i, 1.0, &JointOverrides::default()).unwrap_err();
        assert!(e.contains("nope.bvh"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
