#include "collector/collection_outcome.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

using ::testing::ElementsAre;
using ::testing::FieldsAre;

TEST(CollectionOutcomeLinesTest, NotesWarningsThenHowItStopped) {
  CollectionOptions options;
  CollectionResult result;
  result.notes = {"a note"};
  result.warnings = {"a warning"};
  result.stop_reason = "duration";
  result.counters.samples = 12;
  EXPECT_THAT(CollectionOutcomeLines(options, result),
              ElementsAre(FieldsAre(false, "a note"), FieldsAre(true, "a warning"),
                          FieldsAre(false, "collection stopped (duration): 12 samples, 0 lost")));
}

TEST(CollectionOutcomeLinesTest, AStartedCommandsExitCode) {
  CollectionOptions options;
  options.command = {"./app"};
  CollectionResult result;
  result.stop_reason = "target exited";
  result.command_exit_code = 3;
  result.counters.samples = 5;
  EXPECT_THAT(CollectionOutcomeLines(options, result),
              ElementsAre(FieldsAre(false, "collection stopped (target exited): 5 samples, 0 lost"),
                          FieldsAre(false, "command exited with code 3")));
}

TEST(CollectionOutcomeLinesTest, NoSamplesSaysWhyForEachKindOfEvent) {
  CollectionResult result;
  result.stop_reason = "signal";
  CollectionOptions options;
  options.sampler.event.name = "cpu-clock";
  EXPECT_THAT(CollectionOutcomeLines(options, result).back(),
              FieldsAre(true,
                        "no samples: the target did not run on a CPU while profcpu was sampling"));
  options.sampler.event = {.name = "cycles", .hardware = true};
  EXPECT_THAT(CollectionOutcomeLines(options, result).back(),
              FieldsAre(true,
                        "the 'cycles' event produced no samples: this machine's PMU counts but "
                        "does not deliver sampling interrupts (common in VMs); use -event "
                        "cpu-clock"));
  options.profile.mode = ProfileMode::kOffCpu;
  EXPECT_THAT(CollectionOutcomeLines(options, result).back(),
              FieldsAre(true, "no off-CPU events: the target did not block while profcpu watched"));
}

TEST(CollectionOutcomeLinesTest, LostSamples) {
  CollectionOptions options;
  CollectionResult result;
  result.stop_reason = "duration";
  result.counters.lost = 7;
  std::vector<OutcomeLine> lines = CollectionOutcomeLines(options, result);
  ASSERT_EQ(lines.size(), 3u);  // stopped, no samples, lost
  EXPECT_THAT(lines[0], FieldsAre(false, "collection stopped (duration): 0 samples, 7 lost"));
  EXPECT_THAT(lines[2], FieldsAre(true,
                                  "7 samples were lost because the ring buffers filled; use a "
                                  "larger -mmap-pages or a lower -freq"));
  result.counters.samples = 100;
  EXPECT_EQ(CollectionOutcomeLines(options, result).size(), 2u);  // stopped, lost
}

}  // namespace
}  // namespace profcpu::collector
