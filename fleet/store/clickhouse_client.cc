#include "fleet/store/clickhouse_client.h"

#include <zlib.h>

#include <algorithm>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "base/curl_library.h"
#include "base/status_macros.h"

namespace profcpu::fleet {
namespace {

// An error answer is read up to this much: its first line is all we show.
constexpr size_t kMaxErrorBody = 4096;
// The server's message in an error, at most this many characters.
constexpr size_t kMaxErrorLine = 300;

struct Transfer {
  CURL* curl = nullptr;
  const base::CurlApi* api = nullptr;
  uint64_t max_bytes = 0;
  std::string body;
  // The last time a byte moved either way (body or headers), for `stall`.
  absl::Duration stall;
  absl::Time last_activity;
  curl_off_t last_sent = 0;
  curl_off_t last_received = 0;
  uint64_t header_bytes = 0;
  bool stalled = false;
  bool headers_too_large = false;
  bool started = false;  // the first bytes of the body arrived
  bool too_large = false;
  bool error_answer = false;  // status >= 300: keep only its start
};

size_t WriteAnswer(char* data, size_t size, size_t count, void* opaque) {
  auto* t = static_cast<Transfer*>(opaque);
  const size_t n = size * count;
  if (!t->started) {
    t->started = true;
    long status = 0;
    t->api->easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    t->error_answer = status >= 300;
    // An announced size over the cap ends it here. (An error page says what
    // went wrong in its first bytes however large it claims to be, so it is
    // not refused for its size: only its start is read, below.)
    curl_off_t announced = -1;
    t->api->easy_getinfo(t->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced);
    if (!t->error_answer && announced > 0) {
      if (static_cast<uint64_t>(announced) > t->max_bytes) {
        t->too_large = true;
        return 0;
      }
      t->body.reserve(static_cast<size_t>(announced));
    }
  }
  if (t->error_answer) {
    const size_t room = kMaxErrorBody - std::min(kMaxErrorBody, t->body.size());
    t->body.append(data, std::min(n, room));
    return room > n ? n : 0;  // enough of an error page: stop reading it
  }
  if (t->body.size() + n > t->max_bytes) {
    t->too_large = true;
    return 0;  // libcurl ends the transfer with CURLE_WRITE_ERROR
  }
  // An answer of unknown size gets the cap's room at once, never regrown:
  // the room is address space until written (a large block is mapped on
  // its own), while growing by doubling held each old buffer beside the
  // new and left the smaller ones in the heap (142 MB of RSS to keep a
  // 64 MB cap).
  if (t->body.size() + n > t->body.capacity()) t->body.reserve(t->max_bytes);
  t->body.append(data, n);
  return n;
}

// Headers (a status line, a dozen fields) are small; a server that sends
// them without end is refused here.
constexpr uint64_t kMaxHeaderBytes = 256 << 10;  // under libcurl's own 300 KB

size_t ReadHeader(char* data, size_t size, size_t count, void* opaque) {
  (void)data;
  auto* t = static_cast<Transfer*>(opaque);
  const size_t n = size * count;
  t->last_activity = absl::Now();
  t->header_bytes += n;
  if (t->header_bytes > kMaxHeaderBytes) {
    t->headers_too_large = true;
    return 0;
  }
  return n;
}

// Called by libcurl at least once a second: ends a request that moved no
// byte for `stall`. (CURLOPT_LOW_SPEED_TIME averages over a window of
// seconds, so the request's own upload kept it alive for several seconds
// more than asked.)
int CheckStall(void* opaque, curl_off_t, curl_off_t received, curl_off_t, curl_off_t sent) {
  auto* t = static_cast<Transfer*>(opaque);
  const absl::Time now = absl::Now();
  if (received != t->last_received || sent != t->last_sent) {
    t->last_received = received;
    t->last_sent = sent;
    t->last_activity = now;
    return 0;
  }
  if (now - t->last_activity >= t->stall) {
    t->stalled = true;
    return 1;  // CURLE_ABORTED_BY_CALLBACK
  }
  return 0;
}

std::string Seconds(absl::Duration d) { return absl::StrCat(absl::ToDoubleSeconds(d), "s"); }

// The first line of a server's message, printable and capped.
std::string FirstLine(absl::string_view body) {
  absl::string_view line = body.substr(0, body.find_first_of("\r\n"));
  line = absl::StripAsciiWhitespace(line);
  std::string out;
  for (char c : line.substr(0, kMaxErrorLine)) {
    const unsigned char u = static_cast<unsigned char>(c);
    out.push_back(u < 0x20 || u == 0x7f ? '?' : c);
  }
  if (line.size() > kMaxErrorLine) out += "...";
  return out;
}

absl::Status HttpError(const std::string& prefix, long status, absl::string_view body) {
  std::string message = absl::StrCat(prefix, "HTTP ", status);
  const std::string line = FirstLine(body);
  if (!line.empty()) absl::StrAppend(&message, ": ", line);
  if (status == 404) return absl::NotFoundError(message);
  if (status >= 400 && status < 500) return absl::InvalidArgumentError(message);
  return absl::UnavailableError(message);
}

absl::StatusOr<std::string> Gzip(std::string_view data) {
  z_stream z{};
  // 15 + 16: a gzip wrapper, as Content-Encoding: gzip means. Level 1: the
  // agent's CPU matters more than a few bytes on the wire.
  if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return absl::InternalError("zlib cannot start compressing");
  }
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  const size_t written = out.size() - z.avail_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return absl::InternalError("zlib could not compress the rows");
  out.resize(written);
  return out;
}

std::string PercentEncode(std::string_view text) {
  std::string out;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (absl::ascii_isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(c);
    } else {
      static constexpr char kHex[] = "0123456789ABCDEF";
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    }
  }
  return out;
}

absl::Status CheckStoreUrl(absl::string_view url) {
  auto bad = [url](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "store URL '", FirstLine(url), "' ", why,
        " (expected http://HOST:PORT, ClickHouse's HTTP port, 8123 by default)"));
  };
  absl::string_view rest = url;
  if (!absl::ConsumePrefix(&rest, "http://") && !absl::ConsumePrefix(&rest, "https://")) {
    return bad("is not http:// or https://");
  }
  const size_t colon = rest.rfind(':');
  if (colon == absl::string_view::npos || colon == 0) return bad("has no :PORT");
  absl::string_view host = rest.substr(0, colon);
  absl::string_view port = rest.substr(colon + 1);
  int port_number = 0;
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(port, &port_number) || port_number < 1 || port_number > 65535) {
    return bad("has no valid :PORT (or has a path)");
  }
  const bool bracketed = host.size() > 2 && host.front() == '[' && host.back() == ']';
  if (bracketed) host = host.substr(1, host.size() - 2);
  for (char c : host) {
    const bool ok = absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                    c == '-' || c == '_' || (bracketed && c == ':');
    if (!ok) return bad("has a host that is not a name or an address");
  }
  if (host.size() > 253) return bad("has a host name that is too long");
  return absl::OkStatus();
}

}  // namespace

ClickHouseClient::ClickHouseClient(std::string url, StoreLimits limits)
    : url_(std::move(url)), limits_(limits) {}

absl::StatusOr<std::string> ClickHouseClient::Post(const std::string& url, std::string_view body,
                                                   bool gzip) const {
  const std::string prefix = absl::StrCat("ClickHouse at ", url_, ": ");
  absl::StatusOr<const base::CurlApi*> loaded = base::Curl();
  if (!loaded.ok()) return absl::FailedPreconditionError(prefix + loaded.status().ToString());
  const base::CurlApi* api = *loaded;
  auto cleanup = [api](CURL* c) { api->easy_cleanup(c); };
  std::unique_ptr<CURL, decltype(cleanup)> curl(api->easy_init(), cleanup);
  if (curl == nullptr) return absl::InternalError(prefix + "libcurl could not start a request");
  auto free_headers = [api](curl_slist* l) { api->slist_free_all(l); };
  std::unique_ptr<curl_slist, decltype(free_headers)> headers(nullptr, free_headers);
  // No "Expect: 100-continue" round trip before a large body.
  headers.reset(api->slist_append(headers.release(), "Expect:"));
  if (gzip) headers.reset(api->slist_append(headers.release(), "Content-Encoding: gzip"));

  Transfer t;
  t.curl = curl.get();
  t.api = api;
  t.max_bytes = limits_.max_answer_bytes;
  const long connect_ms = static_cast<long>(
      std::max<int64_t>(100, absl::ToInt64Milliseconds(limits_.timeout)));
  const long total_ms = static_cast<long>(
      std::max<int64_t>(1000, absl::ToInt64Milliseconds(limits_.max_request_time)));
  CURL* c = curl.get();
  api->easy_setopt(c, CURLOPT_URL, url.c_str());
  api->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  // A store does not redirect; following would hand the request elsewhere.
  api->easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  api->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  api->easy_setopt(c, CURLOPT_USERAGENT, "profcpu");
  api->easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  api->easy_setopt(c, CURLOPT_POST, 1L);
  // Never null: a null POSTFIELDS makes libcurl read the body from stdin.
  api->easy_setopt(c, CURLOPT_POSTFIELDS, body.empty() ? "" : body.data());
  api->easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  api->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
  // Accepts and never answers, or stalls: no byte for `timeout` ends the
  // request (CheckStall).
  t.stall = std::max(limits_.timeout, absl::Milliseconds(100));
  t.last_activity = absl::Now();
  api->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, CheckStall);
  api->easy_setopt(c, CURLOPT_XFERINFODATA, &t);
  api->easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  api->easy_setopt(c, CURLOPT_HEADERFUNCTION, ReadHeader);
  api->easy_setopt(c, CURLOPT_HEADERDATA, &t);
  api->easy_setopt(c, CURLOPT_TIMEOUT_MS, total_ms);
  api->easy_setopt(c, CURLOPT_WRITEFUNCTION, WriteAnswer);
  api->easy_setopt(c, CURLOPT_WRITEDATA, &t);
  const CURLcode code = api->easy_perform(c);
  long status = 0;
  api->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 300 && (code == CURLE_OK || code == CURLE_WRITE_ERROR)) {
    return HttpError(prefix, status, t.body);
  }
  const std::string too_large =
      absl::StrCat(prefix, "answer larger than ", limits_.max_answer_bytes >> 20, " MB");
  switch (code) {
    case CURLE_OK:
      // A small answer in the cap's room: kept at its own size.
      if (t.body.capacity() > 4 * t.body.size() + 4096) t.body.shrink_to_fit();
      return std::move(t.body);
    case CURLE_ABORTED_BY_CALLBACK:
    case CURLE_OPERATION_TIMEDOUT:
      return absl::DeadlineExceededError(absl::StrCat(
          prefix, "timed out after ", Seconds(limits_.timeout),
          " (connecting, or no byte for that long; the request may run ",
          Seconds(limits_.max_request_time), " at most)"));
    case CURLE_WRITE_ERROR:
      if (t.too_large) return absl::ResourceExhaustedError(too_large);
      if (t.headers_too_large) {
        return absl::ResourceExhaustedError(absl::StrCat(prefix, "answer headers larger than ",
                                                         kMaxHeaderBytes >> 10, " KB"));
      }
      return absl::InternalError(prefix + "the answer could not be kept");
    case CURLE_COULDNT_CONNECT:
      return absl::UnavailableError(prefix + "connection refused");
    case CURLE_COULDNT_RESOLVE_HOST:
      return absl::UnavailableError(prefix + "unknown host");
    case CURLE_GOT_NOTHING:
      return absl::UnavailableError(prefix + "the server closed the connection without answering");
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return absl::UnavailableError(
          absl::StrCat(prefix, "not an HTTP answer (", api->easy_strerror(code), ")"));
    default:
      return absl::UnavailableError(prefix + api->easy_strerror(code));
  }
}

absl::StatusOr<std::string> ClickHouseClient::Query(std::string_view sql) const {
  // wait_end_of_query: ClickHouse otherwise streams as it computes, and an
  // exception after the first block arrives as text inside a 200 answer.
  return Post(url_ + "/?wait_end_of_query=1", sql, /*gzip=*/false);
}

absl::Status ClickHouseClient::Insert(std::string_view insert_sql, std::string_view body) const {
  PROFCPU_ASSIGN_OR_RETURN(std::string compressed, Gzip(body));
  absl::StatusOr<std::string> answer =
      Post(absl::StrCat(url_, "/?query=", PercentEncode(insert_sql)), compressed, /*gzip=*/true);
  return answer.status();
}

absl::StatusOr<std::vector<std::string>> SplitStoreUrls(std::string_view comma_list_view) {
  const absl::string_view comma_list(comma_list_view.data(), comma_list_view.size());
  constexpr size_t kMaxShards = 256;
  std::vector<std::string> urls;
  for (absl::string_view part : absl::StrSplit(comma_list, ',')) {
    part = absl::StripAsciiWhitespace(part);
    absl::ConsumeSuffix(&part, "/");
    if (part.empty()) {
      return absl::InvalidArgumentError(
          "-store needs URL[,URL...]: one HTTP URL per ClickHouse shard, none empty");
    }
    PROFCPU_RETURN_IF_ERROR(CheckStoreUrl(part));
    if (std::find(urls.begin(), urls.end(), part) != urls.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "store URL ", part, " is listed twice (each shard once: the position picks a node's shard)"));
    }
    if (urls.size() == kMaxShards) {
      return absl::InvalidArgumentError(absl::StrCat("-store lists more than ", kMaxShards,
                                                     " shards"));
    }
    urls.emplace_back(part);
  }
  return urls;
}

std::vector<ClickHouseClient> StoreClients(const std::vector<std::string>& urls,
                                           const StoreLimits& limits) {
  std::vector<ClickHouseClient> clients;
  clients.reserve(urls.size());
  for (const std::string& url : urls) clients.emplace_back(url, limits);
  return clients;
}

std::string SqlQuote(absl::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

}  // namespace profcpu::fleet
