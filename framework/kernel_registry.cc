#include "framework/kernel_registry.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace scopeflow {
namespace {

using KernelTable =
    absl::flat_hash_map<std::string, absl::flat_hash_map<KernelKey, KernelFn>>;

// Filled during static initialisation, read-only after: lookups need no
// lock. A function-local static is made before the first registration
// whatever the order of static initialisation across files.
KernelTable& Table() {
  static KernelTable table;
  return table;
}

}  // namespace

void RegisterKernel(absl::string_view op_type, DeviceType device,
                    DataType dtype, KernelFn kernel) {
  auto [it, inserted] =
      Table()[op_type].try_emplace(KernelKey{device, dtype}, kernel);
  if (!inserted) {
    std::fprintf(stderr,
                 "scopeflow: a kernel of op type \"%s\" is registered twice "
                 "for one place and dtype\n",
                 std::string(op_type).c_str());
    std::abort();
  }
}

KernelFn FindRegisteredKernel(absl::string_view op_type, const KernelKey& key) {
  const KernelTable& table = Table();
  auto op = table.find(op_type);
  if (op == table.end()) return nullptr;
  auto it = op->second.find(key);
  return it == op->second.end() ? nullptr : it->second;
}

void AppendRegisteredKernelDtypes(absl::string_view op_type, DeviceType device,
                                  std::vector<DataType>& dtypes) {
  const KernelTable& table = Table();
  auto op = table.find(op_type);
  if (op == table.end()) return;
  for (const auto& [key, kernel] : op->second) {
    if (key.device == device) dtypes.push_back(key.dtype);
  }
}

}  // namespace scopeflow
