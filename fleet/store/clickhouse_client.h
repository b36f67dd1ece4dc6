// One ClickHouse shard over its HTTP interface (libcurl, loaded on first use:
// base/curl_library.h). Whatever answers at the store's address is outside
// input: it may refuse, never answer, stall, send garbage, an error page or
// a body of gigabytes. Each ends the request with a one-line error that
// starts "ClickHouse at URL:" and says which, within `StoreLimits`, and no
// answer is held past max_answer_bytes.
#ifndef PROFCPU_FLEET_STORE_CLICKHOUSE_CLIENT_H_
#define PROFCPU_FLEET_STORE_CLICKHOUSE_CLIENT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace profcpu::fleet {

struct StoreLimits {
  // To connect, and the longest stretch without a byte moving either way.
  absl::Duration timeout = absl::Seconds(10);
  // A larger answer (announced, or as it arrives) is abandoned.
  uint64_t max_answer_bytes = uint64_t{64} << 20;
  // The whole request, however it trickles: a server sending a byte a
  // second never trips `timeout`, and would hold a caller for days.
  absl::Duration max_request_time = absl::Minutes(2);
};

class ClickHouseClient {
 public:
  // `url`: a shard's HTTP interface, "http://127.0.0.1:8123" (SplitStoreUrls
  // checks the form).
  explicit ClickHouseClient(std::string url, StoreLimits limits = {});

  const std::string& url() const { return url_; }
  const StoreLimits& limits() const { return limits_; }

  // Runs SELECT or DDL `sql` (POSTed; the server computes the whole answer
  // before sending it, so a failure mid-query is an HTTP error, not a body
  // with an exception in its middle). Returns the body: TabSeparated unless
  // the SQL says FORMAT. Errors, one line each:
  //   the server's own: "ClickHouse at URL: HTTP 500: Code: 60, ..." (the
  //     first line of its message, capped; NotFound for 404, InvalidArgument
  //     for other 4xx, Unavailable for 5xx: a retry may pass)
  //   DeadlineExceeded "ClickHouse at URL: timed out after 10s ..."
  //   ResourceExhausted "ClickHouse at URL: answer larger than 64 MB"
  //   Unavailable "ClickHouse at URL: connection refused", "... not an HTTP
  //     answer (...)" and the like.
  absl::StatusOr<std::string> Query(std::string_view sql) const;

  // Runs `insert_sql` ("INSERT INTO profcpu.samples_local FORMAT RowBinary")
  // with `body` as its data, gzip-compressed on the wire (Content-Encoding:
  // gzip). The INSERT of one body is atomic on the server when its rows fall
  // in one partition. Errors as Query's.
  absl::Status Insert(std::string_view insert_sql, std::string_view body) const;

 private:
  absl::StatusOr<std::string> Post(const std::string& url, std::string_view body,
                                   bool gzip) const;

  std::string url_;
  StoreLimits limits_;
};

// The shards of -store: "http://a:8123,http://b:8123" -> each URL, in order
// (the agent's shard index is the position). Each must be http:// or
// https://, HOST:PORT with an explicit port (ClickHouse's HTTP port is 8123,
// not 80), no path, user or query; none twice. Spaces around commas are
// dropped; a trailing '/' too.
absl::StatusOr<std::vector<std::string>> SplitStoreUrls(std::string_view comma_list);

// The clients of `urls`, one per shard, in order.
std::vector<ClickHouseClient> StoreClients(const std::vector<std::string>& urls,
                                           const StoreLimits& limits = {});

// `text` as a ClickHouse string literal: in single quotes, with '\'' and
// '\\' escaped, for values put in SQL the store's code builds.
std::string SqlQuote(absl::string_view text);

}  // namespace profcpu::fleet

#endif  // PROFCPU_FLEET_STORE_CLICKHOUSE_CLIENT_H_
