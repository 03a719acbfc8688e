addSbtPlugin("com.eed3si9n" % "sbt-assembly" % "2.3.1")
// `build/sbt scalafmtAll` formats the Scala sources (.scalafmt.conf); bin/lint and bin/test check them.
addSbtPlugin("org.scalameta" % "sbt-scalafmt" % "2.5.6")
