// Declared types meeting inferred ones: hints where shapes disagree, facts for element types.
#include "kiln/analysis/declared_types.h"

#include <optional>

namespace kiln::analysis {

namespace {

// How two shapes contradict each other ("rank differs", "dim 1 differs"), or nothing when every
// dim both state is the same.
std::optional<std::string> contradiction(const ir::Shape& declared, const ir::Shape& inferred) {
  if (declared.rank() != inferred.rank()) return std::string("rank differs");
  for (size_t i = 0; i < declared.rank(); ++i)
    if (declared[i].is_static() && inferred[i].is_static() && declared[i].value() != inferred[i].value())
      return "dim " + std::to_string(i) + " differs";
  return std::nullopt;
}

// Each dim: the inferred one when static; where inference knows less, a contract's static dim or
// symbol, a hint's symbol only (a size no inference confirms is not planned on).
ir::Shape refined(const ir::Shape& declared, const ir::Shape& inferred, bool contract) {
  ir::Shape merged = inferred;
  for (size_t i = 0; i < inferred.rank(); ++i) {
    const ir::Dim& d = declared[i];
    const ir::Dim& n = inferred[i];
    if (n.is_static()) continue;
    if (contract ? d.is_static() || !n.is_symbol() : d.is_symbol() && !n.is_symbol()) merged.dims()[i] = d;
  }
  return merged;
}

Result<Reconciled> reconcile(const ir::TensorType& declared, const ir::TensorType& inferred, const std::string& what,
                             bool contract) {
  if (!declared.is_known()) return Reconciled{inferred};
  if (!inferred.is_known()) return Reconciled{declared};
  const std::string types = " is declared " + declared.to_string() + " but inferred " + inferred.to_string();
  if (declared.kind != inferred.kind)
    return invalid_model(what + types + ": a value's kind (tensor, sequence, optional) is fixed by its type");
  if (!declared.is_tensor()) {
    // Containers: the element types must agree; the inferred element refines the declared one.
    KILN_ASSIGN_OR_RETURN(Reconciled element, reconcile(*declared.element, *inferred.element, what, contract));
    Reconciled merged{inferred, element.contradicted};
    merged.type.element = std::make_shared<const ir::TensorType>(std::move(element.type));
    return merged;
  }
  if (declared.dtype != DType::kUndefined && inferred.dtype != DType::kUndefined && declared.dtype != inferred.dtype)
    return invalid_model(what + types + ": a value's element type is a fact, not a hint (ONNX type constraints)");
  Reconciled merged{inferred};
  if (merged.type.dtype == DType::kUndefined) merged.type.dtype = declared.dtype;
  if (!declared.shape) return merged;
  if (!inferred.shape) {
    if (contract) merged.type.shape = declared.shape;  // a hint's rank stays unconfirmed: not planned on
    return merged;
  }
  merged.contradicted = contradiction(*declared.shape, *inferred.shape).has_value();
  if (!merged.contradicted) merged.type.shape = refined(*declared.shape, *inferred.shape, contract);
  return merged;
}

}  // namespace

Result<Reconciled> reconcile_declared(const ir::TensorType& declared, const ir::TensorType& inferred,
                                      const std::string& what) {
  return reconcile(declared, inferred, what, false);
}

Result<ir::TensorType> merge_types(const ir::TensorType& declared, const ir::TensorType& inferred,
                                   const std::string& what) {
  KILN_ASSIGN_OR_RETURN(Reconciled merged, reconcile(declared, inferred, what, true));
  if (!merged.contradicted) return merged.type;
  const std::optional<std::string> how =
      declared.is_tensor() ? contradiction(*declared.shape, *inferred.shape) : std::string("element shapes differ");
  return invalid_model(what + " is declared " + declared.to_string() + " but given " + inferred.to_string() + " (" +
                       *how + ")");
}

bool keeps_declared_shape(const ir::TensorType& declared, const ir::TensorType& used) {
  if (!declared.is_tensor() || !declared.shape) return true;
  if (!used.shape || used.shape->rank() != declared.shape->rank()) return false;
  for (size_t i = 0; i < declared.shape->rank(); ++i)
    if ((*declared.shape)[i].is_static() && !((*used.shape)[i] == (*declared.shape)[i])) return false;
  return true;
}

ir::TensorType within(const ir::TensorType& declared, const ir::TensorType& covering) {
  if (!declared.is_tensor() || !declared.shape) return declared;
  ir::TensorType loosened = declared;
  if (!covering.shape || covering.shape->rank() != declared.shape->rank()) {
    loosened.shape.reset();
    return loosened;
  }
  for (size_t i = 0; i < declared.shape->rank(); ++i) {
    const ir::Dim& c = (*covering.shape)[i];
    if ((*declared.shape)[i].is_static() && !c.is_symbol() && !(c == (*declared.shape)[i]))
      loosened.shape->dims()[i] = ir::Dim::unknown();
  }
  return loosened;
}

}  // namespace kiln::analysis
