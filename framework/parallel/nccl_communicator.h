// NcclCommunicator: Communicator over NCCL (which ships with the CUDA
// toolkit), for data-parallel training on CUDA devices: one rank per
// process, each on its own device, summing float32 buffers in that
// device's memory. The replicas a process runs on its device sum their
// gradients there first (device_gradient_sum.h); the ranks then sum theirs
// through this, as MpiCommunicator does for host buffers.
#ifndef SCOPEFLOW_FRAMEWORK_PARALLEL_NCCL_COMMUNICATOR_H_
#define SCOPEFLOW_FRAMEWORK_PARALLEL_NCCL_COMMUNICATOR_H_

#include <memory>

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

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PARALLEL_NCCL_COMMUNICATOR_H_
