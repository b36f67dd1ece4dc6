#include "collector/bpf/bpf_support.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/file_io.h"

namespace profcpu::collector {
namespace {

// linux/capability.h numbers (CAP_BPF and CAP_PERFMON are new in 5.8; older
// headers lack the names).
constexpr int kCapSysAdmin = 21;
constexpr int kCapPerfmon = 38;
constexpr int kCapBpf = 39;

// Effective capability bits, from capget(2) rather than parsing /proc.
uint64_t EffectiveCapabilities() {
  __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return 0;
  return static_cast<uint64_t>(data[0].effective) |
         (static_cast<uint64_t>(data[1].effective) << 32);
}

// The bracketed word of "none [integrity] confidentiality".
std::string SelectedLockdown() {
  auto text = base::ReadFileBounded("/sys/kernel/security/lockdown", 256);
  if (!text.ok()) return "";
  size_t open = text->find('[');
  size_t close = text->find(']', open);
  if (open == std::string::npos || close == std::string::npos) return "";
  return text->substr(open + 1, close - open - 1);
}

constexpr absl::string_view kPerfFallback =
    "; meanwhile -mode cpu -backend perf (the default) needs none of this";

}  // namespace

BpfFacts GatherBpfFacts() {
  BpfFacts facts;
  utsname uts;
  if (::uname(&uts) == 0) {
    facts.kernel_release = uts.release;
    std::sscanf(uts.release, "%d.%d", &facts.kernel_major, &facts.kernel_minor);
  }
  facts.has_btf = ::access("/sys/kernel/btf/vmlinux", R_OK) == 0;
  uint64_t caps = EffectiveCapabilities();
  auto has = [caps](int cap) { return ((caps >> cap) & 1) != 0; };
  facts.cap_bpf = has(kCapBpf);
  facts.cap_perfmon = has(kCapPerfmon);
  facts.cap_sys_admin = has(kCapSysAdmin);
  facts.lockdown = SelectedLockdown();
  return facts;
}

std::string BpfBlocker(const BpfFacts& f, absl::string_view what) {
  // BPF ring buffers and CAP_BPF arrived in Linux 5.8.
  if (f.kernel_major != 0 && (f.kernel_major < 5 || (f.kernel_major == 5 && f.kernel_minor < 8))) {
    return absl::StrCat(what, " needs Linux 5.8 or later (BPF ring buffer, CAP_BPF); this kernel "
                        "is ", f.kernel_release, ": upgrade the kernel", kPerfFallback);
  }
  if (!f.has_btf) {
    return absl::StrCat(
        what, " needs the kernel's BTF type information, and /sys/kernel/btf/vmlinux is missing "
        "(kernel ", f.kernel_release, " was built without CONFIG_DEBUG_INFO_BTF, or /sys is not "
        "mounted in this container): use a kernel with BTF (every major distribution's since "
        "2020) or mount the host's /sys", kPerfFallback);
  }
  std::vector<std::string> missing;
  if (!f.cap_bpf && !f.cap_sys_admin) missing.push_back("CAP_BPF");
  if (!f.cap_perfmon && !f.cap_sys_admin) missing.push_back("CAP_PERFMON");
  if (!missing.empty()) {
    return absl::StrCat(
        what, " loads BPF programs, which needs ", absl::StrJoin(missing, " and "),
        " (or CAP_SYS_ADMIN), and profcpu's effective capabilities lack ",
        missing.size() > 1 ? "them" : "it", ": run it as root, or grant them (docker run "
        "--cap-add BPF --cap-add PERFMON; Kubernetes securityContext.capabilities.add: "
        "[\"BPF\", \"PERFMON\"]; setcap cap_bpf,cap_perfmon+ep on the binary)", kPerfFallback);
  }
  return "";
}

std::string ExplainBpfFailure(const BpfFacts& f, int error, absl::string_view step,
                              absl::string_view what) {
  std::string head = absl::StrCat(what, ": BPF ", step, " failed: ", std::strerror(error));
  if (error == EPERM || error == EACCES) {
    if (f.lockdown == "confidentiality") {
      return absl::StrCat(head, ". The kernel is locked down (lockdown=confidentiality, often "
                          "with Secure Boot), which forbids BPF programs from reading kernel "
                          "memory: boot with lockdown=integrity or none", kPerfFallback);
    }
    return absl::StrCat(head, ". profcpu holds CAP_BPF and CAP_PERFMON, so a seccomp filter "
                        "probably refused the bpf() call (container runtimes' default "
                        "profiles do): run the container unconfined or with profcpu's seccomp "
                        "profile", kPerfFallback);
  }
  if (error == EINVAL || error == ENOENT || error == EOPNOTSUPP || error == E2BIG) {
    return absl::StrCat(head, ". The kernel (", f.kernel_release, ") rejected a program or "
                        "map type profcpu uses (BTF tracepoints need 5.5, ring buffers 5.8, "
                        "and the kernel must be built with CONFIG_BPF_SYSCALL and "
                        "CONFIG_BPF_EVENTS); profcpu.log has the verifier's words",
                        kPerfFallback);
  }
  return absl::StrCat(head, kPerfFallback);
}

}  // namespace profcpu::collector
