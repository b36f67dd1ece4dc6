#include "collector/proc/cgroup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"

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

// Needs root and a cgroup v2 hierarchy, as container profiling does (the
// suite runs as root; CI machines have cgroup v2).
TEST(CgroupTest, IdentityIsTheDirectorysIdAndDepth) {
  auto mount = CgroupV2Mount();
  ASSERT_TRUE(mount.ok()) << mount.status();
  auto root = CgroupIdentityOf(*mount);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root->level, 0u);
  EXPECT_EQ(root->id, 1u);  // the root cgroup's id

  std::string parent = absl::StrCat(*mount, "/profcpu-unit-", ::getpid());
  std::string child = parent + "/child";
  ASSERT_EQ(::mkdir(parent.c_str(), 0755), 0) << parent;
  ASSERT_EQ(::mkdir(child.c_str(), 0755), 0) << child;
  auto identity = CgroupIdentityOf(child + "/");
  struct stat st;
  ASSERT_EQ(::stat(child.c_str(), &st), 0);
  ::rmdir(child.c_str());
  ::rmdir(parent.c_str());
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ(identity->level, 2u);
  EXPECT_EQ(identity->id, static_cast<uint64_t>(st.st_ino));  // kernfs: the id is the inode

  auto outside = CgroupIdentityOf("/tmp");
  EXPECT_TRUE(absl::IsInvalidArgument(outside.status())) << outside.status();
}

}  // namespace
}  // namespace profcpu::collector
