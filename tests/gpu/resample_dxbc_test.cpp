// The resample kernels' DXBC (Direct3D 12): every float product and sum is made opaque before anything else reads
// it. DXBC carries no NoContraction, so NVIDIA's driver under vkd3d fused products into the adds after them (a
// multiply by an opaque 1.0f did not stop it, nor an xor with an opaque 0, which a second xor cancels: float32 sums
// came out 1 to a few ulps off the CPU's). ROUNDED in kernels/resample_grad_gather.hlsli passes each value through
// an integer or, which no float rewrite crosses. This test reads the shader model 5 instructions and follows each
// `add` and `mul` result, through `mov` copies, to its `or`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpu/kernel_registry.h"
#include "gpu/ops/resample_grad_kernels.h"

namespace dmlgrad {
namespace {

// Shader model 4/5 opcodes (the token's low byte), as vkd3d-shader's tpf.c names them.
enum Opcode : uint32_t {
    kAdd = 0x00,
    kBreakc = 0x03,
    kCase = 0x06,
    kContinuec = 0x08,
    kDiscard = 0x0d,
    kDiv = 0x0e,
    kDp2 = 0x0f,
    kDp4 = 0x11,
    kIf = 0x1f,
    kImul = 0x26,
    kMad = 0x32,
    kCustomData = 0x35,
    kMov = 0x36,
    kMul = 0x38,
    kOr = 0x3c,
    kRetc = 0x3f,
    kSwitch = 0x4c,
    kSincos = 0x4d,
    kUdiv = 0x4e,
    kUmul = 0x51,
    kSwapc = 0x8e,
};
constexpr uint32_t kTempRegister = 0, kImmediate32 = 4, kImmediate64 = 5;

// One register operand: its type and first index, and per destination component the source component it reads
// (a write mask for a destination: comp[i] = i where written, -1 elsewhere).
struct Operand {
    uint32_t type = 0;
    uint32_t index = 0;
    int comp[4] = {-1, -1, -1, -1};
};

struct Instruction {
    uint32_t opcode = 0;
    std::vector<Operand> operands;
};

// The instructions of a DXBC container's SHEX (or SHDR) chunk.
class Sm4Reader {
public:
    explicit Sm4Reader(std::span<const uint8_t> dxbc) {
        const uint32_t chunks = word_at(dxbc, 28);
        for (uint32_t c = 0; c < chunks; ++c) {
            const uint32_t at = word_at(dxbc, 32 + 4 * c);
            const std::string tag(reinterpret_cast<const char*>(dxbc.data() + at), 4);
            if (tag != "SHEX" && tag != "SHDR") continue;
            const uint32_t tokens = word_at(dxbc, at + 12);  // the program's length in tokens, header included
            for (uint32_t k = 0; k < tokens; ++k) words_.push_back(word_at(dxbc, at + 8 + 4 * k));
        }
    }

    std::vector<Instruction> instructions() {
        std::vector<Instruction> out;
        for (size_t at = 2; at < words_.size();) {
            const uint32_t token = words_[at], opcode = token & 0xFFu;
            const size_t length = opcode == kCustomData ? words_[at + 1] : (token >> 24) & 0x1Fu;
            if (length == 0) throw std::runtime_error("malformed instruction");
            Instruction ins{opcode, {}};
            size_t k = at + 1;
            while ((words_[k - 1] >> 31) != 0 && k < at + length) ++k;  // extended opcode tokens
            if (opcode != kCustomData && !is_declaration(opcode))
                while (k < at + length) ins.operands.push_back(operand(k));
            out.push_back(std::move(ins));
            at += length;
        }
        return out;
    }

private:
    static uint32_t word_at(std::span<const uint8_t> b, size_t at) {
        return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 | uint32_t(b[at + 3]) << 24;
    }
    static bool is_declaration(uint32_t opcode) {
        return (opcode >= 0x58 && opcode <= 0x6a) || (opcode >= 0x8f && opcode <= 0xa2) || opcode == 0xce;
    }

    Operand operand(size_t& k) {
        const uint32_t token = words_[k++];
        if ((token >> 31) != 0) ++k;  // an extended operand token (modifiers)
        Operand op;
        op.type = (token >> 12) & 0xFFu;
        const uint32_t dimension = token & 3u, selection = (token >> 2) & 3u;
        for (int i = 0; i < 4; ++i) {
            if (dimension != 2)
                op.comp[i] = i == 0 ? 0 : -1;
            else if (selection == 0)
                op.comp[i] = (token >> (4 + i)) & 1u ? i : -1;  // mask
            else if (selection == 1)
                op.comp[i] = int((token >> (4 + 2 * i)) & 3u);  // swizzle
            else
                op.comp[i] = int((token >> 4) & 3u);  // select one
        }
        if (op.type == kImmediate32 || op.type == kImmediate64) {
            k += (dimension == 2 ? 4 : 1) * (op.type == kImmediate64 ? 2 : 1);
            return op;
        }
        const uint32_t order = (token >> 20) & 3u;
        for (uint32_t i = 0; i < order; ++i) {
            const uint32_t addressing = (token >> (22 + 3 * i)) & 7u;
            if (addressing == 0 || addressing == 3) {
                if (i == 0) op.index = words_[k];
                ++k;
            }
            if (addressing == 1 || addressing == 4) k += 2;
            if (addressing >= 2) operand(k);  // a relative index: a register read that is not followed here
        }
        return op;
    }

    std::vector<uint32_t> words_;
};

// How many leading operands an instruction writes.
size_t destinations(uint32_t opcode) {
    switch (opcode) {
        case kIf:
        case kBreakc:
        case kContinuec:
        case kRetc:
        case kDiscard:
        case kSwitch:
        case kCase: return 0;
        case kImul:
        case kUmul:
        case kUdiv:
        case kSincos:
        case kSwapc: return 2;
        default: return 1;
    }
}

// The first instruction (its index and opcode) that reads a float add or mul result, or a mov copy of one, other
// than an or; {-1, 0} where there is none. Instructions are taken in program order: a value's readers within its
// own block, where ROUNDED puts the or, come before any branch elsewhere overwrites it.
std::pair<int, uint32_t> first_raw_float_use(const std::vector<Instruction>& program) {
    std::set<std::pair<uint32_t, int>> raw;  // temp register components holding a float result not yet through an or
    for (size_t n = 0; n < program.size(); ++n) {
        const Instruction& ins = program[n];
        const size_t dests = std::min(destinations(ins.opcode), ins.operands.size());
        bool copies_raw[4] = {};
        for (size_t s = dests; s < ins.operands.size(); ++s) {
            const Operand& src = ins.operands[s];
            if (src.type != kTempRegister) continue;
            for (int i = 0; i < 4; ++i) {
                // mov and or read a source lane per lane they write; any other instruction counts as reading all.
                const bool per_lane = ins.opcode == kMov || ins.opcode == kOr;
                if (per_lane && (dests == 0 || ins.operands[0].comp[i] < 0)) continue;
                if (src.comp[i] < 0 || !raw.count({src.index, src.comp[i]})) continue;
                if (ins.opcode == kMov)
                    copies_raw[i] = true;
                else if (ins.opcode != kOr)
                    return {int(n), ins.opcode};
            }
        }
        for (size_t d = 0; d < dests; ++d) {
            const Operand& dst = ins.operands[d];
            if (dst.type != kTempRegister) continue;
            for (int i = 0; i < 4; ++i) {
                if (dst.comp[i] < 0) continue;
                if (ins.opcode == kAdd || ins.opcode == kMul || (ins.opcode == kMov && copies_raw[i]))
                    raw.insert({dst.index, i});
                else
                    raw.erase({dst.index, i});
            }
        }
    }
    return {-1, 0};
}

std::vector<std::string> f32_variants_with_dxbc() {
    std::vector<std::string> names;
    for (const resample_gpu::Variant& v : resample_gpu::compiled_variants()) {
        const std::string name = resample_gpu::kernel_name(v);
        if (name.find("_f32") != std::string::npos && !dxbc_kernel(name).empty()) names.push_back(name);
    }
    return names;
}

TEST(ResampleDxbc, EveryFloatProductAndSumPassesThroughAnOrFirst) {
    const std::vector<std::string> names = f32_variants_with_dxbc();
    ASSERT_GE(names.size(), 6u);  // nearest and linear runs and strips, the fixed-tap strips
    for (const std::string& name : names) {
        SCOPED_TRACE(name);
        const std::vector<Instruction> program = Sm4Reader(dxbc_kernel(name)).instructions();
        size_t products_and_sums = 0;
        for (const Instruction& ins : program) {
            EXPECT_TRUE(ins.opcode != kMad && ins.opcode != kDiv && (ins.opcode < kDp2 || ins.opcode > kDp4))
                << "opcode " << ins.opcode;
            products_and_sums += ins.opcode == kMul || ins.opcode == kAdd;
        }
        // The one-tap lines move bits (no float arithmetic, kernels/resample_grad_lines.hlsl); every other has some.
        EXPECT_EQ(products_and_sums == 0, name.ends_with("_lines_taps1"));
        const auto [at, opcode] = first_raw_float_use(program);
        EXPECT_EQ(at, -1) << "instruction " << at << " (opcode " << opcode
                          << ") reads a float result not yet through an or";
    }
}

}  // namespace
}  // namespace dmlgrad
