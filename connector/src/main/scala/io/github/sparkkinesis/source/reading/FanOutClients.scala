package io.github.sparkkinesis.source.reading

import io.github.sparkkinesis.client.{FanOutClient, KinesisClient}

/** How a task, or the driver, reaches enhanced fan-out through the client it already has. */
private[sparkkinesis] object FanOutClients {

  /** The enhanced fan-out side of `client`; every client the connector builds has one. */
  def of(client: => KinesisClient): FanOutClient = client match {
    case c: FanOutClient => c
    case other => throw new IllegalStateException(s"$other cannot use enhanced fan-out (SubscribeToShard)")
  }
}
