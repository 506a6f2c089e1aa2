//! BVH reader: any bytes, with and without the skip-first-frame option. A clip that loads must
//! pass `Clip::validate` (sample counts match frames x joints, everything finite).
#![no_main]

use libfuzzer_sys::fuzz_target;
use taglane::core::anim::{AnimFormat, ImportOptions, load_animation_from_bytes};

fuzz_target!(|data: &[u8]| {
    for skip_first_frame in [false, true] {
        let options = ImportOptions {
            skip_first_frame,
            ..ImportOptions::default()
        };
        if let Ok(imported) = load_animation_from_bytes(data, AnimFormat::Bvh, "fuzz", None, &options) {
            for clip in &imported.clips {
                if let Err(e) = clip.validate() {
                    panic!("the BVH reader returned an invalid clip: {e}");
                }
            }
        }
    }
});
