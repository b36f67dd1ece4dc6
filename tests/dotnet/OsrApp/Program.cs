// Test app for .NET on-stack replacement (tests/integration/test_dotnet_osr.py).
//   OsrApp SECONDS [work|callee|main]
// Main calls Work(SECONDS) once; Work runs a hot loop for SECONDS. With
// "callee" the loop's body is a call (Work -> Mix, so the OSR frame is not
// the leaf); with "main" the loop is in Main itself (its caller is the
// runtime, not managed code). A method
// with a loop that is called once starts at Tier0 and, with default tiering,
// is moved to optimized code in the middle of the loop through on-stack
// replacement: its samples then fall in code the perf map names
// "OsrApp::Work(int64)[OptimizedTier1OSR]". Prints "ready" before calling
// Work and, at the end, what it measured:
//   iterations=N seconds=S rate=R   (R = millions of loop iterations per second)
// so tests and docs can compare the throughput with OSR on and off
// (DOTNET_TC_OnStackReplacement=0 or DOTNET_TC_QuickJitForLoops=0).
using System.Diagnostics;
using System.Runtime.CompilerServices;

public static class OsrApp
{
    public static long Sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long Work(long seconds)
    {
        long end = Stopwatch.GetTimestamp() + seconds * Stopwatch.Frequency;
        ulong x = 88172645463325252UL;
        long iterations = 0;
        while (true)
        {
            // xorshift64: cheap, not foldable by the JIT.
            for (int i = 0; i < 100_000; i++)
            {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
            }
            iterations += 100_000;
            if (Stopwatch.GetTimestamp() >= end) break;
        }
        Sink = (long)x;
        return iterations;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static ulong Mix(ulong x)
    {
        for (int i = 0; i < 1000; i++)
        {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        return x;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long WorkCallingMix(long seconds)
    {
        long end = Stopwatch.GetTimestamp() + seconds * Stopwatch.Frequency;
        ulong x = 88172645463325252UL;
        long iterations = 0;
        while (true)
        {
            for (int i = 0; i < 100; i++) x = Mix(x);
            iterations += 100_000;
            if (Stopwatch.GetTimestamp() >= end) break;
        }
        Sink = (long)x;
        return iterations;
    }

    public static void Main(string[] args)
    {
        long seconds = args.Length > 0 ? long.Parse(args[0]) : 10;
        string mode = args.Length > 1 ? args[1] : "work";
        Console.WriteLine("ready");
        Console.Out.Flush();
        var watch = Stopwatch.StartNew();
        long iterations = 0;
        if (mode == "main")
        {
            // Work's loop, inlined by hand.
            long end = Stopwatch.GetTimestamp() + seconds * Stopwatch.Frequency;
            ulong x = 88172645463325252UL;
            while (true)
            {
                for (int i = 0; i < 100_000; i++)
                {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                }
                iterations += 100_000;
                if (Stopwatch.GetTimestamp() >= end) break;
            }
            Sink = (long)x;
        }
        else
        {
            iterations = mode == "callee" ? WorkCallingMix(seconds) : Work(seconds);
        }
        double elapsed = watch.Elapsed.TotalSeconds;
        Console.WriteLine(
            $"iterations={iterations} seconds={elapsed:F3} rate={iterations / elapsed / 1e6:F1}");
    }
}
