//! The encoder: track classification (rest pose, constant, animated), range reduction, segments and
//! the automatic per-segment, per-track bit widths. See `docs/COMPRESSION.md`.
// Parallel per-joint / per-component arrays are indexed together; index loops read clearer.
#![allow(clippy::needless_range_loop)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use glam::{Quat, Vec3};
use rayon::prelude::*;

use super::bits::BitWriter;
use super::format::{
    AnimatedTrack, CODE_SCALE, CompressedClip, NO_DROP, Plan, RAW_CODE, SegmentPlan, TlcError,
    TrackKind, TrackStore, dequantize_slot, kept_components, key_count_for, key_frame,
    quantize_slot, rotation_from_slots, slot_params, track_shape, write_plan,
};
use super::metric::{
    BETWEEN_FRACTIONS, ErrorReport, GOLDEN_TIMES, Shell, clip_has_scale, clip_pose, golden_times,
    local_to_model, measure,
};
use super::quat_pack::{pack_smallest_three, unpack_smallest_three};
use super::settings::{BitRate, CompressSettings, WIDTHS, width_code};
use crate::core::anim::fk::compose;
use crate::core::anim::{Clip, Transform, nlerp};

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
    raw_bytes(clip.frame_count, clip.joint_count())
}

/// Raw size of `frames` frames of `joints` joints: 10 float32 per joint per frame (what every
/// compression ratio of this crate is measured against).
pub fn raw_bytes(frames: usize, joints: usize) -> usize {
    frames * joints * 40
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

/// The error metric of a compressed clip against its original: decoded at every original frame,
/// between frames and at the scattered times (see [`measure`]).
pub fn measure_clip(original: &Clip, compressed: &CompressedClip, shell_cm: f32) -> ErrorReport {
    measure(original, shell_cm, |p, out| {
        compressed.sample_pose_at_frame(p, out)
    })
}

/// What the format needs of a clip beyond [`Clip::validate`] (which [`compress_with`] runs first).
fn check_clip(clip: &Clip) -> Result<(), CompressError> {
    let bad = |m: String| Err(CompressError::InvalidClip(m));
    if clip.frame_count == 0 {
        return bad(
            "the clip has no frames (a skeleton without motion); expected at least one frame \
             to compress"
                .into(),
        );
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
    if let Some((j, n)) = clip
        .skeleton
        .names
        .iter()
        .enumerate()
        .find(|(_, n)| n.len() > 255)
    {
        return bad(format!(
            "joint {j} has a name of {} bytes (`{n:.40}...`); expected at most 255 bytes, \
             the .tlc format's limit (rename the joint in the source file)",
            n.len()
        ));
    }
    if let Some(j) =
        clip.skeleton.rest.iter().position(|r| {
            !(r.translation.is_finite() && r.rotation.is_finite() && r.scale.is_finite())
        })
    {
        return bad(format!(
            "the rest pose of joint {j} (`{}`) holds a value that is not a finite number",
            clip.skeleton.names.get(j).map_or("", String::as_str)
        ));
    }
    // What the reader refuses, refused here with the clip's words (the encoder's own check of
    // the file it wrote said "internal error" and named a byte of a file never written).
    use crate::core::limits::{MAX_FPS, MAX_FRAMES, MAX_JOINT_SAMPLES, MAX_JOINTS, MIN_FPS};
    if !(MIN_FPS..=MAX_FPS).contains(&f64::from(clip.fps)) {
        return bad(format!(
            "{} frames per second; expected {MIN_FPS} to {MAX_FPS}",
            clip.fps
        ));
    }
    if !crate::core::limits::unit_cm_ok(f64::from(clip.unit_cm)) {
        return bad(crate::core::limits::unit_cm_message(f64::from(
            clip.unit_cm,
        )));
    }
    if clip.joint_count() > MAX_JOINTS
        || clip.frame_count > MAX_FRAMES
        || clip.frame_count * clip.joint_count() > MAX_JOINT_SAMPLES
    {
        return bad(format!(
            "{} frames of {} joints; expected at most {MAX_JOINTS} joints, {MAX_FRAMES} frames \
             and {MAX_JOINT_SAMPLES} joint samples",
            clip.frame_count,
            clip.joint_count()
        ));
    }
    let name = |j: usize| clip.skeleton.names.get(j).map_or("", String::as_str);
    if let Some(j) = clip
        .skeleton
        .rest
        .iter()
        .position(|r| (r.rotation.length() - 1.0).abs() > 1e-3)
    {
        return bad(format!(
            "the rest rotation of joint {j} (`{}`) has length {}; expected a unit quaternion",
            name(j),
            clip.skeleton.rest[j].rotation.length()
        ));
    }
    // Each track's values quantise over their range (largest minus smallest) and decode in
    // centimetres: both must stay finite (a root at 3e38 in one frame and -3e38 in the next
    // made an infinite step). And no pose may reach past float range in model space, where the
    // error is measured (a NaN error there was dropped by `max`, and a budget "met"): bounded
    // along each chain by the largest translation and scale of each joint on it.
    let n = clip.joint_count();
    let mut reach = vec![0.0f32; n];
    let mut grow = vec![1.0f32; n];
    for j in 0..n {
        for (what, values) in [("translation", &clip.translations), ("scale", &clip.scales)] {
            let (mut lo, mut hi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
            for f in 0..clip.frame_count {
                let v = values[f * n + j];
                lo = lo.min(v);
                hi = hi.max(v);
            }
            let span = hi - lo;
            let far = lo.abs().max(hi.abs()) * clip.unit_cm;
            if !(span.is_finite() && far.is_finite()) {
                return bad(format!(
                    "the {what} of joint {j} (`{}`) runs from {lo} to {hi}: expected values whose \
                     range and size in centimetres are finite numbers",
                    name(j)
                ));
            }
            // Joints come parents first.
            let (parent_reach, parent_grow) =
                clip.skeleton.parents[j].map_or((0.0, 1.0), |p| (reach[p], grow[p]));
            let largest = lo.abs().max(hi.abs()).max_element();
            if what == "translation" {
                reach[j] = parent_reach + parent_grow * largest * clip.unit_cm;
            } else {
                grow[j] = parent_grow * largest.max(1.0);
                reach[j] = reach[j].max(parent_reach);
            }
        }
        // Far below float range: the error's vertices, differences and squares stay finite.
        const REACH_CM: f32 = 1e30;
        if !(reach[j] <= REACH_CM && grow[j] <= REACH_CM) {
            return bad(format!(
                "joint {j} (`{}`) can reach {:e} cm from the origin (its chain's translations, \
                 scaled); expected poses within {REACH_CM:e} cm",
                name(j),
                reach[j]
            ));
        }
    }
    Ok(())
}

/// Every joint's subtree (the joint, then its descendants, parents before children) as a slice
/// of one depth-first order: memory linear in the joints (a list per joint was quadratic in the
/// depth: 3 GB for a 20,000-joint chain).
struct Subtrees {
    order: Vec<usize>,
    /// Each joint's subtree as `order[start..end]`.
    span: Vec<(usize, usize)>,
}

impl Subtrees {
    fn new(parents: &[Option<usize>]) -> Self {
        let n = parents.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (j, p) in parents.iter().enumerate() {
            match *p {
                Some(p) if p < n => children[p].push(j),
                _ => roots.push(j),
            }
        }
        let mut order = Vec::with_capacity(n);
        let mut span = vec![(0, 0); n];
        // Depth-first without recursion (a chain may be thousands deep): a joint is entered
        // (its start noted, its children pushed) and left once its children are done.
        let mut stack: Vec<(usize, bool)> = roots.iter().rev().map(|&r| (r, false)).collect();
        while let Some((j, done)) = stack.pop() {
            if done {
                span[j].1 = order.len();
                continue;
            }
            span[j].0 = order.len();
            order.push(j);
            stack.push((j, true));
            stack.extend(children[j].iter().rev().map(|&c| (c, false)));
        }
        Self { order, span }
    }

    /// Joint `j` and its descendants, `j` first, each after its parent.
    fn of(&self, j: usize) -> &[usize] {
        let (a, b) = self.span[j];
        &self.order[a..b]
    }
}

/// Joint `j`, its parent, ... up to its root (on the stack for chains up to 32 deep: it is
/// walked for every trial of the bit selection).
fn chain(parents: &[Option<usize>], j: usize) -> smallvec::SmallVec<[usize; 32]> {
    let mut c = smallvec::smallvec![j];
    let mut p = parents[j];
    while let Some(x) = p {
        c.push(x);
        p = parents[x];
    }
    c
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
            // Descendants come after their parent in `sub` (depth-first order).
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
    let chain = chain(parents, j);
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
    let shell = Shell::new(settings.shell_cm, clip.unit_cm);
    let parents = &clip.skeleton.parents;
    let sub = Subtrees::new(parents);

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
                        sub.of(j),
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

    // 2. Animated tracks, grouped by kind (rotations, translations, scales), each by joint.
    let fmt = settings.rotation_format;
    let mut tracks = Vec::new();
    for kind in TrackKind::ALL {
        for (j, js) in stores.iter().enumerate() {
            if js[kind as usize] != TrackStore::Animated {
                continue;
            }
            let (slots, packed_bits) = track_shape(kind, fmt);
            tracks.push(AnimatedTrack {
                joint: j as u16,
                kind,
                slots,
                packed_bits,
                min: [0.0; 4],
                step: [0.0; 4],
            });
        }
    }
    let segment_frames = if settings.segment_frames == 0 {
        key_count.max(1)
    } else {
        u32::from(settings.segment_frames)
    };
    let segment_count = if tracks.is_empty() {
        0
    } else {
        key_count.div_ceil(segment_frames) as usize
    };
    let seg_span = |s: usize| {
        let k0 = s * segment_frames as usize;
        k0..(k0 + segment_frames as usize).min(nk)
    };

    // 3. The dropped component of each drop-W rotation in each segment: the one whose smallest
    //    magnitude over the segment is largest, so rebuilding it is well conditioned.
    let nt = tracks.len();
    let mut drops = vec![NO_DROP; segment_count * nt];
    for s in 0..segment_count {
        for (t, tr) in tracks.iter().enumerate() {
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
            drops[s * nt + t] = best as u8;
        }
    }
    // 4. Clip range of each slot over the values it stores in every segment.
    for (t, tr) in tracks.iter_mut().enumerate() {
        let slots = usize::from(tr.slots);
        let mut lo = [f32::INFINITY; 4];
        let mut hi = [f32::NEG_INFINITY; 4];
        for s in 0..segment_count {
            for k in seg_span(s) {
                let v = slot_values(&keys.pose(k)[usize::from(tr.joint)], tr, drops[s * nt + t]);
                for c in 0..slots {
                    lo[c] = lo[c].min(v[c]);
                    hi[c] = hi[c].max(v[c]);
                }
            }
        }
        for c in 0..slots {
            if lo[c] > hi[c] {
                (lo[c], hi[c]) = (0.0, 0.0);
            }
            tr.min[c] = lo[c];
            // Round the step up until min + 255 step covers the maximum in f32.
            let mut st = (hi[c] - lo[c]) / 255.0;
            while lo[c] + st * 255.0 < hi[c] {
                st = f32::from_bits(st.to_bits() + 1);
            }
            tr.step[c] = st;
        }
    }

    // 5. Segments: ranges, widths, keys.
    let mut static_pose = clip.skeleton.rest.clone();
    for (j, js) in stores.iter().enumerate() {
        for (kind, s) in js.iter().enumerate() {
            if let TrackStore::Constant(v) = s {
                set_track(&mut static_pose[j], kind, *v);
            }
        }
    }
    let ctx = SegmentContext {
        clip,
        keys: &keys,
        tracks: &tracks,
        parents,
        sub: &sub,
        shell,
        static_pose: &static_pose,
        between: settings.frame_step == 1,
        animated: {
            let mut a = vec![[false; 2]; n];
            for tr in &tracks {
                match tr.kind {
                    TrackKind::Rotation => a[usize::from(tr.joint)][0] = true,
                    TrackKind::Translation => a[usize::from(tr.joint)][1] = true,
                    TrackKind::Scale => {}
                }
            }
            a
        },
        golden: if settings.frame_step == 1 && clip.frame_count >= 2 {
            let mut p: Vec<f32> = golden_times(clip.duration_s(), GOLDEN_TIMES)
                .into_iter()
                .map(|t| t * clip.fps)
                .collect();
            p.sort_by(f32::total_cmp);
            p
        } else {
            Vec::new()
        },
    };
    // Per segment: the 8-bit segment ranges, then the widths. Segments are chosen in parallel
    // without the interval that crosses into them from the previous segment; a second, ordered
    // pass checks each of those intervals with the previous segment's final keys and chooses the
    // segment again with it when it is over the budget (rarely).
    let segment_ranges = |s: usize| -> Vec<[(u8, u8); 4]> {
        let span = seg_span(s);
        let seg_drops = &drops[s * nt..(s + 1) * nt];
        tracks
            .iter()
            .enumerate()
            .map(|(t, tr)| {
                let mut r = [(0u8, 255u8); 4];
                if settings.segment_ranges {
                    for (c, out) in r.iter_mut().enumerate().take(usize::from(tr.slots)) {
                        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
                        for k in span.clone() {
                            let v =
                                slot_values(&keys.pose(k)[usize::from(tr.joint)], tr, seg_drops[t]);
                            lo = lo.min(v[c]);
                            hi = hi.max(v[c]);
                        }
                        *out = segment_range(tr.min[c], tr.step[c], lo, hi);
                    }
                }
                r
            })
            .collect()
    };
    let fixed_codes: Option<Vec<[u8; 4]>> = match settings.bits {
        BitRate::Fixed {
            rotation_bits,
            translation_bits,
            scale_bits,
        } => Some(
            tracks
                .iter()
                .map(|tr| {
                    let bits = match tr.kind {
                        TrackKind::Rotation => rotation_bits,
                        TrackKind::Translation => translation_bits,
                        TrackKind::Scale => scale_bits,
                    };
                    [width_code(bits).unwrap_or(RAW_CODE); 4]
                })
                .collect(),
        ),
        BitRate::Auto { .. } => None,
    };
    let budget = match settings.bits {
        BitRate::Auto { error_cm } => error_cm,
        BitRate::Fixed { .. } => f32::INFINITY,
    };
    // (ranges, codes, decoded local pose of the last key)
    type Chosen = (Vec<[(u8, u8); 4]>, Vec<[u8; 4]>, Vec<Transform>);
    let choose = |s: usize, ranges: Vec<[(u8, u8); 4]>, prev: Option<&[Transform]>| -> Chosen {
        let seg_drops = &drops[s * nt..(s + 1) * nt];
        let span = seg_span(s);
        let (codes, last) = match &fixed_codes {
            // Fixed widths choose nothing: only the segment's last key is decoded (for the next
            // segment's start), not every key and every in-between sample of the segment. A
            // whole-clip segment (the presets of one segment) of a long take otherwise held
            // about 640 bytes a joint and frame here: gigabytes for minutes of a large rig.
            Some(c) => {
                let mut work =
                    SegmentWork::new(&ctx, span.end - 1..span.end, seg_drops, &ranges, None);
                work.set_codes(c);
                (c.clone(), work.last_key_local())
            }
            None => {
                let mut work = SegmentWork::new(&ctx, span, seg_drops, &ranges, prev);
                let codes = work.choose(budget, control.cancel);
                work.set_codes(&codes);
                (codes, work.last_key_local())
            }
        };
        (ranges, codes, last)
    };
    let mut chosen: Vec<Chosen> = Vec::with_capacity(segment_count);
    let chunk = 4 * rayon::current_num_threads().max(1);
    for start in (0..segment_count).step_by(chunk) {
        if control.cancel.load(Ordering::Relaxed) {
            return Err(CompressError::Cancelled);
        }
        (control.progress)(0.9 * start as f32 / segment_count.max(1) as f32);
        let end = (start + chunk).min(segment_count);
        let part: Vec<Chosen> = (start..end)
            .into_par_iter()
            .map(|s| choose(s, segment_ranges(s), None))
            .collect();
        chosen.extend(part);
    }
    // A choice cut short by a cancel (a whole-clip segment is one long choice) is not written.
    if control.cancel.load(Ordering::Relaxed) {
        return Err(CompressError::Cancelled);
    }
    if fixed_codes.is_none() && ctx.between {
        for s in 1..segment_count {
            if control.cancel.load(Ordering::Relaxed) {
                return Err(CompressError::Cancelled);
            }
            (control.progress)(0.9 + 0.1 * s as f32 / segment_count as f32);
            let prev = chosen[s - 1].2.clone();
            let seg_drops = &drops[s * nt..(s + 1) * nt];
            let over = {
                let (ranges, codes, _) = &chosen[s];
                let mut work = SegmentWork::new(&ctx, seg_span(s), seg_drops, ranges, Some(&prev));
                work.set_codes(codes);
                work.evaluate() > budget
            };
            if over {
                let ranges = std::mem::take(&mut chosen[s].0);
                chosen[s] = choose(s, ranges, Some(&prev));
            }
        }
        if control.cancel.load(Ordering::Relaxed) {
            return Err(CompressError::Cancelled);
        }
    }
    let mut segments = Vec::with_capacity(segment_count);
    for (s, (ranges, codes, _)) in chosen.into_iter().enumerate() {
        let span = seg_span(s);
        let seg_drops = &drops[s * nt..(s + 1) * nt];
        // Keys back to back, tracks in order.
        let mut w = BitWriter::new();
        let mut key_bits = 0u32;
        for (i, k) in span.clone().enumerate() {
            let pose = keys.pose(k);
            for (t, tr) in tracks.iter().enumerate() {
                let j = usize::from(tr.joint);
                if tr.slots == 0 {
                    let bits = u32::from(tr.packed_bits);
                    let packed = pack_smallest_three(pose[j].rotation, bits);
                    w.write(packed as u32, 32.min(bits));
                    if bits > 32 {
                        w.write((packed >> 32) as u32, bits - 32);
                    }
                    if i == 0 {
                        key_bits += bits;
                    }
                    continue;
                }
                let v = slot_values(&pose[j], tr, seg_drops[t]);
                for c in 0..usize::from(tr.slots) {
                    let code = codes[t][c];
                    let (qmin, qext) = ranges[t][c];
                    let (o, sc) = slot_params(tr.min[c], tr.step[c], qmin, qext, code);
                    let width = u32::from(WIDTHS[usize::from(code)]);
                    w.write(quantize_slot(v[c], o, sc, code), width);
                    if i == 0 {
                        key_bits += width;
                    }
                }
            }
        }
        segments.push(SegmentPlan {
            codes,
            drops: seg_drops.to_vec(),
            ranges,
            key_bits,
            data: w.finish(),
        });
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
        has_scale: clip_has_scale(clip),
        segment_ranges: settings.segment_ranges,
        stores,
        tracks,
        segments,
    })
}

/// The values a track stores in its slots: for a rotation that drops component `drop`, the kept
/// components in order with the sign chosen so the dropped one is `>= 0`; a full rotation's x, y,
/// z, w; a translation's or scale's x, y, z.
#[inline]
fn slot_values(t: &Transform, tr: &AnimatedTrack, drop: u8) -> [f32; 4] {
    match tr.kind {
        TrackKind::Rotation => {
            let a = t.rotation.to_array();
            if drop == NO_DROP {
                return a;
            }
            let sign = if a[usize::from(drop)] < 0.0 {
                -1.0
            } else {
                1.0
            };
            let kept = kept_components(drop);
            [a[kept[0]] * sign, a[kept[1]] * sign, a[kept[2]] * sign, 0.0]
        }
        TrackKind::Translation => t.translation.extend(0.0).to_array(),
        TrackKind::Scale => t.scale.extend(0.0).to_array(),
    }
}

/// The 8-bit segment range `(qmin, qext)`, in steps of the clip range, that covers `[lo, hi]`.
fn segment_range(min: f32, step: f32, lo: f32, hi: f32) -> (u8, u8) {
    if step <= 0.0 {
        return (0, 0);
    }
    let mut qmin = ((lo - min) / step).floor().clamp(0.0, 255.0) as u8;
    let mut qmax = ((hi - min) / step).ceil().clamp(0.0, 255.0) as u8;
    // Make sure the decoded range really covers [lo, hi] in f32 arithmetic.
    while qmin > 0 && min + step * f32::from(qmin) > lo {
        qmin -= 1;
    }
    if qmax < qmin {
        qmax = qmin;
    }
    while qmax < 255 && min + step * f32::from(qmax) < hi {
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

/// What every segment's bit selection shares.
struct SegmentContext<'a> {
    clip: &'a Clip,
    keys: &'a Keys,
    /// Animated tracks in file order.
    tracks: &'a [AnimatedTrack],
    parents: &'a [Option<usize>],
    /// Each joint's subtree (the joint first, then its descendants, parents first).
    sub: &'a Subtrees,
    shell: Shell,
    /// The decoded static pose (rest and constant tracks).
    static_pose: &'a [Transform],
    /// Measure between keys too (off with decimation, where keys are not consecutive frames).
    between: bool,
    /// Per joint: whether its rotation and its translation are animated tracks. The decoder
    /// copies the others from the static pose between keys too, where an nlerp or lerp of a
    /// value with itself can move it by a rounding step (on a take in metres, a tenth of a
    /// 0.01 cm budget).
    animated: Vec<[bool; 2]>,
    /// The measure's scattered times ([`golden_times`]) as frame positions, sorted: each
    /// segment measures those between its keys too, so that the budget holds at every time the
    /// report measures.
    golden: Vec<f32>,
}

/// A sample the bit selection measures: a key of the segment, or a time between two keys.
#[derive(Debug, Clone, Copy)]
enum Sample {
    Key(usize),
    /// Between key `a` (or the previous segment's last key when `None`) and key `b`.
    Between(Option<usize>, usize, f32),
}

/// The automatic bit selection of one segment (see `docs/COMPRESSION.md`). Samples are the
/// segment's keys and, between every two consecutive keys (the previous segment's last key and
/// this segment's first included), the [`BETWEEN_FRACTIONS`] and the measure's scattered times
/// that fall there; the original at a between sample is
/// the clip interpolated as the runtime does (nlerp, lerp), the decoded pose is the decoded keys
/// interpolated as the decoder does. Model transforms and errors of the current choice are cached
/// per sample and joint; a change to one track recomputes only its joint's subtree.
struct SegmentWork<'a> {
    ctx: &'a SegmentContext<'a>,
    span: std::ops::Range<usize>,
    drops: &'a [u8],
    ranges: &'a [[(u8, u8); 4]],
    prev_last: Option<&'a [Transform]>,
    samples: Vec<Sample>,
    /// Original model transforms, `[sample * n + joint]`.
    orig_model: Vec<Transform>,
    /// Decoded local transforms of the keys, `[key * n + joint]`.
    cur: Vec<Transform>,
    /// Model transforms and errors of the current choice, `[sample * n + joint]`.
    model: Vec<Transform>,
    err: Vec<f32>,
    /// Current width codes per track and slot.
    codes: Vec<[u8; 4]>,
    scratch: Vec<Transform>,
}

impl<'a> SegmentWork<'a> {
    fn new(
        ctx: &'a SegmentContext<'a>,
        span: std::ops::Range<usize>,
        drops: &'a [u8],
        ranges: &'a [[(u8, u8); 4]],
        prev_last: Option<&'a [Transform]>,
    ) -> Self {
        let n = ctx.keys.joints;
        let nk = span.len();
        let mut samples: Vec<Sample> = (0..nk).map(Sample::Key).collect();
        if ctx.between {
            for &a in &BETWEEN_FRACTIONS {
                if prev_last.is_some() {
                    samples.push(Sample::Between(None, 0, a));
                }
                for i in 1..nk {
                    samples.push(Sample::Between(Some(i - 1), i, a));
                }
            }
            // The scattered times in this segment's intervals (the one from the previous
            // segment's last key included when it is given).
            let lo = (span.start - usize::from(prev_last.is_some())) as f32;
            let hi = (span.end - 1) as f32;
            let from = ctx.golden.partition_point(|&p| p < lo);
            for &p in ctx.golden[from..].iter().take_while(|&&p| p < hi) {
                let k = p as usize;
                let alpha = p - k as f32;
                if alpha > 0.0 {
                    let a = (k >= span.start).then(|| k - span.start);
                    samples.push(Sample::Between(a, k + 1 - span.start, alpha));
                }
            }
        }
        let ns = samples.len();
        let mut orig_local = vec![Transform::IDENTITY; ns * n];
        let mut orig_model = vec![Transform::IDENTITY; ns * n];
        for (si, smp) in samples.iter().enumerate() {
            let out = &mut orig_local[si * n..(si + 1) * n];
            match *smp {
                Sample::Key(i) => out.copy_from_slice(ctx.keys.pose(span.start + i)),
                Sample::Between(a, b, alpha) => {
                    let ka = a.map_or_else(|| span.start - 1, |a| span.start + a);
                    let (pa, pb) = (ctx.keys.pose(ka), ctx.keys.pose(span.start + b));
                    for j in 0..n {
                        out[j] = interp(&pa[j], &pb[j], alpha);
                    }
                }
            }
            if let Sample::Key(i) = *smp {
                orig_model[si * n..(si + 1) * n].copy_from_slice(ctx.keys.model(span.start + i));
            } else {
                local_to_model(
                    &ctx.clip.skeleton,
                    &orig_local[si * n..(si + 1) * n],
                    &mut orig_model[si * n..(si + 1) * n],
                );
            }
        }
        // Start from the original values (the top level) on every animated track.
        let mut cur = vec![Transform::IDENTITY; nk * n];
        for i in 0..nk {
            let pose = &mut cur[i * n..(i + 1) * n];
            pose.copy_from_slice(ctx.static_pose);
            let src = ctx.keys.pose(span.start + i);
            for tr in ctx.tracks {
                let j = usize::from(tr.joint);
                match tr.kind {
                    TrackKind::Rotation => pose[j].rotation = src[j].rotation,
                    TrackKind::Translation => pose[j].translation = src[j].translation,
                    TrackKind::Scale => pose[j].scale = src[j].scale,
                }
            }
        }
        let mut w = Self {
            ctx,
            span,
            drops,
            ranges,
            prev_last,
            samples,
            orig_model,
            cur,
            model: vec![Transform::IDENTITY; ns * n],
            err: vec![0.0; ns * n],
            // Not a valid code: every track's first `apply_codes` decodes it.
            codes: vec![[u8::MAX; 4]; ctx.tracks.len()],
            scratch: vec![Transform::IDENTITY; n],
        };
        // Smallest-three rotations have one fixed packing: their decoded values from the start.
        for (t, tr) in ctx.tracks.iter().enumerate() {
            if tr.slots == 0 {
                w.apply_level(t, TOP);
            }
        }
        w
    }

    fn n(&self) -> usize {
        self.ctx.keys.joints
    }

    /// Width codes of a track's slots for a level (an index into [`WIDTHS`]): the slot with the
    /// largest segment extent gets `WIDTHS[level]` bits, the others the fewest bits whose
    /// quantisation step is no coarser than its (the metric sees rotation and translation errors
    /// alike along every axis, so every slot needs about the same step).
    fn level_codes(&self, t: usize, level: usize) -> [u8; 4] {
        let tr = &self.ctx.tracks[t];
        let slots = usize::from(tr.slots);
        let mut codes = [0u8; 4];
        if level == 0 || level >= TOP {
            for c in codes.iter_mut().take(slots) {
                *c = level as u8;
            }
            return codes;
        }
        let ext: [f32; 4] = std::array::from_fn(|c| tr.step[c] * f32::from(self.ranges[t][c].1));
        let emax = ext.iter().take(slots).fold(0.0f32, |a, &b| a.max(b));
        let step_top = emax * CODE_SCALE[level];
        for c in 0..slots {
            codes[c] = (0..=level)
                .find(|&k| {
                    if k == 0 {
                        ext[c] <= step_top
                    } else {
                        ext[c] * CODE_SCALE[k] <= step_top
                    }
                })
                .unwrap_or(level) as u8;
        }
        codes
    }

    /// The decoded local value of track `t` at key `i` with width codes `codes`.
    fn decoded(&self, t: usize, i: usize, codes: &[u8; 4]) -> Transform {
        let tr = &self.ctx.tracks[t];
        let j = usize::from(tr.joint);
        let src = &self.ctx.keys.pose(self.span.start + i)[j];
        let mut out = self.cur[i * self.n() + j];
        if tr.slots == 0 {
            let b = u32::from(tr.packed_bits);
            out.rotation = unpack_smallest_three(pack_smallest_three(src.rotation, b), b);
            return out;
        }
        let drop = self.drops[t];
        let v = slot_values(src, tr, drop);
        let mut d = [0.0f32; 4];
        for c in 0..usize::from(tr.slots) {
            let (qmin, qext) = self.ranges[t][c];
            let (o, s) = slot_params(tr.min[c], tr.step[c], qmin, qext, codes[c]);
            d[c] = dequantize_slot(quantize_slot(v[c], o, s, codes[c]), o, s, codes[c]);
        }
        match tr.kind {
            TrackKind::Rotation => out.rotation = rotation_from_slots(tr.slots, drop, d),
            TrackKind::Translation => out.translation = Vec3::new(d[0], d[1], d[2]),
            TrackKind::Scale => out.scale = Vec3::new(d[0], d[1], d[2]),
        }
        out
    }

    /// Sets track `t` to `level` in the decoded keys (not the cached models).
    fn apply_level(&mut self, t: usize, level: usize) {
        let codes = self.level_codes(t, level);
        self.apply_codes(t, codes);
    }

    fn apply_codes(&mut self, t: usize, codes: [u8; 4]) {
        let n = self.n();
        let j = usize::from(self.ctx.tracks[t].joint);
        for i in 0..self.span.len() {
            self.cur[i * n + j] = self.decoded(t, i, &codes);
        }
        self.codes[t] = codes;
    }

    /// The decoded local transform of joint `j` at sample `si`.
    #[inline]
    fn local_at(&self, si: usize, j: usize) -> Transform {
        let n = self.n();
        match self.samples[si] {
            Sample::Key(i) => self.cur[i * n + j],
            Sample::Between(a, b, alpha) => {
                let la = match a {
                    Some(a) => &self.cur[a * n + j],
                    None => &self.prev_last.unwrap_or(self.ctx.static_pose)[j],
                };
                let lb = &self.cur[b * n + j];
                let mut t = interp(la, lb, alpha);
                let [rotation, translation] = self.ctx.animated[j];
                if !rotation {
                    t.rotation = lb.rotation;
                }
                if !translation {
                    t.translation = lb.translation;
                }
                t
            }
        }
    }

    /// Recomputes the cached models and errors of joint `j`'s subtree at every sample from the
    /// decoded keys; returns the largest error in the subtree.
    fn update_subtree(&mut self, j: usize) -> f32 {
        let n = self.n();
        let mut worst = 0.0f32;
        for si in 0..self.samples.len() {
            for &d in self.ctx.sub.of(j) {
                let local = self.local_at(si, d);
                let m = match self.ctx.parents[d] {
                    Some(p) => compose(&self.model[si * n + p], &local),
                    None => local,
                };
                self.model[si * n + d] = m;
                let e = self.ctx.shell.error_cm(&self.orig_model[si * n + d], &m);
                self.err[si * n + d] = e;
                worst = worst.max(e);
            }
        }
        worst
    }

    /// Largest error over joint `j`'s subtree at every sample if the decoded keys are as they
    /// are now (the cache is left alone). Stops early past `limit`.
    fn trial_subtree(&mut self, j: usize, limit: f32) -> f32 {
        let n = self.n();
        let mut worst = 0.0f32;
        let mut scratch = std::mem::take(&mut self.scratch);
        'samples: for si in 0..self.samples.len() {
            for &d in self.ctx.sub.of(j) {
                let local = self.local_at(si, d);
                let m = match self.ctx.parents[d] {
                    Some(p) if d == j => compose(&self.model[si * n + p], &local),
                    Some(p) => compose(&scratch[p], &local),
                    None => local,
                };
                scratch[d] = m;
                worst = worst.max(self.ctx.shell.error_cm(&self.orig_model[si * n + d], &m));
                if worst > limit {
                    break 'samples;
                }
            }
        }
        self.scratch = scratch;
        worst
    }

    /// Largest error of joint `target` over every sample if the decoded keys are as they are
    /// now, where only joint `changed` (an ancestor of `target` or `target` itself) differs from
    /// the cache.
    fn trial_joint(&self, changed: usize, target: usize) -> f32 {
        let n = self.n();
        let chain = chain(self.ctx.parents, target);
        let from = chain.iter().position(|&c| c == changed).unwrap_or(0);
        let mut worst = 0.0f32;
        for si in 0..self.samples.len() {
            let mut m = match self.ctx.parents[changed] {
                Some(p) => compose(&self.model[si * n + p], &self.local_at(si, changed)),
                None => self.local_at(si, changed),
            };
            for &c in chain[..from].iter().rev() {
                m = compose(&m, &self.local_at(si, c));
            }
            worst = worst.max(
                self.ctx
                    .shell
                    .error_cm(&self.orig_model[si * n + target], &m),
            );
        }
        worst
    }

    /// Largest error of each joint over every sample (from the cache).
    fn joint_errors(&self) -> Vec<f32> {
        let n = self.n();
        let mut out = vec![0.0f32; n];
        for row in self.err.chunks_exact(n) {
            for (o, &e) in out.iter_mut().zip(row) {
                *o = o.max(e);
            }
        }
        out
    }

    /// Chooses the width codes of every track (see `docs/COMPRESSION.md`, "Automatic bit
    /// selection") so that every joint stays within `budget_cm` at every sample.
    /// The width codes of the segment's tracks for `budget_cm` (in four phases, below). Stops
    /// early, with the codes it has, once `cancel` is set: a whole-clip segment of a long take is
    /// one choice of many seconds, which a cancel between segments did not reach.
    fn choose(&mut self, budget_cm: f32, cancel: &AtomicBool) -> Vec<[u8; 4]> {
        let cancelled = || cancel.load(Ordering::Relaxed);
        let n = self.n();
        let nt = self.ctx.tracks.len();
        let ranged: Vec<usize> = (0..nt).filter(|&t| self.ctx.tracks[t].slots > 0).collect();
        let mut levels = vec![TOP; nt];
        // Phase 1: each track alone, every other track at its original value, gets the lowest
        // level below raw that keeps its subtree within the budget (phase 2 goes on to raw
        // where nothing narrower will do).
        for i in 0..self.samples.len() {
            let (a, b) = (i * n, (i + 1) * n);
            self.model[a..b].copy_from_slice(&self.orig_model[a..b]);
        }
        for &t in &ranged {
            if cancelled() {
                return self.codes.clone();
            }
            let j = usize::from(self.ctx.tracks[t].joint);
            let (mut lo, mut hi) = (0usize, TOP - 1);
            while lo < hi {
                let mid = (lo + hi) / 2;
                self.apply_level(t, mid);
                if self.trial_subtree(j, budget_cm) <= budget_cm {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            levels[t] = lo;
            self.apply_level(t, TOP);
        }
        for &t in &ranged {
            self.apply_level(t, levels[t]);
        }
        let roots: Vec<usize> = (0..n).filter(|&j| self.ctx.parents[j].is_none()).collect();
        for r in roots {
            self.update_subtree(r);
        }
        // Joint -> its ranged tracks.
        let mut joint_tracks: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &t in &ranged {
            joint_tracks[usize::from(self.ctx.tracks[t].joint)].push(t);
        }
        let bits = |this: &Self, t: usize, codes: &[u8; 4]| -> f32 {
            let slots = usize::from(this.ctx.tracks[t].slots);
            codes[..slots]
                .iter()
                .map(|&c| f32::from(WIDTHS[usize::from(c)]))
                .sum()
        };
        // Phase 2: while a joint is over budget, raise the track on its chain that buys the most
        // error per added bit.
        let mut guard = 0;
        loop {
            guard += 1;
            let errs = self.joint_errors();
            let (worst_j, worst_e) = errs
                .iter()
                .copied()
                .enumerate()
                .fold((0, 0.0f32), |a, (j, e)| if e > a.1 { (j, e) } else { a });
            if worst_e <= budget_cm || guard > 64 * ranged.len() + 64 || cancelled() {
                break;
            }
            // A raw float32 only when every track on the chain has the widest code: its slots
            // take 16 bits more than the widest code's, and a segment holding one leaves the
            // vector decoders' fast path. Chosen on error per bit like the others, the raw step
            // often won where narrower steps met the budget in fewer bits (on every shared take).
            let mut best: Option<(usize, f32)> = None;
            for to_raw in [false, true] {
                for &cj in &chain(self.ctx.parents, worst_j) {
                    for &t in &joint_tracks[cj] {
                        if levels[t] >= TOP || (levels[t] + 1 == TOP) != to_raw {
                            continue;
                        }
                        let old = self.codes[t];
                        let before = bits(self, t, &old);
                        self.apply_level(t, levels[t] + 1);
                        let e = self.trial_joint(cj, worst_j);
                        let cost = (bits(self, t, &self.codes[t]) - before).max(1.0);
                        self.apply_codes(t, old);
                        let score = (worst_e - e) / cost;
                        if best.is_none_or(|(_, s)| score > s) {
                            best = Some((t, score));
                        }
                    }
                }
                if best.is_some() {
                    break;
                }
            }
            let Some((t, _)) = best else { break };
            levels[t] += 1;
            self.apply_level(t, levels[t]);
            self.update_subtree(usize::from(self.ctx.tracks[t].joint));
        }
        // Phase 3: try to lower each track (largest first) while its subtree stays in budget.
        for _pass in 0..2 {
            let mut order: Vec<usize> = ranged.iter().copied().filter(|&t| levels[t] > 0).collect();
            order.sort_by(|&a, &b| {
                bits(self, b, &self.codes[b]).total_cmp(&bits(self, a, &self.codes[a]))
            });
            let mut changed = false;
            for t in order {
                if cancelled() {
                    return self.codes.clone();
                }
                let j = usize::from(self.ctx.tracks[t].joint);
                let old = self.codes[t];
                self.apply_level(t, levels[t] - 1);
                if self.trial_subtree(j, budget_cm) <= budget_cm {
                    levels[t] -= 1;
                    self.update_subtree(j);
                    changed = true;
                } else {
                    self.apply_codes(t, old);
                }
            }
            if !changed {
                break;
            }
        }
        // Phase 4: one slot at a time, one width step down where the subtree stays in budget.
        for &t in &ranged {
            if cancelled() {
                return self.codes.clone();
            }
            let j = usize::from(self.ctx.tracks[t].joint);
            for c in 0..usize::from(self.ctx.tracks[t].slots) {
                let old = self.codes[t];
                if old[c] == 0 || old[c] >= RAW_CODE {
                    continue;
                }
                let mut codes = old;
                codes[c] -= 1;
                self.apply_codes(t, codes);
                if self.trial_subtree(j, budget_cm) <= budget_cm {
                    self.update_subtree(j);
                } else {
                    self.apply_codes(t, old);
                }
            }
        }
        self.codes.clone()
    }

    /// The largest error of any joint at any sample with the current codes (recomputed).
    fn evaluate(&mut self) -> f32 {
        let n = self.n();
        let roots: Vec<usize> = (0..n).filter(|&j| self.ctx.parents[j].is_none()).collect();
        roots
            .into_iter()
            .map(|r| self.update_subtree(r))
            .fold(0.0, f32::max)
    }

    /// Sets the final codes (for the fixed bit rates; the automatic choice leaves them set).
    fn set_codes(&mut self, codes: &[[u8; 4]]) {
        for (t, c) in codes.iter().enumerate() {
            if self.ctx.tracks[t].slots > 0 && self.codes[t] != *c {
                self.apply_codes(t, *c);
            }
        }
    }

    /// The decoded local pose of the segment's last key.
    fn last_key_local(&self) -> Vec<Transform> {
        let n = self.n();
        let i = self.span.len() - 1;
        self.cur[i * n..(i + 1) * n].to_vec()
    }
}

/// Index of the highest width level (raw float32).
const TOP: usize = WIDTHS.len() - 1;

/// Two local transforms interpolated as the decoder and the animation core interpolate two
/// frames: rotation nlerp on the shortest path, translation lerp, scale lerp (equal scales exact).
#[inline]
fn interp(a: &Transform, b: &Transform, alpha: f32) -> Transform {
    Transform {
        translation: a.translation.lerp(b.translation, alpha),
        rotation: nlerp(a.rotation, b.rotation, alpha),
        scale: if a.scale == b.scale {
            a.scale
        } else {
            a.scale.lerp(b.scale, alpha)
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clip_the_format_cannot_hold_is_refused_with_what_was_expected() {
        let settings = CompressSettings::default();
        let mut empty = crate::core::compress::synth::synthetic_clip(3, 4, 30.0, 1);
        empty.frame_count = 0;
        empty.rotations.clear();
        empty.translations.clear();
        empty.scales.clear();
        let e = compress(&empty, &settings).unwrap_err().to_string();
        assert!(
            e.contains("no frames") && e.contains("expected at least one frame"),
            "{e}"
        );
        let mut long = crate::core::compress::synth::synthetic_clip(3, 4, 30.0, 1);
        long.skeleton.names[2] = "j".repeat(300);
        let e = compress(&long, &settings).unwrap_err().to_string();
        assert!(
            e.contains("joint 2 has a name of 300 bytes") && e.contains("expected at most 255"),
            "{e}"
        );
    }

    /// What the reader refuses is refused before encoding, as a clip error naming the joint (it
    /// was an internal error about a byte of a file never written).
    #[test]
    fn a_clip_the_reader_would_refuse_is_refused_before_encoding() {
        let settings = CompressSettings::default();
        let synth = || crate::core::compress::synth::synthetic_clip(3, 4, 30.0, 1);
        let invalid = |clip: &Clip| match compress(clip, &settings) {
            Err(CompressError::InvalidClip(m)) => m,
            other => panic!("{:?}", other.map(|_| ())),
        };
        // A root at 3e38 in one frame and -3e38 in the next: an infinite range.
        let mut far = synth();
        far.translations[0].x = 3e38;
        far.translations[3].x = -3e38;
        let e = invalid(&far);
        assert!(
            e.contains("translation of joint 0") && e.contains("expected"),
            "{e}"
        );
        // Finite values whose size in centimetres is not.
        let mut huge = synth();
        huge.unit_cm = 1000.0;
        huge.translations[0].x = 1e36;
        assert!(invalid(&huge).contains("centimetres"));
        // A rest rotation of length 0.
        let mut zero = synth();
        zero.skeleton.rest[1].rotation = glam::Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        let e = invalid(&zero);
        assert!(
            e.contains("rest rotation of joint 1") && e.contains("unit quaternion"),
            "{e}"
        );
        // A rate the reader refuses.
        let mut slow = synth();
        slow.fps = 1e-6;
        assert!(invalid(&slow).contains("frames per second"));
    }

    /// A clip whose poses could reach past float range in model space (each translation finite,
    /// their sum down a chain not) is refused: its error would be NaN, which `max` drops, and a
    /// budget would be "met".
    #[test]
    fn a_chain_reaching_past_float_range_is_refused() {
        let settings = CompressSettings::default();
        let mut clip = crate::core::compress::synth::synthetic_clip(6, 4, 30.0, 1);
        // Each finite and each within the limit alone; a joint and its parent together not.
        let n = clip.joint_count();
        for f in 0..clip.frame_count {
            for j in 0..n {
                clip.translations[f * n + j].y = 6e29;
            }
        }
        match compress(&clip, &settings) {
            Err(CompressError::InvalidClip(m)) => {
                assert!(
                    m.contains("can reach") && m.contains("expected poses"),
                    "{m}"
                )
            }
            other => panic!("{:?}", other.map(|_| ())),
        }
    }

    #[test]
    fn subtrees_are_slices_of_one_depth_first_order() {
        // 0 -> 1 -> 3, 0 -> 2; 4 a second root with child 5; 6 a child of 1 listed last.
        let parents = [None, Some(0), Some(0), Some(1), None, Some(4), Some(1)];
        let s = Subtrees::new(&parents);
        let sorted = |j: usize| {
            let mut v = s.of(j).to_vec();
            v.sort_unstable();
            v
        };
        assert_eq!(sorted(0), [0, 1, 2, 3, 6]);
        assert_eq!(sorted(1), [1, 3, 6]);
        assert_eq!(sorted(2), [2]);
        assert_eq!(sorted(4), [4, 5]);
        for j in 0..parents.len() {
            let sub = s.of(j);
            assert_eq!(sub[0], j);
            for (i, &d) in sub.iter().enumerate().skip(1) {
                let p = parents[d].unwrap();
                assert!(
                    sub[..i].contains(&p),
                    "{d} before its parent {p} in {sub:?}"
                );
            }
        }
        assert_eq!(chain(&parents, 3).as_slice(), [3, 1, 0]);
        // A chain 20,000 deep: one order, no list per joint.
        let deep: Vec<Option<usize>> = (0..20_000usize).map(|j| j.checked_sub(1)).collect();
        let s = Subtrees::new(&deep);
        assert_eq!(s.of(0).len(), 20_000);
        assert_eq!(s.of(19_999), [19_999]);
    }
}
