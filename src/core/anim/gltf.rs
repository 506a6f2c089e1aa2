//! glTF 2.0 import: the GLB container and buffers are read here (the `gltf` crate is built without
//! its `import` feature); the JSON is parsed and validated by `gltf::json` / `gltf::Document`.
//!
//! - Skeleton: the joints of the first skin, ordered parents-first. A joint's parent is its nearest
//!   ancestor node that is also a joint; the static transforms of nodes in between (and of non-joint
//!   ancestors of a root joint) are folded into the joint's local transform. Without a skin, every
//!   node of the node forest is a joint.
//! - Each animation becomes one [`Clip`] resampled at [`ImportOptions::gltf_fps`], by default the
//!   animation's own key rate ([`key_rate`]; with a warning when its keys are not evenly spaced,
//!   the rate of most of its gaps ([`closest_key_rate`]), else 30 fps): frame `i` is at `start + i / fps`, `start = min(0, first key)`, and the frame count
//!   is rounded up so the last key time is covered (times past it hold the last key). STEP,
//!   LINEAR (slerp for rotations) and CUBICSPLINE (Hermite, rotations normalised) are supported. Joints an animation does not touch
//!   keep their rest transform. Morph-target weights and channels on non-joint nodes are ignored
//!   with a warning.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use glam::{Mat4, Quat, Vec3, Vec4};
use gltf::json;

use super::clip::Clip;
use super::import::{ImportError, ImportOptions, ImportWarning, Imported, Place};
use super::sample::slerp;
use super::skeleton::{Skeleton, Transform};

const GLB_MAGIC: &[u8; 4] = b"glTF";
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;
/// Upper bound on resampled frames per clip (an hour at 120 fps), against absurd key times.
const MAX_FRAMES: usize = crate::core::limits::MAX_FRAMES;
/// Upper bound on frames x joints per clip, and over all the clips of one file (about 800 MB of
/// tracks).
const MAX_SAMPLES: usize = crate::core::limits::MAX_JOINT_SAMPLES;
/// Upper bound on the bytes of all the buffers of one file together.
const MAX_BUFFER_BYTES: u64 = crate::core::limits::MAX_GLTF_BUFFER_BYTES;

fn json_err(path: impl Into<String>, message: impl Into<String>) -> ImportError {
    ImportError::new(Place::Json(path.into()), message)
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Imports a binary glTF (`.glb`).
pub(crate) fn import_glb(
    bytes: &[u8],
    base_dir: Option<&Path>,
    options: &ImportOptions,
) -> Result<Imported, ImportError> {
    if bytes.len() < 12 || &bytes[0..4] != GLB_MAGIC {
        return Err(ImportError::new(
            Place::Byte(0),
            "expected the GLB magic `glTF` and a 12-byte header",
        ));
    }
    let version = u32_at(bytes, 4).unwrap_or(0);
    if version != 2 {
        return Err(ImportError::new(
            Place::Byte(4),
            format!("expected GLB container version 2, found {version}"),
        ));
    }
    let declared = u32_at(bytes, 8).unwrap_or(0) as usize;
    if declared > bytes.len() || declared < 12 {
        return Err(ImportError::new(
            Place::Byte(8),
            format!(
                "the header declares {declared} bytes but the file has {}",
                bytes.len()
            ),
        ));
    }
    let data = &bytes[..declared];
    let mut at = 12usize;
    let mut json_chunk: Option<&[u8]> = None;
    let mut bin_chunk: Option<&[u8]> = None;
    while at < data.len() {
        let (Some(len), Some(kind)) = (u32_at(data, at), u32_at(data, at + 4)) else {
            return Err(ImportError::new(
                Place::Byte(at),
                "expected an 8-byte chunk header (length, type)",
            ));
        };
        let start = at + 8;
        let end = start.checked_add(len as usize).filter(|e| *e <= data.len());
        let Some(end) = end else {
            return Err(ImportError::new(
                Place::Byte(at),
                format!(
                    "chunk of {len} bytes runs past the end of the container ({} bytes)",
                    data.len()
                ),
            ));
        };
        let chunk = &data[start..end];
        match kind {
            CHUNK_JSON if json_chunk.is_none() && at == 12 => json_chunk = Some(chunk),
            CHUNK_BIN if bin_chunk.is_none() && json_chunk.is_some() => bin_chunk = Some(chunk),
            CHUNK_JSON => {
                return Err(ImportError::new(
                    Place::Byte(at),
                    "expected the JSON chunk first and only once",
                ));
            }
            _ => {} // Unknown chunks are skipped, as the specification requires.
        }
        // Chunks are 4-byte aligned.
        at = end.div_ceil(4) * 4;
    }
    let Some(json_bytes) = json_chunk else {
        return Err(ImportError::new(
            Place::Byte(12),
            "expected a JSON chunk after the GLB header",
        ));
    };
    import_json(json_bytes, bin_chunk, base_dir, options)
}

/// The files a glTF file reads besides itself (`bytes`: a `.gltf`'s JSON or a `.glb`): each
/// buffer's `uri` that is not a data URI, percent-decoded, relative to the file's folder, each once
/// and in order. A `uri` the importer would refuse (outside the folder) is left out, and so is
/// everything when the JSON does not parse (the import says why). For caches of what a take gives,
/// which must see its buffers change as well as the file.
pub fn external_buffer_uris(bytes: &[u8]) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Buffer {
        #[serde(default)]
        uri: Option<String>,
    }
    #[derive(serde::Deserialize)]
    struct Root {
        #[serde(default)]
        buffers: Vec<Buffer>,
    }
    let json = if bytes.starts_with(GLB_MAGIC) {
        // The JSON chunk comes first (`import_glb` refuses anything else).
        let len = u32_at(bytes, 12).unwrap_or(0) as usize;
        let chunk = bytes.get(20..20usize.saturating_add(len));
        match chunk {
            Some(c) if u32_at(bytes, 16) == Some(CHUNK_JSON) => c,
            _ => return Vec::new(),
        }
    } else {
        bytes
    };
    let Ok(root) = serde_json::from_slice::<Root>(json) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for uri in root.buffers.into_iter().filter_map(|b| b.uri) {
        if uri.starts_with("data:") {
            continue;
        }
        let rel = percent_decode(&uri);
        if rel.contains("..") || rel.starts_with('/') || rel.contains(':') || out.contains(&rel) {
            continue;
        }
        out.push(rel);
    }
    out
}

/// Imports a JSON glTF (`.gltf`) with embedded (data URI) or external buffers.
pub(crate) fn import_gltf_json(
    bytes: &[u8],
    base_dir: Option<&Path>,
    options: &ImportOptions,
) -> Result<Imported, ImportError> {
    import_json(bytes, None, base_dir, options)
}

fn import_json(
    json_bytes: &[u8],
    bin: Option<&[u8]>,
    base_dir: Option<&Path>,
    options: &ImportOptions,
) -> Result<Imported, ImportError> {
    let mut root: json::Root = serde_json::from_slice(json_bytes).map_err(|e| {
        let (line, column, what) = crate::core::json::syntax_place(&e);
        json_err(
            format!("JSON line {line}, column {column}"),
            format!("expected a glTF JSON document: {what}"),
        )
    })?;
    // Required extensions about meshes, materials or textures do not change skins, nodes or
    // animations: they are dropped (with a warning) so validation does not refuse the file.
    // Buffer compression (meshopt) does change how animation data is read: it stays required and
    // validation reports it as unsupported.
    let mut warnings = Vec::new();
    let (kept, ignored): (Vec<String>, Vec<String>) = std::mem::take(&mut root.extensions_required)
        .into_iter()
        .partition(|e| e.contains("meshopt"));
    root.extensions_required = kept;
    if !ignored.is_empty() {
        warnings.push(ImportWarning {
            place: Place::Json(String::from("extensionsRequired")),
            message: format!(
                "required extensions ignored (they do not concern animation): {}",
                ignored.join(", ")
            ),
        });
    }
    let doc = gltf::Document::from_json(root).map_err(|e| match e {
        gltf::Error::Validation(list) => {
            let (path, err) = list
                .first()
                .map(|(p, e)| (p.to_string(), e.to_string()))
                .unwrap_or_default();
            json_err(
                path,
                format!(
                    "expected a valid glTF document ({} problem(s)); first: {err}",
                    list.len()
                ),
            )
        }
        other => json_err("", format!("expected a glTF document: {other}")),
    })?;
    let root = doc.as_json();
    if let Some(fps) = options.gltf_fps
        && !(f64::from(fps) >= crate::core::limits::MIN_FPS && fps <= 10_000.0)
    {
        return Err(ImportError::new(
            Place::File,
            format!(
                "expected a resampling rate from {} to 10000 frames per second, found {fps}",
                crate::core::limits::MIN_FPS
            ),
        ));
    }
    let (buffers, buffer_bytes) = load_buffers(root, bin, base_dir)?;
    let rig = build_skeleton(root, &mut warnings)?;
    let mut accessors = Accessors::new(root, &buffers, buffer_bytes);
    // Every animation's channels and frame count first: the limits, per clip and over the whole
    // file, are checked before any clip is allocated.
    let per_frame = rig.skeleton.len().max(1);
    let mut prepared = Vec::with_capacity(root.animations.len());
    let mut samples = 0usize;
    for (ai, anim) in root.animations.iter().enumerate() {
        let p = prepare_animation(&mut accessors, &rig, ai, anim, options, &mut warnings)?;
        // Each clip is within the limit, so the sum of those so far and one more cannot overflow.
        samples += p.frames * per_frame;
        if samples > MAX_SAMPLES {
            return Err(json_err(
                format!("animations[{ai}]"),
                format!(
                    "expected at most {MAX_SAMPLES} joint samples (frames x {} joints) in all the animations of the file together; animations 0 to {ai} resample to {samples}",
                    rig.skeleton.len()
                ),
            ));
        }
        prepared.push(p);
    }
    drop(accessors);
    let mut clips = Vec::with_capacity(root.animations.len());
    for (ai, (anim, p)) in root.animations.iter().zip(prepared).enumerate() {
        clips.push(resample_animation(root, &rig, ai, anim, p, options)?);
    }
    if clips.is_empty() {
        warnings.push(ImportWarning {
            place: Place::Json(String::from("animations")),
            message: String::from("the file has no animation; no clip was made"),
        });
    }
    Ok(Imported { clips, warnings })
}

/// The data of each buffer of a file, shared between buffers that name the same external file.
type Buffers = Vec<Rc<Vec<u8>>>;

/// The data of every buffer of the file, in order, and the bytes they hold together. An external
/// file named by several buffers is read once and shared (and counted once); all the buffers
/// together may hold at most [`MAX_BUFFER_BYTES`].
fn load_buffers(
    root: &json::Root,
    bin: Option<&[u8]>,
    base_dir: Option<&Path>,
) -> Result<(Buffers, u64), ImportError> {
    let mut out = Vec::with_capacity(root.buffers.len());
    let mut external: HashMap<PathBuf, Rc<Vec<u8>>> = HashMap::new();
    // Bytes of the buffers so far (each external file once).
    let mut used = 0u64;
    let too_much = |path: String, used: u64, more: u64| {
        json_err(
            path,
            format!(
                "expected the buffers of the file to hold at most {MAX_BUFFER_BYTES} bytes ({} MiB) together; the buffers before this one hold {used} bytes and it adds {more}",
                MAX_BUFFER_BYTES >> 20
            ),
        )
    };
    for (i, b) in root.buffers.iter().enumerate() {
        let path = format!("buffers[{i}]");
        let need = b.byte_length.0;
        // The data, and whether it is new (not a file an earlier buffer named).
        let (data, new) = match &b.uri {
            None => {
                let Some(bin) = bin.filter(|_| i == 0) else {
                    return Err(json_err(
                        path,
                        "expected a `uri` (only buffer 0 of a GLB file may use the BIN chunk)",
                    ));
                };
                (Rc::new(bin.to_vec()), true)
            }
            Some(uri) if uri.starts_with("data:") => {
                let Some(comma) = uri.find(',') else {
                    return Err(json_err(path + ".uri", "expected `,` in the data URI"));
                };
                if !uri[..comma].ends_with(";base64") {
                    return Err(json_err(path + ".uri", "expected a base64 data URI"));
                }
                let data = decode_base64(&uri.as_bytes()[comma + 1..])
                    .ok_or_else(|| json_err(format!("{path}.uri"), "expected valid base64 data"))?;
                (Rc::new(data), true)
            }
            Some(uri) => {
                let Some(dir) = base_dir else {
                    return Err(json_err(
                        path + ".uri",
                        "an external buffer needs the file's folder (load from a path)",
                    ));
                };
                let rel = percent_decode(uri);
                if rel.contains("..") || rel.starts_with('/') || rel.contains(':') {
                    return Err(json_err(
                        path + ".uri",
                        format!("expected a relative path inside the file's folder, found `{uri}`"),
                    ));
                }
                let file = dir.join(&rel);
                if let Some(data) = external.get(&file) {
                    (Rc::clone(data), false)
                } else {
                    // A file within the limit for one buffer that would take the buffers past
                    // their limit together is refused before it is read.
                    let size = std::fs::metadata(&file).map_or(0, |m| m.len());
                    if size <= crate::core::limits::MAX_ANIM_FILE_BYTES
                        && used + size > MAX_BUFFER_BYTES
                    {
                        return Err(too_much(path + ".uri", used, size));
                    }
                    let data = crate::core::limits::read_limited(
                        &file,
                        crate::core::limits::MAX_ANIM_FILE_BYTES,
                    )
                    .map_err(|e| {
                        json_err(
                            format!("{path}.uri"),
                            format!("cannot read external buffer {}: {e}", file.display()),
                        )
                    })?;
                    let data = Rc::new(data);
                    external.insert(file, Rc::clone(&data));
                    (data, true)
                }
            }
        };
        let len = data.len() as u64;
        if new {
            if used + len > MAX_BUFFER_BYTES {
                return Err(too_much(path, used, len));
            }
            used += len;
        }
        if len < need {
            return Err(json_err(
                path + ".byteLength",
                format!("declares {need} bytes but only {len} are available"),
            ));
        }
        out.push(data);
    }
    Ok((out, used))
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Standard base64 (RFC 4648) with optional `=` padding; whitespace is not allowed.
pub(crate) fn decode_base64(s: &[u8]) -> Option<Vec<u8>> {
    let s = match s.iter().position(|&c| c == b'=') {
        Some(p) => {
            if s[p..].iter().any(|&c| c != b'=') || s.len() - p > 2 {
                return None;
            }
            &s[..p]
        }
        None => s,
    };
    if s.len() % 4 == 1 {
        return None;
    }
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(s.len() / 4 * 3 + 2);
    for chunk in s.chunks(4) {
        let mut acc = 0u32;
        for (k, &c) in chunk.iter().enumerate() {
            acc |= val(c)? << (18 - 6 * k);
        }
        let bytes = acc.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

/// The file's accessors, each decoded once however many samplers use it. All of them together
/// may decode to at most one value per byte of the file's buffers: data whose accessors do not
/// overlap holds no more (a normalised byte is one value), so more means accessors reading the
/// same bytes over and over, and the file is refused before the memory is taken.
struct Accessors<'a> {
    root: &'a json::Root,
    buffers: &'a [Rc<Vec<u8>>],
    /// The values of each accessor decoded so far, with their components per element.
    decoded: Vec<Option<(usize, Rc<Vec<f32>>)>>,
    /// Values decoded so far.
    values: usize,
    /// The most values allowed: the bytes of the file's buffers.
    max_values: usize,
}

impl<'a> Accessors<'a> {
    fn new(root: &'a json::Root, buffers: &'a [Rc<Vec<u8>>], buffer_bytes: u64) -> Self {
        Accessors {
            root,
            buffers,
            decoded: vec![None; root.accessors.len()],
            values: 0,
            max_values: usize::try_from(buffer_bytes).unwrap_or(usize::MAX),
        }
    }

    /// Accessor `index` as `components` floats per element, decoded on first use.
    fn get(&mut self, index: usize, components: usize) -> Result<Rc<Vec<f32>>, ImportError> {
        if let Some(Some((c, values))) = self.decoded.get(index)
            && *c == components
        {
            return Ok(Rc::clone(values));
        }
        let values = Rc::new(self.decode(index, components)?);
        self.values += values.len();
        self.decoded[index] = Some((components, Rc::clone(&values)));
        Ok(values)
    }

    /// Reads accessor `index` as `components` floats per element (normalised integers are
    /// converted to floats as the specification says). Every offset is bounds-checked before
    /// reading, and the values are counted against the file's limit before they are allocated.
    fn decode(&self, index: usize, components: usize) -> Result<Vec<f32>, ImportError> {
        let (root, buffers) = (self.root, self.buffers);
        let path = format!("accessors[{index}]");
        let acc = root
            .accessors
            .get(index)
            .ok_or_else(|| json_err(&path, "expected an existing accessor"))?;
        let json::validation::Checked::Valid(ty) = acc.type_ else {
            return Err(json_err(path + ".type", "expected a valid accessor type"));
        };
        let expected_components = ty.multiplicity();
        if expected_components != components {
            return Err(json_err(
                path + ".type",
                format!("expected {components} components per element, found {ty:?}"),
            ));
        }
        let json::validation::Checked::Valid(ct) = acc.component_type else {
            return Err(json_err(
                path + ".componentType",
                "expected a valid component type",
            ));
        };
        use json::accessor::ComponentType as C;
        let (size, convert): (usize, fn(&[u8]) -> f32) = match ct.0 {
            C::F32 => (4, |b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            C::I8 if acc.normalized => (1, |b| (f32::from(b[0] as i8) / 127.0).max(-1.0)),
            C::U8 if acc.normalized => (1, |b| f32::from(b[0]) / 255.0),
            C::I16 if acc.normalized => (2, |b| {
                (f32::from(i16::from_le_bytes([b[0], b[1]])) / 32767.0).max(-1.0)
            }),
            C::U16 if acc.normalized => {
                (2, |b| f32::from(u16::from_le_bytes([b[0], b[1]])) / 65535.0)
            }
            other => {
                return Err(json_err(
                    path + ".componentType",
                    format!("expected FLOAT or a normalized integer type, found {other:?}"),
                ));
            }
        };
        if acc.sparse.is_some() {
            return Err(json_err(
                path + ".sparse",
                "sparse accessors are not supported in animation data",
            ));
        }
        let count = acc.count.0 as usize;
        let elem = size * components;
        let Some(view_index) = acc.buffer_view else {
            return Err(json_err(
                path + ".bufferView",
                "expected a buffer view (animation data without one is not supported)",
            ));
        };
        let vpath = format!("bufferViews[{}]", view_index.value());
        let view = root
            .buffer_views
            .get(view_index.value())
            .ok_or_else(|| json_err(&vpath, "expected an existing buffer view"))?;
        let buffer = buffers
            .get(view.buffer.value())
            .ok_or_else(|| json_err(format!("{vpath}.buffer"), "expected an existing buffer"))?;
        let view_start = view.byte_offset.map_or(0, |o| o.0) as usize;
        let view_len = view.byte_length.0 as usize;
        let view_end = view_start
            .checked_add(view_len)
            .filter(|e| *e <= buffer.len())
            .ok_or_else(|| json_err(&vpath, "the view runs past the end of its buffer"))?;
        let view_bytes = &buffer[view_start..view_end];
        let stride = view.byte_stride.map_or(elem, |s| s.0);
        if stride < elem {
            return Err(json_err(
                vpath + ".byteStride",
                format!("expected a stride of at least {elem} bytes"),
            ));
        }
        let offset = acc.byte_offset.map_or(0, |o| o.0) as usize;
        if count == 0 {
            return Ok(Vec::new());
        }
        let needed = (count - 1)
            .checked_mul(stride)
            .and_then(|v| v.checked_add(offset))
            .and_then(|v| v.checked_add(elem));
        if needed.is_none_or(|n| n > view_bytes.len()) {
            return Err(json_err(
                path,
                format!(
                    "{count} elements of {elem} bytes (stride {stride}, offset {offset}) do not fit in the {}-byte buffer view",
                    view_bytes.len()
                ),
            ));
        }
        // Fits in the view (checked above), so no overflow.
        let values = count * components;
        if values > self.max_values - self.values {
            return Err(json_err(
                path,
                format!(
                    "expected the accessors of the file to decode to at most {} values in all (one per byte of its buffers; each accessor counts once), but this one adds {values} to the {} decoded so far: accessors read the same bytes over and over",
                    self.max_values, self.values
                ),
            ));
        }
        let mut out = Vec::with_capacity(values);
        for i in 0..count {
            let base = offset + i * stride;
            for c in 0..components {
                let at = base + c * size;
                let v = convert(&view_bytes[at..at + size]);
                if !v.is_finite() {
                    return Err(json_err(
                        path,
                        format!("element {i} component {c} is not a finite number"),
                    ));
                }
                out.push(v);
            }
        }
        Ok(out)
    }
}

/// The skeleton and how glTF nodes map onto it.
struct Rig {
    skeleton: Skeleton,
    /// Joint index of each node (`None` for nodes that are not joints).
    joint_of_node: Vec<Option<usize>>,
    /// Node index of each joint.
    node_of_joint: Vec<usize>,
    /// Static transform of the non-joint nodes between a joint and its joint parent (or the scene
    /// root), applied before the joint's own transform; `None` when identity.
    pre: Vec<Option<Transform>>,
}

fn node_local(node: &json::scene::Node) -> Transform {
    if let Some(m) = node.matrix {
        let m = Mat4::from_cols_array(&m);
        let (s, r, t) = m.to_scale_rotation_translation();
        if s.is_finite() && r.is_finite() && t.is_finite() {
            return Transform {
                translation: t,
                rotation: unit_quat(r),
                scale: s,
            };
        }
        return Transform::IDENTITY;
    }
    let r = node
        .rotation
        .map_or(Quat::IDENTITY, |q| unit_quat(Quat::from_array(q.0)));
    Transform {
        translation: node.translation.map_or(Vec3::ZERO, Vec3::from_array),
        rotation: r,
        scale: node.scale.map_or(Vec3::ONE, Vec3::from_array),
    }
}

fn build_skeleton(
    root: &json::Root,
    warnings: &mut Vec<ImportWarning>,
) -> Result<Rig, ImportError> {
    let nodes = &root.nodes;
    let n = nodes.len();
    // Parent of each node, from the children lists; a node with two parents is invalid.
    let mut parent: Vec<Option<usize>> = vec![None; n];
    for (i, node) in nodes.iter().enumerate() {
        for (k, c) in node.children.iter().flatten().enumerate() {
            let c = c.value();
            if c >= n || c == i {
                return Err(json_err(
                    format!("nodes[{i}].children[{k}]"),
                    "expected an existing node other than itself",
                ));
            }
            if parent[c].is_some() {
                return Err(json_err(
                    format!("nodes[{i}].children[{k}]"),
                    format!("node {c} has two parents; expected a tree"),
                ));
            }
            parent[c] = Some(i);
        }
    }
    // Depth-first order from the roots; detects cycles (nodes never reached).
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    for r in (0..n).filter(|&i| parent[i].is_none()) {
        let mut stack = vec![r];
        while let Some(i) = stack.pop() {
            if seen[i] {
                continue;
            }
            seen[i] = true;
            order.push(i);
            for c in nodes[i].children.iter().flatten().rev() {
                stack.push(c.value());
            }
        }
    }
    if let Some(i) = (0..n).find(|&i| !seen[i]) {
        return Err(json_err(
            format!("nodes[{i}]"),
            "the node hierarchy has a cycle; expected a tree",
        ));
    }
    let mut is_joint = vec![false; n];
    if let Some(skin) = root.skins.first() {
        for (k, j) in skin.joints.iter().enumerate() {
            let j = j.value();
            if j >= n {
                return Err(json_err(
                    format!("skins[0].joints[{k}]"),
                    "expected an existing node",
                ));
            }
            is_joint[j] = true;
        }
        if root.skins.len() > 1 {
            warnings.push(ImportWarning {
                place: Place::Json(String::from("skins")),
                message: format!(
                    "the file has {} skins; the skeleton is the first skin's joints",
                    root.skins.len()
                ),
            });
        }
    } else {
        is_joint.fill(true);
        if n > 0 {
            warnings.push(ImportWarning {
                place: Place::Json(String::from("skins")),
                message: String::from("no skin: every node is used as a joint"),
            });
        }
    }
    let mut joint_of_node = vec![None; n];
    let mut node_of_joint = Vec::new();
    let mut names = Vec::new();
    // The names taken so far, for the duplicate check (a linear search was quadratic in joints).
    let mut taken = std::collections::HashSet::new();
    let mut parents = Vec::new();
    let mut rest = Vec::new();
    let mut pre = Vec::new();
    for &i in &order {
        if !is_joint[i] {
            continue;
        }
        // Nearest joint ancestor, folding the static non-joint nodes on the way.
        let mut acc: Option<Transform> = None;
        let mut p = parent[i];
        let mut joint_parent = None;
        while let Some(pi) = p {
            if let Some(j) = joint_of_node[pi] {
                joint_parent = Some(j);
                break;
            }
            let t = node_local(&nodes[pi]);
            acc = Some(match acc {
                None => t,
                Some(a) => t.mul_transform(&a),
            });
            p = parent[pi];
        }
        let acc = acc.filter(|t| *t != Transform::IDENTITY);
        let j = node_of_joint.len();
        joint_of_node[i] = Some(j);
        node_of_joint.push(i);
        let mut name = nodes[i]
            .name
            .clone()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| format!("node{i}"));
        if taken.contains(&name) {
            name = format!("{name}_{i}");
        }
        taken.insert(name.clone());
        names.push(name);
        parents.push(joint_parent);
        let local = node_local(&nodes[i]);
        rest.push(match acc {
            Some(a) => a.mul_transform(&local),
            None => local,
        });
        pre.push(acc);
    }
    if names.len() > crate::core::limits::MAX_JOINTS {
        return Err(json_err(
            if root.skins.is_empty() {
                "nodes"
            } else {
                "skins"
            },
            format!(
                "expected at most {} joints, found {}",
                crate::core::limits::MAX_JOINTS,
                names.len()
            ),
        ));
    }
    Ok(Rig {
        skeleton: Skeleton::new(names, parents, rest),
        joint_of_node,
        node_of_joint,
        pre,
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Interp {
    Step,
    Linear,
    Cubic,
}

/// One channel's keys: times and values (`width` floats per value; cubic splines store
/// in-tangent, value, out-tangent per key), shared with the other channels of the same accessors.
struct Track {
    times: Rc<Vec<f32>>,
    values: Rc<Vec<f32>>,
    width: usize,
    interp: Interp,
}

impl Track {
    fn value(&self, key: usize, part: usize) -> &[f32] {
        // part: 0 in-tangent, 1 value, 2 out-tangent (cubic); linear and step have only values.
        let per_key = if self.interp == Interp::Cubic { 3 } else { 1 };
        let slot = if self.interp == Interp::Cubic {
            part
        } else {
            0
        };
        let start = (key * per_key + slot) * self.width;
        &self.values[start..start + self.width]
    }

    /// Evaluates the track at `t` into `out` (`width` floats). Rotations (width 4) are normalised.
    fn eval(&self, t: f32, out: &mut [f32]) {
        let k = self.times.len();
        if t <= self.times[0] || k == 1 {
            out.copy_from_slice(self.value(0, 1));
        } else if t >= self.times[k - 1] {
            out.copy_from_slice(self.value(k - 1, 1));
        } else {
            // Last key with time <= t.
            let i = self
                .times
                .partition_point(|&x| x <= t)
                .saturating_sub(1)
                .min(k - 2);
            let (t0, t1) = (self.times[i], self.times[i + 1]);
            let dt = t1 - t0;
            let s = if dt > 0.0 {
                ((t - t0) / dt).clamp(0.0, 1.0)
            } else {
                0.0
            };
            match self.interp {
                Interp::Step => out.copy_from_slice(self.value(i, 1)),
                Interp::Linear => {
                    let (a, b) = (self.value(i, 1), self.value(i + 1, 1));
                    if self.width == 4 {
                        let q = slerp(unit_quat(quat(a)), unit_quat(quat(b)), s);
                        out.copy_from_slice(&q.to_array());
                    } else {
                        // In f64: `b - a` overflows f32 for keys of opposite signs near f32::MAX;
                        // the result lies between `a` and `b`, so it fits f32.
                        for c in 0..self.width {
                            let (a, b) = (f64::from(a[c]), f64::from(b[c]));
                            out[c] = (a + (b - a) * f64::from(s)) as f32;
                        }
                    }
                }
                Interp::Cubic => {
                    let (v0, b0) = (self.value(i, 1), self.value(i, 2));
                    let (a1, v1) = (self.value(i + 1, 0), self.value(i + 1, 1));
                    let (s2, s3) = (s * s, s * s * s);
                    let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
                    let h10 = s3 - 2.0 * s2 + s;
                    let h01 = -2.0 * s3 + 3.0 * s2;
                    let h11 = s3 - s2;
                    // In f64, clamped to the f32 range: tangents can overshoot (values near
                    // f32::MAX gave infinities when computed in f32).
                    let (h00, h10, h01, h11, dt) = (
                        f64::from(h00),
                        f64::from(h10),
                        f64::from(h01),
                        f64::from(h11),
                        f64::from(dt),
                    );
                    for c in 0..self.width {
                        let v = h00 * f64::from(v0[c])
                            + h10 * dt * f64::from(b0[c])
                            + h01 * f64::from(v1[c])
                            + h11 * dt * f64::from(a1[c]);
                        out[c] = v.clamp(-f64::from(f32::MAX), f64::from(f32::MAX)) as f32;
                    }
                }
            }
        }
        if self.width == 4 {
            out.copy_from_slice(&unit_quat(quat(out)).to_array());
        }
    }
}

fn quat(v: &[f32]) -> Quat {
    Quat::from_xyzw(v[0], v[1], v[2], v[3])
}

/// `q` scaled to unit length, or the identity when `q` is (nearly) zero or not finite. Computed in
/// f64: an f32 length overflows for components beyond about 1.8e19 (found by fuzzing: such a key
/// normalised to NaN).
fn unit_quat(q: Quat) -> Quat {
    let d = q.as_dquat();
    let len = d.length();
    if q.is_finite() && len > 1e-6 && len.is_finite() {
        (d / len).as_quat()
    } else {
        Quat::IDENTITY
    }
}

/// One animation read and checked, ready to be resampled.
struct Prepared {
    /// Joint, slot (0 translation, 1 rotation, 2 scale) and keys of each channel used, in channel
    /// order (a later channel on the same joint and slot replaces an earlier one).
    tracks: Vec<(usize, usize, Track)>,
    /// First and last key time.
    start: f32,
    end: f32,
    /// Frames per second of the clip.
    fps: f32,
    /// The first frame resampled (1 when the first frame is skipped), and how many are.
    first: usize,
    frames: usize,
}

/// Reads the channels of animation `ai` and counts its frames at the resampling rate, within the
/// frame and sample limits of one clip; nothing the size of the clip is allocated.
fn prepare_animation(
    accessors: &mut Accessors<'_>,
    rig: &Rig,
    ai: usize,
    anim: &json::Animation,
    options: &ImportOptions,
    warnings: &mut Vec<ImportWarning>,
) -> Result<Prepared, ImportError> {
    use json::animation::{Interpolation as I, Property as P};
    let nj = rig.skeleton.len();
    let mut tracks = Vec::new();
    // The joints and slots given a track so far.
    let mut taken = HashSet::new();
    let mut start = 0.0f32;
    let mut end = 0.0f32;
    let mut warned_weights = false;
    for (ci, ch) in anim.channels.iter().enumerate() {
        let cpath = format!("animations[{ai}].channels[{ci}]");
        let json::validation::Checked::Valid(prop) = ch.target.path else {
            return Err(json_err(
                cpath + ".target.path",
                "expected a valid target path",
            ));
        };
        let (slot, width) = match prop {
            P::Translation => (0, 3),
            P::Rotation => (1, 4),
            P::Scale => (2, 3),
            P::MorphTargetWeights => {
                if !warned_weights {
                    warnings.push(ImportWarning {
                        place: Place::Json(cpath + ".target.path"),
                        message: String::from("morph-target weight channels are ignored"),
                    });
                    warned_weights = true;
                }
                continue;
            }
        };
        let node = ch.target.node.value();
        let Some(joint) = rig.joint_of_node.get(node).copied().flatten() else {
            warnings.push(ImportWarning {
                place: Place::Json(cpath + ".target.node"),
                message: format!("node {node} is not a skeleton joint; its channel is ignored"),
            });
            continue;
        };
        let si = ch.sampler.value();
        let spath = format!("animations[{ai}].samplers[{si}]");
        let sampler = anim
            .samplers
            .get(si)
            .ok_or_else(|| json_err(&cpath, "expected an existing sampler"))?;
        let interp = match sampler.interpolation {
            json::validation::Checked::Valid(I::Step) => Interp::Step,
            json::validation::Checked::Valid(I::Linear) => Interp::Linear,
            json::validation::Checked::Valid(I::CubicSpline) => Interp::Cubic,
            json::validation::Checked::Invalid => {
                return Err(json_err(
                    spath + ".interpolation",
                    "expected STEP, LINEAR or CUBICSPLINE",
                ));
            }
        };
        let times = accessors.get(sampler.input.value(), 1)?;
        if times.is_empty() {
            return Err(json_err(spath + ".input", "expected at least one key time"));
        }
        if times.windows(2).any(|w| w[1] < w[0]) {
            return Err(json_err(
                spath + ".input",
                "expected non-decreasing key times",
            ));
        }
        let values = accessors.get(sampler.output.value(), width)?;
        let per_key = if interp == Interp::Cubic { 3 } else { 1 };
        if values.len() != times.len() * per_key * width {
            return Err(json_err(
                spath + ".output",
                format!(
                    "expected {} output values for {} keys, found {}",
                    times.len() * per_key,
                    times.len(),
                    values.len() / width
                ),
            ));
        }
        start = start.min(times[0]);
        end = end.max(times[times.len() - 1]);
        if !taken.insert((joint, slot)) {
            warnings.push(ImportWarning {
                place: Place::Json(cpath.clone()),
                message: String::from(
                    "a second channel on the same node and path replaces the first",
                ),
            });
        }
        tracks.push((
            joint,
            slot,
            Track {
                times,
                values,
                width,
                interp,
            },
        ));
    }
    let fps = match options.gltf_fps {
        Some(fps) => fps,
        None => {
            let times = || tracks.iter().map(|(_, _, t)| t.times.as_slice());
            match key_rate(times(), start) {
                Some(fps) => fps,
                None => {
                    let closest = closest_key_rate(times());
                    if end > start {
                        let how = match closest {
                            Some(fps) => format!(
                                "its keys are not all evenly spaced: resampled at {fps} fps, the rate of most of them"
                            ),
                            None => format!(
                                "its keys are not evenly spaced: resampled at {DEFAULT_GLTF_FPS} fps, the default rate"
                            ),
                        };
                        warnings.push(ImportWarning {
                            place: Place::Json(format!("animations[{ai}]")),
                            message: format!(
                                "{how} (`inspect` and `sample` take another with --gltf-fps)"
                            ),
                        });
                    }
                    closest.unwrap_or(DEFAULT_GLTF_FPS)
                }
            }
        }
    };
    let span = (end - start).max(0.0);
    let intervals = (f64::from(span) * f64::from(fps) - 1e-3).ceil().max(0.0);
    let samples = (intervals + 1.0) * nj.max(1) as f64;
    if intervals + 1.0 > MAX_FRAMES as f64 || samples > MAX_SAMPLES as f64 {
        return Err(json_err(
            format!("animations[{ai}]"),
            format!(
                "{span} s at {fps} fps on {nj} joints exceeds the limits ({MAX_FRAMES} frames, {MAX_SAMPLES} joint samples)"
            ),
        ));
    }
    let frames = intervals as usize + 1;
    let first = usize::from(options.skip_first_frame && frames > 0);
    if options.skip_first_frame {
        warnings.push(ImportWarning {
            place: Place::Json(format!("animations[{ai}]")),
            message: String::from("skipped the first frame as requested (skip first frame option)"),
        });
    }
    Ok(Prepared {
        tracks,
        start,
        end,
        fps,
        first,
        frames: frames - first,
    })
}

/// The rate glTF animations are resampled at when their keys are not evenly spaced (nor mostly:
/// [`closest_key_rate`]).
pub const DEFAULT_GLTF_FPS: f32 = 30.0;

/// The lowest key rate a clip keeps: sparser keys are resampled at the smallest multiple of
/// their rate at or above it (keys stay on frames, and a timeline of them is not a few frames).
pub const MIN_KEY_RATE: f64 = 24.0;

/// The key rate of an animation whose channels' key `times` all lie on one even grid from
/// `start`: `1 / (smallest gap between two distinct key times)`, an integer when it is within
/// 1/1000 of one (a 24 fps export's 0.041666668 s gap is 24 fps), if every key is within 1/100
/// of a frame of the grid and the rate is at most 1000 fps; below [`MIN_KEY_RATE`], its smallest
/// multiple at or above it. `None` otherwise, or for fewer than two distinct times.
pub fn key_rate<'a>(times: impl Iterator<Item = &'a [f32]>, start: f32) -> Option<f32> {
    let all = distinct_times(times);
    let gap = all
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::INFINITY, f64::min);
    let rate = rate_of_gap(gap)?;
    let on_grid = all.iter().all(|&t| {
        let x = (t - f64::from(start)) * rate;
        (x - x.round()).abs() < 0.01
    });
    on_grid.then(|| raised(rate))
}

/// Share of the gaps between an animation's consecutive distinct key times that must be its
/// smallest gap for [`closest_key_rate`] to resample at that gap's rate.
pub const MOSTLY_EVEN: f64 = 0.8;

/// [`key_rate`] for an animation whose keys are mostly evenly spaced: the rate of its smallest
/// gap (raised as [`key_rate`] raises it) where at least [`MOSTLY_EVEN`] of the gaps between its
/// consecutive distinct key times are that gap (to 1 %). The Fox's Run is keyed every 1/24 s but
/// for one jump of 4.8/24 s: resampled at 24 fps, as its other clips, the keys before the jump
/// on frames. `None` otherwise.
pub fn closest_key_rate<'a>(times: impl Iterator<Item = &'a [f32]>) -> Option<f32> {
    let all = distinct_times(times);
    let gaps: Vec<f64> = all.windows(2).map(|w| w[1] - w[0]).collect();
    let gap = gaps.iter().copied().fold(f64::INFINITY, f64::min);
    let rate = rate_of_gap(gap)?;
    let even = gaps
        .iter()
        .filter(|&&g| (g - gap).abs() < 0.01 * gap)
        .count();
    (even as f64 >= MOSTLY_EVEN * gaps.len() as f64).then(|| raised(rate))
}

/// The distinct key times (to 1e-6 s), sorted.
fn distinct_times<'a>(times: impl Iterator<Item = &'a [f32]>) -> Vec<f64> {
    let mut all: Vec<f64> = times.flatten().map(|&t| f64::from(t)).collect();
    all.sort_by(f64::total_cmp);
    all.dedup_by(|a, b| (*a - *b).abs() < 1e-6);
    all
}

/// `1 / gap`, an integer when it is within 1/1000 of one; `None` past 1000 fps or for no gap.
fn rate_of_gap(gap: f64) -> Option<f64> {
    if !(gap.is_finite() && gap > 0.0) {
        return None;
    }
    let mut rate = 1.0 / gap;
    if (rate - rate.round()).abs() < 1e-3 * rate {
        rate = rate.round();
    }
    (rate > 0.0 && rate <= 1000.0).then_some(rate)
}

/// `rate`, or below [`MIN_KEY_RATE`] its smallest multiple at or above it.
fn raised(rate: f64) -> f32 {
    (rate * (MIN_KEY_RATE / rate).ceil().max(1.0)) as f32
}

/// Resamples a prepared animation into a clip.
fn resample_animation(
    root: &json::Root,
    rig: &Rig,
    ai: usize,
    anim: &json::Animation,
    prepared: Prepared,
    options: &ImportOptions,
) -> Result<Clip, ImportError> {
    let nj = rig.skeleton.len();
    let Prepared {
        tracks: list,
        start,
        end,
        fps,
        first,
        frames,
    } = prepared;
    // Per joint: translation, rotation, scale tracks.
    let mut tracks: Vec<[Option<&Track>; 3]> = vec![[None; 3]; nj];
    for (joint, slot, track) in &list {
        tracks[*joint][*slot] = Some(track);
    }
    let mut rotations: Vec<Quat> = Vec::with_capacity(frames * nj);
    let mut translations = Vec::with_capacity(frames * nj);
    let mut scales = Vec::with_capacity(frames * nj);
    let mut buf = [0.0f32; 4];
    for f in first..first + frames {
        let t = (f64::from(start) + f as f64 / f64::from(fps)).min(f64::from(end)) as f32;
        for j in 0..nj {
            let node = &root.nodes[rig.node_of_joint[j]];
            let own = node_local(node);
            let mut local = own;
            if let Some(tr) = tracks[j][0] {
                tr.eval(t, &mut buf[..3]);
                local.translation = Vec3::new(buf[0], buf[1], buf[2]);
            }
            if let Some(tr) = tracks[j][1] {
                tr.eval(t, &mut buf);
                local.rotation = Quat::from_vec4(Vec4::from_array(buf));
            }
            if let Some(tr) = tracks[j][2] {
                tr.eval(t, &mut buf[..3]);
                local.scale = Vec3::new(buf[0], buf[1], buf[2]);
            }
            if let Some(pre) = &rig.pre[j] {
                local = pre.mul_transform(&local);
            }
            let mut q = local.rotation;
            if let Some(prev) = rotations.len().checked_sub(nj).map(|p| rotations[p + j])
                && prev.dot(q) < 0.0
            {
                q = -q;
            }
            rotations.push(q);
            translations.push(local.translation);
            scales.push(local.scale);
        }
    }
    let clip = Clip {
        name: anim
            .name
            .clone()
            .unwrap_or_else(|| format!("animation{ai}")),
        skeleton: rig.skeleton.clone(),
        fps,
        frame_count: frames,
        unit_cm: options.unit_cm.unwrap_or(100.0),
        rotations,
        translations,
        scales,
    };
    // Composing huge (finite) node transforms can still overflow f32: refuse rather than return
    // infinities.
    clip.validate().map_err(|e| {
        json_err(
            format!("animations[{ai}]"),
            format!("expected transforms within the f32 range: {e}"),
        )
    })?;
    Ok(clip)
}
