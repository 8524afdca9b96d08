#include "framework/tensor.h"

#include <cstdint>
#include <numeric>

#include "framework/tensor_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/cuda_runtime.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tensor Iota(Dims dims) {
  Tensor t;
  EXPECT_TRUE(t.Allocate(CPUPlace(), kFloat32, std::move(dims)).ok());
  std::iota(t.data<float>(), t.data<float>() + t.numel(), 0.0f);
  return t;
}

TEST(TensorTest, DefaultIsEmpty) {
  Tensor t;
  EXPECT_FALSE(t.initialized());
  EXPECT_EQ(t.numel(), 0);
  EXPECT_EQ(t.raw_data(), nullptr);
  EXPECT_EQ(t.place(), CPUPlace());
}

TEST(TensorTest, AllocateSetsShapeDtypePlace) {
  Tensor t;
  ASSERT_TRUE(t.Allocate(CPUPlace(), kInt64, {2, 3, 4}).ok());
  EXPECT_TRUE(t.initialized());
  EXPECT_THAT(t.dims(), ElementsAre(2, 3, 4));
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.dim(-1), 4);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.nbytes(), 24 * 8);
  EXPECT_EQ(t.dtype(), kInt64);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % kAllocationAlignment,
            0);
  EXPECT_EQ(t.DebugString(), "Tensor<int64, [2, 3, 4], cpu>");
}

TEST(TensorTest, ScalarHasOneElement) {
  Tensor t;
  ASSERT_TRUE(t.Allocate(CPUPlace(), kFloat64, {}).ok());
  EXPECT_EQ(t.numel(), 1);
  EXPECT_EQ(t.rank(), 0);
}

TEST(TensorTest, AllocateReusesAnUnsharedBufferThatFits) {
  Tensor t = Iota({4, 4});
  void* first = t.raw_data();
  ASSERT_TRUE(t.Allocate(CPUPlace(), kFloat32, {2, 8}).ok());
  EXPECT_EQ(t.raw_data(), first);
  ASSERT_TRUE(t.Allocate(CPUPlace(), kFloat32, {3}).ok());
  EXPECT_EQ(t.raw_data(), first);

  // A shared buffer is never reused: the view must keep its values.
  Tensor view;
  view.ShareBufferWith(t);
  ASSERT_TRUE(t.Allocate(CPUPlace(), kFloat32, {3}).ok());
  EXPECT_NE(t.raw_data(), first);
  EXPECT_EQ(view.raw_data(), first);
}

TEST(TensorTest, AllocateErrors) {
  Tensor t;
  absl::Status negative = t.Allocate(CPUPlace(), kFloat32, {2, -1});
  EXPECT_EQ(negative.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(negative.message(), HasSubstr("negative dimension"));
  EXPECT_THAT(negative.message(), HasSubstr("[2, -1]"));

  absl::Status bad_dtype = t.Allocate(CPUPlace(), DATA_TYPE_UNSPECIFIED, {2});
  EXPECT_THAT(bad_dtype.message(), HasSubstr("dtype unspecified"));

  absl::Status huge = t.Allocate(CPUPlace(), kFloat32, {1 << 30, 1 << 30, 64});
  EXPECT_THAT(huge.message(), HasSubstr("too many elements"));
  // Elements that fit in int64 but whose bytes do not fit in size_t.
  absl::Status huge_bytes =
      t.Allocate(CPUPlace(), kFloat64, {int64_t{1} << 60, 4});
  EXPECT_THAT(huge_bytes.message(), HasSubstr("too many bytes"));
  // A zero dimension after others still checks each for overflow.
  absl::Status zero_after_huge =
      t.Allocate(CPUPlace(), kFloat32, {int64_t{1} << 62, 4, 0});
  EXPECT_THAT(zero_after_huge.message(), HasSubstr("too many elements"));

  absl::Status no_device =
      t.Allocate(CUDAPlace(CudaDeviceCount()), kFloat32, {2});
  EXPECT_EQ(no_device.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(no_device.message(), HasSubstr("is not available"));
  EXPECT_FALSE(t.initialized());
}

TEST(TensorTest, ShareBufferWithMakesAView) {
  Tensor a = Iota({2, 3});
  Tensor b;
  b.ShareBufferWith(a);
  EXPECT_TRUE(b.SharesBufferWith(a));
  EXPECT_THAT(b.dims(), ElementsAre(2, 3));
  b.data<float>()[4] = 42.0f;
  EXPECT_EQ(a.data<float>()[4], 42.0f);
}

TEST(TensorTest, SliceSharesRowsWithoutCopying) {
  Tensor t = Iota({4, 3});
  absl::StatusOr<Tensor> rows = t.Slice(1, 3);
  ASSERT_TRUE(rows.ok());
  EXPECT_THAT(rows->dims(), ElementsAre(2, 3));
  EXPECT_EQ(rows->numel(), 6);
  EXPECT_TRUE(rows->SharesBufferWith(t));
  EXPECT_EQ(rows->data<float>()[0], 3.0f);
  EXPECT_EQ(rows->data<float>()[5], 8.0f);
  rows->data<float>()[0] = -1.0f;
  EXPECT_EQ(t.data<float>()[3], -1.0f);

  // A slice of a slice.
  absl::StatusOr<Tensor> inner = rows->Slice(1, 2);
  ASSERT_TRUE(inner.ok());
  EXPECT_EQ(inner->data<float>()[0], 6.0f);

  absl::StatusOr<Tensor> empty = t.Slice(2, 2);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->numel(), 0);
}

TEST(TensorTest, SliceErrors) {
  Tensor t = Iota({4, 3});
  for (auto [begin, end] :
       {std::pair<int64_t, int64_t>{-1, 2}, {3, 2}, {0, 5}}) {
    absl::StatusOr<Tensor> bad = t.Slice(begin, end);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(bad.status().message(), HasSubstr("cannot slice rows"));
  }
  Tensor scalar;
  ASSERT_TRUE(scalar.Allocate(CPUPlace(), kFloat32, {}).ok());
  EXPECT_THAT(scalar.Slice(0, 0).status().message(), HasSubstr("scalar"));
}

TEST(TensorTest, ReshapeKeepsTheBuffer) {
  Tensor t = Iota({2, 6});
  void* data = t.raw_data();
  ASSERT_TRUE(t.Reshape({3, -1}).ok());
  EXPECT_THAT(t.dims(), ElementsAre(3, 4));
  EXPECT_EQ(t.raw_data(), data);
  EXPECT_THAT(t.Reshape({5, 2}).message(), HasSubstr("12 elements"));
  EXPECT_THAT(t.Reshape({-1, -1}).message(), HasSubstr("more than one"));
  EXPECT_THAT(t.Reshape({5, -1}).message(), HasSubstr("divide evenly"));
  EXPECT_THAT(t.dims(), ElementsAre(3, 4));
}

TEST(TensorTest, CopyToIsDeep) {
  Tensor t = Iota({3, 2});
  absl::StatusOr<Tensor> copy = t.CopyTo(CPUPlace());
  ASSERT_TRUE(copy.ok());
  EXPECT_FALSE(copy->SharesBufferWith(t));
  EXPECT_THAT(copy->dims(), ElementsAre(3, 2));
  t.data<float>()[0] = 100.0f;
  EXPECT_EQ(copy->data<float>()[0], 0.0f);
  EXPECT_EQ(copy->data<float>()[5], 5.0f);

  // Copying a slice copies only its rows.
  absl::StatusOr<Tensor> row = t.Slice(2, 3);
  absl::StatusOr<Tensor> row_copy = row->CopyTo(CPUPlace());
  ASSERT_TRUE(row_copy.ok());
  EXPECT_EQ(row_copy->numel(), 2);
  EXPECT_EQ(row_copy->data<float>()[1], 5.0f);
}

TEST(TensorTest, CopyToUnavailablePlaceIsAnError) {
  Tensor t = Iota({2});
  absl::StatusOr<Tensor> copy = t.CopyTo(CUDAPlace(CudaDeviceCount()));
  ASSERT_FALSE(copy.ok());
  EXPECT_THAT(copy.status().message(), HasSubstr("is not available"));
}

TEST(TensorTest, CopyToCudaAndBack) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device present";
  Tensor t = Iota({5, 7});
  absl::StatusOr<Tensor> on_gpu = t.CopyTo(CUDAPlace(0));
  ASSERT_TRUE(on_gpu.ok());
  EXPECT_EQ(on_gpu->place(), CUDAPlace(0));
  absl::StatusOr<Tensor> back = on_gpu->CopyTo(CPUPlace());
  ASSERT_TRUE(back.ok());
  for (int i = 0; i < 35; ++i) EXPECT_EQ(back->data<float>()[i], i);
}

TEST(TensorTest, TypedDataChecksTheDtype) {
  Tensor t = Iota({2});
  EXPECT_TRUE(t.typed_data<float>().ok());
  absl::StatusOr<int32_t*> wrong = t.typed_data<int32_t>();
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.status().message(),
              HasSubstr("expected a tensor of dtype int32, got "
                        "Tensor<float32, [2], cpu>"));
  Tensor empty;
  ASSERT_TRUE(empty.Allocate(CPUPlace(), kFloat32, {0}).ok());
  EXPECT_TRUE(empty.CheckType(kFloat32).ok());
}

TEST(TensorTest, FromExternalViewsTheCallersMemory) {
  float values[6] = {1, 2, 3, 4, 5, 6};
  int released = 0;
  {
    absl::StatusOr<Tensor> t = Tensor::FromExternal(
        values, kFloat32, {2, 3}, CPUPlace(), [&released] { ++released; });
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->raw_data(), values);
    EXPECT_THAT(t->dims(), ElementsAre(2, 3));
    EXPECT_EQ(t->numel(), 6);
    EXPECT_EQ(t->nbytes(), sizeof(values));
    t->data<float>()[5] = 60;
    EXPECT_EQ(values[5], 60);
    absl::StatusOr<Tensor> row = t->Slice(1, 2);
    ASSERT_TRUE(row.ok());
    EXPECT_EQ(row->data<float>()[0], 4);
    absl::StatusOr<Tensor> copy = t->CopyTo(CPUPlace());
    ASSERT_TRUE(copy.ok());
    EXPECT_NE(copy->raw_data(), values);
    EXPECT_EQ(copy->data<float>()[5], 60);
    Tensor view = *t;
    t = Tensor();
    EXPECT_EQ(released, 0);  // `view` and `row` still see the memory.
    view = Tensor();
    EXPECT_EQ(released, 0);
  }
  EXPECT_EQ(released, 1);
}

TEST(TensorTest, FromExternalOfNoElementsStillReleases) {
  int released = 0;
  {
    absl::StatusOr<Tensor> t = Tensor::FromExternal(
        nullptr, kInt64, {0, 4}, CPUPlace(), [&released] { ++released; });
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->numel(), 0);
  }
  EXPECT_EQ(released, 1);
}

TEST(TensorTest, FromExternalRejectsBadArguments) {
  float value = 0;
  int released = 0;
  auto release = [&released] { ++released; };
  absl::StatusOr<Tensor> t =
      Tensor::FromExternal(&value, kFloat32, {2, -1}, CPUPlace(), release);
  EXPECT_THAT(t.status().message(),
              HasSubstr("tensor of shape [2, -1]: negative dimension"));
  t = Tensor::FromExternal(nullptr, kFloat32, {2}, CPUPlace(), release);
  EXPECT_THAT(t.status().message(),
              HasSubstr("tensor of shape [2]: the address is null"));
  t = Tensor::FromExternal(&value, DATA_TYPE_UNSPECIFIED, {1}, CPUPlace(),
                           release);
  EXPECT_THAT(t.status().message(),
              HasSubstr("cannot wrap external memory as a tensor of dtype"));
  EXPECT_EQ(released, 0);
}

TEST(TensorProtoTest, RoundTrip) {
  Tensor t;
  ASSERT_TRUE(t.Allocate(CPUPlace(), kInt32, {2, 2}).ok());
  for (int i = 0; i < 4; ++i) t.data<int32_t>()[i] = i - 2;
  absl::StatusOr<TensorProto> proto = TensorToProto(t);
  ASSERT_TRUE(proto.ok());
  EXPECT_EQ(proto->dtype(), kInt32);
  EXPECT_THAT(proto->dims(), ElementsAre(2, 2));
  EXPECT_EQ(proto->data().size(), 16);
  // Little-endian: -2 is fe ff ff ff.
  EXPECT_EQ(static_cast<uint8_t>(proto->data()[0]), 0xfe);
  absl::StatusOr<Tensor> back = TensorFromProto(*proto);
  ASSERT_TRUE(back.ok());
  EXPECT_THAT(back->dims(), ElementsAre(2, 2));
  EXPECT_EQ(back->data<int32_t>()[3], 1);
}

TEST(TensorProtoTest, RejectsInconsistentProtos) {
  TensorProto proto;
  proto.set_name("w");
  proto.set_dtype(kFloat32);
  proto.add_dims(3);
  proto.set_data(std::string(8, '\0'));
  absl::StatusOr<Tensor> short_data = TensorFromProto(proto);
  ASSERT_FALSE(short_data.ok());
  EXPECT_THAT(short_data.status().message(),
              HasSubstr("tensor \"w\": float32 of [3] needs 12 bytes of data, "
                        "found 8"));
  proto.set_dtype(DATA_TYPE_UNSPECIFIED);
  EXPECT_THAT(TensorFromProto(proto).status().message(),
              HasSubstr("invalid dtype"));
  proto.set_dtype(kFloat32);
  proto.set_dims(0, -3);
  EXPECT_THAT(TensorFromProto(proto).status().message(),
              HasSubstr("negative dimension"));
  // A byte an element for uint2 (framework/small_types.h); 4 is none.
  proto.set_dtype(kUInt2);
  proto.set_dims(0, 3);
  proto.set_data(std::string("\x03\x00\x04", 3));
  EXPECT_THAT(
      TensorFromProto(proto).status().message(),
      HasSubstr("tensor \"w\": element 2 is byte 0x04, no uint2 value"));
  proto.set_data(std::string("\x03\x00\x01", 3));
  absl::StatusOr<Tensor> uint2 = TensorFromProto(proto);
  ASSERT_TRUE(uint2.ok()) << uint2.status();
  EXPECT_EQ(uint2->data<quint2>()[0].value, 3);
  EXPECT_EQ(uint2->data<quint2>()[2].value, 1);
}

}  // namespace
}  // namespace scopeflow
