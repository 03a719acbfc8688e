package io.github.sparkkinesis.it;

import com.amazonaws.kinesis.agg.AggRecord;
import com.amazonaws.kinesis.agg.RecordAggregator;

/**
 * Calls into the awslabs aggregator that Scala cannot make: RecordAggregator.addUserRecord is overloaded, and one
 * overload takes KCL's UserRecord, whose AWS SDK v1 superclass is not on the classpath. scalac needs that class to
 * resolve any call to the overloaded name, and reflection (getMethod) needs it to list the methods; javac and the
 * JVM only need the overload actually called.
 */
public final class AggregatorCalls {
  private AggregatorCalls() {}

  /** Adds one user record; returns the full aggregate (without this record) when it no longer fits, else null. */
  public static AggRecord addUserRecord(RecordAggregator aggregator, String partitionKey, byte[] data)
      throws Exception {
    return aggregator.addUserRecord(partitionKey, data);
  }
}
