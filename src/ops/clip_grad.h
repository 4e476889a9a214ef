#pragma once
// DML_ELEMENT_WISE_CLIP_GRAD1_OPERATOR_DESC: dX = (X <= Min || X >= Max) ? 0 : dY (docs/OPERATORS.md section 2).
#include <string>

#include "ops/operand.h"

namespace dmlgrad {

inline constexpr DType kClipGradTypes[] = {DType::f32, DType::f16, DType::i64, DType::i32, DType::i16,
                                           DType::i8,  DType::u64, DType::u32, DType::u16, DType::u8};

// Min and Max as the user wrote them; MinMaxDataType is the tensors' type, known once the files are read.
struct ClipGradDesc {
    std::string min;
    std::string max;
};

struct ClipGradPlan {
    static constexpr bool sums = false;  // each dX element is one value or 0 (plan_sums)
    DType dtype = DType::f32;
    Shape shape;
    uint64_t count = 0;
    // The bounds converted to `dtype` (fp16 round-to-nearest-even), as that type's bit pattern, zero-extended.
    uint64_t min_bits = 0;
    uint64_t max_bits = 0;
};

ClipGradPlan plan_clip_grad(const ClipGradDesc& desc, const Operand& x, const Operand& dy);

// Converts a command-line bound to `type`'s bit pattern. Throws UsageError naming `flag` when the text is not a
// number of that type (integers: exact 64-bit parse, range-checked; floats: finite or inf, not NaN).
uint64_t parse_clip_bound(std::string_view flag, std::string_view text, DType type);

}  // namespace dmlgrad
