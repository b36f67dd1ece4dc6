// fleet_store_probe: the store client driven from the integration tests
// (tests/integration/test_fleet_store.py), so they put rows in real
// ClickHouse shards through the same code the agent uses.
//
//   fleet_store_probe insert URL samples|stacks|frames < ROWS.tsv
//       reads TabSeparated rows (escaped as ClickHouse escapes), writes them
//       as RowBinary to profcpu.TABLE_local, gzip'd on the wire:
//         samples: time (epoch seconds), the 10 labels, stack_id, count, window
//         stacks:  id, frame ids comma-separated (root first)
//         frames:  id, name, module, build_id
//   fleet_store_probe query URL SQL     prints the answer
// Exit 0, or 1 with the client's one-line error on stderr.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "fleet/store/clickhouse_client.h"
#include "fleet/store/row_binary.h"
#include "fleet/store/tsv_answer.h"

namespace {

using profcpu::fleet::TsvRow;

int Fail(const std::string& message) {
  std::fprintf(stderr, "fleet_store_probe: %s\n", message.c_str());
  return 1;
}

bool U64(const std::string& text, uint64_t* out) { return absl::SimpleAtoi(text, out); }

bool Encode(const std::string& table, const std::vector<TsvRow>& rows, std::string* out) {
  for (const TsvRow& row : rows) {
    uint64_t a = 0, b = 0, c = 0, d = 0;
    if (table == "samples") {
      if (row.size() != 14 || !U64(row[0], &a) || !U64(row[11], &b) || !U64(row[12], &c) ||
          !U64(row[13], &d)) {
        return false;
      }
      profcpu::fleet::AppendUInt32(out, static_cast<uint32_t>(a));
      for (int i = 1; i <= 10; ++i) profcpu::fleet::AppendString(out, row[i]);
      profcpu::fleet::AppendUInt64(out, b);
      profcpu::fleet::AppendUInt64(out, c);
      profcpu::fleet::AppendUInt64(out, d);
    } else if (table == "stacks") {
      if (row.size() != 2 || !U64(row[0], &a)) return false;
      std::vector<uint64_t> frames;
      for (absl::string_view id : absl::StrSplit(row[1], ',', absl::SkipEmpty())) {
        uint64_t f = 0;
        if (!absl::SimpleAtoi(id, &f)) return false;
        frames.push_back(f);
      }
      profcpu::fleet::AppendUInt64(out, a);
      profcpu::fleet::AppendUInt64Array(out, frames);
    } else if (table == "frames") {
      if (row.size() != 4 || !U64(row[0], &a)) return false;
      profcpu::fleet::AppendUInt64(out, a);
      for (int i = 1; i <= 3; ++i) profcpu::fleet::AppendString(out, row[i]);
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 3 && args[0] == "query") {
    profcpu::fleet::ClickHouseClient client(args[1]);
    absl::StatusOr<std::string> answer = client.Query(args[2]);
    if (!answer.ok()) return Fail(std::string(answer.status().message()));
    std::fwrite(answer->data(), 1, answer->size(), stdout);
    return 0;
  }
  if (args.size() == 3 && args[0] == "insert") {
    std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    profcpu::fleet::TsvLimits limits;  // the test's own rows: room for a benchmark's
    limits.max_rows = 10'000'000;
    limits.max_cells = 200'000'000;
    absl::StatusOr<std::vector<TsvRow>> rows = profcpu::fleet::ParseTsvAnswer(input, limits);
    if (!rows.ok()) return Fail(std::string(rows.status().message()));
    std::string body;
    if (!Encode(args[2], *rows, &body)) return Fail("rows do not fit table " + args[2]);
    profcpu::fleet::StoreLimits limits_of_insert;  // FLEET_STORE_PROBE_TIMEOUT=S for big inserts
    if (const char* t = std::getenv("FLEET_STORE_PROBE_TIMEOUT")) {
      int seconds = 0;
      if (absl::SimpleAtoi(t, &seconds) && seconds > 0) {
        limits_of_insert.timeout = absl::Seconds(seconds);
      }
    }
    profcpu::fleet::ClickHouseClient client(args[1], limits_of_insert);
    const absl::Time start = absl::Now();
    absl::Status inserted =
        client.Insert("INSERT INTO profcpu." + args[2] + "_local FORMAT RowBinary", body);
    if (!inserted.ok()) return Fail(std::string(inserted.message()));
    std::fprintf(stderr, "fleet_store_probe: %zu rows, %zu bytes of RowBinary, inserted in %.2f s\n",
                 rows->size(), body.size(), absl::ToDoubleSeconds(absl::Now() - start));
    return 0;
  }
  return Fail("usage: fleet_store_probe insert URL samples|stacks|frames < rows.tsv | "
              "query URL SQL");
}
