//! The error metric (ACL's `qvvf_transform_error_metric`): three virtual vertices at `shell_cm` from
//! each joint, along its local X, Y and Z axes, taken to model space by the original and by the
//! decoded pose; the error of a joint at a sample is the largest distance between the two images
//! of a vertex, in centimetres.
//!
//! Two measures use it (see `docs/COMPRESSION.md`, "The error metric"):
//! - **at frames**: every frame of the original clip;
//! - **between frames**: the decoded pose at times between frames against the original clip
//!   sampled with the runtime's default interpolation ([`sample_clip`] with
//!   `SampleSettings::default()`: nlerp on the shortest path, lerp for translation and scale), at
//!   [`BETWEEN_FRACTIONS`] of every frame interval and at [`GOLDEN_TIMES`] scattered times.

use glam::Vec3;

use crate::core::anim::{Clip, SampleSettings, Skeleton, Transform, sample_clip};

/// Local-to-model transforms of one pose (the animation core's forward kinematics). Buffers must
/// hold one transform per joint; they always do here.
pub fn local_to_model(skeleton: &Skeleton, local: &[Transform], model: &mut [Transform]) {
    let done = crate::core::anim::fk::local_to_model(skeleton, local, model);
    debug_assert!(done.is_ok(), "{done:?}");
}

/// Copies frame `f` of a clip into a transform buffer (one per joint).
pub fn clip_pose(clip: &Clip, f: usize, out: &mut [Transform]) {
    let copied = clip.copy_pose(f, out);
    debug_assert!(copied);
}

/// True when any scale in the clip differs from 1 (recorded in the `.tlc` header for tools; the
/// metric always uses all three vertices).
pub fn clip_has_scale(clip: &Clip) -> bool {
    clip.scales
        .iter()
        .any(|s| (*s - Vec3::ONE).abs().max_element() > 1e-6)
}

/// Where the between-frame measure samples each interval `[f, f + 1]` of the original clip.
pub const BETWEEN_FRACTIONS: [f32; 3] = [0.25, 0.5, 0.75];

/// How many scattered times the between-frame measure adds (the times of `benches/compress.rs`).
pub const GOLDEN_TIMES: usize = 256;

/// `n` scattered times over `[0, duration_s)`: `duration_s * fract(0.618034 i + 0.123)` (a
/// golden-ratio sequence, almost never on a frame). The bench times decoding at these times.
pub fn golden_times(duration_s: f32, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| duration_s * ((i as f32 * 0.618_034 + 0.123).fract()))
        .collect()
}

/// The virtual vertices of the metric, in file units.
#[derive(Debug, Clone, Copy)]
pub struct Shell {
    /// `shell_cm / unit_cm` along local X, Y and Z.
    pub vertices: [Vec3; 3],
    /// Centimetres per file unit.
    pub unit_cm: f32,
}

impl Shell {
    /// Vertices at `shell_cm` centimetres in a clip of `unit_cm` centimetres per file unit.
    pub fn new(shell_cm: f32, unit_cm: f32) -> Self {
        let d = shell_cm / unit_cm;
        Self {
            vertices: [Vec3::X * d, Vec3::Y * d, Vec3::Z * d],
            unit_cm,
        }
    }

    /// Error of one joint in cm: the largest vertex distance between the two model transforms.
    #[inline]
    pub fn error_cm(&self, original: &Transform, decoded: &Transform) -> f32 {
        let mut worst = 0.0f32;
        for v in &self.vertices {
            let d = original.transform_point(*v) - decoded.transform_point(*v);
            worst = worst.max(d.length_squared());
        }
        worst.sqrt() * self.unit_cm
    }
}

/// Errors of a decoded clip against its original: the report the app, the command line and the
/// tests show. The at-frame figures are the top-level fields; the between-frame ones are in
/// [`ErrorReport::between`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ErrorReport {
    /// Largest error over every joint and frame, cm.
    pub max_error_cm: f32,
    /// Mean over every (joint, frame) of the joint's error, cm.
    pub mean_error_cm: f32,
    /// 99th percentile over every (joint, frame), cm.
    pub p99_error_cm: f32,
    /// Where the largest error at a frame is.
    pub worst: WorstError,
    /// Largest error of each joint over all frames, cm (index = joint).
    pub joint_max_cm: Vec<f32>,
    /// Error curves of the joints with the largest errors (at frames or between; up to
    /// [`WORST_JOINT_CURVES`], worst first).
    pub worst_joints: Vec<JointFrameErrors>,
    /// The between-frame measure.
    pub between: BetweenReport,
}

impl ErrorReport {
    /// The larger of the at-frame and between-frame maxima, cm.
    pub fn overall_max_cm(&self) -> f32 {
        self.max_error_cm.max(self.between.max_error_cm)
    }

    /// One line for people: both maxima with where they are, and the mean
    /// (`max 0.01234 cm at frames (LeftHand at frame 7), 0.01500 cm between frames (...), mean ...`).
    pub fn summary(&self) -> String {
        format!(
            "max {:.5} cm at frames ({} at frame {}), {:.5} cm between frames ({} at frame {:.2}), mean {:.6} cm",
            self.max_error_cm,
            self.worst.joint_name,
            self.worst.frame,
            self.between.max_error_cm,
            self.between.worst.joint_name,
            self.between.worst.position,
            self.mean_error_cm
        )
    }
}

/// The between-frame measure: the decoded pose at [`BETWEEN_FRACTIONS`] of every frame interval
/// and at the [`GOLDEN_TIMES`] scattered times, against the original sampled with nlerp.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BetweenReport {
    /// Largest error over every joint and sample, cm (0 for a one-frame clip).
    pub max_error_cm: f32,
    /// Mean over every (joint, sample), cm.
    pub mean_error_cm: f32,
    /// Where the largest error is (`position` is fractional).
    pub worst: WorstError,
    /// Largest error of each joint over every sample, cm.
    pub joint_max_cm: Vec<f32>,
    /// Largest error over the [`GOLDEN_TIMES`] scattered times alone, cm.
    pub golden_max_error_cm: f32,
    /// Number of poses measured.
    pub samples: usize,
}

/// Where a largest error is, as ACL's `track_error` gives it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WorstError {
    pub joint: usize,
    pub joint_name: String,
    /// The frame at or before the sample.
    pub frame: usize,
    /// Position of the sample in frames of the original clip (`frame` for a sample at a frame).
    pub position: f32,
    /// Time of the sample, seconds.
    pub time_s: f32,
    pub error_cm: f32,
}

/// The error curve of one joint.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct JointFrameErrors {
    pub joint: usize,
    pub joint_name: String,
    /// Error at each frame of the original clip, cm.
    pub frame_error_cm: Vec<f32>,
    /// Error at `f + BETWEEN_FRACTIONS[i]` at index `f * 3 + i`, for `f` in `0..frames - 1`, cm.
    pub between_error_cm: Vec<f32>,
}

impl JointFrameErrors {
    /// Every sample of the curve in time order: `(position in frames, error cm)`.
    pub fn curve(&self) -> Vec<(f32, f32)> {
        let n = BETWEEN_FRACTIONS.len();
        let mut out = Vec::with_capacity(self.frame_error_cm.len() + self.between_error_cm.len());
        for (f, e) in self.frame_error_cm.iter().enumerate() {
            out.push((f as f32, *e));
            if let Some(b) = self.between_error_cm.get(f * n..(f + 1) * n) {
                for (i, e) in b.iter().enumerate() {
                    out.push((f as f32 + BETWEEN_FRACTIONS[i], *e));
                }
            }
        }
        out
    }
}

/// How many joints get an error curve in [`ErrorReport::worst_joints`].
pub const WORST_JOINT_CURVES: usize = 4;

/// Measures the metric between an original clip and a decoder: at every frame, between frames
/// and at the scattered times. `decode(position, out)` must fill `out` (one transform per joint)
/// with the decoded local pose at `position`, in (fractional) frames of the original clip.
/// Positions come in increasing order, except the scattered times, which come last.
pub fn measure(
    original: &Clip,
    shell_cm: f32,
    mut decode: impl FnMut(f32, &mut [Transform]),
) -> ErrorReport {
    let n = original.joint_count();
    let frames = original.frame_count;
    let fps = original.fps;
    let shell = Shell::new(shell_cm, original.unit_cm);
    let nb = BETWEEN_FRACTIONS.len();
    let intervals = frames.saturating_sub(1);
    let mut ws = Workspace::new(original, shell);
    let mut at = vec![0.0f32; n * frames]; // joint-major: at[j * frames + f]
    let mut between = vec![0.0f32; n * intervals * nb]; // between[j * intervals * nb + f * nb + i]
    let mut b = BetweenAcc::new(n, &original.skeleton.names);
    for f in 0..frames {
        ws.original_at(f as f32);
        decode(f as f32, &mut ws.local);
        ws.errors();
        for j in 0..n {
            at[j * frames + f] = ws.err[j];
        }
        if f + 1 < frames {
            for (i, &a) in BETWEEN_FRACTIONS.iter().enumerate() {
                let p = f as f32 + a;
                ws.original_at(p);
                decode(p, &mut ws.local);
                ws.errors();
                for j in 0..n {
                    between[j * intervals * nb + f * nb + i] = ws.err[j];
                }
                b.add(&ws.err, p, fps, false);
            }
        }
    }
    if frames >= 2 {
        for t in golden_times(original.duration_s(), GOLDEN_TIMES) {
            // The original at the position the decoder is given (a 32-bit frame position), not
            // at the 64-bit time: on a take in metres the two are 10^-5 units apart, a tenth of
            // a 0.01 cm budget, which is neither side's error.
            let p = t * fps;
            ws.original_at(p);
            decode(p, &mut ws.local);
            ws.errors();
            b.add(&ws.err, p, fps, true);
        }
    }
    summarise(original, &at, &between, b.finish())
}

/// Buffers of [`measure`].
struct Workspace<'a> {
    clip: &'a Clip,
    shell: Shell,
    settings: SampleSettings,
    local: Vec<Transform>,
    model_o: Vec<Transform>,
    model_d: Vec<Transform>,
    err: Vec<f32>,
}

impl<'a> Workspace<'a> {
    fn new(clip: &'a Clip, shell: Shell) -> Self {
        let n = clip.joint_count();
        Self {
            clip,
            shell,
            settings: SampleSettings::default(),
            local: vec![Transform::IDENTITY; n],
            model_o: vec![Transform::IDENTITY; n],
            model_d: vec![Transform::IDENTITY; n],
            err: vec![0.0; n],
        }
    }

    /// The original's model pose at a frame position (exact frames are copied).
    fn original_at(&mut self, position: f32) {
        if position.fract() == 0.0 {
            clip_pose(self.clip, position as usize, &mut self.local);
            local_to_model(&self.clip.skeleton, &self.local, &mut self.model_o);
        } else {
            self.original_time(f64::from(position) / f64::from(self.clip.fps));
        }
    }

    /// The original's model pose at a time, sampled as the runtime does by default.
    fn original_time(&mut self, time_s: impl Into<f64>) {
        let done = sample_clip(self.clip, time_s.into(), &self.settings, &mut self.local);
        debug_assert!(done.is_ok(), "{done:?}");
        local_to_model(&self.clip.skeleton, &self.local, &mut self.model_o);
    }

    /// Errors of the decoded local pose in `local` against the original model pose.
    fn errors(&mut self) {
        local_to_model(&self.clip.skeleton, &self.local, &mut self.model_d);
        for ((e, o), d) in self.err.iter_mut().zip(&self.model_o).zip(&self.model_d) {
            *e = self.shell.error_cm(o, d);
        }
    }
}

/// Running figures of the between-frame measure.
struct BetweenAcc<'a> {
    names: &'a [String],
    report: BetweenReport,
    sum: f64,
}

impl<'a> BetweenAcc<'a> {
    fn new(n: usize, names: &'a [String]) -> Self {
        Self {
            names,
            report: BetweenReport {
                max_error_cm: 0.0,
                mean_error_cm: 0.0,
                worst: WorstError {
                    joint: 0,
                    joint_name: names.first().cloned().unwrap_or_default(),
                    frame: 0,
                    position: 0.0,
                    time_s: 0.0,
                    error_cm: 0.0,
                },
                joint_max_cm: vec![0.0; n],
                golden_max_error_cm: 0.0,
                samples: 0,
            },
            sum: 0.0,
        }
    }

    fn add(&mut self, err: &[f32], position: f32, fps: f32, golden: bool) {
        let r = &mut self.report;
        r.samples += 1;
        for (j, &e) in err.iter().enumerate() {
            self.sum += f64::from(e);
            r.joint_max_cm[j] = r.joint_max_cm[j].max(e);
            if golden {
                r.golden_max_error_cm = r.golden_max_error_cm.max(e);
            }
            if e > r.max_error_cm {
                r.max_error_cm = e;
                r.worst = WorstError {
                    joint: j,
                    joint_name: self.names[j].clone(),
                    frame: position.max(0.0) as usize,
                    position,
                    time_s: position / fps,
                    error_cm: e,
                };
            }
        }
    }

    fn finish(mut self) -> BetweenReport {
        let count = self.report.samples * self.names.len();
        if count > 0 {
            self.report.mean_error_cm = (self.sum / count as f64) as f32;
        }
        self.report
    }
}

fn summarise(original: &Clip, at: &[f32], between: &[f32], b: BetweenReport) -> ErrorReport {
    let n = original.joint_count();
    let frames = original.frame_count;
    let nb = BETWEEN_FRACTIONS.len();
    let per_joint_between = frames.saturating_sub(1) * nb;
    let mut joint_max_cm = vec![0.0f32; n];
    let mut worst = WorstError {
        joint: 0,
        joint_name: original.skeleton.names.first().cloned().unwrap_or_default(),
        frame: 0,
        position: 0.0,
        time_s: 0.0,
        error_cm: 0.0,
    };
    let mut sum = 0.0f64;
    for j in 0..n {
        for f in 0..frames {
            let e = at[j * frames + f];
            sum += f64::from(e);
            if e > joint_max_cm[j] {
                joint_max_cm[j] = e;
            }
            if e > worst.error_cm {
                worst = WorstError {
                    joint: j,
                    joint_name: original.skeleton.names[j].clone(),
                    frame: f,
                    position: f as f32,
                    time_s: f as f32 / original.fps,
                    error_cm: e,
                };
            }
        }
    }
    let count = at.len().max(1);
    let mut sorted = at.to_vec();
    sorted.sort_by(f32::total_cmp);
    let p99 = if sorted.is_empty() {
        0.0
    } else {
        sorted[((sorted.len() - 1) as f64 * 0.99).round() as usize]
    };
    let overall = |j: usize| joint_max_cm[j].max(b.joint_max_cm[j]);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &c| overall(c).total_cmp(&overall(a)));
    let worst_joints = order
        .iter()
        .take(WORST_JOINT_CURVES)
        .map(|&j| JointFrameErrors {
            joint: j,
            joint_name: original.skeleton.names[j].clone(),
            frame_error_cm: at[j * frames..(j + 1) * frames].to_vec(),
            between_error_cm: between[j * per_joint_between..(j + 1) * per_joint_between].to_vec(),
        })
        .collect();
    ErrorReport {
        max_error_cm: worst.error_cm,
        mean_error_cm: (sum / count as f64) as f32,
        p99_error_cm: p99,
        worst,
        joint_max_cm,
        worst_joints,
        between: b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::anim::{Clip, Skeleton};
    use glam::Quat;

    #[test]
    fn rotation_error_at_shell_distance() {
        // A 1 milliradian error on a root rotation moves a vertex 3 cm away by 3e-3 cm.
        let shell = Shell::new(3.0, 1.0);
        let a = Transform::IDENTITY;
        let b = Transform {
            rotation: Quat::from_rotation_z(1e-3),
            ..a
        };
        let e = shell.error_cm(&a, &b);
        assert!((e - 3e-3).abs() < 1e-5, "{e}");
        // In a clip whose unit is 2 cm the same rotation is the same error in cm.
        let shell2 = Shell::new(3.0, 2.0);
        assert!((shell2.error_cm(&a, &b) - 3e-3).abs() < 1e-5);
        // A translation of 0.5 units = 1 cm.
        let c = Transform {
            translation: Vec3::new(0.5, 0.0, 0.0),
            ..a
        };
        assert!((shell2.error_cm(&a, &c) - 1.0).abs() < 1e-6);
    }

    /// A rotation about an axis between X and Y moves the X and Y vertices by only
    /// `sin(45°)` of what it moves a vertex perpendicular to the axis; the Z vertex sees it whole.
    #[test]
    fn error_rotation_about_an_axis_between_x_and_y_is_seen_at_full_size() {
        let shell = Shell::new(3.0, 1.0);
        let angle = 0.01f32;
        let axis = Vec3::new(1.0, 1.0, 0.0).normalize();
        let a = Transform::IDENTITY;
        let b = Transform {
            rotation: Quat::from_axis_angle(axis, angle),
            ..a
        };
        let full = 2.0 * 3.0 * (angle / 2.0).sin(); // chord of a 3 cm radius
        let e = shell.error_cm(&a, &b);
        assert!((e - full).abs() < 1e-6, "{e} vs {full}");
        // X and Y alone would see 71% of it (what the old two-vertex metric reported).
        let xy = [Vec3::X, Vec3::Y]
            .iter()
            .map(|v| (a.transform_point(*v * 3.0) - b.transform_point(*v * 3.0)).length())
            .fold(0.0f32, f32::max);
        assert!(
            (xy / full - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-3,
            "{xy}"
        );
    }

    fn two_frame_clip(b: Quat) -> Clip {
        let skeleton = Skeleton::new(vec!["j".into()], vec![None], vec![Transform::IDENTITY]);
        Clip {
            name: "c".into(),
            skeleton,
            fps: 30.0,
            frame_count: 2,
            unit_cm: 1.0,
            rotations: vec![Quat::IDENTITY, b],
            translations: vec![Vec3::ZERO; 2],
            scales: vec![Vec3::ONE; 2],
        }
    }

    /// A decoder exact at both frames but wrong in between (it holds the first frame until the
    /// second) is invisible at frames and seen between them, at the worst fraction.
    #[test]
    fn between_frame_error_is_measured_where_frames_cannot_see_it() {
        let q = Quat::from_rotation_z(0.5);
        let clip = two_frame_clip(q);
        let report = measure(&clip, 3.0, |p, out| {
            out[0] = Transform {
                rotation: if p >= 1.0 { q } else { Quat::IDENTITY },
                ..Transform::IDENTITY
            };
        });
        assert_eq!(report.max_error_cm, 0.0);
        // At 0.75 the original has turned by about 0.375 rad: a 3 cm vertex moved ~1.1 cm.
        let expect = Shell::new(3.0, 1.0).error_cm(
            &Transform {
                rotation: crate::core::anim::nlerp(Quat::IDENTITY, q, 0.75),
                ..Transform::IDENTITY
            },
            &Transform::IDENTITY,
        );
        assert!(
            report.between.max_error_cm >= expect - 1e-6,
            "{} < {expect}",
            report.between.max_error_cm
        );
        assert!(report.between.golden_max_error_cm > 0.0);
        assert_eq!(report.between.samples, 3 + GOLDEN_TIMES);
        assert!(report.between.worst.position > 0.0 && report.between.worst.position < 1.0);
        let curve = report.worst_joints[0].curve();
        let positions: Vec<f32> = curve.iter().map(|c| c.0).collect();
        assert_eq!(positions, vec![0.0, 0.25, 0.5, 0.75, 1.0]);
        // The decoder that interpolates as the runtime does is exact everywhere.
        let exact = measure(&clip, 3.0, |p, out| {
            out[0] = Transform {
                rotation: crate::core::anim::nlerp(Quat::IDENTITY, q, p.clamp(0.0, 1.0)),
                ..Transform::IDENTITY
            };
        });
        assert!(exact.overall_max_cm() < 1e-5, "{}", exact.overall_max_cm());
    }
}
