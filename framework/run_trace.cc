#include "framework/run_trace.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "platform/file.h"

namespace scopeflow {

double RunTrace::Micros(Clock::time_point t) const {
  return std::chrono::duration<double, std::micro>(t - origin_).count();
}

int64_t RunTrace::ThreadNumber() {
  auto [it, added] = threads_.try_emplace(
      std::this_thread::get_id(), static_cast<int64_t>(threads_.size()) + 1);
  if (added) {
    const int64_t tid = it->second;
    events_.push_back(
        {absl::StrCat("run thread ", tid), "", tid, 0, 0, std::nullopt});
    events_.push_back({absl::StrCat("host-device copies of thread ", tid), "",
                       tid + kCopyTrackOffset, 0, 0, std::nullopt});
  }
  return it->second;
}

void RunTrace::AddOp(OpEvent op) {
  const double start_us = Micros(op.start);
  const double kernel_start_us = Micros(op.kernel_start);
  const double total_us =
      std::chrono::duration<double, std::micro>(op.end - op.start).count();
  const double kernel_us =
      std::chrono::duration<double, std::micro>(op.kernel_end - op.kernel_start)
          .count();
  std::string type = op.type;
  absl::MutexLock lock(&mutex_);
  const int64_t tid = ThreadNumber();
  events_.push_back(
      {std::move(type), "op", tid, start_us, total_us, std::move(op)});
  events_.push_back(
      {"kernel", "kernel", tid, kernel_start_us, kernel_us, std::nullopt});
}

void RunTrace::AddCopy(CopyEvent copy) {
  const double start_us = Micros(copy.start);
  const double dur_us =
      std::chrono::duration<double, std::micro>(copy.end - copy.start).count();
  absl::MutexLock lock(&mutex_);
  const int64_t tid = ThreadNumber() + kCopyTrackOffset;
  events_.push_back(
      {std::move(copy.what), "copy", tid, start_us, dur_us, std::nullopt});
}

size_t RunTrace::size() const {
  absl::MutexLock lock(&mutex_);
  return events_.size();
}

std::string RunTrace::ToJson() const {
  nlohmann::json events = nlohmann::json::array();
  absl::MutexLock lock(&mutex_);
  for (const Event& event : events_) {
    nlohmann::json json = {{"pid", 1}, {"tid", event.tid}};
    if (event.category.empty()) {
      // Metadata: the track's name.
      json["ph"] = "M";
      json["name"] = "thread_name";
      json["args"] = {{"name", event.name}};
    } else {
      json["ph"] = "X";
      json["name"] = event.name;
      json["cat"] = event.category;
      json["ts"] = event.ts_us;
      json["dur"] = event.dur_us;
    }
    if (event.op.has_value()) {
      const OpEvent& op = *event.op;
      const double kernel_us = std::chrono::duration<double, std::micro>(
                                   op.kernel_end - op.kernel_start)
                                   .count();
      json["args"] = {{"index", op.index},
                      {"output", op.output},
                      {"inputs", op.inputs},
                      {"kernel_us", kernel_us},
                      {"framework_us", event.dur_us - kernel_us}};
    }
    events.push_back(std::move(json));
  }
  nlohmann::json trace = {{"traceEvents", std::move(events)},
                          {"displayTimeUnit", "ms"}};
  return trace.dump();
}

absl::Status RunTrace::WriteJson(const std::string& path) const {
  return WriteFileAtomically(path, ToJson());
}

}  // namespace scopeflow
