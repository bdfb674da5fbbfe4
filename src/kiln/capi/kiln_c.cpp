// The C API (include/kiln/kiln_c.h): C handles over kiln::Session, SessionOptions and Tensor, and
// the versioned function table KilnGetApi returns. No C++ exception crosses it: each function
// turns a Status, a std::bad_alloc or anything else into a KilnStatus.
#include "kiln/kiln_c.h"

#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "kiln/session.h"

struct KilnStatus {
  KilnErrorCode code;
  std::string message;
};
struct KilnEnv {};
struct KilnSessionOptions {
  kiln::SessionOptions options;
};
struct KilnSession {
  std::unique_ptr<kiln::Session> session;
};
struct KilnTensor {
  kiln::Tensor tensor;
};
struct KilnRunOptions {
  kiln::RunOptions options;
};

namespace kiln::capi {
namespace {

// What a status is when even the status cannot be allocated (never freed).
KilnStatus out_of_memory{KILN_ALLOCATION_FAILURE, "out of memory"};

KilnStatus* make_status(KilnErrorCode code, const std::string& message) {
  try {
    return new KilnStatus{code, message};
  } catch (...) {
    return &out_of_memory;
  }
}

KilnStatus* to_c(const Status& status) {
  if (status.is_ok()) return nullptr;
  // StatusCode and KilnErrorCode list the classes in the same order (kOk = 0).
  return make_status(static_cast<KilnErrorCode>(status.code()), status.message());
}

KilnStatus* invalid(const std::string& message) { return make_status(KILN_INVALID_ARGUMENT, message); }

// Runs `body`, turning exceptions into statuses.
template <class Body>
KilnStatus* guarded(Body body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return make_status(KILN_ALLOCATION_FAILURE, "out of memory");
  } catch (const std::exception& e) {
    return make_status(KILN_INTERNAL, e.what());
  } catch (...) {
    return make_status(KILN_INTERNAL, "unknown exception");
  }
}

#define KILN_C_REQUIRE(pointer) \
  if (!(pointer)) return invalid(std::string(__func__) + ": " #pointer " is NULL")

std::vector<std::string> names_of(const char* const* names, size_t count) {
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) out.emplace_back(names[i] ? names[i] : "");
  return out;
}

// The Kiln dtype of a C data type; kUndefined for values the API does not exchange.
DType dtype_of(KilnDataType dtype) {
  const auto code = static_cast<int32_t>(dtype);
  if (!dtype_is_known(code) || code == static_cast<int32_t>(DType::kString) || code == 0) return DType::kUndefined;
  return static_cast<DType>(code);
}

const TensorInfo* info_at(const std::vector<TensorInfo>& infos, size_t index) {
  return index < infos.size() ? &infos[index] : nullptr;
}

KilnStatus* describe(const std::vector<TensorInfo>& infos, size_t index, KilnDataType* dtype, int64_t* rank, const char* what) {
  const TensorInfo* info = info_at(infos, index);
  if (!info) return invalid(std::string(what) + " index " + std::to_string(index) + " is out of range (" + std::to_string(infos.size()) + ")");
  if (dtype) *dtype = static_cast<KilnDataType>(info->dtype);
  if (rank) *rank = info->kind == Value::Kind::kTensor && info->rank_known ? static_cast<int64_t>(info->shape.size()) : -1;
  return nullptr;
}

// ---- status, version ----

const char* library_version() { return KILN_VERSION; }
KilnErrorCode error_code(const KilnStatus* s) { return s ? s->code : KILN_OK; }
const char* error_message(const KilnStatus* s) { return s ? s->message.c_str() : ""; }
void release_status(KilnStatus* s) {
  if (s != &out_of_memory) delete s;
}

// ---- environment and options ----

KilnStatus* create_env(KilnEnv** out) {
  KILN_C_REQUIRE(out);
  return guarded([&] {
    *out = new KilnEnv();
    return static_cast<KilnStatus*>(nullptr);
  });
}
void release_env(KilnEnv* env) { delete env; }

KilnStatus* create_session_options(KilnSessionOptions** out) {
  KILN_C_REQUIRE(out);
  return guarded([&] {
    *out = new KilnSessionOptions();
    return static_cast<KilnStatus*>(nullptr);
  });
}
void release_session_options(KilnSessionOptions* o) { delete o; }

KilnStatus* set_threads(KilnSessionOptions* o, int threads) {
  KILN_C_REQUIRE(o);
  if (threads < 0) return invalid("threads must be >= 0, got " + std::to_string(threads));
  o->options.threads = threads;
  return nullptr;
}

KilnStatus* set_execution_mode(KilnSessionOptions* o, const char* mode) {
  KILN_C_REQUIRE(o);
  KILN_C_REQUIRE(mode);
  return guarded([&] {
    Result<ExecutionMode> parsed = parse_execution_mode(mode);
    if (!parsed.is_ok()) return to_c(parsed.status());
    o->options.mode = parsed.value();
    return static_cast<KilnStatus*>(nullptr);
  });
}

// Sets the provider list `field` of the options (providers, allow_fallback) to `names`.
KilnStatus* set_provider_list(KilnSessionOptions* o, std::vector<std::string> SessionOptions::*field, const char* const* names,
                              size_t count) {
  KILN_C_REQUIRE(o);
  if (count > 0) KILN_C_REQUIRE(names);
  return guarded([&] {
    o->options.*field = names_of(names, count);
    return static_cast<KilnStatus*>(nullptr);
  });
}
KilnStatus* set_providers(KilnSessionOptions* o, const char* const* names, size_t count) {
  return set_provider_list(o, &SessionOptions::providers, names, count);
}
KilnStatus* set_allow_fallback(KilnSessionOptions* o, const char* const* names, size_t count) {
  return set_provider_list(o, &SessionOptions::allow_fallback, names, count);
}

KilnStatus* set_optimize(KilnSessionOptions* o, int optimize) {
  KILN_C_REQUIRE(o);
  o->options.optimize = optimize != 0;
  return nullptr;
}

KilnStatus* set_isa(KilnSessionOptions* o, const char* isa) {
  KILN_C_REQUIRE(o);
  KILN_C_REQUIRE(isa);
  return guarded([&] {
    o->options.isa = isa;
    return static_cast<KilnStatus*>(nullptr);
  });
}

KilnStatus* set_precision(KilnSessionOptions* o, const char* precision, const char* const* keep_fp32, size_t count) {
  KILN_C_REQUIRE(o);
  KILN_C_REQUIRE(precision);
  if (count > 0) KILN_C_REQUIRE(keep_fp32);
  return guarded([&] {
    o->options.precision = precision;
    o->options.keep_fp32.clear();
    for (size_t i = 0; i < count; ++i) {
      if (!keep_fp32[i]) return invalid("keep_fp32[" + std::to_string(i) + "] is NULL");
      o->options.keep_fp32.emplace_back(keep_fp32[i]);
    }
    return static_cast<KilnStatus*>(nullptr);
  });
}

KilnStatus* set_accuracy_budget(KilnSessionOptions* o, const char* budget) {
  KILN_C_REQUIRE(o);
  KILN_C_REQUIRE(budget);
  return guarded([&] {
    o->options.accuracy_budget = budget;
    return static_cast<KilnStatus*>(nullptr);
  });
}

KilnStatus* set_on_budget(KilnSessionOptions* o, const char* policy) {
  KILN_C_REQUIRE(o);
  KILN_C_REQUIRE(policy);
  return guarded([&] {
    o->options.on_budget = policy;
    return static_cast<KilnStatus*>(nullptr);
  });
}

// One input set of named tensors, copied, called `source` in its errors.
KilnStatus* add_input_set(std::vector<InputSet>& sets, const std::string& source, const char* const* names,
                          const KilnTensor* const* tensors, size_t count) {
  KILN_C_REQUIRE(names);
  KILN_C_REQUIRE(tensors);
  return guarded([&] {
    InputSet set{source + " " + std::to_string(sets.size()), {}};
    for (size_t i = 0; i < count; ++i) {
      if (!names[i] || !tensors[i]) return invalid(source + ": input " + std::to_string(i) + " has no name or no tensor");
      const Tensor& given = tensors[i]->tensor;
      Tensor copy = Tensor::allocate(given.dtype(), given.shape());
      std::memcpy(copy.raw_data(), given.raw_data(), given.byte_size());
      set.tensors[names[i]] = std::move(copy);
    }
    sets.push_back(std::move(set));
    return static_cast<KilnStatus*>(nullptr);
  });
}

KilnStatus* add_validation_inputs(KilnSessionOptions* o, const char* const* names, const KilnTensor* const* tensors, size_t count) {
  KILN_C_REQUIRE(o);
  return add_input_set(o->options.validation_inputs, "validation set", names, tensors, count);
}

KilnStatus* add_calibration_inputs(KilnSessionOptions* o, const char* const* names, const KilnTensor* const* tensors, size_t count) {
  KILN_C_REQUIRE(o);
  return add_input_set(o->options.calibration_inputs, "calibration set", names, tensors, count);
}

KilnStatus* set_calibration_method(KilnSessionOptions* o, const char* method) {
  KILN_C_REQUIRE(o);
  KILN_C_REQUIRE(method);
  return guarded([&] {
    o->options.calibration_method = method;
    return static_cast<KilnStatus*>(nullptr);
  });
}

KilnStatus* set_input_shape(KilnSessionOptions* o, const char* input, const int64_t* dims, size_t rank) {
  KILN_C_REQUIRE(o);
  KILN_C_REQUIRE(input);
  if (rank > 0) KILN_C_REQUIRE(dims);
  return guarded([&] {
    o->options.input_shapes[input] = std::vector<int64_t>(dims, dims + rank);
    return static_cast<KilnStatus*>(nullptr);
  });
}

KilnStatus* set_shape_range(KilnSessionOptions* o, const char* symbol, int64_t min, int64_t opt, int64_t max) {
  KILN_C_REQUIRE(o);
  KILN_C_REQUIRE(symbol);
  return guarded([&] {
    o->options.shape_profile[symbol] = DimRange{min, opt, max};  // checked by Session::load
    return static_cast<KilnStatus*>(nullptr);
  });
}

KilnStatus* set_artifact_key(KilnSessionOptions* o, const void* key, size_t bytes, int require_signature) {
  KILN_C_REQUIRE(o);
  if (bytes > 0) KILN_C_REQUIRE(key);
  return guarded([&] {
    o->options.artifact_public_key.assign(static_cast<const char*>(key), bytes);
    o->options.require_signature = require_signature != 0;
    return static_cast<KilnStatus*>(nullptr);
  });
}

// ---- sessions ----

KilnStatus* finish_session(Result<std::unique_ptr<Session>> loaded, KilnSession** out) {
  if (!loaded.is_ok()) return to_c(loaded.status());
  *out = new KilnSession{std::move(loaded).value()};
  return nullptr;
}

KilnStatus* create_session(KilnEnv* env, const char* path, const KilnSessionOptions* o, KilnSession** out) {
  KILN_C_REQUIRE(env);
  KILN_C_REQUIRE(path);
  KILN_C_REQUIRE(out);
  return guarded([&] { return finish_session(Session::load(path, o ? o->options : SessionOptions{}), out); });
}

KilnStatus* create_session_from_bytes(KilnEnv* env, const void* bytes, size_t size, const KilnSessionOptions* o, KilnSession** out) {
  KILN_C_REQUIRE(env);
  KILN_C_REQUIRE(bytes);
  KILN_C_REQUIRE(out);
  return guarded([&] {
    const std::string model(static_cast<const char*>(bytes), size);
    return finish_session(Session::load_bytes(model, o ? o->options : SessionOptions{}), out);
  });
}

void release_session(KilnSession* s) { delete s; }

KilnStatus* input_count(const KilnSession* s, size_t* out) {
  KILN_C_REQUIRE(s);
  KILN_C_REQUIRE(out);
  *out = s->session->inputs().size();
  return nullptr;
}
KilnStatus* output_count(const KilnSession* s, size_t* out) {
  KILN_C_REQUIRE(s);
  KILN_C_REQUIRE(out);
  *out = s->session->outputs().size();
  return nullptr;
}

KilnStatus* name_at(const std::vector<TensorInfo>& infos, size_t index, const char** out, const char* what) {
  KILN_C_REQUIRE(out);
  const TensorInfo* info = info_at(infos, index);
  if (!info) return invalid(std::string(what) + " index " + std::to_string(index) + " is out of range (" + std::to_string(infos.size()) + ")");
  *out = info->name.c_str();
  return nullptr;
}
KilnStatus* input_name(const KilnSession* s, size_t index, const char** out) {
  KILN_C_REQUIRE(s);
  return name_at(s->session->inputs(), index, out, "input");
}
KilnStatus* output_name(const KilnSession* s, size_t index, const char** out) {
  KILN_C_REQUIRE(s);
  return name_at(s->session->outputs(), index, out, "output");
}
KilnStatus* input_type(const KilnSession* s, size_t index, KilnDataType* dtype, int64_t* rank) {
  KILN_C_REQUIRE(s);
  return describe(s->session->inputs(), index, dtype, rank, "input");
}
KilnStatus* output_type(const KilnSession* s, size_t index, KilnDataType* dtype, int64_t* rank) {
  KILN_C_REQUIRE(s);
  return describe(s->session->outputs(), index, dtype, rank, "output");
}
KilnStatus* input_dims(const KilnSession* s, size_t index, int64_t* dims, size_t capacity) {
  KILN_C_REQUIRE(s);
  if (capacity > 0) KILN_C_REQUIRE(dims);
  const TensorInfo* info = info_at(s->session->inputs(), index);
  if (!info) return invalid("input index " + std::to_string(index) + " is out of range");
  for (size_t i = 0; i < info->shape.size() && i < capacity; ++i) dims[i] = info->shape[i] >= 0 ? info->shape[i] : -1;
  return nullptr;
}

KilnStatus* run(KilnSession* s, const KilnRunOptions* run_options, const char* const* input_names, const KilnTensor* const* inputs,
                size_t input_count, const char* const* output_names, size_t output_count, KilnTensor** outputs) {
  KILN_C_REQUIRE(s);
  if (input_count > 0) {
    KILN_C_REQUIRE(input_names);
    KILN_C_REQUIRE(inputs);
  }
  if (output_count > 0) {
    KILN_C_REQUIRE(output_names);
    KILN_C_REQUIRE(outputs);
  }
  return guarded([&]() -> KilnStatus* {
    std::map<std::string, Tensor> feeds;
    for (size_t i = 0; i < input_count; ++i) {
      if (!input_names[i] || !inputs[i]) return invalid("input " + std::to_string(i) + ": its name or tensor is NULL");
      feeds[input_names[i]] = inputs[i]->tensor;
    }
    std::vector<std::string> wanted = names_of(output_names, output_count);
    for (size_t i = 0; i < output_count; ++i) {
      bool known = false;
      for (const TensorInfo& info : s->session->outputs()) known = known || info.name == wanted[i];
      if (!known) return invalid("'" + wanted[i] + "' is not an output of the model");
    }
    Result<std::map<std::string, Tensor>> results =
        run_options ? s->session->run(feeds, run_options->options) : s->session->run(feeds);
    if (!results.is_ok()) return to_c(results.status());
    std::vector<std::unique_ptr<KilnTensor>> made;
    for (const std::string& name : wanted) made.push_back(std::make_unique<KilnTensor>(KilnTensor{results.value().at(name)}));
    for (size_t i = 0; i < output_count; ++i) outputs[i] = made[i].release();
    return nullptr;
  });
}

KilnStatus* report_json(const KilnSession* s, char** out) {
  KILN_C_REQUIRE(s);
  KILN_C_REQUIRE(out);
  return guarded([&] {
    const std::string json = s->session->report_json(2);
    char* text = new char[json.size() + 1];
    std::memcpy(text, json.c_str(), json.size() + 1);
    *out = text;
    return static_cast<KilnStatus*>(nullptr);
  });
}
void release_string(char* text) { delete[] text; }

KilnStatus* write_artifact(KilnSession* s, const char* path) {
  KILN_C_REQUIRE(s);
  KILN_C_REQUIRE(path);
  return guarded([&] { return to_c(s->session->write_artifact(path)); });
}

// ---- tensors ----

KilnStatus* check_shape(KilnDataType dtype, const int64_t* dims, size_t rank, DType* kiln_dtype) {
  if (rank > 0) KILN_C_REQUIRE(dims);
  *kiln_dtype = dtype_of(dtype);
  if (*kiln_dtype == DType::kUndefined) return invalid("data type " + std::to_string(static_cast<int>(dtype)) + " is not one the C API exchanges");
  for (size_t i = 0; i < rank; ++i)
    if (dims[i] < 0) return invalid("dim " + std::to_string(i) + " is negative (" + std::to_string(dims[i]) + ")");
  return nullptr;
}

KilnStatus* create_tensor(KilnDataType dtype, const int64_t* dims, size_t rank, KilnTensor** out) {
  KILN_C_REQUIRE(out);
  DType kiln_dtype;
  if (KilnStatus* bad = check_shape(dtype, dims, rank, &kiln_dtype)) return bad;
  return guarded([&] {
    Tensor t = Tensor::allocate(kiln_dtype, std::vector<int64_t>(dims, dims + rank));
    if (!t.defined()) return make_status(KILN_ALLOCATION_FAILURE, "cannot allocate a tensor of that shape");
    *out = new KilnTensor{std::move(t)};
    return static_cast<KilnStatus*>(nullptr);
  });
}

KilnStatus* create_tensor_over_data(KilnDataType dtype, const int64_t* dims, size_t rank, void* data, size_t bytes, KilnTensor** out) {
  KILN_C_REQUIRE(out);
  DType kiln_dtype;
  if (KilnStatus* bad = check_shape(dtype, dims, rank, &kiln_dtype)) return bad;
  return guarded([&] {
    Tensor t = Tensor::view(kiln_dtype, std::vector<int64_t>(dims, dims + rank), data);
    if (t.byte_size() != bytes)
      return invalid("the shape needs " + std::to_string(t.byte_size()) + " bytes, the data has " + std::to_string(bytes));
    if (bytes > 0 && !data) return invalid("data is NULL");
    *out = new KilnTensor{std::move(t)};
    return static_cast<KilnStatus*>(nullptr);
  });
}

void release_tensor(KilnTensor* t) { delete t; }

KilnStatus* tensor_type(const KilnTensor* t, KilnDataType* dtype, size_t* rank) {
  KILN_C_REQUIRE(t);
  if (dtype) *dtype = static_cast<KilnDataType>(t->tensor.dtype());
  if (rank) *rank = t->tensor.shape().size();
  return nullptr;
}

KilnStatus* tensor_dims(const KilnTensor* t, int64_t* dims, size_t capacity) {
  KILN_C_REQUIRE(t);
  if (capacity > 0) KILN_C_REQUIRE(dims);
  for (size_t i = 0; i < t->tensor.shape().size() && i < capacity; ++i) dims[i] = t->tensor.shape()[i];
  return nullptr;
}

KilnStatus* tensor_data(KilnTensor* t, void** data, size_t* bytes) {
  KILN_C_REQUIRE(t);
  if (t->tensor.dtype() == DType::kString) return invalid("string tensors have no flat data in the C API");
  if (data) *data = t->tensor.raw_data();
  if (bytes) *bytes = t->tensor.byte_size();
  return nullptr;
}

// ---- run options ----

KilnStatus* create_run_options(KilnRunOptions** out) {
  KILN_C_REQUIRE(out);
  return guarded([&] {
    *out = new KilnRunOptions();
    return static_cast<KilnStatus*>(nullptr);
  });
}
void release_run_options(KilnRunOptions* o) { delete o; }
KilnStatus* set_run_tag(KilnRunOptions* o, const char* tag) {
  KILN_C_REQUIRE(o);
  KILN_C_REQUIRE(tag);
  return guarded([&] {
    o->options.tag = tag;
    return static_cast<KilnStatus*>(nullptr);
  });
}
KilnStatus* set_run_threads(KilnRunOptions* o, int threads) {
  KILN_C_REQUIRE(o);
  if (threads < 0) return invalid("threads must be >= 0, got " + std::to_string(threads));
  o->options.threads = threads;
  return nullptr;
}
KilnStatus* set_run_terminate(KilnRunOptions* o, int terminate) {
  KILN_C_REQUIRE(o);
  o->options.terminate.store(terminate != 0);
  return nullptr;
}

KilnStatus* set_run_timeout(KilnRunOptions* o, double milliseconds) {
  KILN_C_REQUIRE(o);
  if (!(milliseconds >= 0)) return invalid("SetRunTimeout: milliseconds must be >= 0, got " + std::to_string(milliseconds));
  o->options.timeout_ms = milliseconds;
  return nullptr;
}

KilnStatus* set_max_loop_iterations(KilnSessionOptions* o, int64_t iterations) {
  KILN_C_REQUIRE(o);
  if (iterations < 0) return invalid("SetMaxLoopIterations: iterations must be >= 0 (0: unbounded), got " + std::to_string(iterations));
  o->options.max_loop_iterations = iterations;
  return nullptr;
}

KilnStatus* set_memory_limit(KilnSessionOptions* o, int64_t bytes) {
  KILN_C_REQUIRE(o);
  if (bytes < 0) return invalid("SetMemoryLimit: bytes must be >= 0 (0: no limit), got " + std::to_string(bytes));
  o->options.memory_limit = bytes;
  return nullptr;
}

// Every version's table is this one: a caller of an older version reads only its first members.
const KilnApi kApi = {
    KILN_API_VERSION,
    library_version,
    error_code,
    error_message,
    release_status,
    create_env,
    release_env,
    create_session_options,
    release_session_options,
    set_threads,
    set_execution_mode,
    set_providers,
    set_allow_fallback,
    set_optimize,
    set_isa,
    set_input_shape,
    set_shape_range,
    set_artifact_key,
    create_session,
    create_session_from_bytes,
    release_session,
    input_count,
    output_count,
    input_name,
    output_name,
    input_type,
    output_type,
    input_dims,
    run,
    report_json,
    release_string,
    write_artifact,
    create_tensor,
    create_tensor_over_data,
    release_tensor,
    tensor_type,
    tensor_dims,
    tensor_data,
    create_run_options,
    release_run_options,
    set_run_tag,
    set_run_threads,
    set_run_terminate,
    set_run_timeout,
    set_max_loop_iterations,
    set_memory_limit,
    set_precision,
    set_accuracy_budget,
    set_on_budget,
    add_validation_inputs,
    add_calibration_inputs,
    set_calibration_method,
};

static_assert(static_cast<int>(StatusCode::kInternal) == KILN_INTERNAL && static_cast<int>(StatusCode::kCancelled) == KILN_CANCELLED,
              "KilnErrorCode follows kiln::StatusCode");

}  // namespace
}  // namespace kiln::capi

extern "C" const KilnApi* KilnGetApi(uint32_t version) {
  if (version == 0 || version > KILN_API_VERSION) return nullptr;
  return &kiln::capi::kApi;
}
