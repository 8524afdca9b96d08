// non_max_suppression (ONNX NonMaxSuppression, opsets 10 and 11+): for
// each batch and class, the boxes picked greedily in order of decreasing
// score, skipping any whose IoU with a box already picked for that class
// exceeds the IoU threshold, and any whose score is not above the score
// threshold (when one is given), at most max_output_boxes_per_class of
// them. Out is int64 [selected, 3] of (batch, class, box): batch by
// batch, class by class, each class's boxes in the order picked, as ONNX
// Runtime writes them. Of equal scores the box of lower index comes first.
//
// Boxes [batch, spatial, 4] are (y1, x1, y2, x2) for any pair of opposite
// corners with "center_point_box" 0, (x_center, y_center, width, height)
// with 1; Scores are [batch, classes, spatial]. The limits are attributes
// or, when bound, one-element inputs (values known at run time only).
// The count depends on the values: inference sees them at run time only,
// and leaves it unknown (-1) at Prepare. No gradient: the output is
// indices.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

struct NmsLimits {
  int64_t max_boxes_per_class = 0;
  float iou_threshold = 0;
  std::optional<float> score_threshold;
};

// A box as the extents of its two axes, whichever corners or center form
// it came in.
struct Extent {
  float y_min, x_min, y_max, x_max;
};

Extent ExtentOf(const float* box, bool center_point) {
  if (center_point) {
    const float half_w = box[2] / 2, half_h = box[3] / 2;
    return {box[1] - half_h, box[0] - half_w, box[1] + half_h, box[0] + half_w};
  }
  return {std::min(box[0], box[2]), std::min(box[1], box[3]),
          std::max(box[0], box[2]), std::max(box[1], box[3])};
}

// Whether IoU(a, b) > threshold; boxes of no area or no overlap never
// suppress (IoU 0), as in ONNX Runtime.
bool Suppresses(const Extent& a, const Extent& b, float threshold) {
  const float inter_h =
      std::max(0.0f, std::min(a.y_max, b.y_max) - std::max(a.y_min, b.y_min));
  const float inter_w =
      std::max(0.0f, std::min(a.x_max, b.x_max) - std::max(a.x_min, b.x_min));
  const float intersection = inter_h * inter_w;
  if (intersection <= 0) return false;
  const float area_a = (a.y_max - a.y_min) * (a.x_max - a.x_min);
  const float area_b = (b.y_max - b.y_min) * (b.x_max - b.x_min);
  const float union_area = area_a + area_b - intersection;
  if (area_a <= 0 || area_b <= 0 || union_area <= 0) return false;
  return intersection / union_area > threshold;
}

// The selected (batch, class, box) triples, flattened, in output order.
std::vector<int64_t> SelectBoxes(const Tensor& boxes, const Tensor& scores,
                                 bool center_point, const NmsLimits& limits) {
  const int64_t batches = scores.dims()[0], classes = scores.dims()[1],
                spatial = scores.dims()[2];
  std::vector<int64_t> selected;
  if (limits.max_boxes_per_class <= 0) return selected;
  std::vector<Extent> extents(spatial);
  std::vector<int64_t> order;
  std::vector<int64_t> picked;
  for (int64_t b = 0; b < batches; ++b) {
    const float* batch_boxes = boxes.data<float>() + b * spatial * 4;
    for (int64_t i = 0; i < spatial; ++i) {
      extents[i] = ExtentOf(batch_boxes + i * 4, center_point);
    }
    for (int64_t c = 0; c < classes; ++c) {
      const float* class_scores =
          scores.data<float>() + (b * classes + c) * spatial;
      order.clear();
      for (int64_t i = 0; i < spatial; ++i) {
        if (!limits.score_threshold ||
            class_scores[i] > *limits.score_threshold) {
          order.push_back(i);
        }
      }
      std::stable_sort(order.begin(), order.end(),
                       [class_scores](int64_t i, int64_t j) {
                         return class_scores[i] > class_scores[j];
                       });
      picked.clear();
      for (const int64_t candidate : order) {
        if (static_cast<int64_t>(picked.size()) >= limits.max_boxes_per_class)
          break;
        const bool suppressed =
            std::any_of(picked.begin(), picked.end(), [&](int64_t kept) {
              return Suppresses(extents[kept], extents[candidate],
                                limits.iou_threshold);
            });
        if (suppressed) continue;
        picked.push_back(candidate);
        selected.insert(selected.end(), {b, c, candidate});
      }
    }
  }
  return selected;
}

// For inference: Boxes [batch, spatial, 4] and Scores [batch, classes,
// spatial] of float32, agreeing on batch and spatial where known.
absl::Status CheckBoxesAndScores(const InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtype(context, "Boxes", kFloat32));
  SF_RETURN_IF_ERROR(CheckDtype(context, "Scores", kFloat32));
  SF_RETURN_IF_ERROR(CheckRank(context, "Boxes", 3, 3));
  SF_RETURN_IF_ERROR(CheckRank(context, "Scores", 3, 3));
  const VarInfo& boxes = context.Input("Boxes");
  const VarInfo& scores = context.Input("Scores");
  if (boxes.has_dims) {
    SF_CHECK(boxes.dims[2] == 4 || boxes.dims[2] < 0,
             "%s: expected [batch, spatial, 4], 4 coordinates a box",
             DescribeInputShape(context, "Boxes"));
  }
  if (!boxes.has_dims || !scores.has_dims) return absl::OkStatus();
  const auto agree = [](int64_t a, int64_t b) {
    return a < 0 || b < 0 || a == b;
  };
  SF_CHECK(agree(boxes.dims[0], scores.dims[0]),
           "%s and %s: expected one batch size (dim 0 of both)",
           DescribeInputShape(context, "Boxes"),
           DescribeInputShape(context, "Scores"));
  SF_CHECK(agree(boxes.dims[1], scores.dims[2]),
           "%s and %s: expected as many boxes (dim 1 of Boxes) as scores a "
           "class (dim 2 of Scores)",
           DescribeInputShape(context, "Boxes"),
           DescribeInputShape(context, "Scores"));
  return absl::OkStatus();
}

absl::Status CheckLimitInputs(const InferContext& context) {
  if (context.HasInput("MaxOutputBoxesPerClass")) {
    SF_RETURN_IF_ERROR(
        CheckScalarInput(context, "MaxOutputBoxesPerClass", kInt64));
  }
  for (const char* slot : {"IouThreshold", "ScoreThreshold"}) {
    if (context.HasInput(slot)) {
      SF_RETURN_IF_ERROR(CheckScalarInput(context, slot, kFloat32));
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::StatusOr<T> HostScalar(const Tensor& tensor) {
  SF_ASSIGN_OR_RETURN(const Tensor host, OnHost(tensor));
  return *host.data<T>();
}

// The limits from attributes and the inputs bound in their place, whose
// values `value_of(slot)` gives (null where not visible: then nullopt).
template <typename Context, typename ValueOf>
absl::StatusOr<std::optional<NmsLimits>> LimitsOf(const Context& context,
                                                  ValueOf value_of) {
  NmsLimits limits;
  const Attributes& attrs = context.attrs();
  limits.max_boxes_per_class =
      attrs.template Get<int64_t>("max_output_boxes_per_class");
  limits.iou_threshold = attrs.template Get<float>("iou_threshold");
  if (attrs.template Get<bool>("has_score_threshold")) {
    limits.score_threshold = attrs.template Get<float>("score_threshold");
  }
  if (context.HasInput("MaxOutputBoxesPerClass")) {
    const Tensor* value = value_of("MaxOutputBoxesPerClass");
    if (value == nullptr) return std::optional<NmsLimits>();
    SF_ASSIGN_OR_RETURN(limits.max_boxes_per_class,
                        HostScalar<int64_t>(*value));
  }
  if (context.HasInput("IouThreshold")) {
    const Tensor* value = value_of("IouThreshold");
    if (value == nullptr) return std::optional<NmsLimits>();
    SF_ASSIGN_OR_RETURN(limits.iou_threshold, HostScalar<float>(*value));
    // ONNX Runtime's bound: a threshold on IoU means nothing outside [0, 1].
    SF_CHECK(limits.iou_threshold >= 0 && limits.iou_threshold <= 1,
             "input \"IouThreshold\" (variable \"%s\") is %g: expected a "
             "value within [0, 1]",
             context.InputName("IouThreshold"), limits.iou_threshold);
  }
  if (context.HasInput("ScoreThreshold")) {
    const Tensor* value = value_of("ScoreThreshold");
    if (value == nullptr) return std::optional<NmsLimits>();
    SF_ASSIGN_OR_RETURN(limits.score_threshold, HostScalar<float>(*value));
  }
  return std::optional<NmsLimits>(limits);
}

absl::Status InferNonMaxSuppression(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckBoxesAndScores(context));
  SF_RETURN_IF_ERROR(CheckLimitInputs(context));
  int64_t count = -1;
  const Tensor* boxes = context.InputValue("Boxes");
  const Tensor* scores = context.InputValue("Scores");
  SF_ASSIGN_OR_RETURN(const std::optional<NmsLimits> limits,
                      LimitsOf(context, [&context](const char* slot) {
                        return context.InputValue(slot);
                      }));
  if (boxes != nullptr && scores != nullptr && limits) {
    SF_ASSIGN_OR_RETURN(const Tensor boxes_host, OnHost(*boxes));
    SF_ASSIGN_OR_RETURN(const Tensor scores_host, OnHost(*scores));
    count = static_cast<int64_t>(
                SelectBoxes(boxes_host, scores_host,
                            context.attrs().Get<int64_t>("center_point_box"),
                            *limits)
                    .size()) /
            3;
  }
  context.SetOutput("Out", VarInfo{kInt64, {count, 3}, true});
  return absl::OkStatus();
}

absl::Status NonMaxSuppressionKernel(KernelContext& context) {
  const Tensor& boxes = context.Input("Boxes");
  const Tensor& scores = context.Input("Scores");
  SF_ASSIGN_OR_RETURN(const std::optional<NmsLimits> limits,
                      LimitsOf(context, [&context](const char* slot) {
                        return &context.Input(slot);
                      }));
  const std::vector<int64_t> selected = SelectBoxes(
      boxes, scores, context.attrs().Get<int64_t>("center_point_box"), *limits);
  Tensor* out = context.Output("Out");
  const int64_t count = static_cast<int64_t>(selected.size()) / 3;
  // Inference selected from the same values (every run: Prepare cannot
  // know the count); the kernel writes by its own selection.
  SF_CHECK_CODE(out->rank() == 2 && out->dims()[0] == count,
                absl::StatusCode::kInternal,
                "output \"Out\" (variable \"%s\") was allocated as %s for %d "
                "selected boxes",
                context.OutputName("Out"), DimsToString(out->dims()), count);
  std::copy(selected.begin(), selected.end(), out->data<int64_t>());
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(non_max_suppression)
    .Input("Boxes")
    .Input("Scores")
    .Input("MaxOutputBoxesPerClass", /*optional=*/true)
    .Input("IouThreshold", /*optional=*/true)
    .Input("ScoreThreshold", /*optional=*/true)
    .Output("Out")
    .Attr("center_point_box", AttrType::kInt64, AttrValue(int64_t{0}),
          InRange(0, 1))
    .Attr("max_output_boxes_per_class", AttrType::kInt64, AttrValue(int64_t{0}))
    .Attr("iou_threshold", AttrType::kFloat, AttrValue(0.0f), InRange(0, 1))
    .Attr("has_score_threshold", AttrType::kBool, AttrValue(false))
    .Attr("score_threshold", AttrType::kFloat, AttrValue(0.0f))
    .Infer(InferNonMaxSuppression)
    .KernelDtypeFromInput("Boxes")
    .Kernel(DeviceType::kCPU, kFloat32, &NonMaxSuppressionKernel);

}  // namespace scopeflow
