// A one-thread HTTP server on 127.0.0.1 for the store client's tests: each
// request (one per connection) goes to a handler that writes whatever raw
// bytes the test wants on the socket (a ClickHouse answer, an error page,
// garbage, nothing, an endless body), then the connection closes.
#ifndef PROFCPU_FLEET_STORE_TESTING_HTTP_SERVER_H_
#define PROFCPU_FLEET_STORE_TESTING_HTTP_SERVER_H_

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace profcpu::fleet::testing {

struct HttpRequest {
  std::string target;  // "/?query=..."
  std::string head;    // request line and headers
  std::string body;    // as sent (Content-Length bytes)
};

class TestingHttpServer {
 public:
  using Handler = std::function<void(const HttpRequest& request, int fd)>;
  explicit TestingHttpServer(Handler handler);
  ~TestingHttpServer();
  TestingHttpServer(const TestingHttpServer&) = delete;

  std::string url() const;
  std::vector<HttpRequest> requests() const;

 private:
  void Serve();

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<HttpRequest> requests_;
  std::thread thread_;
};

// Sends all of `data` (no SIGPIPE); false once the client is gone.
bool SendAll(int fd, std::string_view data);
// "HTTP/1.1 STATUS\r\nContent-Length: N\r\nConnection: close\r\n\r\nBODY".
std::string HttpAnswer(int status, absl::string_view body);
// Blocks until the client closes its end (or 60 s pass).
void WaitForClientToClose(int fd);
// A port on 127.0.0.1 nothing listens on (bound, then closed).
int ClosedPort();

// A status's message as a std::string, for gmock's string matchers.
inline std::string MessageOf(const absl::Status& status) { return std::string(status.message()); }

}  // namespace profcpu::fleet::testing

#endif  // PROFCPU_FLEET_STORE_TESTING_HTTP_SERVER_H_
