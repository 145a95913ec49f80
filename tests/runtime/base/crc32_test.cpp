#include "strata/base/crc32.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string_view>
#include <vector>

namespace strata {
namespace {

std::span<const uint8_t> Bytes(std::string_view text) {
  return {reinterpret_cast<const uint8_t *>(text.data()), text.size()};
}

// Bit-at-a-time definition, to check the table-driven code against.
uint32_t ReferenceCrc32(std::span<const uint8_t> bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t byte : bytes) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc >> 1) ^ ((crc & 1u) ? 0xEDB88320u : 0u);
  }
  return ~crc;
}

TEST(Crc32Test, KnownVectors) {
  // Values as zlib.crc32 computes them.
  EXPECT_EQ(Crc32({}), 0u);
  EXPECT_EQ(Crc32(Bytes("a")), 0xE8B7BE43u);
  EXPECT_EQ(Crc32(Bytes("123456789")), 0xCBF43926u);
  EXPECT_EQ(Crc32(Bytes("The quick brown fox jumps over the lazy dog")),
            0x414FA339u);
  std::vector<uint8_t> ramp;
  for (int i = 0; i < 4 * 256; ++i)
    ramp.push_back(static_cast<uint8_t>(i));
  EXPECT_EQ(Crc32(ramp), 0xB70B4C26u);
}

TEST(Crc32Test, MatchesBitwiseDefinitionAtEveryLengthAndAlignment) {
  std::vector<uint8_t> data(300);
  uint32_t state = 12345;
  for (uint8_t &byte : data) {
    state = state * 1103515245u + 12345u;
    byte = static_cast<uint8_t>(state >> 16);
  }
  std::span<const uint8_t> all(data);
  for (size_t offset = 0; offset < 4; ++offset) {
    for (size_t length = 0; length + offset <= 80; ++length) {
      std::span<const uint8_t> part = all.subspan(offset, length);
      ASSERT_EQ(Crc32(part), ReferenceCrc32(part))
          << "offset " << offset << " length " << length;
    }
  }
  EXPECT_EQ(Crc32(all), ReferenceCrc32(all));
}

TEST(Crc32Test, UpdateContinuesACrc) {
  std::string_view text = "123456789";
  for (size_t split = 0; split <= text.size(); ++split) {
    uint32_t crc = Crc32(Bytes(text.substr(0, split)));
    EXPECT_EQ(Crc32Update(crc, Bytes(text.substr(split))), 0xCBF43926u)
        << "split at " << split;
  }
}

} // namespace
} // namespace strata
