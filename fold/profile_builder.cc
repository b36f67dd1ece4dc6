#include "fold/profile_builder.h"

#include <type_traits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "symbolize/address_space.h"

namespace profcpu::fold {
namespace {

class Builder {
 public:
  explicit Builder(BuiltProfile* out) : out_(out) {}

  void On(const recording::Header& header) {
    out_->summary.header = header;
    event_ = out_->profile.InternString(header.event_name);
  }
  void On(const recording::Mmap& mmap) { spaces_.OnMmap(mmap); }
  void On(const recording::Comm& comm) {
    spaces_.OnComm(comm);
    comms_[comm.tid] = out_->profile.InternString(comm.comm);
  }
  void On(const recording::Fork& fork) {
    spaces_.OnFork(fork);
    // A new thread or process starts with its parent thread's name.
    auto parent = comms_.find(fork.ptid);
    if (parent != comms_.end()) {
      uint32_t name = parent->second;  // copied: inserting may rehash the map
      comms_.try_emplace(fork.tid, name);
    }
  }
  void On(const recording::Exit&) {}
  void On(const recording::Lost& lost) {
    switch (lost.reason) {
      case recording::LossReason::kRingBufferFull:
      case recording::LossReason::kCorrupt:
        out_->summary.lost_ring_buffer += lost.count;
        break;
      case recording::LossReason::kSamplesDropped:
        out_->summary.lost_dropped += lost.count;
        break;
      case recording::LossReason::kThrottled:
        out_->summary.throttle_events += lost.count;
        break;
    }
  }
  void On(const recording::ProcessInfo& info) { out_->summary.processes.push_back(info); }
  void On(const recording::Finish& finish) { out_->summary.finish = finish; }
  void On(const recording::Sample& sample) {
    RecordingSummary& summary = out_->summary;
    if (summary.samples == 0) summary.first_sample_ns = sample.time_ns;
    summary.last_sample_ns = sample.time_ns;
    ++summary.samples;
    if (sample.truncated) ++summary.truncated_stacks;

    stack_.clear();
    AddChain(sample.pid, sample.kernel_ips, /*kernel=*/true);
    AddChain(sample.pid, sample.user_ips, /*kernel=*/false);

    Sample s;
    s.time_ns = sample.time_ns;
    s.pid = sample.pid;
    s.tid = sample.tid;
    s.cpu = sample.cpu;
    s.period = sample.period;
    s.event = event_;
    s.comm = CommOf(sample.tid);
    s.stack = out_->profile.InternStack(stack_);
    out_->profile.AddSample(s);
  }

  void Finish() {
    out_->modules = spaces_.modules();
    out_->requests.reserve(requested_.size());
    for (auto& [location, mapping] : requested_) {
      out_->requests.push_back({location, std::move(mapping)});
    }
  }

 private:
  void AddChain(uint32_t pid, const std::vector<uint64_t>& ips, bool kernel) {
    for (size_t i = 0; i < ips.size(); ++i) {
      // Every entry but the first of each context is a return address: it
      // points after the call, which may already be the next function. Look
      // up the byte before it (perf does the same when resolving callers).
      uint8_t adjust = (i > 0 && ips[i] > 0) ? 1 : 0;
      symbolize::NormalizedAddress normalized =
          spaces_.Normalize(pid, ips[i] - adjust, kernel);
      Location location;
      location.address = ips[i];
      location.code = normalized.location;
      location.offset_adjust = adjust;
      location.kernel = kernel;
      stack_.push_back(out_->profile.InternLocation(location));
      requested_.try_emplace(normalized.location, std::string(normalized.mapping_name));
    }
  }

  uint32_t CommOf(uint32_t tid) {
    auto it = comms_.find(tid);
    if (it != comms_.end()) return it->second;
    uint32_t id = out_->profile.InternString(absl::StrCat(":", tid));
    comms_.emplace(tid, id);
    return id;
  }

  BuiltProfile* out_;
  symbolize::AddressSpaceTracker spaces_;
  absl::flat_hash_map<uint32_t, uint32_t> comms_;  // tid -> string id
  absl::flat_hash_map<symbolize::CodeLocation, std::string> requested_;
  std::vector<uint32_t> stack_;
  uint32_t event_ = 0;
};

}  // namespace

absl::StatusOr<BuiltProfile> BuildProfile(recording::RecordingReader& reader) {
  BuiltProfile out;
  Builder builder(&out);
  bool saw_header = false;
  while (true) {
    auto record = reader.Next();
    if (!record.ok()) return record.status();
    if (!record->has_value()) break;
    if (!saw_header && !std::holds_alternative<recording::Header>(**record)) {
      return absl::DataLossError("recording does not start with a header record");
    }
    saw_header = true;
    std::visit([&builder](const auto& r) { builder.On(r); }, **record);
  }
  if (!saw_header) return absl::DataLossError("recording holds no records");
  out.summary.file_truncated = reader.truncated();
  builder.Finish();
  return out;
}

}  // namespace profcpu::fold
