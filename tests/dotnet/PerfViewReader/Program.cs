// Usage: PerfViewReader FILE.trace.zip|FILE.perf.data.txt
//
// Opens the file as PerfView opens a Linux trace for its CPU Stacks view
// (PerfViewData.cs: new LinuxPerfScriptStackSource(path, doThreadTime: false))
// and prints, per process, the samples PerfView kept, their total metric
// (milliseconds: PerfView's weight for a sample is the time to the next
// sample on its CPU) and each frame's exclusive (leaf) and inclusive metric.
// Frame names are PerfView's own, "module!function".
using System.Text.Json;
using Microsoft.Diagnostics.Tracing.Stacks;
using Microsoft.Diagnostics.Tracing.StackSources;

if (args.Length != 1)
{
    Console.Error.WriteLine("usage: PerfViewReader FILE.trace.zip|FILE.perf.data.txt");
    return 2;
}

var source = new LinuxPerfScriptStackSource(args[0], false);
var processes = new Dictionary<string, ProcessMetrics>();
source.ForEach(sample =>
{
    // The stack from the leaf to the root: the root is "Process NAME (PID)",
    // below it "Thread (TID)", then the sample's frames.
    var names = new List<string>();
    for (var stack = sample.StackIndex; stack != StackSourceCallStackIndex.Invalid;
         stack = source.GetCallerIndex(stack))
    {
        names.Add(source.GetFrameName(source.GetFrameIndex(stack), false));
    }
    if (names.Count == 0) return;
    string process = names[^1];
    int threadAt = names.Count - 2;  // the thread frame; frames are below it
    if (!processes.TryGetValue(process, out var metrics))
    {
        processes[process] = metrics = new ProcessMetrics();
    }
    metrics.Samples++;
    metrics.Metric += sample.Metric;
    if (threadAt <= 0) return;
    Add(metrics.Exclusive, names[0], sample.Metric);
    foreach (string name in names.Take(threadAt).Distinct())
    {
        Add(metrics.Inclusive, name, sample.Metric);
    }
});

Console.WriteLine(JsonSerializer.Serialize(processes,
    new JsonSerializerOptions { WriteIndented = true }));
return 0;

static void Add(Dictionary<string, double> metrics, string name, double value)
{
    metrics[name] = metrics.GetValueOrDefault(name) + value;
}

class ProcessMetrics
{
    public int Samples { get; set; }
    public double Metric { get; set; }
    public Dictionary<string, double> Exclusive { get; } = new();
    public Dictionary<string, double> Inclusive { get; } = new();
}
