import StrictJSON

/// How the commands write values in plain text: table cells, figures and bytes, the same way everywhere.
enum PlainText {
    /// `text` cut or padded with spaces to `width` characters, a table's cell.
    static func cell(_ text: String, width: Int) -> String {
        let kept = text.prefix(width)
        return kept + String(repeating: " ", count: width - kept.count)
    }

    /// `text` without the spaces and tabs at either end (Unicode's space separators: no-break and ideographic
    /// spaces too, but not line breaks).
    static func trimmingSpaces(_ text: String) -> String {
        func isSpace(_ character: Character) -> Bool { character.isWhitespace && !character.isNewline }
        return String(text.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }

    /// `value` with exactly `places` digits after the point, as ``JSONValue/decimal(_:places:)`` writes it: the
    /// shortest decimal of `value` rounded half away from zero (`0.005` to two places is `0.01`).
    static func decimal(_ value: Double, places: Int) -> String {
        JSONValue.decimal(value, places: places).serialized()
    }

    /// `value` rounded to a whole number, its digits grouped by thousands with commas: `12,346`.
    static func grouped(_ value: Double) -> String {
        guard value.isFinite else { return "\(value)" }
        let digits = decimal(value, places: 0)
        let sign = digits.hasPrefix("-") ? "-" : ""
        let whole = Array(digits.dropFirst(sign.count))
        var text = sign
        for (index, digit) in whole.enumerated() {
            if index > 0 && (whole.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return text
    }
}
