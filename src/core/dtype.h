#pragma once
// Element types of the tensors dmlgrad reads and writes: DirectML's tensor data types that have a .npy form.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace dmlgrad {

enum class DType : uint8_t { f16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64 };

inline constexpr DType kAllDTypes[] = {DType::f16, DType::f32, DType::f64, DType::i8,  DType::i16, DType::i32,
                                       DType::i64, DType::u8,  DType::u16, DType::u32, DType::u64};

size_t dtype_size(DType t);
bool dtype_is_float(DType t);
bool dtype_is_signed_int(DType t);
bool dtype_is_unsigned_int(DType t);

// numpy's name of the type: "float32", "int8", ...
std::string_view dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view numpy_name);

// The little-endian .npy descriptor: "<f4", "|i1", ...
std::string_view dtype_npy_descr(DType t);

// "f32", "i8", ...: the suffix of the GPU kernels' names.
std::string_view dtype_short_name(DType t);

// "float32, float16, int8" for error messages.
std::string dtype_list(std::span<const DType> types);

}  // namespace dmlgrad
