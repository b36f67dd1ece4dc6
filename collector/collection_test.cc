#include "collector/collection.h"

#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

TEST(IsStartupErrorTest, RefusalsComeBeforeAnySample) {
  EXPECT_TRUE(IsStartupError(absl::NotFoundError("no process with pid 9")));
  EXPECT_TRUE(IsStartupError(absl::PermissionDeniedError("perf_event_paranoid")));
  EXPECT_TRUE(IsStartupError(absl::UnimplementedError("no BPF here")));
  EXPECT_TRUE(IsStartupError(absl::InvalidArgumentError("give exactly one target")));
  EXPECT_FALSE(IsStartupError(absl::InternalError("write failed")));
  EXPECT_FALSE(IsStartupError(absl::ResourceExhaustedError("disk full")));
}

// The steps before sampling fail without leaving anything behind, and
// without perf events: no recording is created for a target that is not.
TEST(CollectTest, RefusesATargetBeforeCreatingTheRecording) {
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/collection_test_", ::getpid(), ".rec");
  CollectionOptions options;
  options.recording_path = path;
  options.pid = 99999999;  // above PID_MAX_LIMIT: no such process
  absl::StatusOr<CollectionResult> result = Collect(options);
  EXPECT_TRUE(absl::IsNotFound(result.status())) << result.status();
  EXPECT_EQ(result.status().message(), "no process with pid 99999999");
  EXPECT_TRUE(IsStartupError(result.status()));
  EXPECT_NE(::access(path.c_str(), F_OK), 0);

  options.pid = 0;  // and no other target
  result = Collect(options);
  EXPECT_TRUE(absl::IsInvalidArgument(result.status())) << result.status();
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace profcpu::collector
