#include "base/shared_library.h"

#include <unistd.h>

#include "gtest/gtest.h"

namespace profcpu::base {
namespace {

TEST(SharedLibraryTest, LoadsAFunctionOnDemand) {
  absl::StatusOr<SharedLibrary> libc = SharedLibrary::Open("libc.so.6", "libc6");
  ASSERT_TRUE(libc.ok()) << libc.status();
  pid_t (*get_pid)() = nullptr;
  ASSERT_TRUE(libc->Get("getpid", &get_pid).ok());
  EXPECT_EQ(get_pid(), ::getpid());
  absl::Status missing = libc->Get("no_such_function_here", &get_pid);
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("no_such_function_here"), std::string::npos);
}

TEST(SharedLibraryTest, AMissingLibraryNamesItsPackage) {
  absl::StatusOr<SharedLibrary> none = SharedLibrary::Open("libprofcpu-absent.so.9", "libabsent9");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("install libabsent9"), std::string::npos)
      << none.status();
}

}  // namespace
}  // namespace profcpu::base
