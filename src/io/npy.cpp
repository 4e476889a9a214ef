#include "io/npy.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/fatal_signals.h"
#include "core/parallel.h"
#include "core/printable.h"
#include "io/atomic_file.h"
#include "io/standard_streams.h"

namespace dmlgrad {

// Tensors live in memory in the host's order and the writer emits '<' descriptors from memory as is.
static_assert(std::endian::native == std::endian::little, "dmlgrad's .npy code assumes a little-endian host");

namespace {

using std::filesystem::path;

constexpr std::string_view kMagic{"\x93NUMPY", 6};
// numpy itself refuses headers over 10,000 bytes by default; this bound only stops a forged length from making
// us allocate gigabytes before the parser sees the header.
constexpr uint64_t kMaxHeaderBytes = uint64_t{1} << 20;
// One read()/write() moves at most this much (Linux caps single transfers just under 2 GiB anyway).
constexpr size_t kMaxTransfer = size_t{1} << 30;

// Every reader error: one line, "<path>: <rule broken>".
template <class... Args>
[[noreturn]] void fail(const path& file, fmt::format_string<Args...> rule, Args&&... args) {
    throw UsageError(fmt::format("{}: {}", file.string(), fmt::format(rule, std::forward<Args>(args)...)));
}

std::string errno_text(int error) { return std::generic_category().message(error); }

// Header text quoted in a message: control characters escaped and length bounded, so the message stays one line.
std::string printable(std::string_view text) {
    constexpr size_t kLimit = 80;
    std::string out;
    for (char c : text.substr(0, kLimit)) {
        auto u = static_cast<unsigned char>(c);
        out += (u >= 0x20 && u < 0x7F) ? std::string(1, c) : fmt::format("\\x{:02x}", u);
    }
    if (text.size() > kLimit) out += "...";
    return out;
}

// ---------------------------------------------------------------------------------------------------------------
// The input file: opened once, size taken once, read with pread() in large pieces.

class InputFile {
public:
    explicit InputFile(const path& file) : path_(is_standard_stream(file) ? path("standard input") : file) {
        // O_NONBLOCK: opening a FIFO must not hang; it is ignored for the regular files accepted below.
        if (is_standard_stream(file))
            fd_.fd = ::fcntl(standard_input_fd(), F_DUPFD_CLOEXEC, 0);
        else
            do fd_.fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
            while (fd_.fd < 0 && errno == EINTR);
        if (fd_.fd < 0) fail(path_, "cannot open: {}", errno_text(errno));
        struct stat st {};
        if (::fstat(fd_.fd, &st) != 0) fail(path_, "cannot stat: {}", errno_text(errno));
        // A size is needed to cap the header and check the payload, so pipes and devices are refused.
        if (!S_ISREG(st.st_mode)) fail(path_, "not a regular file");
        size_ = static_cast<uint64_t>(st.st_size);
    }

    uint64_t size() const { return size_; }
    const path& name() const { return path_; }
    int fd() const { return fd_.fd; }

    // Reads up to out.size() bytes at `offset`; fewer only at end of file.
    size_t read_at(uint64_t offset, std::span<std::byte> out) const {
        size_t done = 0;
        while (done < out.size()) {
            size_t want = std::min(out.size() - done, kMaxTransfer);
            ssize_t n = ::pread(fd_.fd, out.data() + done, want, static_cast<off_t>(offset + done));
            if (n < 0) {
                if (errno == EINTR) continue;
                fail(path_, "cannot read: {}", errno_text(errno));
            }
            if (n == 0) break;
            done += static_cast<size_t>(n);
        }
        return done;
    }

private:
    struct Fd {
        int fd = -1;
        ~Fd() {
            if (fd >= 0) ::close(fd);
        }
    };
    path path_;
    Fd fd_;
    uint64_t size_ = 0;
};

// ---------------------------------------------------------------------------------------------------------------
// The header dictionary: a Python literal (numpy reads it with ast.literal_eval). This parses the subset that
// can appear there: strings, integers, names (True/False/None), tuples and lists, so that any layout numpy
// accepts is read and a structured descr (a list) is recognized and named rather than called a syntax error.

struct PyValue {
    enum class Kind { string, integer, name, tuple, list };
    Kind kind = Kind::name;
    std::string_view source;  // the literal's text, for messages
    std::string text;         // string contents or name
    int64_t integer = 0;
    bool overflow = false;  // an integer beyond 64 bits (reported only where an integer is used)
    std::vector<PyValue> items;
};

class DictParser {
public:
    DictParser(const path& file, std::string_view text) : file_(file), text_(text) {}

    std::vector<std::pair<std::string, PyValue>> parse() {
        std::vector<std::pair<std::string, PyValue>> entries;
        skip_space();
        expect('{', "the header must start with '{'");
        skip_space();
        while (!at('}')) {
            PyValue key = value();
            if (key.kind != PyValue::Kind::string) error("a key must be a string, not {}", printable(key.source));
            skip_space();
            expect(':', "expected ':' after a key");
            skip_space();
            entries.emplace_back(std::move(key.text), value());
            skip_space();
            if (!at('}')) {
                expect(',', "expected ',' or '}' after a value");
                skip_space();
            }
        }
        ++pos_;
        skip_space();
        if (pos_ != text_.size()) error("unexpected text after the dictionary: '{}'", printable(text_.substr(pos_)));
        return entries;
    }

private:
    template <class... Args>
    [[noreturn]] void error(fmt::format_string<Args...> what, Args&&... args) {
        fail(file_, "malformed header at byte {}: {}", pos_, fmt::format(what, std::forward<Args>(args)...));
    }

    bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
    void expect(char c, std::string_view what) {
        if (!at(c)) error("{}", what);
        ++pos_;
    }
    // Python's whitespace inside brackets, newlines included (its tokenizer takes no \v).
    void skip_space() {
        while (pos_ < text_.size() && std::strchr(" \t\n\r\f", text_[pos_]) && text_[pos_] != '\0') ++pos_;
    }
    static bool is_digit(char c) { return c >= '0' && c <= '9'; }
    static bool is_name_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || is_digit(c);
    }

    PyValue value() {
        if (pos_ >= text_.size()) error("unexpected end of header");
        size_t start = pos_;
        PyValue v;
        char c = text_[pos_];
        if (c == '\'' || c == '"') {
            v = string_literal();
        } else if (c == '-' || is_digit(c)) {
            v = integer_literal();
        } else if (c == '(' || c == '[') {
            v = sequence();
        } else if (is_name_char(c)) {
            v.kind = PyValue::Kind::name;
            while (pos_ < text_.size() && is_name_char(text_[pos_])) v.text += text_[pos_++];
        } else {
            error("unexpected character '{}'", printable(text_.substr(pos_, 1)));
        }
        v.source = text_.substr(start, pos_ - start);
        return v;
    }

    PyValue string_literal() {
        PyValue v;
        v.kind = PyValue::Kind::string;
        char quote = text_[pos_++];
        while (!at(quote)) {
            if (pos_ >= text_.size() || text_[pos_] == '\n') error("unterminated string");
            // numpy writes no escapes, and Python would read one differently ('\\x41' is 'A'): refused, not guessed.
            if (text_[pos_] == '\\') error("escape sequences in strings are not supported");
            v.text += text_[pos_++];
        }
        ++pos_;
        return v;
    }

    // Decimal, optionally negative, as Python 3 reads it: no leading zeros ("03"; "0" and "00" are fine). Python 2's
    // 'L' suffix is accepted in capitals only: numpy's _filter_header drops the NAME token "L" after a number.
    PyValue integer_literal() {
        PyValue v;
        v.kind = PyValue::Kind::integer;
        bool negative = at('-');
        if (negative) ++pos_;
        if (pos_ >= text_.size() || !is_digit(text_[pos_])) error("expected a digit after '-'");
        const size_t first_digit = pos_;
        uint64_t magnitude = 0;
        for (; pos_ < text_.size() && is_digit(text_[pos_]); ++pos_) {
            auto digit = static_cast<uint64_t>(text_[pos_] - '0');
            if (magnitude > (uint64_t{1} << 63) / 10 || magnitude * 10 > (uint64_t{1} << 63) - digit)
                v.overflow = true;
            else
                magnitude = magnitude * 10 + digit;
        }
        std::string_view digits = text_.substr(first_digit, pos_ - first_digit);
        if (digits.size() > 1 && digits[0] == '0' && digits.find_first_not_of('0') != std::string_view::npos)
            error("leading zeros in integer '{}'", printable(digits));
        if (at('L')) ++pos_;
        // 2^63 fits only as -2^63; a shape rejects negatives anyway.
        if (!negative && magnitude == (uint64_t{1} << 63)) v.overflow = true;
        v.integer = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
        return v;
    }

    // "(a, b)", "(a,)", "()" are tuples; "(a)" is just a, as in Python. "[...]" is a list.
    PyValue sequence() {
        // Real headers nest two deep (a structured descr); the bound keeps a forged one from exhausting the stack.
        constexpr int kMaxDepth = 32;
        if (depth_ == kMaxDepth) error("brackets nested more than {} deep", kMaxDepth);
        ++depth_;
        char close = text_[pos_] == '(' ? ')' : ']';
        PyValue v;
        v.kind = close == ')' ? PyValue::Kind::tuple : PyValue::Kind::list;
        ++pos_;
        skip_space();
        bool comma = false;
        while (!at(close)) {
            v.items.push_back(value());
            skip_space();
            comma = at(',');
            if (!comma) break;
            ++pos_;
            skip_space();
        }
        expect(close, fmt::format("expected ',' or '{}'", close));
        --depth_;
        if (close == ')' && v.items.size() == 1 && !comma) return std::move(v.items[0]);
        return v;
    }

    const path& file_;
    std::string_view text_;
    size_t pos_ = 0;
    int depth_ = 0;
};

// ---------------------------------------------------------------------------------------------------------------
// Interpreting the three keys.

struct Descr {
    DType dtype;
    bool big_endian;
};

// numpy's name for a kind letter dmlgrad does not read, for the rejection message.
std::string_view kind_name(char kind) {
    switch (kind) {
        case 'b': return "bool";
        case 'c': return "complex";
        case 'S':
        case 'a': return "byte string";
        case 'U': return "unicode string";
        case 'O': return "Python object";
        case 'V': return "void/raw bytes";
        case 'M': return "datetime";
        case 'm': return "timedelta";
        default: return {};
    }
}

[[noreturn]] void unsupported_dtype(const path& file, std::string_view descr, std::string_view why) {
    fail(file, "unsupported dtype '{}'{}; dmlgrad reads {}", printable(descr),
         why.empty() ? std::string() : fmt::format(" ({})", why), dtype_list(kAllDTypes));
}

// "<f4", ">i8", "=u2", "|u1". A byte order mark is required: numpy always writes one, and '|' (no order) is
// only meaningful for 1-byte types, so '|f4' or 'f4' would leave us guessing the writer's byte order.
Descr parse_descr(const path& file, const PyValue& value) {
    if (value.kind == PyValue::Kind::list) unsupported_dtype(file, value.source, "structured");
    if (value.kind != PyValue::Kind::string) fail(file, "'descr' must be a string, not {}", printable(value.source));
    std::string_view d = value.text;
    if (d.size() < 2) unsupported_dtype(file, d, {});
    if (d[0] == '\0' || !std::strchr("<>=|", d[0])) {
        std::string_view why = kind_name(d[0]);
        unsupported_dtype(file, d, why.empty() ? "no byte order mark" : why);
    }
    char order = d[0];
    char kind = d[1];
    std::string_view size_text = d.substr(2);
    if (std::string_view why = kind_name(kind); !why.empty()) unsupported_dtype(file, d, why);

    for (DType t : kAllDTypes) {
        std::string_view canonical = dtype_npy_descr(t);  // "<f4" or "|i1"
        if (canonical[1] != kind || canonical.substr(2) != size_text) continue;
        if (order == '|' && dtype_size(t) != 1) unsupported_dtype(file, d, "'|' byte order on a multi-byte type");
        return {t, order == '>' && dtype_size(t) > 1};
    }
    unsupported_dtype(file, d, {});
}

Shape parse_shape(const path& file, const PyValue& value) {
    if (value.kind != PyValue::Kind::tuple) fail(file, "'shape' must be a tuple, not {}", printable(value.source));
    Shape shape;
    for (const PyValue& dim : value.items) {
        if (dim.kind != PyValue::Kind::integer)
            fail(file, "shape {}: dimension {} is not an integer", printable(value.source), printable(dim.source));
        if (dim.overflow)
            fail(file, "shape {}: dimension {} overflows 64 bits", printable(value.source), printable(dim.source));
        if (dim.integer < 0) fail(file, "shape {}: negative dimension {}", printable(value.source), dim.integer);
        shape.push_back(dim.integer);
    }
    return shape;
}

bool parse_fortran_order(const path& file, const PyValue& value) {
    if (value.kind == PyValue::Kind::name && value.text == "True") return true;
    if (value.kind == PyValue::Kind::name && value.text == "False") return false;
    fail(file, "'fortran_order' must be True or False, not {}", printable(value.source));
}

NpyHeader interpret_dict(const path& file, std::string_view text) {
    constexpr std::string_view kKeys[] = {"descr", "fortran_order", "shape"};
    const PyValue* found[3] = {};
    auto entries = DictParser(file, text).parse();
    for (const auto& [key, value] : entries) {
        auto it = std::find(std::begin(kKeys), std::end(kKeys), key);
        if (it == std::end(kKeys)) fail(file, "unexpected key '{}' in the header", printable(key));
        const PyValue*& slot = found[it - std::begin(kKeys)];
        if (slot) fail(file, "duplicate key '{}' in the header", key);
        slot = &value;
    }
    for (size_t i = 0; i < 3; ++i)
        if (!found[i]) fail(file, "the header has no '{}' key", kKeys[i]);

    NpyHeader header;
    Descr descr = parse_descr(file, *found[0]);
    header.info.dtype = descr.dtype;
    header.big_endian = descr.big_endian;
    header.fortran_order = parse_fortran_order(file, *found[1]);
    header.info.shape = parse_shape(file, *found[2]);
    return header;
}

// ---------------------------------------------------------------------------------------------------------------
// The whole header: magic, version, length, dictionary; then the payload size against the file size.

uint64_t read_le(const std::byte* p, size_t bytes) {
    uint64_t v = 0;
    for (size_t i = bytes; i-- > 0;) v = (v << 8) | std::to_integer<uint64_t>(p[i]);
    return v;
}

// elements * element size, or throws if that (or the end offset) does not fit in 64 bits.
uint64_t payload_bytes(const path& file, const NpyHeader& header) {
    const Shape& shape = header.info.shape;
    uint64_t elements = 1;
    bool has_zero = std::find(shape.begin(), shape.end(), 0) != shape.end();
    uint64_t size = dtype_size(header.info.dtype);
    for (int64_t d : shape) {
        auto dim = static_cast<uint64_t>(d);
        if (!has_zero && dim != 0 && elements > std::numeric_limits<uint64_t>::max() / dim)
            fail(file, "shape {} has more than 2^64 elements", shape_string(shape));
        elements *= dim;
    }
    uint64_t limit = std::numeric_limits<uint64_t>::max() - header.payload_offset;
    if (elements > limit / size)
        fail(file, "shape {} of {}-byte elements needs more than 2^64 bytes", shape_string(shape), size);
    return elements * size;
}

NpyHeader parse_header(const InputFile& file) {
    const path& name = file.name();
    std::byte prefix[12];
    size_t got = file.read_at(0, prefix);
    std::string_view magic(reinterpret_cast<const char*>(prefix), std::min(got, kMagic.size()));
    if (got == 0) fail(name, "not a .npy file (empty)");
    if (magic != kMagic.substr(0, magic.size())) fail(name, "not a .npy file (bad magic)");

    auto too_short = [&] { fail(name, "truncated header: file has only {} byte{}", got, got == 1 ? "" : "s"); };
    if (got < 8) too_short();
    int major = std::to_integer<int>(prefix[6]);
    int minor = std::to_integer<int>(prefix[7]);
    if (minor != 0 || major < 1 || major > 3)
        fail(name, "unsupported .npy format version {}.{} (dmlgrad reads 1.0, 2.0 and 3.0)", major, minor);
    const size_t length_bytes = major == 1 ? 2 : 4;
    if (got < 8 + length_bytes) too_short();

    // The length is unsigned little-endian; capping it by the file size first means a forged one allocates nothing.
    const uint64_t start = 8 + length_bytes;
    const uint64_t length = read_le(prefix + 8, length_bytes);
    if (length > file.size() - start)
        fail(name, "truncated header: header needs {} bytes, file has {}", start + length, file.size());
    if (length > kMaxHeaderBytes) fail(name, "header of {} bytes is over the {}-byte limit", length, kMaxHeaderBytes);

    // Version 3.0 allows UTF-8: only the ASCII parts matter to the parser, other bytes end up in messages escaped.
    std::string text(length, '\0');
    file.read_at(start, std::as_writable_bytes(std::span(text)));
    NpyHeader header = interpret_dict(name, text);
    header.payload_offset = start + length;

    // Exact size only: numpy writes exactly header + payload, and bytes beyond the payload are more likely a
    // damaged or concatenated file (several np.save calls on one handle) than something safe to ignore.
    const uint64_t bytes = payload_bytes(name, header);
    const uint64_t have = file.size() - header.payload_offset;
    if (have < bytes) fail(name, "truncated: payload needs {} bytes, file has {}", bytes, have);
    if (have > bytes) fail(name, "trailing data: payload needs {} bytes, file has {}", bytes, have);
    return header;
}

// ---------------------------------------------------------------------------------------------------------------
// Payload conversions, in place or into the tensor, split across threads for large tensors.

constexpr uint64_t kMinBytesPerThread = uint64_t{4} << 20;

template <class U>
U byteswap(U v) {
    if constexpr (sizeof(U) == 2) return __builtin_bswap16(v);
    if constexpr (sizeof(U) == 4) return __builtin_bswap32(v);
    if constexpr (sizeof(U) == 8) return __builtin_bswap64(v);
}

template <class U>
void byteswap_range(std::byte* data, uint64_t begin, uint64_t end) {
    for (uint64_t i = begin; i < end; ++i) {
        U v;
        std::memcpy(&v, data + i * sizeof(U), sizeof(U));
        v = byteswap(v);
        std::memcpy(data + i * sizeof(U), &v, sizeof(U));
    }
}

void byteswap_in_place(std::span<std::byte> data, size_t element_size) {
    uint64_t count = data.size() / element_size;
    parallel_for(count, kMinBytesPerThread / element_size, [&](uint64_t begin, uint64_t end) {
        switch (element_size) {
            case 2: return byteswap_range<uint16_t>(data.data(), begin, end);
            case 4: return byteswap_range<uint32_t>(data.data(), begin, end);
            case 8: return byteswap_range<uint64_t>(data.data(), begin, end);
            default: return;  // 1-byte types have no byte order
        }
    });
}

// Copies Fortran-order `src` into C-order `dst`. Walks dst sequentially, one innermost (last-axis) row at a time,
// reading src with Fortran strides; rows are split across threads.
template <class U>
void fortran_to_c(const std::byte* src, std::byte* dst, const Shape& shape) {
    const size_t rank = shape.size();
    std::vector<uint64_t> f_stride(rank);  // in elements
    uint64_t s = 1;
    for (size_t k = 0; k < rank; ++k) {
        f_stride[k] = s;
        s *= static_cast<uint64_t>(shape[k]);
    }
    const uint64_t row = static_cast<uint64_t>(shape[rank - 1]);
    const uint64_t row_stride = f_stride[rank - 1];
    const uint64_t rows = s / row;
    parallel_for(rows, std::max<uint64_t>(1, kMinBytesPerThread / sizeof(U) / row), [&](uint64_t begin, uint64_t end) {
        // Coordinates of row `begin` over the outer axes, and its source offset.
        std::vector<uint64_t> coord(rank - 1);
        uint64_t offset = 0;
        for (size_t k = rank - 1, r = begin; k-- > 0;) {
            coord[k] = r % static_cast<uint64_t>(shape[k]);
            r /= static_cast<uint64_t>(shape[k]);
            offset += coord[k] * f_stride[k];
        }
        for (uint64_t r = begin; r < end; ++r) {
            std::byte* out = dst + r * row * sizeof(U);
            for (uint64_t i = 0; i < row; ++i)
                std::memcpy(out + i * sizeof(U), src + (offset + i * row_stride) * sizeof(U), sizeof(U));
            for (size_t k = rank - 1; k-- > 0;) {  // odometer step over the outer axes
                offset += f_stride[k];
                if (++coord[k] < static_cast<uint64_t>(shape[k])) break;
                offset -= coord[k] * f_stride[k];
                coord[k] = 0;
            }
        }
    });
}

void fortran_to_c(const std::byte* src, std::byte* dst, const Shape& shape, size_t element_size) {
    switch (element_size) {
        case 1: return fortran_to_c<uint8_t>(src, dst, shape);
        case 2: return fortran_to_c<uint16_t>(src, dst, shape);
        case 4: return fortran_to_c<uint32_t>(src, dst, shape);
        case 8: return fortran_to_c<uint64_t>(src, dst, shape);
        default: throw RuntimeFailure(fmt::format("no element type of {} bytes", element_size));
    }
}

// Fortran and C order lay out the same bytes when at most one axis is longer than 1 (and when there are none).
bool needs_transpose(const NpyHeader& header) {
    const Shape& shape = header.info.shape;
    if (!header.fortran_order || header.info.elements() == 0) return false;
    return std::count_if(shape.begin(), shape.end(), [](int64_t d) { return d > 1; }) > 1;
}

std::string changed_message(const path& file) {
    return fmt::format("dmlgrad: error: {} changed while being read", printable_path(file));
}

// A run-time failure (exit 1), not the user's mistake: the file was complete when its size was taken.
[[noreturn]] void throw_changed(const path& file) {
    throw RuntimeFailure(fmt::format("{} changed while being read", printable_path(file)));
}

// Large payloads are read by several threads at once: copying out of the page cache is bound by one core's
// memory bandwidth, not by the file system.
void read_payload(const InputFile& file, const NpyHeader& header, std::span<std::byte> out) {
    constexpr uint64_t kPiece = uint64_t(16) << 20;
    const uint64_t pieces = (out.size() + kPiece - 1) / kPiece;
    std::atomic<uint64_t> got{0};
    parallel_for(pieces, 2, [&](uint64_t begin, uint64_t end) {
        uint64_t first = begin * kPiece, last = std::min<uint64_t>(end * kPiece, out.size());
        got += file.read_at(header.payload_offset + first, out.subspan(first, last - first));
    });
    if (got != out.size()) throw_changed(file.name());  // the file shrank since it was measured
}

// Below this, reading is as fast as mapping and keeps the memory writable.
constexpr uint64_t kMapThreshold = uint64_t(1) << 20;

bool can_map(const NpyHeader& header) {
    return !header.big_endian && !needs_transpose(header) && header.info.bytes() >= kMapThreshold &&
           header.payload_offset % dtype_size(header.info.dtype) == 0;
}

// The payload straight from the page cache; MAP_POPULATE maps every page now rather than on first touch.
// nullopt when the mapping fails (the caller reads instead).
std::optional<Tensor> map_payload(const InputFile& file, const NpyHeader& header) {
    const uint64_t map_bytes = header.payload_offset + header.info.bytes();
    void* base = ::mmap(nullptr, map_bytes, PROT_READ, MAP_PRIVATE | MAP_POPULATE, file.fd(), 0);
    if (base == MAP_FAILED) return std::nullopt;
    // A file that shrinks while mapped raises SIGBUS on the lost pages: core/fatal_signals turns it into one line.
    watch_mapping(base, map_bytes, changed_message(file.name()));
    auto* data = static_cast<std::byte*>(base) + header.payload_offset;
    return Tensor(header.info, HostBuffer::adopt_mapping(base, map_bytes, data, header.info.bytes()));
}

std::string shape_tuple(const Shape& shape) {
    if (shape.size() == 1) return fmt::format("({},)", shape[0]);
    return fmt::format("({})", fmt::join(shape, ", "));
}

}  // namespace

NpyHeader read_npy_header(const path& file) { return parse_header(InputFile(file)); }

Tensor load_npy(const path& file, PayloadAccess access) {
    InputFile input(file);
    NpyHeader header = parse_header(input);
    if (access == PayloadAccess::map_read_only && can_map(header))
        if (auto mapped = map_payload(input, header)) return std::move(*mapped);
    Tensor tensor(header.info);
    const size_t element_size = dtype_size(header.info.dtype);

    if (!needs_transpose(header)) {
        // The common case: the payload goes straight into the tensor's buffer, then is swapped in place if needed.
        read_payload(input, header, tensor.span());
        if (header.big_endian) byteswap_in_place(tensor.span(), element_size);
        return tensor;
    }
    // A transpose cannot be done in place, so Fortran order costs one staging buffer.
    HostBuffer staging(tensor.bytes());
    std::span<std::byte> raw(staging.data(), tensor.bytes());
    read_payload(input, header, raw);
    if (header.big_endian) byteswap_in_place(raw, element_size);
    fortran_to_c(raw.data(), tensor.span().data(), header.info.shape, element_size);
    return tensor;
}

std::string npy_header_bytes(const TensorInfo& info) {
    // Integers only, formatted by fmt's default "{}", which never uses the locale.
    std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                   dtype_npy_descr(info.dtype), shape_tuple(info.shape));
    constexpr size_t kAlign = 64;
    // Version 1.0 stores the length in 16 bits; a header beyond that (thousands of axes) needs 2.0, as numpy does.
    size_t prefix = 10;
    size_t padded = (prefix + dict.size() + 1 + kAlign - 1) / kAlign * kAlign - prefix;  // +1 for '\n'
    if (padded > 0xFFFF) {
        prefix = 12;
        padded = (prefix + dict.size() + 1 + kAlign - 1) / kAlign * kAlign - prefix;
    }
    std::string out(kMagic);
    out += static_cast<char>(prefix == 10 ? 1 : 2);
    out += '\0';
    for (size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((padded >> (8 * i)) & 0xFF);
    out += dict;
    out.append(padded - dict.size() - 1, ' ');
    out += '\n';
    return out;
}

NpyOutput::NpyOutput(const path& file, TensorInfo info) {
    if (is_standard_stream(file)) {
        require_standard_output_not_terminal();
        tensor_ = Tensor(std::move(info));
        return;
    }
    file_.emplace(file);
    if (info.bytes() >= kMapThreshold) {
        const std::string header = npy_header_bytes(info);
        std::span<std::byte> mapping = file_->map(header.size() + info.bytes());
        if (!mapping.empty()) {
            std::memcpy(mapping.data(), header.data(), header.size());
            const uint64_t bytes = info.bytes();
            tensor_ = Tensor(std::move(info), HostBuffer::borrow(mapping.data() + header.size(), bytes));
            mapped_ = true;
            return;
        }
    }
    tensor_ = Tensor(std::move(info));
}

void NpyOutput::commit() {
    if (mapped_) return file_->commit();
    const std::string header = npy_header_bytes(tensor_.info);
    if (!file_) {  // standard output
        write_standard_output(std::as_bytes(std::span(header)));
        return write_standard_output(tensor_.span());
    }
    file_->write(std::as_bytes(std::span(header)));
    file_->write(tensor_.span());
    file_->commit();
}

void save_npy(const path& file, const Tensor& tensor) {
    const std::string header = npy_header_bytes(tensor.info);
    AtomicFile out(file);
    out.write(std::as_bytes(std::span(header)));
    out.write(tensor.span());
    out.commit();
}

}  // namespace dmlgrad
