// The .npy reader and writer: the committed corpus in tests/data/npy (made by make_corpus.py, whose values are
// repeated here), malformed headers written on the fly, round trips and the writer's header layout.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <locale>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "io/npy.h"
#include "support/tensor_testing.h"

namespace dmlgrad {
namespace {

namespace fs = std::filesystem;

fs::path corpus(std::string_view name) { return fs::path(DMLGRAD_TEST_DATA) / "npy" / name; }

// A fresh folder per test, removed afterwards.
class ScratchDir {
public:
    ScratchDir() {
        std::string pattern = (fs::temp_directory_path() / "dmlgrad-npy-XXXXXX").string();
        if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
        path_ = pattern;
    }
    ~ScratchDir() { fs::remove_all(path_); }
    const fs::path& path() const { return path_; }
    fs::path operator/(std::string_view name) const { return path_ / name; }

private:
    fs::path path_;
};

void write_file(const fs::path& file, std::string_view bytes) {
    std::ofstream(file, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

// A .npy file with `dict` as its header text, unpadded (odd layouts are the point), and `payload` after it.
std::string npy_file(std::string_view dict, std::string_view payload = {}, int major = 1) {
    std::string out("\x93NUMPY", 6);
    out += char(major);
    out += '\0';
    for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out += char((dict.size() >> (8 * i)) & 0xFF);
    out += dict;
    out += payload;
    return out;
}

// Each element's bit pattern, zero-extended to 64 bits.
std::vector<uint64_t> bits_of(const Tensor& t) {
    const size_t size = dtype_size(t.dtype());
    std::vector<uint64_t> out(t.elements());
    for (size_t i = 0; i < out.size(); ++i) std::memcpy(&out[i], t.buffer.data() + i * size, size);
    return out;
}

template <class T>
std::vector<uint64_t> bits(std::initializer_list<T> values) {
    std::vector<uint64_t> out;
    for (T v : values) {
        uint64_t b = 0;
        std::memcpy(&b, &v, sizeof(T));
        out.push_back(b);
    }
    return out;
}

template <class T>
std::vector<uint64_t> int_extremes() {  // make_corpus.py's int_values
    using L = std::numeric_limits<T>;
    return bits<T>({T(0), T(1), T(42), L::min(), L::max(), T(L::max() - 1)});
}

std::vector<uint64_t> iota_bits(uint64_t n) {
    std::vector<uint64_t> out(n);
    for (uint64_t i = 0; i < n; ++i) out[i] = i;
    return out;
}

// Passes when `f` throws exactly UsageError with the one-line message "<file>: ...<rule>...".
template <class F>
::testing::AssertionResult usage_error(F&& f, const fs::path& file, std::string_view rule) {
    try {
        f();
    } catch (const UsageError& e) {
        std::string_view message = e.what();
        std::string prefix = file.string() + ": ";
        if (message.substr(0, prefix.size()) != prefix)
            return ::testing::AssertionFailure() << "message does not start with '" << prefix << "': " << message;
        if (message.find(rule) == std::string_view::npos)
            return ::testing::AssertionFailure() << "message lacks '" << rule << "': " << message;
        if (message.find('\n') != std::string_view::npos)
            return ::testing::AssertionFailure() << "message is not one line: " << message;
        return ::testing::AssertionSuccess();
    } catch (const std::exception& e) {
        return ::testing::AssertionFailure() << "threw another class than UsageError: " << e.what();
    }
    return ::testing::AssertionFailure() << "nothing thrown";
}

// Both entry points must refuse the file with the same rule (the header check sees the file size too).
::testing::AssertionResult rejected(const fs::path& file, std::string_view rule) {
    auto header = usage_error([&] { read_npy_header(file); }, file, rule);
    if (!header) return header << " (read_npy_header)";
    auto load = usage_error([&] { load_npy(file); }, file, rule);
    if (!load) return load << " (load_npy)";
    return ::testing::AssertionSuccess();
}

struct Expected {
    std::string file;
    DType dtype;
    Shape shape;
    std::vector<uint64_t> bits;
};

void expect_loads(const Expected& e) {
    SCOPED_TRACE(e.file);
    const fs::path file = corpus(e.file);
    Tensor t = load_npy(file);
    EXPECT_EQ(t.dtype(), e.dtype);
    EXPECT_EQ(t.shape(), e.shape);
    EXPECT_EQ(bits_of(t), e.bits);
    NpyHeader h = read_npy_header(file);
    EXPECT_EQ(h.info.dtype, e.dtype);
    EXPECT_EQ(h.info.shape, e.shape);
    EXPECT_EQ(h.payload_offset + t.bytes(), fs::file_size(file));
}

// --------------------------------------------------------------------------------------------------------------
// The corpus: files that load.

TEST(NpyCorpus, EveryDtypeLoadsExactBits) {
    const Expected cases[] = {
        {"dtype_float16.npy", DType::f16, {2, 3}, {0x0000, 0x8000, 0x3E00, 0x7BFF, 0xFC00, 0x0001}},
        {"dtype_float32.npy",
         DType::f32,
         {2, 3},
         {0x00000000, 0x80000000, 0x3FC00000, 0x7F7FFFFF, 0xFF800000, 0x00000001}},
        {"dtype_float64.npy",
         DType::f64,
         {2, 3},
         {0, 0x8000000000000000, 0x3FF8000000000000, 0x7FEFFFFFFFFFFFFF, 0xFFF0000000000000, 1}},
        {"dtype_int8.npy", DType::i8, {2, 3}, int_extremes<int8_t>()},
        {"dtype_int16.npy", DType::i16, {2, 3}, int_extremes<int16_t>()},
        {"dtype_int32.npy", DType::i32, {2, 3}, int_extremes<int32_t>()},
        {"dtype_int64.npy", DType::i64, {2, 3}, int_extremes<int64_t>()},
        {"dtype_uint8.npy", DType::u8, {2, 3}, int_extremes<uint8_t>()},
        {"dtype_uint16.npy", DType::u16, {2, 3}, int_extremes<uint16_t>()},
        {"dtype_uint32.npy", DType::u32, {2, 3}, int_extremes<uint32_t>()},
        {"dtype_uint64.npy", DType::u64, {2, 3}, int_extremes<uint64_t>()},
    };
    for (const auto& e : cases) expect_loads(e);
}

TEST(NpyCorpus, Versions1To3Load) {
    for (const char* file : {"version_1_0.npy", "version_2_0.npy", "version_3_0.npy"})
        expect_loads({file, DType::i32, {3}, {1, 2, 3}});
}

TEST(NpyCorpus, HeaderLayoutsNumpyAcceptsLoad) {
    for (const char* file : {"odd_padding.npy", "whitespace.npy", "keys_reordered.npy", "no_trailing_comma.npy",
                             "double_quotes.npy", "python2_long_dims.npy"})
        expect_loads({file, DType::i32, {3}, {1, 2, 3}});
}

TEST(NpyCorpus, ByteOrdersOfSmallTypes) {
    expect_loads({"byteorder_lt_i1.npy", DType::i8, {3}, bits<int8_t>({-1, 2, -3})});
    expect_loads({"byteorder_gt_i1.npy", DType::i8, {3}, bits<int8_t>({-1, 2, -3})});
    expect_loads({"byteorder_native_i2.npy", DType::i16, {3}, bits<int16_t>({1, -2, 3})});
    EXPECT_FALSE(read_npy_header(corpus("byteorder_gt_i1.npy")).big_endian);  // nothing to swap in one byte
}

TEST(NpyCorpus, BigEndianPayloadsAreSwapped) {
    expect_loads({"big_endian_f4.npy", DType::f32, {4}, {0x3F800000, 0xC0200000, 0x7F800000, 0x00000001}});
    expect_loads({"big_endian_i8.npy",
                  DType::i64,
                  {4},
                  bits<int64_t>({1, -2, std::numeric_limits<int64_t>::min(), 0x0102030405060708})});
    expect_loads({"big_endian_f2.npy", DType::f16, {4}, {0x3C00, 0xC100, 0x7BFF, 0x0001}});
    EXPECT_TRUE(read_npy_header(corpus("big_endian_f4.npy")).big_endian);
    EXPECT_FALSE(read_npy_header(corpus("dtype_float32.npy")).big_endian);
}

TEST(NpyCorpus, FortranOrderIsConvertedToCOrder) {
    // Each element holds its C-order index, so the loaded tensor reads 0, 1, 2, ...
    expect_loads({"fortran_2d_i4.npy", DType::i32, {2, 3}, iota_bits(6)});
    expect_loads({"fortran_3d_i2.npy", DType::i16, {2, 3, 4}, iota_bits(24)});
    expect_loads({"fortran_4d_i1.npy", DType::i8, {2, 1, 3, 2}, iota_bits(12)});
    expect_loads({"fortran_3d_big_endian_u2.npy", DType::u16, {3, 2, 2}, iota_bits(12)});
    NpyHeader h = read_npy_header(corpus("fortran_3d_big_endian_u2.npy"));
    EXPECT_TRUE(h.fortran_order);
    EXPECT_TRUE(h.big_endian);
    EXPECT_FALSE(read_npy_header(corpus("dtype_int32.npy")).fortran_order);
}

TEST(NpyCorpus, ScalarVectorAndEmptyShapes) {
    expect_loads({"scalar_f4.npy", DType::f32, {}, bits<float>({3.5f})});
    expect_loads({"vector_5_u1.npy", DType::u8, {5}, iota_bits(5)});
    expect_loads({"empty_0x3_f4.npy", DType::f32, {0, 3}, {}});
}

// --------------------------------------------------------------------------------------------------------------
// The corpus: files that are refused, each with its rule.

TEST(NpyCorpus, MalformedFilesAreUsageErrorsNamingFileAndRule) {
    const std::pair<const char*, const char*> cases[] = {
        {"version_4_0.npy", "unsupported .npy format version 4.0"},
        {"version_1_1.npy", "unsupported .npy format version 1.1"},
        {"truncated_payload.npy", "truncated: payload needs 24 bytes, file has 19"},
        {"trailing_bytes.npy", "trailing data: payload needs 24 bytes, file has 25"},
        {"truncated_header.npy", "truncated header: header needs 128 bytes, file has 50"},
        {"truncated_prefix.npy", "truncated header: file has only 9 bytes"},
        {"header_len_ffff.npy", "truncated header: header needs 65545 bytes, file has 72"},
        {"header_len_4g_v2.npy", "truncated header: header needs 4294967307 bytes, file has 74"},
        {"dim_overflow.npy", "dimension 99999999999999999999 overflows 64 bits"},
        {"bytes_overflow.npy", "needs more than 2^64 bytes"},
        {"negative_dim.npy", "negative dimension -1"},
        {"bad_magic.npy", "not a .npy file (bad magic)"},
        {"text_file.npy", "not a .npy file (bad magic)"},
        {"empty_file.npy", "not a .npy file (empty)"},
    };
    for (const auto& [file, rule] : cases) EXPECT_TRUE(rejected(corpus(file), rule)) << file;
}

TEST(NpyCorpus, UnsupportedDtypesAreNamed) {
    const std::pair<const char*, const char*> cases[] = {
        {"dtype_bool.npy", "unsupported dtype '|b1' (bool)"},
        {"dtype_complex64.npy", "unsupported dtype '<c8' (complex)"},
        {"dtype_bytes.npy", "unsupported dtype '|S2' (byte string)"},
        {"dtype_unicode.npy", "unsupported dtype '<U2' (unicode string)"},
        {"dtype_object.npy", "unsupported dtype '|O' (Python object)"},
        {"dtype_datetime.npy", "unsupported dtype '<M8[D]' (datetime)"},
        {"dtype_structured.npy", "unsupported dtype '[('a', '<i4'), ('b', '<f4')]' (structured)"},
        {"byteorder_pipe_f4.npy", "unsupported dtype '|f4' ('|' byte order on a multi-byte type)"},
    };
    for (const auto& [file, rule] : cases) {
        EXPECT_TRUE(rejected(corpus(file), rule)) << file;
        EXPECT_TRUE(rejected(corpus(file), "dmlgrad reads float16, float32")) << file;  // says what would do
    }
}

TEST(NpyFile, MissingFileIsAUsageError) {
    EXPECT_TRUE(rejected(corpus("no_such_file.npy"), "cannot open: No such file or directory"));
}

TEST(NpyFile, FolderIsAUsageError) { EXPECT_TRUE(rejected(corpus(""), "not a regular file")); }

TEST(NpyHeaderText, RejectsEachBrokenRule) {
    const std::pair<const char*, const char*> cases[] = {
        {"{'descr': '<f4', 'fortran_order': False}", "the header has no 'shape' key"},
        {"{'shape': (1,), 'fortran_order': False}", "the header has no 'descr' key"},
        {"{'descr': '<f4', 'shape': (1,)}", "the header has no 'fortran_order' key"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'foo': 1}", "unexpected key 'foo' in the header"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", "duplicate key 'descr'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1)}", "'shape' must be a tuple, not (1)"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [1]}", "'shape' must be a tuple, not [1]"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': ('a',)}", "dimension 'a' is not an integer"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775808,)}", "overflows 64 bits"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-9223372036854775808,)}", "negative dimension"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775807,)}", "more than 2^64 bytes"},
        {"{'descr': '<u1', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", "more than 2^64 elements"},
        {"{'descr': '<f4', 'fortran_order': 1, 'shape': (1,)}", "'fortran_order' must be True or False, not 1"},
        {"{'descr': '<f4', 'fortran_order': 'True', 'shape': (1,)}", "must be True or False, not 'True'"},
        {"{'descr': 4, 'fortran_order': False, 'shape': (1,)}", "'descr' must be a string, not 4"},
        {"{'descr': 'f4', 'fortran_order': False, 'shape': (1,)}", "unsupported dtype 'f4' (no byte order mark)"},
        {"{'descr': '<f16', 'fortran_order': False, 'shape': (1,)}", "unsupported dtype '<f16';"},
        {"{'descr': '<i3', 'fortran_order': False, 'shape': (1,)}", "unsupported dtype '<i3';"},
        {"{'descr': '', 'fortran_order': False, 'shape': (1,)}", "unsupported dtype '';"},
        {"{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}", "malformed header at byte"},
        {"{'descr': '<f4\n', 'fortran_order': False, 'shape': (1,)}", "unterminated string"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", "unexpected text after the dictionary: 'x'"},
        {"'descr': '<f4', 'fortran_order': False, 'shape': (1,)", "the header must start with '{'"},
        {"", "the header must start with '{'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", "expected ',' or '}' after a value"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,", "unexpected end of header"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}", "expected ',' or ')'"},
        {"{1: '<f4'}", "a key must be a string, not 1"},
        {"{'descr' '<f4'}", "expected ':' after a key"},
        {"{'descr': @}", "unexpected character '@'"},
        // The findings: numpy refuses these, dmlgrad read them.
        {"{'des\\cr': '<f4', 'fortran_order': False, 'shape': (1,)}", "escape sequences in strings are not supported"},
        {"{'descr': '<f4',\v'fortran_order': False, 'shape': (1,)}", "unexpected character '\\x0b'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (03,)}", "leading zeros in integer '03'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-01,)}", "leading zeros in integer '01'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1l,)}", "expected ',' or ')'"},
    };
    ScratchDir dir;
    const std::string deep = "{'descr': '<f4', 'fortran_order': False, 'shape': " + std::string(100000, '(') + "}";
    write_file(dir / "deep.npy", npy_file(deep));
    EXPECT_TRUE(rejected(dir / "deep.npy", "brackets nested more than 32 deep"));
    for (const auto& [dict, rule] : cases) {
        const fs::path file = dir / "h.npy";
        write_file(file, npy_file(dict, std::string(4, '\0')));
        EXPECT_TRUE(rejected(file, rule)) << dict;
    }
}

TEST(NpyHeaderText, NulPaddingIsRejected) {  // ast.literal_eval refuses NUL bytes, so numpy does too
    ScratchDir dir;
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}" + std::string("\0\0\n", 3);
    write_file(dir / "h.npy", npy_file(dict, std::string(4, '\0')));
    EXPECT_TRUE(rejected(dir / "h.npy", "unexpected text after the dictionary: '\\x00\\x00\\x0a'"));
}

TEST(NpyHeaderText, AcceptsLiteralVariants) {
    ScratchDir dir;
    const fs::path file = dir / "h.npy";
    // A 0-d shape written with inner space, and a negative-free tuple with spaces before the commas.
    write_file(file, npy_file("{'descr':'<i2','fortran_order':False,'shape':( ),}", std::string("\x07\x00", 2)));
    Tensor t = load_npy(file);
    EXPECT_EQ(t.shape(), Shape{});
    EXPECT_EQ(bits_of(t), std::vector<uint64_t>{7});

    // Fortran order where no transpose is needed (one axis longer than 1).
    write_file(file, npy_file("{'descr':'>u2','fortran_order':True,'shape':(1 , 3 , 1 , ),}",
                              std::string("\x00\x01\x00\x02\x00\x03", 6)));
    t = load_npy(file);
    EXPECT_EQ(t.shape(), (Shape{1, 3, 1}));
    EXPECT_EQ(bits_of(t), (std::vector<uint64_t>{1, 2, 3}));

    // Python 3 reads "00" and "0" (not "03"); numpy's _filter_header drops a Python 2 'L'; \f is whitespace.
    write_file(file, npy_file("{'descr':'<u1',\f'fortran_order':False,'shape':(00, 2L,)}", ""));
    EXPECT_EQ(load_npy(file).shape(), (Shape{0, 2}));

    // Version 2.0 and 3.0 lengths are 32-bit; a UTF-8 byte in an unknown key is escaped in the message.
    write_file(file, npy_file("{'descr':'<u1','fortran_order':False,'shape':(2,)}", "\x05\x06", 3));
    EXPECT_EQ(bits_of(load_npy(file)), (std::vector<uint64_t>{5, 6}));
    write_file(file, npy_file("{'descr':'<u1','fortran_order':False,'shape':(2,),'\xc3\xa9':1}", "\x05\x06", 3));
    EXPECT_TRUE(rejected(file, "unexpected key '\\xc3\\xa9'"));
}

// Fortran order and big-endian together on a tensor large enough to be split across threads.
TEST(NpyHeaderText, LargeFortranBigEndianPayload) {
    const Shape shape{37, 256, 259};  // 9.8 MB of uint32: more than one 4 MiB chunk per thread
    const uint64_t n = element_count(shape);
    std::string payload(n * 4, '\0');
    // Fortran offset of C index c: coordinates (i, j, k) -> i + 37 * (j + 256 * k). Value = C index, big-endian.
    for (uint64_t i = 0, c = 0; i < 37; ++i)
        for (uint64_t j = 0; j < 256; ++j)
            for (uint64_t k = 0; k < 259; ++k, ++c) {
                uint64_t f = i + 37 * (j + 256 * k);
                for (int b = 0; b < 4; ++b) payload[f * 4 + b] = char((c >> (8 * (3 - b))) & 0xFF);
            }
    ScratchDir dir;
    write_file(dir / "f.npy", npy_file("{'descr': '>u4', 'fortran_order': True, 'shape': (37, 256, 259), }", payload));
    Tensor t = load_npy(dir / "f.npy");
    ASSERT_EQ(t.shape(), shape);
    const uint32_t* v = t.as<uint32_t>();
    for (uint64_t c = 0; c < n; ++c)
        if (v[c] != c) FAIL() << "element " << c << " is " << v[c];
}

// --------------------------------------------------------------------------------------------------------------
// The writer.

TEST(NpyWrite, HeaderIsVersion1AlignedTo64) {
    const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    const std::string h = npy_header_bytes({DType::f32, {2, 3}});
    ASSERT_EQ(h.size(), 128u);  // 10 + 60 + '\n' does not fit in 64
    EXPECT_EQ(h.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    EXPECT_EQ(uint8_t(h[8]) | uint8_t(h[9]) << 8, int(h.size() - 10));
    EXPECT_EQ(h.substr(10, dict.size()), dict);
    EXPECT_EQ(h.substr(10 + dict.size()), std::string(h.size() - 11 - dict.size(), ' ') + "\n");
}

TEST(NpyWrite, ShapeTuplesAndDescrs) {
    auto dict_of = [](const TensorInfo& info) {
        std::string h = npy_header_bytes(info);
        EXPECT_EQ(h.size() % 64, 0u);
        EXPECT_EQ(h.back(), '\n');
        return h.substr(10, h.find('}') - 9);
    };
    EXPECT_EQ(dict_of({DType::u8, {5}}), "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }");
    EXPECT_EQ(dict_of({DType::f16, {}}), "{'descr': '<f2', 'fortran_order': False, 'shape': (), }");
    EXPECT_EQ(dict_of({DType::i64, {4294967295, 0, 1}}),
              "{'descr': '<i8', 'fortran_order': False, 'shape': (4294967295, 0, 1), }");
}

// A global C++ locale that groups digits must not leak into the header.
TEST(NpyWrite, HeaderIgnoresTheLocale) {
    struct Grouping : std::numpunct<char> {
        char do_thousands_sep() const override { return '.'; }
        std::string do_grouping() const override { return "\3"; }
        char do_decimal_point() const override { return ','; }
    };
    std::locale previous = std::locale::global(std::locale(std::locale::classic(), new Grouping));
    std::string h = npy_header_bytes({DType::f32, {1234567, 2}});
    std::locale::global(previous);
    EXPECT_NE(h.find("'shape': (1234567, 2), }"), std::string::npos) << h;
}

TEST(NpyWrite, RoundTripsEveryDtypeAndShape) {
    testing::SeededRng rng;
    const Shape shapes[] = {{}, {0}, {7}, {3, 0, 2}, {2, 3}, {2, 3, 4, 5, 1}, {1, 1, 1, 1, 1, 1, 1, 3}};
    ScratchDir dir;
    const fs::path file = dir / "r.npy";
    for (DType type : kAllDTypes)
        for (const Shape& shape : shapes) {
            SCOPED_TRACE(::testing::Message() << dtype_name(type) << " " << shape_string(shape));
            Tensor t = testing::random_tensor(type, shape, rng);
            save_npy(file, t);
            NpyHeader h = read_npy_header(file);
            EXPECT_EQ(h.payload_offset % 64, 0u);
            EXPECT_EQ(h.payload_offset + t.bytes(), fs::file_size(file));
            EXPECT_FALSE(h.fortran_order);
            EXPECT_FALSE(h.big_endian);
            Tensor back = load_npy(file);
            EXPECT_EQ(back.dtype(), type);
            EXPECT_EQ(back.shape(), shape);
            EXPECT_TRUE(testing::bitwise_equal(t, back));
        }
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(NpyWrite, OutputThatIsAlsoTheInput) {
    ScratchDir dir;
    fs::copy_file(corpus("fortran_3d_big_endian_u2.npy"), dir / "x.npy");
    Tensor t = load_npy(dir / "x.npy");
    save_npy(dir / "x.npy", t);
    Tensor back = load_npy(dir / "x.npy");
    EXPECT_EQ(back.shape(), (Shape{3, 2, 2}));
    EXPECT_EQ(bits_of(back), iota_bits(12));
    EXPECT_FALSE(read_npy_header(dir / "x.npy").fortran_order);
}

TEST(NpyWrite, MissingFolderIsARuntimeFailure) {
    ScratchDir dir;
    const fs::path target = dir / "missing" / "x.npy";
    Tensor t = testing::tensor_from(DType::f32, {2}, {1, 2});
    try {
        save_npy(target, t);
        FAIL() << "nothing thrown";
    } catch (const RuntimeFailure& e) {
        EXPECT_EQ(std::string_view(e.what()).substr(0, target.string().size() + 2), target.string() + ": ");
        EXPECT_NE(std::string_view(e.what()).find("No such file or directory"), std::string_view::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(dir / "missing"));
}

}  // namespace
}  // namespace dmlgrad
