#include "framework/parallel/worker_threads.h"

#include <utility>

namespace scopeflow {

WorkerThreads::WorkerThreads(int num_workers) {
  queues_.reserve(num_workers);
  for (int w = 0; w < num_workers; ++w) {
    queues_.push_back(std::make_unique<Queue>());
  }
  threads_.reserve(num_workers);
  for (int w = 0; w < num_workers; ++w) {
    Queue* queue = queues_[w].get();
    threads_.emplace_back([this, queue] { Loop(*queue); });
  }
}

WorkerThreads::~WorkerThreads() {
  for (auto& queue : queues_) {
    std::lock_guard<std::mutex> lock(queue->mutex);
    queue->stopping = true;
    queue->ready.notify_one();
  }
  for (std::thread& thread : threads_) thread.join();
}

void WorkerThreads::Submit(int worker, std::function<void()> task) {
  Queue& queue = *queues_[worker];
  std::lock_guard<std::mutex> lock(queue.mutex);
  queue.tasks.push_back(std::move(task));
  queue.ready.notify_one();
}

void WorkerThreads::Loop(Queue& queue) {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(queue.mutex);
      queue.ready.wait(lock,
                       [&] { return queue.stopping || !queue.tasks.empty(); });
      // Stopping drains the queue first: a queued task's result may be
      // awaited by a Get that runs before the destructor.
      if (queue.tasks.empty()) return;
      task = std::move(queue.tasks.front());
      queue.tasks.pop_front();
    }
    task();
  }
}

}  // namespace scopeflow
