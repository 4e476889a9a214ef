// The zero-copy paths of the .npy code: inputs mapped from the page cache, outputs filled in place.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "io/npy.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

namespace fs = std::filesystem;

class NpyMapping : public ::testing::Test {
protected:
    fs::path dir_ = fs::temp_directory_path() / ("dmlgrad-map-" + std::to_string(std::random_device{}()));
    SeededRng rng_;
    void SetUp() override { fs::create_directories(dir_); }
    void TearDown() override { fs::remove_all(dir_); }
    std::vector<std::string> listing() const {
        std::vector<std::string> names;
        for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }
};

TEST_F(NpyMapping, MappedLoadEqualsCopiedLoad) {
    for (DType type : {DType::f32, DType::i8, DType::u64}) {
        Tensor original = random_tensor(type, {3, 1 << 19}, rng_);  // >= 1 MiB: mapped
        save_npy(dir_ / "t.npy", original);
        Tensor mapped = load_npy(dir_ / "t.npy", PayloadAccess::map_read_only);
        EXPECT_TRUE(bitwise_equal(original, mapped)) << dtype_name(type);
        EXPECT_TRUE(bitwise_equal(load_npy(dir_ / "t.npy"), mapped)) << dtype_name(type);
    }
}

TEST_F(NpyMapping, BigEndianFilesAreStillConvertedWhenMappingIsAsked) {
    Tensor original = random_tensor(DType::f32, {1 << 19}, rng_);
    save_npy(dir_ / "t.npy", original);
    // Rewrite as big-endian by hand: the mapped path must not be taken for it.
    std::string header = npy_header_bytes(original.info);
    std::string big = header;
    big.replace(big.find("<f4"), 3, ">f4");
    std::vector<char> payload(original.bytes());
    for (size_t i = 0; i < original.bytes(); i += 4)
        for (int b = 0; b < 4; ++b) payload[i + b] = static_cast<char>(original.buffer.data()[i + 3 - b]);
    {
        std::ofstream out(dir_ / "big.npy", std::ios::binary);
        out << big;
        out.write(payload.data(), std::streamsize(payload.size()));
    }
    EXPECT_TRUE(bitwise_equal(original, load_npy(dir_ / "big.npy", PayloadAccess::map_read_only)));
}

// A Fortran-order file of 1 MiB and more (the mapping threshold) is transposed on load, not mapped as if it were
// in C order: its bytes are the columns of the matrix one after the other.
TEST_F(NpyMapping, FortranOrderFilesAreStillTransposedWhenMappingIsAsked) {
    const int64_t rows = 512, columns = 600;  // 1.2 MB of float32
    Tensor original = random_tensor(DType::f32, {rows, columns}, rng_);
    std::string header = npy_header_bytes(original.info);
    header.replace(header.find("False"), 5, "True ");  // the same length: the payload stays aligned
    std::vector<float> by_columns(original.elements());
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < columns; ++j) by_columns[j * rows + i] = original.as<float>()[i * columns + j];
    {
        std::ofstream out(dir_ / "fortran.npy", std::ios::binary);
        out << header;
        out.write(reinterpret_cast<const char*>(by_columns.data()), std::streamsize(original.bytes()));
    }
    EXPECT_TRUE(bitwise_equal(original, load_npy(dir_ / "fortran.npy", PayloadAccess::map_read_only)));
}

TEST_F(NpyMapping, LargeOutputIsWrittenInPlaceAndCommitted) {
    Tensor expected = random_tensor(DType::f16, {5, 1 << 18}, rng_);  // 2.5 MiB: mapped
    {
        NpyOutput out(dir_ / "o.npy", expected.info);
        std::memcpy(out.tensor().buffer.data(), expected.buffer.data(), expected.bytes());
        // Unnamed until commit (O_TMPFILE); a hidden temporary where the file system lacks it.
        ASSERT_LE(listing().size(), 1u);
        for (const std::string& name : listing()) EXPECT_EQ(name.front(), '.');
        EXPECT_TRUE(out.written_in_place());  // the file's own mapping, not a heap copy written at commit
        out.commit();
    }
    EXPECT_EQ(listing(), (std::vector<std::string>{"o.npy"}));
    EXPECT_TRUE(bitwise_equal(expected, load_npy(dir_ / "o.npy")));
    EXPECT_EQ(fs::file_size(dir_ / "o.npy"), npy_header_bytes(expected.info).size() + expected.bytes());
}

// commit() links the file into place and leaves the mapping to the destructor: the tensor stays readable (and is
// the file's content) until the output is destroyed.
TEST_F(NpyMapping, MappedOutputStaysReadableAfterCommit) {
    save_npy(dir_ / "o.npy", tensor_from(DType::f32, {2}, {1, 2}));  // replaced
    Tensor expected = random_tensor(DType::f32, {1 << 19}, rng_);
    NpyOutput out(dir_ / "o.npy", expected.info);
    ASSERT_TRUE(out.written_in_place());
    std::memcpy(out.tensor().buffer.data(), expected.buffer.data(), expected.bytes());
    out.commit();
    EXPECT_TRUE(bitwise_equal(expected, out.tensor()));
    EXPECT_TRUE(bitwise_equal(expected, load_npy(dir_ / "o.npy")));
    EXPECT_EQ(listing(), (std::vector<std::string>{"o.npy"}));
}

TEST_F(NpyMapping, SmallOutputIsWrittenOnCommit) {
    Tensor expected = random_tensor(DType::i32, {7, 3}, rng_);
    NpyOutput out(dir_ / "o.npy", expected.info);
    std::memcpy(out.tensor().buffer.data(), expected.buffer.data(), expected.bytes());
    out.commit();
    EXPECT_TRUE(bitwise_equal(expected, load_npy(dir_ / "o.npy")));
}

TEST_F(NpyMapping, UncommittedOutputLeavesNothingAndKeepsTheOldFile) {
    save_npy(dir_ / "o.npy", tensor_from(DType::f32, {2}, {1, 2}));
    for (Shape shape : {Shape{4}, Shape{1 << 20}}) {
        NpyOutput out(dir_ / "o.npy", TensorInfo{DType::f32, shape});
        std::memset(out.tensor().buffer.data(), 0x5A, out.tensor().bytes());
    }
    EXPECT_EQ(listing(), (std::vector<std::string>{"o.npy"}));
    EXPECT_EQ(to_doubles(load_npy(dir_ / "o.npy")), (std::vector<double>{1, 2}));
}

TEST_F(NpyMapping, OutputOverAMappedInputIsSafe) {
    Tensor original = random_tensor(DType::f32, {1 << 19}, rng_);
    save_npy(dir_ / "t.npy", original);
    Tensor input = load_npy(dir_ / "t.npy", PayloadAccess::map_read_only);
    NpyOutput out(dir_ / "t.npy", input.info);
    for (uint64_t i = 0; i < input.elements(); ++i) out.tensor().as<float>()[i] = input.as<float>()[i] * 2.0f;
    out.commit();
    EXPECT_TRUE(bitwise_equal(original, input));  // the old file stays mapped, unchanged
    Tensor expected(original.info);
    for (uint64_t i = 0; i < original.elements(); ++i) expected.as<float>()[i] = original.as<float>()[i] * 2.0f;
    EXPECT_TRUE(bitwise_equal(expected, load_npy(dir_ / "t.npy")));
}

}  // namespace
}  // namespace dmlgrad::testing
