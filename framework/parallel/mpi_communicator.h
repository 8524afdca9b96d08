// MpiCommunicator: Communicator over MPI (Debian's Open MPI), for
// `mpirun -np N scopeflow train ... --distributed=mpi`.
#ifndef SCOPEFLOW_FRAMEWORK_PARALLEL_MPI_COMMUNICATOR_H_
#define SCOPEFLOW_FRAMEWORK_PARALLEL_MPI_COMMUNICATOR_H_

#include <memory>

#include "absl/status/statusor.h"
#include "framework/parallel/communicator.h"

namespace scopeflow {

// Whether this build links MPI (tools/setup.sh installs libopenmpi-dev; the
// build finds it through pkg-config).
bool MpiAvailable();

// Initialises MPI (once per process: MPI cannot be initialised again after
// it is finalised) and returns a communicator over MPI_COMM_WORLD. Its
// destructor finalises MPI. Errors: a build without MPI, or MPI_Init
// failing. Collectives must be called from the thread that created it.
absl::StatusOr<std::unique_ptr<Communicator>> NewMpiCommunicator();

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PARALLEL_MPI_COMMUNICATOR_H_
