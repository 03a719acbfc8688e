package io.github.sparkkinesis.options

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}

import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.matchers.should.Matchers

class OptionsDocsSuite extends AnyFunSuite with Matchers {

  test("the README's options table is the one generated from the registry") {
    val readme = new String(Files.readAllBytes(Paths.get("..", "README.md")), UTF_8)
    withClue("README.md's options table is out of date: run `build/sbt updateOptionsDocs`\n") {
      OptionsDocs.withTable(readme) shouldBe readme
    }
  }

  test("the table lists every option of the registry") {
    KinesisOptionsRegistry.all.foreach(o => OptionsDocs.markdownTable should include(s"`${o.name}`"))
  }
}
