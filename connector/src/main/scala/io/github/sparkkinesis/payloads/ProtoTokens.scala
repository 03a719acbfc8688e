package io.github.sparkkinesis.payloads

import java.util.regex.Pattern

/** A token of a .proto source: its kind, its text (a string literal unescaped), and the line it starts on. */
private[payloads] final case class ProtoToken(kind: ProtoToken.Kind, text: String, line: Int)

private[payloads] object ProtoToken {
  sealed trait Kind
  case object Identifier extends Kind // also dotted names, and names with a leading dot (fully qualified)
  case object Number extends Kind
  case object Text extends Kind // a string literal
  case object Symbol extends Kind
}

/** Splits .proto source text into tokens, dropping whitespace and comments; fails naming the line of a stray char. */
private[payloads] object ProtoTokens {
  import ProtoToken._

  // One alternative per group: whitespace, line comment, block comment, identifier, number, string, symbol.
  private val Token = Pattern.compile(
    "\\G(?:(\\s+)|(//[^\\n]*)|(/\\*(?s:.*?)\\*/)" +
      "|(\\.?[A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)*)" +
      "|(0[xX][0-9A-Fa-f]+|[0-9]+(?:\\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\\.[0-9]+(?:[eE][+-]?[0-9]+)?)" +
      "|(\"(?:[^\"\\\\\\n]|\\\\.)*\"|'(?:[^'\\\\\\n]|\\\\.)*')" +
      "|([{};=\\[\\]<>,()\\-+:]))")

  def apply(source: String): IndexedSeq[ProtoToken] = {
    val out = IndexedSeq.newBuilder[ProtoToken]
    val m = Token.matcher(source)
    var at = 0
    var line = 1
    while (at < source.length) {
      if (!m.find(at) || m.start != at)
        throw new IllegalArgumentException(s"line $line: unexpected character '${source.charAt(at)}'")
      val text = m.group()
      if (m.group(4) != null) out += ProtoToken(Identifier, text, line)
      else if (m.group(5) != null) out += ProtoToken(Number, text, line)
      else if (m.group(6) != null) out += ProtoToken(Text, unescape(text.substring(1, text.length - 1), line), line)
      else if (m.group(7) != null) out += ProtoToken(Symbol, text, line)
      line += text.count(_ == '\n')
      at = m.end
    }
    out.result()
  }

  /** A string literal's value: C-style escapes (\n, \t, \\, \", \', octal \NNN, hex \xHH) resolved. */
  private def unescape(body: String, line: Int): String = {
    if (body.indexOf('\\') < 0) body
    else {
      val out = new StringBuilder
      var i = 0
      while (i < body.length) {
        val c = body.charAt(i)
        if (c != '\\') { out += c; i += 1 }
        else {
          val e = body.charAt(i + 1)
          i += 2
          e match {
            case 'n' => out += '\n'
            case 't' => out += '\t'
            case 'r' => out += '\r'
            case 'a' => out += '\u0007'
            case 'b' => out += '\b'
            case 'f' => out += '\f'
            case 'v' => out += '\u000b'
            case 'x' | 'X' =>
              val hex = body.drop(i).take(2).takeWhile(Character.digit(_, 16) >= 0)
              if (hex.isEmpty) throw new IllegalArgumentException(s"line $line: \\x without hex digits")
              out += Integer.parseInt(hex, 16).toChar
              i += hex.length
            case d if d >= '0' && d <= '7' =>
              val octal = body.drop(i - 1).take(3).takeWhile(ch => ch >= '0' && ch <= '7')
              out += Integer.parseInt(octal, 8).toChar
              i += octal.length - 1
            case other => out += other // \\ \" \' \?
          }
        }
      }
      out.toString
    }
  }
}
