/// Why a text is not a property list this parser accepts: the rule that was broken and the byte offset where.
public struct PropertyListError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Rule: Hashable, Sendable {
        /// The input is longer than the caller's size limit.
        case inputTooLarge(limit: Int)
        /// Containers are nested deeper than the caller's depth limit.
        case nestingTooDeep(limit: Int)
        /// A value was expected (start of a string, `{` or `(`).
        case expectedValue
        /// A dictionary key (a string) or `}` was expected.
        case expectedKey
        /// `=` was expected after a dictionary key. (The strings-file shorthand `key;` is not accepted.)
        case expectedEquals
        /// `;` was expected after a dictionary value.
        case expectedSemicolon
        /// `,` or `)` was expected after an array element.
        case expectedCommaOrClosingParenthesis
        /// A quoted string has no closing quote.
        case unterminatedString
        /// A `/*` comment has no closing `*/`.
        case unterminatedComment
        /// A backslash followed by a character that is not one of `a b f n r t v " ' \`, a newline, an octal digit
        /// or `U`.
        case unknownEscape
        /// An octal escape above `\177`: Apple's parser reads those as NeXTSTEP-encoded characters, which this parser
        /// does not map.
        case octalEscapeOutOfRange
        /// `\U` not followed by four hex digits, or a UTF-16 surrogate that is not part of a pair.
        case invalidUnicodeEscape
        /// A string whose bytes are not valid UTF-8.
        case invalidUTF8
        /// A `<…>` data value, which this parser does not read.
        case dataNotSupported
        /// A dictionary key that appears twice.
        case duplicateKey(String)
        /// Something other than whitespace or comments after the value.
        case trailingData
    }

    public let rule: Rule
    /// Offset of the offending byte in the input.
    public let offset: Int
    /// The byte found at `offset`, or nil at the end of the input.
    public let found: UInt8?

    public init(_ rule: Rule, at offset: Int, found: UInt8?) {
        self.rule = rule
        self.offset = offset
        self.found = found
    }

    public var description: String {
        let what: String
        switch rule {
        case .inputTooLarge(let limit): what = "input is larger than the limit of \(limit) bytes"
        case .nestingTooDeep(let limit): what = "containers are nested deeper than the limit of \(limit)"
        case .expectedValue: what = "expected a value (a string, '{' or '(')"
        case .expectedKey: what = "expected a dictionary key (a string) or '}'"
        case .expectedEquals: what = "expected '=' after the dictionary key"
        case .expectedSemicolon: what = "expected ';' after the dictionary value"
        case .expectedCommaOrClosingParenthesis: what = "expected ',' or ')' after the array element"
        case .unterminatedString: what = "the quoted string starting here has no closing quote"
        case .unterminatedComment: what = "the comment starting here has no closing '*/'"
        case .unknownEscape: what = "unknown backslash escape"
        case .octalEscapeOutOfRange: what = "octal escape above \\177 (a NeXTSTEP-encoded character) is not supported"
        case .invalidUnicodeEscape: what = "\\U must be followed by 4 hex digits forming a whole UTF-16 character"
        case .invalidUTF8: what = "the string starting here is not valid UTF-8"
        case .dataNotSupported: what = "<data> values are not supported"
        case .duplicateKey(let key): what = "duplicate dictionary key \"\(key)\""
        case .trailingData: what = "unexpected data after the value"
        }
        return "property list, byte \(offset) (\(Self.describe(found))): \(what)"
    }

    private static func describe(_ byte: UInt8?) -> String {
        guard let byte else { return "end of input" }
        if (0x21...0x7E).contains(byte) { return "'\(Character(Unicode.Scalar(byte)))'" }
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x" + (hex.count == 1 ? "0" + hex : hex)
    }
}
