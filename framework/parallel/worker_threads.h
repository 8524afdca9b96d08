// WorkerThreads: N threads, each running the tasks queued for it in the
// order they were queued. The engine under Parallel (parallel.h); it knows
// nothing of inputs, results or errors.
#ifndef SCOPEFLOW_FRAMEWORK_PARALLEL_WORKER_THREADS_H_
#define SCOPEFLOW_FRAMEWORK_PARALLEL_WORKER_THREADS_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace scopeflow {

// Ownership: owns its threads; the destructor runs every task already
// queued, then joins them all, so no thread outlives the object.
//
// Thread safety: Submit may be called from any number of threads at once;
// the destructor must not race with Submit. Tasks of one worker run one
// after another on that worker's thread; tasks of different workers run
// at once. Uses std::mutex (not absl::Mutex) so that ThreadSanitizer sees
// the locking (see platform/mutex.h).
class WorkerThreads {
 public:
  explicit WorkerThreads(int num_workers);
  ~WorkerThreads();

  WorkerThreads(const WorkerThreads&) = delete;
  WorkerThreads& operator=(const WorkerThreads&) = delete;

  int num_workers() const { return static_cast<int>(threads_.size()); }

  // Queues `task` for worker `worker` (0 <= worker < num_workers()). A task
  // must not throw.
  void Submit(int worker, std::function<void()> task);

 private:
  struct Queue {
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<std::function<void()>> tasks;
    bool stopping = false;
  };

  void Loop(Queue& queue);

  std::vector<std::unique_ptr<Queue>> queues_;
  std::vector<std::thread> threads_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PARALLEL_WORKER_THREADS_H_
