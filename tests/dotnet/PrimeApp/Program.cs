// Test app for profcpu's .NET tests (tests/integration/test_dotnet.py).
//   PrimeApp SECONDS [PORT]
// The main thread runs PrimeWorker.RunWorker -> FindPrimeNumber (the prime
// finder of the well-known AKS profiling-sidecar walkthrough) for SECONDS;
// meanwhile an ASP.NET endpoint on 127.0.0.1:PORT (/primes/{n}) computes
// primes too, and a load thread calls it over HTTP, so ASP.NET, Kestrel and
// the thread pool (precompiled ReadyToRun code) show up in the profile.
// Prints "ready" once the endpoint has answered, and at the end
// "iterations=N seconds=S" for the worker (bench/dotnet.sh).
using System.Runtime.CompilerServices;

public static class PrimeWorker
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long FindPrimeNumber(int n)
    {
        int count = 0;
        long a = 2;
        while (count < n)
        {
            long b = 2;
            int prime = 1;
            while (b * b <= a)
            {
                if (a % b == 0)
                {
                    prime = 0;
                    break;
                }
                b++;
            }
            if (prime > 0) count++;
            a++;
        }
        return --a;
    }

    // Returns how many times it found the 20000th prime (the benchmark's
    // figure: iterations per second with and without a profiler).
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long RunWorker(DateTime end)
    {
        long iterations = 0;
        long sink = 0;
        while (DateTime.UtcNow < end)
        {
            sink += FindPrimeNumber(20000);
            iterations++;
        }
        GC.KeepAlive(sink);
        return iterations;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static async Task GenerateLoad(string url, DateTime end)
    {
        using var client = new HttpClient();
        while (DateTime.UtcNow < end)
        {
            try { await client.GetStringAsync(url); }
            catch (HttpRequestException) { await Task.Delay(50); }
        }
    }

    public static void Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0]) : 30;
        int port = args.Length > 1 ? int.Parse(args[1]) : 5080;
        var end = DateTime.UtcNow.AddSeconds(seconds);

        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.UseUrls($"http://127.0.0.1:{port}");
        var app = builder.Build();
        app.MapGet("/primes/{n:int}", (int n) => FindPrimeNumber(Math.Min(n, 5000)).ToString());
        app.StartAsync().GetAwaiter().GetResult();

        string url = $"http://127.0.0.1:{port}/primes/1500";
        using (var probe = new HttpClient()) probe.GetStringAsync(url).GetAwaiter().GetResult();
        Console.WriteLine("ready");
        Console.Out.Flush();

        var started = DateTime.UtcNow;
        var load = Task.Run(() => GenerateLoad(url, end));
        long iterations = RunWorker(end);
        double elapsed = (DateTime.UtcNow - started).TotalSeconds;
        load.GetAwaiter().GetResult();
        app.StopAsync().GetAwaiter().GetResult();
        Console.WriteLine($"iterations={iterations} seconds={elapsed:F3}");
    }
}
