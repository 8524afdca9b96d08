#include "framework/memory/infer_from_shapes.h"

#include <string>
#include <utility>

#include "framework/var_info_checks.h"

namespace scopeflow {
namespace {

// The values known so far: a host tensor per variable, or null.
class KnownValues {
 public:
  KnownValues(const PreparedNet& prepared, const std::vector<Tensor*>* bound)
      : values_(prepared.var_names().size()),
        pointers_(prepared.var_names().size(), nullptr) {
    if (bound == nullptr) return;
    for (int v : prepared.scope_bound()) {
      const Tensor* tensor = (*bound)[v];
      if (prepared.IsTemporary(v) || prepared.is_external(v) ||
          prepared.is_written(v) ||
          tensor == nullptr || !tensor->initialized() ||
          !tensor->place().is_cpu() || tensor->numel() > kLargestShapeValue) {
        continue;
      }
      Set(v, *tensor);
    }
  }

  Tensor* const* pointers() const { return pointers_.data(); }
  bool known(int v) const { return pointers_[v] != nullptr; }
  void Set(int v, Tensor value) {
    values_[v] = std::move(value);
    pointers_[v] = &values_[v];
  }
  void Forget(int v) {
    values_[v].Clear();
    pointers_[v] = nullptr;
  }

 private:
  std::vector<Tensor> values_;
  std::vector<Tensor*> pointers_;
};

bool AllKnown(const std::vector<std::vector<int>>& slots,
              const KnownValues& values) {
  for (const auto& slot : slots) {
    for (int v : slot) {
      if (!values.known(v)) return false;
    }
  }
  return true;
}

// Works out op's outputs' values where they follow from shapes and known
// values alone; forgets them otherwise (a variable written twice).
void Evaluate(const PreparedOp& op, const PreparedNet& prepared,
              const std::vector<VarInfo>& infos, KnownValues& values) {
  for (const auto& slot : op.outputs) {
    for (int v : slot) values.Forget(v);
  }
  if (op.spec->type() == "shape" && op.inputs.size() == 1 &&
      op.inputs[0].size() == 1 && op.outputs.size() == 1 &&
      op.outputs[0].size() == 1) {
    const VarInfo& x = infos[op.inputs[0][0]];
    if (!x.has_dims) return;
    for (int64_t d : x.dims) {
      if (d < 0) return;
    }
    Tensor dims;
    if (!dims.Allocate(CPUPlace(), DATA_TYPE_INT64,
                       {static_cast<int64_t>(x.dims.size())})
             .ok()) {
      return;
    }
    for (size_t d = 0; d < x.dims.size(); ++d) {
      dims.data<int64_t>()[d] = x.dims[d];
    }
    values.Set(op.outputs[0][0], std::move(dims));
    return;
  }
  bool has_inputs = false;
  for (const auto& slot : op.inputs) has_inputs = has_inputs || !slot.empty();
  // Only pure ops: a random one run here would draw from its generator.
  if (!has_inputs || op.kernel == nullptr || !op.kernel_place.is_cpu() ||
      !op.spec->pure() || !AllKnown(op.inputs, values)) {
    return;
  }
  for (const auto& slot : op.outputs) {
    for (int v : slot) {
      if (!FullyKnown(infos[v]) ||
          NumElements(infos[v].dims) > kLargestShapeValue) {
        return;
      }
    }
  }
  for (const auto& slot : op.outputs) {
    for (int v : slot) {
      Tensor out;
      if (!out.Allocate(CPUPlace(), infos[v].dtype, infos[v].dims).ok()) {
        return;
      }
      values.Set(v, std::move(out));
    }
  }
  KernelContext context(op, values.pointers(), prepared.var_names(),
                        CPUPlace());
  if (op.kernel(context).ok()) return;
  for (const auto& slot : op.outputs) {
    for (int v : slot) values.Forget(v);
  }
}

}  // namespace

std::vector<VarInfo> InferFromShapes(const PreparedNet& prepared,
                                     std::vector<VarInfo> infos,
                                     const std::vector<Tensor*>* bound) {
  KnownValues values(prepared, bound);
  for (const PreparedOp& op : prepared.ops()) {
    if (op.spec->infer() != nullptr && !op.static_shapes) {
      InferContext context(op, infos, prepared.var_names(),
                           values.pointers());
      if (!op.spec->infer()(context).ok()) {
        for (const auto& slot : op.outputs) {
          for (int v : slot) {
            infos[v].dims.clear();
            infos[v].has_dims = false;
            values.Forget(v);
          }
        }
        continue;
      }
    }
    Evaluate(op, prepared, infos, values);
  }
  return infos;
}

}  // namespace scopeflow
