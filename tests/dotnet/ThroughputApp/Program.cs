// Usage: ThroughputApp [WARMUP_SECONDS]
// The workload of bench/dotnet_events.sh. One thread runs a loop whose
// iteration does ~2 us of integer work, allocates ~1.2 KB (a byte array and a
// string; one array in 64 is kept in a ring of 4096, so some survive to gen1
// and gen2), takes a lock that another thread holds now and then (for ~20 us
// every ~1 ms, so the loop sometimes waits: contention), throws and catches
// an exception every 1000 iterations and queues a thread-pool work item
// every 256. Prints "ready" after WARMUP_SECONDS (default 2: the JIT's tier-1
// code is in place), then reads stdin: "go" starts counting, "stop" prints
// "iterations=N seconds=S" for the time since "go"; end of input exits.
using System.Diagnostics;

namespace ThroughputApp;

public sealed class ThroughputException : Exception
{
    public ThroughputException(long n) : base($"iteration {n}") { }
}

public static class Program
{
    static readonly object Gate = new();
    static readonly byte[][] Kept = new byte[4096][];
    static long _shared, _poolItems;
    static long _iterations;
    static volatile bool _exit;

    static long Step(long i)
    {
        ulong h = (ulong)i;
        for (int k = 0; k < 1500; k++) h = (h * 6364136223846793005UL + 1442695040888963407UL) ^ (h >> 29);
        var buffer = new byte[1024];
        buffer[(int)(h & 1023)] = (byte)h;
        string text = string.Concat("item ", i.ToString(), " ", h.ToString("x"));
        if ((i & 63) == 0) Kept[(i >> 6) & 4095] = buffer;
        lock (Gate) { _shared += text.Length + buffer[(int)(h & 1023)]; }
        if (i % 1000 == 0)
        {
            try { throw new ThroughputException(i); }
            catch (ThroughputException) { _shared++; }
        }
        if ((i & 255) == 0) ThreadPool.UnsafeQueueUserWorkItem(_ => Interlocked.Increment(ref _poolItems), null);
        return (long)h;
    }

    static void Work()
    {
        long i = 0, sum = 0;
        while (!_exit)
        {
            sum += Step(i++);
            Volatile.Write(ref _iterations, i);
        }
        GC.KeepAlive(sum);
    }

    static void Holder()
    {
        var spin = new Stopwatch();
        while (!_exit)
        {
            lock (Gate)
            {
                spin.Restart();
                while (spin.Elapsed.TotalMicroseconds < 20) { }
            }
            Thread.Sleep(1);
        }
    }

    public static int Main(string[] args)
    {
        double warmup = args.Length > 0 ? double.Parse(args[0]) : 2;
        var threads = new[] { new Thread(Work), new Thread(Holder) };
        foreach (var t in threads) t.Start();
        Thread.Sleep(TimeSpan.FromSeconds(warmup));
        Console.WriteLine("ready");
        Console.Out.Flush();
        var clock = new Stopwatch();
        long start = 0;
        string? line;
        while ((line = Console.ReadLine()) != null)
        {
            if (line == "go")
            {
                start = Volatile.Read(ref _iterations);
                clock.Restart();
            }
            else if (line == "stop")
            {
                long n = Volatile.Read(ref _iterations) - start;
                Console.WriteLine($"iterations={n} seconds={clock.Elapsed.TotalSeconds:F3}");
                Console.Out.Flush();
            }
        }
        _exit = true;
        foreach (var t in threads) t.Join();
        return 0;
    }
}
