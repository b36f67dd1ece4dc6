// Usage: NettraceTraceEvent FILE.nettrace [PASSES]
//
// Reads a .nettrace with TraceEvent's EventPipeEventSource, the reader
// PerfView and dotnet-trace use, and prints one JSON line as
// bench/nettrace_read_bench.cc does: events, the fastest pass's seconds,
// MB/s and events/s, the first pass's seconds (the JIT warming up in it) and
// the process's peak RSS. Each event is dispatched to a handler that touches
// its header fields, as a reader that uses them would.
using System.Diagnostics;
using System.Text.Json;
using Microsoft.Diagnostics.Tracing;

if (args.Length < 1 || args.Length > 2)
{
    Console.Error.WriteLine("usage: NettraceTraceEvent FILE.nettrace [PASSES]");
    return 2;
}
int passes = args.Length == 2 ? Math.Max(1, int.Parse(args[1])) : 3;
long bytes = new FileInfo(args[0]).Length;
double best = double.MaxValue, first = 0;
long events = 0;
for (int pass = 0; pass < passes; pass++)
{
    var watch = Stopwatch.StartNew();
    long seen = 0, checksum = 0;
    using (var source = new EventPipeEventSource(args[0]))
    {
        source.AllEvents += e =>
        {
            seen++;
            checksum += e.ThreadID + e.EventDataLength;
        };
        source.Process();
    }
    double seconds = watch.Elapsed.TotalSeconds;
    if (pass == 0) first = seconds;
    best = Math.Min(best, seconds);
    events = seen;
    GC.KeepAlive(checksum);
}
using var self = Process.GetCurrentProcess();
self.Refresh();
Console.WriteLine(JsonSerializer.Serialize(new Dictionary<string, object>
{
    ["bytes"] = bytes,
    ["events"] = events,
    ["seconds"] = best,
    ["first_pass_seconds"] = first,
    ["mb_per_s"] = bytes / 1e6 / best,
    ["events_per_s"] = events / best,
    ["peak_rss_kb"] = self.PeakWorkingSet64 / 1024,
    ["passes"] = passes,
}));
return 0;
