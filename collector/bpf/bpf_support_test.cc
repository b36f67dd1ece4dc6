#include "collector/bpf/bpf_support.h"

#include <cerrno>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

using ::testing::HasSubstr;

BpfFacts Capable() {
  BpfFacts f;
  f.kernel_release = "6.1.0-18-amd64";
  f.kernel_major = 6;
  f.kernel_minor = 1;
  f.has_btf = true;
  f.cap_bpf = true;
  f.cap_perfmon = true;
  return f;
}

TEST(BpfSupportTest, NothingBlocksACapableModernKernel) {
  EXPECT_EQ(BpfBlocker(Capable(), "-mode offcpu"), "");
  BpfFacts admin = Capable();
  admin.cap_bpf = admin.cap_perfmon = false;
  admin.cap_sys_admin = true;  // CAP_SYS_ADMIN implies both
  EXPECT_EQ(BpfBlocker(admin, "-mode offcpu"), "");
}

TEST(BpfSupportTest, OldKernelIsNamed) {
  BpfFacts f = Capable();
  f.kernel_release = "5.4.0-150-generic";
  f.kernel_major = 5;
  f.kernel_minor = 4;
  std::string why = BpfBlocker(f, "-mode wall");
  EXPECT_THAT(why, HasSubstr("-mode wall needs Linux 5.8"));
  EXPECT_THAT(why, HasSubstr("5.4.0-150-generic"));
  EXPECT_THAT(why, HasSubstr("-backend perf"));
}

TEST(BpfSupportTest, MissingBtfSaysWhichConfig) {
  BpfFacts f = Capable();
  f.has_btf = false;
  std::string why = BpfBlocker(f, "-mode offcpu");
  EXPECT_THAT(why, HasSubstr("/sys/kernel/btf/vmlinux"));
  EXPECT_THAT(why, HasSubstr("CONFIG_DEBUG_INFO_BTF"));
}

TEST(BpfSupportTest, MissingCapabilitiesAreListed) {
  BpfFacts f = Capable();
  f.cap_bpf = false;
  std::string why = BpfBlocker(f, "-backend bpf");
  EXPECT_THAT(why, HasSubstr("needs CAP_BPF (or CAP_SYS_ADMIN)"));
  EXPECT_THAT(why, HasSubstr("--cap-add BPF"));
  f.cap_perfmon = false;
  EXPECT_THAT(BpfBlocker(f, "-backend bpf"), HasSubstr("CAP_BPF and CAP_PERFMON"));
}

TEST(BpfSupportTest, PermissionFailureWithCapabilitiesBlamesSeccompOrLockdown) {
  BpfFacts f = Capable();
  EXPECT_THAT(ExplainBpfFailure(f, EPERM, "load", "-mode offcpu"), HasSubstr("seccomp"));
  f.lockdown = "confidentiality";
  EXPECT_THAT(ExplainBpfFailure(f, EPERM, "load", "-mode offcpu"), HasSubstr("lockdown"));
  EXPECT_THAT(ExplainBpfFailure(f, EINVAL, "load", "-mode offcpu"),
              HasSubstr("rejected a program or map type"));
}

TEST(BpfSupportTest, GathersThisMachinesFacts) {
  BpfFacts f = GatherBpfFacts();
  EXPECT_FALSE(f.kernel_release.empty());
  EXPECT_GT(f.kernel_major, 0);
}

}  // namespace
}  // namespace profcpu::collector
