// The trigonometric and hyperbolic functions ONNX has beyond sin and cos
// (tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh) and softsign,
// x / (1 + |x|): ops of one input "X" with an output "Out" of its dtype and
// shape (float32, float64), each with a "<op>_grad" op that reads X and
// Out@GRAD and writes the optional X@GRAD. Out of a function's domain
// (asin of 2, acosh of 0) the result is NaN, as libm's.
#include <cmath>
#include <cstdint>
#include <string>

#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/elementwise/grad_util.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// Each function F has Value(x) and Derivative(x), dOut/dX at x.
struct Tan {
  template <typename T>
  static T Value(T x) {
    return std::tan(x);
  }
  template <typename T>
  static T Derivative(T x) {
    const T c = std::cos(x);
    return T(1) / (c * c);
  }
};

struct Asin {
  template <typename T>
  static T Value(T x) {
    return std::asin(x);
  }
  template <typename T>
  static T Derivative(T x) {
    return T(1) / std::sqrt(T(1) - x * x);
  }
};

struct Acos {
  template <typename T>
  static T Value(T x) {
    return std::acos(x);
  }
  template <typename T>
  static T Derivative(T x) {
    return T(-1) / std::sqrt(T(1) - x * x);
  }
};

struct Atan {
  template <typename T>
  static T Value(T x) {
    return std::atan(x);
  }
  template <typename T>
  static T Derivative(T x) {
    return T(1) / (T(1) + x * x);
  }
};

struct Sinh {
  template <typename T>
  static T Value(T x) {
    return std::sinh(x);
  }
  template <typename T>
  static T Derivative(T x) {
    return std::cosh(x);
  }
};

struct Cosh {
  template <typename T>
  static T Value(T x) {
    return std::cosh(x);
  }
  template <typename T>
  static T Derivative(T x) {
    return std::sinh(x);
  }
};

struct Asinh {
  template <typename T>
  static T Value(T x) {
    return std::asinh(x);
  }
  template <typename T>
  static T Derivative(T x) {
    return T(1) / std::sqrt(x * x + T(1));
  }
};

struct Acosh {
  template <typename T>
  static T Value(T x) {
    return std::acosh(x);
  }
  template <typename T>
  static T Derivative(T x) {
    return T(1) / std::sqrt(x * x - T(1));
  }
};

struct Atanh {
  template <typename T>
  static T Value(T x) {
    return std::atanh(x);
  }
  template <typename T>
  static T Derivative(T x) {
    return T(1) / (T(1) - x * x);
  }
};

struct Softsign {
  template <typename T>
  static T Value(T x) {
    return x / (T(1) + std::abs(x));
  }
  template <typename T>
  static T Derivative(T x) {
    const T d = T(1) + std::abs(x);
    return T(1) / (d * d);
  }
};

// The fewest elements worth a thread: each calls libm, several times the
// cost of the arithmetic kElementsWorthAThread is sized for.
constexpr int64_t kCallsWorthAThread = 1 << 12;

template <typename T, typename F>
absl::Status ValueKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const T* in = x.data<T>();
  T* out = context.Output("Out")->data<T>();
  ParallelFor(x.numel(), kCallsWorthAThread, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      out[i] = F::Value(in[i]);
    }
  });
  return absl::OkStatus();
}

template <typename T, typename F>
absl::Status GradKernel(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const T* x = context.Input("X").data<T>();
  const T* g = context.Input("Out@GRAD").data<T>();
  Tensor* dx = context.Output("X@GRAD");
  T* out = dx->data<T>();
  ParallelFor(dx->numel(), kCallsWorthAThread, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      out[i] = g[i] * F::Derivative(x[i]);
    }
  });
  return absl::OkStatus();
}

template <typename F>
void Register(const char* type) {
  const std::string grad = std::string(type) + "_grad";
  OpRegistry::Global()
      .Add(type)
      .Input("X")
      .Output("Out")
      .Layout(LayoutRole::kElementwise)
      .Infer(SameAsInput())
      .Grad(GradSpec(grad).ReadInput("X").ReadOutputGrad("Out").WriteInputGrad(
          "X"))
      .Kernel(DeviceType::kCPU, kFloat32, &ValueKernel<float, F>)
      .Kernel(DeviceType::kCPU, kFloat64, &ValueKernel<double, F>);
  OpRegistry::Global()
      .Add(grad)
      .Input("X")
      .Input("Out@GRAD")
      .Output("X@GRAD", /*optional=*/true)
      .Infer(elementwise::UnaryGradInfer("X"))
      .Kernel(DeviceType::kCPU, kFloat32, &GradKernel<float, F>)
      .Kernel(DeviceType::kCPU, kFloat64, &GradKernel<double, F>);
}

[[maybe_unused]] const bool kRegistered = [] {
  Register<Tan>("tan");
  Register<Asin>("asin");
  Register<Acos>("acos");
  Register<Atan>("atan");
  Register<Sinh>("sinh");
  Register<Cosh>("cosh");
  Register<Asinh>("asinh");
  Register<Acosh>("acosh");
  Register<Atanh>("atanh");
  Register<Softsign>("softsign");
  return true;
}();

}  // namespace
}  // namespace scopeflow
