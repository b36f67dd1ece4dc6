using System.Net;
using System.Net.Sockets;

// TCP over loopback: Socket.Send goes through SocketPal.TryCompleteSendTo
// into the P/Invoke to SystemNative_Send. Usage: SocketSendApp SECONDS [DELAY]
// (DELAY: seconds to wait after "ready" before the first send).
Console.WriteLine("ready");
if (args.Length > 1) Thread.Sleep(int.Parse(args[1]) * 1000);
var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
listener.Listen(1);
var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
client.Connect(listener.LocalEndPoint!);
var server = listener.Accept();
var drain = new Thread(() => { var b = new byte[65536]; while (server.Receive(b) > 0) { } }) { IsBackground = true };
drain.Start();
var payload = new byte[64];
var until = DateTime.UtcNow.AddSeconds(int.Parse(args[0]));
while (DateTime.UtcNow < until) client.Send(payload);
