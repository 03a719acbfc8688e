package io.github.sparkkinesis.compat

/** `asScala` / `asJava` on Scala 2.12 (the 2.13 twin of this file uses the non-deprecated converters). */
object JavaCollections extends scala.collection.convert.DecorateAsScala with scala.collection.convert.DecorateAsJava
