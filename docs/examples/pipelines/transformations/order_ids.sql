-- Each record's identity in Kinesis, read on from the orders table: (streamName, shardId, sequenceNumber,
-- subSequenceNumber) is unique per record, so a count per key above one would show a record read twice.
CREATE STREAMING TABLE order_ids AS
SELECT streamName, shardId, sequenceNumber, subSequenceNumber, CAST(data AS STRING) AS text
FROM STREAM(orders);
