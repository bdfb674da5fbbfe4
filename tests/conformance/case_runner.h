// Runs one ONNX backend test case (model.onnx + test_data_set_N/{input,output}_K.pb) through
// kiln::Session and classifies it. Each case runs in a child process so that a crash or a hang
// in one case is recorded as that case's failure instead of ending the whole suite.
#pragma once

#include <string>

#include "kiln/session.h"

namespace kiln::conformance {

// Every case passes or fails (an operator Kiln refuses is a failure, with the refusal as reason),
// except kRandom: the model draws random numbers (Bernoulli, Random*), so the test data's values cannot be
// reproduced; such a case is checked for output kinds, dtypes and shapes only, and the ops' values
// are checked statistically by tests/ops/random_test.cpp.
enum class CaseStatus { kPass, kFail, kRandom };

struct CaseResult {
  CaseStatus status = CaseStatus::kFail;
  std::string reason;  // empty for kPass
};

const char* case_status_name(CaseStatus status);

// How a case runs: execution mode, the target's ISA cap ("" for this machine's best), and the one
// provider (fail closed: cpu_ref measures the reference's coverage, cpu the default policy's).
struct CaseSetup {
  ExecutionMode mode = ExecutionMode::kGraph;
  std::string isa;
  std::string provider = "cpu_ref";
};

// Loads and runs the case in `case_dir`, in-process.
CaseResult run_case(const std::string& case_dir, const CaseSetup& setup);

// run_case() in a forked child, killed after `timeout_s` seconds.
CaseResult run_case_isolated(const std::string& case_dir, const CaseSetup& setup, int timeout_s);

}  // namespace kiln::conformance
