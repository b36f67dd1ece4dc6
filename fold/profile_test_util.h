// Builds Profiles by hand for the writer and folder tests.
#ifndef PROFCPU_FOLD_PROFILE_TEST_UTIL_H_
#define PROFCPU_FOLD_PROFILE_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fold/profile.h"
#include "symbolize/code_location.h"
#include "symbolize/symbol_table.h"

namespace profcpu::fold::testing {

struct TestFrame {
  std::string function;
  uint64_t offset = 0;
  bool inlined = false;
};

class ProfileMaker {
 public:
  // A location whose code is named `frames` (innermost first) in `module`;
  // `module` "" and no frames: no symbol table entry at all.
  uint32_t Location(uint64_t address, bool kernel, const std::string& module,
                    std::vector<TestFrame> frames, uint8_t offset_adjust = 0) {
    fold::Location location;
    location.address = address;
    location.kernel = kernel;
    location.offset_adjust = offset_adjust;
    // Distinct code per location, so each gets its own table entry.
    location.code = {symbolize::CodeKind::kImported, 0, next_code_++};
    if (!module.empty() || !frames.empty()) {
      symbolize::Symbolization symbolization;
      symbolization.module = module;
      for (TestFrame& frame : frames) {
        symbolize::Frame f;
        f.function = std::move(frame.function);
        f.offset = frame.offset;
        f.inlined = frame.inlined;
        symbolization.frames.push_back(std::move(f));
      }
      profile_.mutable_symbols().Insert(location.code, std::move(symbolization));
    }
    return profile_.InternLocation(location);
  }

  // `stack` leaf first.
  void Sample(const std::string& comm, uint32_t pid, uint32_t tid, uint32_t cpu,
              uint64_t time_ns, uint64_t period, const std::string& event,
              const std::vector<uint32_t>& stack) {
    fold::Sample sample;
    sample.comm = profile_.InternString(comm);
    sample.pid = pid;
    sample.tid = tid;
    sample.cpu = cpu;
    sample.time_ns = time_ns;
    sample.period = period;
    sample.event = profile_.InternString(event);
    sample.stack = profile_.InternStack(stack);
    profile_.AddSample(sample);
  }

  Profile& profile() { return profile_; }

 private:
  Profile profile_;
  uint64_t next_code_ = 1;
};

}  // namespace profcpu::fold::testing

#endif  // PROFCPU_FOLD_PROFILE_TEST_UTIL_H_
