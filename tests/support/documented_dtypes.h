#pragma once
// Each operator's dtypes as README's subcommand list states them, written out here rather than read from the
// production tables (kReluGradTypes...), so that a table that loses or gains a type fails the tests.
#include <array>

#include "core/dtype.h"

namespace dmlgrad::testing {

// "float32 float16 int32 int16 int8"
inline constexpr std::array kReluGradDocumentedTypes = {DType::f32, DType::f16, DType::i32, DType::i16, DType::i8};
// "float32 float16 and every integer type but 64-bit float"
inline constexpr std::array kClipGradDocumentedTypes = {DType::f32, DType::f16, DType::i8,  DType::i16, DType::i32,
                                                        DType::i64, DType::u8,  DType::u16, DType::u32, DType::u64};
// "every dtype" of README's .npy list: <f2 <f4 <f8 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8
inline constexpr std::array kSliceGradDocumentedTypes = {DType::f16, DType::f32, DType::f64, DType::i8,
                                                         DType::i16, DType::i32, DType::i64, DType::u8,
                                                         DType::u16, DType::u32, DType::u64};
// "float32 float16"
inline constexpr std::array kMaxPoolGradDocumentedTypes = {DType::f32, DType::f16};
// "float32 float16"
inline constexpr std::array kResampleGradDocumentedTypes = {DType::f32, DType::f16};

}  // namespace dmlgrad::testing
