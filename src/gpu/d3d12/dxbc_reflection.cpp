#include "gpu/d3d12/dxbc_reflection.h"

#include <cstring>
#include <stdexcept>

namespace dmlgrad::d3d12 {
namespace {

// D3D_SHADER_INPUT_TYPE (d3dcommon.h), as RDEF stores it.
enum InputType : uint32_t {
    kCbuffer = 0,
    kTexture = 2,  // a typed buffer SRV (Buffer<T>) when its dimension is a buffer
    kUavTyped = 4,
    kStructured = 5,
    kUavStructured = 6,
    kByteAddress = 7,
    kUavByteAddress = 8,
};
constexpr uint32_t kDimensionBuffer = 1;  // D3D_SRV_DIMENSION_BUFFER
constexpr uint32_t kReturnUint = 4;       // D3D_RETURN_TYPE_UINT
constexpr uint32_t kComponentsShift = 2;  // D3D_SIF_TEXTURE_COMPONENTS: (components - 1) in bits 2-3
constexpr size_t kBindingBytes = 8 * 4;   // a shader model 5.0 binding record: eight words

class Reader {
public:
    explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
    uint32_t word(size_t offset) const {
        if (offset + 4 > bytes_.size()) throw std::invalid_argument("dxbc: truncated");
        uint32_t v;
        std::memcpy(&v, bytes_.data() + offset, 4);
        return v;
    }
    std::string text(size_t offset) const {
        std::string s;
        while (offset < bytes_.size() && bytes_[offset]) s += char(bytes_[offset++]);
        if (offset >= bytes_.size()) throw std::invalid_argument("dxbc: unterminated name");
        return s;
    }
    std::span<const uint8_t> sub(size_t offset, size_t size) const {
        if (offset > bytes_.size() || size > bytes_.size() - offset) throw std::invalid_argument("dxbc: truncated");
        return bytes_.subspan(offset, size);
    }

private:
    std::span<const uint8_t> bytes_;
};

// The RDEF chunk's data. Container: "DXBC", a 16-byte checksum, version, total size, chunk count, chunk offsets;
// each chunk: a four-character code, its size, its data.
std::span<const uint8_t> rdef_chunk(std::span<const uint8_t> dxbc) {
    const Reader r(dxbc);
    if (dxbc.size() < 32 || std::memcmp(dxbc.data(), "DXBC", 4) != 0)
        throw std::invalid_argument("dxbc: not a DXBC container");
    const uint32_t chunks = r.word(28);
    for (uint32_t c = 0; c < chunks; ++c) {
        const uint32_t offset = r.word(32 + 4 * size_t(c));
        const std::span<const uint8_t> header = r.sub(offset, 8);
        if (std::memcmp(header.data(), "RDEF", 4) == 0) return r.sub(offset + 8, r.word(offset + 4));
    }
    throw std::invalid_argument("dxbc: no resource definitions (RDEF chunk)");
}

ShaderResource resource(const Reader& rdef, size_t record) {
    ShaderResource res;
    res.name = rdef.text(rdef.word(record));
    const uint32_t type = rdef.word(record + 4), return_type = rdef.word(record + 8);
    const uint32_t dimension = rdef.word(record + 12), samples = rdef.word(record + 16);
    const uint32_t flags = rdef.word(record + 28);
    res.reg = rdef.word(record + 20);
    const auto typed_bytes = [&] {
        if (dimension != kDimensionBuffer || return_type != kReturnUint)
            throw std::invalid_argument("dxbc: " + res.name + " is not a buffer of uint");
        return 4 * (((flags >> kComponentsShift) & 3) + 1);
    };
    switch (type) {
        case kCbuffer: res.view = BufferView::constant; break;
        case kTexture: res.view = BufferView::typed, res.element_bytes = typed_bytes(); break;
        case kUavTyped: res.view = BufferView::typed, res.element_bytes = typed_bytes(), res.writable = true; break;
        case kStructured: res.view = BufferView::structured, res.element_bytes = samples; break;
        case kUavStructured: res.view = BufferView::structured, res.element_bytes = samples, res.writable = true; break;
        case kByteAddress: res.view = BufferView::raw, res.element_bytes = 4; break;
        case kUavByteAddress: res.view = BufferView::raw, res.element_bytes = 4, res.writable = true; break;
        default: throw std::invalid_argument("dxbc: " + res.name + " is a resource of a kind no kernel binds");
    }
    if (rdef.word(record + 24) != 1) throw std::invalid_argument("dxbc: " + res.name + " is an array of resources");
    return res;
}

}  // namespace

std::vector<ShaderResource> reflect_dxbc(std::span<const uint8_t> dxbc) {
    const std::span<const uint8_t> chunk = rdef_chunk(dxbc);
    const Reader rdef(chunk);
    const uint32_t count = rdef.word(8), first = rdef.word(12);
    std::vector<ShaderResource> resources;
    for (uint32_t i = 0; i < count; ++i) resources.push_back(resource(rdef, first + size_t(i) * kBindingBytes));
    return resources;
}

}  // namespace dmlgrad::d3d12
