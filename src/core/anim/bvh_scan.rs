//! The fast BVH scan: the hierarchy, the frame rate and the number of frame rows, without turning
//! every motion value into a rotation.
//!
//! The HIERARCHY section and the MOTION header are parsed exactly as the full importer does
//! ([`super::bvh::parse_header`]). The frame rows are then only counted: one byte pass checks that
//! every non-blank line has exactly the CHANNELS total of values, made of number characters
//! (`0-9 . + - e E`), so a truncated row, a missing value or a word in the motion section is found
//! with its line, as the full import would report it. Numbers are not converted, so a malformed
//! number made of number characters (`1.2.3`) or one beyond the f32 range is only found when the
//! clip is fully imported. The rows measured for the standing height
//! ([`crate::core::anim::units::height_sample_frames`]) are parsed fully, so the unit guess equals the
//! one made on the full clip.

use super::bvh::{Header, err_found, parse_f64, parse_header};
use super::import::{ImportError, ImportOptions, ImportWarning, Place};
use super::scan::ClipScan;
use super::skeleton::Transform;
use super::units::{height_sample_frames, pose_height, standing_height_from_poses};
use crate::core::limits::{MAX_FRAMES, MAX_JOINT_SAMPLES};

/// Byte classes of the motion section.
const SEP: u8 = 0;
const NUM: u8 = 1;
const NEWLINE: u8 = 2;
const OTHER: u8 = 3;

const fn classes() -> [u8; 256] {
    let mut t = [OTHER; 256];
    t[b' ' as usize] = SEP;
    t[b'\t' as usize] = SEP;
    t[b'\r' as usize] = SEP;
    t[0x0c] = SEP;
    t[b'\n' as usize] = NEWLINE;
    let mut d = b'0';
    while d <= b'9' {
        t[d as usize] = NUM;
        d += 1;
    }
    t[b'.' as usize] = NUM;
    t[b'+' as usize] = NUM;
    t[b'-' as usize] = NUM;
    t[b'e' as usize] = NUM;
    t[b'E' as usize] = NUM;
    t
}

static CLASS: [u8; 256] = classes();

/// Scans BVH bytes (see the module documentation). `name` names the clip.
pub(super) fn scan_bvh_bytes(
    bytes: &[u8],
    name: &str,
    options: &ImportOptions,
) -> Result<(ClipScan, Vec<ImportWarning>), ImportError> {
    let Header {
        hierarchy: h,
        header_frames,
        header_frames_line,
        fps,
        motion_pos,
        motion_line,
    } = parse_header(bytes)?;
    let joints = h.names.len();
    let width = h.channel_count;
    let mut warnings = Vec::new();

    let skip = usize::from(options.skip_first_frame);
    // The most frame rows kept: more are refused at the first one past the limit, as the full
    // import does, before the rest of the file is scanned.
    let max_rows = MAX_FRAMES.min(MAX_JOINT_SAMPLES / joints.max(1)) + skip;
    // Start offset and line of every frame row.
    let mut rows: Vec<(usize, usize)> = Vec::new();
    let mut i = motion_pos;
    let mut line = motion_line;
    let n = bytes.len();
    while i < n {
        let start = i;
        let mut count = 0usize;
        let mut in_token = false;
        while i < n {
            match CLASS[bytes[i] as usize] {
                SEP => in_token = false,
                NUM => {
                    count += usize::from(!in_token);
                    in_token = true;
                }
                NEWLINE => break,
                _ => {
                    let value = count + usize::from(!in_token);
                    return Err(bad_token(bytes, i, line, value));
                }
            }
            i += 1;
        }
        if count > 0 {
            if count != width {
                return Err(ImportError::new(
                    Place::Line(line),
                    format!(
                        "expected {width} values in the frame row (the CHANNELS total), found {count}"
                    ),
                ));
            }
            if rows.len() == max_rows {
                return Err(ImportError::new(
                    Place::Line(line),
                    format!(
                        "expected at most {MAX_FRAMES} frames and {MAX_JOINT_SAMPLES} joint samples (frames x {joints} joints); this frame row goes past the limit"
                    ),
                ));
            }
            rows.push((start, line));
        }
        // Past the newline.
        i += 1;
        line += 1;
    }

    let frames = if width == 0 {
        // Rest poses only: the count comes from the header, as in the full import.
        let cap = (1_000_000 / joints.max(1)).min(MAX_FRAMES) as u64;
        if header_frames > cap {
            warnings.push(ImportWarning {
                place: Place::Line(header_frames_line),
                message: format!(
                    "the skeleton has no channels; the header's {header_frames} frames were capped to {cap} rest poses"
                ),
            });
        }
        (header_frames.min(cap) as usize).saturating_sub(skip)
    } else {
        if rows.len() as u64 != header_frames {
            let present = rows.len();
            warnings.push(ImportWarning {
                place: Place::Line(header_frames_line),
                message: format!(
                    "the header says {header_frames} frames but {present} frame rows are present; using the {present} rows"
                ),
            });
        }
        // Within the limits: rows past them were refused above.
        rows.len().saturating_sub(skip)
    };
    let skipped = options.skip_first_frame
        && if width == 0 {
            header_frames > 0
        } else {
            !rows.is_empty()
        };
    if skipped {
        let at = rows.first().map_or(header_frames_line, |r| r.1);
        warnings.push(ImportWarning {
            place: Place::Line(at),
            message: String::from("skipped the first frame as requested (skip first frame option)"),
        });
    }

    // The standing height, on the rows the full measure uses (the rest pose for a clip without
    // frames).
    let mut values = vec![0.0f64; width];
    let mut rotations = Vec::with_capacity(joints);
    let mut translations = Vec::with_capacity(joints);
    let mut poses: Vec<(Vec<glam::Quat>, Vec<glam::Vec3>)> = Vec::new();
    for f in height_sample_frames(frames) {
        rotations.clear();
        translations.clear();
        if width > 0 {
            let (start, line) = rows[f + skip];
            read_row(bytes, start, line, &mut values)?;
        }
        h.append_frame(&values, &mut rotations, &mut translations);
        poses.push((rotations.clone(), translations.clone()));
    }
    let joint_names = h.names.clone();
    let skeleton = h.into_skeleton();
    let mut local = skeleton.rest.clone();
    let mut model = vec![Transform::IDENTITY; joints];
    let mut heights = Vec::with_capacity(poses.len().max(1));
    if poses.is_empty() {
        heights.extend(pose_height(&skeleton, &local, &mut model));
    }
    for (rot, tr) in &poses {
        for j in 0..joints {
            local[j] = Transform {
                translation: tr[j],
                rotation: rot[j],
                scale: glam::Vec3::ONE,
            };
        }
        heights.extend(pose_height(&skeleton, &local, &mut model));
    }
    let height_units = if heights.len() == poses.len().max(1) {
        standing_height_from_poses(&heights)
    } else {
        None
    };
    Ok((
        ClipScan {
            name: name.to_owned(),
            joint_names,
            parents: skeleton.parents,
            frames,
            fps,
            unit_cm: options.unit_cm.unwrap_or(1.0),
            height_units,
        },
        warnings,
    ))
}

/// Parses the values of the row starting at `start` into `out` (its length is the row width,
/// already checked by the scan).
fn read_row(bytes: &[u8], start: usize, line: usize, out: &mut [f64]) -> Result<(), ImportError> {
    let end = bytes[start..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |e| start + e);
    let tokens = bytes[start..end]
        .split(|b| CLASS[*b as usize] == SEP)
        .filter(|t| !t.is_empty());
    for (k, (tok, v)) in tokens.zip(out.iter_mut()).enumerate() {
        *v = parse_f64(tok)
            .filter(|v| v.abs() <= f64::from(f32::MAX))
            .ok_or_else(|| {
                err_found(
                    line,
                    &format!(
                        "a finite number within the f32 range (value {} of the frame row)",
                        k + 1
                    ),
                    tok,
                )
            })?;
    }
    Ok(())
}

/// The error for a byte that cannot be part of a number, at `at` on `line`: names the whole token.
fn bad_token(bytes: &[u8], at: usize, line: usize, value: usize) -> ImportError {
    let is_sep = |b: u8| matches!(CLASS[b as usize], SEP | NEWLINE);
    let start = bytes[..at]
        .iter()
        .rposition(|&b| is_sep(b))
        .map_or(0, |s| s + 1);
    let end = bytes[at..]
        .iter()
        .position(|&b| is_sep(b))
        .map_or(bytes.len(), |e| at + e);
    err_found(
        line,
        &format!("a finite number within the f32 range (value {value} of the frame row)"),
        &bytes[start..end],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::anim::parse_bvh;
    use crate::core::anim::units::standing_height_units;

    const ARM: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
  JOINT A
  {
    OFFSET 0 10 0
    CHANNELS 3 Zrotation Yrotation Xrotation
    End Site
    {
      OFFSET 0 5 0
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.5
0 90 0 0 0 0 0 0 0
10 90 0 0 0 0 90 0 0\r

20 90 0 0 0 0 45 0 0
";

    fn scan(
        text: &str,
        options: &ImportOptions,
    ) -> Result<(ClipScan, Vec<ImportWarning>), ImportError> {
        scan_bvh_bytes(text.as_bytes(), "arm", options)
    }

    #[test]
    fn the_scan_agrees_with_the_full_import() {
        for skip in [false, true] {
            let options = ImportOptions {
                skip_first_frame: skip,
                ..ImportOptions::default()
            };
            for text in [
                ARM.to_string(),
                ARM.replace("Frames: 3", "Frames: 7"),
                ARM.replace("\n", "\r\n"),
                ARM.trim_end().to_string(),
            ] {
                let (s, sw) = scan(&text, &options).unwrap();
                let (c, cw) = parse_bvh(&text, "arm", &options).unwrap();
                assert_eq!(s.frames, c.frame_count);
                assert_eq!(s.fps, c.fps);
                assert_eq!(s.joint_names, c.skeleton.names);
                assert_eq!(s.parents, c.skeleton.parents);
                assert_eq!(s.height_units, standing_height_units(&c));
                assert_eq!(sw, cw, "{text:?}");
            }
        }
    }

    #[test]
    fn bad_rows_are_found_with_their_line() {
        let o = ImportOptions::default();
        let e = scan(
            &ARM.replace("10 90 0 0 0 0 90 0 0", "10 90 0 0 0 0 90 0"),
            &o,
        )
        .unwrap_err();
        assert_eq!(e.place, Place::Line(20));
        assert!(e.message.contains("expected 9 values"), "{e}");
        let e = scan(&ARM.replace("20 90 0 0 0 0 45", "20 90 0 nan 0 0 45"), &o).unwrap_err();
        assert_eq!(e.place, Place::Line(22));
        assert!(
            e.message.contains("value 4") && e.message.contains("`nan`"),
            "{e}"
        );
        // The same messages as the full import.
        for text in [
            ARM.replace("20 90 0 0 0 0 45", "20 90 0 nan 0 0 45"),
            ARM.replace("10 90 0 0 0 0 90 0 0", "10 90 0 0 0 0 90 0"),
            ARM.replace("Frame Time: 0.5", "Frame Time: x"),
            ARM.replace("JOINT A", "JOINT"),
        ] {
            assert_eq!(
                scan(&text, &o).unwrap_err(),
                parse_bvh(&text, "arm", &o).unwrap_err()
            );
        }
    }

    #[test]
    fn rows_past_the_frame_limit_are_refused_at_the_first_one() {
        // One joint, one channel: MAX_FRAMES rows, two more, then a word. The scan stops at the
        // row past the limit (it does not collect the rest of the file), as the full import does;
        // a skipped first row is not counted.
        let mut text = String::from(
            "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\nMOTION\nFrames: 1\nFrame Time: 0.1\n",
        );
        for _ in 0..MAX_FRAMES + 2 {
            text.push_str("0\n");
        }
        text.push_str("word\n");
        for skip in [false, true] {
            let o = ImportOptions {
                skip_first_frame: skip,
                ..ImportOptions::default()
            };
            let e = scan(&text, &o).unwrap_err();
            assert_eq!(e, parse_bvh(&text, "a", &o).unwrap_err());
            let last = 10 + MAX_FRAMES;
            let at = if skip { last + 1 } else { last };
            assert_eq!(e.place, Place::Line(at), "{e}");
            assert!(e.message.contains("goes past the limit"), "{e}");
        }
    }

    #[test]
    fn a_skeleton_without_channels_counts_the_header_frames() {
        let text = "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nEnd Site\n{\nOFFSET 0 3 0\n}\n}\nMOTION\nFrames: 4\nFrame Time: 0.1\n\n\n";
        let (s, _) = scan(text, &ImportOptions::default()).unwrap();
        let (c, _) = parse_bvh(text, "a", &ImportOptions::default()).unwrap();
        assert_eq!((s.frames, c.frame_count), (4, 4));
        assert_eq!(s.height_units, Some(3.0));
    }
}
