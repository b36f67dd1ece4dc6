// A test tool for the EventPipe session and the nettrace reader
// (tests/integration/test_eventpipe.py):
//
//   eventpipe_record record PID SECONDS OUT.nettrace [LEVEL [KEYWORDS]]
//       starts a session with the runtime provider (GC, exceptions, contention,
//       JIT, loader and thread-pool events, at LEVEL: 4 informational by default, 5 verbose
//       adds MethodLoadVerbose and MethodJittingStarted), streams SECONDS of it
//       into the file, stops it, then summarizes the file as `read` does;
//       KEYWORDS (hex, e.g. 0x8001) replaces the default keyword mask
//       0x1c019 (bench/dotnet_events.sh enables one at a time);
//   eventpipe_record read FILE.nettrace
//       prints what the reader finds, one fact a line:
//         trace version V pointer_size P frequency F pid N
//         event PROVIDER ID VERSION COUNT
//         gc_start_induced N / exception TYPE COUNT / contention_stop N ...
//         (dynamic_methods_*: methods named EventsAppDynamic*)
//         counts blocks... / error MESSAGE
#include <fcntl.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "base/unique_fd.h"
#include "collector/dotnet/diagnostics_client.h"
#include "collector/dotnet/dotnet_events_session.h"
#include "collector/dotnet/eventpipe_session.h"
#include "nettrace/reader.h"
#include "nettrace/runtime_events.h"

namespace dotnet = profcpu::collector::dotnet;
namespace nettrace = profcpu::nettrace;

namespace {

int Summarize(const std::string& path) {
  auto fd = profcpu::base::OpenReadOnly(path);
  if (!fd.ok()) {
    std::printf("error %s\n", std::string(fd.status().message()).c_str());
    return 1;
  }
  nettrace::NettraceFdSource source(fd->get());
  nettrace::NettraceReader reader(&source);
  if (absl::Status s = reader.ReadHeader(); !s.ok()) {
    std::printf("error %s\n", std::string(s.message()).c_str());
    return 1;
  }
  const auto& t = reader.trace();
  std::printf("trace version %d pointer_size %d frequency %lld pid %d\n", t.version,
              t.pointer_size, static_cast<long long>(t.qpc_frequency), t.process_id);
  std::map<std::tuple<std::string, uint32_t, uint32_t>, uint64_t> events;
  std::map<std::string, uint64_t> exceptions;
  uint64_t gc_induced = 0, gc_end = 0, suspend = 0, restart = 0, heap_stats = 0;
  uint64_t contention_stop = 0, method_verbose = 0, jitting = 0, decode_errors = 0;
  uint64_t dynamic_loaded = 0, dynamic_jitting = 0;
  uint64_t pool_thread_start = 0, pool_adjustment = 0, pool_starvation = 0;
  // The first EventsAppDynamic method: namespace, name, whether it has code, signature.
  std::string method_example;
  int64_t first_ts = INT64_MAX, last_ts = INT64_MIN;
  std::string first_decode_error;
  nettrace::NettraceEvent e;
  absl::StatusOr<bool> more;
  while ((more = reader.Next(&e)).ok() && *more) {
    const auto& m = *e.metadata;
    ++events[{m.provider, m.event_id, m.version}];
    first_ts = std::min(first_ts, e.timestamp);
    last_ts = std::max(last_ts, e.timestamp);
    if (m.provider != nettrace::kDotNetRuntimeProvider) continue;
    absl::Status decoded;
    switch (static_cast<nettrace::RuntimeEventId>(m.event_id)) {
      case nettrace::RuntimeEventId::kGcStart: {
        auto gc = nettrace::DecodeGcStart(e.payload, m.version);
        decoded = gc.status();
        if (gc.ok() && gc->reason == 1) ++gc_induced;
        break;
      }
      case nettrace::RuntimeEventId::kGcEnd:
        decoded = nettrace::DecodeGcEnd(e.payload, m.version).status();
        ++gc_end;
        break;
      case nettrace::RuntimeEventId::kGcSuspendEeBegin:
        decoded = nettrace::DecodeGcSuspendEeBegin(e.payload, m.version).status();
        ++suspend;
        break;
      case nettrace::RuntimeEventId::kGcRestartEeEnd:
        ++restart;
        break;
      case nettrace::RuntimeEventId::kGcHeapStats:
        decoded = nettrace::DecodeGcHeapStats(e.payload, m.version).status();
        ++heap_stats;
        break;
      case nettrace::RuntimeEventId::kExceptionThrown: {
        auto ex = nettrace::DecodeExceptionThrown(e.payload, m.version, t.pointer_size);
        decoded = ex.status();
        if (ex.ok()) ++exceptions[ex->type];
        break;
      }
      case nettrace::RuntimeEventId::kThreadPoolWorkerThreadStart:
      case nettrace::RuntimeEventId::kThreadPoolWorkerThreadStop: {
        auto w = nettrace::DecodeThreadPoolWorkerThread(e.payload, m.version);
        decoded = w.status();
        if (w.ok() && m.event_id == 50) ++pool_thread_start;
        break;
      }
      case nettrace::RuntimeEventId::kThreadPoolWorkerThreadAdjustmentAdjustment: {
        auto a = nettrace::DecodeThreadPoolAdjustment(e.payload, m.version);
        decoded = a.status();
        if (a.ok() && a->reason == 6) ++pool_starvation;
        if (a.ok()) ++pool_adjustment;
        break;
      }
      case nettrace::RuntimeEventId::kContentionStart:
        decoded = nettrace::DecodeContentionStart(e.payload, m.version, t.pointer_size).status();
        break;
      case nettrace::RuntimeEventId::kContentionStop: {
        auto c = nettrace::DecodeContentionStop(e.payload, m.version);
        decoded = c.status();
        if (c.ok()) ++contention_stop;
        break;
      }
      case nettrace::RuntimeEventId::kMethodLoadVerbose: {
        auto method = nettrace::DecodeMethodLoadVerbose(e.payload, m.version);
        decoded = method.status();
        if (method.ok() && !method->name.empty()) ++method_verbose;
        if (method.ok() && absl::StartsWith(method->name, "EventsAppDynamic")) {
          if (dynamic_loaded++ == 0) {
            method_example = absl::StrCat(method->method_namespace, " ", method->name, " ",
                                          method->size > 0 && method->start_address != 0, " ",
                                          method->signature);
          }
        }
        break;
      }
      case nettrace::RuntimeEventId::kMethodJittingStarted: {
        auto method = nettrace::DecodeMethodJittingStarted(e.payload, m.version);
        decoded = method.status();
        if (method.ok() && !method->name.empty()) ++jitting;
        if (method.ok() && absl::StartsWith(method->name, "EventsAppDynamic")) ++dynamic_jitting;
        break;
      }
      default:
        break;
    }
    if (!decoded.ok()) {
      if (decode_errors++ == 0) first_decode_error = std::string(decoded.message());
    }
  }
  for (const auto& [key, count] : events) {
    std::printf("event %s %u %u %llu\n", std::get<0>(key).c_str(), std::get<1>(key),
                std::get<2>(key), static_cast<unsigned long long>(count));
  }
  for (const auto& [type, count] : exceptions) {
    std::printf("exception %s %llu\n", type.c_str(), static_cast<unsigned long long>(count));
  }
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf("gc_start_induced %llu\ngc_end %llu\ngc_suspend_ee_begin %llu\n"
              "gc_restart_ee_end %llu\ngc_heap_stats %llu\ncontention_stop %llu\n"
              "method_load_verbose %llu\nmethod_jitting_started %llu\ndynamic_methods_loaded %llu\n"
              "dynamic_methods_jitting %llu\ndecode_errors %llu\n",
              u(gc_induced), u(gc_end), u(suspend), u(restart), u(heap_stats),
              u(contention_stop), u(method_verbose), u(jitting), u(dynamic_loaded),
              u(dynamic_jitting), u(decode_errors));
  std::printf("threadpool_thread_start %llu\nthreadpool_adjustment %llu\n"
              "threadpool_starvation %llu\n",
              u(pool_thread_start), u(pool_adjustment), u(pool_starvation));
  if (!method_example.empty()) std::printf("method_example %s\n", method_example.c_str());
  if (!first_decode_error.empty()) std::printf("decode_error %s\n", first_decode_error.c_str());
  if (first_ts <= last_ts) {
    std::printf("span_seconds %.3f\n",
                absl::ToDoubleSeconds(reader.ToTime(last_ts) - reader.ToTime(first_ts)));
  }
  const auto& c = reader.counts();
  std::printf("counts event_blocks %llu metadata_blocks %llu stack_blocks %llu stacks %llu "
              "sequence_points %llu events %llu metadata %llu\n",
              u(c.event_blocks), u(c.metadata_blocks), u(c.stack_blocks), u(c.stacks),
              u(c.sequence_points), u(c.events), u(c.metadata));
  if (!more.ok()) {
    std::printf("error %s\n", std::string(more.status().message()).c_str());
    return 1;
  }
  std::printf("end\n");
  return 0;
}

// What collect and record ask for (dotnet_events_session.h).
constexpr uint64_t kDefaultKeywords = dotnet::kDotnetEventsKeywords;

int Record(pid_t pid, double seconds, const std::string& path, uint32_t level,
           uint64_t keywords) {
  auto target = dotnet::FindDiagnosticsTarget(pid);
  if (!target.ok()) {
    std::printf("error %s\n", std::string(target.status().message()).c_str());
    return 1;
  }
  dotnet::EventPipeConfig config;
  config.providers.push_back(
      {std::string(nettrace::kDotNetRuntimeProvider), keywords, level, ""});
  auto session = dotnet::EventPipeSession::Start(*target, config);
  if (!session.ok()) {
    std::printf("error %s\n", std::string(session.status().message()).c_str());
    return 1;
  }
  std::printf("session %llu command 0x%02x\n",
              static_cast<unsigned long long>((*session)->session_id()),
              static_cast<int>((*session)->command()));
  std::fflush(stdout);  // the session is on: a bench may start measuring
  profcpu::base::UniqueFd out(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!out.valid()) {
    std::printf("error cannot create %s\n", path.c_str());
    return 1;
  }
  auto ended = (*session)->Pump(out.get(), absl::Now() + absl::Seconds(seconds));
  if (!ended.ok()) {
    std::printf("error %s\n", std::string(ended.status().message()).c_str());
    return 1;
  }
  absl::Status stopped = (*session)->Stop(out.get());
  std::printf("bytes %llu\n", static_cast<unsigned long long>((*session)->bytes_written()));
  if (!stopped.ok()) {
    std::printf("error %s\n", std::string(stopped.message()).c_str());
    return 1;
  }
  std::fflush(stdout);
  return Summarize(path);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  int pid;
  double seconds;
  uint32_t level = 4;
  uint64_t keywords = kDefaultKeywords;
  if (mode == "record" && argc >= 5 && argc <= 7 && absl::SimpleAtoi(argv[2], &pid) &&
      absl::SimpleAtod(argv[3], &seconds) && (argc < 6 || absl::SimpleAtoi(argv[5], &level)) &&
      (argc < 7 || (absl::SimpleHexAtoi(argv[6], &keywords) && keywords != 0))) {
    return Record(pid, seconds, argv[4], level, keywords);
  }
  if (mode == "read" && argc == 3) return Summarize(argv[2]);
  std::fprintf(stderr,
               "usage: eventpipe_record record PID SECONDS OUT.nettrace [LEVEL [KEYWORDS]]\n"
               "         LEVEL 4 (default) or 5; KEYWORDS hex, default 0x1c019\n"
               "       eventpipe_record read FILE.nettrace\n");
  return 2;
}
