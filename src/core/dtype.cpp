#include "core/dtype.h"

namespace dmlgrad {
namespace {

struct DTypeInfo {
    DType type;
    size_t size;
    std::string_view name;
    std::string_view npy_descr;
    std::string_view short_name;
};

constexpr DTypeInfo kInfo[] = {
    {DType::f16, 2, "float16", "<f2", "f16"}, {DType::f32, 4, "float32", "<f4", "f32"},
    {DType::f64, 8, "float64", "<f8", "f64"}, {DType::i8, 1, "int8", "|i1", "i8"},
    {DType::i16, 2, "int16", "<i2", "i16"},   {DType::i32, 4, "int32", "<i4", "i32"},
    {DType::i64, 8, "int64", "<i8", "i64"},   {DType::u8, 1, "uint8", "|u1", "u8"},
    {DType::u16, 2, "uint16", "<u2", "u16"},  {DType::u32, 4, "uint32", "<u4", "u32"},
    {DType::u64, 8, "uint64", "<u8", "u64"},
};

const DTypeInfo& info(DType t) { return kInfo[static_cast<size_t>(t)]; }

}  // namespace

size_t dtype_size(DType t) { return info(t).size; }
bool dtype_is_float(DType t) { return t == DType::f16 || t == DType::f32 || t == DType::f64; }
bool dtype_is_signed_int(DType t) { return t == DType::i8 || t == DType::i16 || t == DType::i32 || t == DType::i64; }
bool dtype_is_unsigned_int(DType t) { return t == DType::u8 || t == DType::u16 || t == DType::u32 || t == DType::u64; }
std::string_view dtype_name(DType t) { return info(t).name; }
std::string_view dtype_npy_descr(DType t) { return info(t).npy_descr; }
std::string_view dtype_short_name(DType t) { return info(t).short_name; }

std::optional<DType> dtype_from_name(std::string_view numpy_name) {
    for (const auto& i : kInfo)
        if (i.name == numpy_name) return i.type;
    return std::nullopt;
}

std::string dtype_list(std::span<const DType> types) {
    std::string out;
    for (DType t : types) {
        if (!out.empty()) out += ", ";
        out += dtype_name(t);
    }
    return out;
}

}  // namespace dmlgrad
