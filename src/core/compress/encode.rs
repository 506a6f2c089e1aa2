//! The encoder: track classification (rest pose, constant, animated), range reduction, segments and
//! the automatic per-segment, per-track bit widths. See `docs/COMPRESSION.md`.
// Parallel per-joint / per-component arrays are indexed together; index loops read clearer.
#![allow(clippy::needless_range_loop)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use glam::{Quat, Vec3};

use super::bits::BitWriter;
use super::format::{
    AnimatedTrack, CompressedClip, NO_DROP, Plan, TlcError, TrackKind, TrackStore,
    component_params, dequantize_component, kept_components, key_count_for, key_frame,
    quantize_component, rotation_from_components, write_plan,
};
use super::metric::{ErrorReport, Shell, clip_has_scale, clip_pose, local_to_model, measure};
use super::quat_pack::{pack_smallest_three, unpack_smallest_three};
use super::settings::{BitRate, CompressSettings, WIDTHS};
use crate::core::anim::fk::compose;
use crate::core::anim::{Clip, Transform};

/// Why compression did not produce a clip.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompressError {
    #[error("invalid clip: {0}")]
    InvalidClip(String),
    #[error("invalid settings: {0}")]
    InvalidSettings(String),
    #[error("cancelled")]
    Cancelled,
    #[error("internal error: the encoder wrote a file its reader rejects: {0}")]
    Internal(#[from] TlcError),
}

/// Progress reporting and cancellation for a background compression.
pub struct Control<'a> {
    /// Called with the fraction done, 0 to 1.
    pub progress: &'a mut dyn FnMut(f32),
    /// Set from another thread to stop; `compress` then returns [`CompressError::Cancelled`].
    pub cancel: &'a AtomicBool,
}

/// What one compression produced, with everything the app shows.
#[derive(Debug, Clone)]
pub struct CompressResult {
    pub clip: CompressedClip,
    pub settings: CompressSettings,
    /// 10 float32 per joint per frame (rotation 4, translation 3, scale 3).
    pub raw_bytes: usize,
    /// Size of the `.tlc` file.
    pub compressed_bytes: usize,
    /// `raw_bytes / compressed_bytes`.
    pub ratio: f64,
    /// The error metric measured by decoding the file at every original frame.
    pub error: ErrorReport,
    pub compress_ms: f64,
}

/// Raw size of a clip: 10 float32 per joint per frame.
pub fn raw_size_bytes(clip: &Clip) -> usize {
    clip.frame_count * clip.joint_count() * 40
}

/// Compresses a clip without progress reporting.
pub fn compress(clip: &Clip, settings: &CompressSettings) -> Result<CompressResult, CompressError> {
    let cancel = AtomicBool::new(false);
    compress_with(
        clip,
        settings,
        Control {
            progress: &mut |_| {},
            cancel: &cancel,
        },
    )
}

/// Compresses a clip, reporting progress and honouring cancellation (for a background thread).
pub fn compress_with(
    clip: &Clip,
    settings: &CompressSettings,
    control: Control,
) -> Result<CompressResult, CompressError> {
    let start = Instant::now();
    settings
        .validate()
        .map_err(CompressError::InvalidSettings)?;
    clip.validate().map_err(CompressError::InvalidClip)?;
    check_clip(clip)?;
    let plan = build_plan(clip, settings, control)?;
    let bytes = write_plan(&plan);
    let compressed = CompressedClip::from_bytes(bytes)?;
    let compress_ms = start.elapsed().as_secs_f64() * 1000.0;
    let error = measure_clip(clip, &compressed, settings.shell_cm);
    let raw_bytes = raw_size_bytes(clip);
    let compressed_bytes = compressed.size_bytes();
    Ok(CompressResult {
        clip: compressed,
        settings: *settings,
        raw_bytes,
        compressed_bytes,
        ratio: raw_bytes as f64 / compressed_bytes as f64,
        error,
        compress_ms,
    })
}

/// The error metric of a compressed clip against its original, decoding every original frame.
pub fn measure_clip(original: &Clip, compressed: &CompressedClip, shell_cm: f32) -> ErrorReport {
    measure(original, shell_cm, |f, out| {
        compressed.sample_pose_at_frame(f as f32, out)
    })
}

fn check_clip(clip: &Clip) -> Result<(), CompressError> {
    let bad = |m: String| Err(CompressError::InvalidClip(m));
    if clip.frame_count == 0 {
        return bad("the clip has no frame".into());
    }
    if clip.joint_count() == 0 || clip.joint_count() >= 0xFFFF {
        return bad(format!(
            "joint count {} must be 1..65534",
            clip.joint_count()
        ));
    }
    if clip.frame_count > u32::MAX as usize / 2 {
        return bad(format!("{} frames is too many", clip.frame_count));
    }
    if !(clip.unit_cm.is_finite() && clip.unit_cm > 0.0) {
        return bad(format!("unit_cm must be positive, found {}", clip.unit_cm));
    }
    if let Some(n) = clip.skeleton.names.iter().find(|n| n.len() > 255) {
        return bad(format!("joint name longer than 255 bytes: {n:.40}..."));
    }
    let finite =
        clip.rotations.iter().all(|q| q.is_finite())
            && clip.translations.iter().all(|v| v.is_finite())
            && clip.scales.iter().all(|v| v.is_finite())
            && clip.skeleton.rest.iter().all(|r| {
                r.translation.is_finite() && r.rotation.is_finite() && r.scale.is_finite()
            });
    if !finite {
        return bad("the clip holds a non-finite value".into());
    }
    Ok(())
}

/// Per-joint descendants (including the joint), in index order.
fn subtrees(parents: &[Option<usize>]) -> Vec<Vec<usize>> {
    let n = parents.len();
    let mut sub: Vec<Vec<usize>> = (0..n).map(|j| vec![j]).collect();
    for i in (0..n).rev() {
        if let Some(p) = parents[i] {
            let child = std::mem::take(&mut sub[i]);
            sub[p].extend_from_slice(&child);
            sub[i] = child;
        }
    }
    for s in &mut sub {
        s.sort_unstable();
    }
    sub
}

/// A working copy of the clip's keys in transforms, with original model-space poses.
struct Keys {
    joints: usize,
    /// Original local transforms, key-major.
    local: Vec<Transform>,
    /// Original model transforms, key-major.
    model: Vec<Transform>,
}

impl Keys {
    fn pose(&self, k: usize) -> &[Transform] {
        &self.local[k * self.joints..(k + 1) * self.joints]
    }
    fn model(&self, k: usize) -> &[Transform] {
        &self.model[k * self.joints..(k + 1) * self.joints]
    }
}

fn track_value(t: &Transform, kind: usize) -> [f32; 4] {
    match kind {
        0 => t.rotation.to_array(),
        1 => [t.translation.x, t.translation.y, t.translation.z, 0.0],
        _ => [t.scale.x, t.scale.y, t.scale.z, 0.0],
    }
}

fn set_track(t: &mut Transform, kind: usize, v: [f32; 4]) {
    match kind {
        0 => t.rotation = Quat::from_array(v),
        1 => t.translation = Vec3::new(v[0], v[1], v[2]),
        _ => t.scale = Vec3::new(v[0], v[1], v[2]),
    }
}

/// Largest error over the subtree `sub` (its first entry is its root) at key `k` when the local
/// pose is `local`. With `exact_ancestors` the root's parent model transform comes from `local`
/// (forward kinematics along the chain), otherwise from the original clip.
#[allow(clippy::too_many_arguments)]
fn subtree_error(
    skel_parents: &[Option<usize>],
    sub: &[usize],
    keys: &Keys,
    k: usize,
    local: &[Transform],
    scratch: &mut [Transform],
    shell: &Shell,
    exact_ancestors: bool,
) -> f32 {
    let model_o = keys.model(k);
    let root = sub[0];
    let parent_model = match skel_parents[root] {
        Some(p) if exact_ancestors => Some(chain_model(skel_parents, local, p)),
        Some(p) => Some(model_o[p]),
        None => None,
    };
    let mut worst = 0.0f32;
    for &d in sub {
        scratch[d] = if d == root {
            match &parent_model {
                Some(m) => compose(m, &local[d]),
                None => local[d],
            }
        } else {
            // Descendants come after their parent in `sub` (index order).
            match skel_parents[d] {
                Some(p) => compose(&scratch[p], &local[d]),
                None => local[d],
            }
        };
        worst = worst.max(shell.error_cm(&model_o[d], &scratch[d]));
    }
    worst
}

/// Model transform of joint `j` by forward kinematics along its chain.
fn chain_model(parents: &[Option<usize>], local: &[Transform], j: usize) -> Transform {
    let mut chain = smallvec::SmallVec::<[usize; 32]>::new();
    let mut c = Some(j);
    while let Some(x) = c {
        chain.push(x);
        c = parents[x];
    }
    let mut m = local[chain[chain.len() - 1]];
    for &x in chain.iter().rev().skip(1) {
        m = compose(&m, &local[x]);
    }
    m
}

fn build_plan(
    clip: &Clip,
    settings: &CompressSettings,
    control: Control,
) -> Result<Plan, CompressError> {
    let n = clip.joint_count();
    let frame_count = clip.frame_count as u32;
    let step = u32::from(settings.frame_step);
    let key_count = key_count_for(frame_count, step);
    let has_scale = clip_has_scale(clip);
    let shell = Shell::new(settings.shell_cm, clip.unit_cm, has_scale);
    let parents = &clip.skeleton.parents;
    let sub = subtrees(parents);

    // Keys (decimated frames) with their original model poses.
    let mut keys = Keys {
        joints: n,
        local: vec![Transform::IDENTITY; key_count as usize * n],
        model: vec![Transform::IDENTITY; key_count as usize * n],
    };
    for k in 0..key_count as usize {
        let f = key_frame(k as u32, step, frame_count) as usize;
        clip_pose(clip, f, &mut keys.local[k * n..(k + 1) * n]);
        let (l, m) = (
            &keys.local[k * n..(k + 1) * n],
            &mut keys.model[k * n..(k + 1) * n],
        );
        local_to_model(&clip.skeleton, l, m);
    }
    let nk = key_count as usize;

    // 1. Classify tracks, parents first, each decision checked over the joint's subtree with the
    //    elisions decided so far applied (so elision errors never add up past the budget).
    let budget_elide = settings.elision_budget_cm();
    let mut elided_local = keys.local.clone();
    let mut stores = vec![[TrackStore::Animated; 3]; n];
    let mut scratch = vec![Transform::IDENTITY; n];
    for j in 0..n {
        for kind in 0..3 {
            if (control.cancel).load(Ordering::Relaxed) {
                return Err(CompressError::Cancelled);
            }
            let rest = track_value(&clip.skeleton.rest[j], kind);
            let mut candidates: Vec<(TrackStore, [f32; 4])> = Vec::new();
            if settings.rest_pose_elision {
                candidates.push((TrackStore::Default, rest));
            }
            if settings.constant_tracks {
                let v = constant_candidate(&keys, j, kind);
                candidates.push((TrackStore::Constant(v), v));
            }
            for (store, value) in candidates {
                let mut ok = true;
                let mut trial_frames = Vec::with_capacity(nk);
                for k in 0..nk {
                    let local = &mut elided_local[k * n..(k + 1) * n];
                    let old = local[j];
                    set_track(&mut local[j], kind, value);
                    let e = subtree_error(
                        parents,
                        &sub[j],
                        &keys,
                        k,
                        local,
                        &mut scratch,
                        &shell,
                        true,
                    );
                    trial_frames.push(old);
                    if e > budget_elide {
                        ok = false;
                        break;
                    }
                }
                if ok {
                    stores[j][kind] = store;
                    break;
                }
                for (k, old) in trial_frames.into_iter().enumerate() {
                    elided_local[k * n + j] = old;
                }
            }
        }
    }

    // 2. Animated tracks with their per-clip ranges.
    let fmt = settings.rotation_format;
    let mut tracks = Vec::new();
    for (j, js) in stores.iter().enumerate() {
        for (kind, store) in js.iter().enumerate() {
            if *store != TrackStore::Animated {
                continue;
            }
            let (comps, packed_bits, tk) = match kind {
                0 => match fmt.ranged_components() {
                    Some(c) => (c as u8, 0u8, TrackKind::Rotation),
                    None => (
                        0,
                        fmt.packed_bits().unwrap_or(32) as u8,
                        TrackKind::Rotation,
                    ),
                },
                1 => (3, 0, TrackKind::Translation),
                _ => (3, 0, TrackKind::Scale),
            };
            tracks.push(AnimatedTrack {
                joint: j as u16,
                kind: tk,
                comps,
                packed_bits,
                clip_min: [0.0; 4],
                clip_ext: [0.0; 4],
            });
        }
    }

    // 3. Segments: ranges, widths, data.
    let segment_frames = if settings.segment_frames == 0 {
        key_count.max(1)
    } else {
        u32::from(settings.segment_frames)
    };
    let segment_count = key_count.div_ceil(segment_frames) as usize;
    let ranged: Vec<usize> = (0..tracks.len()).filter(|&t| tracks[t].comps > 0).collect();
    let nr = ranged.len();
    let seg_span = |s: usize| {
        let k0 = s * segment_frames as usize;
        k0..(k0 + segment_frames as usize).min(nk)
    };
    // Dropped component of each drop-W rotation in each segment: the one whose smallest magnitude
    // over the segment is largest, so rebuilding it is well conditioned.
    let mut all_drops = vec![NO_DROP; segment_count * nr];
    for s in 0..segment_count {
        for (ri, &t) in ranged.iter().enumerate() {
            let tr = &tracks[t];
            if !tr.drops_component() {
                continue;
            }
            let mut min_abs = [f32::INFINITY; 4];
            for k in seg_span(s) {
                let a = keys.pose(k)[usize::from(tr.joint)].rotation.to_array();
                for c in 0..4 {
                    min_abs[c] = min_abs[c].min(a[c].abs());
                }
            }
            let mut best = 3;
            for c in 0..3 {
                if min_abs[c] > min_abs[best] {
                    best = c;
                }
            }
            all_drops[s * nr + ri] = best as u8;
        }
    }
    // Per-clip ranges of each component, over the values actually stored.
    for (ri, &t) in ranged.iter().enumerate() {
        let tr = &mut tracks[t];
        let kind = tr.kind as usize;
        let mut lo = [f32::INFINITY; 4];
        let mut hi = [f32::NEG_INFINITY; 4];
        for s in 0..segment_count {
            let drop = all_drops[s * nr + ri];
            let kept = kept_components(drop);
            for k in seg_span(s) {
                let pose = &keys.pose(k)[usize::from(tr.joint)];
                for (slot, &c) in kept.iter().enumerate().take(usize::from(tr.comps)) {
                    let v = slot_value(pose, kind, drop, slot);
                    lo[c] = lo[c].min(v);
                    hi[c] = hi[c].max(v);
                }
            }
        }
        for c in 0..tr.range_comps() {
            if lo[c] > hi[c] {
                // Never stored (always the dropped component).
                (lo[c], hi[c]) = (0.0, 0.0);
            }
            tr.clip_min[c] = lo[c];
            // Round the extent up so min + ext covers max in f32.
            let mut ext = hi[c] - lo[c];
            while lo[c] + ext < hi[c] {
                ext = f32::from_bits(ext.to_bits() + 1);
            }
            tr.clip_ext[c] = ext;
        }
    }
    let mut widths = Vec::with_capacity(segment_count * ranged.len());
    let mut ranges = Vec::with_capacity(segment_count * ranged.len());
    let mut drops = Vec::with_capacity(segment_count * ranged.len());
    let mut data = Vec::new();
    // Decoded values of the static pose (default and constant tracks) as the decoder has them.
    let mut static_pose = clip.skeleton.rest.clone();
    for (j, js) in stores.iter().enumerate() {
        for (kind, s) in js.iter().enumerate() {
            if let TrackStore::Constant(v) = s {
                set_track(&mut static_pose[j], kind, *v);
            }
        }
    }
    let mut opt = Optimizer::new(&clip.skeleton.parents, &sub, shell);
    for s in 0..segment_count {
        if control.cancel.load(Ordering::Relaxed) {
            return Err(CompressError::Cancelled);
        }
        (control.progress)(s as f32 / segment_count as f32);
        let span = seg_span(s);
        let (k0, k1) = (span.start, span.end);
        let seg_drops = &all_drops[s * nr..(s + 1) * nr];
        // Per ranged track: segment range per stored slot.
        let mut seg_ranges = Vec::with_capacity(ranged.len());
        for (ri, &t) in ranged.iter().enumerate() {
            let tr = &tracks[t];
            let kind = tr.kind as usize;
            let drop = seg_drops[ri];
            let kept = kept_components(drop);
            let mut r = [(0u8, 255u8); 4];
            if settings.segment_ranges {
                for (slot, out) in r.iter_mut().enumerate().take(usize::from(tr.comps)) {
                    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
                    for k in k0..k1 {
                        let v = slot_value(&keys.pose(k)[usize::from(tr.joint)], kind, drop, slot);
                        lo = lo.min(v);
                        hi = hi.max(v);
                    }
                    let c = kept[slot];
                    *out = segment_range(tr.clip_min[c], tr.clip_ext[c], lo, hi);
                }
            }
            seg_ranges.push(r);
        }
        let seg_range_opt = |i: usize, c: usize| -> Option<(u8, u8)> {
            if settings.segment_ranges {
                Some(seg_ranges[i][c])
            } else {
                None
            }
        };
        // Widths.
        let seg_widths: Vec<u8> = match settings.bits {
            BitRate::Fixed {
                rotation_bits,
                translation_bits,
                scale_bits,
            } => ranged
                .iter()
                .map(|&t| match tracks[t].kind {
                    TrackKind::Rotation => rotation_bits,
                    TrackKind::Translation => translation_bits,
                    TrackKind::Scale => scale_bits,
                })
                .collect(),
            BitRate::Auto { error_cm } => opt.choose(
                &keys,
                k0..k1,
                &static_pose,
                &tracks,
                &ranged,
                seg_drops,
                &|i, c| seg_range_opt(i, c),
                error_cm,
            ),
        };
        // Data: keys back to back, tracks in order.
        let mut w = BitWriter::new();
        for k in k0..k1 {
            let pose = keys.pose(k);
            let mut ri = 0;
            for tr in &tracks {
                let j = usize::from(tr.joint);
                let kind = tr.kind as usize;
                if tr.comps == 0 {
                    let bits = u32::from(tr.packed_bits);
                    let packed = pack_smallest_three(pose[j].rotation, bits);
                    w.write(packed as u32, 32.min(bits));
                    if bits > 32 {
                        w.write((packed >> 32) as u32, bits - 32);
                    }
                    continue;
                }
                let width = seg_widths[ri];
                let drop = seg_drops[ri];
                let kept = kept_components(drop);
                for c in 0..usize::from(tr.comps) {
                    let v = slot_value(&pose[j], kind, drop, c);
                    let (o, sc) = component_params(
                        tr.clip_min[kept[c]],
                        tr.clip_ext[kept[c]],
                        seg_range_opt(ri, c),
                        width,
                    );
                    w.write(quantize_component(v, o, sc, width), u32::from(width));
                }
                ri += 1;
            }
        }
        data.extend_from_slice(&w.finish());
        widths.extend_from_slice(&seg_widths);
        ranges.extend_from_slice(&seg_ranges);
        drops.extend_from_slice(seg_drops);
    }
    (control.progress)(1.0);
    Ok(Plan {
        name: clip.name.clone(),
        skeleton: clip.skeleton.clone(),
        frame_count,
        fps: clip.fps,
        unit_cm: clip.unit_cm,
        frame_step: settings.frame_step,
        segment_frames,
        key_count,
        rotation_format: fmt,
        has_scale,
        segment_ranges: settings.segment_ranges,
        stores,
        tracks,
        widths,
        ranges,
        drops,
        data,
    })
}

/// The value stored in slot `slot` of a track: for a rotation that drops component `drop`, the
/// kept components in order with the sign chosen so the dropped one is `>= 0`.
#[inline]
fn slot_value(t: &Transform, kind: usize, drop: u8, slot: usize) -> f32 {
    match kind {
        0 => {
            let a = t.rotation.to_array();
            if drop == NO_DROP {
                a[slot]
            } else {
                let sign = if a[usize::from(drop)] < 0.0 {
                    -1.0
                } else {
                    1.0
                };
                a[kept_components(drop)[slot]] * sign
            }
        }
        1 => t.translation.to_array()[slot],
        _ => t.scale.to_array()[slot],
    }
}

/// The 8-bit segment range (min, extent) inside the clip range that covers `[lo, hi]`.
fn segment_range(clip_min: f32, clip_ext: f32, lo: f32, hi: f32) -> (u8, u8) {
    if clip_ext <= 0.0 {
        return (0, 0);
    }
    let mut qmin = (((lo - clip_min) / clip_ext) * 255.0)
        .floor()
        .clamp(0.0, 255.0) as u8;
    let mut qmax = (((hi - clip_min) / clip_ext) * 255.0)
        .ceil()
        .clamp(0.0, 255.0) as u8;
    // Make sure the decoded range really covers [lo, hi] in f32 arithmetic.
    while qmin > 0 && component_params(clip_min, clip_ext, Some((qmin, 0)), 8).0 > lo {
        qmin -= 1;
    }
    if qmax < qmin {
        qmax = qmin;
    }
    while qmax < 255 && {
        let (o, s) = component_params(clip_min, clip_ext, Some((qmin, qmax - qmin)), 8);
        o + s * 255.0 < hi
    } {
        qmax += 1;
    }
    (qmin, qmax - qmin)
}

/// The constant a track would be stored as: the middle of each component's range (rotations:
/// the normalised mean on the first key's hemisphere).
fn constant_candidate(keys: &Keys, j: usize, kind: usize) -> [f32; 4] {
    let nk = keys.local.len() / keys.joints;
    if kind == 0 {
        let first = keys.pose(0)[j].rotation;
        let mut sum = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        for k in 0..nk {
            let q = keys.pose(k)[j].rotation;
            sum += if q.dot(first) < 0.0 { -q } else { q };
        }
        let q = if sum.length_squared() > 0.0 {
            sum.normalize()
        } else {
            first
        };
        return q.to_array();
    }
    let mut lo = [f32::INFINITY; 4];
    let mut hi = [f32::NEG_INFINITY; 4];
    for k in 0..nk {
        let v = track_value(&keys.pose(k)[j], kind);
        for c in 0..3 {
            lo[c] = lo[c].min(v[c]);
            hi[c] = hi[c].max(v[c]);
        }
    }
    [
        (lo[0] + hi[0]) * 0.5,
        (lo[1] + hi[1]) * 0.5,
        (lo[2] + hi[2]) * 0.5,
        0.0,
    ]
}

/// The automatic bit selection for one segment (see `docs/COMPRESSION.md`).
struct Optimizer<'a> {
    parents: &'a [Option<usize>],
    sub: &'a [Vec<usize>],
    /// Ancestors of each joint including itself.
    chain: Vec<Vec<usize>>,
    shell: Shell,
}

/// Index of the highest width level.
const TOP: usize = WIDTHS.len() - 1;

impl<'a> Optimizer<'a> {
    fn new(parents: &'a [Option<usize>], sub: &'a [Vec<usize>], shell: Shell) -> Self {
        let chain = (0..parents.len())
            .map(|j| {
                let mut c = vec![j];
                let mut p = parents[j];
                while let Some(x) = p {
                    c.push(x);
                    p = parents[x];
                }
                c
            })
            .collect();
        Self {
            parents,
            sub,
            chain,
            shell,
        }
    }

    /// Decoded value of ranged track `t` at key `k` for a width level.
    #[allow(clippy::too_many_arguments)]
    fn decoded(
        &self,
        keys: &Keys,
        k: usize,
        tr: &AnimatedTrack,
        drop: u8,
        range: &dyn Fn(usize) -> Option<(u8, u8)>,
        level: usize,
    ) -> [f32; 4] {
        let width = WIDTHS[level];
        let kind = tr.kind as usize;
        let kept = kept_components(drop);
        let mut c = [0.0f32; 4];
        for (i, slot) in c.iter_mut().enumerate().take(usize::from(tr.comps)) {
            let v = slot_value(&keys.pose(k)[usize::from(tr.joint)], kind, drop, i);
            let comp = kept[i];
            let (o, s) = component_params(tr.clip_min[comp], tr.clip_ext[comp], range(i), width);
            *slot = dequantize_component(quantize_component(v, o, s, width), o, s, width);
        }
        c
    }

    fn apply(&self, local: &mut Transform, tr: &AnimatedTrack, drop: u8, c: [f32; 4]) {
        match tr.kind {
            TrackKind::Rotation => local.rotation = rotation_from_components(tr.comps, drop, c),
            TrackKind::Translation => local.translation = Vec3::new(c[0], c[1], c[2]),
            TrackKind::Scale => local.scale = Vec3::new(c[0], c[1], c[2]),
        }
    }

    /// Widths (bits) for the ranged tracks of one segment.
    #[allow(clippy::too_many_arguments)]
    fn choose(
        &mut self,
        keys: &Keys,
        span: std::ops::Range<usize>,
        static_pose: &[Transform],
        tracks: &[AnimatedTrack],
        ranged: &[usize],
        drops: &[u8],
        range: &dyn Fn(usize, usize) -> Option<(u8, u8)>,
        budget_cm: f32,
    ) -> Vec<u8> {
        let n = keys.joints;
        let nk = span.len();
        // Current decoded local poses of the segment: static pose + animated tracks.
        let mut cur = vec![Transform::IDENTITY; nk * n];
        for (i, k) in span.clone().enumerate() {
            let pose = &mut cur[i * n..(i + 1) * n];
            pose.copy_from_slice(static_pose);
            for tr in tracks {
                let j = usize::from(tr.joint);
                let src = keys.pose(k)[j];
                match tr.kind {
                    TrackKind::Rotation => {
                        pose[j].rotation = if tr.comps == 0 {
                            let b = u32::from(tr.packed_bits);
                            unpack_smallest_three(pack_smallest_three(src.rotation, b), b)
                        } else {
                            src.rotation
                        }
                    }
                    TrackKind::Translation => pose[j].translation = src.translation,
                    TrackKind::Scale => pose[j].scale = src.scale,
                }
            }
        }
        let mut scratch = vec![Transform::IDENTITY; n];
        let mut levels = vec![TOP; ranged.len()];
        let set_level = |cur: &mut [Transform], ri: usize, level: usize, this: &Self| {
            let tr = &tracks[ranged[ri]];
            let j = usize::from(tr.joint);
            for (i, k) in span.clone().enumerate() {
                let c = this.decoded(keys, k, tr, drops[ri], &|c| range(ri, c), level);
                this.apply(&mut cur[i * n + j], tr, drops[ri], c);
            }
        };
        // Phase 1: each track alone (everything else as it is now: original or static) gets the
        // lowest level that keeps its subtree within the budget.
        for ri in 0..ranged.len() {
            let j = usize::from(tracks[ranged[ri]].joint);
            let (mut lo, mut hi) = (0usize, TOP);
            while lo < hi {
                let mid = (lo + hi) / 2;
                set_level(&mut cur, ri, mid, self);
                let mut worst = 0.0f32;
                for (i, k) in span.clone().enumerate() {
                    let local = &cur[i * n..(i + 1) * n];
                    worst = worst.max(subtree_error(
                        self.parents,
                        &self.sub[j],
                        keys,
                        k,
                        local,
                        &mut scratch,
                        &self.shell,
                        false,
                    ));
                    if worst > budget_cm {
                        break;
                    }
                }
                if worst <= budget_cm {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            levels[ri] = lo;
            // Back to the original values while the other tracks are tried alone.
            set_level(&mut cur, ri, TOP, self);
        }
        for ri in 0..ranged.len() {
            set_level(&mut cur, ri, levels[ri], self);
        }
        // Joint -> its ranged tracks.
        let mut joint_tracks: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (ri, &t) in ranged.iter().enumerate() {
            joint_tracks[usize::from(tracks[t].joint)].push(ri);
        }
        let mut model = vec![Transform::IDENTITY; n];
        let mut joint_err = vec![0.0f32; n];
        let eval_all =
            |cur: &[Transform], joint_err: &mut [f32], model: &mut [Transform], this: &Self| {
                joint_err.iter_mut().for_each(|e| *e = 0.0);
                for (i, k) in span.clone().enumerate() {
                    let local = &cur[i * n..(i + 1) * n];
                    local_to_model_parents(this.parents, local, model);
                    let mo = keys.model(k);
                    for j in 0..n {
                        let e = this.shell.error_cm(&mo[j], &model[j]);
                        if e > joint_err[j] {
                            joint_err[j] = e;
                        }
                    }
                }
            };
        // Error of one joint over the segment (chain-only forward kinematics).
        let eval_joint = |cur: &[Transform], j: usize, this: &Self| -> f32 {
            let chain = &this.chain[j];
            let mut worst = 0.0f32;
            for (i, k) in span.clone().enumerate() {
                let local = &cur[i * n..(i + 1) * n];
                let mut m = local[chain[chain.len() - 1]];
                for &c in chain.iter().rev().skip(1) {
                    m = compose(&m, &local[c]);
                }
                worst = worst.max(this.shell.error_cm(&keys.model(k)[j], &m));
            }
            worst
        };
        // Phase 2: while a joint is over budget, raise the track on its chain that buys the most
        // error per added bit.
        let mut guard = 0;
        loop {
            guard += 1;
            eval_all(&cur, &mut joint_err, &mut model, self);
            let (worst_j, worst_e) = joint_err
                .iter()
                .copied()
                .enumerate()
                .fold((0, 0.0f32), |a, (j, e)| if e > a.1 { (j, e) } else { a });
            if worst_e <= budget_cm || guard > 64 * ranged.len() + 64 {
                break;
            }
            let mut best: Option<(usize, f32)> = None;
            for &cj in &self.chain[worst_j] {
                for &ri in &joint_tracks[cj] {
                    if levels[ri] >= TOP {
                        continue;
                    }
                    let old = levels[ri];
                    set_level(&mut cur, ri, old + 1, self);
                    let e = eval_joint(&cur, worst_j, self);
                    set_level(&mut cur, ri, old, self);
                    let tr = &tracks[ranged[ri]];
                    let cost = f32::from(WIDTHS[old + 1] - WIDTHS[old]) * f32::from(tr.comps);
                    let score = (worst_e - e) / cost;
                    if best.is_none_or(|(_, s)| score > s) {
                        best = Some((ri, score));
                    }
                }
            }
            let Some((ri, _)) = best else { break };
            levels[ri] += 1;
            set_level(&mut cur, ri, levels[ri], self);
        }
        // Phase 3: try to lower each track (largest first) while every joint stays in budget.
        for _pass in 0..2 {
            let mut order: Vec<usize> = (0..ranged.len()).filter(|&ri| levels[ri] > 0).collect();
            order.sort_by_key(|&ri| {
                std::cmp::Reverse(
                    u32::from(WIDTHS[levels[ri]]) * u32::from(tracks[ranged[ri]].comps),
                )
            });
            let mut changed = false;
            for ri in order {
                if levels[ri] == 0 {
                    continue;
                }
                let old = levels[ri];
                set_level(&mut cur, ri, old - 1, self);
                eval_all(&cur, &mut joint_err, &mut model, self);
                let sub = &self.sub[usize::from(tracks[ranged[ri]].joint)];
                if sub.iter().all(|&d| joint_err[d] <= budget_cm) {
                    levels[ri] = old - 1;
                    changed = true;
                } else {
                    set_level(&mut cur, ri, old, self);
                }
            }
            if !changed {
                break;
            }
        }
        levels.iter().map(|&l| WIDTHS[l]).collect()
    }
}

fn local_to_model_parents(parents: &[Option<usize>], local: &[Transform], model: &mut [Transform]) {
    for (i, (l, parent)) in local.iter().zip(parents).enumerate() {
        model[i] = match parent {
            Some(p) => compose(&model[*p], l),
            None => *l,
        };
    }
}
