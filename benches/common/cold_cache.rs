//! Making a decode cold for the compression bench and `examples/decode_count.rs`: a buffer of twice
//! the last-level cache streamed through the caches before each timed pose.

use std::hint::black_box;

/// Size of the last-level cache in bytes (the largest cache sysfs lists for cpu0; 32 MiB when
/// unknown).
pub fn last_level_cache_bytes() -> usize {
    let mut best = 0usize;
    for i in 0..8 {
        let p = format!("/sys/devices/system/cpu/cpu0/cache/index{i}/size");
        let Ok(s) = std::fs::read_to_string(&p) else {
            continue;
        };
        let s = s.trim();
        let (num, mul) = match s.strip_suffix('K') {
            Some(n) => (n, 1024),
            None => match s.strip_suffix('M') {
                Some(n) => (n, 1024 * 1024),
                None => (s, 1),
            },
        };
        if let Ok(n) = num.parse::<usize>() {
            best = best.max(n * mul);
        }
    }
    if best == 0 { 32 << 20 } else { best }
}

/// A buffer of twice the last-level cache, for [`evict`].
pub fn eviction_buffer() -> Vec<u8> {
    vec![0u8; 2 * last_level_cache_bytes()]
}

/// Streams `buf` through the caches (reads and writes one byte per 64-byte line), evicting what
/// a decode would otherwise find there.
pub fn evict(buf: &mut [u8]) {
    for line in buf.chunks_exact_mut(64) {
        line[0] = line[0].wrapping_add(1);
    }
    black_box(&buf[..]);
}
