// spark-kinesis: one source tree, two Spark lines.
//   Scala 2.12 -> Spark 3.5.x      Scala 2.13 -> Spark 4.x
// `build/sbt +assembly` builds both shaded JARs; `build/sbt ++2.13 ...` selects the Spark 4 line.
import sbtassembly.AssemblyPlugin.autoImport._

lazy val scala212 = "2.12.18"
lazy val scala213 = "2.13.16"

/**
 * The Spark version each line compiles against. Spark 3.5: the oldest release of the line, so one JAR runs on all.
 * Spark 4: 4.1.0, the first release with real-time mode, whose interfaces only the real-time classes (in the
 * connector's scala-2.13 folders) use; every other class uses only what 4.0.0 has too, so the one JAR still runs on 4.0
 * (bin/test's smoke run on the oldest release checks it), where the real-time classes are never loaded.
 */
def sparkCompileVersion(scalaBinary: String): String = scalaBinary match {
  case "2.12" => "3.5.0"
  case _ => "4.1.0"
}

/**
 * Writes `bytes` to `file` unless it holds them already: a generated resource rewritten on every run would look changed
 * and make sbt-assembly build the shaded JAR again each time a task needs it.
 */
def writeIfChanged(file: File, bytes: Array[Byte]): Unit =
  if (!file.isFile || !java.util.Arrays.equals(IO.readBytes(file), bytes)) IO.write(file, bytes)

/** The oldest Spark release each line's JAR runs on. */
def sparkOldestVersion(scalaBinary: String): String = scalaBinary match {
  case "2.12" => "3.5.0"
  case _ => "4.0.0"
}

/**
 * The Spark version the integration tests run on; `-Dspark.test.version=4.1.1` picks another release, and `oldest` the
 * oldest release the line's JAR supports (bin/test's smoke run). They are compiled against the line's default release
 * whatever runs them (see [[sparkTestCompileVersion]]).
 */
def sparkTestVersion(scalaBinary: String): String = {
  val chosen = scalaBinary match {
    case "2.12" => sys.props.getOrElse("spark.test.version.212", sparkTestCompileVersion(scalaBinary))
    case _ => sys.props.getOrElse("spark.test.version", sparkTestCompileVersion(scalaBinary))
  }
  if (chosen == "oldest") sparkOldestVersion(scalaBinary) else chosen
}

/**
 * The Spark release the integration tests (and the benchmark) compile against. Another release chosen to run them on
 * changes only the classpath they run with, so that one compilation serves every release of the line (they use only
 * Spark's public API, stable across a line) and switching releases costs no recompilation.
 */
def sparkTestCompileVersion(scalaBinary: String): String = scalaBinary match {
  case "2.12" => "3.5.8"
  case _ => "4.2.0"
}

lazy val awsSdkVersion = "2.42.34"
// KPL 1.1.x drops a record's explicit hash key while its new record-distribution discovery (DescribeStreamSummary)
// has not succeeded, which it never does against kinesis-mock; 1.0.9 honours explicit hash keys.
lazy val kplVersion = "1.0.9"
lazy val shadedPrefix = "io.github.sparkkinesis.shaded"

ThisBuild / organization := "io.github.spark-kinesis"
ThisBuild / organizationName := "spark-kinesis"
ThisBuild / version := IO.read(file("VERSION")).trim
ThisBuild / licenses := Seq("Apache-2.0" -> url("https://www.apache.org/licenses/LICENSE-2.0.txt"))
// What Maven Central requires of a POM besides the coordinates and the licence (python/pyproject.toml names the same
// URLs; a test compares them).
ThisBuild / homepage := Some(url("https://github.com/spark-kinesis/spark-kinesis"))
ThisBuild / scmInfo := Some(ScmInfo(
  url("https://github.com/spark-kinesis/spark-kinesis"),
  "scm:git:https://github.com/spark-kinesis/spark-kinesis.git"))
ThisBuild / developers := List(
  Developer("spark-kinesis", "The spark-kinesis authors", "", url("https://github.com/spark-kinesis")))
ThisBuild / description := "Amazon Kinesis Data Streams source and sink for Apache Spark Structured Streaming"
ThisBuild / scalaVersion := scala212
ThisBuild / crossScalaVersions := Seq(scala212, scala213)

/** JVM flags Spark needs on Java 17 (what spark-submit adds for you); bin/ scripts read the same file. */
lazy val sparkJavaOptions = "-Xmx3g" +: IO.readLines(file("build/spark-jvm-options")).map(_.trim).filter(_.nonEmpty)

/**
 * Test JVMs (and the child JVMs the integration tests start with their flags) compile with C1 only and collect with the
 * serial collector: tests mostly wait on emulators and triggers, and on two cores C2's compiler threads and G1's
 * threads cost more than the faster code saves (a third less CPU for a Spark test, measured). Benchmarks keep the JVM's
 * defaults.
 */
lazy val testJvmOptions = Seq("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")

lazy val commonSettings = Seq(
  scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-release", "8"),
  Test / fork := true,
  Test / javaOptions ++= sparkJavaOptions ++ testJvmOptions,
  Test / parallelExecution := false,
  Test / envVars += "SPARK_LOCAL_IP" -> "127.0.0.1",
  Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oDF"))

lazy val root = (project in file("."))
  .aggregate(connector, integrationTests, bench)
  .settings(
    name := "spark-kinesis-root",
    publish / skip := true,
    crossScalaVersions := Nil)

lazy val connector = (project in file("connector"))
  .settings(commonSettings)
  .settings(
    name := "spark-kinesis",
    // The driver-planning benchmark lives in bench/ but runs against the connector's test fake (no network, no
    // Spark), so it is compiled with the connector's tests: `bench/run --only planning`.
    Test / unmanagedSourceDirectories += (ThisBuild / baseDirectory).value / "bench" / "src" / "planning" / "scala",
    libraryDependencies ++= Seq(
      "org.apache.spark" %% "spark-sql" % sparkCompileVersion(scalaBinaryVersion.value) % Provided,
      "software.amazon.awssdk" % "kinesis" % awsSdkVersion,
      "software.amazon.awssdk" % "apache-client" % awsSdkVersion,
      // Enhanced fan-out: SubscribeToShard needs the async client on Netty's HTTP/2 (relocated below, like all Netty).
      "software.amazon.awssdk" % "netty-nio-client" % awsSdkVersion,
      "software.amazon.awssdk" % "sts" % awsSdkVersion,
      // The DYNAMODB metadata store (kinesis.metadataCommitterType).
      "software.amazon.awssdk" % "dynamodb" % awsSdkVersion,
      "com.fasterxml.jackson.core" % "jackson-databind" % "2.17.2",
      // AWS Glue Schema Registry payloads (io.github.sparkkinesis.payloads): Apache Avro, relocated below so Spark's
      // own Avro never meets ours. Not AWS's schema-registry-serde with its dependencies (Kafka, Kotlin, a Scala
      // 2.12-only JSON Schema generator), nor the SDK's glue module (9.4 MB for 4 of its 250 operations, twice in the
      // wheel): payloads/GlueHttp.scala makes those calls with the SDK's signer and HTTP client. commons-compress
      // serves only Avro's container-file codecs, which records never use.
      ("org.apache.avro" % "avro" % "1.11.5").exclude("org.apache.commons", "commons-compress"),
      // The protobuf runtime the KPL's generated messages need (4.x); our de-aggregator uses it too.
      "com.google.protobuf" % "protobuf-java" % "4.29.0",
      // The sink: the Kinesis Producer Library 1.x, whose JAR carries the native daemon for Linux and macOS.
      // The Glue Schema Registry integration is left out (it brings Kafka, Kotlin and Avro); only its serde
      // classes stay, because the KPL's constructor needs them loadable even when no schema is used. Its
      // CloudWatch client stays: the constructor builds one even with metrics off.
      ("software.amazon.kinesis" % "amazon-kinesis-producer" % kplVersion)
        .exclude("software.amazon.glue", "schema-registry-serde"),
      ("software.amazon.glue" % "schema-registry-serde" % "1.1.24").intransitive(),
      // The KPL's constructor always builds a CloudWatch client (KinesisProducer.initCloudWatchClient), even with
      // metrics off: without this module every write fails with NoClassDefFoundError. Pinned to our SDK version.
      "software.amazon.awssdk" % "cloudwatch" % awsSdkVersion,
      // AWS's own GSR frame encoder (SerializationDataEncoder, already in the JAR for the KPL) needs its configuration
      // classes: the unit tests frame records with it, to check our reader against AWS's layout.
      ("software.amazon.glue" % "schema-registry-common" % "1.1.24" % Test).intransitive(),
      // ... whose constants name the Glue SDK's model classes. (Tests only: the connector calls Glue without it.)
      "software.amazon.awssdk" % "glue" % "2.42.28" % Test,
      "org.scalatest" %% "scalatest" % "3.2.19" % Test),
    // Scala 2.12 / 2.13 differences live in src/main/scala-2.12 and scala-2.13 (sbt adds them by itself). The
    // DataSource V2 streaming API the connector uses is the same in Spark 3.5 and 4.0-4.2, so no Spark-specific
    // source folder is needed.
    // scalafmt checks every version's folder (src/main/scala-2.12, scala-2.13, ...) from whichever version is
    // current, so one run of bin/lint covers the whole tree.
    Compile / scalafmt / unmanagedSources :=
      ((Compile / sourceDirectory).value * "scala*" ** "*.scala").get.sorted,
    // The project's LICENSE and NOTICE in every JAR's META-INF (the assembly prefers them to its dependencies').
    Compile / resourceGenerators += Def.task {
      val root = (ThisBuild / baseDirectory).value
      Seq("LICENSE", "NOTICE").map { name =>
        val out = (Compile / resourceManaged).value / "META-INF" / name
        writeIfChanged(out, IO.readBytes(root / name))
        out
      }
    }.taskValue,
    // Publishing locally again after a rebuild replaces the artifacts (sbt refuses to overwrite a release version by
    // default); publishing to Maven Central never overwrites, whatever this says.
    publishM2Configuration := publishM2Configuration.value.withOverwrite(true),
    publishLocalConfiguration := publishLocalConfiguration.value.withOverwrite(true),
    // `-Dsparkkinesis.publishTo=<folder>` publishes to a Maven repository in that folder (the install-path tests
    // resolve the coordinates from it), again after each rebuild.
    publishTo := sys.props.get("sparkkinesis.publishTo").map(dir => MavenCache("local-folder", file(dir))),
    publishConfiguration := publishConfiguration.value.withOverwrite(sys.props.contains("sparkkinesis.publishTo")),
    // The sources JAR holds the sources, not the KPL's daemons (resources the build generates).
    Compile / packageSrc / mappings ~= (_.filterNot { case (_, path) => path.startsWith(KplNatives.Folder) }),
    // The version, readable at run time (one version number for the JAR and the Python package).
    Compile / resourceGenerators += Def.task {
      val out = (Compile / resourceManaged).value / "io" / "github" / "sparkkinesis" / "version.properties"
      writeIfChanged(out, s"version=${version.value}\n".getBytes("UTF-8"))
      Seq(out)
    }.taskValue,
    // The KPL's native daemons, stripped (see project/KplNatives.scala); the assembly prefers them to the KPL JAR's.
    Compile / resourceGenerators += Def.task {
      val kplJar = (Compile / dependencyClasspath).value.map(_.data)
        .find(_.getName == s"amazon-kinesis-producer-$kplVersion.jar")
        .getOrElse(sys.error(s"amazon-kinesis-producer-$kplVersion.jar is not on the classpath"))
      val out = (Compile / resourceManaged).value
      val log = streams.value.log
      // Cached per Scala version (crossTarget): the streams cache directory is shared by both cross-builds.
      val cached = FileFunction.cached(crossTarget.value / "kpl-natives-cache", FilesInfo.hash) { _ =>
        IO.delete(out / KplNatives.Folder)
        KplNatives.extract(kplJar, out, line => log.info(line)).toSet
      }
      cached(Set(kplJar)).toSeq
    }.taskValue,
    assembly / test := {},
    // The published JAR is the shaded assembly, and the POM names only what the cluster provides (Spark), so a
    // Maven or sbt dependency brings the same relocated classes as --jars, never a second AWS SDK.
    Compile / packageBin := assembledJar.value,
    assembledJar := assembledJarTask.value,
    pomPostProcess := { node =>
      import scala.xml.{Elem, Node => XmlNode}
      import scala.xml.transform.{RewriteRule, RuleTransformer}
      new RuleTransformer(new RewriteRule {
        override def transform(n: XmlNode): Seq[XmlNode] = n match {
          case e: Elem if e.label == "dependency" && !(e \ "scope").text.matches("provided|test") => Nil
          case other => other
        }
      }).transform(node).head
    },
    assembly / assemblyJarName := s"spark-kinesis-assembly_${scalaBinaryVersion.value}-${version.value}.jar",
    assembly / assemblyOption ~= (_.withIncludeScala(false)),
    // Spark provides SLF4J and commons-logging (through jcl-over-slf4j): use the cluster's, bundle neither.
    assembly / assemblyExcludedJars := (assembly / fullClasspath).value.filter { jar =>
      val n = jar.data.getName
      n.startsWith("slf4j-") || n.startsWith("commons-logging")
    },
    assembly / assemblyShadeRules := Seq(
      "software.amazon.awssdk.**" -> "awssdk.@1",
      "software.amazon.eventstream.**" -> "eventstream.@1",
      "io.netty.**" -> "netty.@1",
      "com.fasterxml.jackson.**" -> "jackson.@1",
      "org.reactivestreams.**" -> "reactivestreams.@1",
      "com.google.protobuf.**" -> "protobuf.@1",
      "org.apache.avro.**" -> "avro.@1",
      "org.apache.http.**" -> "apache.http.@1",
      "org.apache.commons.codec.**" -> "apache.commons.codec.@1",
      "org.apache.commons.io.**" -> "apache.commons.io.@1",
      "org.apache.commons.lang3.**" -> "apache.commons.lang3.@1",
      "software.amazon.kinesis.producer.**" -> "kpl.@1",
      "com.amazonaws.services.schemaregistry.**" -> "schemaregistry.@1",
      // Generated protobuf classes the Glue serde puts outside any package of its own.
      "additionalTypes.**" -> "schemaregistry.additionalTypes.@1",
      "metadata.ProtobufSchemaMetadata**" -> "schemaregistry.metadata.ProtobufSchemaMetadata@1",
      "com.google.common.**" -> "guava.@1",
      "com.google.thirdparty.**" -> "guava.thirdparty.@1",
      "com.google.errorprone.**" -> "errorprone.@1",
      "com.google.j2objc.**" -> "j2objc.@1",
      "org.checkerframework.**" -> "checkerframework.@1",
      "javax.annotation.**" -> "javax.annotation.@1").map { case (from, to) =>
      ShadeRule.rename(from -> s"$shadedPrefix.$to").inAll
    },
    assembly / assemblyMergeStrategy := {
      case PathList("META-INF", "MANIFEST.MF") => MergeStrategy.discard
      case PathList("META-INF", "versions", _*) => MergeStrategy.discard
      case PathList("META-INF", "native", _*) => MergeStrategy.discard
      case PathList("META-INF", "native-image", _*) => MergeStrategy.discard
      case PathList("META-INF", "maven", _*) => MergeStrategy.discard
      case PathList("META-INF", "services", f) if f.startsWith("reactor.blockhound") => MergeStrategy.discard
      case PathList("META-INF", "services", _*) => MergeStrategy.filterDistinctLines
      case PathList("META-INF", f) if f.matches("(?i).*\\.(sf|dsa|rsa)") => MergeStrategy.discard
      // The project's own licence and notice; each dependency's keeps its text, renamed after its JAR (NOTICE says so).
      case PathList("META-INF", "LICENSE" | "NOTICE") => MergeStrategy.preferProject
      case PathList("META-INF", f) if f.toUpperCase.contains("LICENSE") || f.toUpperCase.contains("NOTICE") =>
        MergeStrategy.rename
      case PathList("META-INF", "io.netty.versions.properties") => MergeStrategy.concat
      case PathList("google", "protobuf", _*) => MergeStrategy.discard
      case PathList(KplNatives.Folder, rest @ _*) if KplNatives.Unused(rest.mkString("/")) => MergeStrategy.discard
      case PathList(KplNatives.Folder, _*) => MergeStrategy.preferProject
      case x if x.endsWith("module-info.class") => MergeStrategy.discard
      case x if x.endsWith(".proto") || x.endsWith(".java") => MergeStrategy.discard
      case x => MergeStrategy.defaultMergeStrategy(x)
    })

lazy val assembledJar =
  taskKey[File]("The shaded JAR, built by sbt-assembly only when something that goes into it changed")

/**
 * The shaded JAR without sbt-assembly's own up-to-date check, which hashes every dependency's classes again (about 40 s
 * each time, and every integration-test command needs the JAR): built again only when the list of its inputs (classes,
 * resources, dependency JARs, the build's definition) or the newest modification time among them changed.
 */
lazy val assembledJarTask = Def.taskDyn {
  val jar = (assembly / assemblyOutputPath).value
  val build = (ThisBuild / baseDirectory).value
  val inputs =
    (assembly / fullClasspath).value.map(_.data) ++ (build / "build.sbt" +: (build / "project" * "*.scala").get)
  val newest = inputs.flatMap(f => if (f.isDirectory) (f ** "*").get else Seq(f)).map(_.lastModified).max
  // What the JAR was last built from: its inputs, and the newest modification time among them.
  val fingerprint = (newest.toString +: inputs.map(_.getAbsolutePath).sorted).mkString("\n")
  val stamp = file(jar.getPath + ".inputs")
  if (jar.isFile && stamp.isFile && IO.read(stamp) == fingerprint) Def.task(jar)
  else
    Def.task {
      val built = assembly.value
      IO.write(stamp, fingerprint)
      built
    }
}

/**
 * Two forked test JVMs at once (sbt runs one by default): bin/test runs a Scala line's unit tests beside that line's
 * integration tests, which mostly wait on emulators and triggers. Otherwise sbt's defaults: a task per core, `clean`
 * alone.
 */
Global / concurrentRestrictions := Seq(
  Tags.limitAll(EvaluateTask.SystemProcessors),
  Tags.limit(Tags.ForkedTestGroup, 2),
  Tags.exclusiveGroup(Tags.Clean))

/**
 * The integration suites that differ by Spark line (the shaded JAR with its relocated Netty and TLS, every trigger,
 * restarts from checkpoints, the sink, the DynamoDB store), which bin/test runs on the lines that do not run the whole
 * suite; on Spark 3.5 also its refusal of SQL tables. The logic under them is the same source, tested in full by both
 * unit suites. `*.SinkSuite` names the sink's suite alone: RealTimeKinesisSinkSuite needs real-time mode, which Spark
 * 4.0 lacks. A task, not a command, so that `all` runs it beside the unit tests.
 */
lazy val smokeTest = taskKey[Unit]("The integration suites run on the Spark lines that do not run the whole suite")
lazy val smokeSuites =
  Seq("*ShadedJarSuite", "*LicenceFilesSuite", "*TriggerSuite", "*RestartSuite", "*.SinkSuite", "*DynamoDbStoreSuite")

/**
 * Tests against emulators. They see the connector only as users do: through the shaded assembly JAR on the classpath
 * and the `aws-kinesis` format, next to an unshaded AWS SDK of their own.
 */
lazy val integrationTests = (project in file("integration-tests"))
  .settings(commonSettings)
  .settings(
    name := "spark-kinesis-integration-tests",
    publish / skip := true,
    libraryDependencies ++=
      integrationTestDependencies(sparkTestCompileVersion(scalaBinaryVersion.value)).map(_ % Test),
    sparkTestRelease(Test),
    Test / unmanagedJars += (connector / assembledJar).value,
    Test / javaOptions ++= Seq(
      s"-Dsparkkinesis.assemblyJar=${(connector / assembledJar).value.getAbsolutePath}",
      s"-Dsparkkinesis.projectRoot=${(ThisBuild / baseDirectory).value.getAbsolutePath}"),
    // The emulators bin/test started once (kinesis-mock, moto, DynamoDB Local); otherwise each suite starts its own.
    Test / envVars ++= sys.env.filter { case (k, _) =>
      Seq("KINESIS_MOCK", "MOTO_", "DYNAMODB_LOCAL").exists(k.startsWith)
    },
    // Another JVM to run the tests on when asked (bin/test runs the smoke suites on Java 21 too); compiling stays on
    // sbt's own JDK. A system property as well as the environment, so that one sbt session can switch with `reload`.
    Test / forkOptions := integrationJavaHome
      .fold((Test / forkOptions).value)(home => (Test / forkOptions).value.withJavaHome(file(home))),
    Test / javaOptions ++= integrationJavaHome.map(home => s"-Dsparkkinesis.javaHome=$home").toSeq,
    smokeTest := Def.taskDyn {
      val sqlTables = if (scalaBinaryVersion.value == "2.12") Seq("*SqlTablesSuite") else Nil
      (Test / testOnly).toTask((smokeSuites ++ sqlTables).mkString(" ", " ", ""))
    }.value)

/** What the integration tests need besides the connector, on Spark release `spark`. */
def integrationTestDependencies(spark: String): Seq[ModuleID] = Seq(
  "org.apache.spark" %% "spark-sql" % spark,
  "software.amazon.awssdk" % "kinesis" % awsSdkVersion,
  "software.amazon.awssdk" % "apache-client" % awsSdkVersion,
  "software.amazon.awssdk" % "netty-nio-client" % awsSdkVersion,
  // The Kinesis aggregator from awslabs: a real KPL-format aggregator to build test records with.
  ("com.amazonaws" % "amazon-kinesis-aggregator" % "1.0.3").intransitive(),
  ("com.amazonaws" % "amazon-kinesis-client" % "1.8.8").intransitive(),
  // AggRecord's validation calls commons-lang 2 (StringUtils), a dependency of KCL 1 that intransitive drops.
  "commons-lang" % "commons-lang" % "2.6",
  "org.scalatest" %% "scalatest" % "3.2.19")

/** The dependencies of the Spark release the integration tests run on, resolved apart from those they compile with. */
lazy val SparkTestRuntime = config("spark-test-runtime").hide

/**
 * Runs `config`'s classpath (the integration tests', the benchmark's) on [[sparkTestVersion]] when it is not the
 * release they compiled against: their classes, the connector's JAR and that release's dependency tree instead of the
 * compile-time tree.
 */
def sparkTestRelease(config: Configuration): Seq[Setting[_]] = Seq(
  ivyConfigurations += SparkTestRuntime,
  libraryDependencies ++= {
    val line = scalaBinaryVersion.value
    val release = sparkTestVersion(line)
    if (release == sparkTestCompileVersion(line)) Nil
    else integrationTestDependencies(release).map(_ % SparkTestRuntime)
  },
  config / fullClasspath := {
    val line = scalaBinaryVersion.value
    val compiled = (config / fullClasspath).value
    if (sparkTestVersion(line) == sparkTestCompileVersion(line)) compiled
    else {
      val compileTree = (config / managedClasspath).value.files.toSet
      compiled.filterNot(entry => compileTree(entry.data)) ++
        Classpaths.managedJars(SparkTestRuntime, classpathTypes.value, update.value)
    }
  })

/** The JDK the integration tests run on, when not sbt's own: `-Dsparkkinesis.itJavaHome` or the environment. */
def integrationJavaHome: Option[String] =
  sys.props.get("sparkkinesis.itJavaHome").orElse(sys.env.get("SPARK_KINESIS_IT_JAVA_HOME")).filter(_.nonEmpty)

/**
 * The benchmark (`bench/run`): a main program, not a test, so `test` never runs it. Like the integration tests it sees
 * the connector only through the assembly JAR and the `aws-kinesis` format; it reuses their emulator harness
 * (KinesisMock, TestStreams, the awslabs aggregator), whose Test-scoped dependencies come with `compile->test`.
 * `bench/run` runs it in a JVM of its own; `bench/run` (the sbt task) works too, forked with Spark's JVM flags.
 */
lazy val bench = (project in file("bench"))
  .dependsOn(integrationTests % "compile->test")
  .settings(commonSettings)
  .settings(
    name := "spark-kinesis-bench",
    publish / skip := true,
    Compile / unmanagedJars += (connector / assembledJar).value,
    // Spark's from_avro, which GsrDecodeBench measures the Glue Schema Registry decoding against (3.5.7 on the 3.5
    // line: the Maven mirror here has no spark-avro 3.5.8; from_avro is the same in every 3.5 release).
    libraryDependencies += "org.apache.spark" %% "spark-avro" %
      (if (scalaBinaryVersion.value == "2.12") "3.5.7" else sparkTestCompileVersion(scalaBinaryVersion.value)),
    sparkTestRelease(Runtime),
    Compile / mainClass := Some("io.github.sparkkinesis.bench.BenchMain"),
    // Spark 4.2 brings scala-library 2.13.18, newer than the 2.13.16 compiler; it runs on that library, as
    // spark-submit would run it. (The integration tests meet this only in Test, where sbt does not check it.)
    allowUnsafeScalaLibUpgrade := true,
    run / fork := true,
    run / javaOptions ++= sparkJavaOptions :+
      s"-Dsparkkinesis.projectRoot=${(ThisBuild / baseDirectory).value.getAbsolutePath}",
    // moto's too: GsrDecodeBench's schema registry.
    run / envVars ++= sys.env.filter { case (k, _) => k.startsWith("KINESIS_MOCK") || k.startsWith("MOTO_") })

// The Scala half of bin/lint: every Scala and sbt file formatted as .scalafmt.conf says, the folders of each Scala line
// included (scalafmt sees only the current line's), ending on the build's default line.
addCommandAlias("formatCheck", s"scalafmtCheckAll; scalafmtSbtCheck; ++$scala213 scalafmtCheckAll; ++$scala212")
addCommandAlias("formatAll", s"scalafmtAll; scalafmtSbt; ++$scala213 scalafmtAll; ++$scala212")
addCommandAlias("updateOptionsDocs", "connector/runMain io.github.sparkkinesis.options.OptionsDocs docs/options.md")
