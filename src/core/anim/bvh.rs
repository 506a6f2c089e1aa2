//! BVH (Biovision Hierarchy) import and export.
//!
//! Import policies (see `docs/ANIMATION.md`):
//! - tokens are separated by any ASCII whitespace (LF, CRLF, mixed, tabs, any indentation);
//! - keywords are matched case-insensitively; a joint name is the rest of its line (names may hold
//!   `:` or spaces);
//! - each position channel replaces the matching OFFSET component (never added to it);
//! - rotation channels compose in the order listed, per joint (`Zrotation Xrotation Yrotation` means
//!   `R = Rz * Rx * Ry`), in degrees, computed in f64;
//! - one frame per non-blank motion line, exactly the CHANNELS total values; `nan`, `inf` and numbers
//!   that overflow are rejected;
//! - a `Frames:` count that differs from the rows present: the rows are used and a warning is given;
//! - quaternions are kept on the hemisphere of the previous frame (Euler wrap-around is harmless).

use std::fmt::Write as _;

use glam::{DQuat, DVec3, EulerRot, Quat, Vec3};

use super::clip::Clip;
use super::import::{ImportError, ImportOptions, ImportWarning, Place};
use super::skeleton::{EndSite, Skeleton, Transform};
use crate::core::limits::{MAX_FRAMES, MAX_JOINT_SAMPLES, MAX_JOINTS};

/// A BVH channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Channel {
    Pos(usize),
    Rot(usize),
}

/// Parses BVH text into a clip named `name`. Returns the clip and the warnings.
pub fn parse_bvh(
    text: &str,
    name: &str,
    options: &ImportOptions,
) -> Result<(Clip, Vec<ImportWarning>), ImportError> {
    parse_bvh_bytes(text.as_bytes(), name, options)
}

/// Parses BVH bytes (ASCII; any other byte is only accepted inside joint names, which must be UTF-8).
pub fn parse_bvh_bytes(
    bytes: &[u8],
    name: &str,
    options: &ImportOptions,
) -> Result<(Clip, Vec<ImportWarning>), ImportError> {
    let Header {
        hierarchy: h,
        header_frames,
        header_frames_line,
        fps,
        motion_pos,
        motion_line,
    } = parse_header(bytes)?;
    let mut p = Parser {
        s: bytes,
        pos: motion_pos,
        line: motion_line,
    };
    let mut warnings = Vec::new();

    // Motion rows.
    let joints = h.names.len();
    let width = h.channel_count;
    let remaining = bytes.len().saturating_sub(p.pos);
    // Each value takes at least 2 bytes (a digit and a separator): a safe upper bound for reserving.
    let max_rows = if width == 0 {
        0
    } else {
        remaining / (2 * width) + 1
    };
    // The header count is only a hint: the reservation is also bounded by the rows the remaining
    // bytes can hold and by the sample limit.
    let reserve = (header_frames.min(max_rows as u64)) as usize;
    let reserve = reserve
        .min(MAX_FRAMES)
        .min(MAX_JOINT_SAMPLES / joints.max(1));
    let mut rotations: Vec<Quat> = Vec::with_capacity(reserve * joints);
    let mut translations: Vec<Vec3> = Vec::with_capacity(reserve * joints);
    let mut row = vec![0.0f64; width];
    let mut frames = 0usize;
    let mut first_row_line = None;
    let mut skipped_first = false;
    loop {
        let line = p.line;
        let mut count = 0usize;
        let mut blank = true;
        // Parse the values of one line.
        loop {
            match p.next_in_line() {
                None => break,
                Some(tok) => {
                    blank = false;
                    // Positions are stored as f32: values beyond its range are rejected too.
                    let v = parse_f64(tok)
                        .filter(|v| v.abs() <= f64::from(f32::MAX))
                        .ok_or_else(|| {
                            err_found(
                                line,
                                &format!(
                                    "a finite number within the f32 range (value {} of the frame row)",
                                    count + 1
                                ),
                                tok,
                            )
                        })?;
                    if count < width {
                        row[count] = v;
                    }
                    count += 1;
                }
            }
        }
        let at_end = p.pos >= bytes.len();
        if !blank {
            if count != width {
                return Err(ImportError::new(
                    Place::Line(line),
                    format!(
                        "expected {width} values in the frame row (the CHANNELS total), found {count}"
                    ),
                ));
            }
            if first_row_line.is_none() {
                first_row_line = Some(line);
            }
            if options.skip_first_frame && !skipped_first {
                skipped_first = true;
            } else {
                if frames >= MAX_FRAMES || (frames + 1) * joints > MAX_JOINT_SAMPLES {
                    return Err(ImportError::new(
                        Place::Line(line),
                        format!(
                            "expected at most {MAX_FRAMES} frames and {MAX_JOINT_SAMPLES} joint samples (frames x {joints} joints); this frame row goes past the limit"
                        ),
                    ));
                }
                h.append_frame(&row, &mut rotations, &mut translations);
                frames += 1;
            }
        }
        // (A skeleton without channels has empty rows: its frames are counted from the header below.)
        if at_end {
            break;
        }
        p.skip_newline();
    }
    if width == 0 {
        // Without channels there is no motion data: every frame is the rest pose. The count comes
        // from the header, bounded so that at most 1,000,000 joint samples are allocated.
        let cap = (1_000_000 / joints.max(1)).min(MAX_FRAMES) as u64;
        let mut n = header_frames.min(cap);
        if header_frames > cap {
            warnings.push(ImportWarning {
                place: Place::Line(header_frames_line),
                message: format!(
                    "the skeleton has no channels; the header's {header_frames} frames were capped to {cap} rest poses"
                ),
            });
        }
        if options.skip_first_frame && n > 0 {
            n -= 1;
            skipped_first = true;
        }
        frames = n as usize;
        for _ in 0..frames {
            h.append_frame(&row, &mut rotations, &mut translations);
        }
    } else {
        let rows_present = frames as u64 + u64::from(skipped_first);
        if rows_present != header_frames {
            warnings.push(ImportWarning {
                place: Place::Line(header_frames_line),
                message: format!(
                    "the header says {header_frames} frames but {rows_present} frame rows are present; using the {rows_present} rows"
                ),
            });
        }
    }
    if skipped_first {
        warnings.push(ImportWarning {
            place: Place::Line(first_row_line.unwrap_or(header_frames_line)),
            message: String::from("skipped the first frame as requested (skip first frame option)"),
        });
    }

    let skeleton = h.into_skeleton();
    let scales = vec![Vec3::ONE; rotations.len()];
    let clip = Clip {
        name: name.to_owned(),
        skeleton,
        fps,
        frame_count: frames,
        unit_cm: options.unit_cm.unwrap_or(1.0),
        rotations,
        translations,
        scales,
    };
    Ok((clip, warnings))
}

/// The HIERARCHY section and the MOTION header of a BVH file, and where the frame rows start.
pub(super) struct Header {
    pub hierarchy: Hierarchy,
    /// The `Frames:` count (a hint: the rows present decide).
    pub header_frames: u64,
    pub header_frames_line: usize,
    pub fps: f32,
    /// Byte offset and line of the first frame row (just after the `Frame Time:` line).
    pub motion_pos: usize,
    pub motion_line: usize,
}

/// Parses everything before the frame rows.
pub(super) fn parse_header(bytes: &[u8]) -> Result<Header, ImportError> {
    // A UTF-8 byte order mark (written by some Windows tools) is skipped.
    let start = if bytes.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    // Lines ended by CR alone (classic Mac OS) read as one line; say so instead of an error at
    // its end.
    if bytes.contains(&b'\r') && !bytes.contains(&b'\n') {
        return Err(ImportError::new(
            Place::Line(1),
            "expected lines ended by LF or CR LF, found CR alone (classic Mac OS line endings)",
        ));
    }
    let mut p = Parser {
        s: bytes,
        pos: start,
        line: 1,
    };
    let mut h = Hierarchy::default();

    let (tok, line) = p.expect_token("the keyword HIERARCHY")?;
    if !tok.eq_ignore_ascii_case(b"HIERARCHY") {
        return Err(err_found(line, "the keyword HIERARCHY", tok));
    }
    // Roots until MOTION.
    loop {
        let (tok, line) = p.expect_token("ROOT or MOTION")?;
        if tok.eq_ignore_ascii_case(b"ROOT") {
            p.parse_root(&mut h, line)?;
        } else if tok.eq_ignore_ascii_case(b"MOTION") {
            break;
        } else {
            return Err(err_found(line, "ROOT or MOTION", tok));
        }
    }
    if h.names.is_empty() {
        return Err(ImportError::new(
            Place::Line(p.line),
            "expected at least one ROOT joint before MOTION",
        ));
    }

    // Frames: n
    let (tok, line) = p.expect_token("`Frames:`")?;
    let header_frames_line = line;
    let header_frames: u64 = if tok.eq_ignore_ascii_case(b"Frames:") {
        p.expect_uint("the frame count after `Frames:`")?
    } else if tok.eq_ignore_ascii_case(b"Frames") {
        let (c, l) = p.expect_token("`:` after `Frames`")?;
        if c != b":" {
            return Err(err_found(l, "`:` after `Frames`", c));
        }
        p.expect_uint("the frame count after `Frames:`")?
    } else {
        return Err(err_found(line, "`Frames:`", tok));
    };
    // Frame Time: t
    let (tok, line) = p.expect_token("`Frame Time:`")?;
    if !tok.eq_ignore_ascii_case(b"Frame") {
        return Err(err_found(line, "`Frame Time:`", tok));
    }
    let (tok, line) = p.expect_token("`Time:` after `Frame`")?;
    let time_line = line;
    if tok.eq_ignore_ascii_case(b"Time") {
        let (c, l) = p.expect_token("`:` after `Frame Time`")?;
        if c != b":" {
            return Err(err_found(l, "`:` after `Frame Time`", c));
        }
    } else if !tok.eq_ignore_ascii_case(b"Time:") {
        return Err(err_found(line, "`Time:` after `Frame`", tok));
    }
    // The value is on the `Frame Time:` line: a missing one is not the first number of the
    // first frame row.
    let value = p.rest_of_line();
    let mut words = value
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty());
    let (tok, extra) = (words.next(), words.next());
    let Some(tok) = tok else {
        return Err(ImportError::new(
            Place::Line(time_line),
            "expected a positive finite frame time in seconds after `Frame Time:`, found the end of the line",
        ));
    };
    if let Some(extra) = extra {
        return Err(err_found(
            time_line,
            "the end of the line after the frame time",
            extra,
        ));
    }
    let frame_time = parse_f64(tok)
        .filter(|t| *t > 0.0)
        .ok_or_else(|| err_found(time_line, "a positive finite frame time in seconds", tok))?;
    let (lo, hi) = (crate::core::limits::MIN_FPS, crate::core::limits::MAX_FPS);
    let rate = 1.0 / frame_time;
    if !(lo..=hi).contains(&rate) {
        return Err(err_found(
            time_line,
            &format!("a frame time giving {lo} to {hi} frames per second"),
            tok,
        ));
    }
    let fps = rate as f32;
    p.skip_rest_of_line();
    Ok(Header {
        hierarchy: h,
        header_frames,
        header_frames_line,
        fps,
        motion_pos: p.pos,
        motion_line: p.line,
    })
}

#[derive(Default)]
pub(super) struct Hierarchy {
    pub names: Vec<String>,
    /// The same names, for the uniqueness check in O(1).
    name_set: std::collections::HashSet<String>,
    parents: Vec<Option<usize>>,
    offsets: Vec<Vec3>,
    end_sites: Vec<EndSite>,
    /// Channels of each joint, in file order.
    channels: Vec<Vec<Channel>>,
    /// Values per frame row (the sum of the CHANNELS counts).
    pub channel_count: usize,
}

impl Hierarchy {
    /// The skeleton: joints in file order, rest translations from the OFFSETs.
    pub fn into_skeleton(self) -> Skeleton {
        Skeleton {
            names: self.names,
            parents: self.parents,
            rest: self
                .offsets
                .iter()
                .map(|o| Transform {
                    translation: *o,
                    rotation: Quat::IDENTITY,
                    scale: Vec3::ONE,
                })
                .collect(),
            end_sites: self.end_sites,
        }
    }

    /// Converts one motion row into local transforms and appends them.
    pub fn append_frame(
        &self,
        row: &[f64],
        rotations: &mut Vec<Quat>,
        translations: &mut Vec<Vec3>,
    ) {
        let joints = self.names.len();
        let prev_start = rotations.len().checked_sub(joints);
        let mut col = 0usize;
        for j in 0..joints {
            let mut t = self.offsets[j].as_dvec3();
            let mut q = DQuat::IDENTITY;
            for ch in &self.channels[j] {
                let v = row[col];
                col += 1;
                match *ch {
                    Channel::Pos(axis) => t[axis] = v,
                    // A zero angle is the identity: skip the trigonometry (constant channels
                    // are common in real files).
                    Channel::Rot(_) if v == 0.0 => {}
                    Channel::Rot(axis) => {
                        let (s, c) = (v.to_radians() * 0.5).sin_cos();
                        let r = match axis {
                            0 => DQuat::from_xyzw(s, 0.0, 0.0, c),
                            1 => DQuat::from_xyzw(0.0, s, 0.0, c),
                            _ => DQuat::from_xyzw(0.0, 0.0, s, c),
                        };
                        q *= r;
                    }
                }
            }
            // A product of unit quaternions in f64 is unit to ~1e-15: no normalisation needed.
            let mut qf = q.as_quat();
            if let Some(ps) = prev_start
                && rotations[ps + j].dot(qf) < 0.0
            {
                qf = -qf;
            } else if prev_start.is_none() && qf.w < 0.0 {
                qf = -qf;
            }
            rotations.push(qf);
            translations.push(t.as_vec3());
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    line: usize,
}

/// A joint whose `{` is open while parsing.
struct OpenJoint {
    index: usize,
    seen_offset: bool,
    seen_channels: bool,
}

impl<'a> Parser<'a> {
    /// Next whitespace-separated token and its line, crossing lines.
    fn next_token(&mut self) -> Option<(&'a [u8], usize)> {
        while self.pos < self.s.len() {
            let b = self.s[self.pos];
            if b == b'\n' {
                self.line += 1;
            } else if !b.is_ascii_whitespace() {
                break;
            }
            self.pos += 1;
        }
        if self.pos >= self.s.len() {
            return None;
        }
        let start = self.pos;
        while self.pos < self.s.len() && !self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        Some((&self.s[start..self.pos], self.line))
    }

    fn expect_token(&mut self, expected: &str) -> Result<(&'a [u8], usize), ImportError> {
        self.next_token().ok_or_else(|| {
            ImportError::new(
                Place::Line(self.line),
                format!("expected {expected}, found the end of the file"),
            )
        })
    }

    fn expect_uint(&mut self, expected: &str) -> Result<u64, ImportError> {
        let (tok, line) = self.expect_token(expected)?;
        if tok.is_empty() || tok.len() > 18 || !tok.iter().all(u8::is_ascii_digit) {
            return Err(err_found(line, expected, tok));
        }
        Ok(tok.iter().fold(0u64, |a, d| a * 10 + u64::from(d - b'0')))
    }

    fn expect_number(&mut self, expected: &str) -> Result<f64, ImportError> {
        let (tok, line) = self.expect_token(expected)?;
        parse_f64(tok).ok_or_else(|| err_found(line, expected, tok))
    }

    /// Next token on the current line (does not cross a newline).
    #[inline]
    fn next_in_line(&mut self) -> Option<&'a [u8]> {
        let s = self.s;
        let mut i = self.pos;
        while i < s.len() {
            let b = s[i];
            if b == b' ' || b == b'\t' || b == b'\r' || b == 0x0c {
                i += 1;
            } else {
                break;
            }
        }
        if i >= s.len() || s[i] == b'\n' {
            self.pos = i;
            return None;
        }
        let start = i;
        while i < s.len() && !s[i].is_ascii_whitespace() {
            i += 1;
        }
        self.pos = i;
        Some(&s[start..i])
    }

    /// Consumes a newline at the current position.
    fn skip_newline(&mut self) {
        if self.pos < self.s.len() && self.s[self.pos] == b'\n' {
            self.pos += 1;
            self.line += 1;
        }
    }

    fn skip_rest_of_line(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos] != b'\n' {
            self.pos += 1;
        }
        self.skip_newline();
    }

    /// The rest of the current line, trimmed (a joint name).
    fn rest_of_line(&mut self) -> &'a [u8] {
        let start = self.pos;
        while self.pos < self.s.len() && self.s[self.pos] != b'\n' {
            self.pos += 1;
        }
        self.s[start..self.pos].trim_ascii()
    }

    /// Reads a joint name and its opening brace after ROOT or JOINT and registers the joint.
    fn open_joint(
        &mut self,
        h: &mut Hierarchy,
        parent: Option<usize>,
        keyword_line: usize,
    ) -> Result<OpenJoint, ImportError> {
        let mut name = self.rest_of_line();
        let mut brace_on_line = false;
        if let Some(stripped) = name.strip_suffix(b"{") {
            name = stripped.trim_ascii();
            brace_on_line = true;
        }
        if name.is_empty() {
            return Err(ImportError::new(
                Place::Line(keyword_line),
                "expected a joint name after ROOT or JOINT",
            ));
        }
        let name = std::str::from_utf8(name).map_err(|_| {
            ImportError::new(Place::Line(keyword_line), "expected a UTF-8 joint name")
        })?;
        if !h.name_set.insert(name.to_owned()) {
            return Err(ImportError::new(
                Place::Line(keyword_line),
                format!("expected unique joint names, `{name}` is used twice"),
            ));
        }
        if !brace_on_line {
            let (tok, line) = self.expect_token("`{` after the joint name")?;
            if tok != b"{" {
                return Err(err_found(line, "`{` after the joint name", tok));
            }
        }
        let index = h.names.len();
        if index >= MAX_JOINTS {
            return Err(ImportError::new(
                Place::Line(keyword_line),
                format!("expected at most {MAX_JOINTS} joints; this joint goes past the limit"),
            ));
        }
        h.names.push(name.to_owned());
        h.parents.push(parent);
        h.offsets.push(Vec3::ZERO);
        h.channels.push(Vec::new());
        Ok(OpenJoint {
            index,
            seen_offset: false,
            seen_channels: false,
        })
    }

    /// Parses a ROOT joint and everything below it. Iterative (an explicit stack of open joints), so
    /// deep hierarchies cannot overflow the call stack.
    fn parse_root(&mut self, h: &mut Hierarchy, keyword_line: usize) -> Result<(), ImportError> {
        let mut open = vec![self.open_joint(h, None, keyword_line)?];
        while let Some(top) = open.last_mut() {
            let index = top.index;
            let (tok, line) = self.expect_token("OFFSET, CHANNELS, JOINT, End Site or `}`")?;
            if tok == b"}" {
                open.pop();
            } else if tok.eq_ignore_ascii_case(b"OFFSET") {
                seen_once(&mut top.seen_offset, "one OFFSET", &h.names[index], line)?;
                h.offsets[index] = self.parse_vec3("an OFFSET coordinate")?;
            } else if tok.eq_ignore_ascii_case(b"CHANNELS") {
                seen_once(
                    &mut top.seen_channels,
                    "one CHANNELS line",
                    &h.names[index],
                    line,
                )?;
                let n = self.expect_uint("the channel count after CHANNELS")?;
                if n > 64 {
                    return Err(ImportError::new(
                        Place::Line(line),
                        format!("expected at most 64 channels on a joint, found {n}"),
                    ));
                }
                let mut chans = Vec::with_capacity(n as usize);
                let mut pos_seen = [false; 3];
                for _ in 0..n {
                    let (c, l) = self.expect_token("a channel name")?;
                    let ch = channel_from(c).ok_or_else(|| {
                        err_found(
                            l,
                            "a channel name (Xposition, Yposition, Zposition, Xrotation, Yrotation, Zrotation)",
                            c,
                        )
                    })?;
                    if let Channel::Pos(a) = ch {
                        if pos_seen[a] {
                            return Err(err_found(l, "each position channel at most once", c));
                        }
                        pos_seen[a] = true;
                    }
                    chans.push(ch);
                }
                h.channel_count += chans.len();
                h.channels[index] = chans;
            } else if tok.eq_ignore_ascii_case(b"JOINT") {
                let child = self.open_joint(h, Some(index), line)?;
                open.push(child);
            } else if tok.eq_ignore_ascii_case(b"End") {
                let (site, l) = self.expect_token("`Site` after `End`")?;
                if !site.eq_ignore_ascii_case(b"Site") {
                    return Err(err_found(l, "`Site` after `End`", site));
                }
                let (b, l) = self.expect_token("`{` after End Site")?;
                if b != b"{" {
                    return Err(err_found(l, "`{` after End Site", b));
                }
                let (o, l) = self.expect_token("OFFSET in End Site")?;
                if !o.eq_ignore_ascii_case(b"OFFSET") {
                    return Err(err_found(l, "OFFSET in End Site", o));
                }
                let offset = self.parse_vec3("an End Site OFFSET coordinate")?;
                let (b, l) = self.expect_token("`}` closing End Site")?;
                if b != b"}" {
                    return Err(err_found(l, "`}` closing End Site", b));
                }
                h.end_sites.push(EndSite {
                    parent: index,
                    offset,
                });
            } else {
                return Err(err_found(
                    line,
                    "OFFSET, CHANNELS, JOINT, End Site or `}`",
                    tok,
                ));
            }
        }
        Ok(())
    }

    fn parse_vec3(&mut self, what: &str) -> Result<Vec3, ImportError> {
        let x = self.expect_number(what)?;
        let y = self.expect_number(what)?;
        let z = self.expect_number(what)?;
        let v = DVec3::new(x, y, z).as_vec3();
        if !v.is_finite() {
            return Err(ImportError::new(
                Place::Line(self.line),
                format!("expected {what} within the f32 range"),
            ));
        }
        Ok(v)
    }
}

fn channel_from(tok: &[u8]) -> Option<Channel> {
    if tok.len() != 9 {
        return None;
    }
    let axis = match tok[0] {
        b'X' | b'x' => 0,
        b'Y' | b'y' => 1,
        b'Z' | b'z' => 2,
        _ => return None,
    };
    let rest = &tok[1..];
    if rest.eq_ignore_ascii_case(b"position") {
        Some(Channel::Pos(axis))
    } else if rest.eq_ignore_ascii_case(b"rotation") {
        Some(Channel::Rot(axis))
    } else {
        None
    }
}

pub(super) fn err_found(line: usize, expected: &str, found: &[u8]) -> ImportError {
    // Control characters escaped (`\u{1b}`): a file's bytes printed raw could drive the
    // terminal (colours, titles, a cleared screen) instead of showing what was found.
    let mut shown = String::new();
    for c in String::from_utf8_lossy(&found[..found.len().min(40)]).chars() {
        if c.is_control() {
            shown.extend(c.escape_debug());
        } else {
            shown.push(c);
        }
    }
    let more = if found.len() > 40 { "..." } else { "" };
    ImportError::new(
        Place::Line(line),
        format!("expected {expected}, found `{shown}{more}`"),
    )
}

const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Parses a decimal number: optional sign, digits with an optional `.`, optional exponent. Returns
/// `None` for anything else (including `nan`, `inf`) and for results that are not finite.
///
/// Fast path (Clinger): when the significant digits fit in 2^53 and the power of ten is at most 22,
/// `m * 10^e` or `m / 10^-e` is one correctly rounded f64 operation. Otherwise the validated token
/// goes to the standard library parser, which is correctly rounded.
pub(crate) fn parse_f64(tok: &[u8]) -> Option<f64> {
    let mut i = 0;
    let n = tok.len();
    let neg = match tok.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let mut mant: u64 = 0;
    let mut digits = 0u32; // significant digits accumulated (after leading zeros)
    let mut any_digit = false;
    let mut exp10: i64 = 0;
    let mut overflow = false;
    while i < n && tok[i].is_ascii_digit() {
        any_digit = true;
        let d = u64::from(tok[i] - b'0');
        if digits < 19 {
            if mant != 0 || d != 0 {
                digits += 1;
            }
            mant = mant * 10 + d;
        } else {
            overflow = true;
            exp10 += 1;
        }
        i += 1;
    }
    if i < n && tok[i] == b'.' {
        i += 1;
        while i < n && tok[i].is_ascii_digit() {
            any_digit = true;
            let d = u64::from(tok[i] - b'0');
            if digits < 19 {
                if mant != 0 || d != 0 {
                    digits += 1;
                }
                mant = mant * 10 + d;
                exp10 -= 1;
            } else {
                overflow = true;
            }
            i += 1;
        }
    }
    if !any_digit {
        return None;
    }
    if i < n && (tok[i] == b'e' || tok[i] == b'E') {
        i += 1;
        let eneg = match tok.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let mut e: i64 = 0;
        let mut any = false;
        while i < n && tok[i].is_ascii_digit() {
            any = true;
            if e < 100_000 {
                e = e * 10 + i64::from(tok[i] - b'0');
            }
            i += 1;
        }
        if !any {
            return None;
        }
        exp10 += if eneg { -e } else { e };
    }
    if i != n {
        return None;
    }
    let v = if !overflow && mant < (1u64 << 53) && (-22..=22).contains(&exp10) {
        let m = mant as f64;
        if exp10 < 0 {
            m / POW10[(-exp10) as usize]
        } else {
            m * POW10[exp10 as usize]
        }
    } else {
        let s = std::str::from_utf8(tok).ok()?;
        let v: f64 = s.parse().ok()?;
        return v.is_finite().then_some(v);
    };
    let v = if neg { -v } else { v };
    v.is_finite().then_some(v)
}

/// Writes a clip as BVH text.
///
/// Layout: every joint gets `CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation`
/// when it is a root or its translation ever differs from its rest offset, else
/// `CHANNELS 3 Zrotation Yrotation Xrotation`. The OFFSET is the rest translation. Values are written
/// with the shortest text that reads back to the same f32 (translations) or f64 (Euler angles in
/// degrees, from an f64 decomposition of the f32 quaternion), never in exponent notation, so `parse(write(clip))` reproduces global
/// joint positions to float precision. Scales and rest rotations cannot be expressed in BVH and are
/// dropped (see [`bvh_export_losses`]). Leaf joints without an End Site get `End Site { OFFSET 0 0 0 }`.
pub fn write_bvh(clip: &Clip) -> String {
    let sk = &clip.skeleton;
    let n = sk.len();
    let frames = if clip.rotations.len() >= clip.frame_count * n
        && clip.translations.len() >= clip.frame_count * n
    {
        clip.frame_count
    } else {
        0
    };
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for (j, p) in sk.parents.iter().enumerate().take(n) {
        match *p {
            Some(p) if p < j => children[p].push(j),
            _ => roots.push(j),
        }
    }
    let rest_t: Vec<Vec3> = (0..n)
        .map(|j| sk.rest.get(j).map_or(Vec3::ZERO, |r| r.translation))
        .collect();
    let six: Vec<bool> = (0..n)
        .map(|j| {
            roots.contains(&j) || (0..frames).any(|f| clip.translations[f * n + j] != rest_t[j])
        })
        .collect();
    let mut out = String::with_capacity(64 * n + frames * n * 60);
    out.push_str("HIERARCHY\n");
    for &r in &roots {
        write_joint(&mut out, clip, &children, &six, &rest_t, r);
    }
    // The fewest decimals of the frame time from which the reader (which takes `1 / time` in 64
    // bits to 32) gets the same rate back: `0.0333333` for a rate read from that, `0.033333333`
    // for 30 fps; else the 17 digits of the 64-bit reciprocal, which always do.
    let fps = if clip.fps > 0.0 && clip.fps.is_finite() {
        clip.fps
    } else {
        30.0
    };
    let exact = 1.0 / f64::from(fps);
    let frame_time = (0..=24)
        .map(|decimals| format!("{exact:.decimals$}"))
        .find(|t| {
            t.parse::<f64>()
                .is_ok_and(|t| t > 0.0 && (1.0 / t) as f32 == fps)
        })
        .unwrap_or_else(|| format!("{exact:?}"));
    let _ = write!(out, "MOTION\nFrames: {frames}\nFrame Time: {frame_time}\n");
    // Write joints in the same (depth-first) order as the hierarchy.
    let mut order = Vec::with_capacity(n);
    for &r in &roots {
        dfs_order(&children, r, &mut order);
    }
    for f in 0..frames {
        let mut first = true;
        for &j in &order {
            let t = clip.translations[f * n + j];
            let q = clip.rotations[f * n + j].as_dquat().normalize();
            let sep = |out: &mut String, first: &mut bool| {
                if !*first {
                    out.push(' ');
                }
                *first = false;
            };
            if six[j] {
                for c in [t.x, t.y, t.z] {
                    sep(&mut out, &mut first);
                    let _ = write!(out, "{c}");
                }
            }
            let (z, y, x) = if q.is_finite() {
                q.to_euler(EulerRot::ZYX)
            } else {
                (0.0, 0.0, 0.0)
            };
            for a in [z, y, x] {
                sep(&mut out, &mut first);
                // Shortest text that reads back to the same f64.
                let _ = write!(out, "{}", a.to_degrees());
            }
        }
        out.push('\n');
    }
    out
}

/// Writes a clip as a BVH file with [`crate::core::io::write_atomic`] (readers see the old file or
/// the new one, never a mix); `keep_backup` keeps the previous file as `name.bvh.bak`.
pub fn save_bvh(path: &std::path::Path, clip: &Clip, keep_backup: bool) -> std::io::Result<()> {
    crate::core::io::write_atomic(path, write_bvh(clip).as_bytes(), keep_backup)
}

/// What [`write_bvh`] cannot express for this clip: non-unit scales and non-identity rest rotations.
pub fn bvh_export_losses(clip: &Clip) -> Vec<String> {
    let mut losses = Vec::new();
    if clip
        .scales
        .iter()
        .any(|s| (*s - Vec3::ONE).abs().max_element() > 1e-6)
    {
        losses.push(String::from(
            "non-unit scales are dropped (BVH has no scale channels)",
        ));
    }
    if clip.skeleton.rest.iter().any(|r| {
        !r.rotation.abs_diff_eq(Quat::IDENTITY, 1e-6)
            && !r.rotation.abs_diff_eq(-Quat::IDENTITY, 1e-6)
    }) {
        losses.push(String::from(
            "rest rotations are dropped (BVH rest poses have no rotation); animated rotations are kept",
        ));
    }
    losses
}

fn dfs_order(children: &[Vec<usize>], j: usize, order: &mut Vec<usize>) {
    // Iterative to survive deep hierarchies.
    let mut stack = vec![j];
    while let Some(j) = stack.pop() {
        order.push(j);
        for &c in children[j].iter().rev() {
            stack.push(c);
        }
    }
}

fn write_joint(
    out: &mut String,
    clip: &Clip,
    children: &[Vec<usize>],
    six: &[bool],
    rest_t: &[Vec3],
    root: usize,
) {
    enum Step {
        Open(usize, usize),
        Close(usize),
    }
    let sk = &clip.skeleton;
    let mut stack = vec![Step::Open(root, 0)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Open(j, depth) => {
                // Indentation is capped so pathological depths do not blow up the text.
                let ind = "\t".repeat(depth.min(32));
                let kw = if depth == 0 { "ROOT" } else { "JOINT" };
                let name = sanitize_name(&sk.names[j], j);
                let o = rest_t[j];
                let _ = writeln!(
                    out,
                    "{ind}{kw} {name}\n{ind}{{\n{ind}\tOFFSET {} {} {}",
                    o.x, o.y, o.z
                );
                if six[j] {
                    let _ = writeln!(
                        out,
                        "{ind}\tCHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation"
                    );
                } else {
                    let _ = writeln!(out, "{ind}\tCHANNELS 3 Zrotation Yrotation Xrotation");
                }
                let mut has_site = false;
                for e in sk.end_sites.iter().filter(|e| e.parent == j) {
                    has_site = true;
                    let _ = writeln!(
                        out,
                        "{ind}\tEnd Site\n{ind}\t{{\n{ind}\t\tOFFSET {} {} {}\n{ind}\t}}",
                        e.offset.x, e.offset.y, e.offset.z
                    );
                }
                if children[j].is_empty() && !has_site {
                    let _ = writeln!(
                        out,
                        "{ind}\tEnd Site\n{ind}\t{{\n{ind}\t\tOFFSET 0 0 0\n{ind}\t}}"
                    );
                }
                stack.push(Step::Close(depth));
                for &c in children[j].iter().rev() {
                    stack.push(Step::Open(c, depth + 1));
                }
            }
            Step::Close(depth) => {
                let _ = writeln!(out, "{}}}", "\t".repeat(depth.min(32)));
            }
        }
    }
}

/// Joint names are written on one line; line breaks and empty names would break the file.
fn sanitize_name(name: &str, index: usize) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c == '\n' || c == '\r' || c == '{' || c == '}' {
                '_'
            } else {
                c
            }
        })
        .collect();
    let trimmed = cleaned.trim();
    if trimmed.is_empty() {
        format!("joint{index}")
    } else {
        trimmed.to_owned()
    }
}

/// Marks a joint's OFFSET or CHANNELS as seen; a second one is an error at its line.
fn seen_once(seen: &mut bool, what: &str, joint: &str, line: usize) -> Result<(), ImportError> {
    if std::mem::replace(seen, true) {
        return Err(ImportError::new(
            Place::Line(line),
            format!("expected {what} per joint, `{joint}` has a second one"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_f64;
    use proptest::prelude::*;

    #[test]
    fn parse_f64_spellings() {
        for (s, v) in [
            ("0", 0.0),
            ("-0", -0.0),
            (".0083333", 0.0083333),
            ("5.1072e-06", 5.1072e-06),
            ("9.2E-16", 9.2e-16),
            ("+3.", 3.0),
            ("93.148800", 93.1488),
            ("12345678901234567890123", 12345678901234567890123.0),
            ("0.000000000000000000000000001", 1e-27),
        ] {
            assert_eq!(parse_f64(s.as_bytes()), Some(v), "{s}");
        }
        for s in [
            "", "-", ".", "e5", "1e", "1e+", "nan", "inf", "-inf", "1.2.3", "1e999", "0x10", "1,5",
            "--1",
        ] {
            assert_eq!(parse_f64(s.as_bytes()), None, "{s}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// The fast parser is bit-identical to the standard library on every finite f64 spelled by
        /// Rust's shortest round-trip formatting and by fixed or exponent formats.
        #[test]
        fn parse_f64_matches_std(v in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO, prec in 0usize..12) {
            for s in [format!("{v}"), format!("{v:e}"), format!("{v:.prec$}"), format!("{v:.prec$e}")] {
                let expected: f64 = s.parse().unwrap();
                if !expected.is_finite() {
                    // Rounding to fewer digits can overflow (1.6e308 -> "2e308"); such values are
                    // refused, never read as infinity.
                    prop_assert_eq!(parse_f64(s.as_bytes()), None, "{}", s);
                    continue;
                }
                prop_assert_eq!(parse_f64(s.as_bytes()).map(f64::to_bits), Some(expected.to_bits()), "{}", s);
            }
        }

        #[test]
        fn parse_f64_matches_std_on_short_decimals(int in 0u32..100_000, frac in 0u32..1_000_000, neg: bool) {
            let s = format!("{}{int}.{frac:06}", if neg { "-" } else { "" });
            let expected: f64 = s.parse().unwrap();
            prop_assert_eq!(parse_f64(s.as_bytes()).map(f64::to_bits), Some(expected.to_bits()));
        }
    }
}
