// .NET event profiles built by hand, as fold/dotnet_event_profiles.h
// describes what ReadDotnetEventStacks gives once named: JIT frames as
// kProcess locations of the process (ip - 1, offset_adjust 1), the leaf type
// frame as a kImported location named "[dotnet]" TYPE, the comm the root.
#ifndef PROFCPU_RENDER_TESTING_DOTNET_EVENT_PROFILES_H_
#define PROFCPU_RENDER_TESTING_DOTNET_EVENT_PROFILES_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fold/dotnet_event_profiles.h"
#include "fold/profile.h"
#include "symbolize/code_location.h"
#include "symbolize/symbol_table.h"

namespace profcpu::render::testing {

inline constexpr uint32_t kDotnetPid = 4242;
inline constexpr uint64_t kDotnetStartNs = 1'000'000'000;

class EventProfileMaker {
 public:
  explicit EventProfileMaker(fold::DotnetEventKind kind) { profile_.kind = kind; }

  // A managed frame at return address `ip`, named `function` by the perf map.
  uint32_t Jit(uint64_t ip, const std::string& function) {
    fold::Location location;
    location.address = ip;
    location.offset_adjust = 1;
    location.code = {symbolize::CodeKind::kProcess, kDotnetPid, ip - 1, 1};
    symbolize::Symbolization symbols;
    symbols.module = "/tmp/perf-4242.map";
    symbols.frames.push_back({function, 0x10, false, "", 0});
    symbols_.Insert(location.code, symbols);
    return profile_.profile.InternLocation(location);
  }

  // The leaf frame naming a type (the allocated or thrown one).
  uint32_t Type(const std::string& type) {
    fold::Location location;
    location.code = {symbolize::CodeKind::kImported, 0xd07e7, next_type_++};
    symbolize::Symbolization symbols;
    symbols.module = "[dotnet]";
    symbols.frames.push_back({type, 0, false, "", 0});
    symbols_.Insert(location.code, symbols);
    return profile_.profile.InternLocation(location);
  }

  // One event `seconds` after the start, on thread `tid`; `stack` leaf first.
  void Event(double seconds, uint32_t tid, uint64_t weight, const std::vector<uint32_t>& stack) {
    fold::Sample sample;
    sample.time_ns = kDotnetStartNs + static_cast<uint64_t>(seconds * 1e9);
    sample.pid = kDotnetPid;
    sample.tid = tid;
    sample.comm = profile_.profile.InternString("EventsApp");
    sample.period = weight;
    sample.stack = profile_.profile.InternStack(stack);
    profile_.profile.AddSample(sample);
    ++profile_.events;
    profile_.weight += weight;
  }

  // The profile, named (as SetSymbols does after the naming pass).
  fold::DotnetEventProfile Finish() {
    profile_.profile.SetSymbols(symbols_);
    return std::move(profile_);
  }

 private:
  fold::DotnetEventProfile profile_;
  symbolize::SymbolTable symbols_;
  uint64_t next_type_ = 1;
};

// Allocations: 3 x 100,000 bytes of byte[] in AllocBig, 100,000 of strings
// in AllocSmall; lock waits: 750 µs in Worker.Run, 250 in Other.Run, on
// Monitor.Enter; no exceptions unless `with_exceptions` (2 thrown in
// Thrower, 1 in Main).
inline fold::DotnetEventProfiles MakeDotnetEventProfiles(bool with_exceptions) {
  fold::DotnetEventProfiles profiles;
  {
    EventProfileMaker alloc(fold::DotnetEventKind::kAlloc);
    const uint32_t main = alloc.Jit(0x7f0000001010, "EventsApp.Program::Main");
    const uint32_t big = alloc.Jit(0x7f0000002010, "EventsApp.Program::AllocBig");
    const uint32_t small = alloc.Jit(0x7f0000003010, "EventsApp.Program::AllocSmall");
    const uint32_t bytes = alloc.Type("System.Byte[]");
    const uint32_t strings = alloc.Type("System.String");
    for (int i = 0; i < 3; ++i) alloc.Event(0.1 + 0.5 * i, 10, 100'000, {bytes, big, main});
    alloc.Event(1.2, 11, 100'000, {strings, small, main});
    profiles.profiles.push_back(alloc.Finish());
  }
  {
    EventProfileMaker lock(fold::DotnetEventKind::kLockWait);
    const uint32_t enter = lock.Jit(0x7f0000004010, "System.Threading.Monitor::Enter");
    const uint32_t worker = lock.Jit(0x7f0000005010, "EventsApp.Worker::Run");
    const uint32_t other = lock.Jit(0x7f0000006010, "EventsApp.Other::Run");
    lock.Event(0.3, 12, 750, {enter, worker});
    lock.Event(0.9, 13, 250, {enter, other});
    profiles.profiles.push_back(lock.Finish());
  }
  {
    EventProfileMaker thrown(fold::DotnetEventKind::kException);
    if (with_exceptions) {
      const uint32_t main = thrown.Jit(0x7f0000001010, "EventsApp.Program::Main");
      const uint32_t thrower = thrown.Jit(0x7f0000007010, "EventsApp.Program::Thrower");
      const uint32_t type = thrown.Type("EventsApp.TestException");
      thrown.Event(0.4, 14, 1, {type, thrower});
      thrown.Event(1.4, 14, 1, {type, thrower});
      thrown.Event(1.5, 10, 1, {type, main});
    }
    profiles.profiles.push_back(thrown.Finish());
  }
  return profiles;
}

}  // namespace profcpu::render::testing

#endif  // PROFCPU_RENDER_TESTING_DOTNET_EVENT_PROFILES_H_
