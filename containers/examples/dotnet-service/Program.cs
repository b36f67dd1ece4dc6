// An ASP.NET Core service shaped like the ones profcpu is pointed at: three
// CPU-bound endpoints of different kinds (JSON serialization that keeps the
// GC busy, SHA-256 through the runtime's OpenSSL shim, a regex that throws on
// every 10th request) and /stats, where the service reports what it measured
// itself: each handler's CPU time (the thread's own clock, so a loaded machine
// does not blur it), its GC count and the exceptions it threw. A profile of it
// can be checked against those figures.
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using System.Text.Json;
using System.Text.RegularExpressions;

var builder = WebApplication.CreateSlimBuilder(args);
builder.Logging.ClearProviders();
var app = builder.Build();
app.MapGet("/json", Handlers.HandleJson);
app.MapGet("/hash", Handlers.HandleHash);
app.MapGet("/regex", Handlers.HandleRegex);
app.MapGet("/stats", Handlers.Stats);
app.Run();

public record Order(int Id, string Customer, double Amount, string[] Items);

public static partial class Handlers
{
    static long jsonNs, hashNs, regexNs, jsonCount, hashCount, regexCount, thrown;
    static readonly byte[] payload = RandomNumberGenerator.GetBytes(64 * 1024);
    static readonly string text = string.Concat(Enumerable.Repeat(
        "order 12345 shipped to alice@example.com on 2026-11-27; ", 200));

    [DllImport("libc", EntryPoint = "clock_gettime")]
    static extern int ClockGetTime(int clock, out Timespec ts);
    [StructLayout(LayoutKind.Sequential)]
    struct Timespec { public long Seconds; public long Nanoseconds; }
    const int ClockThreadCputimeId = 3;

    static long ThreadCpuNs()
    {
        ClockGetTime(ClockThreadCputimeId, out var ts);
        return ts.Seconds * 1_000_000_000 + ts.Nanoseconds;
    }

    // Each handler measures its thread's CPU around a call to its work, as a
    // service's endpoint calls into its logic. The work allocates and throws
    // itself: a sample in the runtime's frameless allocation or throw stubs
    // loses the method that called them (docs/stacks.md, "A frame missing in
    // the middle"), and that is the work method, not the handler.
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    public static string HandleJson() => Measure(JsonWork, ref jsonNs, ref jsonCount);
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    public static string HandleHash() => Measure(HashWork, ref hashNs, ref hashCount);
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    public static string HandleRegex() => Measure(RegexWork, ref regexNs, ref regexCount);

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static string Measure(Func<string> work, ref long ns, ref long count)
    {
        long start = ThreadCpuNs();
        Interlocked.Increment(ref count);
        string result = work();
        Interlocked.Add(ref ns, ThreadCpuNs() - start);
        return result;
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static string JsonWork()
    {
        var orders = new List<Order>();
        for (int i = 0; i < 400; i++)
            orders.Add(new Order(i, "customer-" + i, i * 1.5, new[] { "a" + i, "b" + i, "c" + i }));
        string json = JsonSerializer.Serialize(orders);
        var back = JsonSerializer.Deserialize<List<Order>>(json)!;
        return back.Count + " orders, " + json.Length + " bytes";
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static string HashWork()
    {
        byte[] digest = payload;
        for (int i = 0; i < 24; i++) digest = SHA256.HashData(i == 0 ? payload : Concat(digest));
        return Convert.ToHexString(digest);
    }

    static byte[] Concat(byte[] digest)
    {
        var buffer = (byte[])payload.Clone();
        digest.CopyTo(buffer, 0);
        return buffer;
    }

    [GeneratedRegex(@"(\w+)@(\w+)\.com")]
    private static partial Regex Email();

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static string RegexWork()
    {
        long n = Interlocked.Read(ref regexCount);
        int matches = 0;
        for (int i = 0; i < 10; i++) matches += Email().Matches(text).Count;
        string result;
        try
        {
            if (n % 10 == 0) throw new InvalidOperationException($"request {n}: every 10th one fails");
            result = matches + " matches";
        }
        catch (InvalidOperationException e)
        {
            Interlocked.Increment(ref thrown);
            result = e.Message;
        }
        return result;
    }

    public static Dictionary<string, long> Stats() => new()
    {
        ["json_cpu_ns"] = Interlocked.Read(ref jsonNs),
        ["hash_cpu_ns"] = Interlocked.Read(ref hashNs),
        ["regex_cpu_ns"] = Interlocked.Read(ref regexNs),
        ["json_requests"] = Interlocked.Read(ref jsonCount),
        ["hash_requests"] = Interlocked.Read(ref hashCount),
        ["regex_requests"] = Interlocked.Read(ref regexCount),
        ["exceptions"] = Interlocked.Read(ref thrown),
        ["gc_count"] = GC.CollectionCount(0),
    };
}
