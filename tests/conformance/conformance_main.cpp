// kiln_conformance: runs ONNX's backend test data through kiln::Session and prints, per suite,
// "<suite>: N passed, N failed, N random". expected.txt is the ratchet: it records the pass
// count of each suite and lists every case that does not pass, with its reason. The runner exits
// non-zero when a suite passes fewer cases than recorded or a case that is not listed does not
// pass; --write-expected regenerates the file from a run.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
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
  std::string expected = KILN_CONFORMANCE_DIR "/expected.txt";
  std::string write_expected;  // regenerate the expectations here
  int case_timeout_s = 300;
  bool verbose = false;
  kiln::conformance::CaseSetup setup;
};

constexpr const char* kUsage =
    "usage: kiln_conformance [--suite NAME]... [--filter TEXT] [--csv FILE] [--data-root DIR]\n"
    "                        [--expected FILE] [--write-expected FILE] [--case-timeout SECONDS] [--verbose]\n"
    "                        [--mode graph|eager|jit] [--isa LEVEL] [--provider cpu_ref|cpu]\n"
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
    else if (arg == "--expected" && has_value) o.expected = argv[++i];
    else if (arg == "--write-expected" && has_value) o.write_expected = argv[++i];
    else if (arg == "--isa" && has_value) o.setup.isa = argv[++i];
    else if (arg == "--provider" && has_value) o.setup.provider = argv[++i];
    else if (arg == "--case-timeout" && has_value) o.case_timeout_s = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--mode" && has_value) {
      kiln::Result<kiln::ExecutionMode> mode = kiln::parse_execution_mode(argv[++i]);
      if (!mode.is_ok()) return false;
      o.setup.mode = mode.value();
    }
    else return false;
  }
  if (o.suites.empty()) o.suites = {"node", "pytorch-converted", "pytorch-operator", "simple"};
  return true;
}

struct Expectations {
  std::map<std::string, int> min_passed;        // suite -> passed cases recorded
  std::map<std::string, std::string> not_passing;  // "suite/case" -> "status  reason"
};

// Lines "passed <suite> <N>" and "<suite>/<case>  <status>  <reason>"; '#' starts a comment line.
Expectations read_expectations(const std::string& path) {
  Expectations e;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first == "passed") {
      std::string suite;
      int count = 0;
      words >> suite >> count;
      e.min_passed[suite] = count;
    } else {
      const size_t rest = line.find_first_not_of(" \t", first.size());
      e.not_passing[first] = rest == std::string::npos ? "" : line.substr(rest);
    }
  }
  return e;
}

struct CaseRecord {
  std::string id;
  CaseResult result;
};

void write_expectations(const std::string& path, const std::string& provider, const std::map<std::string, int>& passed,
                        const std::vector<CaseRecord>& records) {
  std::ofstream out(path);
  out << "# Conformance expectations (ONNX backend test data, Debian libonnx-testdata) on provider " << provider << " alone,\n"
         "# written by kiln_conformance --provider " << provider << " --write-expected. `passed <suite> <N>`: make test fails when a suite passes\n"
         "# fewer cases. Every case that does not pass is listed with its status and reason; a case that\n"
         "# is not listed must pass.\n";
  for (const auto& [suite, count] : passed) out << "passed " << suite << " " << count << "\n";
  for (const CaseRecord& r : records) {
    if (r.result.status == CaseStatus::kPass) continue;
    std::string reason = r.result.reason;
    std::replace(reason.begin(), reason.end(), '\n', ' ');
    out << r.id << "  " << case_status_name(r.result.status) << "  " << reason << "\n";
  }
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
  int passed = 0, failed = 0, random = 0;
  void add(CaseStatus s) { (s == CaseStatus::kPass ? passed : s == CaseStatus::kRandom ? random : failed)++; }
};

void print_counts(const std::string& label, const Counts& c) {
  std::printf("%s: %d passed, %d failed, %d random (shape-checked)\n", label.c_str(), c.passed, c.failed, c.random);
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
  const Expectations expected = read_expectations(o.expected);
  std::ofstream csv;
  if (!o.csv.empty()) {
    if (fs::path(o.csv).has_parent_path()) fs::create_directories(fs::path(o.csv).parent_path());
    csv.open(o.csv);
    csv << "suite,case,status,reason\n";
  }
  Counts total;
  std::vector<std::string> unexpected, fixed;
  std::vector<CaseRecord> records;
  std::map<std::string, int> passed_by_suite;
  for (const std::string& suite : o.suites) {
    const fs::path suite_dir = fs::path(o.data_root) / suite;
    if (!fs::is_directory(suite_dir)) {
      std::fprintf(stderr, "no suite '%s' under %s\n", suite.c_str(), o.data_root.c_str());
      return 2;
    }
    Counts counts;
    for (const std::string& name : case_names(suite_dir, o.filter)) {
      CaseResult r = run_case_isolated((suite_dir / name).string(), o.setup, o.case_timeout_s);
      counts.add(r.status);
      total.add(r.status);
      const std::string id = suite + "/" + name;
      const bool listed = expected.not_passing.count(id) != 0;
      if (r.status != CaseStatus::kPass && !listed)
        unexpected.push_back(id + " (" + case_status_name(r.status) + "): " + r.reason);
      if (r.status == CaseStatus::kPass && listed) fixed.push_back(id);
      records.push_back({id, r});
      if (csv.is_open()) csv << suite << "," << name << "," << case_status_name(r.status) << "," << csv_field(r.reason) << "\n";
      if (o.verbose) std::printf("%-12s %s %s\n", case_status_name(r.status), id.c_str(), r.reason.c_str());
    }
    print_counts(suite, counts);
    passed_by_suite[suite] = counts.passed;
    auto recorded = expected.min_passed.find(suite);
    if (o.filter.empty() && recorded != expected.min_passed.end() && counts.passed < recorded->second)
      unexpected.push_back(suite + ": " + std::to_string(counts.passed) + " passed, fewer than the " +
                           std::to_string(recorded->second) + " recorded in expected.txt");
    std::fflush(stdout);
  }
  print_counts("total", total);
  if (!o.write_expected.empty()) write_expectations(o.write_expected, o.setup.provider, passed_by_suite, records);
  for (const auto& id : fixed) std::printf("now passes (run --write-expected to raise the ratchet): %s\n", id.c_str());
  for (const auto& line : unexpected) std::printf("REGRESSION %s\n", line.c_str());
  return unexpected.empty() ? 0 : 1;
}
