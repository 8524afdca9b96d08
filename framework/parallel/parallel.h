// Parallel: a pool of N replica workers taking work items (Put) and handing
// back their results (Get), the C++ shape of GluonNLP's `Parallel`. Data-
// parallel training puts one shard of a batch per replica and gets the
// replicas' gradients back; users can run their own per-replica work the
// same way.
//
//   Parallel<Dataset, Gradients> pool(
//       2, [&](int replica, Dataset shard) { return Step(replica, shard); });
//   pool.Put(shard0);            // to replica 0
//   pool.Put(shard1);            // to replica 1
//   auto first = pool.Get();     // replica 0's result
//   auto second = pool.Get();    // replica 1's result
#ifndef SCOPEFLOW_FRAMEWORK_PARALLEL_PARALLEL_H_
#define SCOPEFLOW_FRAMEWORK_PARALLEL_PARALLEL_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "framework/parallel/worker_threads.h"

namespace scopeflow {

// Item k put (counting from 0) goes to replica k % num_workers, so that
// each round of num_workers Puts hands every replica one item, and a
// replica's items run one after another on its own thread, in the order
// put. Get returns results in the order their items were put, whichever
// replica finished first, so a caller combining them sees a fixed order.
//
// With `serial_first_call`, the first round of items runs on the thread
// calling Put, one after another, before Put returns: work that
// initialises shared state lazily on its first call (a cache, a lazily
// created variable) does so once, without racing; later rounds run on the
// workers.
//
// Errors: a work item's error comes back from its Get, prefixed with
// "replica r: "; the other items still run and their results stay to be
// got. Work must report errors as a status, never throw.
//
// Ownership: owns the work function and its worker threads. The destructor
// waits for every item put (got or not) to finish, then joins every worker:
// no thread outlives the pool, so work may refer to objects that outlive
// it.
//
// Thread safety: Put and Get are for one thread at a time (the thread
// driving the replicas); the work function runs on up to num_workers
// threads at once, each call with its own replica index, and must be safe
// for that.
template <typename Input, typename Output>
class Parallel {
 public:
  using Work = std::function<absl::StatusOr<Output>(int replica, Input input)>;

  Parallel(int num_workers, Work work, bool serial_first_call = false)
      : num_workers_(num_workers < 1 ? 1 : num_workers),
        work_(std::move(work)),
        serial_left_(serial_first_call ? num_workers_ : 0),
        state_(std::make_shared<State>()),
        workers_(std::make_unique<WorkerThreads>(num_workers_)) {}

  ~Parallel() { workers_.reset(); }

  Parallel(const Parallel&) = delete;
  Parallel& operator=(const Parallel&) = delete;

  int num_workers() const { return num_workers_; }

  // The replica the next Put goes to.
  int next_replica() const { return static_cast<int>(put_ % num_workers_); }

  void Put(Input input) {
    const int64_t item = put_++;
    const int replica = static_cast<int>(item % num_workers_);
    if (serial_left_ > 0) {
      --serial_left_;
      Finish(*state_, item, replica, work_(replica, std::move(input)));
      return;
    }
    std::shared_ptr<State> state = state_;
    const Work* work = &work_;
    // std::function needs a copyable callable: the input travels in a
    // shared_ptr so that move-only inputs work too.
    auto held = std::make_shared<Input>(std::move(input));
    workers_->Submit(replica, [state, work, item, replica, held] {
      Finish(*state, item, replica, (*work)(replica, std::move(*held)));
    });
  }

  // The result of the oldest item put and not yet got, waiting for it.
  // FailedPrecondition when every item put has been got.
  absl::StatusOr<Output> Get() {
    if (got_ == put_) {
      return absl::FailedPreconditionError(
          "Parallel::Get: no item is outstanding (every item put has been "
          "got)");
    }
    const int64_t item = got_++;
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->done.wait(lock, [&] { return state_->results.count(item) > 0; });
    auto found = state_->results.find(item);
    absl::StatusOr<Output> result = std::move(found->second);
    state_->results.erase(found);
    return result;
  }

  // Items put and not yet got.
  int64_t outstanding() const { return put_ - got_; }

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable done;
    std::map<int64_t, absl::StatusOr<Output>> results;
  };

  static void Finish(State& state, int64_t item, int replica,
                     absl::StatusOr<Output> result) {
    if (!result.ok()) {
      const absl::Status& error = result.status();
      result = absl::Status(error.code(), absl::StrCat("replica ", replica,
                                                       ": ", error.message()));
    }
    std::lock_guard<std::mutex> lock(state.mutex);
    state.results.emplace(item, std::move(result));
    state.done.notify_all();
  }

  const int num_workers_;
  const Work work_;
  int serial_left_;
  int64_t put_ = 0;
  int64_t got_ = 0;
  std::shared_ptr<State> state_;
  // Last, so that it is destroyed (its threads joined) before the rest.
  std::unique_ptr<WorkerThreads> workers_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PARALLEL_PARALLEL_H_
