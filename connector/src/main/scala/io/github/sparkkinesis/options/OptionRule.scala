package io.github.sparkkinesis.options

/**
 * A rule across options, which [[OptionValues]] checks after every value when a DataFrame is created. `violation` gets
 * whether an option is set, an option's whole-number value and an option's text (trimmed), both as set, else the
 * default, and returns the message when the rule is broken.
 */
sealed abstract class OptionRule(val usage: OptionUsage, val message: String) {
  def options: Seq[OptionSpec[_]]

  def violation(
      isSet: OptionSpec[_] => Boolean,
      number: OptionSpec[Long] => Long,
      text: OptionSpec[_] => Option[String]): Option[String]
}

object OptionRule {

  /** At least one of `options` must be given to a DataFrame of `side`. */
  final case class Required(options: Seq[OptionSpec[_]], side: OptionUsage, why: String)
      extends OptionRule(side, why) {
    def violation(
        isSet: OptionSpec[_] => Boolean,
        number: OptionSpec[Long] => Long,
        text: OptionSpec[_] => Option[String]): Option[String] =
      Some(message).filterNot(_ => options.exists(isSet))
  }

  /** The `options` are given all together or not at all. */
  final case class Together(options: Seq[OptionSpec[_]], why: String)
      extends OptionRule(OptionUsage.Both, why) {
    def violation(
        isSet: OptionSpec[_] => Boolean,
        number: OptionSpec[Long] => Long,
        text: OptionSpec[_] => Option[String]): Option[String] =
      Some(message).filter(_ => options.exists(isSet) && !options.forall(isSet))
  }

  /** When the first option is given, the others must be too. */
  final case class Needs(options: Seq[OptionSpec[_]], why: String) extends OptionRule(OptionUsage.Both, why) {
    def violation(
        isSet: OptionSpec[_] => Boolean,
        number: OptionSpec[Long] => Long,
        text: OptionSpec[_] => Option[String]): Option[String] =
      Some(message).filter(_ => isSet(options.head) && !options.tail.forall(isSet))
  }

  /** At most one of the `options` is given. */
  final case class Excludes(options: Seq[OptionSpec[_]], why: String)
      extends OptionRule(OptionUsage.Both, why) {
    def violation(
        isSet: OptionSpec[_] => Boolean,
        number: OptionSpec[Long] => Long,
        text: OptionSpec[_] => Option[String]): Option[String] =
      Some(message).filter(_ => options.count(isSet) > 1)
  }

  /**
   * The first option's whole-number value is at least the second's, defaults included; `{value}` and `{floor}` in the
   * message stand for the two values, as their parsers show them.
   */
  final case class NotBelow(value: OptionSpec[Long], floor: OptionSpec[Long], template: String)
      extends OptionRule(OptionUsage.Both, template) {
    def options: Seq[OptionSpec[_]] = Seq(value, floor)
    def violation(
        isSet: OptionSpec[_] => Boolean,
        number: OptionSpec[Long] => Long,
        text: OptionSpec[_] => Option[String]): Option[String] = {
      val (value, floor) = (number(this.value), number(this.floor))
      Some(template.replace("{value}", this.value.parser.show(value)).replace("{floor}", this.floor.parser.show(floor)))
        .filter(_ => value < floor)
    }
  }

  /**
   * When the first option's text (set, else its default) is one of `values` in any case, exactly one of the `choices`
   * is given: `message` when none is, `several` when more are. In both, `{<option name>}` stands for the text of that
   * option of the rule (never a secret one).
   */
  final case class OneWhen(
      option: OptionSpec[_],
      values: Seq[String],
      choices: Seq[OptionSpec[_]],
      side: OptionUsage,
      missing: String,
      several: String) extends OptionRule(side, missing) {
    require(!options.exists(_.secret), s"rule on ${options.map(_.name).mkString(", ")} would echo a secret")
    def options: Seq[OptionSpec[_]] = option +: choices
    def violation(
        isSet: OptionSpec[_] => Boolean,
        number: OptionSpec[Long] => Long,
        text: OptionSpec[_] => Option[String]): Option[String] =
      if (!text(option).exists(t => values.exists(_.equalsIgnoreCase(t)))) None
      else choices.count(isSet) match {
        case 0 => Some(withValues(missing, text))
        case 1 => None
        case _ => Some(withValues(several, text))
      }

    private def withValues(template: String, text: OptionSpec[_] => Option[String]): String =
      Placeholder.replaceAllIn(
        template,
        m =>
          scala.util.matching.Regex.quoteReplacement(
            options.find(_.name == m.group(1)).map(o => text(o).getOrElse("")).getOrElse(m.matched)))
  }

  private val Placeholder = "\\{([^{}]+)\\}".r
}
