#include "collector/dotnet/eventpipe_session.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/byte_io.h"
#include "base/file_io.h"
#include "base/rooted_open.h"
#include "base/unique_fd.h"
#include "base/utf16.h"
#include "collector/dotnet/ipc_protocol.h"
#include "gtest/gtest.h"

namespace profcpu::collector::dotnet {
namespace {

struct EpRequest {
  uint8_t command_set = 0;
  uint8_t command_id = 0;
  std::string payload;
};

std::string EpReply(uint8_t command_id, absl::string_view payload) {
  std::string r("DOTNET_IPC_V1\0", 14);
  base::ByteWriter w(&r);
  w.U16(static_cast<uint16_t>(20 + payload.size()));
  w.U8(kServerCommandSet);
  w.U8(command_id);
  w.U16(0);
  r.append(payload.data(), payload.size());
  return r;
}

std::string EpErrorReply(uint32_t hresult) {
  std::string p;
  base::ByteWriter(&p).U32(hresult);
  return EpReply(kServerError, p);
}

std::string EpOkReply(uint64_t session_id) {
  std::string p;
  base::ByteWriter(&p).U64(session_id);
  return EpReply(kServerOk, p);
}

// A stand-in for a runtime's diagnostics socket: serves connections in
// order, each by the next handler, on its own thread.
class FakeRuntime {
 public:
  using Handler = std::function<void(int fd, const EpRequest&)>;

  explicit FakeRuntime(std::vector<Handler> handlers) : handlers_(std::move(handlers)) {
    char dir[] = "/var/tmp/eventpipe-test-XXXXXX";
    dir_ = ::mkdtemp(dir);
    path_ = dir_ + "/dotnet-diagnostic-1-1-socket";
    listener_ = base::UniqueFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un address = {};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path_.c_str(), path_.size() + 1);
    EXPECT_EQ(::bind(listener_.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(::listen(listener_.get(), 4), 0);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeRuntime() {
    ::shutdown(listener_.get(), SHUT_RDWR);
    thread_.join();
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }
  DiagnosticsTarget target() const {
    DiagnosticsTarget t;
    t.pid = 1;
    t.namespace_pid = 1;
    t.root = *base::RootDir::Open("/");
    t.socket_path = path_;
    return t;
  }
  std::vector<EpRequest> requests() const {
    absl::MutexLock lock(&mu_);
    return requests_;
  }

 private:
  void Serve() {
    for (const Handler& handler : handlers_) {
      base::UniqueFd conn(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!conn.valid()) return;
      std::string header(20, '\0');
      if (::recv(conn.get(), header.data(), 20, MSG_WAITALL) != 20) return;
      EpRequest r;
      r.command_set = static_cast<uint8_t>(header[16]);
      r.command_id = static_cast<uint8_t>(header[17]);
      uint16_t size;
      std::memcpy(&size, header.data() + 14, 2);
      r.payload.resize(size - 20);
      if (size > 20 && ::recv(conn.get(), r.payload.data(), size - 20, MSG_WAITALL) != size - 20) {
        return;
      }
      {
        absl::MutexLock lock(&mu_);
        requests_.push_back(r);
      }
      // A handler that keeps the connection (the session's) takes it over.
      handler(conn.Release(), r);
    }
  }

  std::vector<Handler> handlers_;
  std::string dir_;
  std::string path_;
  base::UniqueFd listener_;
  std::thread thread_;
  mutable absl::Mutex mu_;
  std::vector<EpRequest> requests_;
};

void EpSend(int fd, absl::string_view bytes) { ASSERT_TRUE(base::WriteAll(fd, bytes, "test").ok()); }

EventPipeConfig EpRuntimeConfig() {
  EventPipeConfig config;
  config.providers.push_back({"Microsoft-Windows-DotNETRuntime", 0xc019, 4, ""});
  return config;
}

std::string EpReadBack(int fd) {
  ::lseek(fd, 0, SEEK_SET);
  return *base::ReadFdBounded(fd, 1 << 20, "output");
}

TEST(EventPipeSessionTest, EncodesCollectTracing) {
  EventPipeConfig config = EpRuntimeConfig();
  config.providers.push_back({"My", 1, 5, "a=b"});
  config.request_rundown = true;
  std::string p2 = EncodeCollectTracing(config, EventPipeCommand::kCollectTracing2);
  std::string p3 = EncodeCollectTracing(config, EventPipeCommand::kCollectTracing3);
  ASSERT_EQ(p3.size(), p2.size() + 1);  // requestStackwalk
  base::ByteReader r(p3);
  EXPECT_EQ(r.U32(), 64u);  // circular buffer MB
  EXPECT_EQ(r.U32(), 1u);   // NetTrace
  EXPECT_EQ(r.U8(), 1u);    // rundown
  EXPECT_EQ(r.U8(), 0u);    // no stacks
  EXPECT_EQ(r.U32(), 2u);
  EXPECT_EQ(r.U64(), 0xc019u);
  EXPECT_EQ(r.U32(), 4u);
  EXPECT_EQ(r.U32(), 32u);  // UTF-16 code units with the NUL
  for (int i = 0; i < 32; ++i) r.U16();
  EXPECT_EQ(r.U32(), 0u);   // no filter: an empty string
  EXPECT_EQ(r.U64(), 1u);
  EXPECT_EQ(r.U32(), 5u);
  EXPECT_EQ(r.U32(), 3u);   // "My"
  for (int i = 0; i < 3; ++i) r.U16();
  EXPECT_EQ(r.U32(), 4u);   // "a=b"
  EXPECT_EQ(base::Utf16LeToUtf8(p3.substr(p3.size() - 8, 6)), "a=b");
  EXPECT_TRUE(r.ok());
}

TEST(EventPipeSessionTest, FallsBackStreamsAndStops) {
  int session_fd = -1;
  FakeRuntime runtime({
      // CollectTracing3: unknown to this "runtime".
      [](int fd, const EpRequest&) {
        EpSend(fd, EpErrorReply(kHresultUnknownCommand));
        ::close(fd);
      },
      // CollectTracing2: accepted; the stream begins.
      [&session_fd](int fd, const EpRequest&) {
        EpSend(fd, EpOkReply(77));
        EpSend(fd, "Nettrace-part1|");
        session_fd = fd;
      },
      // StopTracing: the rest of the stream, then the end.
      [&session_fd](int fd, const EpRequest&) {
        EpSend(session_fd, "part2");
        ::close(session_fd);
        EpSend(fd, EpOkReply(77));
        ::close(fd);
      },
  });
  auto session = EventPipeSession::Start(runtime.target(), EpRuntimeConfig());
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_EQ((*session)->session_id(), 77u);
  EXPECT_EQ((*session)->command(), EventPipeCommand::kCollectTracing2);
  base::UniqueFd out(::open("/var/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  ASSERT_TRUE(out.valid());
  auto ended = (*session)->Pump(out.get(), absl::Now() + absl::Milliseconds(300));
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_FALSE(*ended);
  EXPECT_EQ(EpReadBack(out.get()), "Nettrace-part1|");
  absl::Status stopped = (*session)->Stop(out.get(), absl::Seconds(5));
  ASSERT_TRUE(stopped.ok()) << stopped;
  EXPECT_EQ(EpReadBack(out.get()), "Nettrace-part1|part2");
  EXPECT_EQ((*session)->bytes_written(), 20u);
  EXPECT_FALSE((*session)->truncated());
  std::vector<EpRequest> requests = runtime.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].command_id, 0x04);
  EXPECT_EQ(requests[1].command_id, 0x03);
  EXPECT_EQ(requests[1].payload, EncodeCollectTracing(EpRuntimeConfig(),
                                                      EventPipeCommand::kCollectTracing2));
  EXPECT_EQ(requests[2].command_set, kEventPipeCommandSet);
  EXPECT_EQ(requests[2].command_id, 0x01);
  EXPECT_EQ(requests[2].payload, std::string("\x4d\0\0\0\0\0\0\0", 8));
}

TEST(EventPipeSessionTest, ARefusalNamesTheHresult) {
  FakeRuntime runtime({[](int fd, const EpRequest&) {
    EpSend(fd, EpErrorReply(0x80070057));
    ::close(fd);
  }});
  auto session = EventPipeSession::Start(runtime.target(), EpRuntimeConfig());
  ASSERT_FALSE(session.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(session.status())) << session.status();
  EXPECT_TRUE(absl::StrContains(session.status().message(), "HRESULT 0x80070057"))
      << session.status();
}

TEST(EventPipeSessionTest, ARuntimeWithoutEventPipeCommandsIsSaidSo) {
  auto unknown = [](int fd, const EpRequest&) {
    EpSend(fd, EpErrorReply(kHresultUnknownCommand));
    ::close(fd);
  };
  FakeRuntime runtime({unknown, unknown});
  auto session = EventPipeSession::Start(runtime.target(), EpRuntimeConfig());
  ASSERT_FALSE(session.ok());
  EXPECT_TRUE(absl::StrContains(session.status().message(), "EventPipe needs .NET 5"))
      << session.status();
}

TEST(EventPipeSessionTest, TheOutputIsCapped) {
  FakeRuntime runtime({[](int fd, const EpRequest&) {
    EpSend(fd, EpOkReply(5));
    EpSend(fd, std::string(1000, 'x'));
    ::close(fd);  // the process exited
  }});
  EventPipeConfig config = EpRuntimeConfig();
  config.max_bytes = 100;
  auto session = EventPipeSession::Start(runtime.target(), config);
  ASSERT_TRUE(session.ok()) << session.status();
  base::UniqueFd out(::open("/var/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  auto ended = (*session)->Pump(out.get(), absl::Now() + absl::Seconds(5));
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_TRUE(*ended);  // the runtime closed the stream
  EXPECT_EQ((*session)->bytes_read(), 1000u);
  EXPECT_EQ((*session)->bytes_written(), 100u);
  EXPECT_TRUE((*session)->truncated());
  EXPECT_EQ(EpReadBack(out.get()).size(), 100u);
  // Nothing left to stop: no StopTracing is sent.
  EXPECT_TRUE((*session)->Stop(out.get()).ok());
}

TEST(EventPipeSessionTest, NoProvidersIsAnError) {
  FakeRuntime runtime({});
  EXPECT_TRUE(absl::IsInvalidArgument(
      EventPipeSession::Start(runtime.target(), EventPipeConfig()).status()));
}

}  // namespace
}  // namespace profcpu::collector::dotnet
