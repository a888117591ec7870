/// Why a JSON text was rejected, with the line and column (both from 1) of the offending character.
public struct JSONError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        case invalidUTF8
        case unexpectedEnd
        case unexpectedCharacter(Character)
        case invalidNumber
        case invalidEscape
        case invalidUnicodeEscape
        case controlCharacterInString
        case duplicateKey(String)
        case nestingTooDeep(limit: Int)
        case trailingData
    }

    public let reason: Reason
    public let line: Int
    public let column: Int

    public var description: String {
        let what: String
        switch reason {
        case .invalidUTF8: what = "the text is not valid UTF-8"
        case .unexpectedEnd: what = "the text ends too early"
        case .unexpectedCharacter(let character): what = "unexpected character '\(character)'"
        case .invalidNumber: what = "invalid number"
        case .invalidEscape: what = "invalid escape sequence in a string"
        case .invalidUnicodeEscape: what = "invalid \\u escape (lone surrogate or bad hex digits)"
        case .controlCharacterInString: what = "unescaped control character in a string"
        case .duplicateKey(let key): what = "duplicate key \"\(key)\""
        case .nestingTooDeep(let limit): what = "nesting deeper than \(limit) levels"
        case .trailingData: what = "unexpected data after the JSON value"
        }
        return "line \(line), column \(column): \(what)"
    }
}
