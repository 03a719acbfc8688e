import java.io.File
import java.util.zip.ZipFile

import scala.collection.JavaConverters._
import scala.sys.process._

/**
 * The KPL's native daemons, with their debug information removed: the KPL JAR ships them unstripped (about 90 MB each
 * for Linux x86_64 and aarch64); stripped, they are a fifth of that and work the same. The assembly takes these copies
 * instead of the KPL JAR's (see build.sbt), so the connector JAR and the Python wheel stay small.
 */
object KplNatives {
  val Folder = "amazon-kinesis-producer-native-binaries"

  /**
   * Files of the KPL JAR's native folder that the KPL never reads: it runs `<platform>/kinesis_producer` only, and this
   * zip is a second copy of the macOS daemon (6 MB in every JAR and twice in the wheel).
   */
  val Unused: Set[String] = Set("osx/kinesis-producer.zip")

  /** The ELF binaries to strip, and the strip commands able to, in order of preference. */
  private val Targets = Seq(
    "linux-x86_64/kinesis_producer" -> Seq("x86_64-linux-gnu-strip", "strip", "llvm-strip"),
    "linux-aarch64/kinesis_producer" -> Seq("aarch64-linux-gnu-strip", "llvm-strip"))

  /** Extracts every native file of `kplJar` under `out/Folder`, the Linux ones stripped; returns the files. */
  def extract(kplJar: File, out: File, log: String => Unit): Seq[File] = {
    val zip = new ZipFile(kplJar)
    try {
      val natives = zip.entries().asScala.filter(e => e.getName.startsWith(Folder + "/") && !e.isDirectory)
      natives.filterNot(e => Unused(e.getName.stripPrefix(Folder + "/"))).map { entry =>
        val target = new File(out, entry.getName)
        sbt.IO.createDirectory(target.getParentFile)
        sbt.IO.transfer(zip.getInputStream(entry), target)
        Targets.find { case (path, _) => entry.getName == s"$Folder/$path" }.foreach { case (path, tools) =>
          strip(target, path, tools)
          log(s"stripped the KPL's $path: ${entry.getSize / 1000000} MB -> ${target.length / 1000000} MB")
        }
        target.setExecutable(true)
        target
      }.toVector
    } finally zip.close()
  }

  private def strip(binary: File, path: String, tools: Seq[String]): Unit = {
    val tool = tools.find(t => Seq("sh", "-c", s"command -v $t").!(ProcessLogger(_ => ())) == 0).getOrElse(
      sys.error(s"None of ${tools.mkString(", ")} is installed, and one is needed to strip the KPL's $path " +
        "(apt-get install binutils-aarch64-linux-gnu, or llvm for llvm-strip)."))
    val exit = Seq(tool, "--strip-debug", binary.getAbsolutePath).!
    if (exit != 0) sys.error(s"$tool --strip-debug $binary failed with exit code $exit")
  }
}
