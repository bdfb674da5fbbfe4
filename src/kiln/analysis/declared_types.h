// Declared types meeting inferred ones. Exporters write value_info and subgraph input/output
// shapes that are stale, too narrow or of the wrong rank; ONNX Runtime treats a declared shape as
// a hint where inference disagrees. So does Kiln: a contradicted declared shape gives way to the
// inferred one, and analysis records the disagreement; a declared size inference cannot confirm
// is not planned on. What the spec makes a fact stays one: a
// value's element type and kind, and a model input's declared dims (a contract with the caller).
#pragma once

#include <string>

#include "kiln/ir/shape.h"
#include "kiln/status.h"

namespace kiln::analysis {

// A declared shape analysis did not keep: the value, the graph holding it ("main", or
// "main > Loop 'l' subgraph 'body'"), its declared type and the type analysis used instead.
struct DeclarationDisagreement {
  std::string value;
  std::string where;
  std::string declared;
  std::string used;
};

// A declared type reconciled with an inferred one.
struct Reconciled {
  ir::TensorType type;
  bool contradicted = false;  // the declared shape's rank or a static dim disagreed: inference's was used
};

// The inferred type, its unknown dims named by the declaration's symbols; `contradicted` where
// the declared rank or a static dim disagrees. A declared size or rank inference cannot confirm
// is not used either: plans allocate by types, and a stale one would be planned on (ONNX Runtime
// sizes such values at run time; so do Kiln's plans when their type leaves them unknown).
// InvalidModel naming `what` and the rule when the element types or kinds differ.
Result<Reconciled> reconcile_declared(const ir::TensorType& declared, const ir::TensorType& inferred,
                                      const std::string& what);

// For a declaration that is a contract (a model input's dims): the inferred type refined by every
// declared dim or rank inference does not know; InvalidModel naming `what`, both types and the
// first dim that differs when they contradict.
Result<ir::TensorType> merge_types(const ir::TensorType& declared, const ir::TensorType& inferred,
                                   const std::string& what);

// Whether `used` keeps every fact `declared` states: its rank and each of its static dims.
bool keeps_declared_shape(const ir::TensorType& declared, const ir::TensorType& used);

// `declared` with what `covering` does not pin dropped: each static dim where `covering` has
// another size or none, the whole shape where their ranks differ or `covering` has no rank.
ir::TensorType within(const ir::TensorType& declared, const ir::TensorType& covering);

}  // namespace kiln::analysis
