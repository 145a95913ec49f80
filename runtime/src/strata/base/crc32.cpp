#include "strata/base/crc32.h"

#include <array>

namespace strata {
namespace {

// Slicing-by-4: four 256-entry tables let the loop fold four bytes per step
// (the bulk of a module's rodata is executables of a few KB to MBs).
// Table k holds the CRC of a byte followed by k zero bytes.
using Crc32Tables = std::array<std::array<uint32_t, 256>, 4>;

constexpr Crc32Tables MakeTables() {
  constexpr uint32_t kPolynomial = 0xEDB88320u; // Reflected 0x04C11DB7.
  Crc32Tables tables{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc >> 1) ^ ((crc & 1u) ? kPolynomial : 0u);
    tables[0][byte] = crc;
  }
  for (uint32_t byte = 0; byte < 256; ++byte) {
    for (size_t k = 1; k < tables.size(); ++k) {
      uint32_t previous = tables[k - 1][byte];
      tables[k][byte] = (previous >> 8) ^ tables[0][previous & 0xFFu];
    }
  }
  return tables;
}

constexpr Crc32Tables kTables = MakeTables();

} // namespace

uint32_t Crc32Update(uint32_t crc, std::span<const uint8_t> bytes) {
  const uint8_t *data = bytes.data();
  size_t size = bytes.size();
  crc = ~crc;
  // Bytes are combined explicitly (not loaded as a u32) so the result does
  // not depend on alignment or host byte order.
  while (size >= 4) {
    crc ^= uint32_t(data[0]) | uint32_t(data[1]) << 8 |
           uint32_t(data[2]) << 16 | uint32_t(data[3]) << 24;
    crc = kTables[3][crc & 0xFFu] ^ kTables[2][(crc >> 8) & 0xFFu] ^
          kTables[1][(crc >> 16) & 0xFFu] ^ kTables[0][crc >> 24];
    data += 4;
    size -= 4;
  }
  for (; size > 0; --size, ++data)
    crc = (crc >> 8) ^ kTables[0][(crc ^ *data) & 0xFFu];
  return ~crc;
}

uint32_t Crc32(std::span<const uint8_t> bytes) { return Crc32Update(0, bytes); }

} // namespace strata
