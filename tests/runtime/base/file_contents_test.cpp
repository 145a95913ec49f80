#include "strata/base/file_contents.h"

#include <cstdio>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace strata {
namespace {

std::string TempPath(const char *name) {
  const char *directory = std::getenv("TMPDIR");
  return std::string(directory ? directory : "/tmp") + "/strata_" +
         std::to_string(::getpid()) + "_" + name;
}

std::string AsString(const OwnedBytes &bytes) {
  return std::string(bytes.span().begin(), bytes.span().end());
}

TEST(FileContentsTest, WriteThenMapAndRead) {
  std::string path = TempPath("contents.bin");
  std::string text(100000, 'x');
  text[12345] = 'y';
  ASSERT_TRUE(
      WriteFileContents(
          path, std::span(reinterpret_cast<const uint8_t *>(text.data()),
                          text.size()))
          .ok());
  Result<OwnedBytes> mapped = MapFileContents(path);
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  EXPECT_EQ(AsString(mapped.value()), text);
  Result<OwnedBytes> read = ReadFileContents(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(AsString(read.value()), text);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(read.value().data()) % 64, 0u);
  std::remove(path.c_str());
}

TEST(FileContentsTest, EmptyFile) {
  std::string path = TempPath("empty.bin");
  ASSERT_TRUE(WriteFileContents(path, {}).ok());
  Result<OwnedBytes> mapped = MapFileContents(path);
  ASSERT_TRUE(mapped.ok());
  EXPECT_TRUE(mapped.value().empty());
  std::remove(path.c_str());
}

TEST(FileContentsTest, Errors) {
  Result<OwnedBytes> missing = MapFileContents("/nonexistent/strata/file");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/strata/file"),
            std::string_view::npos);
  EXPECT_EQ(ReadFileContents("/nonexistent").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(MapFileContents("/tmp").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(WriteFileContents("/nonexistent/dir/file", {}).ok());
}

TEST(FileContentsTest, ReadsPipes) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const char kText[] = "from a pipe";
  ASSERT_EQ(::write(fds[1], kText, sizeof(kText) - 1),
            static_cast<ssize_t>(sizeof(kText) - 1));
  ::close(fds[1]);
  Result<OwnedBytes> bytes = ReadFdContents(fds[0], "pipe");
  ::close(fds[0]);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(AsString(bytes.value()), "from a pipe");
}

} // namespace
} // namespace strata
