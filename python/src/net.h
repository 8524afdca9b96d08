// What Python holds as a scopeflow.Net: a NetDef, and for an imported ONNX
// model its parameters and its inputs and outputs.
#ifndef SCOPEFLOW_PYTHON_SRC_NET_H_
#define SCOPEFLOW_PYTHON_SRC_NET_H_

#include <string>
#include <vector>

#include "framework/onnx/onnx_importer.h"
#include "proto/framework.pb.h"

namespace scopeflow::python {

struct Net {
  NetDef def;
  // An imported model's parameters (on the CPU); empty for a net file,
  // whose parameters a startup net or a parameter file makes.
  std::vector<NamedTensor> params;
  // An imported model's graph inputs and outputs; empty for a net file.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

// Reads a model file: ".onnx" is imported (ImportOnnx, with its parameters
// kept in Net::params), anything else is a net file (LoadNet). Raises on
// errors, naming the path.
Net LoadModel(const std::string& path);

}  // namespace scopeflow::python

#endif  // SCOPEFLOW_PYTHON_SRC_NET_H_
