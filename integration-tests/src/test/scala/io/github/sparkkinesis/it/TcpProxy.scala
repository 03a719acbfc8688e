package io.github.sparkkinesis.it

import java.io.{InputStream, OutputStream}
import java.net.{InetAddress, InetSocketAddress, ServerSocket, Socket, SocketException}
import java.util.concurrent.ConcurrentHashMap

/**
 * A loopback TCP forwarder to `targetPort` that a test can take down and bring back on the same port, to play an
 * endpoint that stops answering in the middle of a write without losing the emulator's state behind it. `stop` closes
 * the listening socket and every open connection, so clients see refused and reset connections.
 */
final class TcpProxy(targetPort: Int) extends AutoCloseable {
  val port: Int = {
    val probe = new ServerSocket(0, 50, InetAddress.getLoopbackAddress)
    try probe.getLocalPort
    finally probe.close()
  }
  private val sockets = ConcurrentHashMap.newKeySet[Socket]()
  @volatile private var server: Option[ServerSocket] = None

  /** Connections forwarded since the proxy was created. */
  @volatile var connections: Int = 0

  def start(): Unit = synchronized {
    require(server.isEmpty, "the proxy is already running")
    val listening = new ServerSocket()
    listening.setReuseAddress(true)
    listening.bind(new InetSocketAddress(InetAddress.getLoopbackAddress, port), 50)
    server = Some(listening)
    daemon(s"proxy-accept-$port") {
      try while (true) forward(listening.accept())
      catch { case _: SocketException => () } // closed by stop()
    }
  }

  def stop(): Unit = synchronized {
    server.foreach(_.close())
    server = None
    sockets.forEach(s => closeQuietly(s))
    sockets.clear()
  }

  override def close(): Unit = stop()

  private def forward(client: Socket): Unit = {
    connections += 1
    val upstream = new Socket(InetAddress.getLoopbackAddress, targetPort)
    Seq(client, upstream).foreach(sockets.add)
    daemon("proxy-up")(pump(client.getInputStream, upstream.getOutputStream, client, upstream))
    daemon("proxy-down")(pump(upstream.getInputStream, client.getOutputStream, client, upstream))
  }

  private def pump(in: InputStream, out: OutputStream, a: Socket, b: Socket): Unit = {
    val buffer = new Array[Byte](64 * 1024)
    try {
      var n = in.read(buffer)
      while (n >= 0) {
        out.write(buffer, 0, n)
        out.flush()
        n = in.read(buffer)
      }
    } catch { case _: java.io.IOException => () }
    finally Seq(a, b).foreach(closeQuietly)
  }

  private def closeQuietly(s: Socket): Unit =
    try s.close()
    catch { case _: java.io.IOException => () }

  private def daemon(name: String)(body: => Unit): Unit = {
    val t = new Thread(new Runnable { override def run(): Unit = body }, name)
    t.setDaemon(true)
    t.start()
  }
}
