#include "collector/proc/container_resolver.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "base/file_io.h"
#include "collector/proc/cgroup.h"
#include "gtest/gtest.h"

namespace profcpu::collector {
namespace {

TEST(ContainerResolverTest, CgroupPathOfTheContainerItself) {
  std::string id(64, 'a');
  EXPECT_EQ(ContainerCgroupPath("/machine.slice/libpod-" + id + ".scope/container", id),
            "/machine.slice/libpod-" + id + ".scope");
  EXPECT_EQ(ContainerCgroupPath("/docker/" + id, id), "/docker/" + id);
  EXPECT_EQ(ContainerCgroupPath("/user.slice", id), "");
}

TEST(ContainerResolverTest, ResolvesACgroupPathAndListsItsProcesses) {
  auto mount = CgroupV2Mount();
  ASSERT_TRUE(mount.ok()) << mount.status();
  std::string name = absl::StrCat("/profcpu-resolver-test-", ::getpid());
  std::string dir = *mount + name;
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((dir + "/inner").c_str(), 0755), 0);
  pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  ASSERT_TRUE(base::WriteFile(dir + "/inner/cgroup.procs", absl::StrCat(child)).ok());
  auto target = ResolveContainer(name);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(target->cgroup_dir, dir);
  EXPECT_EQ(CgroupProcesses(dir), (std::vector<pid_t>{child}));
  EXPECT_TRUE(CgroupPopulated(dir));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  // The kernel updates cgroup.events asynchronously; it settles quickly.
  for (int i = 0; i < 100 && CgroupPopulated(dir); ++i) ::usleep(10000);
  EXPECT_FALSE(CgroupPopulated(dir));
  ::rmdir((dir + "/inner").c_str());
  ::rmdir(dir.c_str());
}

TEST(ContainerResolverTest, UnknownContainersAreClearErrors) {
  auto missing = ResolveContainer("0123456789ab");
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_NE(missing.status().message().find("0123456789ab"), absl::string_view::npos);
  EXPECT_TRUE(absl::IsNotFound(ResolveContainer("no such name!").status()));
  EXPECT_TRUE(absl::IsNotFound(ResolveContainer("/no/such/cgroup").status()));
}

}  // namespace
}  // namespace profcpu::collector
