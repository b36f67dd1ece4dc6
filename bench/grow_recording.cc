// Makes a big recording out of a small real one, for bench/postprocess.sh: a
// machine-wide minute (by default 1M samples at 999 Hz on 16 CPUs) is more
// than this machine can record, so the source's records are replayed as
// COPIES side by side: copy c gets its own pids and tids (+ c * 2^22, above
// any real pid), its CPUs shifted by 2c, and every time stretched over the
// target span. Comm names stay: the copies' stacks fold together, so the
// profile holds the source's distinct stacks, each more often, as a busy
// host repeats its own (renaming them would make nearly every stack of a
// busy_stacks source distinct, which no real minute is). Mmap, Comm, Fork,
// Exit and ProcessInfo records are copied with the samples, so every copy's
// addresses normalize to the same (module, offset) locations and the
// source's symbols.bin names them all (but a copy's anonymous memory, which
// is per process: postprocess looks those few up once and finds nothing).
//
// --distinct-stacks: each copy's samples get stacks of their own instead (the
// callers of every user chain rotated by the copy's index), for a machine
// whose busy threads each walk their own deep stacks (bench/end_of_run.sh's
// busy_stacks row): as deep, as many distinct stacks as samples, the same
// frames to name.
//
// The source must be a -callgraph fp recording: a copy's samples would not
// match unwound_stacks.bin (its entries carry the sample's time and thread),
// so register/stack tails are refused rather than silently dropped.
//
// Usage: grow_recording [--distinct-stacks] SOURCE.zst OUT.zst [SAMPLES [SECONDS [CPUS [HZ]]]]
//   defaults: 1000000 samples over 60 s on 16 CPUs at 999 Hz
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <queue>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "recording/recording_reader.h"
#include "recording/recording_writer.h"
#include "recording/records.h"

namespace profcpu::recording {
namespace {

// Linux pids stay below 2^22 (PID_MAX_LIMIT), so a copy's ids never meet a
// real one or another copy's.
constexpr uint32_t kPidStride = 1u << 22;

struct Plan {
  uint64_t samples = 1000000;
  double seconds = 60;
  uint32_t cpus = 16;
  uint64_t hz = 999;
  bool distinct_stacks = false;
};

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "grow_recording: %s\n", message.c_str());
  std::exit(1);
}

// The source, whole (a few hundred thousand records at most), split into its
// header, its body and its Finish.
struct Source {
  Header header;
  std::vector<Record> body;
  Finish finish;
  uint64_t samples = 0;
  uint64_t end_ns = 0;
};

Source ReadSource(const std::string& path) {
  auto reader = RecordingReader::Open(path);
  if (!reader.ok()) Die(std::string(reader.status().message()));
  Source source;
  bool have_header = false;
  while (true) {
    auto next = (*reader)->Next();
    if (!next.ok()) Die(std::string(next.status().message()));
    if (!next->has_value()) break;
    Record& record = **next;
    if (auto* h = std::get_if<Header>(&record)) {
      source.header = *h;
      have_header = true;
      continue;
    }
    if (auto* f = std::get_if<Finish>(&record)) {
      source.finish = *f;
      continue;
    }
    if (std::holds_alternative<StackTrace>(record) || std::holds_alternative<OffCpuSample>(record) ||
        std::holds_alternative<StackSample>(record)) {
      Die("BPF records: record the source with the perf backend");
    }
    if (auto* s = std::get_if<Sample>(&record)) {
      if (!s->user_stack.empty() || !s->user_regs.empty()) {
        Die("samples carry registers or a stack copy: record the source with -callgraph fp");
      }
      ++source.samples;
    }
    source.end_ns = std::max(source.end_ns, RecordTime(record));
    source.body.push_back(std::move(record));
  }
  if (!have_header || source.samples == 0) Die(path + " holds no header or no samples");
  source.end_ns = std::max(source.end_ns, source.finish.end_time_ns);
  return source;
}

// How copy `c` rewrites a record of the source.
class Copy {
 public:
  Copy(uint32_t index, const Source& source, const Plan& plan)
      : index_(index), start_(source.header.start_time_ns) {
    const double span = static_cast<double>(source.end_ns - start_);
    scale_ = span > 0 ? plan.seconds * 1e9 / span : 1;
    // Copies start a few microseconds apart, so their samples interleave
    // rather than tie.
    shift_ns_ = index * 7919;
    cpus_ = plan.cpus;
    period_ = 1000000000 / plan.hz;
    distinct_ = plan.distinct_stacks;
  }

  uint64_t Time(uint64_t t) const {
    const uint64_t since = t > start_ ? t - start_ : 0;
    return start_ + static_cast<uint64_t>(static_cast<double>(since) * scale_) + shift_ns_;
  }
  uint32_t Id(uint32_t id) const { return id == 0 ? 0 : id + index_ * kPidStride; }
  uint32_t Cpu(uint32_t cpu) const { return (cpu + 2 * index_) % cpus_; }

  Record Apply(const Record& in) const {
    Record out = in;
    std::visit(
        [this](auto& r) {
          using T = std::decay_t<decltype(r)>;
          if constexpr (std::is_same_v<T, Sample>) {
            r.time_ns = Time(r.time_ns);
            r.pid = Id(r.pid);
            r.tid = Id(r.tid);
            r.cpu = Cpu(r.cpu);
            r.period = period_;
            // Callers rotated, the leaf kept: a stack no other copy has.
            if (distinct_ && index_ > 0 && r.user_ips.size() > 2) {
              const size_t callers = r.user_ips.size() - 1;
              std::rotate(r.user_ips.begin() + 1, r.user_ips.begin() + 1 + index_ % callers,
                          r.user_ips.end());
            }
          } else if constexpr (std::is_same_v<T, Mmap>) {
            r.time_ns = Time(r.time_ns);
            r.pid = Id(r.pid);
            r.tid = Id(r.tid);
          } else if constexpr (std::is_same_v<T, recording::Comm>) {
            r.time_ns = Time(r.time_ns);
            r.pid = Id(r.pid);
            r.tid = Id(r.tid);
          } else if constexpr (std::is_same_v<T, Fork> || std::is_same_v<T, Exit>) {
            r.time_ns = Time(r.time_ns);
            r.pid = Id(r.pid);
            r.ppid = Id(r.ppid);
            r.tid = Id(r.tid);
            r.ptid = Id(r.ptid);
          } else if constexpr (std::is_same_v<T, Lost>) {
            r.time_ns = Time(r.time_ns);
            r.cpu = Cpu(r.cpu);
          } else if constexpr (std::is_same_v<T, ProcessInfo>) {
            r.time_ns = Time(r.time_ns);
            r.pid = Id(r.pid);
            for (uint32_t& p : r.namespace_pids) p = Id(p);
          }
        },
        out);
    return out;
  }

 private:
  uint32_t index_;
  uint64_t start_;
  double scale_ = 1;
  uint64_t shift_ns_ = 0;
  uint32_t cpus_ = 16;
  uint64_t period_ = 0;
  bool distinct_ = false;
};

int Main(int argc, char** argv) {
  Plan plan;
  std::vector<const char*> args;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--distinct-stacks") {
      plan.distinct_stacks = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  if (args.size() < 2) {
    Die("usage: grow_recording [--distinct-stacks] SOURCE.zst OUT.zst "
        "[SAMPLES [SECONDS [CPUS [HZ]]]]");
  }
  if (args.size() > 2) plan.samples = std::strtoull(args[2], nullptr, 10);
  if (args.size() > 3) plan.seconds = std::strtod(args[3], nullptr);
  if (args.size() > 4) plan.cpus = static_cast<uint32_t>(std::strtoul(args[4], nullptr, 10));
  if (args.size() > 5) plan.hz = std::strtoull(args[5], nullptr, 10);
  if (plan.samples == 0 || plan.seconds <= 0 || plan.cpus == 0 || plan.hz == 0) Die("bad plan");

  const Source source = ReadSource(args[0]);
  const uint32_t copies = static_cast<uint32_t>((plan.samples + source.samples - 1) / source.samples);
  if (copies > 1000) Die("more than 1000 copies: use a bigger source");
  std::vector<Copy> rules;
  for (uint32_t c = 0; c < copies; ++c) rules.emplace_back(c, source, plan);

  auto writer = RecordingWriter::Create(args[1]);
  if (!writer.ok()) Die(std::string(writer.status().message()));
  auto write = [&](const Record& r) {
    if (absl::Status s = (*writer)->Write(r); !s.ok()) Die(std::string(s.message()));
  };
  Header header = source.header;
  header.sample_rate = plan.hz;
  header.frequency_mode = true;
  header.cpu_count = plan.cpus;
  write(header);

  // Every copy keeps the source's order, so merging the copies by time (ties
  // to the lower copy) gives a stream in timestamp order, as the collector's.
  using Cursor = std::pair<uint64_t, std::pair<uint32_t, size_t>>;  // time, (copy, index)
  std::priority_queue<Cursor, std::vector<Cursor>, std::greater<>> heads;
  for (uint32_t c = 0; c < copies; ++c) {
    heads.push({rules[c].Time(RecordTime(source.body[0])), {c, 0}});
  }
  uint64_t written = 0;
  uint64_t end_ns = 0;
  while (!heads.empty()) {
    const auto [time, at] = heads.top();
    heads.pop();
    const auto [c, i] = at;
    const Record& record = source.body[i];
    // The last copy stops short once the total is reached; its other records
    // still come, so its processes stay whole.
    const bool sample = std::holds_alternative<Sample>(record);
    if (!sample || written < plan.samples) {
      write(rules[c].Apply(record));
      written += sample;
      end_ns = std::max(end_ns, time);
    }
    if (i + 1 < source.body.size()) {
      heads.push({rules[c].Time(RecordTime(source.body[i + 1])), {c, i + 1}});
    }
  }
  Finish finish = source.finish;
  finish.end_time_ns = std::max(end_ns, rules[copies - 1].Time(source.end_ns));
  finish.samples = written;
  finish.lost = source.finish.lost * copies;
  if (finish.stop_reason.empty()) finish.stop_reason = "duration";
  write(finish);
  if (absl::Status s = (*writer)->Close(); !s.ok()) Die(std::string(s.message()));
  std::fprintf(stderr, "grow_recording: %llu samples (%u copies of %llu) over %.0f s on %u CPUs\n",
               static_cast<unsigned long long>(written), copies,
               static_cast<unsigned long long>(source.samples), plan.seconds, plan.cpus);
  return 0;
}

}  // namespace
}  // namespace profcpu::recording

int main(int argc, char** argv) { return profcpu::recording::Main(argc, argv); }
