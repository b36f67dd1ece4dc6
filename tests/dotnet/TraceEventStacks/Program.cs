// Usage: TraceEventStacks FILE.nettrace
//
// Reads a .nettrace as PerfView reads one for its stacks views: TraceEvent's
// TraceLog converts it (to an .etlx in a temporary folder, never beside the
// input) and names each event's managed frames from the method events and
// the rundown in the stream itself. Prints, as JSON:
//  alloc: per allocated type (GCAllocationTick's TypeName), its bytes (the sum
//    of AllocationAmount64), its ticks, its heaviest stacks and each frame's
//    inclusive bytes;
//  exceptions: per exception type (ExceptionThrown), its throws, stacks and
//    frames;
//  contention: ContentionStop count, microseconds waited (the Stop's
//    DurationNs, else Start to Stop on the thread), with the Start's stack.
// Stacks are lists of frames, the leaf first, each frame TraceEvent's
// FullMethodName ("module!0xADDRESS" when it names none).
using System.Text.Json;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Etlx;

if (args.Length != 1)
{
    Console.Error.WriteLine("usage: TraceEventStacks FILE.nettrace");
    return 2;
}

string work = Directory.CreateTempSubdirectory("traceevent-stacks-").FullName;
try
{
    string etlx = TraceLog.CreateFromEventPipeDataFile(
        args[0], Path.Combine(work, "trace.etlx"), new TraceLogOptions { ContinueOnError = true });
    using var log = new TraceLog(etlx);
    var source = log.Events.GetSource();
    var alloc = new Weighed();
    var exceptions = new Weighed();
    var contention = new Weighed();
    var started = new Dictionary<int, (double Ms, List<string>? Frames)>();
    long stopsWithoutStart = 0;

    source.Clr.GCAllocationTick += e =>
        alloc.Add(e.TypeName, Frames(e.CallStack()), e.AllocationAmount64);
    source.Clr.ExceptionStart += e =>
        exceptions.Add(e.ExceptionType, Frames(e.CallStack()), 1);
    source.Clr.ContentionStart += e =>
        started[e.ThreadID] = (e.TimeStampRelativeMSec, Frames(e.CallStack()));
    source.Clr.ContentionStop += e =>
    {
        double us = e.DurationNs > 0 ? e.DurationNs / 1000.0 : -1;
        List<string>? frames = Frames(e.CallStack());
        if (started.Remove(e.ThreadID, out var start))
        {
            if (us < 0) us = (e.TimeStampRelativeMSec - start.Ms) * 1000.0;
            frames = start.Frames ?? frames;
        }
        else
        {
            stopsWithoutStart++;
        }
        contention.Add("", frames, Math.Max(us, 0));
    };
    source.Process();

    var contentionOut = contention.Json("us").FirstOrDefault() ?? new Dictionary<string, object>();
    contentionOut["stops_without_start"] = stopsWithoutStart;
    Console.WriteLine(JsonSerializer.Serialize(new Dictionary<string, object>
    {
        ["alloc"] = new Dictionary<string, object>
        {
            ["total_bytes"] = alloc.Total, ["events"] = alloc.Events,
            ["no_stack"] = alloc.NoStack, ["types"] = alloc.Json("bytes"),
        },
        ["exceptions"] = new Dictionary<string, object>
        {
            ["total"] = exceptions.Total, ["no_stack"] = exceptions.NoStack,
            ["types"] = exceptions.Json("count"),
        },
        ["contention"] = contentionOut,
        ["events_lost"] = log.EventsLost,
    }));
    return 0;
}
finally
{
    Directory.Delete(work, recursive: true);
}

// The managed frames of an event's stack, the leaf first; null without a stack.
static List<string>? Frames(TraceCallStack? stack)
{
    if (stack == null) return null;
    var frames = new List<string>();
    for (; stack != null && frames.Count < Weighed.MaxFrames; stack = stack.Caller)
    {
        var code = stack.CodeAddress;
        string name = code.FullMethodName;
        frames.Add(string.IsNullOrEmpty(name) ? $"{code.ModuleName}!0x{code.Address:x}" : name);
    }
    return frames;
}

// Events weighed by key (a type name), their stacks and frames.
sealed class Weighed
{
    public const int MaxFrames = 64;
    const int TopStacks = 10;
    const int TopFrames = 40;

    sealed class Entry
    {
        public double Weight;
        public long Events;
        public readonly Dictionary<string, (List<string> Frames, double Weight)> Stacks = new();
        public readonly Dictionary<string, double> Inclusive = new();
    }

    readonly Dictionary<string, Entry> _entries = new();
    public double Total;
    public long Events, NoStack;

    public void Add(string key, List<string>? frames, double weight)
    {
        if (!_entries.TryGetValue(key, out var entry)) _entries[key] = entry = new Entry();
        entry.Weight += weight;
        entry.Events++;
        Total += weight;
        Events++;
        if (frames == null)
        {
            NoStack++;
            frames = [];
        }
        string joined = string.Join(";", frames);
        entry.Stacks[joined] = entry.Stacks.TryGetValue(joined, out var seen)
            ? (seen.Frames, seen.Weight + weight)
            : (frames, weight);
        foreach (string frame in frames.Distinct())
        {
            entry.Inclusive[frame] = entry.Inclusive.GetValueOrDefault(frame) + weight;
        }
    }

    // Heaviest first; `unit` names the weight ("bytes", "count", "us").
    public List<Dictionary<string, object>> Json(string unit) =>
        _entries.OrderByDescending(e => e.Value.Weight).Select(e => new Dictionary<string, object>
        {
            ["type"] = e.Key,
            [unit] = e.Value.Weight,
            ["events"] = e.Value.Events,
            ["stacks"] = e.Value.Stacks.Values.OrderByDescending(s => s.Weight).Take(TopStacks)
                .Select(s => new Dictionary<string, object> { ["frames"] = s.Frames, [unit] = s.Weight })
                .ToList(),
            ["inclusive"] = e.Value.Inclusive.OrderByDescending(f => f.Value).Take(TopFrames)
                .ToDictionary(f => f.Key, f => f.Value),
        }).ToList();
}
