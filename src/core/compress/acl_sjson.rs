//! Export to ACL's SJSON clip format (`*.acl.sjson`, format version 5), so a clip can be
//! cross-checked with ACL's own tools (`acl_compressor`).
//!
//! Translations and bind translations are written in centimetres (file units x `unit_cm`) so ACL's
//! errors are in centimetres too; `vertex_distance` is the shell distance (3 cm by default). Floats
//! are written with Rust's shortest round-trip formatting, so the float32 values are exact.

use std::fmt::Write as _;

use crate::core::anim::Clip;

/// How every file [`to_acl_sjson`] writes starts (so that `export-acl` knows its own outputs).
pub const HEADER_START: &str = "// Written by taglane from clip ";

/// Writes `clip` as ACL SJSON text.
pub fn to_acl_sjson(clip: &Clip, vertex_distance_cm: f32) -> String {
    let mut s = String::new();
    let u = clip.unit_cm;
    let _ = writeln!(
        s,
        "{HEADER_START}\"{}\"; units: centimetres.",
        escape(&clip.name)
    );
    let _ = writeln!(s, "version = 5");
    let _ = writeln!(s, "clip =\n{{");
    let _ = writeln!(s, "\tname = \"{}\"", escape(&clip.name));
    let _ = writeln!(s, "\tnum_samples = {}", clip.frame_count);
    let _ = writeln!(s, "\tsample_rate = {}", fmt(clip.fps));
    let _ = writeln!(s, "\tis_binary_exact = false");
    let _ = writeln!(s, "\tadditive_format = \"none\"");
    let _ = writeln!(s, "}}\n");
    let _ = writeln!(s, "bones =\n[");
    for j in 0..clip.joint_count() {
        let rest = &clip.skeleton.rest[j];
        let parent =
            clip.skeleton.parents[j].map_or(String::new(), |p| escape(&clip.skeleton.names[p]));
        let _ = writeln!(s, "\t{{");
        let _ = writeln!(s, "\t\tname = \"{}\"", escape(&clip.skeleton.names[j]));
        let _ = writeln!(s, "\t\tparent = \"{parent}\"");
        let _ = writeln!(s, "\t\tvertex_distance = {}", fmt(vertex_distance_cm));
        let r = rest.rotation;
        let _ = writeln!(
            s,
            "\t\tbind_rotation = [ {}, {}, {}, {} ]",
            fmt(r.x),
            fmt(r.y),
            fmt(r.z),
            fmt(r.w)
        );
        let t = rest.translation * u;
        let _ = writeln!(
            s,
            "\t\tbind_translation = [ {}, {}, {} ]",
            fmt(t.x),
            fmt(t.y),
            fmt(t.z)
        );
        let sc = rest.scale;
        let _ = writeln!(
            s,
            "\t\tbind_scale = [ {}, {}, {} ]",
            fmt(sc.x),
            fmt(sc.y),
            fmt(sc.z)
        );
        let _ = writeln!(s, "\t}}");
    }
    let _ = writeln!(s, "]\n");
    let _ = writeln!(s, "tracks =\n[");
    let n = clip.joint_count();
    for j in 0..n {
        let _ = writeln!(s, "\t{{");
        let _ = writeln!(s, "\t\tname = \"{}\"", escape(&clip.skeleton.names[j]));
        let _ = writeln!(s, "\t\trotations =\n\t\t[");
        for f in 0..clip.frame_count {
            let q = clip.rotations[f * n + j];
            let _ = writeln!(
                s,
                "\t\t\t[ {}, {}, {}, {} ]",
                fmt(q.x),
                fmt(q.y),
                fmt(q.z),
                fmt(q.w)
            );
        }
        let _ = writeln!(s, "\t\t]");
        let _ = writeln!(s, "\t\ttranslations =\n\t\t[");
        for f in 0..clip.frame_count {
            let t = clip.translations[f * n + j] * u;
            let _ = writeln!(s, "\t\t\t[ {}, {}, {} ]", fmt(t.x), fmt(t.y), fmt(t.z));
        }
        let _ = writeln!(s, "\t\t]");
        let _ = writeln!(s, "\t\tscales =\n\t\t[");
        for f in 0..clip.frame_count {
            let t = clip.scales[f * n + j];
            let _ = writeln!(s, "\t\t\t[ {}, {}, {} ]", fmt(t.x), fmt(t.y), fmt(t.z));
        }
        let _ = writeln!(s, "\t\t]");
        let _ = writeln!(s, "\t}}");
    }
    let _ = writeln!(s, "]");
    s
}

fn fmt(x: f32) -> String {
    // Shortest representation that reads back to the same f32; always with a decimal point.
    let mut t = format!("{x:?}");
    if t == "-0.0" {
        t = "0.0".into();
    }
    t
}

/// `name` inside an SJSON string (and the header's comment line): `\\` and `"` escaped, and
/// control characters as JSON escapes, so a name with a line break neither ends the comment nor
/// the string.
fn escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::compress::synth::synthetic_clip;

    #[test]
    fn names_are_escaped_on_one_line() {
        let mut clip = synthetic_clip(2, 2, 30.0, 1);
        clip.name = "a\"b\\c\nd\u{7}".into();
        clip.skeleton.names[0] = "root\r\t".into();
        let text = to_acl_sjson(&clip, 3.0);
        let first = text.lines().next().unwrap();
        assert_eq!(
            first,
            format!("{HEADER_START}\"a\\\"b\\\\c\\nd\\u0007\"; units: centimetres.")
        );
        assert!(text.contains("\t\tname = \"root\\r\\t\"\n"), "{text}");
        assert!(text.contains("\t\tparent = \"root\\r\\t\"\n"), "{text}");
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t')
        );
    }

    #[test]
    fn writes_every_bone_and_sample() {
        let mut clip = synthetic_clip(4, 3, 30.0, 1);
        clip.unit_cm = 2.0;
        let text = to_acl_sjson(&clip, 3.0);
        assert!(text.contains("version = 5"));
        assert!(text.contains("num_samples = 3"));
        assert_eq!(text.matches("vertex_distance = 3.0").count(), 4);
        assert_eq!(text.matches("parent = \"\"").count(), 1);
        // 4 tracks x 3 samples of rotations, translations and scales.
        assert_eq!(
            text.lines().filter(|l| l.starts_with("\t\t\t[")).count(),
            4 * 3 * 3
        );
        // Translations are written in centimetres.
        let t = clip.translations[0] * 2.0;
        assert!(text.contains(&format!("[ {}, {}, {} ]", fmt(t.x), fmt(t.y), fmt(t.z))));
        // Floats read back exactly.
        let q = clip.rotations[5];
        assert_eq!(fmt(q.x).parse::<f32>().unwrap(), q.x);
    }
}
