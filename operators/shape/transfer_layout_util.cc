#include "operators/shape/transfer_layout_util.h"

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "operators/channel_blocks.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace shape_util {

absl::StatusOr<ImageFormat> ImageFormatAttr(const Attributes& attrs,
                                            absl::string_view attr) {
  const std::string& name = attrs.Get<std::string>(attr);
  const std::optional<ImageFormat> format = ImageFormatNamed(name);
  if (format.has_value()) return *format;
  return absl::InvalidArgumentError(
      absl::StrFormat("attribute \"%s\" must be one of %s, got \"%s\"", attr,
                      absl::StrJoin(ImageFormatNames(), ", "), name));
}

absl::StatusOr<TransferBox> KernelTransferBox(const KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const ImageFormat src,
                      ImageFormatAttr(context.attrs(), "src_format"));
  SF_ASSIGN_OR_RETURN(const ImageFormat dst,
                      ImageFormatAttr(context.attrs(), "dst_format"));
  return TransferBoxOf(ImageSizesOf(context.Input("X").dims(), src), src, dst);
}

}  // namespace shape_util
}  // namespace scopeflow
