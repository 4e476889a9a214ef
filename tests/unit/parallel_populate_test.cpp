// Page faults of large mappings taken on several threads: the mapping reads the file's bytes after a read
// populate, a write populate keeps the reserved zeros and lets the writes reach the file, and a mapping past the
// end of its file is reported refused.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "core/parallel_populate.h"
#include "support/tensor_testing.h"

namespace dmlgrad {
namespace {

class PopulateFile : public ::testing::Test {
protected:
    void SetUp() override {
        path_ =
            std::filesystem::temp_directory_path() / ("dmlgrad_populate_" + std::to_string(::getpid()) + "_" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ASSERT_GE(fd_, 0);
    }
    void TearDown() override {
        ::close(fd_);
        std::filesystem::remove(path_);
    }
    std::vector<std::byte> random_bytes(size_t size) {
        std::mt19937_64 rng(testing::test_seed() + size);
        std::vector<std::byte> bytes(size);
        for (size_t i = 0; i < size; i += 8) {
            const uint64_t word = rng();
            std::memcpy(bytes.data() + i, &word, std::min<size_t>(8, size - i));
        }
        return bytes;
    }
    std::byte* map(size_t size, int protection, int flags) {
        void* p = ::mmap(nullptr, size, protection, flags, fd_, 0);
        EXPECT_NE(p, MAP_FAILED);
        return static_cast<std::byte*>(p);
    }
    std::filesystem::path path_;
    int fd_ = -1;
};

// Sizes around the piece boundary and not divisible by any thread count, and a one-byte file.
const size_t kSizes[] = {1, 4097, size_t(kPopulatePiece) - 1, size_t(kPopulatePiece) * 2 + 12345,
                         size_t(kPopulatePiece) * 3 + 3};

TEST_F(PopulateFile, ReadPopulateShowsTheFilesBytes) {
    for (size_t size : kSizes) {
        const std::vector<std::byte> expected = random_bytes(size);
        ASSERT_EQ(::ftruncate(fd_, 0), 0);
        ASSERT_EQ(::pwrite(fd_, expected.data(), size, 0), ssize_t(size));
        std::byte* mapped = map(size, PROT_READ, MAP_PRIVATE);
        EXPECT_TRUE(parallel_populate({mapped, size}, MADV_POPULATE_READ)) << size;
        EXPECT_EQ(std::memcmp(mapped, expected.data(), size), 0) << size;
        ::munmap(mapped, size);
    }
}

TEST_F(PopulateFile, WritePopulateKeepsZerosAndWritesReachTheFile) {
    for (size_t size : kSizes) {
        ASSERT_EQ(::ftruncate(fd_, 0), 0);
        ASSERT_EQ(::fallocate(fd_, 0, 0, off_t(size)), 0);
        std::byte* mapped = map(size, PROT_READ | PROT_WRITE, MAP_SHARED);
        EXPECT_TRUE(parallel_populate({mapped, size}, MADV_POPULATE_WRITE)) << size;
        for (size_t i = 0; i < size; i += 4093) ASSERT_EQ(mapped[i], std::byte{0}) << size << " at " << i;
        const std::vector<std::byte> written = random_bytes(size);
        std::memcpy(mapped, written.data(), size);
        ::munmap(mapped, size);
        std::vector<std::byte> back(size);
        ASSERT_EQ(::pread(fd_, back.data(), size, 0), ssize_t(size));
        EXPECT_EQ(back, written) << size;
    }
}

// A file shorter than its mapping (it shrank): the pieces past its end cannot be populated, and the call says so
// rather than raising SIGBUS.
TEST_F(PopulateFile, MappingPastTheEndIsRefused) {
    const size_t size = size_t(kPopulatePiece) * 3;
    ASSERT_EQ(::ftruncate(fd_, off_t(kPopulatePiece)), 0);
    std::byte* mapped = map(size, PROT_READ, MAP_PRIVATE);
    EXPECT_FALSE(parallel_populate({mapped, size}, MADV_POPULATE_READ));
    ::munmap(mapped, size);
}

}  // namespace
}  // namespace dmlgrad
