// CRC-32 as IEEE 802.3, zlib's crc32() and llvm::crc32 compute it (reflected
// polynomial 0xEDB88320, initial value and final XOR 0xFFFFFFFF). Module
// files record it per rodata segment so damage is caught at load.
#ifndef STRATA_BASE_CRC32_H_
#define STRATA_BASE_CRC32_H_

#include <cstdint>
#include <span>

namespace strata {

// CRC-32 of `bytes`; Crc32("123456789") == 0xCBF43926.
uint32_t Crc32(std::span<const uint8_t> bytes);

// Continues a CRC over more bytes: Crc32Update(Crc32(a), b) == Crc32(a + b).
// Start from 0 for an empty prefix.
uint32_t Crc32Update(uint32_t crc, std::span<const uint8_t> bytes);

} // namespace strata

#endif // STRATA_BASE_CRC32_H_
