// The client side of the diagnostics protocol against a local socket that
// answers as a runtime would: the .NET tests (tests/integration/test_dotnet.py)
// cover real runtimes; this covers the answers this machine's runtime never
// gives (an older runtime's "unknown command", malformed replies).
#include "collector/dotnet/runtime_commands.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <thread>

#include "base/byte_io.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"

namespace profcpu::collector::dotnet {
namespace {

std::string ErrorReply(uint32_t hresult) {
  std::string payload;
  base::ByteWriter(&payload).U32(hresult);
  std::string reply = EncodeRequest(kServerCommandSet, kServerError, payload);
  return reply;
}

// Serves one connection: reads the request, answers `reply`, and records
// what was asked.
class OneShotServer {
 public:
  OneShotServer(const std::string& root, std::string reply) : reply_(std::move(reply)) {
    std::system(("rm -rf '" + root + "' && mkdir -p '" + root + "/tmp'").c_str());
    listener_.Reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un address = {};
    address.sun_family = AF_UNIX;
    std::string path = root + "/tmp/dotnet-diagnostic-1-42-socket";
    std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
    EXPECT_EQ(::bind(listener_.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(::listen(listener_.get(), 1), 0);
    thread_ = std::thread([this] {
      base::UniqueFd client(::accept(listener_.get(), nullptr, nullptr));
      char buffer[64];
      ssize_t n = ::read(client.get(), buffer, sizeof(buffer));
      if (n > 0) request_.assign(buffer, static_cast<size_t>(n));
      (void)!::write(client.get(), reply_.data(), reply_.size());
    });
  }
  ~OneShotServer() { thread_.join(); }
  const std::string& request() const { return request_; }

 private:
  base::UniqueFd listener_;
  std::string reply_;
  std::string request_;
  std::thread thread_;
};

DiagnosticsTarget TargetIn(const std::string& root) {
  DiagnosticsTarget target;
  target.pid = 4242;
  target.namespace_pid = 1;
  target.root = *base::RootDir::Open(root);
  target.socket_path = "/tmp/dotnet-diagnostic-1-42-socket";
  return target;
}

std::string Root(const char* name) { return std::string(::testing::TempDir()) + "/" + name; }

TEST(RuntimeCommandsTest, OldRuntimesGetTheRestartAdvice) {
  std::string root = Root("old-runtime");
  absl::Status status;
  {
    OneShotServer server(root, ErrorReply(kHresultUnknownCommand));
    status = EnablePerfMap(TargetIn(root), PerfMapType::kAll);
    // It asked for EnablePerfMap with type 1.
    ASSERT_EQ(server.request().size(), 24u);
  }
  EXPECT_TRUE(absl::IsUnimplemented(status)) << status;
  EXPECT_NE(status.message().find("DOTNET_PerfMapEnabled=1"), absl::string_view::npos);
  EXPECT_NE(status.message().find("4242"), absl::string_view::npos);
}

TEST(RuntimeCommandsTest, OkReplyAndOtherErrors) {
  std::string root = Root("ok-runtime");
  {
    std::string ok_payload;
    base::ByteWriter(&ok_payload).U32(0);
    OneShotServer server(root, EncodeRequest(kServerCommandSet, kServerOk, ok_payload));
    EXPECT_TRUE(DisablePerfMap(TargetIn(root)).ok());
  }
  {
    OneShotServer server(root, ErrorReply(0x80004005));
    absl::Status status = DisablePerfMap(TargetIn(root));
    EXPECT_TRUE(absl::IsInternal(status)) << status;
    EXPECT_NE(status.message().find("0x80004005"), absl::string_view::npos);
  }
}

TEST(RuntimeCommandsTest, GarbageRepliesAreErrorsNotCrashes) {
  std::string root = Root("garbage-runtime");
  {
    OneShotServer server(root, std::string(40, 'x'));
    EXPECT_EQ(QueryProcessInfo(TargetIn(root)).status().code(), absl::StatusCode::kDataLoss);
  }
  {
    // A header claiming a longer reply than is sent, then the connection closes.
    std::string short_reply = EncodeRequest(kServerCommandSet, kServerOk, std::string(10, 'p'));
    short_reply.resize(short_reply.size() - 5);
    OneShotServer server(root, short_reply);
    EXPECT_FALSE(QueryProcessInfo(TargetIn(root)).ok());
  }
}

TEST(RuntimeCommandsTest, ASymlinkedSocketIsNotFollowed) {
  std::string root = Root("symlinked-socket");
  std::system(("rm -rf '" + root + "' && mkdir -p '" + root + "/tmp'").c_str());
  ASSERT_EQ(::symlink("/run/elsewhere.sock",
                      (root + "/tmp/dotnet-diagnostic-1-42-socket").c_str()), 0);
  absl::Status status = DisablePerfMap(TargetIn(root));
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
}

TEST(RuntimeCommandsTest, PerfMapTypes) {
  EXPECT_EQ(*ParsePerfMapType("all"), PerfMapType::kAll);
  EXPECT_EQ(*ParsePerfMapType("jitdump"), PerfMapType::kJitDump);
  EXPECT_EQ(*ParsePerfMapType("perfmap"), PerfMapType::kPerfMap);
  EXPECT_FALSE(ParsePerfMapType("both").ok());
}

}  // namespace
}  // namespace profcpu::collector::dotnet
