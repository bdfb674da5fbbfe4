// Fuzz target: loading a .kiln artifact (Session::load: container, manifest, signature policy,
// weights, plan, partition and memory plan), its report, then warming it up on its recorded
// fixtures.
// A mutated file rarely survives the section hashes, so most inputs are resealed: their manifest
// and sections are encoded into a consistent container (and signed) before loading, so that the
// fuzzer reaches the manifest and plan readers.
// Input: a flags byte, then either the file itself or, resealed, u32-length records: the manifest
// JSON, then pairs of section name and section bytes.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "kiln/artifact/container.h"
#include "kiln/artifact/signing.h"
#include "kiln/session.h"

namespace {

enum Flags : uint8_t {
  kReseal = 1,
  kSign = 2,            // resealed files: signed with this process's key
  kPinKey = 4,          // the session demands this process's key
  kRequireSignature = 8,
  kWarmUp = 16,
};

const kiln::artifact::KeyPair& process_key() {
  static const kiln::artifact::KeyPair key = kiln::artifact::generate_key_pair().value();
  return key;
}

// The artifact file the resealed input describes; an error when it cannot be encoded.
kiln::Result<std::string> reseal(kiln::fuzz::FuzzInput& input, bool sign) {
  nlohmann::json manifest = nlohmann::json::parse(input.record(), nullptr, false);
  if (!manifest.is_object()) return kiln::invalid_argument("manifest: not a JSON object");
  manifest.erase("format_version");
  manifest.erase("sections");
  // Generated code is a shared object the session loads as trusted code (docs/SECURITY.md):
  // fuzzing it would fuzz the system's dynamic loader.
  manifest.erase("generated_code");
  std::vector<kiln::artifact::Section> sections;
  while (!input.empty()) {
    kiln::artifact::Section section;
    section.name = input.record();
    section.bytes = input.record();
    sections.push_back(std::move(section));
  }
  KILN_ASSIGN_OR_RETURN(std::string file, kiln::artifact::encode(std::move(manifest), sections));
  if (!sign) return file;
  return kiln::artifact::sign(file, process_key().secret_key);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::fuzz::FuzzInput input(data, size);
  const uint8_t flags = input.byte();
  kiln::Result<std::string> file = (flags & kReseal) ? reseal(input, flags & kSign) : input.rest();
  if (!file.is_ok()) return 0;
  kiln::SessionOptions options;
  options.threads = 1;
  options.max_loop_iterations = 1000;
  if (flags & kPinKey) options.artifact_public_key = process_key().public_key;
  options.require_signature = flags & kRequireSignature;
  auto session = kiln::Session::load(kiln::fuzz::write_scratch_file("model.kiln", file.value()), options);
  if (!session.is_ok()) return 0;
  (void)session.value()->report_json();  // names from the plan, which nothing checked for UTF-8
  if (!(flags & kWarmUp)) return 0;
  kiln::RunOptions run_options;
  run_options.timeout_ms = 1000;
  (void)session.value()->warm_up({}, 1, run_options);
  return 0;
}
