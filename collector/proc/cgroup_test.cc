#include "collector/proc/cgroup.h"

#include <unistd.h>

#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

constexpr char kId[] = "3f4e5a6b7c8d9e0f11223344556677889900aabbccddeeff0011223344556677";

TEST(CgroupTest, FindsContainerIdsOfCommonRuntimes) {
  std::string id = kId;
  for (const std::string& text :
       {"0::/machine.slice/libpod-" + id + ".scope/container\n",
        "0::/system.slice/docker-" + id + ".scope\n",
        "12:pids:/docker/" + id + "\n0::/\n",
        "0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-" + id + ".scope\n",
        "0::/kubepods/besteffort/pod1234/crio-" + id + ".scope\n"}) {
    EXPECT_EQ(ContainerIdFromCgroup(text), id) << text;
  }
  EXPECT_EQ(ContainerIdFromCgroup("0::/user.slice/user-0.slice/session-1.scope\n"), "");
}

TEST(CgroupTest, V2PathOfHybridAndUnifiedHosts) {
  EXPECT_EQ(CgroupV2Path("12:cpu:/x\n0::/machine.slice/libpod-abc.scope\n"),
            "/machine.slice/libpod-abc.scope");
  EXPECT_EQ(CgroupV2Path("12:cpu:/x\n"), "");
}

TEST(CgroupTest, ThisMachineHasAV2Hierarchy) {
  auto mount = CgroupV2Mount();
  ASSERT_TRUE(mount.ok()) << mount.status();
  auto text = ReadProcCgroup(::getpid());
  ASSERT_TRUE(text.ok());
  EXPECT_FALSE(CgroupV2Path(*text).empty());
}

}  // namespace
}  // namespace profcpu::collector
