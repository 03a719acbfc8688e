package io.github.sparkkinesis.compat

/** `asScala` / `asJava` on Scala 2.13 (the 2.12 twin of this file uses the converters 2.12 has). */
object JavaCollections extends scala.collection.convert.AsScalaExtensions with scala.collection.convert.AsJavaExtensions
