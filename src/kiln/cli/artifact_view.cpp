// `kiln inspect model.kiln` (the manifest in human form) and `kiln diff a.kiln b.kiln` (what
// differs between two artifacts: versions, toolchain, options, passes, partition, precision, target, assets,
// weights).
#include <iostream>
#include <map>
#include <set>

#include "kiln/artifact/container.h"
#include "kiln/artifact/signing.h"
#include "kiln/cli/cli_common.h"
#include "kiln/cli/commands.h"
#include "kiln/io/file.h"
#include "kiln/report/report.h"

namespace kiln::cli {
namespace {

struct Opened {
  std::string bytes;
  artifact::Decoded decoded;
};

Result<Opened> open_artifact(const std::string& path) {
  Opened o;
  KILN_ASSIGN_OR_RETURN(o.bytes, io::read_file(path));
  Result<artifact::Decoded> decoded = artifact::decode(o.bytes);
  if (!decoded.is_ok()) return decoded.status().with_context(path);
  o.decoded = std::move(decoded).value();
  return o;
}

std::string text_of(const nlohmann::json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

// Providers and their node counts in the partition map.
std::map<std::string, int> nodes_per_provider(const nlohmann::json& manifest) {
  std::map<std::string, int> counts;
  for (const nlohmann::json& n : manifest["partition"].value("nodes", nlohmann::json::array())) ++counts[n.value("provider", "?")];
  return counts;
}

// SHA-256 of each weight's bytes, by name.
std::map<std::string, std::string> weight_hashes(const artifact::Decoded& d) {
  std::string_view weights;
  for (const artifact::SectionView& s : d.sections)
    if (s.name == "weights") weights = s.bytes;
  std::map<std::string, std::string> hashes;
  for (const nlohmann::json& w : d.manifest.value("weights", nlohmann::json::array())) {
    const size_t offset = w.value("offset", size_t{0}), bytes = w.value("bytes", size_t{0});
    Result<std::string> hash = offset + bytes <= weights.size() ? io::sha256_hex(weights.substr(offset, bytes))
                                                                : Result<std::string>(std::string("?"));
    hashes[w.value("name", "")] = hash.is_ok() ? hash.value() : "?";
  }
  return hashes;
}

// "key: a -> b" for each top-level field of two JSON objects that differs.
// Asset name -> SHA-256, as the manifest lists them.
nlohmann::json asset_hashes(const nlohmann::json& manifest) {
  nlohmann::json hashes = nlohmann::json::object();
  for (const nlohmann::json& a : manifest.value("assets", nlohmann::json::array()))
    if (a.is_object()) hashes[a.value("name", "")] = a.value("sha256", "");
  return hashes;
}

void diff_fields(const std::string& section, const nlohmann::json& a, const nlohmann::json& b, std::vector<std::string>& out) {
  std::set<std::string> keys;
  for (const auto& [k, v] : a.items()) keys.insert(k);
  for (const auto& [k, v] : b.items()) keys.insert(k);
  for (const std::string& k : keys) {
    const std::string va = a.contains(k) ? text_of(a[k]) : "(absent)", vb = b.contains(k) ? text_of(b[k]) : "(absent)";
    if (va != vb) out.push_back(section + k + ": " + va + " -> " + vb);
  }
}

int diff_artifacts(const std::string& path_a, const std::string& path_b) {
  auto a = open_artifact(path_a);
  if (!a.is_ok()) return report_error(a.status());
  auto b = open_artifact(path_b);
  if (!b.is_ok()) return report_error(b.status());
  const nlohmann::json &ma = a.value().decoded.manifest, &mb = b.value().decoded.manifest;
  std::vector<std::string> differences;
  for (const char* key : {"format_version", "kiln_version", "source_sha256"})
    if (ma.value(key, nlohmann::json()) != mb.value(key, nlohmann::json()))
      differences.push_back(std::string(key) + ": " + text_of(ma.value(key, nlohmann::json())) + " -> " +
                            text_of(mb.value(key, nlohmann::json())));
  diff_fields("toolchain.", ma.value("toolchain", nlohmann::json::object()), mb.value("toolchain", nlohmann::json::object()), differences);
  diff_fields("options.", ma.value("options", nlohmann::json::object()), mb.value("options", nlohmann::json::object()), differences);
  if (ma.value("passes", nlohmann::json()) != mb.value("passes", nlohmann::json()))
    differences.push_back("passes: the pass logs differ (" + std::to_string(ma.value("nodes_after_passes", 0)) + " -> " +
                          std::to_string(mb.value("nodes_after_passes", 0)) + " nodes after passes)");
  const auto pa = nodes_per_provider(ma), pb = nodes_per_provider(mb);
  if (pa != pb || ma["partition"].value("nodes", nlohmann::json()) != mb["partition"].value("nodes", nlohmann::json()))
    differences.push_back("partition: " + nlohmann::json(pa).dump() + " -> " + nlohmann::json(pb).dump() + " nodes per provider");
  const nlohmann::json ra = ma.value("precision", nlohmann::json::object()), rb = mb.value("precision", nlohmann::json::object());
  if (ra.value("products", nlohmann::json()) != rb.value("products", nlohmann::json()))
    differences.push_back("precision: " + report::precision_line(report::precision_from_json(ra)) + " -> " +
                          report::precision_line(report::precision_from_json(rb)));
  diff_fields("target.", ma.value("target", nlohmann::json::object()), mb.value("target", nlohmann::json::object()), differences);
  diff_fields("asset ", asset_hashes(ma), asset_hashes(mb), differences);
  const auto wa = weight_hashes(a.value().decoded), wb = weight_hashes(b.value().decoded);
  for (const auto& [name, hash] : wa)
    if (!wb.count(name)) differences.push_back("weight " + name + ": only in " + path_a);
    else if (wb.at(name) != hash) differences.push_back("weight " + name + ": contents differ");
  for (const auto& [name, hash] : wb)
    if (!wa.count(name)) differences.push_back("weight " + name + ": only in " + path_b);
  const bool signed_a = !a.value().decoded.signature_block.empty(), signed_b = !b.value().decoded.signature_block.empty();
  if (a.value().decoded.signature_block != b.value().decoded.signature_block)
    differences.push_back(std::string("signature: ") + (signed_a ? "signed" : "unsigned") + " -> " + (signed_b ? "signed" : "unsigned") +
                          (signed_a && signed_b ? " (another signature)" : ""));
  if (differences.empty()) {
    std::cout << "same: manifest, weights and signature agree\n";
    return 0;
  }
  for (const std::string& d : differences) std::cout << d << "\n";
  return 1;
}

}  // namespace

int inspect_artifact(const std::string& path) {
  auto opened = open_artifact(path);
  if (!opened.is_ok()) return report_error(opened.status());
  const artifact::Decoded& d = opened.value().decoded;
  const nlohmann::json& m = d.manifest;
  std::cout << "artifact   " << path << " (" << opened.value().bytes.size() << " bytes, format version " << m["format_version"]
            << ", every hash checked)\n"
            << "built by   kiln " << text_of(m.value("kiln_version", nlohmann::json(""))) << ", " << text_of(m["toolchain"]["compiler"])
            << ", oneDNN " << text_of(m["toolchain"]["onednn"]) << "\n"
            << "source     " << text_of(m["model"].value("name", nlohmann::json(""))) << " sha256 " << text_of(m["source_sha256"]) << "\n"
            << "options   ";
  for (const auto& [k, v] : m["options"].items()) std::cout << " " << k << "=" << text_of(v);
  std::cout << "\npasses     " << m["passes"].size() << " pass runs, " << m.value("nodes_after_passes", 0) << " nodes after passes\n"
            << "partition ";
  for (const auto& [provider, count] : nodes_per_provider(m)) std::cout << " " << provider << " x" << count;
  std::cout << "; fallback " << text_of(m["partition"].value("fallback_nodes", nlohmann::json(0))) << " nodes\n"
            << "memory     arena " << text_of(m["memory"].value("arena_bytes", nlohmann::json(0))) << " bytes for input shapes "
            << text_of(m["memory"].value("input_shapes", nlohmann::json::array())) << "\n"
            << "weights    " << m["weights"].size() << " tensors\n"
            << "precision  " << report::precision_line(report::precision_from_json(m.value("precision", nlohmann::json::object())))
            << "\n";
  const nlohmann::json target = m.value("target", nlohmann::json::object());
  std::cout << "target     needs CPU features " << text_of(target.value("required_features", nlohmann::json::array()))
            << " (built for " << (target.value("isa", "").empty() ? "the compiling machine's best" : "--isa " + target.value("isa", ""))
            << "); implementations " << text_of(target.value("implementations", nlohmann::json::object())) << "\n";
  for (const nlohmann::json& a : m.value("assets", nlohmann::json::array()))
    std::cout << "asset      " << text_of(a["name"]) << ": " << text_of(a["bytes"]) << " bytes, sha256 " << text_of(a["sha256"]) << "\n";
  for (const nlohmann::json& s : m["sections"])
    std::cout << "section    " << text_of(s["name"]) << ": " << s["size"] << " bytes at " << s["offset"] << ", " << s["sha256"].size()
              << " SHA-256 chunk hash(es)" << (s["sha256"].empty() ? "" : ", first " + text_of(s["sha256"][0])) << "\n";
  auto signature = artifact::check_signature(d, std::nullopt, false);
  std::cout << "signature  " << (signature.is_ok() ? signature.value() : "INVALID: " + signature.status().message()) << "\n";
  return signature.is_ok() ? 0 : report_error(signature.status());
}

void add_diff_command(CLI::App& app, std::function<void(int)> set_exit) {
  auto paths = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* cmd = app.add_subcommand("diff", "Show what differs between two .kiln artifacts (exit 1 when they differ)");
  cmd->add_option("a", paths->first, "First .kiln file")->required();
  cmd->add_option("b", paths->second, "Second .kiln file")->required();
  cmd->callback([paths, set_exit] { set_exit(diff_artifacts(paths->first, paths->second)); });
}

}  // namespace kiln::cli
