/* kiln_c.h: Kiln's stable C API (C99). Load a model (ONNX or a .kiln artifact), describe its
 * inputs and outputs, run it on tensors, read the evidence report; from C, or from any language
 * with a C FFI (Go, Rust, C#, Java).
 *
 * The entry point is one function, KilnGetApi(KILN_API_VERSION), which returns a table of
 * function pointers. Versions only add functions at the end of the table, so a program built
 * against an older header keeps working with a newer library (it asks for its own version and
 * uses the functions it knows); asking a library for a version newer than its own returns NULL.
 *
 * Errors: every fallible function returns a KilnStatus*: NULL on success, else a status that the
 * caller owns and frees with ReleaseStatus, holding the error class (KilnErrorCode) and a message
 * naming the node, value or field at fault. Outputs are written only on success.
 *
 * Ownership: every object a Create* function or Run gives is the caller's, freed with its
 * Release* function (Release* accept NULL). Strings a session returns (names) live as long as
 * the session; strings returned in a char** (the report) are freed with ReleaseString.
 *
 * Thread-safety: a session's Run may be called from several threads at once: runs proceed
 * concurrently (up to the session's bound, 4 by default; later callers wait), each with its own
 * working memory. Everything else that takes a KilnSession* may be called concurrently with Run.
 * A KilnSessionOptions or KilnTensor must not be modified while another thread uses it; tensors
 * may be read by several runs at once. SetRunTerminate may be called while runs use the options.
 * Status and environment functions are thread-safe.
 */
#ifndef KILN_C_H
#define KILN_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_API_VERSION 6u

#if defined(__GNUC__)
#define KILN_EXPORT __attribute__((visibility("default")))
#else
#define KILN_EXPORT
#endif

/* The error classes of kiln::StatusCode (docs/ARCHITECTURE.md, Errors), with stable values. */
typedef enum KilnErrorCode {
  KILN_OK = 0,
  KILN_INVALID_MODEL = 1,
  KILN_UNSUPPORTED_OPERATOR = 2,
  KILN_UNSUPPORTED_TARGET = 3,
  KILN_INVALID_ARGUMENT = 4,
  KILN_SHAPE_GUARD_FAILURE = 5,
  KILN_ALLOCATION_FAILURE = 6,
  KILN_BACKEND_FAILURE = 7,
  KILN_NUMERICAL_ISSUE = 8,
  KILN_INTEGRITY_FAILURE = 9,
  KILN_NOT_FOUND = 10,
  KILN_INTERNAL = 11,
  KILN_CANCELLED = 12 /* a run ended early on request (TerminateRun) */
} KilnErrorCode;

/* Element types: ONNX's TensorProto codes. Strings are not exchanged through this API. */
typedef enum KilnDataType {
  KILN_DTYPE_UNDEFINED = 0,
  KILN_DTYPE_FLOAT = 1,
  KILN_DTYPE_UINT8 = 2,
  KILN_DTYPE_INT8 = 3,
  KILN_DTYPE_UINT16 = 4,
  KILN_DTYPE_INT16 = 5,
  KILN_DTYPE_INT32 = 6,
  KILN_DTYPE_INT64 = 7,
  KILN_DTYPE_BOOL = 9,
  KILN_DTYPE_FLOAT16 = 10,
  KILN_DTYPE_DOUBLE = 11,
  KILN_DTYPE_UINT32 = 12,
  KILN_DTYPE_UINT64 = 13,
  KILN_DTYPE_BFLOAT16 = 16
} KilnDataType;

typedef struct KilnStatus KilnStatus;
typedef struct KilnEnv KilnEnv;                       /* process-wide state: create one, share it */
typedef struct KilnSessionOptions KilnSessionOptions;
typedef struct KilnSession KilnSession;
typedef struct KilnTensor KilnTensor;
typedef struct KilnRunOptions KilnRunOptions;

typedef struct KilnApi {
  /* ---- version 1 ---- */
  uint32_t version; /* the library's KILN_API_VERSION */
  const char* (*GetLibraryVersion)(void); /* "0.1.0" */

  KilnErrorCode (*GetErrorCode)(const KilnStatus* status); /* KILN_OK for NULL */
  const char* (*GetErrorMessage)(const KilnStatus* status); /* "" for NULL; lives as long as the status */
  void (*ReleaseStatus)(KilnStatus* status);

  KilnStatus* (*CreateEnv)(KilnEnv** out);
  void (*ReleaseEnv)(KilnEnv* env); /* after every session made with it */

  KilnStatus* (*CreateSessionOptions)(KilnSessionOptions** out);
  void (*ReleaseSessionOptions)(KilnSessionOptions* options);
  /* Kernel threads (OpenMP; 0: all cores). */
  KilnStatus* (*SetThreads)(KilnSessionOptions* options, int threads);
  /* "graph" (default), "eager", "jit"; a .kiln artifact always loads as "aot". */
  KilnStatus* (*SetExecutionMode)(KilnSessionOptions* options, const char* mode);
  /* Providers in order of preference ("cpu", "cpu_ref"), and those a node may fall back to
     (none by default: fail closed). */
  KilnStatus* (*SetProviders)(KilnSessionOptions* options, const char* const* names, size_t count);
  KilnStatus* (*SetAllowFallback)(KilnSessionOptions* options, const char* const* names, size_t count);
  KilnStatus* (*SetOptimize)(KilnSessionOptions* options, int optimize);
  /* The instruction-set cap ("avx2", "avx512_core", ...; "" for the best). */
  KilnStatus* (*SetIsa)(KilnSessionOptions* options, const char* isa);
  /* The shape to plan an input for at load. */
  KilnStatus* (*SetInputShape)(KilnSessionOptions* options, const char* input, const int64_t* dims, size_t rank);
  /* A symbolic dim's range; runs outside it fail with KILN_SHAPE_GUARD_FAILURE. */
  KilnStatus* (*SetShapeRange)(KilnSessionOptions* options, const char* symbol, int64_t min, int64_t opt, int64_t max);
  /* For .kiln artifacts: the raw 32-byte Ed25519 key they must be signed with, and whether an
     unsigned one is refused. */
  KilnStatus* (*SetArtifactKey)(KilnSessionOptions* options, const void* public_key, size_t bytes, int require_signature);

  /* Loads and compiles a model file (.onnx or .kiln), or a serialized ONNX model in memory
     (`bytes` is copied; external data is read from the current folder). */
  KilnStatus* (*CreateSession)(KilnEnv* env, const char* path, const KilnSessionOptions* options, KilnSession** out);
  KilnStatus* (*CreateSessionFromBytes)(KilnEnv* env, const void* bytes, size_t size, const KilnSessionOptions* options,
                                        KilnSession** out);
  void (*ReleaseSession)(KilnSession* session);

  /* Inputs and outputs: count, name, element type and declared shape (-1 for a symbolic or
     unknown dim; rank -1 when unknown). Sequence and optional inputs and outputs are described
     with their element type but cannot be run through this version of the API. */
  KilnStatus* (*GetInputCount)(const KilnSession* session, size_t* out);
  KilnStatus* (*GetOutputCount)(const KilnSession* session, size_t* out);
  KilnStatus* (*GetInputName)(const KilnSession* session, size_t index, const char** out);
  KilnStatus* (*GetOutputName)(const KilnSession* session, size_t index, const char** out);
  KilnStatus* (*GetInputType)(const KilnSession* session, size_t index, KilnDataType* dtype, int64_t* rank);
  KilnStatus* (*GetOutputType)(const KilnSession* session, size_t index, KilnDataType* dtype, int64_t* rank);
  /* Writes min(rank, capacity) dims. */
  KilnStatus* (*GetInputDims)(const KilnSession* session, size_t index, int64_t* dims, size_t capacity);

  /* Runs the model. Every input by name; `outputs[i]` receives a new tensor for
     `output_names[i]` (the caller releases it). `run_options` may be NULL. */
  KilnStatus* (*Run)(KilnSession* session, const KilnRunOptions* run_options, const char* const* input_names,
                     const KilnTensor* const* inputs, size_t input_count, const char* const* output_names,
                     size_t output_count, KilnTensor** outputs);

  /* The evidence report as JSON (docs/REPORT.md); free it with ReleaseString. */
  KilnStatus* (*GetReportJson)(const KilnSession* session, char** out);
  void (*ReleaseString)(char* text);
  /* Writes the compiled model as a .kiln artifact (docs/ARTIFACT.md). */
  KilnStatus* (*WriteArtifact)(KilnSession* session, const char* path);

  /* A new tensor owning zero-filled storage. */
  KilnStatus* (*CreateTensor)(KilnDataType dtype, const int64_t* dims, size_t rank, KilnTensor** out);
  /* A tensor over the caller's `data` (`bytes` long, which must match the shape), read and written
     in place: the memory must outlive the tensor. */
  KilnStatus* (*CreateTensorOverData)(KilnDataType dtype, const int64_t* dims, size_t rank, void* data, size_t bytes,
                                      KilnTensor** out);
  void (*ReleaseTensor)(KilnTensor* tensor);
  KilnStatus* (*GetTensorType)(const KilnTensor* tensor, KilnDataType* dtype, size_t* rank);
  /* Writes min(rank, capacity) dims. */
  KilnStatus* (*GetTensorDims)(const KilnTensor* tensor, int64_t* dims, size_t capacity);
  KilnStatus* (*GetTensorData)(KilnTensor* tensor, void** data, size_t* bytes);

  KilnStatus* (*CreateRunOptions)(KilnRunOptions** out);
  void (*ReleaseRunOptions)(KilnRunOptions* options);
  /* A tag naming the runs that use these options in their errors. */
  KilnStatus* (*SetRunTag)(KilnRunOptions* options, const char* tag);
  /* Kernel threads for those runs (0: the session's). */
  KilnStatus* (*SetRunThreads)(KilnRunOptions* options, int threads);
  /* Ends the runs using these options at their next kernel boundary with KILN_CANCELLED (callable
     from any thread while they run); `terminate` 0 clears it so that the options run again. */
  KilnStatus* (*SetRunTerminate)(KilnRunOptions* options, int terminate);

  /* ---- version 2 ---- */
  /* A deadline for each run using these options: one still going `milliseconds` after it began ends
     at its next kernel boundary or Loop/Scan iteration with KILN_CANCELLED (0: none; negative:
     KILN_INVALID_ARGUMENT). */
  KilnStatus* (*SetRunTimeout)(KilnRunOptions* options, double milliseconds);
  /* The most iterations one Loop may run in a run (default 100000000; 0: unbounded); a Loop above
     it fails with KILN_INVALID_ARGUMENT naming the node. */
  KilnStatus* (*SetMaxLoopIterations)(KilnSessionOptions* options, int64_t iterations);

  /* ---- version 3 ---- */
  /* The most bytes the session's buffers may hold at once (weights, packed copies, arenas,
     outputs; 0: no limit; negative: KILN_INVALID_ARGUMENT). A load or run past it fails with
     KILN_ALLOCATION_FAILURE before it allocates, naming the planned bytes and the limit. */
  KilnStatus* (*SetMemoryLimit)(KilnSessionOptions* options, int64_t bytes);

  /* ---- version 4 ---- */
  /* The arithmetic of convolutions and matrix products: "fp32" (default), "bf16" (needs
     AVX512_BF16: KILN_UNSUPPORTED_TARGET at load otherwise), "int8", "int8+bf16"
     or "auto" (the fastest within the accuracy budget, SessionOptions::precision); products
     named in `keep_fp32` (node names or op types, `count` of them) stay fp32. A load under a reduced
     precision also runs the model in fp32 on generated inputs and records the accuracy in the report;
     an unknown precision fails the load with KILN_INVALID_ARGUMENT. */
  KilnStatus* (*SetPrecision)(KilnSessionOptions* options, const char* precision, const char* const* keep_fp32, size_t count);
  /* Limits on that accuracy ("rel=1e-2,cos=0.999,top1=0.99"; "" for none): a load that breaks one
     fails with KILN_NUMERICAL_ISSUE naming the output and the measure. */
  KilnStatus* (*SetAccuracyBudget)(KilnSessionOptions* options, const char* budget);

  /* ---- version 5 ---- */
  /* What a broken accuracy budget does: "fail" (default: KILN_NUMERICAL_ISSUE) or "fallback" (the
     products most sensitive to the reduced precision, measured one by one, stay fp32 until the
     budget holds; KILN_NUMERICAL_ISSUE saying "impossible" when every product in fp32 still breaks
     it). Another value fails the load with KILN_INVALID_ARGUMENT. */
  KilnStatus* (*SetOnBudget)(KilnSessionOptions* options, const char* policy);

  /* ---- version 6 ---- */
  /* One more input set (`count` tensors, each named by `names[i]`; copied) for the accuracy check
     of a reduced precision (SessionOptions::validation_inputs; without any, the calibration sets,
     else generated inputs). A set with a wrong input name, dtype or shape, or a float input all
     NaN, fails the load with KILN_INVALID_ARGUMENT naming the set ("validation set N") and input. */
  KilnStatus* (*AddValidationInputs)(KilnSessionOptions* options, const char* const* names, const KilnTensor* const* tensors,
                                     size_t count);
  /* One more calibration input set, the same way: static int8, each int8 product's input scale
     fixed from the float32 model's values on the sets (SessionOptions::calibration_inputs). */
  KilnStatus* (*AddCalibrationInputs)(KilnSessionOptions* options, const char* const* names, const KilnTensor* const* tensors,
                                      size_t count);
  /* How calibration chooses each range: "minmax" (default), "percentile" or "entropy"; another
     fails the load with KILN_INVALID_ARGUMENT. */
  KilnStatus* (*SetCalibrationMethod)(KilnSessionOptions* options, const char* method);
  /* ---- later versions add functions here ---- */
} KilnApi;

/* The function table of API `version` (pass KILN_API_VERSION), or NULL when this library is older
   than `version` (or `version` is 0). Thread-safe; the table lives as long as the process. */
KILN_EXPORT const KilnApi* KilnGetApi(uint32_t version);

#ifdef __cplusplus
}
#endif

#endif /* KILN_C_H */
