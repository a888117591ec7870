extension JSONValue {
    /// Nesting limit for parsed documents; far above any receipt or catalog.
    public static let defaultMaximumDepth = 64

    /// Parses one JSON value (RFC 8259, strictly: no comments, no trailing commas, no duplicate keys, no lone
    /// surrogates) that must fill `text` apart from surrounding whitespace. Takes time in proportion to the length
    /// of `text`, however many members its objects have.
    public init(parsing text: some Collection<UInt8>, maximumDepth: Int = JSONValue.defaultMaximumDepth)
        throws(JSONError)
    {
        let bytes = Array(text)
        var parser = JSONParser(bytes: bytes, maximumDepth: maximumDepth)
        // Validated in place (UTF8Span), not copied into a string that would be thrown away.
        guard (try? UTF8Span(validating: bytes.span)) != nil else { throw parser.error(.invalidUTF8, at: 0) }
        self = try parser.parseDocument()
    }

    public init(parsing text: String, maximumDepth: Int = JSONValue.defaultMaximumDepth) throws(JSONError) {
        try self.init(parsing: text.utf8, maximumDepth: maximumDepth)
    }
}

/// The reader behind ``JSONValue/init(parsing:maximumDepth:)``: one pass over the bytes, in time proportional to
/// their number.
struct JSONParser {
    let bytes: [UInt8]
    let maximumDepth: Int
    var index = 0
    /// How many keys the objects read so far compared or looked up to find duplicates and add members: at most a
    /// small constant per member.
    private(set) var keyProbes = 0

    init(bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw error(.trailingData, at: index) }
        return value
    }

    func error(_ reason: JSONError.Reason, at offset: Int) -> JSONError {
        let prefix = bytes[..<min(offset, bytes.count)]
        let lineStart = (prefix.lastIndex(of: UInt8(ascii: "\n")) ?? -1) + 1
        let line = prefix.count(where: { $0 == UInt8(ascii: "\n") }) + 1
        let column = String(decoding: bytes[lineStart..<prefix.endIndex], as: UTF8.self).count + 1
        return JSONError(reason: reason, line: line, column: column)
    }

    private func unexpected(at offset: Int) -> JSONError {
        guard offset < bytes.count else { return error(.unexpectedEnd, at: offset) }
        var end = offset + 1
        while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
        let character = String(decoding: bytes[offset..<end], as: UTF8.self).first ?? "?"
        return error(.unexpectedCharacter(character), at: offset)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func expect(_ literal: String) throws(JSONError) {
        for byte in literal.utf8 {
            guard index < bytes.count, bytes[index] == byte else { throw unexpected(at: index) }
            index += 1
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONError) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw error(.unexpectedEnd, at: index) }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .object(try parseObject(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try parseArray(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw unexpected(at: index)
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONError) -> JSONObject {
        guard depth <= maximumDepth else { throw error(.nestingTooDeep(limit: maximumDepth), at: index) }
        index += 1
        var object = JSONObject()
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return object
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw unexpected(at: index) }
            let keyStart = index
            let key = try parseString()
            guard object.position(of: key, probes: &keyProbes) == nil else {
                throw error(.duplicateKey(key), at: keyStart)
            }
            skipWhitespace()
            try expect(":")
            let value = try parseValue(depth: depth)
            object.append(newKey: key, value: value, probes: &keyProbes)
            skipWhitespace()
            guard index < bytes.count else { throw error(.unexpectedEnd, at: index) }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return object
            } else {
                throw unexpected(at: index)
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONError) -> [JSONValue] {
        guard depth <= maximumDepth else { throw error(.nestingTooDeep(limit: maximumDepth), at: index) }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw error(.unexpectedEnd, at: index) }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return elements
            } else {
                throw unexpected(at: index)
            }
        }
    }

    private mutating func parseNumber() throws(JSONError) -> String {
        let start = index
        func isDigit(_ offset: Int) -> Bool {
            offset < bytes.count && bytes[offset] >= UInt8(ascii: "0") && bytes[offset] <= UInt8(ascii: "9")
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard isDigit(index) else { throw error(.invalidNumber, at: start) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if isDigit(index) { throw error(.invalidNumber, at: start) }
        } else {
            while isDigit(index) { index += 1 }
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard isDigit(index) else { throw error(.invalidNumber, at: start) }
            while isDigit(index) { index += 1 }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                index += 1
            }
            guard isDigit(index) else { throw error(.invalidNumber, at: start) }
            while isDigit(index) { index += 1 }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// Reads a string from its opening quote. The bytes are valid UTF-8 (checked before parsing), so a run
    /// without escapes is taken whole; an escaped string is assembled as UTF-8 bytes.
    private mutating func parseString() throws(JSONError) -> String {
        index += 1
        let start = index
        var unescaped: [UInt8] = []
        var runStart = index
        while true {
            // The bytes a string's reader must stop at (its end, an escape, a control character) are those its
            // writer escapes: the runs between them are skipped eight bytes at a time.
            let next = bytes.withUnsafeBufferPointer { JSONStringWriter.nextEscape(in: $0, from: index) }
            guard let next else { throw error(.unexpectedEnd, at: bytes.count) }
            index = next
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let end = index
                index += 1
                if runStart == start { return String(decoding: bytes[start..<end], as: UTF8.self) }
                unescaped.append(contentsOf: bytes[runStart..<end])
                return String(decoding: unescaped, as: UTF8.self)
            }
            if byte < 0x20 { throw error(.controlCharacterInString, at: index) }
            unescaped.append(contentsOf: bytes[runStart..<index])
            let escapeStart = index
            index += 1
            guard index < bytes.count else { throw error(.unexpectedEnd, at: index) }
            let escaped = bytes[index]
            index += 1
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): unescaped.append(escaped)
            case UInt8(ascii: "b"): unescaped.append(0x08)
            case UInt8(ascii: "f"): unescaped.append(0x0C)
            case UInt8(ascii: "n"): unescaped.append(0x0A)
            case UInt8(ascii: "r"): unescaped.append(0x0D)
            case UInt8(ascii: "t"): unescaped.append(0x09)
            case UInt8(ascii: "u"):
                UTF8.encode(try parseUnicodeEscape(escapeStart: escapeStart)) { unescaped.append($0) }
            default: throw error(.invalidEscape, at: escapeStart)
            }
            runStart = index
        }
    }

    private mutating func parseHex4(escapeStart: Int) throws(JSONError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw error(.invalidUnicodeEscape, at: escapeStart) }
        var value: UInt32 = 0
        for byte in bytes[index..<(index + 4)] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.invalidUnicodeEscape, at: escapeStart)
            }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }

    private mutating func parseUnicodeEscape(escapeStart: Int) throws(JSONError) -> Unicode.Scalar {
        let unit = try parseHex4(escapeStart: escapeStart)
        var value = unit
        if (0xD800...0xDBFF).contains(unit) {
            guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw error(.invalidUnicodeEscape, at: escapeStart) }
            index += 2
            let low = try parseHex4(escapeStart: escapeStart)
            guard (0xDC00...0xDFFF).contains(low) else { throw error(.invalidUnicodeEscape, at: escapeStart) }
            value = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let scalar = Unicode.Scalar(value) else { throw error(.invalidUnicodeEscape, at: escapeStart) }
        return scalar
    }
}
