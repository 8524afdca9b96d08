#include "framework/grad_check.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/backward.h"
#include "framework/net_io.h"
#include "framework/op_spec.h"
#include "google/protobuf/text_format.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

bool IsFloating(DataType dtype) {
  return dtype == kFloat32 || dtype == kFloat64;
}

double Element(const Tensor& tensor, int64_t i) {
  return tensor.dtype() == kFloat64 ? tensor.data<double>()[i]
                                    : tensor.data<float>()[i];
}

void SetElement(Tensor& tensor, int64_t i, double value) {
  if (tensor.dtype() == kFloat64) {
    tensor.data<double>()[i] = value;
  } else {
    tensor.data<float>()[i] = static_cast<float>(value);
  }
}

void Declare(BlockDef& block, const std::string& name, const Tensor& like) {
  VarDef* var = block.add_vars();
  var->set_name(name);
  var->set_dtype(like.dtype());
  for (int64_t d : like.dims()) var->add_shape(d);
}

class GradChecker {
 public:
  GradChecker(const std::vector<Feed>& feeds, const GradCheckOptions& options,
              std::vector<std::string> outputs = {})
      : feeds_(feeds), options_(options), outputs_(std::move(outputs)) {}

  absl::Status Run(const std::string& op_text) {
    NetDef net;
    net.set_format_version(kNetFormatVersion);
    net.set_name("grad_check");
    BlockDef* block = net.add_blocks();
    for (const Feed& feed : feeds_) Declare(*block, feed.name, feed.tensor);
    OpDef* op = block->add_ops();
    SF_CHECK(google::protobuf::TextFormat::ParseFromString(op_text, op),
             "test op is not a valid OpDef: %s", op_text);
    const OpSpec* spec = OpRegistry::Global().Find(op->type());
    SF_CHECK(spec != nullptr, "unknown op type \"%s\"", op->type());
    SF_CHECK(spec->grad() != nullptr, "op %s has no gradient", op->type());

    for (const OpSlot& slot : op->outputs()) {
      if (std::find(spec->grad()->output_grads().begin(),
                    spec->grad()->output_grads().end(),
                    slot.slot()) == spec->grad()->output_grads().end()) {
        continue;
      }
      outputs_.insert(outputs_.end(), slot.vars().begin(), slot.vars().end());
    }
    return RunNet(std::move(net));
  }

  // `net` declares the feeds (in block 0); outputs_ are known.
  absl::Status RunNet(NetDef net) {
    BlockDef* block = net.mutable_blocks(0);
    SF_ASSIGN_OR_RETURN(forward_, executor_.Prepare(net, 0, CPUPlace()));
    SF_ASSIGN_OR_RETURN(std::vector<Tensor> outs, Forward(feeds_));

    // Random weights per output, fed to the gradient net as the gradients
    // flowing into the outputs.
    std::mt19937_64 rng(options_.seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    std::vector<std::string> seeds;
    std::vector<Feed> grad_feeds = feeds_;
    for (size_t o = 0; o < outputs_.size(); ++o) {
      SF_CHECK(IsFloating(outs[o].dtype()),
               "output \"%s\" carries a gradient but is %s", outputs_[o],
               DataTypeName(outs[o].dtype()));
      Tensor weight;
      SF_RETURN_IF_ERROR(
          weight.Allocate(CPUPlace(), outs[o].dtype(), outs[o].dims()));
      for (int64_t i = 0; i < weight.numel(); ++i) {
        SetElement(weight, i, uniform(rng));
      }
      weights_.push_back(weight);
      seeds.push_back(absl::StrCat(outputs_[o], "@SEED"));
      Declare(*block, seeds.back(), weight);
      grad_feeds.push_back({seeds.back(), weight});
    }

    std::vector<std::string> wrt = options_.wrt;
    if (wrt.empty()) {
      for (const Feed& feed : feeds_) {
        if (IsFloating(feed.tensor.dtype())) wrt.push_back(feed.name);
      }
    }
    SF_ASSIGN_OR_RETURN(std::vector<VarGrad> grads,
                        AppendGradients(net, outputs_, seeds, wrt));
    SF_ASSIGN_OR_RETURN(PreparedNet backward,
                        executor_.Prepare(net, 0, CPUPlace()));
    std::vector<std::string> grad_names;
    for (const VarGrad& grad : grads) grad_names.push_back(grad.grad);
    Scope scope;
    SF_ASSIGN_OR_RETURN(std::vector<Tensor> analytic,
                        executor_.Run(backward, scope, grad_feeds, grad_names));
    for (size_t w = 0; w < wrt.size(); ++w) {
      SF_RETURN_IF_ERROR(CompareWithNumeric(wrt[w], analytic[w]));
    }
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<std::vector<Tensor>> Forward(const std::vector<Feed>& feeds) {
    Scope scope;
    return executor_.Run(forward_, scope, feeds, outputs_);
  }

  absl::StatusOr<double> Loss(const std::vector<Feed>& feeds) {
    SF_ASSIGN_OR_RETURN(std::vector<Tensor> outs, Forward(feeds));
    double loss = 0;
    for (size_t o = 0; o < outs.size(); ++o) {
      for (int64_t i = 0; i < outs[o].numel(); ++i) {
        loss += Element(outs[o], i) * Element(weights_[o], i);
      }
    }
    return loss;
  }

  absl::Status CompareWithNumeric(const std::string& name,
                                  const Tensor& analytic) {
    std::vector<Feed> feeds = feeds_;
    Feed* feed = nullptr;
    for (Feed& f : feeds) {
      if (f.name == name) feed = &f;
    }
    SF_CHECK(feed != nullptr, "\"%s\" is not a feed", name);
    SF_ASSIGN_OR_RETURN(feed->tensor, feed->tensor.CopyTo(CPUPlace()));
    SF_CHECK(analytic.dims() == feed->tensor.dims(),
             "gradient of \"%s\" has shape %s, the input %s", name,
             analytic.DebugString(), feed->tensor.DebugString());
    for (int64_t i = 0; i < feed->tensor.numel(); ++i) {
      const double x = Element(feed->tensor, i);
      SetElement(feed->tensor, i, x + options_.delta);
      SF_ASSIGN_OR_RETURN(double plus, Loss(feeds));
      SetElement(feed->tensor, i, x - options_.delta);
      SF_ASSIGN_OR_RETURN(double minus, Loss(feeds));
      SetElement(feed->tensor, i, x);
      const double numeric = (plus - minus) / (2 * options_.delta);
      const double computed = Element(analytic, i);
      const double scale = std::max(std::abs(numeric), std::abs(computed));
      if (!(std::abs(numeric - computed) <=
            options_.atol + options_.rtol * scale)) {
        return absl::InternalError(absl::StrFormat(
            "gradient of \"%s\" element %d (value %g): analytic %.10g, "
            "numeric %.10g",
            name, i, x, computed, numeric));
      }
    }
    return absl::OkStatus();
  }

  const std::vector<Feed>& feeds_;
  const GradCheckOptions& options_;
  Executor executor_;
  PreparedNet forward_;
  // The outputs L weighs: given, or the op's gradient-carrying ones.
  std::vector<std::string> outputs_;
  std::vector<Tensor> weights_;
};

}  // namespace

absl::Status CheckNetGradient(const NetDef& net, const std::vector<Feed>& feeds,
                              const std::vector<std::string>& outputs,
                              const GradCheckOptions& options) {
  SF_CHECK(net.blocks_size() > 0, "net \"%s\" has no block", net.name());
  return GradChecker(feeds, options, outputs).RunNet(net);
}

absl::Status CheckGradient(const std::string& op_text,
                           const std::vector<Feed>& feeds,
                           const GradCheckOptions& options) {
  return GradChecker(feeds, options).Run(op_text);
}

absl::Status CheckGradientTogetherAndAlone(
    const std::string& op_text, const std::vector<Feed>& feeds,
    const std::vector<std::string>& inputs, GradCheckOptions options) {
  options.wrt = inputs;
  SF_RETURN_IF_ERROR(CheckGradient(op_text, feeds, options));
  for (const std::string& input : inputs) {
    options.wrt = {input};
    if (absl::Status alone = CheckGradient(op_text, feeds, options);
        !alone.ok()) {
      return absl::Status(alone.code(),
                          absl::StrCat(input, " alone: ", alone.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace scopeflow
