extension PropertyListValue {
    /// Nesting deeper than any property list people write by hand or Apple's tools emit.
    public static let defaultMaximumDepth = 32

    /// Parses an old-style ASCII property list (NeXTSTEP / OpenStep format), strictly.
    ///
    /// Accepted, as Apple's parser (CFOldStylePList) reads them:
    /// - dictionaries `{ key = value; … }` (every entry ends with `;`; keys are strings, each once) and arrays
    ///   `( a, b )` (a trailing comma is allowed);
    /// - quoted strings in `"` or `'` holding any UTF-8, raw newlines included, with the escapes `\a \b \f \n \r \t
    ///   \v \" \' \\`, backslash-newline, `\Uxxxx` (exactly four hex digits; surrogate pairs as two escapes) and
    ///   octal `\d`, `\dd`, `\ddd` up to `\177`;
    /// - unquoted strings of `A-Z a-z 0-9 _ $ / : . -`;
    /// - whitespace (tab, LF, VT, FF, CR, space, U+2028, U+2029), `// …` to the end of the line and `/* … */`.
    ///
    /// Refused where Apple's parser is lenient or reads something this type does not hold: `<hex>` data, the
    /// strings-file shorthand `key;`, unknown escapes, octal escapes above `\177` (NeXTSTEP-encoded characters),
    /// `\U` with fewer than four digits or half a surrogate pair, invalid UTF-8, an unterminated `/*` comment,
    /// duplicate keys, and anything but whitespace and comments after the value.
    ///
    /// The parser does not recurse: containers are kept on an explicit stack, bounded by `maximumDepth`.
    ///
    /// - Parameters:
    ///   - input: the text as bytes (UTF-8).
    ///   - maximumSize: inputs longer than this many bytes are refused before anything is read.
    ///   - maximumDepth: how many containers may enclose one another.
    public init(
        parsing input: [UInt8],
        maximumSize: Int,
        maximumDepth: Int = PropertyListValue.defaultMaximumDepth
    ) throws(PropertyListError) {
        guard input.count <= maximumSize else {
            let offset = max(0, maximumSize)
            throw PropertyListError(
                .inputTooLarge(limit: maximumSize), at: offset, found: offset < input.count ? input[offset] : nil)
        }
        var parser = PropertyListParser(input, maximumDepth: maximumDepth)
        self = try parser.parseDocument()
    }
}

/// The reader behind ``PropertyListValue/init(parsing:maximumSize:maximumDepth:)``: one pass over the bytes, no
/// recursion, every failure a ``PropertyListError`` at the offending byte.
struct PropertyListParser {
    private enum Container {
        case dictionary
        case array
    }

    private let bytes: [UInt8]
    private let maximumDepth: Int
    private var index = 0

    // The open containers, innermost last. Each kind has its own stack so that the innermost container is mutated
    // in place (an enum payload would be copied out and back on every element).
    private var containers: [Container] = []
    private var dictionaries: [PropertyListDictionary] = []
    private var pendingKeys: [String] = []
    private var arrays: [[PropertyListValue]] = []

    init(_ bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    mutating func parseDocument() throws(PropertyListError) -> PropertyListValue {
        let value = try parseValue()
        try skipWhitespaceAndComments()
        guard index == bytes.count else { throw failure(.trailingData) }
        return value
    }

    // MARK: - Values

    private mutating func parseValue() throws(PropertyListError) -> PropertyListValue {
        while true {
            try skipWhitespaceAndComments()
            var completed: PropertyListValue
            switch current {
            case UInt8(ascii: "{"):
                try checkDepth()
                index += 1
                let empty = PropertyListDictionary()
                if let key = try readKey(notIn: empty) {
                    containers.append(.dictionary)
                    dictionaries.append(empty)
                    pendingKeys.append(key)
                    continue
                }
                completed = .dictionary(empty)
            case UInt8(ascii: "("):
                try checkDepth()
                index += 1
                try skipWhitespaceAndComments()
                if current == UInt8(ascii: ")") {
                    index += 1
                    completed = .array([])
                } else {
                    containers.append(.array)
                    arrays.append([])
                    continue
                }
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                completed = .string(try readQuotedString())
            case let byte? where Self.isUnquotedStringByte(byte):
                completed = .string(readUnquotedString())
            case UInt8(ascii: "<"):
                throw failure(.dataNotSupported)
            default:
                throw failure(.expectedValue)
            }

            // Hand the finished value to the container around it; a container it completes is handed on in turn.
            attaching: while true {
                guard let container = containers.last else { return completed }
                switch container {
                case .dictionary:
                    let top = dictionaries.count - 1
                    // Duplicates were refused when the key was read.
                    dictionaries[top].insert(key: pendingKeys.removeLast(), value: completed)
                    try skipWhitespaceAndComments()
                    guard current == UInt8(ascii: ";") else { throw failure(.expectedSemicolon) }
                    index += 1
                    if let key = try readKey(notIn: dictionaries[top]) {
                        pendingKeys.append(key)
                        break attaching
                    }
                    containers.removeLast()
                    completed = .dictionary(dictionaries.removeLast())
                case .array:
                    arrays[arrays.count - 1].append(completed)
                    try skipWhitespaceAndComments()
                    if current == UInt8(ascii: ",") {
                        index += 1
                        try skipWhitespaceAndComments()
                        if current != UInt8(ascii: ")") { break attaching }
                    }
                    guard current == UInt8(ascii: ")") else { throw failure(.expectedCommaOrClosingParenthesis) }
                    index += 1
                    containers.removeLast()
                    completed = .array(arrays.removeLast())
                }
            }
        }
    }

    private func checkDepth() throws(PropertyListError) {
        guard containers.count < maximumDepth else { throw failure(.nestingTooDeep(limit: maximumDepth)) }
    }

    /// After `{` or `;`: the next key and its `=`, or nil after the closing `}`.
    private mutating func readKey(notIn dictionary: PropertyListDictionary) throws(PropertyListError) -> String? {
        try skipWhitespaceAndComments()
        let start = index
        let key: String
        switch current {
        case UInt8(ascii: "}"):
            index += 1
            return nil
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            key = try readQuotedString()
        case let byte? where Self.isUnquotedStringByte(byte):
            key = readUnquotedString()
        default:
            throw failure(.expectedKey)
        }
        guard !dictionary.contains(key: key) else { throw failure(.duplicateKey(key), at: start) }
        try skipWhitespaceAndComments()
        guard current == UInt8(ascii: "=") else { throw failure(.expectedEquals) }
        index += 1
        return key
    }

    // MARK: - Strings

    /// `A-Z a-z 0-9 _ $ / : . -`, the characters Apple's parser allows in an unquoted string.
    static func isUnquotedStringByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "_"), UInt8(ascii: "$"), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "."),
            UInt8(ascii: "-"):
            true
        default: false
        }
    }

    private mutating func readUnquotedString() -> String {
        let start = index
        while index < bytes.count, Self.isUnquotedStringByte(bytes[index]) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func readQuotedString() throws(PropertyListError) -> String {
        let start = index
        let quote = bytes[index]
        index += 1
        var text: [UInt8] = []
        while true {
            guard index < bytes.count else { throw failure(.unterminatedString, at: start) }
            let byte = bytes[index]
            if byte == quote {
                index += 1
                break
            }
            if byte == UInt8(ascii: "\\") {
                guard index + 1 < bytes.count else { throw failure(.unterminatedString, at: start) }
                index += 1
                try readEscape(into: &text)
            } else {
                text.append(byte)
                index += 1
            }
        }
        guard let string = String(validating: text, as: UTF8.self) else { throw failure(.invalidUTF8, at: start) }
        return string
    }

    /// The escape whose first character (after the backslash) is at `index`.
    private mutating func readEscape(into text: inout [UInt8]) throws(PropertyListError) {
        let start = index
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "a"): text.append(0x07)
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "r"): text.append(0x0D)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "v"): text.append(0x0B)
        case UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "\\"), UInt8(ascii: "\n"): text.append(byte)
        case UInt8(ascii: "0")...UInt8(ascii: "7"):
            // At most three digits, so that `\0005` is NUL followed by "5".
            var value = Int(byte - UInt8(ascii: "0"))
            for _ in 0..<2 {
                guard let digit = current, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(digit) else { break }
                value = value * 8 + Int(digit - UInt8(ascii: "0"))
                index += 1
            }
            guard value <= 0x7F else { throw failure(.octalEscapeOutOfRange, at: start) }
            text.append(UInt8(value))
        case UInt8(ascii: "U"):
            let unit = try readHexUnit(escapeAt: start)
            let scalarValue: UInt32
            switch unit {
            case 0xD800...0xDBFF:
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "U")
                else { throw failure(.invalidUnicodeEscape, at: start) }
                index += 2
                let low = try readHexUnit(escapeAt: index - 1)
                guard (0xDC00...0xDFFF).contains(low) else { throw failure(.invalidUnicodeEscape, at: index - 5) }
                scalarValue = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            case 0xDC00...0xDFFF:
                throw failure(.invalidUnicodeEscape, at: start)
            default:
                scalarValue = unit
            }
            guard let scalar = Unicode.Scalar(scalarValue) else { throw failure(.invalidUnicodeEscape, at: start) }
            UTF8.encode(scalar) { text.append($0) }
        default:
            throw failure(.unknownEscape, at: start)
        }
    }

    /// Four hex digits at `index`, for the `\U` whose `U` is at `escapeAt`.
    private mutating func readHexUnit(escapeAt: Int) throws(PropertyListError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure(.invalidUnicodeEscape, at: escapeAt) }
        var value: UInt32 = 0
        for byte in bytes[index..<(index + 4)] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure(.invalidUnicodeEscape, at: escapeAt)
            }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }

    // MARK: - Whitespace and comments

    private mutating func skipWhitespaceAndComments() throws(PropertyListError) {
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: " ") || (0x09...0x0D).contains(byte) {
                index += 1
            } else if isUnicodeSeparator(at: index) {
                index += 3
            } else if byte == UInt8(ascii: "/"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "/") {
                index += 2
                while index < bytes.count, bytes[index] != 0x0A, bytes[index] != 0x0D, !isUnicodeSeparator(at: index) {
                    index += 1
                }
            } else if byte == UInt8(ascii: "/"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "*") {
                let start = index
                index += 2
                while true {
                    guard index + 1 < bytes.count else { throw failure(.unterminatedComment, at: start) }
                    if bytes[index] == UInt8(ascii: "*"), bytes[index + 1] == UInt8(ascii: "/") {
                        index += 2
                        break
                    }
                    index += 1
                }
            } else {
                // A lone `/` starts an unquoted string.
                return
            }
        }
    }

    /// U+2028 LINE SEPARATOR or U+2029 PARAGRAPH SEPARATOR in UTF-8, which Apple's parser counts as whitespace.
    private func isUnicodeSeparator(at offset: Int) -> Bool {
        offset + 2 < bytes.count && bytes[offset] == 0xE2 && bytes[offset + 1] == 0x80
            && (bytes[offset + 2] == 0xA8 || bytes[offset + 2] == 0xA9)
    }

    // MARK: - Helpers

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func failure(_ rule: PropertyListError.Rule, at offset: Int? = nil) -> PropertyListError {
        let offset = offset ?? index
        return PropertyListError(rule, at: offset, found: offset < bytes.count ? bytes[offset] : nil)
    }
}
