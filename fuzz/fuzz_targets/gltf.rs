//! glTF import: any bytes as a binary container (`.glb`) and as JSON glTF (`.gltf`, external
//! buffers refused since there is no folder). A clip that loads must pass `Clip::validate`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use taglane::core::anim::{AnimFormat, ImportOptions, load_animation_from_bytes};

fuzz_target!(|data: &[u8]| {
    let options = ImportOptions::default();
    for format in [AnimFormat::Glb, AnimFormat::Gltf] {
        if let Ok(imported) = load_animation_from_bytes(data, format, "fuzz", None, &options) {
            for clip in &imported.clips {
                if let Err(e) = clip.validate() {
                    panic!("the glTF importer returned an invalid clip: {e}");
                }
            }
        }
    }
});
