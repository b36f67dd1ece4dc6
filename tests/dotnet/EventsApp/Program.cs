// Usage: EventsApp SECONDS RATE
// RATE times a second: GC.Collect() and throw and catch a TestException; two
// threads also fight over a lock. Prints "ready" once running, then at exit
// how many of each it did.
using System.Diagnostics;

namespace EventsApp;

public sealed class TestException : Exception
{
    public TestException(int n) : base($"test exception {n}") { }
}

public static class Program
{
    static readonly object Gate = new();
    static volatile bool _done;

    static void Contend()
    {
        while (!_done)
        {
            lock (Gate) { Thread.Sleep(5); }
        }
    }

    public static int Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0]) : 10;
        int rate = args.Length > 1 ? int.Parse(args[1]) : 20;
        var contenders = new[] { new Thread(Contend), new Thread(Contend) };
        foreach (var t in contenders) t.Start();
        Console.WriteLine("ready");
        Console.Out.Flush();
        var clock = Stopwatch.StartNew();
        int gcs = 0, exceptions = 0;
        long next = 0;
        while (clock.Elapsed.TotalSeconds < seconds)
        {
            GC.Collect();
            gcs++;
            try
            {
                throw new TestException(exceptions);
            }
            catch (TestException)
            {
                exceptions++;
            }
            next += 1000 / rate;
            long wait = next - clock.ElapsedMilliseconds;
            if (wait > 0) Thread.Sleep((int)wait);
        }
        _done = true;
        foreach (var t in contenders) t.Join();
        Console.WriteLine($"gcs {gcs} exceptions {exceptions}");
        return 0;
    }
}
