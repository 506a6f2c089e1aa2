//! Tag colours: the colour a tag without one is shown in (derived from its name, so the same
//! everywhere), and a colour for a new tag that stands apart from the tags already there.
//!
//! Colours are sRGB bytes; the app draws them as they are.
//! - A name's colour takes hue, saturation and value in linear light, as egui's `Hsva` does, so
//!   a tag without a colour looks as it always did.
//! - A new tag's colour is chosen by hue in OKLCH (Björn Ottosson's Oklab in polar form), where
//!   equal steps of hue look equally far apart: in HSV a 50 degree step between two greens is
//!   hard to see and the same step between red and orange is not. All new colours share one
//!   lightness and chroma, pastel enough for dark lanes and light text.

/// Saturation and value of a name's colour (hue varies).
const SATURATION: f32 = 0.55;
const VALUE: f32 = 0.8;
/// Lightness and chroma (OKLCH) of a new tag's colour; the chroma is lowered where sRGB cannot
/// show it at that hue.
const LIGHTNESS: f32 = 0.80;
const CHROMA: f32 = 0.11;
/// Candidate hues for a new tag: every `360 / HUES` degrees.
const HUES: u32 = 36;
/// Below this OKLCH chroma a colour counts as grey: it has no hue to keep away from.
const GREY: f32 = 0.025;

/// The colour of a tag that has none: a hue from a hash of its name.
pub fn name_color(name: &str) -> [u8; 3] {
    let h = name
        .bytes()
        .fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
    hsv_to_srgb((h % 360) as f32, SATURATION, VALUE)
}

/// The colour a tag named `name` with colour `color` is shown in: its own, else [`name_color`].
pub fn shown_color(color: Option<[u8; 3]>, name: &str) -> [u8; 3] {
    color.unwrap_or_else(|| name_color(name))
}

/// A colour for a new tag, as far in OKLCH hue as can be from every colour in `taken` (grey
/// ones aside): of `HUES` evenly spaced hues, the one whose nearest taken hue is farthest, the
/// lowest such hue on a tie. With nothing taken, hue 0 (a pink red).
pub fn distinct_color(taken: impl IntoIterator<Item = [u8; 3]>) -> [u8; 3] {
    distinct_colors(taken, 1)[0]
}

/// Colours for `n` new tags made together: each chosen as in [`distinct_color`], keeping away
/// from `taken` and from the hues chosen before it.
pub fn distinct_colors(taken: impl IntoIterator<Item = [u8; 3]>, n: usize) -> Vec<[u8; 3]> {
    let mut hues: Vec<f32> = taken.into_iter().filter_map(hue_of).collect();
    let step = 360.0 / HUES as f32;
    (0..n)
        .map(|_| {
            let mut best = (0.0, -1.0);
            for k in 0..HUES {
                let hue = k as f32 * step;
                let nearest = hues
                    .iter()
                    .map(|&h| hue_distance(hue, h))
                    .fold(f32::INFINITY, f32::min);
                if nearest > best.1 {
                    best = (hue, nearest);
                }
            }
            hues.push(best.0);
            oklch_to_srgb(LIGHTNESS, CHROMA, best.0)
        })
        .collect()
}

/// Distance between two hues in degrees, the short way round (0-180).
pub fn hue_distance(a: f32, b: f32) -> f32 {
    let d = (a - b).rem_euclid(360.0);
    d.min(360.0 - d)
}

/// The OKLCH hue of an sRGB colour in degrees, `None` for greys.
pub fn hue_of(srgb: [u8; 3]) -> Option<f32> {
    let [_, a, b] = oklab_from_linear(srgb.map(linear_from_srgb));
    if a.hypot(b) < GREY {
        return None;
    }
    Some(b.atan2(a).to_degrees().rem_euclid(360.0))
}

/// sRGB bytes of an OKLCH colour (lightness 0-1, chroma, hue in degrees). A colour outside what
/// sRGB shows keeps its lightness and hue and loses chroma until it fits.
pub fn oklch_to_srgb(lightness: f32, chroma: f32, hue: f32) -> [u8; 3] {
    let (sin, cos) = hue.to_radians().sin_cos();
    let mut c = chroma;
    loop {
        let rgb = linear_from_oklab([lightness, c * cos, c * sin]);
        let inside = rgb.iter().all(|&u| (-1e-4..=1.0 + 1e-4).contains(&u));
        if inside || c <= 0.0 {
            return rgb.map(srgb_from_linear);
        }
        c = (c - 0.005).max(0.0);
    }
}

/// Linear sRGB to Oklab (lightness, a, b).
fn oklab_from_linear([r, g, b]: [f32; 3]) -> [f32; 3] {
    let l = (0.412_221_46 * r + 0.536_332_55 * g + 0.051_445_995 * b).cbrt();
    let m = (0.211_903_5 * r + 0.680_699_5 * g + 0.107_396_96 * b).cbrt();
    let s = (0.088_302_46 * r + 0.281_718_85 * g + 0.629_978_7 * b).cbrt();
    [
        0.210_454_26 * l + 0.793_617_8 * m - 0.004_072_047 * s,
        1.977_998_5 * l - 2.428_592_2 * m + 0.450_593_7 * s,
        0.025_904_037 * l + 0.782_771_77 * m - 0.808_675_77 * s,
    ]
}

/// Oklab (lightness, a, b) to linear sRGB (unclamped).
fn linear_from_oklab([lightness, a, b]: [f32; 3]) -> [f32; 3] {
    let l = (lightness + 0.396_337_78 * a + 0.215_803_76 * b).powi(3);
    let m = (lightness - 0.105_561_346 * a - 0.063_854_17 * b).powi(3);
    let s = (lightness - 0.089_484_18 * a - 1.291_485_5 * b).powi(3);
    [
        4.076_741_7 * l - 3.307_711_6 * m + 0.230_969_94 * s,
        -1.268_438 * l + 2.609_757_4 * m - 0.341_319_4 * s,
        -0.004_196_086_3 * l - 0.703_418_6 * m + 1.707_614_7 * s,
    ]
}

/// sRGB bytes of a hue (degrees), saturation and value (0-1, linear light).
pub fn hsv_to_srgb(hue: f32, s: f32, v: f32) -> [u8; 3] {
    let h = hue.rem_euclid(360.0) / 60.0;
    let c = v * s;
    let x = c * (1.0 - (h % 2.0 - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = v - c;
    [r, g, b].map(|u| srgb_from_linear(u + m))
}

/// The sRGB transfer function: a linear value (0-1) to a byte.
fn srgb_from_linear(l: f32) -> u8 {
    let l = l.clamp(0.0, 1.0);
    let e = if l <= 0.0031308 {
        12.92 * l
    } else {
        1.055 * l.powf(1.0 / 2.4) - 0.055
    };
    (e * 255.0).round().clamp(0.0, 255.0) as u8
}

/// Its inverse: a byte to a linear value.
fn linear_from_srgb(c: u8) -> f32 {
    let e = c as f32 / 255.0;
    if e <= 0.04045 {
        e / 12.92
    } else {
        ((e + 0.055) / 1.055).powf(2.4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hues_round_trip_and_greys_have_none() {
        for k in 0..36 {
            let hue = k as f32 * 10.0;
            let back = hue_of(oklch_to_srgb(LIGHTNESS, CHROMA, hue)).expect("a hue");
            assert!(hue_distance(hue, back) < 2.0, "{hue} came back as {back}");
        }
        assert_eq!(hue_of([128, 128, 128]), None);
        assert_eq!(hue_of([0, 0, 0]), None);
        assert_eq!(hue_of([255, 255, 255]), None);
        assert_eq!(hue_of([130, 128, 127]), None);
        // Pure sRGB primaries where Oklab puts them (about 29, 142 and 264 degrees).
        let near = |c: [u8; 3], h: f32| hue_distance(hue_of(c).unwrap(), h) < 1.0;
        assert!(near([255, 0, 0], 29.2) && near([0, 255, 0], 142.5) && near([0, 0, 255], 264.1));
        assert_eq!(hsv_to_srgb(0.0, 1.0, 1.0), [255, 0, 0]);
        assert_eq!(hsv_to_srgb(120.0, 1.0, 1.0), [0, 255, 0]);
        assert_eq!(hsv_to_srgb(240.0, 1.0, 1.0), [0, 0, 255]);
    }

    #[test]
    fn new_colours_share_a_lightness() {
        for k in 0..36 {
            let [l, ..] = oklab_from_linear(
                oklch_to_srgb(LIGHTNESS, CHROMA, k as f32 * 10.0).map(linear_from_srgb),
            );
            assert!(
                (l - LIGHTNESS).abs() < 0.01,
                "hue {}: lightness {l}",
                k * 10
            );
        }
    }

    #[test]
    fn a_new_colour_keeps_away_from_the_taken_ones() {
        assert!(hue_distance(hue_of(distinct_color([])).unwrap(), 0.0) < 2.0);
        // Opposite the only taken hue.
        let taken = oklch_to_srgb(0.6, 0.1, 90.0);
        let h = hue_of(distinct_color([taken])).unwrap();
        assert!(hue_distance(h, 270.0) < 2.0, "{h}");
        // Greys take no hue.
        assert_eq!(
            distinct_color([[40, 40, 40], [200, 200, 200]]),
            distinct_color([])
        );
        // Eight tags made one after another: every two at least 35 degrees apart (360 / 8 = 45
        // is the most possible; the candidates are 10 degrees apart, and a hue read back from
        // sRGB bytes moves by a degree or two).
        let taken = distinct_colors([], 8);
        let hues: Vec<f32> = taken.iter().map(|&c| hue_of(c).unwrap()).collect();
        for (i, a) in hues.iter().enumerate() {
            for b in &hues[i + 1..] {
                assert!(hue_distance(*a, *b) >= 35.0, "{hues:?}");
            }
        }
    }

    #[test]
    fn a_tag_without_a_colour_is_shown_in_its_names() {
        assert_eq!(
            shown_color(None, "locomotion:Walk"),
            name_color("locomotion:Walk")
        );
        assert_ne!(name_color("locomotion:Walk"), name_color("locomotion:Run"));
        assert_eq!(shown_color(Some([1, 2, 3]), "locomotion:Walk"), [1, 2, 3]);
    }
}
