//! The `.tlc` reader on damaged input: truncation at every header byte (and beyond), flipped
//! bytes, a future version, bad magic, a file of a version no longer read. Every case returns an
//! error; none panics. And a version 2 file, which loads as the version 3 file it converts to.

use taglane::core::anim::Transform;
use taglane::core::compress::format::{HEADER_BYTES, MAGIC, OLDEST_VERSION, VERSION};
use taglane::core::compress::synth::synthetic_clip;
use taglane::core::compress::{CompressSettings, CompressedClip, Preset, TlcError, compress};

fn sample_file() -> Vec<u8> {
    let clip = synthetic_clip(12, 40, 30.0, 11);
    compress(&clip, &CompressSettings::auto(0.01))
        .unwrap()
        .clip
        .bytes()
        .to_vec()
}

#[test]
fn valid_file_loads() {
    let bytes = sample_file();
    let c = CompressedClip::from_bytes(bytes.clone()).unwrap();
    assert_eq!(c.joint_count(), 12);
    assert_eq!(c.frame_count(), 40);
    assert_eq!(c.bytes(), &bytes[..]);
}

#[test]
fn truncation_at_every_length_is_an_error() {
    let bytes = sample_file();
    // Every header byte, then every length up to the full file (it is small).
    for len in 0..bytes.len() {
        let r = CompressedClip::from_bytes(bytes[..len].to_vec());
        assert!(r.is_err(), "truncated to {len} bytes was accepted");
    }
    assert!(bytes.len() > HEADER_BYTES);
}

#[test]
fn truncated_file_with_patched_size_and_checksum_is_an_error() {
    // A file cut short whose size field and CRC were "fixed" must still fail on the structure.
    let bytes = sample_file();
    for len in (HEADER_BYTES..bytes.len() - 4).step_by(3) {
        let mut b = bytes[..len].to_vec();
        let total = (b.len() + 4) as u32;
        b[48..52].copy_from_slice(&total.to_le_bytes());
        let crc = taglane::core::compress::bits::crc32(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        assert!(
            CompressedClip::from_bytes(b).is_err(),
            "structurally truncated at {len} accepted"
        );
    }
}

#[test]
fn every_flipped_byte_is_an_error() {
    let bytes = sample_file();
    for i in 0..bytes.len() {
        for mask in [0x01u8, 0x80, 0xFF] {
            let mut b = bytes.clone();
            b[i] ^= mask;
            assert!(
                CompressedClip::from_bytes(b).is_err(),
                "flip {mask:#x} at byte {i} accepted"
            );
        }
    }
}

/// Rewrites a header field and fixes the CRC, so the structural checks (not the checksum) must
/// catch it.
fn patched(bytes: &[u8], at: usize, value: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at..at + value.len()].copy_from_slice(value);
    let n = b.len();
    let crc = taglane::core::compress::bits::crc32(&b[..n - 4]);
    b[n - 4..].copy_from_slice(&crc.to_le_bytes());
    b
}

#[test]
fn header_fields_are_validated_behind_a_valid_checksum() {
    let bytes = sample_file();
    let cases: Vec<(usize, Vec<u8>)> = vec![
        (10, 0x80u16.to_le_bytes().to_vec()),    // unknown flag
        (12, 0u16.to_le_bytes().to_vec()),       // no joint
        (12, 60000u16.to_le_bytes().to_vec()),   // more joints than bytes
        (14, vec![9]),                           // rotation format
        (16, 0u32.to_le_bytes().to_vec()),       // no frame
        (16, u32::MAX.to_le_bytes().to_vec()),   // frame count disagrees with key count
        (20, f32::NAN.to_le_bytes().to_vec()),   // fps
        (20, (-30.0f32).to_le_bytes().to_vec()), // fps
        (24, 0.0f32.to_le_bytes().to_vec()),     // unit
        (28, 0u16.to_le_bytes().to_vec()),       // frame step
        (32, 0u32.to_le_bytes().to_vec()),       // segment frames
        (36, 7u32.to_le_bytes().to_vec()),       // key count
        (40, u32::MAX.to_le_bytes().to_vec()),   // segment count
        (44, 0u16.to_le_bytes().to_vec()),       // animated track count
        (44, 65535u16.to_le_bytes().to_vec()),   // animated track count
        (46, vec![255]),                         // name length past the names
        (47, vec![1]),                           // reserved
        (52, 60000u16.to_le_bytes().to_vec()),   // rotation tracks past the animated ones
        (54, 60000u16.to_le_bytes().to_vec()),   // translation tracks past the animated ones
        (56, 0u32.to_le_bytes().to_vec()),       // track table offset
        (56, u32::MAX.to_le_bytes().to_vec()),   // track table offset
        (60, 7u32.to_le_bytes().to_vec()),       // segment table offset
    ];
    for (at, v) in cases {
        let b = patched(&bytes, at, &v);
        match CompressedClip::from_bytes(b) {
            Err(e) => println!("byte {at}: {e}"),
            Ok(_) => panic!("patched field at byte {at} = {v:?} accepted"),
        }
    }
}

#[test]
fn future_version_and_bad_magic_are_named() {
    let bytes = sample_file();
    let b = patched(&bytes, 8, &(VERSION + 1).to_le_bytes());
    assert_eq!(
        CompressedClip::from_bytes(b).unwrap_err(),
        TlcError::UnsupportedVersion { found: VERSION + 1 }
    );
    let mut b = bytes.clone();
    b[0] = b'X';
    assert_eq!(
        CompressedClip::from_bytes(b).unwrap_err(),
        TlcError::BadMagic
    );
    assert_eq!(&bytes[..8], &MAGIC);
}

#[test]
fn every_preset_writes_a_loadable_file() {
    let clip = synthetic_clip(9, 50, 60.0, 5);
    for p in Preset::ALL {
        let r = compress(&clip, &p.settings()).unwrap();
        let c = CompressedClip::from_bytes(r.clip.bytes().to_vec()).unwrap();
        assert_eq!(c.frame_count(), 50, "{}", p.name());
        // Flipping any byte of every preset's file is caught.
        for i in (0..r.clip.bytes().len()).step_by(7) {
            let mut b = r.clip.bytes().to_vec();
            b[i] ^= 0x10;
            assert!(
                CompressedClip::from_bytes(b).is_err(),
                "{}: flip at {i}",
                p.name()
            );
        }
    }
}

/// `tests/fixtures/tlc_v1_synthetic.tlc` was written by the version 1 encoder (before the
/// three-vertex metric and exact in-between decoding): it is refused with a message that names
/// its version, the version this build reads, and what to do.
#[test]
fn version_1_file_is_refused_with_its_version_named() {
    let v1 = include_bytes!("../fixtures/tlc_v1_synthetic.tlc").to_vec();
    assert_eq!(&v1[..8], &MAGIC);
    assert_eq!(u16::from_le_bytes([v1[8], v1[9]]), 1);
    let e = CompressedClip::from_bytes(v1).unwrap_err();
    assert_eq!(e, TlcError::UnsupportedVersion { found: 1 });
    let m = e.to_string();
    assert!(
        m.contains("format version 1 at byte 8 is not supported"),
        "{m}"
    );
    assert!(
        m.contains(&format!("reads versions {OLDEST_VERSION} to {VERSION}")),
        "{m}"
    );
    assert!(m.contains("compress the source clip again"), "{m}");
}

/// FNV-1a over the bits of every pose of `c` at 160 frame positions a quarter frame apart (on
/// and between frames, and past the end).
fn pose_hash(c: &CompressedClip) -> u64 {
    let mut out = vec![Transform::IDENTITY; c.joint_count()];
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for i in 0..160 {
        c.sample_pose_at_frame(i as f32 * 0.25, &mut out);
        for t in &out {
            let r = t.rotation.to_array();
            let (p, s) = (t.translation.to_array(), t.scale.to_array());
            for v in r.iter().chain(&p).chain(&s) {
                h = (h ^ u64::from(v.to_bits())).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    h
}

/// `tests/fixtures/tlc_v2_synthetic.tlc` was written by the version 2 encoder (the synthetic clip
/// of `sample_file`, three segments of drop-W rotations and translations with segment ranges).
/// It loads: its bytes become the version 3 file of the same size, which decodes every pose to
/// the bits the version 2 reader decoded (the hash was taken with that reader), and which is
/// the file today's encoder writes for the same clip.
#[test]
fn version_2_file_loads_as_version_3() {
    let v2 = include_bytes!("../fixtures/tlc_v2_synthetic.tlc").to_vec();
    assert_eq!(u16::from_le_bytes([v2[8], v2[9]]), 2);
    let c = CompressedClip::from_bytes(v2.clone()).unwrap();
    assert_eq!(c.segment_count(), 3);
    // The clip says which version its file was (`inspect` reports it).
    assert_eq!(c.file_version(), 2);
    let v3 = c.bytes();
    assert_eq!(u16::from_le_bytes([v3[8], v3[9]]), VERSION);
    assert_eq!(
        CompressedClip::from_bytes(v3.to_vec())
            .unwrap()
            .file_version(),
        VERSION
    );
    assert_eq!(v3.len(), v2.len());
    assert_eq!(pose_hash(&c), 0x4308_9651_1527_9bd9);
    // The segment table's entries are (offset, key bits); version 2 kept the key bits first in
    // each block. Everything before the table is the same but the version.
    let table = u32::from_le_bytes(v2[60..64].try_into().unwrap()) as usize;
    assert_eq!(&v2[10..table], &v3[10..table]);
    for s in 0..3 {
        let at2 = u32::from_le_bytes(v2[table + 4 * s..][..4].try_into().unwrap()) as usize;
        let e = &v3[table + 8 * s..][..8];
        let at3 = u32::from_le_bytes(e[..4].try_into().unwrap()) as usize;
        assert_eq!(&e[4..], &v2[at2..at2 + 4], "segment {s}: key bits");
        assert_eq!(at3, at2 + 4 * 3 - 4 * s, "segment {s}: offset");
        assert_eq!(
            v3[at3..at3 + 16],
            v2[at2 + 4..at2 + 20],
            "segment {s}: headers"
        );
    }
    // Byte for byte what today's encoder writes for the clip (a change to the encoder's choices
    // may change this one line; the hash above must not change).
    assert_eq!(v3, sample_file());
    // Damage in a version 2 file is named at its own bytes: a segment's key bits, behind a
    // valid checksum.
    let at2 = u32::from_le_bytes(v2[table..table + 4].try_into().unwrap()) as usize;
    let key_bits = u32::from_le_bytes(v2[at2..at2 + 4].try_into().unwrap());
    let e = CompressedClip::from_bytes(patched(&v2, at2, &(key_bits + 1).to_le_bytes()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("segment key bits at byte {at2}")),
        "{e}"
    );
    // The same field of the version 3 file is in the table.
    let e = CompressedClip::from_bytes(patched(v3, table + 4, &(key_bits + 1).to_le_bytes()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("segment key bits at byte {}", table + 4)),
        "{e}"
    );
    // Truncated or flipped anywhere, a version 2 file is refused as a version 3 one is.
    for len in (0..v2.len()).step_by(5) {
        assert!(
            CompressedClip::from_bytes(v2[..len].to_vec()).is_err(),
            "{len}"
        );
    }
    for i in 0..v2.len() {
        let mut b = v2.clone();
        b[i] ^= 0x21;
        assert!(CompressedClip::from_bytes(b).is_err(), "flip at {i}");
    }
}

/// A track range whose step is finite but whose top (minimum + 255 x step) is not would decode to
/// infinity: refused when read, naming the byte, behind a valid checksum.
#[test]
fn a_track_range_that_reaches_infinity_is_refused() {
    let bytes = sample_file();
    let table = u32::from_le_bytes(bytes[56..60].try_into().unwrap()) as usize;
    // The first rotation group's first step: after its four joints (8 bytes) and three slots of
    // four minima (48 bytes).
    let at = table + 56;
    let b = patched(&bytes, at, &(f32::MAX / 2.0).to_le_bytes());
    let e = CompressedClip::from_bytes(b).unwrap_err().to_string();
    assert!(e.contains("finite top"), "{e}");
    assert!(e.contains(&format!("byte {at}")), "{e}");
}

/// A raw float32 slot that holds NaN, an infinity or a value whose difference with a neighbour
/// overflows is refused at load, naming the byte: the decoders pass raw values through, and such a
/// file decoded to NaN poses (a BVH written from it, which the reader then refused).
#[test]
fn raw_slots_must_be_finite() {
    let clip = synthetic_clip(12, 40, 30.0, 11);
    let bytes = compress(&clip, &Preset::Raw.settings())
        .unwrap()
        .clip
        .bytes()
        .to_vec();
    CompressedClip::from_bytes(bytes.clone()).unwrap();
    // The last key's last slot: the four bytes before the padding (4 zero bytes here) and the
    // checksum.
    assert_eq!(bytes[bytes.len() - 8..bytes.len() - 4], [0; 4]);
    let at = bytes.len() - 12;
    for bad in [f32::NAN, f32::INFINITY, -f32::MAX] {
        let e = CompressedClip::from_bytes(patched(&bytes, at, &bad.to_le_bytes())).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("raw float32 slot") && text.contains(&format!("byte {at}")),
            "{bad}: {text}"
        );
        assert!(text.contains("expected a finite value"), "{text}");
    }
    // A finite value within the limit loads.
    CompressedClip::from_bytes(patched(&bytes, at, &1.0e30f32.to_le_bytes())).unwrap();
}

/// A count that says more than a complete file holds is named as such, not as a truncated file
/// (the size field and the checksum both matched).
#[test]
fn a_count_past_the_end_of_a_complete_file_says_so() {
    let bytes = sample_file();
    let at = CompressedClip::from_bytes(bytes.clone())
        .unwrap()
        .layout()
        .end_sites_at as usize;
    let e = CompressedClip::from_bytes(patched(&bytes, at, &0xFFFFu16.to_le_bytes()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("End Sites") && e.contains("past the end of the data") && e.contains("expected"),
        "{e}"
    );
    assert!(!e.starts_with("file is truncated"), "{e}");
}
