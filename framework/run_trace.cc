#include "framework/run_trace.h"

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
    nlohmann::json name = {{"name", absl::StrCat("run thread ", tid)}};
    events_.push_back({"thread_name", "", tid, 0, 0, name.dump()});
    name = {{"name", absl::StrCat("host-device copies of thread ", tid)}};
    events_.push_back(
        {"thread_name", "", tid + kCopyTrackOffset, 0, 0, name.dump()});
  }
  return it->second;
}

void RunTrace::AddOp(const OpEvent& op) {
  nlohmann::json args = {
      {"index", op.index}, {"output", op.output}, {"inputs", op.inputs}};
  const double kernel_us =
      std::chrono::duration<double, std::micro>(op.kernel_end - op.kernel_start)
          .count();
  const double total_us =
      std::chrono::duration<double, std::micro>(op.end - op.start).count();
  args["kernel_us"] = kernel_us;
  args["framework_us"] = total_us - kernel_us;
  const std::string rendered = args.dump();
  absl::MutexLock lock(&mutex_);
  const int64_t tid = ThreadNumber();
  events_.push_back({op.type, "op", tid, Micros(op.start), total_us, rendered});
  events_.push_back(
      {"kernel", "kernel", tid, Micros(op.kernel_start), kernel_us, ""});
}

void RunTrace::AddCopy(const CopyEvent& copy) {
  absl::MutexLock lock(&mutex_);
  const int64_t tid = ThreadNumber() + kCopyTrackOffset;
  events_.push_back(
      {copy.what, "copy", tid, Micros(copy.start),
       std::chrono::duration<double, std::micro>(copy.end - copy.start).count(),
       ""});
}

size_t RunTrace::size() const {
  absl::MutexLock lock(&mutex_);
  return events_.size();
}

std::string RunTrace::ToJson() const {
  nlohmann::json events = nlohmann::json::array();
  absl::MutexLock lock(&mutex_);
  for (const Event& event : events_) {
    nlohmann::json json = {
        {"name", event.name}, {"pid", 1}, {"tid", event.tid}};
    if (event.category.empty()) {
      json["ph"] = "M";  // metadata: the track's name
    } else {
      json["ph"] = "X";
      json["cat"] = event.category;
      json["ts"] = event.ts_us;
      json["dur"] = event.dur_us;
    }
    if (!event.args.empty()) json["args"] = nlohmann::json::parse(event.args);
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
