// NcclCommunicator: Communicator over NCCL (which ships with the CUDA
// toolkit), for data-parallel training on CUDA devices: one rank per
// process, each on its own device, summing float32 buffers in that
// device's memory. The replicas a process runs on its device sum their
// gradients there first (device_gradient_sum.h); the ranks then sum theirs
// through this, as MpiCommunicator does for host buffers.
#ifndef SCOPEFLOW_FRAMEWORK_PARALLEL_NCCL_COMMUNICATOR_H_
#define SCOPEFLOW_FRAMEWORK_PARALLEL_NCCL_COMMUNICATOR_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/parallel/communicator.h"

namespace scopeflow {

// Whether this build links NCCL (a build with GPU code).
bool NcclAvailable();

// A communicator of this process's rank on CUDA device `device`. With no
// `bootstrap` (or one of one process) it is the only rank; otherwise
// `bootstrap` (not owned, used only here; e.g. an MpiCommunicator) has
// every process call this at once, and its rank and size become the NCCL
// ranks', rank 0's NCCL id broadcast over it. Errors: a build without GPU
// code, no such device, NCCL failing to initialise.
//
// The communicator's collectives take device memory on `device`, which
// must hold its final values (the streams writing it synchronised); they
// run on the calling thread's stream of the device and return once done.
// One thread at a time calls them, in the same order in every process.
absl::StatusOr<std::unique_ptr<Communicator>> NewNcclCommunicator(
    int device, Communicator* bootstrap = nullptr);

// The CUDA devices of one process as NCCL ranks (ncclCommInitAll): data-
// parallel replicas on several devices of one machine sum their gradients
// through it, one thread driving every device.
//
// Ownership: owns one NCCL communicator per device. Thread safety: one
// thread at a time calls the collectives; they run on the calling thread's
// stream of each device (in stream order after the work that thread queued
// there) and return once done.
class NcclDeviceGroup {
 public:
  virtual ~NcclDeviceGroup() = default;

  // The devices, in rank order.
  virtual const std::vector<int>& devices() const = 0;

  // data[k]: `count` floats on devices()[k]; each becomes their sum over
  // the devices.
  virtual absl::Status AllReduceSum(const std::vector<float*>& data,
                                    int64_t count) = 0;

  // data[k]: `bytes` bytes on devices()[k]; each becomes data[root]'s.
  virtual absl::Status Broadcast(const std::vector<void*>& data, int64_t bytes,
                                 int root) = 0;
};

// A group of `devices` (distinct, each one this process sees). Errors: a
// build without GPU code, a device out of range or given twice, NCCL
// failing to initialise.
absl::StatusOr<std::unique_ptr<NcclDeviceGroup>> NewNcclDeviceGroup(
    const std::vector<int>& devices);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PARALLEL_NCCL_COMMUNICATOR_H_
