package io.github.sparkkinesis.options

import java.util.Locale

/**
 * Spark's options with every alias replaced by the registry option it stands for (value converted), and the one-line
 * warnings for aliases that have no effect here or mean something slightly different. Keys of `options` are lower case,
 * as Spark hands them.
 */
final case class AliasResolution(options: Map[String, String], warnings: Seq[String])

object AliasResolution {
  import AliasEffect._
  import KinesisOptionsRegistry.{aliases, find}

  private val byKey: Map[String, OptionAlias] = aliases.map(a => a.key -> a).toMap

  /** What one key given by the user becomes: an option of the registry under some spelling, or nothing. */
  private final case class Spelled(target: OptionSpec[_], spelling: String, given: String, text: String)

  /**
   * Resolves `raw` (any key case). Fails when two spellings of one option carry different values (naming both), or when
   * an alias' value cannot be converted (naming the alias and its target).
   */
  def resolve(raw: Map[String, String]): AliasResolution = {
    val warnings = Seq.newBuilder[String]
    val spelled = Seq.newBuilder[Spelled]
    val untouched = Map.newBuilder[String, String]
    raw.foreach { case (givenKey, value) =>
      val key = givenKey.toLowerCase(Locale.ROOT)
      (find(key), byKey.get(key)) match {
        case (Some(spec), _) => spelled += Spelled(spec, spec.name, value, value)
        case (None, Some(alias)) => alias.effect match {
            case NoEffect(why) =>
              warnings += s"Option ${alias.shown} has no effect with spark-kinesis: $why."
            case Sets(target, convert, differs) =>
              val spec = find(target).getOrElse(throw new IllegalStateException(
                s"alias ${alias.name} stands for $target, which is not an option of the registry"))
              val accepted = Some(convert.accepted).filter(_.nonEmpty).getOrElse(spec.accepted)
              val (text, note) =
                convert(value.trim).fold(problem => throw invalid(alias, spec, value, problem, accepted), identity)
              // Checked here too, so that a bad value is reported under the name the user wrote.
              spec.parse(text.trim).left.foreach(problem => throw invalid(alias, spec, value, problem, accepted))
              spelled += Spelled(spec, alias.name, value, text)
              (differs.toSeq ++ note).foreach(what =>
                warnings += s"Option ${alias.shown} is read as ${spec.name}: $what.")
          }
        case _ => untouched += key -> value
      }
    }
    val resolved = spelled.result().groupBy(_.target).map { case (spec, spellings) =>
      spellings.map(s => s -> spec.parse(s.text.trim)).groupBy(_._2).keys.size match {
        case 1 => spec.key -> spellings.sortBy(_.spelling != spec.name).head.text
        case _ => throw conflict(spec, spellings)
      }
    }
    AliasResolution(untouched.result() ++ resolved, warnings.result().sorted)
  }

  private def invalid(alias: OptionAlias, spec: OptionSpec[_], raw: String, problem: String, accepted: String) = {
    val shown = if (spec.secret) "<redacted>" else s"'$raw'"
    new IllegalArgumentException(s"Invalid value $shown for option ${alias.shown}, read as ${spec.name}: $problem. " +
      s"Accepted: $accepted.")
  }

  private def conflict(spec: OptionSpec[_], spellings: Seq[Spelled]) = {
    val given = spellings.sortBy(_.spelling).map(s =>
      if (spec.secret) s.spelling else s"${s.spelling}='${s.given}'").mkString(" and ")
    new IllegalArgumentException(s"Options $given both set ${spec.name}, to different values: keep one of them.")
  }
}
