#include "fleet/store/clickhouse_client.h"

#include <zlib.h>

#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "fleet/store/testing_http_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace profcpu::fleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing::HttpAnswer;
using testing::HttpRequest;
using testing::SendAll;
using testing::TestingHttpServer;

std::string Gunzip(const std::string& data) {
  z_stream z{};
  inflateInit2(&z, 15 + 16);
  std::string out;
  char buffer[4096];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof(buffer);
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - z.avail_out);
  }
  inflateEnd(&z);
  EXPECT_EQ(rc, Z_STREAM_END);
  return out;
}

StoreLimits Fast() {
  StoreLimits limits;
  limits.timeout = absl::Seconds(1);
  limits.max_answer_bytes = 1 << 20;
  limits.max_request_time = absl::Seconds(3);
  return limits;
}

TEST(ClickHouseClientTest, QueryPostsTheSqlAndReturnsTheBody) {
  TestingHttpServer server([](const HttpRequest&, int fd) { SendAll(fd, HttpAnswer(200, "1\n")); });
  ClickHouseClient client(server.url(), Fast());
  absl::StatusOr<std::string> answer = client.Query("SELECT 1");
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(*answer, "1\n");
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_THAT(server.requests()[0].head, StartsWith("POST /?wait_end_of_query=1 "));
  EXPECT_EQ(server.requests()[0].body, "SELECT 1");
}

TEST(ClickHouseClientTest, InsertSendsTheQueryInTheUrlAndTheRowsGzipped) {
  TestingHttpServer server([](const HttpRequest&, int fd) { SendAll(fd, HttpAnswer(200, "")); });
  ClickHouseClient client(server.url(), Fast());
  const std::string rows(100000, 'r');
  ASSERT_TRUE(client.Insert("INSERT INTO profcpu.samples_local FORMAT RowBinary", rows).ok());
  ASSERT_EQ(server.requests().size(), 1u);
  const HttpRequest request = server.requests()[0];
  EXPECT_EQ(request.target,
            "/?query=INSERT%20INTO%20profcpu.samples_local%20FORMAT%20RowBinary");
  EXPECT_THAT(request.head, HasSubstr("Content-Encoding: gzip"));
  EXPECT_THAT(request.head, Not(HasSubstr("100-continue")));
  EXPECT_LT(request.body.size(), rows.size() / 10);
  EXPECT_EQ(Gunzip(request.body), rows);
}

TEST(ClickHouseClientTest, ServerErrorsAreOneLineWithTheServersMessage) {
  TestingHttpServer server([](const HttpRequest& request, int fd) {
    if (request.body == "missing") {
      SendAll(fd, HttpAnswer(404, "Code: 60, e.displayText() = DB::Exception: Table "
                                  "default.nope doesn't exist., e.what() = DB::Exception\n"));
    } else if (request.body == "syntax") {
      SendAll(fd, HttpAnswer(400, "Code: 62, e.displayText() = DB::Exception: Syntax error\n"
                                  "second line\n"));
    } else {
      SendAll(fd, HttpAnswer(500, std::string(1000, 'x') + "\x01\nmore"));
    }
  });
  ClickHouseClient client(server.url(), Fast());
  absl::StatusOr<std::string> missing = client.Query("missing");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            absl::StrCat("ClickHouse at ", server.url(),
                         ": HTTP 404: Code: 60, e.displayText() = DB::Exception: Table "
                         "default.nope doesn't exist., e.what() = DB::Exception"));
  absl::StatusOr<std::string> syntax = client.Query("syntax");
  EXPECT_EQ(syntax.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(testing::MessageOf(syntax.status()), Not(HasSubstr("second line")));
  absl::Status internal = client.Insert("INSERT", "x");
  EXPECT_EQ(internal.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(testing::MessageOf(internal), HasSubstr("HTTP 500: xxx"));
  EXPECT_THAT(testing::MessageOf(internal), HasSubstr("..."));
  EXPECT_LT(internal.message().size(), 400u);
  EXPECT_THAT(testing::MessageOf(internal), Not(HasSubstr("\n")));
}

TEST(ClickHouseClientTest, AHugeErrorPageIsNotReadToItsEnd) {
  std::atomic<bool> client_left{false};
  TestingHttpServer server([&](const HttpRequest&, int fd) {
    SendAll(fd, "HTTP/1.1 500 X\r\nContent-Length: 1000000000\r\nConnection: close\r\n\r\n"
                "Code: 241, e.displayText() = DB::Exception: Memory limit\n");
    const std::string chunk(65536, 'e');
    for (int i = 0; i < 15000; ++i) {
      if (!SendAll(fd, chunk)) {
        client_left = true;
        return;
      }
    }
  });
  // Announced larger than the 1 MB cap: still the server's message, not "too large".
  absl::StatusOr<std::string> answer = ClickHouseClient(server.url(), Fast()).Query("q");
  EXPECT_THAT(testing::MessageOf(answer.status()), HasSubstr("HTTP 500: Code: 241"));
  // The client hung up after the page's start: the server's sends fail.
  for (int i = 0; i < 300 && !client_left; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(client_left);
}

TEST(ClickHouseClientTest, RefusedConnection) {
  ClickHouseClient client(absl::StrCat("http://127.0.0.1:", testing::ClosedPort()), Fast());
  absl::StatusOr<std::string> answer = client.Query("SELECT 1");
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(testing::MessageOf(answer.status()), HasSubstr(": connection refused"));
  EXPECT_THAT(testing::MessageOf(answer.status()), StartsWith("ClickHouse at http://127.0.0.1:"));
}

TEST(ClickHouseClientTest, GarbageIsNotAnHttpAnswer) {
  TestingHttpServer server([](const HttpRequest&, int fd) {
    SendAll(fd, "\x16\x03\x01 this is no HTTP at all\n\n");
  });
  absl::StatusOr<std::string> answer = ClickHouseClient(server.url(), Fast()).Query("SELECT 1");
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(testing::MessageOf(answer.status()), HasSubstr("not an HTTP answer"));
}

TEST(ClickHouseClientTest, ASilentServerTimesOut) {
  TestingHttpServer server([](const HttpRequest&, int fd) { testing::WaitForClientToClose(fd); });
  absl::StatusOr<std::string> answer = ClickHouseClient(server.url(), Fast()).Query("SELECT 1");
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(testing::MessageOf(answer.status()), HasSubstr("timed out after 1s"));
}

TEST(ClickHouseClientTest, NoByteForTheTimeoutEndsTheRequestWhateverWasSent) {
  // Silent for 2.5 timeouts, then an answer: the client must have given up.
  // (libcurl's low-speed check averages over seconds: a request of a few
  // hundred bytes kept it alive for 5 s, and this answer was taken.)
  TestingHttpServer server([](const HttpRequest&, int fd) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    SendAll(fd, HttpAnswer(200, "1\n"));
  });
  absl::StatusOr<std::string> answer =
      ClickHouseClient(server.url(), Fast()).Query(std::string(2000, ' ') + "SELECT 1");
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kDeadlineExceeded) << answer.status();
}

TEST(ClickHouseClientTest, EndlessHeadersAreRefused) {
  TestingHttpServer server([](const HttpRequest&, int fd) {
    SendAll(fd, "HTTP/1.1 200 OK\r\n");
    const std::string header = "X-Filler: " + std::string(1000, 'h') + "\r\n";
    for (int i = 0; i < 100000; ++i) {
      if (!SendAll(fd, header)) return;
    }
  });
  absl::StatusOr<std::string> answer = ClickHouseClient(server.url(), Fast()).Query("SELECT 1");
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kResourceExhausted) << answer.status();
}

TEST(ClickHouseClientTest, ATricklingServerMeetsTheRequestsTimeLimit) {
  TestingHttpServer server([](const HttpRequest&, int fd) {
    SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
    for (int i = 0; i < 100; ++i) {  // 3 bytes a second: never "no byte for 1s"
      if (!SendAll(fd, "x")) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  });
  absl::StatusOr<std::string> answer = ClickHouseClient(server.url(), Fast()).Query("SELECT 1");
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(ClickHouseClientTest, AnAnnouncedHugeAnswerIsRefused) {
  TestingHttpServer server([](const HttpRequest&, int fd) {
    SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2147483648\r\n\r\n");
    SendAll(fd, std::string(1000, '1'));
  });
  absl::StatusOr<std::string> answer = ClickHouseClient(server.url(), Fast()).Query("SELECT 1");
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(testing::MessageOf(answer.status()), HasSubstr("answer larger than 1 MB"));
}

TEST(ClickHouseClientTest, AStreamedHugeAnswerIsAbandonedAtTheCap) {
  std::atomic<uint64_t> sent{0};
  TestingHttpServer server([&](const HttpRequest&, int fd) {
    SendAll(fd, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");  // no length: until close
    const std::string chunk(65536, '1');
    for (int i = 0; i < 32768; ++i) {  // 2 GB if nobody stopped it
      if (!SendAll(fd, chunk)) return;
      sent += chunk.size();
    }
  });
  absl::StatusOr<std::string> answer = ClickHouseClient(server.url(), Fast()).Query("SELECT 1");
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(testing::MessageOf(answer.status()), HasSubstr("answer larger than 1 MB"));
  // What the sockets buffered beyond the cap, not the 2 GB.
  EXPECT_LT(sent.load(), uint64_t{64} << 20);
}

TEST(SplitStoreUrlsTest, AcceptsShardUrls) {
  absl::StatusOr<std::vector<std::string>> urls =
      SplitStoreUrls("http://127.0.0.1:8123, http://ch-2.example:8123/,https://[::1]:8443");
  ASSERT_TRUE(urls.ok()) << urls.status();
  EXPECT_THAT(*urls, ElementsAre("http://127.0.0.1:8123", "http://ch-2.example:8123",
                                 "https://[::1]:8443"));
}

TEST(SplitStoreUrlsTest, RefusesWhatIsNotAShardUrl) {
  for (const char* bad : {"", "http://a:1,", "127.0.0.1:8123", "http://host", "http://host:0",
                          "http://host:65536", "http://host:8123/db", "ftp://host:21",
                          "http://user@host:8123", "http://a:1,http://a:1", "http://a b:1",
                          "http://host:8123?x=1"}) {
    EXPECT_FALSE(SplitStoreUrls(bad).ok()) << bad;
  }
  EXPECT_THAT(testing::MessageOf(SplitStoreUrls("http://host").status()), HasSubstr("8123"));
  EXPECT_THAT(testing::MessageOf(SplitStoreUrls("http://a:1,http://a:1").status()),
              HasSubstr("listed twice"));
}

TEST(SqlQuoteTest, EscapesQuotesAndBackslashes) {
  EXPECT_EQ(SqlQuote("a'b\\c"), "'a\\'b\\\\c'");
}

}  // namespace
}  // namespace profcpu::fleet
