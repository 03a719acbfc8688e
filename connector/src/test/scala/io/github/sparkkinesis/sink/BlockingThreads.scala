package io.github.sparkkinesis.sink

import org.scalatest.Assertions
import org.scalatest.matchers.should.Matchers

/** Runs a call that should block on a thread of its own, for tests of writers that wait for confirmations. */
trait BlockingThreads extends Matchers { self: Assertions =>

  /** Runs `body` on a new thread and returns once that thread waits (bounded: fails after 10 s). */
  protected def blockedIn(body: => Unit): Thread = {
    val thread = new Thread(new Runnable { override def run(): Unit = body })
    thread.start()
    val deadline = System.nanoTime() + 10000000000L
    def waiting = Set(Thread.State.WAITING, Thread.State.TIMED_WAITING).contains(thread.getState)
    while (!waiting && System.nanoTime() < deadline) Thread.`yield`()
    withClue("the thread should be waiting: ")(waiting shouldBe true)
    thread
  }

  /** Fails unless `thread` ends within 10 s. */
  protected def joined(thread: Thread): Unit = {
    thread.join(10000L)
    thread.isAlive shouldBe false
  }
}
