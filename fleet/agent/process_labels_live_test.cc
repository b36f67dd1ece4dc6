// The labels of real processes of this machine: a child moved into a cgroup
// laid out as the kubelet (systemd driver) and containerd lay out a pod's
// container. Needs root and a cgroup v2 hierarchy, as the agent does.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collector/proc/cgroup.h"
#include "fleet/agent/process_labels.h"
#include "gtest/gtest.h"

namespace profcpu::fleet {
namespace {

constexpr char kLiveContainer[] = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";
constexpr char kLivePodUid[] = "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9";
constexpr char kLivePodUidUnderscores[] = "5e6f7a8b_9c0d_4e1f_a2b3_c4d5e6f7a8b9";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// binutils' reading of a file's build-id, independent of the code under test.
std::string ReadelfBuildId(const std::string& path) {
  FILE* pipe = ::popen(("readelf -n " + path).c_str(), "r");
  std::string out;
  char buffer[4096];
  size_t n;
  while (pipe != nullptr && (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  if (pipe != nullptr) ::pclose(pipe);
  const size_t at = out.find("Build ID: ");
  if (at == std::string::npos) return "";
  return out.substr(at + 10, out.find('\n', at) - at - 10);
}

bool WriteTo(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return out.good();
}

// Starts `sleep` with HOSTNAME set, creates the pod's cgroups (those that did
// not exist), and on destruction puts the child back where it was, ends it
// and removes what it created, whatever the test's outcome.
class PodLikeChild {
 public:
  PodLikeChild(const std::string& mount, const std::string& hostname) : mount_(mount) {
    pid_ = ::fork();
    if (pid_ == 0) {
      const std::string env = "HOSTNAME=" + hostname;
      char* const argv[] = {const_cast<char*>("sleep"), const_cast<char*>("600"), nullptr};
      char* const envp[] = {const_cast<char*>(env.c_str()), const_cast<char*>("PATH=/usr/bin:/bin"),
                            nullptr};
      ::execve("/bin/sleep", argv, envp);
      ::_exit(127);
    }
    original_cgroup_ = collector::CgroupV2Path(ReadAll(absl::StrCat("/proc/", pid_, "/cgroup")));
    std::string path = mount_;
    for (const std::string& level :
         {std::string("kubepods.slice"), std::string("kubepods-burstable.slice"),
          absl::StrCat("kubepods-burstable-pod", kLivePodUidUnderscores, ".slice"),
          absl::StrCat("cri-containerd-", kLiveContainer, ".scope")}) {
      path += "/" + level;
      cgroup_ += "/" + level;
      if (std::filesystem::exists(path)) continue;
      std::error_code error;
      if (!std::filesystem::create_directory(path, error)) return;
      created_.push_back(path);
    }
    moved_ = WriteTo(path + "/cgroup.procs", absl::StrCat(pid_));
  }
  ~PodLikeChild() {
    if (pid_ > 0) {
      if (moved_) WriteTo(mount_ + original_cgroup_ + "/cgroup.procs", absl::StrCat(pid_));
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    for (auto it = created_.rbegin(); it != created_.rend(); ++it) ::rmdir(it->c_str());
  }
  pid_t pid() const { return pid_; }
  bool moved() const { return moved_; }
  const std::string& cgroup() const { return cgroup_; }
  const std::vector<std::string>& created() const { return created_; }

 private:
  std::string mount_;
  pid_t pid_ = -1;
  std::string original_cgroup_;
  std::string cgroup_;
  std::vector<std::string> created_;
  bool moved_ = false;
};

TEST(ProcessLabelsLiveTest, AProcessInAPodsContainerCgroup) {
  if (::geteuid() != 0) GTEST_SKIP() << "moving a process between cgroups needs root";
  auto mount = collector::CgroupV2Mount();
  ASSERT_TRUE(mount.ok()) << mount.status();

  std::string pattern = absl::StrCat(::testing::TempDir(), "/labels_live_XXXXXX");
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::string scratch = pattern;
  const std::string volume = absl::StrCat(scratch, "/pods/", kLivePodUid,
                                          "/volumes/kubernetes.io~projected/kube-api-access-q8d4w");
  std::filesystem::create_directories(volume);
  WriteTo(volume + "/namespace", "checkout\n");

  std::vector<std::string> created;
  {
    PodLikeChild child(*mount, "checkout-5c7b9-q2w8e");
    created = child.created();
    ASSERT_GT(child.pid(), 0);
    ASSERT_TRUE(child.moved()) << "could not move the child into " << child.cgroup();

    LabelSources sources;
    sources.node = "node-live";
    sources.kubelet_pods = scratch + "/pods";
    ProcessLabelCache cache(sources);
    // The child may still be exec'ing: wait until it is sleep.
    std::shared_ptr<const ProcessLabels> labels;
    for (int attempt = 0; attempt < 200; ++attempt) {
      labels = ReadProcessLabels(child.pid(), sources).exe == "sleep" ? cache.Get(child.pid())
                                                                      : nullptr;
      if (labels != nullptr) break;
      ::usleep(10000);
    }
    ASSERT_NE(labels, nullptr) << "the child never became sleep";
    EXPECT_EQ(labels->node, "node-live");
    EXPECT_EQ(labels->container, kLiveContainer);
    EXPECT_EQ(labels->cgroup, child.cgroup());
    EXPECT_EQ(labels->pod_uid, kLivePodUid);
    EXPECT_EQ(labels->pod, "checkout-5c7b9-q2w8e");
    EXPECT_EQ(labels->pod_namespace, "checkout");
    EXPECT_EQ(labels->comm, "sleep");
    EXPECT_EQ(labels->exe, "sleep");
    EXPECT_EQ(labels->runtime, "");
    const std::string expected = ReadelfBuildId("/bin/sleep");
    ASSERT_FALSE(expected.empty()) << "/bin/sleep has no build-id here";
    EXPECT_EQ(labels->build_id, expected);
  }
  // Clean: the cgroups this test made are gone.
  for (const std::string& path : created) EXPECT_FALSE(std::filesystem::exists(path)) << path;
  std::filesystem::remove_all(scratch);
}

TEST(ProcessLabelsLiveTest, ThisTestProcess) {
  LabelSources sources;
  sources.node = DefaultNodeName();
  ProcessLabels labels = ReadProcessLabels(::getpid(), sources);
  EXPECT_FALSE(labels.node.empty());
  EXPECT_EQ(labels.exe, "fleet_agent_parts_test");
  EXPECT_EQ(labels.comm, std::string("fleet_agent_parts_test").substr(0, 15));
  EXPECT_EQ(labels.pod_uid, "");
  EXPECT_EQ(labels.pod, "");
  EXPECT_EQ(labels.runtime, "");
  // readelf of /proc/self/exe would be readelf's own: name the file.
  EXPECT_EQ(labels.build_id, ReadelfBuildId(std::filesystem::read_symlink("/proc/self/exe")));
  EXPECT_FALSE(labels.build_id.empty());
}

}  // namespace
}  // namespace profcpu::fleet
