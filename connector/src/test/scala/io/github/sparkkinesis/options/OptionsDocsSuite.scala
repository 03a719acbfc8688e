package io.github.sparkkinesis.options

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

class OptionsDocsSuite extends AnyFunSuite with Matchers {

  test("the options table and migration sections of docs/options.md are the ones generated from the registry") {
    val page = new String(Files.readAllBytes(Paths.get("..", "docs", "options.md")), UTF_8)
    withClue("docs/options.md's generated parts are out of date: run `build/sbt updateOptionsDocs`\n") {
      OptionsDocs.withTable(page) shouldBe page
    }
  }

  test("the table lists every option of the registry") {
    KinesisOptionsRegistry.all.foreach(o => OptionsDocs.markdownTable should include(s"`${o.name}`"))
  }

  test("the JSON description lists every option with its default and secrecy") {
    val json = io.github.sparkkinesis.offsets.Json.read(OptionsDocs.json, "options")
    val options = json.get("options")
    options.size shouldBe KinesisOptionsRegistry.all.size
    val versionFile = new String(Files.readAllBytes(Paths.get("..", "VERSION")), UTF_8).trim
    json.get("connectorVersion").asText shouldBe versionFile
    val startingPosition =
      (0 until options.size).map(i => options.get(i)).find(_.get("name").asText == "kinesis.startingPosition").get
    startingPosition.get("default").asText shouldBe "LATEST"
    (0 until options.size).map(i => options.get(i)).filter(_.get("secret").asBoolean).map(_.get("name").asText) shouldBe
      Seq(
        "kinesis.awsAccessKeyId",
        "kinesis.awsSecretKey",
        "kinesis.sessionToken",
        "kinesis.stsExternalId",
        "kinesis.credentialProviderParam")
  }

  test("given the aliases, then each connector's migration section lists its names and what each does here") {
    val sections = OptionsDocs.migrationSections
    Dialect.all.foreach(d => sections should include(s"### Migrating from ${d.name} (format `${d.format}`)"))
    KinesisOptionsRegistry.aliases.filter(_.dialects.exists(Dialect.all.contains))
      .foreach(a => sections should include(s"| `${a.name}` |"))
    sections should include("| `kinesis.executor.maxFetchTimeInMs` | `kinesis.maxFetchTimePerShard` (milliseconds " +
      "to seconds, rounded up) |")
    sections should include("| `roleArn` | `kinesis.stsRoleArn` |")
    sections should include("| `consumerName` | `kinesis.consumerName` |")
    sections should include("| `maxFetchRate` | no effect (warning): the source paces each shard")
  }

  test("given the aliases, then the options table and the JSON description name each option's other spellings") {
    OptionsDocs.markdownTable should include("| `streamName` (qubole/roncemer, Databricks) |")
    val json = io.github.sparkkinesis.offsets.Json.read(OptionsDocs.json, "options").get("options")
    val stream = (0 until json.size).map(json.get).find(_.get("name").asText == "kinesis.streamName").get
    stream.get("aliases").get(0).get("name").asText shouldBe "streamName"
    stream.get("aliases").get(0).get("dialects").get(1).asText shouldBe "Databricks"
  }

  test("given a time option renamed to take durations, then the table shows its earlier name beside it") {
    OptionsDocs.markdownTable should include("`kinesis.getRecords.fetchIntervalMs` (earlier name) |")
    OptionsDocs.markdownTable should include("| `kinesis.maxFetchTimePerShard` | source | duration | `10s` |")
    OptionsDocs.migrationSections should not include "kinesis.getRecords.fetchIntervalMs"
  }
}
