// Usage: AllocLockApp PHASES SECONDS [stdin]
//
// The known-answer app of the .NET event stacks (allocations, lock waits and
// exceptions by managed stack). PHASES is "all" or a comma list of alloc,
// lock and throw; the phases run at once, each on threads of its own, for
// SECONDS:
//  alloc: one thread calls AllocSiteLarge or AllocSiteSmall, half each in a
//    pseudo-random order, 128 calls an iteration. AllocSiteLarge allocates
//    three BigRecords, AllocSiteSmall one byte[40]: 64 bytes each object, so
//    the large site allocates three times the small site's bytes, and a
//    sampler that picks
//    the object that crosses a byte threshold (GCAllocationTick, every
//    ~100 KB) picks either alike. The objects are kept in rings (they escape:
//    .NET 10 puts a non-escaping small object on the stack) and die young.
//  lock: a holder thread takes a Monitor, wakes one of two waiter threads and
//    holds the lock HoldMs; the woken waiter blocks in WaitSiteA or WaitSiteB
//    until it lets go. Rounds go A, A, A, B: about 75% of the waiting is
//    WaitSiteA's. Each site times its own lock entry (Stopwatch). The threads
//    wake each other with AutoResetEvents, not Monitor-based primitives, so
//    the two sites are the only Monitor waits the phase makes.
//  throw: one thread throws and catches, per round, three AlphaExceptions
//    (ThrowSiteA) and one BetaException (ThrowSiteB), ThrowsPerSecond in all.
//
// Before "ready" the phases run WarmupSeconds (the tiered JIT's final code in
// place). With "stdin" the app then waits for a line "go" before the measured
// run (so a profiler attaches first) and, once it has printed, for the end of
// its input. The output: one JSON line, the truth as the app measured it over
// the run: bytes per allocation site (GC.GetAllocatedBytesForCurrentThread
// deltas around each site's calls) and the whole process's
// (GC.GetTotalAllocatedBytes), microseconds waited per wait site, throws per
// throw site with their types, alloc iterations per second.
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Text.Json;

namespace AllocLockApp;

// 64 bytes on a 64-bit runtime: object header and method table (16), six longs (48).
public sealed class BigRecord
{
    public long A, B, C, D, E, F;
}

public sealed class AlphaException : Exception
{
    public AlphaException(long n) : base($"alpha {n}") { }
}

public sealed class BetaException : Exception
{
    public BetaException(long n) : base($"beta {n}") { }
}

static class Run
{
    public static volatile bool Stop;
}

sealed class AllocPhase
{
    public const int CallsPerIteration = 128;
    const int Ring = 4096;  // a power of two
    static readonly BigRecord[] Records = new BigRecord[Ring];
    static readonly byte[][] Buffers = new byte[Ring][];
    static int _record, _buffer;

    public long LargeBytes, SmallBytes, LargeObjects, SmallObjects, Iterations;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void AllocSiteLarge(long n)
    {
        int at = _record;
        Records[at] = new BigRecord { A = n };
        Records[(at + 1) & (Ring - 1)] = new BigRecord { B = n };
        Records[(at + 2) & (Ring - 1)] = new BigRecord { C = n };
        _record = (at + 3) & (Ring - 1);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void AllocSiteSmall(long n)
    {
        var buffer = new byte[40];
        buffer[n & 31] = (byte)n;
        Buffers[_buffer] = buffer;
        _buffer = (_buffer + 1) & (Ring - 1);
    }

    public void Work()
    {
        // Which site each call goes to: a pseudo-random sequence (xorshift),
        // half each. A fixed pattern (64 of one, then 64 of the other) would
        // alias with the runtime's regular allocation-context refills, where
        // GCAllocationTick samples, and tilt the sampled share.
        ulong pick = 0x9E3779B97F4A7C15UL;
        long n = 0;
        long last = GC.GetAllocatedBytesForCurrentThread();
        while (!Run.Stop)
        {
            for (int i = 0; i < CallsPerIteration; i++)
            {
                pick ^= pick << 13;
                pick ^= pick >> 7;
                pick ^= pick << 17;
                bool large = (pick & 1) != 0;
                if (large) AllocSiteLarge(n++);
                else AllocSiteSmall(n++);
                // Nothing else on this thread allocates: the delta is the site's.
                long now = GC.GetAllocatedBytesForCurrentThread();
                if (large)
                {
                    LargeBytes += now - last;
                    LargeObjects += 3;
                }
                else
                {
                    SmallBytes += now - last;
                    SmallObjects++;
                }
                last = now;
            }
            Iterations++;
        }
    }

    public object Truth(double seconds) => new Dictionary<string, object>
    {
        ["sites"] = new Dictionary<string, object>
        {
            ["AllocSiteLarge"] = new Dictionary<string, object>
            {
                ["type"] = typeof(BigRecord).FullName!, ["bytes"] = LargeBytes,
                ["objects"] = LargeObjects,
            },
            ["AllocSiteSmall"] = new Dictionary<string, object>
            {
                ["type"] = typeof(byte[]).FullName!, ["bytes"] = SmallBytes,
                ["objects"] = SmallObjects,
            },
        },
        ["iterations"] = Iterations,
        ["iterations_per_second"] = Iterations / seconds,
    };
}

sealed class LockPhase
{
    const int HoldMs = 10;
    readonly object _gate = new();
    readonly AutoResetEvent _goA = new(false), _goB = new(false), _entered = new(false);
    volatile bool _over;
    long _ticksA, _ticksB, _waitsA, _waitsB;

    public Thread[] Threads() =>
    [
        new Thread(Hold) { Name = "Holder" },
        new Thread(WaiterA) { Name = "WaiterA" },
        new Thread(WaiterB) { Name = "WaiterB" },
    ];

    void Hold()
    {
        for (long round = 0; !Run.Stop; round++)
        {
            lock (_gate)
            {
                (round % 4 == 3 ? _goB : _goA).Set();
                Thread.Sleep(HoldMs);
            }
            // The waiter has had the lock and let it go: the next round's
            // waiter never finds the previous one in its way.
            _entered.WaitOne();
        }
        _over = true;
        _goA.Set();
        _goB.Set();
    }

    void WaiterA()
    {
        while (true)
        {
            _goA.WaitOne();
            if (_over) return;
            _ticksA += WaitSiteA();
            _waitsA++;
            _entered.Set();
        }
    }

    void WaiterB()
    {
        while (true)
        {
            _goB.WaitOne();
            if (_over) return;
            _ticksB += WaitSiteB();
            _waitsB++;
            _entered.Set();
        }
    }

    // Each returns the Stopwatch ticks its lock entry took.
    [MethodImpl(MethodImplOptions.NoInlining)]
    long WaitSiteA()
    {
        long start = Stopwatch.GetTimestamp();
        lock (_gate)
        {
            return Stopwatch.GetTimestamp() - start;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    long WaitSiteB()
    {
        long start = Stopwatch.GetTimestamp();
        lock (_gate)
        {
            return Stopwatch.GetTimestamp() - start;
        }
    }

    static double Microseconds(long ticks) => ticks * 1e6 / Stopwatch.Frequency;

    public object Truth() => new Dictionary<string, object>
    {
        ["WaitSiteA"] = new Dictionary<string, object> { ["us"] = Microseconds(_ticksA), ["waits"] = _waitsA },
        ["WaitSiteB"] = new Dictionary<string, object> { ["us"] = Microseconds(_ticksB), ["waits"] = _waitsB },
    };
}

sealed class ThrowPhase
{
    const int ThrowsPerSecond = 400;
    long _a, _b;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void ThrowSiteA(long n) => throw new AlphaException(n);

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void ThrowSiteB(long n) => throw new BetaException(n);

    public void Work()
    {
        long period = Stopwatch.Frequency * 4 / ThrowsPerSecond;  // a round: 4 throws
        long next = Stopwatch.GetTimestamp();
        for (long n = 0; !Run.Stop; n++)
        {
            for (int k = 0; k < 3; k++)
            {
                try { ThrowSiteA(n); }
                catch (AlphaException) { _a++; }
            }
            try { ThrowSiteB(n); }
            catch (BetaException) { _b++; }
            next += period;
            long aheadMs = (next - Stopwatch.GetTimestamp()) * 1000 / Stopwatch.Frequency;
            if (aheadMs > 0) Thread.Sleep((int)aheadMs);
        }
    }

    public object Truth() => new Dictionary<string, object>
    {
        ["ThrowSiteA"] = new Dictionary<string, object>
        {
            ["type"] = typeof(AlphaException).FullName!, ["count"] = _a,
        },
        ["ThrowSiteB"] = new Dictionary<string, object>
        {
            ["type"] = typeof(BetaException).FullName!, ["count"] = _b,
        },
    };
}

public static class Program
{
    const double WarmupSeconds = 1.5;
    static readonly string[] AllPhases = ["alloc", "lock", "throw"];

    static Dictionary<string, object> RunPhases(string[] phases, double seconds)
    {
        var alloc = phases.Contains("alloc") ? new AllocPhase() : null;
        var locks = phases.Contains("lock") ? new LockPhase() : null;
        var throws = phases.Contains("throw") ? new ThrowPhase() : null;
        var threads = new List<Thread>();
        if (alloc != null) threads.Add(new Thread(alloc.Work) { Name = "Allocator" });
        if (locks != null) threads.AddRange(locks.Threads());
        if (throws != null) threads.Add(new Thread(throws.Work) { Name = "Thrower" });

        Run.Stop = false;
        long processBefore = GC.GetTotalAllocatedBytes(precise: true);
        var clock = Stopwatch.StartNew();
        foreach (var t in threads) t.Start();
        Thread.Sleep(TimeSpan.FromSeconds(seconds));
        Run.Stop = true;
        foreach (var t in threads) t.Join();
        double elapsed = clock.Elapsed.TotalSeconds;
        long processBytes = GC.GetTotalAllocatedBytes(precise: true) - processBefore;

        var truth = new Dictionary<string, object>
        {
            ["phases"] = phases,
            ["seconds"] = elapsed,
            ["process_bytes"] = processBytes,
        };
        if (alloc != null) truth["alloc"] = alloc.Truth(elapsed);
        if (locks != null) truth["lock_wait"] = locks.Truth();
        if (throws != null) truth["throws"] = throws.Truth();
        return truth;
    }

    public static int Main(string[] args)
    {
        string[] phases = args.Length >= 2
            ? (args[0] == "all" ? AllPhases : args[0].Split(','))
            : [];
        bool fromStdin = args.Length == 3 && args[2] == "stdin";
        if (phases.Length == 0 || phases.Any(p => !AllPhases.Contains(p)) ||
            !double.TryParse(args[1], out double seconds) || seconds <= 0 ||
            (args.Length == 3 && !fromStdin) || args.Length > 3)
        {
            Console.Error.WriteLine("usage: AllocLockApp all|alloc,lock,throw SECONDS [stdin]");
            return 2;
        }
        RunPhases(phases, WarmupSeconds);
        Console.WriteLine("ready");
        Console.Out.Flush();
        if (fromStdin)
        {
            string? line;
            while ((line = Console.ReadLine()) != null && line.Trim() != "go") { }
        }
        var truth = RunPhases(phases, seconds);
        Console.WriteLine(JsonSerializer.Serialize(truth));
        Console.Out.Flush();
        if (fromStdin)
        {
            while (Console.ReadLine() != null) { }
        }
        return 0;
    }
}
