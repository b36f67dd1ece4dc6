#include "fleet/agent/process_labels.h"
#include "fleet/agent/testing_readelf.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::fleet {
namespace {

constexpr char kContainer[] = "3f4e5a6b7c8d9e0f11223344556677889900aabbccddeeff0011223344556677";
constexpr char kPodUid[] = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
constexpr char kPodUidUnderscores[] = "0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0";

TEST(PodUidTest, KubeletCgroupLayouts) {
  const std::string uid = kPodUid;
  const std::string id = kContainer;
  // systemd driver: burstable, best-effort and guaranteed pods.
  EXPECT_EQ(PodUidFromCgroup(absl::StrCat(
                "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod",
                kPodUidUnderscores, ".slice/cri-containerd-", id, ".scope")),
            uid);
  EXPECT_EQ(PodUidFromCgroup(absl::StrCat("/kubepods.slice/kubepods-besteffort.slice/"
                                          "kubepods-besteffort-pod",
                                          kPodUidUnderscores, ".slice/crio-", id, ".scope")),
            uid);
  EXPECT_EQ(PodUidFromCgroup(
                absl::StrCat("/kubepods.slice/kubepods-pod", kPodUidUnderscores, ".slice/x")),
            uid);
  // cgroupfs driver.
  EXPECT_EQ(PodUidFromCgroup(absl::StrCat("/kubepods/burstable/pod", uid, "/", id)), uid);
  EXPECT_EQ(PodUidFromCgroup(absl::StrCat("/kubepods/pod", uid, "/", id)), uid);
  // Not a pod.
  EXPECT_EQ(PodUidFromCgroup(absl::StrCat("/system.slice/docker-", id, ".scope")), "");
  EXPECT_EQ(PodUidFromCgroup("/kubepods.slice/kubepods-burstable.slice"), "");
  EXPECT_EQ(PodUidFromCgroup(absl::StrCat("/user.slice/pod", uid)), "");  // no kubepods
  EXPECT_EQ(PodUidFromCgroup("/kubepods/burstable/podnot-a-uid/x"), "");
  EXPECT_EQ(PodUidFromCgroup(""), "");
}

TEST(PodUidTest, SeenFromAPrivateCgroupNamespace) {
  // The agent's container at /kubepods/besteffort/pod<a>/<id>: a pod of the
  // same QoS class shows no "kubepods" at all.
  EXPECT_EQ(PodUidFromCgroup(absl::StrCat("/../../pod", kPodUid, "/", kContainer)), kPodUid);
  EXPECT_EQ(PodUidFromCgroup(absl::StrCat("/../../../kubepods-burstable.slice/kubepods-burstable-pod",
                                          kPodUidUnderscores, ".slice/cri-containerd-", kContainer,
                                          ".scope")),
            kPodUid);
  EXPECT_EQ(PodUidFromCgroup("/../../system.slice/sshd.service"), "");
}

TEST(ResolveCgroupPathTest, RelativeToTheNamespaceRoot) {
  const std::string root = "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podA.slice/"
                           "cri-containerd-B.scope";
  EXPECT_EQ(ResolveCgroupPath(root, "/../../../kubepods-burstable.slice/x.slice/y.scope"),
            "/kubepods.slice/kubepods-burstable.slice/x.slice/y.scope");
  EXPECT_EQ(ResolveCgroupPath(root, "/"), root);
  EXPECT_EQ(ResolveCgroupPath(root, "/sub"), root + "/sub");
  EXPECT_EQ(ResolveCgroupPath(root, "/../../../../../../init.scope"), "/init.scope");  // clamped
  EXPECT_EQ(ResolveCgroupPath(root, ""), "");
  // The host's namespace: paths are already absolute.
  EXPECT_EQ(ResolveCgroupPath("", "/system.slice/docker-x.scope"), "/system.slice/docker-x.scope");
  // Unknown root: the best left is to drop what climbs above it.
  EXPECT_EQ(ResolveCgroupPath("", "/../../kubepods-burstable.slice/x.scope"),
            "/kubepods-burstable.slice/x.scope");
}

TEST(DotnetRuntimeTest, VersionFromTheSharedFrameworkFolder) {
  EXPECT_EQ(DotnetRuntimeFromMaps(
                "55d0c000-55d0c010 r--p 00000000 08:01 11 /usr/share/dotnet/dotnet\n"
                "7f10a000-7f10b000 r-xp 00001000 08:01 12 "
                "/usr/share/dotnet/shared/Microsoft.NETCore.App/8.0.11/libcoreclr.so\n"
                "7f20a000-7f20b000 rw-p 00000000 00:00 0 [heap]\n"),
            "dotnet 8.0.11");
  EXPECT_EQ(DotnetRuntimeFromMaps("7f10a000-7f10b000 r-xp 00001000 08:01 12 "
                                  "/d/shared/Microsoft.NETCore.App/9.0.0-rc.2.24473.5/"
                                  "libcoreclr.so (deleted)\n"),
            "dotnet 9.0.0-rc.2.24473.5");
  // Self-contained: the runtime sits beside the app.
  EXPECT_EQ(DotnetRuntimeFromMaps("7f10a000-7f10b000 r-xp 00001000 08:01 12 /app/libcoreclr.so\n"),
            "dotnet");
  EXPECT_EQ(DotnetRuntimeFromMaps("7f10a000-7f10b000 r-xp 0 08:01 12 /usr/lib/libc.so.6\n"), "");
  EXPECT_EQ(DotnetRuntimeFromMaps("7f10a000-7f10b000 r-xp 0 08:01 12 /x/libcoreclr.so.dbg\n"), "");
  EXPECT_EQ(DotnetRuntimeFromMaps(""), "");
}

TEST(StartTimeTest, CountsFieldsAfterTheLastParenthesis) {
  std::string rest;
  for (int field = 3; field <= 52; ++field) absl::StrAppend(&rest, " ", field == 22 ? 987654 : field);
  EXPECT_EQ(StartTimeFromStat(absl::StrCat("42 (a) b (c)", rest, "\n")), 987654u);
  EXPECT_EQ(StartTimeFromStat("42 (short) S 1 2"), std::nullopt);
  EXPECT_EQ(StartTimeFromStat("no parenthesis"), std::nullopt);
}

// A /proc and a kubelet pods folder built in a temp dir.
class FakeNodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = absl::StrCat(::testing::TempDir(), "/labels_test_XXXXXX");
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    scratch_ = pattern;
    sources_.node = "node-a";
    sources_.proc = scratch_ + "/proc";
    sources_.kubelet_pods = scratch_ + "/kubelet/pods";
  }
  void TearDown() override { std::filesystem::remove_all(scratch_); }

  void Write(const std::string& path, const std::string& contents) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << contents;
  }
  static std::string Stat(uint64_t start_time, const std::string& comm) {
    std::string text = absl::StrCat("1 (", comm, ")");
    for (int field = 3; field <= 52; ++field) {
      absl::StrAppend(&text, " ", field == 22 ? start_time : field);
    }
    return text + "\n";
  }
  // A process: its /proc files, a root folder holding its executable (a
  // copy of /bin/true under /app), and the cgroup given.
  std::string AddProcess(pid_t pid, const std::string& cgroup, const std::string& comm,
                         uint64_t start_time = 1000) {
    const std::string dir = absl::StrCat(sources_.proc, "/", pid);
    Write(dir + "/cgroup", absl::StrCat("4:memory:/x\n0::", cgroup, "\n"));
    Write(dir + "/comm", comm + "\n");
    Write(dir + "/stat", Stat(start_time, comm));
    // Entries end with a NUL each: the literal's own terminator ends the last.
    static constexpr char kEnviron[] = "PATH=/bin\0HOSTNAME=checkout-6d5f8-x2v9q\0HOME=/";
    Write(dir + "/environ", std::string(kEnviron, sizeof(kEnviron)));
    Write(dir + "/maps",
          "55d0c000-55d0c010 r-xp 00000000 08:01 11 /app/server\n"
          "7f10a000-7f10b000 r-xp 00001000 08:01 12 "
          "/usr/share/dotnet/shared/Microsoft.NETCore.App/8.0.11/libcoreclr.so\n");
    std::filesystem::create_directories(dir + "/root/app");
    std::filesystem::copy_file("/bin/true", dir + "/root/app/server",
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::create_symlink("/app/server", dir + "/exe");  // as the process sees it
    return dir;
  }
  void AddKubeletNamespace(const std::string& uid, const std::string& name) {
    // As the kubelet's atomic writer lays out a projected volume.
    const std::string volume = absl::StrCat(sources_.kubelet_pods, "/", uid,
                                            "/volumes/kubernetes.io~projected/kube-api-access-7xk2p");
    Write(volume + "/..2026_11_27_10_00_00.123/namespace", name);
    std::filesystem::create_directory_symlink("..2026_11_27_10_00_00.123", volume + "/..data");
    std::filesystem::create_symlink("..data/namespace", volume + "/namespace");
  }
  static std::string PodCgroup() {
    return absl::StrCat("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod",
                        kPodUidUnderscores, ".slice/cri-containerd-", kContainer, ".scope");
  }
  static std::string BuildIdOfTrue() { return ReadelfBuildId("/bin/true"); }

  std::string scratch_;
  LabelSources sources_;
};

TEST_F(FakeNodeTest, EveryLabelOfAPodsProcess) {
  AddProcess(4242, PodCgroup(), "server");
  AddKubeletNamespace(kPodUid, "shop\n");
  ProcessLabels labels = ReadProcessLabels(4242, sources_);
  EXPECT_EQ(labels.node, "node-a");
  EXPECT_EQ(labels.container, kContainer);
  EXPECT_EQ(labels.cgroup, PodCgroup());
  EXPECT_EQ(labels.pod_uid, kPodUid);
  EXPECT_EQ(labels.pod, "checkout-6d5f8-x2v9q");
  EXPECT_EQ(labels.pod_namespace, "shop");
  EXPECT_EQ(labels.comm, "server");
  EXPECT_EQ(labels.exe, "server");
  EXPECT_EQ(labels.runtime, "dotnet 8.0.11");
  const std::string expected_build_id = BuildIdOfTrue();
  ASSERT_FALSE(expected_build_id.empty()) << "/bin/true has no build-id here";
  EXPECT_EQ(labels.build_id, expected_build_id);
  EXPECT_EQ(labels.Values()[5], "shop");
  EXPECT_EQ(kLabelKeys[5], "namespace");
}

TEST_F(FakeNodeTest, NamespaceFromTheProcessesOwnFilesWhenTheKubeletFolderIsMissing) {
  const std::string dir = AddProcess(4242, PodCgroup(), "server");
  Write(dir + "/root/var/run/secrets/kubernetes.io/serviceaccount/namespace", "payments\n");
  EXPECT_EQ(ReadProcessLabels(4242, sources_).pod_namespace, "payments");
}

TEST_F(FakeNodeTest, NeverFollowsAPathOutOfTheProcessesRoot) {
  const std::string dir = AddProcess(4242, PodCgroup(), "server");
  // The target plants links to a file of the node, outside its root.
  Write(scratch_ + "/host-secret", "hostns");
  std::filesystem::create_directories(dir + "/root/var/run/secrets/kubernetes.io/serviceaccount");
  std::filesystem::create_symlink(
      scratch_ + "/host-secret",
      dir + "/root/var/run/secrets/kubernetes.io/serviceaccount/namespace");
  EXPECT_EQ(ReadProcessLabels(4242, sources_).pod_namespace, "");
  std::filesystem::remove(dir + "/root/var/run/secrets/kubernetes.io/serviceaccount/namespace");
  std::filesystem::create_symlink(
      "../../../../../../../../../../host-secret",
      dir + "/root/var/run/secrets/kubernetes.io/serviceaccount/namespace");
  EXPECT_EQ(ReadProcessLabels(4242, sources_).pod_namespace, "");
  // The executable too: a link out of the root gives no build-id.
  std::filesystem::remove(dir + "/root/app/server");
  std::filesystem::create_symlink("/bin/true", dir + "/root/app/server");  // absolute: clamped
  EXPECT_EQ(ReadProcessLabels(4242, sources_).build_id, "");
}

TEST_F(FakeNodeTest, PodAndNamespaceOnlyInAPod) {
  const std::string dir =
      AddProcess(77, absl::StrCat("/system.slice/docker-", kContainer, ".scope"), "nginx");
  Write(dir + "/root/var/run/secrets/kubernetes.io/serviceaccount/namespace", "payments\n");
  ProcessLabels labels = ReadProcessLabels(77, sources_);
  EXPECT_EQ(labels.container, kContainer);
  EXPECT_EQ(labels.pod_uid, "");
  EXPECT_EQ(labels.pod, "");  // HOSTNAME is set, but this is no pod
  EXPECT_EQ(labels.pod_namespace, "");
}

TEST_F(FakeNodeTest, HostileValuesAreRefused) {
  const std::string dir = AddProcess(4242, PodCgroup(), "server");
  Write(dir + "/environ", std::string("HOSTNAME=evil\nname\0", 19));
  AddKubeletNamespace(kPodUid, "Not/A-Namespace");
  ProcessLabels labels = ReadProcessLabels(4242, sources_);
  EXPECT_EQ(labels.pod, "");
  EXPECT_EQ(labels.pod_namespace, "");
}

TEST_F(FakeNodeTest, AVanishedProcessGivesWhatIsKnown) {
  ProcessLabels labels = ReadProcessLabels(999999, sources_);
  EXPECT_EQ(labels.node, "node-a");
  EXPECT_EQ(labels.comm, "");
  EXPECT_EQ(labels.build_id, "");
}

TEST_F(FakeNodeTest, CacheReadsOnceAndNoticesAReusedPid) {
  const std::string dir = AddProcess(4242, PodCgroup(), "server", /*start_time=*/1000);
  ProcessLabelCache cache(sources_);
  auto first = cache.Get(4242);
  EXPECT_EQ(first->comm, "server");
  EXPECT_EQ(cache.Get(4242)->comm, "server");
  EXPECT_EQ(cache.reads(), 1u);
  // The pid now belongs to another process (another start time).
  Write(dir + "/comm", "worker\n");
  Write(dir + "/stat", Stat(2000, "worker"));
  EXPECT_EQ(cache.Get(4242)->comm, "worker");
  EXPECT_EQ(cache.reads(), 2u);
  EXPECT_EQ(first->comm, "server");  // a caller's copy stays valid
  // It exits: its last samples still get its labels.
  std::filesystem::remove_all(dir);
  EXPECT_EQ(cache.Get(4242)->comm, "worker");
  EXPECT_EQ(cache.reads(), 2u);
}

TEST_F(FakeNodeTest, CacheStaysBoundedUnderChurn) {
  AddProcess(4242, PodCgroup(), "server");
  ProcessLabelCache cache(sources_, /*max_entries=*/1000);
  // 100k processes come and go (short-lived pods); one stays and is used often.
  for (pid_t pid = 100000; pid < 200000; ++pid) {
    auto labels = cache.Get(pid);
    ASSERT_EQ(labels->node, "node-a");
    ASSERT_LE(cache.size(), 1000u);
    if (pid % 100 == 0) {
      ASSERT_EQ(cache.Get(4242)->comm, "server");
    }
  }
  EXPECT_EQ(cache.size(), 1000u);
  // The long-lived process was kept (recently used), not read again each time.
  EXPECT_EQ(cache.reads(), 100000u + 1);
  EXPECT_EQ(cache.Get(4242)->comm, "server");
  EXPECT_EQ(cache.reads(), 100000u + 1);
}

}  // namespace
}  // namespace profcpu::fleet
