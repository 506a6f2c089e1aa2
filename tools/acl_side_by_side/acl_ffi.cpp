// ACL's runtime decoder behind a C interface, so that one Rust process (src/main.rs) can time
// ACL, taglane and the uncompressed clip alternately on the same poses. Written for taglane's
// measurements; it only calls ACL's public API.
#include <acl/core/compressed_tracks.h>
#include <acl/decompression/decompress.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

// One joint of a decoded pose: rotation, translation, scale, four floats each (ACL's qvvf).
struct Qvv {
    rtm::quatf rotation;
    rtm::vector4f translation;
    rtm::vector4f scale;
};

using Context = acl::decompression_context<acl::default_transform_decompression_settings>;

// Writes a pose into `out`. Sub-tracks equal to the bind pose are not stored in the compressed
// buffer: their values come from the host, as an engine supplies them from its skeleton.
struct Writer final : public acl::track_writer {
    Qvv* out = nullptr;
    const rtm::vector4f* bind = nullptr;

    static constexpr acl::default_sub_track_mode get_default_translation_mode() {
        return acl::default_sub_track_mode::variable;
    }
    rtm::vector4f RTM_SIMD_CALL get_variable_default_translation(uint32_t i) const { return bind[i]; }
    void RTM_SIMD_CALL write_rotation(uint32_t i, rtm::quatf_arg0 v) { out[i].rotation = v; }
    void RTM_SIMD_CALL write_translation(uint32_t i, rtm::vector4f_arg0 v) { out[i].translation = v; }
    void RTM_SIMD_CALL write_scale(uint32_t i, rtm::vector4f_arg0 v) { out[i].scale = v; }
};

struct Handle {
    void* buffer = nullptr;
    const acl::compressed_tracks* tracks = nullptr;
    rtm::vector4f* bind = nullptr;
    Context context;
};

void release(Handle* h) {
    std::free(h->buffer);
    std::free(h->bind);
    delete h;
}

}  // namespace

extern "C" {

// Copies the `len` bytes of a compressed clip (as acl_compressor's -out= writes it) into a
// 16-byte aligned buffer, with the bind translations of its `joints` joints (x, y, z each), and
// makes a decompression context. Null when ACL refuses the buffer.
void* tl_acl_open(const uint8_t* bytes, size_t len, const float* bind3, size_t joints) {
    auto* h = new Handle();
    h->buffer = std::aligned_alloc(16, (len + 15) / 16 * 16);
    std::memcpy(h->buffer, bytes, len);
    h->tracks = acl::make_compressed_tracks(h->buffer);
    h->bind = static_cast<rtm::vector4f*>(std::aligned_alloc(16, 16 * (joints + 1)));
    for (size_t j = 0; j < joints; ++j)
        h->bind[j] = rtm::vector_set(bind3[3 * j], bind3[3 * j + 1], bind3[3 * j + 2], 0.0F);
    if (h->tracks == nullptr || h->tracks->is_valid(true).any() ||
        h->tracks->get_num_tracks() != joints || !h->context.initialize(*h->tracks)) {
        release(h);
        return nullptr;
    }
    return h;
}

void tl_acl_close(void* h) { release(static_cast<Handle*>(h)); }

// The clip's size in bytes (the compressed buffer ACL decodes from).
size_t tl_acl_size(void* h) { return static_cast<Handle*>(h)->tracks->get_size(); }

// The decompression context's size in bytes (what a loaded clip needs besides its buffer).
size_t tl_acl_context_bytes() { return sizeof(Context); }

// One pose at `t` seconds, interpolated between the two nearest keys, into `out` (one Qvv a joint:
// 48 bytes, 16-byte aligned).
void tl_acl_sample(void* hp, float t, void* out) {
    auto* h = static_cast<Handle*>(hp);
    h->context.seek(t, acl::sample_rounding_policy::none);
    Writer w;
    w.out = static_cast<Qvv*>(out);
    w.bind = h->bind;
    h->context.decompress_tracks(w);
}

}  // extern "C"
