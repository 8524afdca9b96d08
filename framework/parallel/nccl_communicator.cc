#include "framework/parallel/nccl_communicator.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

#ifdef SCOPEFLOW_HAVE_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "platform/cuda_runtime.h"
#endif

namespace scopeflow {

#ifdef SCOPEFLOW_HAVE_NCCL
namespace {

absl::Status NcclError(ncclResult_t result, const char* what) {
  if (result == ncclSuccess) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("NCCL ", what, " failed: ", ncclGetErrorString(result)));
}

absl::Status CudaError(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(what, " failed: ", cudaGetErrorString(error)));
}

// Runs `collective` on the calling thread's stream of `device` and waits
// for it.
template <typename Collective>
absl::Status OnStream(int device, Collective collective, const char* what) {
  absl::Status status = CudaError(cudaSetDevice(device), "cudaSetDevice");
  if (!status.ok()) return status;
  absl::StatusOr<CudaStream> stream = CurrentCudaStream(device);
  if (!stream.ok()) return stream.status();
  status = NcclError(collective(static_cast<cudaStream_t>(*stream)), what);
  if (!status.ok()) return status;
  return SynchronizeCudaStream(device);
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(int device, int rank, int size, ncclComm_t comm)
      : device_(device), rank_(rank), size_(size), comm_(comm) {}
  ~NcclCommunicator() override { ncclCommDestroy(comm_); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  absl::Status AllReduceSum(float* data, int64_t count) override {
    return OnStream(
        device_,
        [&](cudaStream_t stream) {
          return ncclAllReduce(data, data, static_cast<size_t>(count),
                               ncclFloat32, ncclSum, comm_, stream);
        },
        "ncclAllReduce");
  }

  absl::Status Broadcast(void* data, int64_t bytes, int root) override {
    return OnStream(
        device_,
        [&](cudaStream_t stream) {
          return ncclBroadcast(data, data, static_cast<size_t>(bytes),
                               ncclUint8, root, comm_, stream);
        },
        "ncclBroadcast");
  }

 private:
  const int device_;
  const int rank_;
  const int size_;
  ncclComm_t comm_;
};

// Queues `collective(k, stream)` for every device k of `devices` in one
// NCCL group on the calling thread's streams, then waits for them all.
template <typename Collective>
absl::Status OnEveryStream(const std::vector<int>& devices,
                           Collective collective, const char* what) {
  std::vector<cudaStream_t> streams;
  for (int device : devices) {
    absl::StatusOr<CudaStream> stream = CurrentCudaStream(device);
    if (!stream.ok()) return stream.status();
    streams.push_back(static_cast<cudaStream_t>(*stream));
  }
  absl::Status status = NcclError(ncclGroupStart(), "ncclGroupStart");
  if (!status.ok()) return status;
  for (size_t k = 0; k < devices.size() && status.ok(); ++k) {
    status = CudaError(cudaSetDevice(devices[k]), "cudaSetDevice");
    if (status.ok()) status = NcclError(collective(k, streams[k]), what);
  }
  // The group is ended even after a failure, so NCCL is left usable.
  const absl::Status ended = NcclError(ncclGroupEnd(), "ncclGroupEnd");
  if (!status.ok()) return status;
  if (!ended.ok()) return ended;
  for (int device : devices) {
    status = SynchronizeCudaStream(device);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

class NcclDeviceGroupImpl final : public NcclDeviceGroup {
 public:
  NcclDeviceGroupImpl(std::vector<int> devices, std::vector<ncclComm_t> comms)
      : devices_(std::move(devices)), comms_(std::move(comms)) {}
  ~NcclDeviceGroupImpl() override {
    for (ncclComm_t comm : comms_) ncclCommDestroy(comm);
  }

  const std::vector<int>& devices() const override { return devices_; }

  absl::Status AllReduceSum(const std::vector<float*>& data,
                            int64_t count) override {
    if (data.size() != devices_.size()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("an NCCL all-reduce over %d devices got %d buffers",
                          devices_.size(), data.size()));
    }
    return OnEveryStream(
        devices_,
        [&](size_t k, cudaStream_t stream) {
          return ncclAllReduce(data[k], data[k], static_cast<size_t>(count),
                               ncclFloat32, ncclSum, comms_[k], stream);
        },
        "ncclAllReduce");
  }

  absl::Status Broadcast(const std::vector<void*>& data, int64_t bytes,
                         int root) override {
    if (data.size() != devices_.size() || root < 0 ||
        root >= static_cast<int>(devices_.size())) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "an NCCL broadcast over %d devices got %d buffers and root %d",
          devices_.size(), data.size(), root));
    }
    return OnEveryStream(
        devices_,
        [&](size_t k, cudaStream_t stream) {
          return ncclBroadcast(data[k], data[k], static_cast<size_t>(bytes),
                               ncclUint8, root, comms_[k], stream);
        },
        "ncclBroadcast");
  }

 private:
  const std::vector<int> devices_;
  std::vector<ncclComm_t> comms_;
};

}  // namespace

bool NcclAvailable() { return true; }

absl::StatusOr<std::unique_ptr<NcclDeviceGroup>> NewNcclDeviceGroup(
    const std::vector<int>& devices) {
  const int count = CudaDeviceCount();
  std::set<int> seen;
  for (int device : devices) {
    if (device < 0 || device >= count) {
      return absl::FailedPreconditionError(
          absl::StrFormat("NCCL on cuda:%d: this process sees %d CUDA device%s",
                          device, count, count == 1 ? "" : "s"));
    }
    if (!seen.insert(device).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "NCCL over devices ", absl::StrJoin(devices, ","), ": cuda:", device,
          " is given twice (one rank per device)"));
    }
  }
  if (devices.empty()) {
    return absl::InvalidArgumentError("NCCL over no device");
  }
  std::vector<ncclComm_t> comms(devices.size(), nullptr);
  absl::Status status =
      NcclError(ncclCommInitAll(comms.data(), static_cast<int>(devices.size()),
                                devices.data()),
                "ncclCommInitAll");
  if (!status.ok()) return status;
  return std::unique_ptr<NcclDeviceGroup>(
      new NcclDeviceGroupImpl(devices, std::move(comms)));
}

absl::StatusOr<std::unique_ptr<Communicator>> NewNcclCommunicator(
    int device, Communicator* bootstrap) {
  const int devices = CudaDeviceCount();
  if (device < 0 || device >= devices) {
    return absl::FailedPreconditionError(
        absl::StrFormat("NCCL on cuda:%d: this process sees %d CUDA device%s",
                        device, devices, devices == 1 ? "" : "s"));
  }
  const int rank = bootstrap != nullptr ? bootstrap->rank() : 0;
  const int size = bootstrap != nullptr ? bootstrap->size() : 1;
  ncclUniqueId id;
  if (rank == 0) {
    absl::Status status = NcclError(ncclGetUniqueId(&id), "ncclGetUniqueId");
    if (!status.ok()) return status;
  }
  if (size > 1) {
    absl::Status status = bootstrap->Broadcast(&id, sizeof(id), 0);
    if (!status.ok()) return status;
  }
  absl::Status status = CudaError(cudaSetDevice(device), "cudaSetDevice");
  if (!status.ok()) return status;
  ncclComm_t comm = nullptr;
  status =
      NcclError(ncclCommInitRank(&comm, size, id, rank), "ncclCommInitRank");
  if (!status.ok()) return status;
  return std::unique_ptr<Communicator>(
      new NcclCommunicator(device, rank, size, comm));
}

#else  // !SCOPEFLOW_HAVE_NCCL

bool NcclAvailable() { return false; }

absl::StatusOr<std::unique_ptr<NcclDeviceGroup>> NewNcclDeviceGroup(
    const std::vector<int>& devices) {
  return absl::UnimplementedError(absl::StrCat(
      "NCCL over cuda:", absl::StrJoin(devices, ",cuda:"),
      ": this build has no GPU code (no CUDA toolkit was found at build "
      "time, or --config=cpu_only was given)"));
}

absl::StatusOr<std::unique_ptr<Communicator>> NewNcclCommunicator(
    int device, Communicator* /*bootstrap*/) {
  return absl::UnimplementedError(absl::StrCat(
      "NCCL on cuda:", device,
      ": this build has no GPU code (no CUDA toolkit was found at build "
      "time, or --config=cpu_only was given)"));
}

#endif  // SCOPEFLOW_HAVE_NCCL

}  // namespace scopeflow
