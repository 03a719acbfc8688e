package io.github.sparkkinesis.it

import java.io.{InputStream, OutputStream}
import java.net.{InetAddress, InetSocketAddress, ServerSocket, Socket, SocketException}
import java.util.concurrent.ConcurrentHashMap

/**
 * A loopback TCP forwarder to `targetPort` that a test can take down and bring back on the same port, to play an
 * endpoint that stops answering in the middle of a write without losing the emulator's state behind it. `stop` closes
 * the listening socket and every open connection, so clients see refused and reset connections. [[silenceHttp2]] plays
 * a connection lost without a close instead: the open HTTP/2 connections (enhanced fan-out's) stay open but carry
 * nothing more either way, as when a path drops, while new connections are forwarded as before.
 */
final class TcpProxy(targetPort: Int) extends AutoCloseable {
  val port: Int = {
    val probe = new ServerSocket(0, 50, InetAddress.getLoopbackAddress)
    try probe.getLocalPort
    finally probe.close()
  }
  private val sockets = ConcurrentHashMap.newKeySet[Socket]()

  /** The client sockets of connections that negotiated HTTP/2, and those whose bytes are dropped from now on. */
  private val http2 = ConcurrentHashMap.newKeySet[Socket]()
  private val silenced = ConcurrentHashMap.newKeySet[Socket]()
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

  /** Every open HTTP/2 connection goes silent for good, without a close; returns how many there were. */
  def silenceHttp2(): Int = {
    val open = http2.toArray(Array.empty[Socket]).filterNot(_.isClosed)
    open.foreach(silenced.add)
    open.length
  }

  private def forward(client: Socket): Unit = {
    connections += 1
    val upstream = new Socket(InetAddress.getLoopbackAddress, targetPort)
    Seq(client, upstream).foreach(sockets.add)
    daemon("proxy-up")(pump(client.getInputStream, upstream.getOutputStream, client, upstream, fromClient = true))
    daemon("proxy-down")(pump(upstream.getInputStream, client.getOutputStream, client, upstream, fromClient = false))
  }

  /** Forwards `in` to `out` until either side closes; bytes of a silenced connection are read and dropped. */
  private def pump(in: InputStream, out: OutputStream, client: Socket, upstream: Socket, fromClient: Boolean): Unit = {
    val buffer = new Array[Byte](64 * 1024)
    try {
      var n = in.read(buffer)
      if (fromClient && n > 0 && offersHttp2(buffer, n)) http2.add(client)
      while (n >= 0) {
        if (!silenced.contains(client)) {
          out.write(buffer, 0, n)
          out.flush()
        }
        n = in.read(buffer)
      }
    } catch { case _: java.io.IOException => () }
    finally {
      Seq(client, upstream).foreach(closeQuietly)
      Seq(http2, silenced).foreach(_.remove(client))
    }
  }

  /** Whether a TLS ClientHello offers "h2" by ALPN (its protocol list holds the length-prefixed bytes 2 'h' '2'). */
  private def offersHttp2(hello: Array[Byte], length: Int): Boolean =
    hello.iterator.take(length).sliding(3).exists(w => w == Seq[Byte](2, 'h'.toByte, '2'.toByte))

  private def closeQuietly(s: Socket): Unit =
    try s.close()
    catch { case _: java.io.IOException => () }

  private def daemon(name: String)(body: => Unit): Unit = {
    val t = new Thread(new Runnable { override def run(): Unit = body }, name)
    t.setDaemon(true)
    t.start()
  }
}
