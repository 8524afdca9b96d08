// Communicator: the collective operations data-parallel training needs
// between processes (the replicas of one process sum their gradients in
// memory; processes sum theirs through this). MpiCommunicator
// (mpi_communicator.h) implements it over MPI.
#ifndef SCOPEFLOW_FRAMEWORK_PARALLEL_COMMUNICATOR_H_
#define SCOPEFLOW_FRAMEWORK_PARALLEL_COMMUNICATOR_H_

#include <cstdint>

#include "absl/status/status.h"

namespace scopeflow {

// Every process of the group calls each collective, in the same order,
// with the same counts. Thread safety: one thread of each process calls
// the collectives (implementations may require it to be the thread that
// created the communicator).
class Communicator {
 public:
  virtual ~Communicator() = default;

  // This process's index in [0, size()).
  virtual int rank() const = 0;
  // The processes in the group.
  virtual int size() const = 0;

  // Replaces data[0, count) in every process by its sum over the
  // processes.
  virtual absl::Status AllReduceSum(float* data, int64_t count) = 0;

  // Copies `bytes` bytes at `data` of process `root` to `data` of every
  // other process.
  virtual absl::Status Broadcast(void* data, int64_t bytes, int root) = 0;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PARALLEL_COMMUNICATOR_H_
