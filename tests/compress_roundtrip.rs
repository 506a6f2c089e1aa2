//! Round trips of the segmented codec on synthetic clips: every rotation format and bit width, the
//! automatic mode's guarantee, sampling, per-joint access.

use taglane::core::anim::Transform;
use taglane::core::compress::synth::synthetic_clip;
use taglane::core::compress::{
    BitRate, CompressSettings, CompressedClip, Preset, RotationFormat, compress,
};

#[test]
fn auto_mode_stays_under_budget() {
    let clip = synthetic_clip(31, 200, 120.0, 7);
    for budget in [0.005f32, 0.01, 0.05] {
        let r = compress(&clip, &CompressSettings::auto(budget)).unwrap();
        println!(
            "budget {budget}: ratio {:.2} max {:.5} worst {:?}",
            r.ratio,
            r.error.max_error_cm,
            (r.error.worst.joint, r.error.worst.frame)
        );
        assert!(
            r.error.max_error_cm <= budget,
            "{} > {budget}",
            r.error.max_error_cm
        );
        assert!(r.ratio > 3.0, "ratio {}", r.ratio);
    }
}

#[test]
fn presets_round_trip() {
    let clip = synthetic_clip(22, 90, 30.0, 3);
    for p in Preset::ALL {
        let r = compress(&clip, &p.settings()).unwrap();
        println!(
            "{:>18}: ratio {:6.2} max {:.5} mean {:.6}",
            p.name(),
            r.ratio,
            r.error.max_error_cm,
            r.error.mean_error_cm
        );
        let back = CompressedClip::from_bytes(r.clip.bytes().to_vec()).unwrap();
        let mut a = vec![Transform::IDENTITY; 22];
        let mut b = vec![Transform::IDENTITY; 22];
        r.clip.sample_pose(0.37, &mut a);
        back.sample_pose(0.37, &mut b);
        assert_eq!(a, b);
    }
}
