// The .kiln container: a fixed 128-byte header, then named sections each starting on a 64-byte
// boundary, then the JSON manifest, which lists every section with its offset, size and SHA-256,
// then optionally a signature block (signing.h). The header holds the manifest's place and SHA-256,
// so every byte of the file is covered: header fields are checked one by one, padding must be zero,
// and the file ends where the manifest (or the signature block) does. Sections are hashed in
// 4 MiB chunks, so that both cores check a large weights section at once.
// Layout and versioning: docs/ARTIFACT.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/status.h"

namespace kiln::artifact {

// The version this build writes (3: plans may hold control-flow subgraphs), and the oldest it reads.
inline constexpr uint32_t kFormatVersion = 3;
inline constexpr uint32_t kOldestReadFormatVersion = 2;
inline constexpr size_t kHeaderBytes = 128;
inline constexpr size_t kSectionAlignment = 64;
inline constexpr size_t kHashChunkBytes = size_t{4} << 20;

// `n` rounded up to the section alignment.
inline size_t aligned(size_t n) { return (n + kSectionAlignment - 1) / kSectionAlignment * kSectionAlignment; }

// Whether `size` bytes from `offset` lie inside `bytes` and start on a kSectionAlignment address:
// what an entry of a section's index must satisfy to be viewed in place.
inline bool holds_aligned(std::string_view bytes, uint64_t offset, uint64_t size) {
  return offset <= bytes.size() && size <= bytes.size() - offset &&
         reinterpret_cast<uintptr_t>(bytes.data() + offset) % kSectionAlignment == 0;
}

struct Section {
  std::string name;   // "weights", "asset:labels.txt", ...
  std::string bytes;
};

// The file for `manifest` (a JSON object without "format_version" and "sections", which the
// encoder adds) and `sections` (unique names, kept in the given order). Same inputs, same bytes.
// InvalidArgument for a repeated section name.
Result<std::string> encode(nlohmann::json manifest, const std::vector<Section>& sections);

// A section of a decoded file: its bytes are a view into that file, valid while the file is.
struct SectionView {
  std::string name;
  std::string_view bytes;
};

struct Decoded {
  uint32_t format_version = 0;       // the file's (kOldestReadFormatVersion to kFormatVersion)
  nlohmann::json manifest;
  std::vector<SectionView> sections;  // in file order
  std::string manifest_sha256;    // hex, as the header records it
  std::string signature_block;    // empty when unsigned (layout: signing.h)
  size_t unsigned_size = 0;       // bytes before the signature block
};

inline constexpr size_t kSignatureBlockBytes = 96;

// `file` (a valid artifact, signed or not) with `block` as its signature block, replacing any.
Result<std::string> with_signature_block(std::string_view file, const std::string& block);

// The manifest and sections of a .kiln file (views into `file`), after checking the header, every
// hash, that sections lie in order inside the file and that padding is zero. IntegrityFailure
// naming the header field or section at fault; UnsupportedTarget for a format version this build
// does not read (newer, or the development format 1).
Result<Decoded> decode(std::string_view file);

}  // namespace kiln::artifact
