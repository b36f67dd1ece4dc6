// Usage: EventsApp SECONDS RATE
//        EventsApp read FILE.nettrace
// RATE times a second: GC.Collect(), throw and catch a TestException (the
// main thread and a thread named "Thrower" take turns), and jit a new
// DynamicMethod named EventsAppDynamicN; two threads also fight
// over a lock; once a second it blocks the thread pool with more sleeping
// work items than it has threads, more each second (its starvation detector
// keeps adding threads). Prints "ready" once running, then at exit
// how many of each it did, the lock contentions the runtime counted
// (Monitor.LockContentionCount) and the seconds it ran. "read" prints, as JSON, what TraceEvent's own
// reader finds in a .nettrace file: events per provider/id, induced GCs,
// exceptions by type, contention stops, dynamic methods loaded and jitted,
// thread-pool thread starts and adjustments, events lost, and the threads
// exceptions were thrown on (the events' thread ids, with counts).
using System.Diagnostics;
using System.Reflection.Emit;
using System.Text.Json;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

namespace EventsApp;

public sealed class TestException : Exception
{
    public TestException(int n) : base($"test exception {n}") { }
}

public static class Program
{
    static readonly object Gate = new();
    static volatile bool _done;
    static readonly SemaphoreSlim ThrowNow = new(0);
    static int _thrownByThrower;

    // Throws and catches one TestException each time it is told to.
    static void Thrower()
    {
        while (true)
        {
            ThrowNow.Wait();
            if (_done) return;
            try
            {
                throw new TestException(-1);
            }
            catch (TestException)
            {
                Interlocked.Increment(ref _thrownByThrower);
            }
        }
    }

    static void Contend()
    {
        while (!_done)
        {
            lock (Gate) { Thread.Sleep(5); }
        }
    }

    // A method the JIT compiles when first called: one MethodJittingStarted
    // and one MethodLoadVerbose each (verbose level).
    static int JitOne(int n)
    {
        var method = new DynamicMethod($"EventsAppDynamic{n}", typeof(int), Type.EmptyTypes);
        var il = method.GetILGenerator();
        il.Emit(OpCodes.Ldc_I4, n);
        il.Emit(OpCodes.Ret);
        return ((Func<int>)method.CreateDelegate(typeof(Func<int>)))();
    }

    static int Read(string path)
    {
        using var source = new EventPipeEventSource(path);
        var events = new SortedDictionary<string, int>();
        var exceptions = new SortedDictionary<string, int>();
        var exceptionThreads = new SortedDictionary<string, int>();
        int gcInduced = 0, contentionStops = 0, dynamicLoaded = 0, dynamicJitting = 0;
        int poolThreadStarts = 0, poolAdjustments = 0;
        source.Clr.ThreadPoolWorkerThreadStart += e => poolThreadStarts++;
        source.Clr.ThreadPoolWorkerThreadAdjustmentAdjustment += e => poolAdjustments++;
        source.Clr.MethodLoadVerbose += e =>
        {
            if (e.MethodName.StartsWith("EventsAppDynamic")) dynamicLoaded++;
        };
        source.Clr.MethodJittingStarted += e =>
        {
            if (e.MethodName.StartsWith("EventsAppDynamic")) dynamicJitting++;
        };
        source.Clr.GCStart += e => { if (e.Reason == GCReason.Induced) gcInduced++; };
        source.Clr.ExceptionStart += e =>
        {
            exceptions[e.ExceptionType] = exceptions.GetValueOrDefault(e.ExceptionType) + 1;
            string thread = e.ThreadID.ToString();
            exceptionThreads[thread] = exceptionThreads.GetValueOrDefault(thread) + 1;
        };
        source.Clr.ContentionStop += e => contentionStops++;
        source.AllEvents += e =>
        {
            string key = $"{e.ProviderName}/{(int)e.ID}";
            events[key] = events.GetValueOrDefault(key) + 1;
        };
        source.Process();
        Console.WriteLine(JsonSerializer.Serialize(new Dictionary<string, object>
        {
            ["events"] = events,
            ["gc_start_induced"] = gcInduced,
            ["exceptions"] = exceptions,
            ["exception_threads"] = exceptionThreads,
            ["contention_stop"] = contentionStops,
            ["dynamic_methods_loaded"] = dynamicLoaded,
            ["dynamic_methods_jitting"] = dynamicJitting,
            ["threadpool_thread_start"] = poolThreadStarts,
            ["threadpool_adjustment"] = poolAdjustments,
            ["events_lost"] = source.EventsLost,
            ["pointer_size"] = source.PointerSize,
        }));
        return 0;
    }

    public static int Main(string[] args)
    {
        if (args.Length == 2 && args[0] == "read") return Read(args[1]);
        double seconds = args.Length > 0 ? double.Parse(args[0]) : 10;
        int rate = args.Length > 1 ? int.Parse(args[1]) : 20;
        var contenders = new[] { new Thread(Contend), new Thread(Contend) };
        foreach (var t in contenders) t.Start();
        var thrower = new Thread(Thrower) { Name = "Thrower" };
        thrower.Start();
        Console.WriteLine("ready");
        Console.Out.Flush();
        var clock = Stopwatch.StartNew();
        int gcs = 0, exceptions = 0, jitted = 0;
        long next = 0;
        while (clock.Elapsed.TotalSeconds < seconds)
        {
            GC.Collect();
            gcs++;
            if (gcs % 2 == 0)
            {
                ThrowNow.Release();
            }
            else
            {
                try
                {
                    throw new TestException(exceptions);
                }
                catch (TestException)
                {
                    exceptions++;
                }
            }
            if (JitOne(jitted) == jitted) jitted++;
            if (gcs % rate == 1)
            {
                int blockers = 4 * (2 + (int)clock.Elapsed.TotalSeconds);
                for (int i = 0; i < blockers; i++)
                {
                    ThreadPool.QueueUserWorkItem(_ => Thread.Sleep(700));
                }
            }
            next += 1000 / rate;
            long wait = next - clock.ElapsedMilliseconds;
            if (wait > 0) Thread.Sleep((int)wait);
        }
        _done = true;
        foreach (var t in contenders) t.Join();
        ThrowNow.Release();
        thrower.Join();
        exceptions += _thrownByThrower;
        Console.WriteLine($"gcs {gcs} exceptions {exceptions} jitted {jitted} " +
                          $"contentions {Monitor.LockContentionCount} " +
                          $"seconds {clock.Elapsed.TotalSeconds:F3}");
        return 0;
    }
}
