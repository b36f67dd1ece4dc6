// The labels of real processes of this machine: a child moved into a cgroup
// laid out as the kubelet (systemd driver) and containerd lay out a pod's
// container, seen from the host and from an agent-like process in a cgroup
// namespace of its own. Needs root and a cgroup v2 hierarchy, as the agent does.
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "collector/proc/cgroup.h"
#include "fleet/agent/process_labels.h"
#include "fleet/agent/testing_readelf.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::fleet {
namespace {

constexpr char kLiveContainer[] = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";
constexpr char kLivePodUid[] = "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9";
constexpr char kLivePodUidUnderscores[] = "5e6f7a8b_9c0d_4e1f_a2b3_c4d5e6f7a8b9";
constexpr char kAgentContainer[] = "0000111122223333444455556666777788889999aaaabbbbccccddddeeeeffff";
constexpr char kAgentPodUidUnderscores[] = "11111111_2222_3333_4444_555555555555";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}


bool WriteTo(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return out.good();
}

// Cgroups made for a test (only those that did not exist) and the processes
// moved into them; on destruction the processes go back where they were and
// the cgroups are removed, whatever the test's outcome.
class TestCgroups {
 public:
  explicit TestCgroups(std::string mount) : mount_(std::move(mount)) {}
  ~TestCgroups() {
    for (const auto& [pid, original] : moved_) WriteTo(mount_ + original + "/cgroup.procs", pid);
    for (pid_t pid : children_) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    for (auto it = created_.rbegin(); it != created_.rend(); ++it) ::rmdir(it->c_str());
  }
  // Creates mount/levels..., returns the cgroup path ("/a/b"), "" on failure.
  std::string Make(const std::vector<std::string>& levels) {
    std::string cgroup;
    for (const std::string& level : levels) {
      cgroup += "/" + level;
      const std::string path = mount_ + cgroup;
      if (std::filesystem::exists(path)) continue;
      std::error_code error;
      if (!std::filesystem::create_directory(path, error)) return "";
      created_.push_back(path);
    }
    return cgroup;
  }
  bool Move(pid_t pid, const std::string& cgroup) {
    const std::string original =
        collector::CgroupV2Path(ReadAll(absl::StrCat("/proc/", pid, "/cgroup")));
    if (!WriteTo(mount_ + cgroup + "/cgroup.procs", absl::StrCat(pid))) return false;
    moved_.emplace_back(absl::StrCat(pid), original);
    return true;
  }
  void Own(pid_t child) { children_.push_back(child); }
  const std::vector<std::string>& created() const { return created_; }

 private:
  std::string mount_;
  std::vector<std::string> created_;
  std::vector<std::pair<std::string, std::string>> moved_;
  std::vector<pid_t> children_;
};

pid_t StartSleep(const std::string& hostname) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string env = "HOSTNAME=" + hostname;
    char* const argv[] = {const_cast<char*>("sleep"), const_cast<char*>("600"), nullptr};
    char* const envp[] = {const_cast<char*>(env.c_str()), const_cast<char*>("PATH=/usr/bin:/bin"),
                          nullptr};
    ::execve("/bin/sleep", argv, envp);
    ::_exit(127);
  }
  return pid;
}

std::string PodCgroupLevel(absl::string_view qos, absl::string_view uid_underscores) {
  return absl::StrCat("kubepods-", qos, "-pod", uid_underscores, ".slice");
}

class ProcessLabelsLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "moving a process between cgroups needs root";
    auto mount = collector::CgroupV2Mount();
    ASSERT_TRUE(mount.ok()) << mount.status();
    mount_ = *mount;
    std::string pattern = absl::StrCat(::testing::TempDir(), "/labels_live_XXXXXX");
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    scratch_ = pattern;
    const std::string volume = absl::StrCat(
        scratch_, "/pods/", kLivePodUid, "/volumes/kubernetes.io~projected/kube-api-access-q8d4w");
    std::filesystem::create_directories(volume);
    WriteTo(volume + "/namespace", "checkout\n");
    sources_.node = "node-live";
    sources_.kubelet_pods = scratch_ + "/pods";
  }
  void TearDown() override {
    if (!scratch_.empty()) std::filesystem::remove_all(scratch_);
  }
  // The sleeping child of a pod's container, once it runs sleep.
  std::string StartPodChild(TestCgroups& cgroups, pid_t* pid) {
    const std::string cgroup =
        cgroups.Make({"kubepods.slice", "kubepods-burstable.slice",
                      PodCgroupLevel("burstable", kLivePodUidUnderscores),
                      absl::StrCat("cri-containerd-", kLiveContainer, ".scope")});
    *pid = StartSleep("checkout-5c7b9-q2w8e");
    cgroups.Own(*pid);
    if (cgroup.empty() || !cgroups.Move(*pid, cgroup)) return "";
    // The child may still be exec'ing: the kernel points /proc/PID/exe at
    // the new program before it lays out the new environment, and between
    // the two /proc/PID/environ reads empty (ASan's slower start in CI hit it).
    for (int attempt = 0; attempt < 200; ++attempt) {
      if (ReadProcessLabels(*pid, sources_).exe == "sleep" &&
          absl::StrContains(ReadAll(absl::StrCat("/proc/", *pid, "/environ")), "HOSTNAME=")) {
        return cgroup;
      }
      ::usleep(10000);
    }
    return "";
  }

  std::string mount_;
  std::string scratch_;
  LabelSources sources_;
};

TEST_F(ProcessLabelsLiveTest, AProcessInAPodsContainerCgroup) {
  std::vector<std::string> created;
  {
    TestCgroups cgroups(mount_);
    pid_t pid = 0;
    const std::string cgroup = StartPodChild(cgroups, &pid);
    created = cgroups.created();
    ASSERT_FALSE(cgroup.empty()) << "could not start the child in its pod's cgroup";

    ProcessLabelCache cache(sources_);
    std::shared_ptr<const ProcessLabels> labels = cache.Get(pid);
    EXPECT_EQ(labels->node, "node-live");
    EXPECT_EQ(labels->container, kLiveContainer);
    EXPECT_EQ(labels->cgroup, cgroup);
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
}

// The agent as Kubernetes runs it: in a pod's container with a cgroup
// namespace of its own, where every other pod's cgroup shows as "/../..".
TEST_F(ProcessLabelsLiveTest, AnAgentInAPrivateCgroupNamespaceSeesAbsolutePaths) {
  TestCgroups cgroups(mount_);
  pid_t pod_pid = 0;
  const std::string pod_cgroup = StartPodChild(cgroups, &pod_pid);
  ASSERT_FALSE(pod_cgroup.empty()) << "could not start the child in its pod's cgroup";
  const std::string agent_cgroup =
      cgroups.Make({"kubepods.slice", "kubepods-besteffort.slice",
                    PodCgroupLevel("besteffort", kAgentPodUidUnderscores),
                    absl::StrCat("cri-containerd-", kAgentContainer, ".scope")});
  ASSERT_FALSE(agent_cgroup.empty());

  int go[2];
  int result[2];
  ASSERT_EQ(::pipe(go), 0);
  ASSERT_EQ(::pipe(result), 0);
  const pid_t agent = ::fork();
  if (agent == 0) {
    char byte;
    if (::read(go[0], &byte, 1) != 1 || ::unshare(CLONE_NEWCGROUP) != 0) ::_exit(1);
    LabelSources sources = sources_;
    const std::string raw =
        collector::CgroupV2Path(ReadAll(absl::StrCat("/proc/", pod_pid, "/cgroup")));
    sources.cgroup_namespace_root = FindCgroupNamespaceRoot("/proc", mount_);
    ProcessLabels labels = ReadProcessLabels(pod_pid, sources);
    const std::string answer = absl::StrJoin(
        {raw, sources.cgroup_namespace_root, labels.cgroup, labels.pod_uid, labels.container}, "\n");
    (void)!::write(result[1], answer.data(), answer.size());
    ::_exit(0);
  }
  ::close(result[1]);
  ASSERT_GT(agent, 0);
  cgroups.Own(agent);
  ASSERT_TRUE(cgroups.Move(agent, agent_cgroup));
  ASSERT_EQ(::write(go[1], "x", 1), 1);
  std::string answer;
  char buffer[4096];
  for (ssize_t n; (n = ::read(result[0], buffer, sizeof(buffer))) > 0;) answer.append(buffer, n);
  ::close(go[0]);
  ::close(go[1]);
  ::close(result[0]);
  std::vector<std::string> lines = absl::StrSplit(answer, '\n');
  ASSERT_EQ(lines.size(), 5u) << answer;
  // What the kernel shows inside the namespace: relative to the agent's cgroup.
  EXPECT_EQ(lines[0], absl::StrCat("/../../..", pod_cgroup.substr(std::string("/kubepods.slice").size())));
  EXPECT_EQ(lines[1], agent_cgroup);
  EXPECT_EQ(lines[2], pod_cgroup);
  EXPECT_EQ(lines[3], kLivePodUid);
  EXPECT_EQ(lines[4], kLiveContainer);
}

TEST(ProcessLabelsOfThisProcessTest, ExeCommAndBuildId) {
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
  // Whether or not PID 1's namespace can be compared with ours, the root
  // found resolves our own path to itself (we are in the host's namespace).
  auto mount = collector::CgroupV2Mount();
  ASSERT_TRUE(mount.ok()) << mount.status();
  const std::string own = collector::CgroupV2Path(ReadAll("/proc/self/cgroup"));
  EXPECT_EQ(ResolveCgroupPath(FindCgroupNamespaceRoot("/proc", *mount), own), own);
  EXPECT_EQ(labels.cgroup, own);
}

// A real .NET process: the SDK's `dotnet --version` runs on the shared
// runtime for a moment; its labels name that runtime's version.
TEST(ProcessLabelsOfThisProcessTest, ADotnetProcessNamesItsRuntime) {
  std::error_code error;
  const std::filesystem::path host = std::filesystem::canonical("/usr/bin/dotnet", error);
  ASSERT_FALSE(error) << "the .NET SDK (dotnet) is required (scripts/setup.sh installs it)";
  std::vector<std::string> expected;
  for (const auto& entry : std::filesystem::directory_iterator(
           host.parent_path() / "shared" / "Microsoft.NETCore.App", error)) {
    expected.push_back("dotnet " + entry.path().filename().string());
  }
  ASSERT_FALSE(expected.empty()) << "no shared runtime beside " << host;

  LabelSources sources;
  std::string runtime;
  for (int attempt = 0; attempt < 3 && runtime.empty(); ++attempt) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const std::string path = host.string();
      char* const argv[] = {const_cast<char*>("dotnet"), const_cast<char*>("--version"), nullptr};
      char* const envp[] = {const_cast<char*>("DOTNET_CLI_TELEMETRY_OPTOUT=1"),
                            const_cast<char*>("DOTNET_NOLOGO=1"),
                            const_cast<char*>("HOME=/tmp"), nullptr};
      if (std::FILE* null = std::freopen("/dev/null", "w", stdout); null == nullptr) ::_exit(126);
      ::execve(path.c_str(), argv, envp);
      ::_exit(127);
    }
    ASSERT_GT(pid, 0);
    // Poll its labels until the runtime is mapped or the process is done.
    for (int poll = 0; poll < 10000 && runtime.empty(); ++poll) {
      if (::waitpid(pid, nullptr, WNOHANG) == pid) break;
      runtime = ReadProcessLabels(pid, sources).runtime;
      ::usleep(1000);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  EXPECT_THAT(expected, ::testing::Contains(runtime));
}

}  // namespace
}  // namespace profcpu::fleet
