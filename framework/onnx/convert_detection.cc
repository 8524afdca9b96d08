// Converters of ONNX's detection ops: NonMaxSuppression (opset 10; 11
// only widened the tensors' types) and RoiAlign (opsets 10 and 16).
#include <cstdint>
#include <string>
#include <vector>

#include "framework/onnx/converters.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// The optional inputs 2 to 4 (max_output_boxes_per_class, iou_threshold,
// score_threshold) become attributes when constant, else inputs of
// non_max_suppression read at run time. An absent one keeps ONNX's
// default: no boxes, IoU threshold 0, no score threshold.
absl::Status ConvertNonMaxSuppression(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t center_point_box,
                      context.IntAttr("center_point_box", 0));
  SF_CHECK(center_point_box == 0 || center_point_box == 1,
           "attribute \"center_point_box\" is %d: expected 0 or 1",
           center_point_box);
  SF_ASSIGN_OR_RETURN(const std::string boxes, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string scores, context.Input(1));
  OpBuilder op("non_max_suppression");
  op.In("Boxes", boxes)
      .In("Scores", scores)
      .Out("Out", context.Output(0))
      .Attr("center_point_box", center_point_box);
  if (context.HasInput(2)) {
    if (context.IsConstant(2)) {
      // Read as integers: exporters write "no limit" as INT64_MAX, which a
      // double would not hold.
      SF_ASSIGN_OR_RETURN(const std::vector<int64_t> max_boxes,
                          context.ConstantInts(2, "it gives the limit"));
      SF_CHECK(max_boxes.size() == 1,
               "input 2 (max_output_boxes_per_class) holds %d values: "
               "expected one",
               max_boxes.size());
      op.Attr("max_output_boxes_per_class", max_boxes[0]);
    } else {
      SF_ASSIGN_OR_RETURN(const std::string max_boxes, context.Input(2));
      op.In("MaxOutputBoxesPerClass", max_boxes);
    }
  }
  if (context.HasInput(3)) {
    if (context.IsConstant(3)) {
      SF_ASSIGN_OR_RETURN(const double iou,
                          context.ConstantScalar(3, "it gives the threshold"));
      SF_CHECK(iou >= 0 && iou <= 1,
               "input 3 (iou_threshold) is %g: expected a value within "
               "[0, 1]",
               iou);
      op.Attr("iou_threshold", static_cast<float>(iou));
    } else {
      SF_ASSIGN_OR_RETURN(const std::string iou, context.Input(3));
      op.In("IouThreshold", iou);
    }
  }
  if (context.HasInput(4)) {
    if (context.IsConstant(4)) {
      SF_ASSIGN_OR_RETURN(const double score,
                          context.ConstantScalar(4, "it gives the threshold"));
      op.Attr("has_score_threshold", true)
          .Attr("score_threshold", static_cast<float>(score));
    } else {
      SF_ASSIGN_OR_RETURN(const std::string score, context.Input(4));
      op.In("ScoreThreshold", score);
    }
  }
  return context.Emit(op);
}

// RoiAlign: opset 16 added "coordinate_transformation_mode" (default
// half_pixel); before it the regions were unshifted, output_half_pixel.
absl::Status ConvertRoiAlign(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string mode,
                      context.StringAttr("mode", "avg"));
  SF_ASSIGN_OR_RETURN(const int64_t output_height,
                      context.IntAttr("output_height", 1));
  SF_ASSIGN_OR_RETURN(const int64_t output_width,
                      context.IntAttr("output_width", 1));
  SF_ASSIGN_OR_RETURN(const int64_t sampling_ratio,
                      context.IntAttr("sampling_ratio", 0));
  SF_ASSIGN_OR_RETURN(const float spatial_scale,
                      context.FloatAttr("spatial_scale", 1.0f));
  std::string transform = "output_half_pixel";
  if (context.opset() >= 16) {
    SF_ASSIGN_OR_RETURN(
        transform,
        context.StringAttr("coordinate_transformation_mode", "half_pixel"));
  }
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string rois, context.Input(1));
  SF_ASSIGN_OR_RETURN(const std::string batch_indices, context.Input(2));
  return context.Emit(OpBuilder("roi_align")
                          .In("X", x)
                          .In("Rois", rois)
                          .In("BatchIndices", batch_indices)
                          .Out("Out", context.Output(0))
                          .Attr("mode", mode)
                          .Attr("output_height", output_height)
                          .Attr("output_width", output_width)
                          .Attr("sampling_ratio", sampling_ratio)
                          .Attr("spatial_scale", spatial_scale)
                          .Attr("coordinate_transformation_mode", transform));
}

}  // namespace

void AddDetectionConverters(ConverterMap& map) {
  map["NonMaxSuppression"] = &ConvertNonMaxSuppression;
  map["RoiAlign"] = &ConvertRoiAlign;
}

}  // namespace onnx_import
}  // namespace scopeflow
