// kiln_conformance: runs ONNX's backend test data through kiln::Session and prints, per suite,
// "<suite>: N passed, N failed, N unsupported". Exits non-zero when a case fails that
// known_failures.txt does not list.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "case_runner.h"

namespace fs = std::filesystem;
using namespace kiln::conformance;

namespace {

struct Options {
  std::string data_root = "/usr/share/libonnx-testdata/data";
  std::vector<std::string> suites;
  std::string filter;  // substring a case name must contain
  std::string csv;
  std::string known_failures = KILN_CONFORMANCE_DIR "/known_failures.txt";
  int case_timeout_s = 300;
  bool verbose = false;
};

constexpr const char* kUsage =
    "usage: kiln_conformance [--suite NAME]... [--filter TEXT] [--csv FILE] [--data-root DIR]\n"
    "                        [--known-failures FILE] [--case-timeout SECONDS] [--verbose]\n"
    "suites: node, pytorch-converted, pytorch-operator, simple (default: all)\n";

bool parse_args(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--verbose") o.verbose = true;
    else if (arg == "--suite" && has_value) o.suites.push_back(argv[++i]);
    else if (arg == "--filter" && has_value) o.filter = argv[++i];
    else if (arg == "--csv" && has_value) o.csv = argv[++i];
    else if (arg == "--data-root" && has_value) o.data_root = argv[++i];
    else if (arg == "--known-failures" && has_value) o.known_failures = argv[++i];
    else if (arg == "--case-timeout" && has_value) o.case_timeout_s = std::max(1, std::atoi(argv[++i]));
    else return false;
  }
  if (o.suites.empty()) o.suites = {"node", "pytorch-converted", "pytorch-operator", "simple"};
  return true;
}

// "suite/case" -> reason, from lines "suite/case  reason"; '#' starts a comment line.
std::map<std::string, std::string> read_known_failures(const std::string& path) {
  std::map<std::string, std::string> known;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find_first_of(" \t");
    known[line.substr(0, space)] = space == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", space));
  }
  return known;
}

std::string csv_field(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c == '\n' ? ' ' : c;
  }
  return quoted + "\"";
}

struct Counts {
  int passed = 0, failed = 0, unsupported = 0;
  void add(CaseStatus s) { (s == CaseStatus::kPass ? passed : s == CaseStatus::kFail ? failed : unsupported)++; }
};

void print_counts(const std::string& label, const Counts& c) {
  std::printf("%s: %d passed, %d failed, %d unsupported\n", label.c_str(), c.passed, c.failed, c.unsupported);
}

std::vector<std::string> case_names(const fs::path& suite_dir, const std::string& filter) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(suite_dir)) {
    const std::string name = entry.path().filename().string();
    if (fs::exists(entry.path() / "model.onnx") && name.find(filter) != std::string::npos) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_args(argc, argv, o)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (!fs::is_directory(o.data_root)) {
    std::printf("no ONNX test data at %s (install libonnx-testdata); skipping\n", o.data_root.c_str());
    return 77;
  }
  const auto known = read_known_failures(o.known_failures);
  std::ofstream csv;
  if (!o.csv.empty()) {
    if (fs::path(o.csv).has_parent_path()) fs::create_directories(fs::path(o.csv).parent_path());
    csv.open(o.csv);
    csv << "suite,case,status,reason\n";
  }
  Counts total;
  std::vector<std::string> unexpected, fixed;
  for (const std::string& suite : o.suites) {
    const fs::path suite_dir = fs::path(o.data_root) / suite;
    if (!fs::is_directory(suite_dir)) {
      std::fprintf(stderr, "no suite '%s' under %s\n", suite.c_str(), o.data_root.c_str());
      return 2;
    }
    Counts counts;
    for (const std::string& name : case_names(suite_dir, o.filter)) {
      CaseResult r = run_case_isolated((suite_dir / name).string(), o.case_timeout_s);
      counts.add(r.status);
      total.add(r.status);
      const std::string id = suite + "/" + name;
      const bool listed = known.count(id) != 0;
      if (r.status == CaseStatus::kFail && !listed) unexpected.push_back(id + ": " + r.reason);
      if (r.status != CaseStatus::kFail && listed) fixed.push_back(id);
      if (csv.is_open()) csv << suite << "," << name << "," << case_status_name(r.status) << "," << csv_field(r.reason) << "\n";
      if (o.verbose) std::printf("%-12s %s %s\n", case_status_name(r.status), id.c_str(), r.reason.c_str());
    }
    print_counts(suite, counts);
    std::fflush(stdout);
  }
  print_counts("total", total);
  for (const auto& id : fixed) std::printf("listed in known_failures.txt but did not fail: %s\n", id.c_str());
  for (const auto& line : unexpected) std::printf("FAILED %s\n", line.c_str());
  return unexpected.empty() ? 0 : 1;
}
