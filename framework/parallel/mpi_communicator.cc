#include "framework/parallel/mpi_communicator.h"

#include <climits>

#include "absl/strings/str_cat.h"

#ifdef SCOPEFLOW_HAVE_MPI
#include <mpi.h>
#endif

namespace scopeflow {

#ifdef SCOPEFLOW_HAVE_MPI
namespace {

absl::Status MpiError(int code, const char* what) {
  if (code == MPI_SUCCESS) return absl::OkStatus();
  char message[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, message, &length);
  return absl::InternalError(
      absl::StrCat("MPI ", what, " failed: ", std::string(message, length)));
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(int rank, int size) : rank_(rank), size_(size) {}
  ~MpiCommunicator() override { MPI_Finalize(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  absl::Status AllReduceSum(float* data, int64_t count) override {
    // MPI counts are ints: large buffers go in pieces.
    for (int64_t done = 0; done < count;) {
      const int piece =
          static_cast<int>(std::min<int64_t>(count - done, INT_MAX));
      absl::Status status =
          MpiError(MPI_Allreduce(MPI_IN_PLACE, data + done, piece, MPI_FLOAT,
                                 MPI_SUM, MPI_COMM_WORLD),
                   "MPI_Allreduce");
      if (!status.ok()) return status;
      done += piece;
    }
    return absl::OkStatus();
  }

  absl::Status Broadcast(void* data, int64_t bytes, int root) override {
    char* bytes_at = static_cast<char*>(data);
    for (int64_t done = 0; done < bytes;) {
      const int piece =
          static_cast<int>(std::min<int64_t>(bytes - done, INT_MAX));
      absl::Status status = MpiError(
          MPI_Bcast(bytes_at + done, piece, MPI_BYTE, root, MPI_COMM_WORLD),
          "MPI_Bcast");
      if (!status.ok()) return status;
      done += piece;
    }
    return absl::OkStatus();
  }

 private:
  const int rank_;
  const int size_;
};

}  // namespace

bool MpiAvailable() { return true; }

absl::StatusOr<std::unique_ptr<Communicator>> NewMpiCommunicator() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (initialized != 0 || finalized != 0) {
    return absl::FailedPreconditionError(
        "MPI is already initialised in this process: create one MPI "
        "communicator per process");
  }
  // Only the thread that initialises MPI calls it, but the replicas' threads
  // run beside it (MPI_THREAD_SINGLE would promise there are none).
  int provided = MPI_THREAD_SINGLE;
  absl::Status status = MpiError(
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided),
      "MPI_Init_thread");
  if (!status.ok()) return status;
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    return absl::FailedPreconditionError(
        "this MPI does not let a process with several threads call it from "
        "one of them (MPI_THREAD_FUNNELED)");
  }
  // Errors come back as codes rather than aborting every process.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::unique_ptr<Communicator>(new MpiCommunicator(rank, size));
}

#else  // !SCOPEFLOW_HAVE_MPI

bool MpiAvailable() { return false; }

absl::StatusOr<std::unique_ptr<Communicator>> NewMpiCommunicator() {
  return absl::UnimplementedError(
      "this build has no MPI: install libopenmpi-dev and openmpi-bin "
      "(tools/setup.sh does) and build again");
}

#endif  // SCOPEFLOW_HAVE_MPI

}  // namespace scopeflow
