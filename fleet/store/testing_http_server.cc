#include "fleet/store/testing_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace profcpu::fleet::testing {
namespace {

int ListenOnLoopback(int* port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(fd, 16) != 0) {
    std::abort();
  }
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *port = ntohs(addr.sin_port);
  return fd;
}

// Reads one request: head up to the blank line, then Content-Length bytes.
bool ReadRequest(int fd, HttpRequest* request) {
  std::string data;
  char buffer[65536];
  size_t head_end = std::string::npos;
  size_t body_size = 0;
  while (true) {
    if (head_end == std::string::npos) {
      head_end = data.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        request->head = data.substr(0, head_end);
        for (absl::string_view line : absl::StrSplit(request->head, "\r\n")) {
          std::vector<absl::string_view> kv = absl::StrSplit(line, absl::MaxSplits(':', 1));
          if (kv.size() == 2 && absl::EqualsIgnoreCase(kv[0], "content-length")) {
            (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(kv[1]), &body_size);
          }
        }
        std::vector<absl::string_view> first = absl::StrSplit(request->head, ' ');
        if (first.size() >= 2) request->target = std::string(first[1]);
      }
    }
    if (head_end != std::string::npos && data.size() >= head_end + 4 + body_size) {
      request->body = data.substr(head_end + 4, body_size);
      return true;
    }
    ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace

TestingHttpServer::TestingHttpServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = ListenOnLoopback(&port_);
  thread_ = std::thread([this] { Serve(); });
}

TestingHttpServer::~TestingHttpServer() {
  stop_ = true;
  thread_.join();
  ::close(listen_fd_);
}

std::string TestingHttpServer::url() const { return absl::StrCat("http://127.0.0.1:", port_); }

std::vector<HttpRequest> TestingHttpServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

void TestingHttpServer::Serve() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    HttpRequest request;
    if (ReadRequest(fd, &request)) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(request);
      }
      handler_(request, fd);
    }
    ::close(fd);
  }
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string HttpAnswer(int status, absl::string_view body) {
  return absl::StrCat("HTTP/1.1 ", status, " X\r\nContent-Type: text/plain\r\nContent-Length: ",
                      body.size(), "\r\nConnection: close\r\n\r\n", body);
}

void WaitForClientToClose(int fd) {
  char buffer[4096];
  for (int i = 0; i < 600; ++i) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) return;
    }
  }
}

int ClosedPort() {
  int port = 0;
  int fd = ListenOnLoopback(&port);
  ::close(fd);
  return port;
}

}  // namespace profcpu::fleet::testing
