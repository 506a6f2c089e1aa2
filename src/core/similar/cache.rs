//! Feature databases cached on disk: one small binary file per clip in the folder [`CACHE_DIR`]
//! beside the project file.
//!
//! A cache file is used only when its file format, [`FEATURE_VERSION`], [`DIMS`], the source file's
//! size and modification time (and those of each external buffer of a glTF source), the unit, the
//! clip name and the joint overrides all equal the current ones and its checksum matches (values
//! that are not finite are kept as the clip gave them: the search refuses such a clip whether it
//! was read or built); otherwise the clip is loaded, its features rebuilt and the
//! file rewritten atomically (`core::io::write_atomic`: a reader never sees half a file). A damaged
//! file is rebuilt like a stale one, never an error. Layout, all little-endian:
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `TLSIMFT\0` |
//! | 4 | file format version ([`CACHE_FORMAT_VERSION`]) |
//! | 4 | [`FEATURE_VERSION`] |
//! | 4 | dims ([`DIMS`]) |
//! | 8 | source file size in bytes |
//! | 8 + 4 | source modification time: seconds (signed) and nanoseconds since the Unix epoch |
//! | 4 | unit_cm (f32) |
//! | 4 | fps (f32) |
//! | 4 | frames (at most `core::limits::MAX_FRAMES`) |
//! | 4 + n | key: the clip name, a newline and the joint overrides, UTF-8 (n at most 64 KiB) |
//! | 4 | count of external files (a glTF's buffers outside it; at most 1,024) |
//! | each: 4 + n, 8, 8 + 4 | the file's path relative to the source's folder (UTF-8, n at most 4 KiB), its size, its modification time |
//! | frames x dims x 4 | features (f32), frame-major |
//! | 4 | CRC-32 of every byte before it (a damaged file whose values are all finite is rebuilt too) |

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::features::{ClipFeatures, DIMS, FEATURE_VERSION, JointOverrides, clip_features_by_name};
use crate::core::anim::Clip;
use crate::core::limits::MAX_FRAMES;

/// The cache folder's name, created beside the project file.
pub const CACHE_DIR: &str = ".taglane-cache";

/// Version of the cache file layout above.
pub const CACHE_FORMAT_VERSION: u32 = 3;

const MAGIC: &[u8; 8] = b"TLSIMFT\0";
const HEADER_BYTES: usize = 8 + 4 * 3 + 8 + 12 + 4 * 3 + 4;
const MAX_KEY_BYTES: usize = 64 << 10;
/// At most this many external files, each named in at most [`MAX_EXTERNAL_NAME_BYTES`].
const MAX_EXTERNALS: usize = 1024;
const MAX_EXTERNAL_NAME_BYTES: usize = 4 << 10;

/// Where a clip's features came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Read from a valid cache file.
    Hit,
    /// Built from the animation; `reason` says why the cache was not used (`no cache file`,
    /// `source size changed (...)`, ...); `write_error` is set when the new cache file could not be
    /// written (the features are still good).
    Built {
        reason: String,
        write_error: Option<String>,
    },
    /// Built without a cache (loose files, the embedded demo, or caching turned off).
    Uncached,
}

/// What identifies a valid cache file.
#[derive(Debug, Clone, PartialEq)]
struct Key {
    stamp: Stamp,
    unit_cm: f32,
    text: String,
}

/// A file's size and modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    size: u64,
    secs: i64,
    nanos: u32,
}

/// The size and modification time of `file`.
fn stamp(file: &Path) -> std::io::Result<Stamp> {
    let meta = std::fs::metadata(file)?;
    let (secs, nanos) = match meta.modified().ok().map(|t| t.duration_since(UNIX_EPOCH)) {
        Some(Ok(d)) => (d.as_secs() as i64, d.subsec_nanos()),
        Some(Err(e)) => (
            -(e.duration().as_secs() as i64),
            e.duration().subsec_nanos(),
        ),
        None => (0, 0),
    };
    Ok(Stamp {
        size: meta.len(),
        secs,
        nanos,
    })
}

fn source_key(
    source: &Path,
    clip_name: &str,
    unit_cm: f32,
    joints: &JointOverrides,
) -> Result<Key, String> {
    let stamp =
        stamp(source).map_err(|e| format!("{}: cannot read the file: {e}", source.display()))?;
    Ok(Key {
        stamp,
        unit_cm,
        text: format!("{clip_name}\n{}", joints.key()),
    })
}

/// The external files a source reads besides itself (a glTF's buffers), relative to its folder,
/// with their stamps now. Taken before the source is loaded, so that a file that changes while it
/// loads leaves a stamp that no longer matches (the cache is rebuilt next time) rather than new
/// features under an old stamp. A file that cannot be read has no stamp and is left out (the load
/// reports it).
fn external_stamps(source: &Path) -> Vec<(String, Stamp)> {
    use crate::core::anim::import::AnimFormat;
    if !matches!(
        AnimFormat::from_path(source),
        Some(AnimFormat::Gltf | AnimFormat::Glb)
    ) {
        return Vec::new();
    }
    let Ok(bytes) =
        crate::core::limits::read_limited(source, crate::core::limits::MAX_ANIM_FILE_BYTES)
    else {
        return Vec::new();
    };
    let dir = source.parent().unwrap_or(Path::new(""));
    crate::core::anim::gltf::external_buffer_uris(&bytes)
        .into_iter()
        .filter(|rel| rel.len() <= MAX_EXTERNAL_NAME_BYTES)
        .take(MAX_EXTERNALS)
        .filter_map(|rel| Some((stamp(&dir.join(&rel)).ok()?, rel)))
        .map(|(s, rel)| (rel, s))
        .collect()
}

/// The cache file of a clip: its name made file-safe, plus a hash of the source path (absolute, so
/// the same take has the same file from any current folder) and clip name.
pub fn cache_file(cache_dir: &Path, source: &Path, clip_name: &str) -> PathBuf {
    let source = crate::core::library::walk::absolute(source);
    // FNV-1a, 64 bits: stable across runs and platforms (unlike the standard library's hasher).
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

fn put_stamp(b: &mut Vec<u8>, s: Stamp) {
    b.extend_from_slice(&s.size.to_le_bytes());
    b.extend_from_slice(&s.secs.to_le_bytes());
    b.extend_from_slice(&s.nanos.to_le_bytes());
}

fn encode(key: &Key, externals: &[(String, Stamp)], f: &ClipFeatures) -> Vec<u8> {
    let mut b = Vec::with_capacity(HEADER_BYTES + key.text.len() + f.values.len() * 4);
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&CACHE_FORMAT_VERSION.to_le_bytes());
    b.extend_from_slice(&FEATURE_VERSION.to_le_bytes());
    b.extend_from_slice(&(DIMS as u32).to_le_bytes());
    put_stamp(&mut b, key.stamp);
    b.extend_from_slice(&key.unit_cm.to_le_bytes());
    b.extend_from_slice(&f.fps.to_le_bytes());
    b.extend_from_slice(&(f.frames as u32).to_le_bytes());
    b.extend_from_slice(&(key.text.len() as u32).to_le_bytes());
    b.extend_from_slice(key.text.as_bytes());
    b.extend_from_slice(&(externals.len() as u32).to_le_bytes());
    for (rel, s) in externals {
        b.extend_from_slice(&(rel.len() as u32).to_le_bytes());
        b.extend_from_slice(rel.as_bytes());
        put_stamp(&mut b, *s);
    }
    for v in &f.values {
        b.extend_from_slice(&v.to_le_bytes());
    }
    let crc = crate::core::compress::bits::crc32(&b);
    b.extend_from_slice(&crc.to_le_bytes());
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
    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    fn f32(&mut self) -> Result<f32, String> {
        Ok(f32::from_le_bytes(self.array()?))
    }
    fn stamp(&mut self) -> Result<Stamp, String> {
        Ok(Stamp {
            size: self.u64()?,
            secs: self.u64()? as i64,
            nanos: self.u32()?,
        })
    }
}

/// Decodes a cache file of clip `key` of `source`; `Err` says why it cannot be used (stale or
/// damaged), with the byte offset for damage.
fn decode(bytes: &[u8], source: &Path, key: &Key) -> Result<ClipFeatures, String> {
    let mut r = Reader { b: bytes, at: 0 };
    if r.take(8)? != MAGIC {
        return Err("not a taglane feature cache file (byte 0)".to_owned());
    }
    let v = r.u32()?;
    if v != CACHE_FORMAT_VERSION {
        return Err(format!(
            "cache file format {v}, expected {CACHE_FORMAT_VERSION}"
        ));
    }
    let v = r.u32()?;
    if v != FEATURE_VERSION {
        return Err(format!("feature version {v}, current {FEATURE_VERSION}"));
    }
    let dims = r.u32()? as usize;
    if dims != DIMS {
        return Err(format!("{dims} dims, expected {DIMS}"));
    }
    let was = r.stamp()?;
    if was.size != key.stamp.size {
        return Err(format!(
            "source size changed ({} -> {} bytes)",
            was.size, key.stamp.size
        ));
    }
    if was != key.stamp {
        return Err("source modification time changed".to_owned());
    }
    let unit = r.f32()?;
    if unit.to_bits() != key.unit_cm.to_bits() {
        return Err(format!("unit changed ({unit} -> {} cm)", key.unit_cm));
    }
    let fps_at = r.at;
    let fps = r.f32()?;
    if !(fps.is_finite() && fps > 0.0) {
        return Err(format!("frame rate {fps} at byte {fps_at} is not positive"));
    }
    let frames_at = r.at;
    let frames = r.u32()? as usize;
    if frames > MAX_FRAMES {
        return Err(format!(
            "{frames} frames at byte {frames_at}, more than the limit of {MAX_FRAMES}"
        ));
    }
    let klen = r.u32()? as usize;
    if klen > MAX_KEY_BYTES {
        return Err(format!("a key of {klen} bytes at byte {}", r.at - 4));
    }
    if r.take(klen)? != key.text.as_bytes() {
        return Err("clip name or joint overrides changed".to_owned());
    }
    let count_at = r.at;
    let count = r.u32()? as usize;
    if count > MAX_EXTERNALS {
        return Err(format!(
            "{count} external files at byte {count_at}, more than {MAX_EXTERNALS}"
        ));
    }
    let dir = source.parent().unwrap_or(Path::new(""));
    for _ in 0..count {
        let name_at = r.at;
        let n = r.u32()? as usize;
        if n > MAX_EXTERNAL_NAME_BYTES {
            return Err(format!("a file name of {n} bytes at byte {name_at}"));
        }
        let rel = std::str::from_utf8(r.take(n)?)
            .map_err(|_| format!("a file name that is not UTF-8 at byte {}", name_at + 4))?;
        let was = r.stamp()?;
        match stamp(&dir.join(rel)) {
            Ok(now) if now == was => {}
            Ok(_) => return Err(format!("external file {rel} changed")),
            Err(e) => return Err(format!("external file {rel}: {e}")),
        }
    }
    let data = r.take(frames * DIMS * 4)?;
    let crc_at = r.at;
    let crc = r.u32()?;
    if r.at != bytes.len() {
        return Err(format!(
            "{} unexpected bytes at byte {}",
            bytes.len() - r.at,
            r.at
        ));
    }
    // Damage that leaves every value finite (a flipped mantissa bit) changed rankings silently.
    if crate::core::compress::bits::crc32(&bytes[..crc_at]) != crc {
        return Err(format!(
            "damaged: the checksum at byte {crc_at} does not match the bytes before it"
        ));
    }
    // Values that are not finite are what the clip gives (a position past float range at a huge
    // unit): kept, so that the caller's check refuses the clip again without loading it.
    let values: Vec<f32> = data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Ok(ClipFeatures {
        fps,
        frames,
        values,
    })
}

/// Reads a cache file of at most the largest valid size.
fn read_cache_file(file: &Path) -> Result<Vec<u8>, String> {
    let externals = 4 + MAX_EXTERNALS * (4 + MAX_EXTERNAL_NAME_BYTES + 20);
    let max = HEADER_BYTES + MAX_KEY_BYTES + externals + MAX_FRAMES * DIMS * 4 + 4;
    match crate::core::limits::read_limited(file, max as u64) {
        Ok(b) => Ok(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err("no cache file".to_owned()),
        Err(e) => Err(format!("cache file unreadable: {e}")),
    }
}

/// Writes a cache file atomically, creating the folder (with a `.gitignore` that ignores it) when
/// needed.
fn write_cache_file(cache_dir: &Path, file: &Path, bytes: &[u8]) -> Result<(), String> {
    let fresh = !cache_dir.exists();
    std::fs::create_dir_all(cache_dir).map_err(|e| format!("{}: {e}", cache_dir.display()))?;
    if fresh {
        // Best effort: a project under version control should not pick the cache up.
        let _ = crate::core::io::write_atomic(
            &cache_dir.join(".gitignore"),
            b"# taglane's feature cache: rebuilt when missing\n*\n",
            false,
        );
    }
    crate::core::io::write_atomic(file, bytes, false)
        .map_err(|e| format!("{}: {e}", file.display()))
}

/// Features of clip `clip_name` of the animation file `source`: read from `cache_dir` when valid,
/// otherwise built from `load()` (whose clip is given `unit_cm` centimetres per file unit and
/// searched for joints by `joints`) and written there.
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
    let reason = match read_cache_file(&file) {
        Ok(bytes) => match decode(&bytes, source, &key) {
            Ok(f) => return Ok((f, CacheOutcome::Hit)),
            Err(why) => why,
        },
        Err(why) => why,
    };
    let externals = external_stamps(source);
    let mut clip = load()?;
    clip.unit_cm = unit_cm;
    let f =
        clip_features_by_name(&clip, joints).map_err(|e| format!("{}: {e}", source.display()))?;
    let write_error = write_cache_file(cache_dir, &file, &encode(&key, &externals, &f)).err();
    Ok((
        f,
        CacheOutcome::Built {
            reason,
            write_error,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::demo::demo_files;
    use crate::core::project::{ClipRequest, load};
    use crate::core::tags::ClipInfo;
    use std::fs::File;
    use std::time::{Duration, SystemTime};

    fn demo_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("taglane-simcache-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in demo_files() {
            if file.starts_with("idle_female_01") {
                std::fs::write(dir.join(file), text).unwrap();
            }
        }
        dir
    }

    const NAME: &str = "idle_female_01";

    /// The request of the demo take in `dir`.
    fn demo_request(dir: &Path) -> Result<ClipRequest, String> {
        let info = ClipInfo {
            name: NAME.into(),
            frames: 151,
            fps: 30.0,
            source: Some(format!("{NAME}.bvh")),
            unit_cm: None,
        };
        ClipRequest::new(0, &info, Some(dir), false)
    }

    fn get_with(
        dir: &Path,
        unit: f32,
        joints: &JointOverrides,
    ) -> Result<(ClipFeatures, CacheOutcome), String> {
        let request = demo_request(dir)?;
        cached_features(
            &dir.join(format!("{NAME}.bvh")),
            NAME,
            &dir.join(CACHE_DIR),
            unit,
            joints,
            || load(&request),
        )
    }

    fn get(dir: &Path, unit: f32) -> (ClipFeatures, CacheOutcome) {
        get_with(dir, unit, &JointOverrides::default()).unwrap()
    }

    fn rebuilt_because(o: &CacheOutcome, why: &str) -> bool {
        matches!(o, CacheOutcome::Built { reason, write_error: None } if reason.contains(why))
    }

    #[test]
    fn cache_is_reused_and_invalidated_by_size_mtime_version_unit_and_joints() {
        let dir = demo_dir("inval");
        let (built, o) = get(&dir, 1.0);
        assert!(rebuilt_because(&o, "no cache file"), "{o:?}");
        let (hit, o) = get(&dir, 1.0);
        assert_eq!(o, CacheOutcome::Hit);
        assert_eq!(hit, built);
        assert!(dir.join(CACHE_DIR).join(".gitignore").exists());
        // Another unit or other joints: rebuilt.
        let (inches, o) = get(&dir, 2.54);
        assert!(rebuilt_because(&o, "unit"), "{o:?}");
        assert!((inches.values[1] - built.values[1] * 2.54).abs() < 1e-3);
        let mut over = JointOverrides::default();
        over.set("left_hand", "LeftForeArm").unwrap();
        let (_, o) = get_with(&dir, 2.54, &over).unwrap();
        assert!(rebuilt_because(&o, "joint"), "{o:?}");
        assert!(matches!(get(&dir, 1.0).1, CacheOutcome::Built { .. }));
        assert_eq!(get(&dir, 1.0).1, CacheOutcome::Hit);
        // The source touched (same size, new modification time): rebuilt.
        let src = dir.join(format!("{NAME}.bvh"));
        let t = SystemTime::now() + Duration::from_secs(3600);
        File::options()
            .write(true)
            .open(&src)
            .unwrap()
            .set_modified(t)
            .unwrap();
        let (_, o) = get(&dir, 1.0);
        assert!(rebuilt_because(&o, "modification"), "{o:?}");
        assert_eq!(get(&dir, 1.0).1, CacheOutcome::Hit);
        // The source grown: rebuilt.
        let mut text = std::fs::read_to_string(&src).unwrap();
        text.push('\n');
        std::fs::write(&src, text).unwrap();
        let (again, o) = get(&dir, 1.0);
        assert!(rebuilt_because(&o, "size"), "{o:?}");
        assert_eq!(again, built);
        // A file of another feature version: rebuilt.
        let file = cache_file(&dir.join(CACHE_DIR), &src, NAME);
        let good = std::fs::read(&file).unwrap();
        let mut bytes = good.clone();
        bytes[12..16].copy_from_slice(&(FEATURE_VERSION + 1).to_le_bytes());
        std::fs::write(&file, &bytes).unwrap();
        let (_, o) = get(&dir, 1.0);
        assert!(rebuilt_because(&o, "feature version"), "{o:?}");
        assert_eq!(std::fs::read(&file).unwrap(), good);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_gltf_cache_is_rebuilt_when_an_external_buffer_changes() {
        let dir = demo_dir("external");
        // A glTF naming an external buffer (twice), an embedded one and one outside its folder;
        // its features come from the demo clip (the cache only reads the source's stamps).
        let src = dir.join("take.gltf");
        std::fs::write(
            &src,
            r#"{"asset": {"version": "2.0"}, "buffers": [
                {"byteLength": 4, "uri": "take%20data.bin"},
                {"byteLength": 4, "uri": "data:application/octet-stream;base64,AAAAAA=="},
                {"byteLength": 4, "uri": "take data.bin"},
                {"byteLength": 4, "uri": "../outside.bin"}]}"#,
        )
        .unwrap();
        let bin = dir.join("take data.bin");
        std::fs::write(&bin, [1u8, 2, 3, 4]).unwrap();
        let request = demo_request(&dir).unwrap();
        let get = || {
            cached_features(
                &src,
                "walk",
                &dir.join(CACHE_DIR),
                1.0,
                &JointOverrides::default(),
                || load(&request),
            )
            .unwrap()
            .1
        };
        assert!(rebuilt_because(&get(), "no cache file"));
        assert_eq!(get(), CacheOutcome::Hit);
        // The buffer rewritten with other bytes of the same size and a new time; the glTF itself
        // untouched.
        std::fs::write(&bin, [9u8, 9, 9, 9]).unwrap();
        File::options()
            .write(true)
            .open(&bin)
            .unwrap()
            .set_modified(SystemTime::now() + Duration::from_secs(3600))
            .unwrap();
        let o = get();
        assert!(
            rebuilt_because(&o, "external file take data.bin changed"),
            "{o:?}"
        );
        assert_eq!(get(), CacheOutcome::Hit);
        // The buffer gone: not a hit (the load says what is wrong with the take).
        std::fs::remove_file(&bin).unwrap();
        let o = get();
        assert!(rebuilt_because(&o, "external file take data.bin"), "{o:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn joint_overrides_give_distinct_keys() {
        let mut a = JointOverrides::default();
        a.set("root", "Hips|").unwrap();
        let mut b = JointOverrides::default();
        b.set("root", "Hips").unwrap();
        b.set("left_foot", "|").unwrap();
        assert_ne!(a.key(), b.key());
        assert_ne!(JointOverrides::default().key(), a.key());
    }

    #[test]
    fn damaged_cache_files_are_rebuilt_never_a_panic() {
        let dir = demo_dir("damage");
        let (built, _) = get(&dir, 1.0);
        let src = dir.join(format!("{NAME}.bvh"));
        let file = cache_file(&dir.join(CACHE_DIR), &src, NAME);
        let good = std::fs::read(&file).unwrap();
        let frames_at = HEADER_BYTES - 8;
        let nan_at = good.len() - 8;
        let mut cases: Vec<(Vec<u8>, &str)> = vec![
            (Vec::new(), "truncated"),
            (good[..good.len() - 3].to_vec(), "truncated"),
            (good[..20].to_vec(), "truncated"),
            ([good.as_slice(), b"xx"].concat(), "unexpected bytes"),
            (b"not a cache file at all".to_vec(), "not a taglane"),
        ];
        let mut huge = good.clone();
        huge[frames_at..frames_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        cases.push((huge, "limit"));
        let mut nan = good.clone();
        nan[nan_at..nan_at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        cases.push((nan, "checksum"));
        let mut key = good.clone();
        key[HEADER_BYTES] ^= 0x20;
        cases.push((key, "clip name"));
        // A feature value changed to another finite one: only the checksum sees it.
        let mut flipped = good.clone();
        flipped[nan_at - 40] ^= 0x01;
        cases.push((flipped, "checksum"));
        // Every single-byte truncation of the header.
        for n in 0..HEADER_BYTES {
            cases.push((good[..n].to_vec(), ""));
        }
        for (bytes, why) in cases {
            std::fs::write(&file, &bytes).unwrap();
            let (f, o) = get(&dir, 1.0);
            assert!(rebuilt_because(&o, why), "{why}: {o:?}");
            assert_eq!(f, built);
            assert_eq!(std::fs::read(&file).unwrap(), good);
        }
        // A cache folder that cannot be written: the features still come back, with the reason.
        let blocked = dir.join("blocked");
        std::fs::write(&blocked, "a file where the folder should be").unwrap();
        let (f, o) = cached_features(
            &src,
            NAME,
            &blocked,
            1.0,
            &JointOverrides::default(),
            || {
                crate::core::anim::load_animation(&src, &Default::default())
                    .map(|i| i.clips.into_iter().next().unwrap())
                    .map_err(|e| e.to_string())
            },
        )
        .unwrap();
        assert_eq!(f, built);
        assert!(
            matches!(
                o,
                CacheOutcome::Built {
                    write_error: Some(_),
                    ..
                }
            ),
            "{o:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn missing_source_is_an_error_naming_the_file() {
        let dir = demo_dir("missing");
        let e = cached_features(
            &dir.join("nope.bvh"),
            "nope",
            &dir.join(CACHE_DIR),
            1.0,
            &JointOverrides::default(),
            || unreachable!("nothing to load"),
        )
        .unwrap_err();
        assert!(e.contains("nope.bvh"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The same take named from two current folders (a relative and an absolute path) has one
    /// cache file.
    #[test]
    fn a_take_has_one_cache_file_from_any_current_folder() {
        let cwd = std::env::current_dir().unwrap();
        let dir = Path::new("cache");
        assert_eq!(
            cache_file(dir, Path::new("takes/./walk.bvh"), "walk"),
            cache_file(dir, &cwd.join("takes/walk.bvh"), "walk")
        );
    }
}
