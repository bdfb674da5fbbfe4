// The .kiln container: encoding and fail-closed decoding.
#include "kiln/artifact/container.h"

#include <atomic>
#include <cstring>
#include <new>
#include <set>
#include <utility>

#include "kiln/io/file.h"

namespace kiln::artifact {
namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', '\r', '\n', '\x1a', '\n'};

// Header fields, little-endian, at these offsets.
constexpr size_t kVersionAt = 8, kHeaderSizeAt = 12, kManifestOffsetAt = 16, kManifestSizeAt = 24, kSignatureOffsetAt = 32,
                 kSignatureSizeAt = 40, kManifestHashAt = 48, kHashChars = 64, kReservedAt = kManifestHashAt + kHashChars;

void put_u64(std::string& out, size_t at, uint64_t v) {
  for (size_t i = 0; i < 8; ++i) out[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t get_u64(std::string_view in, size_t at, size_t bytes = 8) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  return v;
}

// Hex SHA-256; "" only when libsodium cannot start, which no valid hash equals (decode fails closed).
std::string hash_of(std::string_view bytes) {
  Result<std::string> hash = io::sha256_hex(bytes);
  return hash.is_ok() ? hash.value() : "";
}

Status corrupt(const std::string& what) { return integrity_failure("artifact " + what); }

size_t chunk_count(size_t bytes) { return (bytes + kHashChunkBytes - 1) / kHashChunkBytes; }
std::string_view chunk(std::string_view bytes, size_t i) { return bytes.substr(i * kHashChunkBytes, kHashChunkBytes); }

// The SHA-256 of each kHashChunkBytes piece of each of `sections`, hashed on all threads.
std::vector<std::vector<std::string>> chunk_hashes(const std::vector<std::string_view>& sections) {
  std::vector<std::pair<size_t, size_t>> jobs;  // (section, chunk)
  std::vector<std::vector<std::string>> hashes(sections.size());
  for (size_t s = 0; s < sections.size(); ++s) {
    hashes[s].resize(chunk_count(sections[s].size()));
    for (size_t c = 0; c < hashes[s].size(); ++c) jobs.emplace_back(s, c);
  }
  std::atomic<bool> out_of_memory{false};
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t j = 0; j < jobs.size(); ++j) {
    const auto [s, c] = jobs[j];
    try {
      hashes[s][c] = hash_of(chunk(sections[s], c));
    } catch (const std::bad_alloc&) {
      out_of_memory = true;
    }
  }
  // Carried out of the parallel region, which no exception may leave (it would end the process).
  if (out_of_memory) throw std::bad_alloc();
  return hashes;
}

bool all_zero(std::string_view bytes) {
  for (char c : bytes)
    if (c != 0) return false;
  return true;
}

// The header's fields, each checked; the manifest's range is inside the file and ends it.
struct Header {
  uint32_t format_version = 0;
  uint64_t manifest_offset = 0, manifest_size = 0, signature_offset = 0, signature_size = 0;
  std::string manifest_hash;
};

Result<Header> read_header(std::string_view file) {
  if (file.size() < kHeaderBytes)
    return corrupt("is truncated: " + std::to_string(file.size()) + " bytes, shorter than the " +
                   std::to_string(kHeaderBytes) + "-byte header");
  if (std::memcmp(file.data(), kMagic, sizeof kMagic) != 0) return corrupt("header: bad magic (not a .kiln file)");
  const uint64_t version = get_u64(file, kVersionAt, 4);
  if (version > kFormatVersion)
    return unsupported_target("artifact format version " + std::to_string(version) + " is newer than this build reads (" +
                              std::to_string(kFormatVersion) + ")");
  if (version == 1)
    return unsupported_target("artifact format version 1 (a development format) is no longer read; compile the model again");
  if (version < kOldestReadFormatVersion) return corrupt("header: format version " + std::to_string(version) + " is not valid");
  if (get_u64(file, kHeaderSizeAt, 4) != kHeaderBytes) return corrupt("header: header size field is wrong");
  Header h{static_cast<uint32_t>(version), get_u64(file, kManifestOffsetAt), get_u64(file, kManifestSizeAt), get_u64(file, kSignatureOffsetAt),
           get_u64(file, kSignatureSizeAt), std::string(file.substr(kManifestHashAt, kHashChars))};
  if (!all_zero(file.substr(kReservedAt, kHeaderBytes - kReservedAt))) return corrupt("header: reserved bytes are not zero");
  const bool signed_file = h.signature_offset != 0 || h.signature_size != 0;
  const uint64_t end = signed_file ? h.signature_offset : file.size();
  const bool manifest_fits = h.manifest_offset >= kHeaderBytes && h.manifest_offset % kSectionAlignment == 0 &&
                             h.manifest_offset <= end && h.manifest_size <= end - h.manifest_offset &&
                             (signed_file ? aligned(h.manifest_offset + h.manifest_size) == end
                                          : h.manifest_size == end - h.manifest_offset);
  if (!manifest_fits)
    return corrupt("header: the manifest's offset or size does not match the file (" + std::to_string(file.size()) +
                   " bytes): truncated or extended");
  if (signed_file && (h.signature_size != kSignatureBlockBytes || h.signature_offset != aligned(h.manifest_offset + h.manifest_size) ||
                      h.signature_offset > file.size() || file.size() - h.signature_offset != kSignatureBlockBytes))
    return corrupt("header: the signature block's offset or size does not match the file (" + std::to_string(file.size()) +
                   " bytes): truncated or extended");
  return h;
}

// The section `entry` describes, in place (its hashes are checked afterwards, all at once).
Result<SectionView> place_section(std::string_view file, const nlohmann::json& entry, size_t& cursor, uint64_t end) {
  if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string() || !entry.contains("offset") ||
      !entry["offset"].is_number_unsigned() || !entry.contains("size") || !entry["size"].is_number_unsigned() ||
      !entry.contains("sha256") || !entry["sha256"].is_array())
    return corrupt("manifest: a section entry lacks name, offset, size or sha256");
  const std::string name = entry["name"];
  const uint64_t offset = entry["offset"], size = entry["size"];
  if (offset != aligned(cursor) || offset > end || size > end - offset)
    return corrupt("section '" + name + "': offset or size out of place");
  if (entry["sha256"].size() != chunk_count(size)) return corrupt("section '" + name + "': wrong number of chunk hashes");
  if (!all_zero(file.substr(cursor, offset - cursor))) return corrupt("padding before section '" + name + "' is not zero");
  cursor = offset + size;
  return SectionView{name, file.substr(offset, size)};
}

// IntegrityFailure naming the first section (in file order) with a chunk whose hash differs.
Status check_section_hashes(const std::vector<SectionView>& sections, const nlohmann::json& entries) {
  std::vector<std::string_view> bytes;
  for (const SectionView& s : sections) bytes.push_back(s.bytes);
  const std::vector<std::vector<std::string>> actual = chunk_hashes(bytes);
  for (size_t s = 0; s < sections.size(); ++s)
    for (size_t c = 0; c < actual[s].size(); ++c)
      if (!entries[s]["sha256"][c].is_string() || actual[s][c] != entries[s]["sha256"][c].get<std::string>())
        return corrupt("section '" + sections[s].name + "': SHA-256 mismatch in chunk " + std::to_string(c) + " (bytes from " +
                       std::to_string(c * kHashChunkBytes) + ")");
  return Status::ok();
}

}  // namespace

Result<std::string> encode(nlohmann::json manifest, const std::vector<Section>& sections) {
  std::set<std::string> names;
  for (const Section& s : sections)
    if (!names.insert(s.name).second) return invalid_argument("artifact section '" + s.name + "' given twice");
  std::string file(kHeaderBytes, '\0');
  nlohmann::json entries = nlohmann::json::array();
  std::vector<std::string_view> bytes;
  for (const Section& s : sections) bytes.push_back(s.bytes);
  const std::vector<std::vector<std::string>> hashes = chunk_hashes(bytes);
  for (size_t i = 0; i < sections.size(); ++i) {
    file.resize(aligned(file.size()), '\0');
    entries.push_back({{"name", sections[i].name}, {"offset", file.size()}, {"size", sections[i].bytes.size()}, {"sha256", hashes[i]}});
    file += sections[i].bytes;
  }
  file.resize(aligned(file.size()), '\0');
  manifest["format_version"] = kFormatVersion;
  manifest["sections"] = entries;
  std::string text;
  try {
    text = manifest.dump();
  } catch (const nlohmann::json::type_error& e) {  // a string that is not UTF-8 (a section name, a model's)
    return invalid_argument(std::string("artifact manifest: ") + e.what());
  }
  std::memcpy(file.data(), kMagic, sizeof kMagic);
  put_u64(file, kVersionAt, kFormatVersion);  // the next four bytes (header size) are written below
  put_u64(file, kHeaderSizeAt, kHeaderBytes);
  put_u64(file, kManifestOffsetAt, file.size());
  put_u64(file, kManifestSizeAt, text.size());
  const std::string hash = hash_of(text);
  if (hash.size() != kHashChars) return internal_error("SHA-256 is unavailable (libsodium failed to start)");
  std::memcpy(file.data() + kManifestHashAt, hash.data(), kHashChars);
  return file + text;
}

Result<Decoded> decode(std::string_view file) {
  KILN_ASSIGN_OR_RETURN(const Header header, read_header(file));
  const std::string_view text = file.substr(header.manifest_offset, header.manifest_size);
  if (hash_of(text) != header.manifest_hash) return corrupt("manifest: SHA-256 mismatch with the header");
  Decoded d;
  d.format_version = header.format_version;
  d.manifest_sha256 = header.manifest_hash;
  d.unsigned_size = header.manifest_offset + header.manifest_size;
  if (header.signature_size != 0) {
    const size_t manifest_end = header.manifest_offset + header.manifest_size;
    if (!all_zero(file.substr(manifest_end, header.signature_offset - manifest_end)))
      return corrupt("padding before the signature block is not zero");
    d.signature_block = std::string(file.substr(header.signature_offset, header.signature_size));
  }
  d.manifest = nlohmann::json::parse(text, nullptr, false);
  if (!d.manifest.is_object() || d.manifest.value("format_version", 0u) != header.format_version ||
      !d.manifest.contains("sections") || !d.manifest["sections"].is_array())
    return corrupt("manifest: not a version " + std::to_string(header.format_version) + " manifest with a section list");
  size_t cursor = kHeaderBytes;
  std::set<std::string> names;
  for (const nlohmann::json& entry : d.manifest["sections"]) {
    KILN_ASSIGN_OR_RETURN(SectionView s, place_section(file, entry, cursor, header.manifest_offset));
    if (!names.insert(s.name).second) return corrupt("manifest: section '" + s.name + "' listed twice");
    d.sections.push_back(std::move(s));
  }
  if (!all_zero(file.substr(cursor, header.manifest_offset - cursor))) return corrupt("padding before the manifest is not zero");
  KILN_RETURN_IF_ERROR(check_section_hashes(d.sections, d.manifest["sections"]));
  return d;
}

Result<std::string> with_signature_block(std::string_view file, const std::string& block) {
  KILN_ASSIGN_OR_RETURN(const Decoded decoded, decode(file));
  if (block.size() != kSignatureBlockBytes) return invalid_argument("a signature block has " + std::to_string(kSignatureBlockBytes) + " bytes");
  std::string out(file.substr(0, decoded.unsigned_size));
  out.resize(aligned(out.size()), '\0');
  put_u64(out, kSignatureOffsetAt, out.size());
  put_u64(out, kSignatureSizeAt, block.size());
  return out + block;
}

}  // namespace kiln::artifact
