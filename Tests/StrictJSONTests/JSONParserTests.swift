import StrictJSON
import Testing

/// The reason `text` is rejected; records an issue at the caller and returns nil when it parses.
private func rejection(
    _ text: String,
    maximumDepth: Int = JSONValue.defaultMaximumDepth,
    sourceLocation: SourceLocation = #_sourceLocation
) -> JSONError.Reason? {
    let error = #expect(throws: JSONError.self, sourceLocation: sourceLocation) {
        try JSONValue(parsing: text, maximumDepth: maximumDepth)
    }
    return error?.reason
}

@Suite("JSON parsing: RFC 8259 values")
struct JSONValueParsingTests {
    @Test(
        "every kind of value parses at the top level",
        arguments: [
            ("null", JSONValue.null),
            ("true", .bool(true)),
            ("false", .bool(false)),
            ("42", .number("42")),
            (#""text""#, .string("text")),
            ("[]", .array([])),
            ("{}", .object(JSONObject())),
        ] as [(String, JSONValue)])
    func topLevelValue(text: String, expected: JSONValue) throws {
        #expect(try JSONValue(parsing: text) == expected)
    }

    @Test("arrays and objects nest values of every kind")
    func nestedValues() throws {
        let text = #"{"n": null, "b": [true, false], "x": -1.5, "s": "é", "o": {"a": [[], {}]}}"#
        let expected = JSONValue.object(
            JSONObject([
                "n": .null,
                "b": .array([.bool(true), .bool(false)]),
                "x": .number("-1.5"),
                "s": .string("é"),
                "o": .object(JSONObject(["a": .array([.array([]), .object(JSONObject())])])),
            ]))
        #expect(try JSONValue(parsing: text) == expected)
    }

    @Test("space, tab, line feed and carriage return are whitespace around every token")
    func insignificantWhitespace() throws {
        let text = " \t\r\n{ \"a\" :\t[ 1 ,\n2 ] \r\n}\n "
        let expected = JSONValue.object(JSONObject(["a": .array([.number("1"), .number("2")])]))
        #expect(try JSONValue(parsing: text) == expected)
    }

    @Test(
        "form feed, vertical tab and no-break space are not whitespace",
        arguments: [("\u{0C}1", Character("\u{0C}")), ("[1,\u{0B}2]", "\u{0B}"), ("\u{A0}1", "\u{A0}")])
    func otherSpacesRejected(text: String, character: Character) {
        #expect(rejection(text) == .unexpectedCharacter(character))
    }

    @Test("the input may be bytes instead of a String")
    func parsesBytes() throws {
        let bytes: [UInt8] = Array(#"{"k": "v"}"#.utf8)
        #expect(try JSONValue(parsing: bytes) == .object(JSONObject(["k": .string("v")])))
    }
}

@Suite("JSON parsing: object member order")
struct JSONMemberOrderTests {
    @Test("members keep the order of the text, not sorted")
    func orderPreservedOnParse() throws {
        let value = try JSONValue(parsing: #"{"zeta": 1, "alpha": 2, "mid": 3, "Alpha": 4}"#)
        guard case .object(let object) = value else {
            Issue.record("expected an object, found \(value.kindName)")
            return
        }
        #expect(object.keys == ["zeta", "alpha", "mid", "Alpha"])
    }

    @Test("serialising a parsed object writes members in the same order")
    func orderPreservedOnSerialisation() throws {
        let text = #"{"zeta":1,"alpha":{"y":true,"b":false},"mid":[3]}"#
        #expect(try JSONValue(parsing: text).serialized() == text)
    }
}

@Suite("JSON parsing: numbers")
struct JSONNumberTests {
    @Test(
        "the exact text of a number is kept",
        arguments: [
            "0", "-0", "7", "9223372036854775807", "-9223372036854775808", "18446744073709551616", "2000000123357229",
            "1.5e10", "1.50", "-0.0", "1E+2", "2.5e-3", "1e400", "0.000000000000000000001",
        ])
    func exactText(text: String) throws {
        let value = try JSONValue(parsing: text)
        #expect(value == .number(text))
        #expect(value.serialized() == text)
    }

    @Test("a 64-bit identifier inside an object is not rounded")
    func largeIdentifierInObject() throws {
        let value = try JSONValue(parsing: #"{"transaction_id": 2000000123357229, "max": 9223372036854775807}"#)
        #expect(value["transaction_id"] == .number("2000000123357229"))
        #expect(value["max"] == .number("9223372036854775807"))
    }

    @Test(
        "numbers outside the RFC 8259 grammar are rejected as invalid numbers",
        arguments: ["01", "-01", "00", "1.", "1.e5", "1e", "1e+", "-", "-.5", "-Infinity", "0.e1", "1.5E"])
    func invalidNumber(text: String) {
        #expect(rejection(text) == .invalidNumber)
    }

    @Test(
        "numbers may not start with a plus sign or a decimal point",
        arguments: [("+1", Character("+")), (".5", "."), ("[+0]", "+")])
    func invalidNumberStart(text: String, character: Character) {
        #expect(rejection(text) == .unexpectedCharacter(character))
    }

    // `nan` starts like `null`, so the parser stops at its second letter.
    @Test("NaN and Infinity are not JSON", arguments: [("NaN", Character("N")), ("Infinity", "I"), ("[nan]", "a")])
    func nonFiniteLiterals(text: String, character: Character) {
        #expect(rejection(text) == .unexpectedCharacter(character))
    }
}

@Suite("JSON parsing: strings")
struct JSONStringTests {
    /// String lengths for the tests of every position: past two of the 32-byte blocks that strings are scanned in,
    /// and the 8-byte words and single bytes after them.
    static let positionLengths = 1...72

    @Test("a string with an escape at any position, in a document that goes on after it, parses back to itself")
    func escapeAnywhere() throws {
        for length in Self.positionLengths {
            for position in 0..<length {
                for character in ["\"", "\\", "\n", "\u{1F}", "é"] {
                    let text =
                        String(repeating: "a", count: position) + character
                        + String(repeating: "b", count: length - position - 1)
                    let document = JSONValue.array([.string(text), .string("after")])
                    #expect(try JSONValue(parsing: document.serialized()) == document, "\(text.debugDescription)")
                }
            }
        }
    }

    @Test("a raw control character at any position of a string is refused where it is")
    func rawControlCharacterAnywhere() {
        for length in Self.positionLengths {
            for position in 0..<length {
                let text =
                    "[\"" + String(repeating: "a", count: position) + "\u{1}"
                    + String(repeating: "b", count: length - position - 1) + "\"]"
                let error = #expect(throws: JSONError.self) { try JSONValue(parsing: text) }
                #expect(error?.reason == .controlCharacterInString, "\(text.debugDescription)")
                #expect(error?.column == position + 3, "\(text.debugDescription)")
            }
        }
    }

    @Test(
        "\\u escapes decode to the code point, surrogate pairs to one scalar",
        arguments: [
            (#""\u0041""#, "A"),
            (#""\u00e9""#, "\u{E9}"),
            (#""\u00E9""#, "\u{E9}"),
            (#""\u20ac""#, "€"),
            (#""\u0000""#, "\u{0}"),
            (#""\uffff""#, "\u{FFFF}"),
            (#""\ud83d\ude00""#, "😀"),
            (#""\uD834\uDD1E""#, "\u{1D11E}"),
            (#""\udbff\udfff""#, "\u{10FFFF}"),
            (#""a\u0062c""#, "abc"),
        ])
    func unicodeEscapes(text: String, expected: String) throws {
        let value = try JSONValue(parsing: text)
        guard case .string(let decoded) = value else {
            Issue.record("expected a string, found \(value.kindName)")
            return
        }
        #expect(Array(decoded.unicodeScalars) == Array(expected.unicodeScalars))
    }

    @Test("the two-character escapes decode to their characters")
    func shortEscapes() throws {
        let value = try JSONValue(parsing: #""\" \\ \/ \b \f \n \r \t""#)
        #expect(value == .string("\" \\ / \u{08} \u{0C} \n \r \t"))
    }

    @Test("unescaped non-ASCII text is kept as it is")
    func rawUnicode() throws {
        #expect(try JSONValue(parsing: "\"Grüße, 世界 😀 e\u{301}\"") == .string("Grüße, 世界 😀 e\u{301}"))
    }

    @Test("DEL (0x7F) is not a control character in JSON and may appear raw")
    func deleteIsAllowed() throws {
        #expect(try JSONValue(parsing: "\"a\u{7F}b\"") == .string("a\u{7F}b"))
    }

    @Test(
        "unescaped control characters in a string are rejected",
        arguments: ["\"a\u{0}b\"", "\"a\tb\"", "\"line\nbreak\"", "\"\r\"", "\"\u{1F}\"", "{\"k\u{8}\": 1}"])
    func controlCharacters(text: String) {
        #expect(rejection(text) == .controlCharacterInString)
    }

    @Test(
        "escapes other than the nine of RFC 8259 are rejected",
        arguments: [#""\x41""#, #""\'""#, #""\U0041""#, #""\a""#, #""\0""#, #""\ ""#, #""\v""#])
    func invalidEscapes(text: String) {
        #expect(rejection(text) == .invalidEscape)
    }

    @Test(
        "\\u escapes need four hex digits",
        arguments: [#""\u12""#, #""\u00G1""#, #""\u+041""#, #""\u""#])
    func shortUnicodeEscape(text: String) {
        #expect(rejection(text) == .invalidUnicodeEscape)
    }

    @Test(
        "lone or mismatched surrogates are rejected",
        arguments: [
            #""\ud800""#, #""\udc00""#, #""\udfff""#, #""\ud800x""#, #""\ud800\u0041""#, #""\udbff\udbff""#,
            #""\ude00\ud83d""#, #""\ud800\n""#,
        ])
    func loneSurrogates(text: String) {
        #expect(rejection(text) == .invalidUnicodeEscape)
    }

    @Test("single quotes do not delimit strings", arguments: ["'a'", "{'a': 1}", #"{"a": 'b'}"#])
    func singleQuotes(text: String) {
        #expect(rejection(text) == .unexpectedCharacter("'"))
    }

    @Test("an unterminated string ends too early", arguments: [#""abc"#, #""abc\"#, #"["a", "b]"#])
    func unterminatedString(text: String) {
        #expect(rejection(text) == .unexpectedEnd)
    }
}

@Suite("JSON parsing: what strict parsing rejects")
struct JSONRejectionTests {
    @Test(
        "trailing commas are rejected",
        arguments: [("[1,]", Character("]")), (#"{"a": 1,}"#, "}"), ("[1,,2]", ","), ("[,1]", ",")])
    func trailingCommas(text: String, character: Character) {
        #expect(rejection(text) == .unexpectedCharacter(character))
    }

    @Test(
        "comments are rejected",
        arguments: [
            ("// note\n1", Character("/")), ("/* note */ 1", "/"), ("[1 /* note */]", "/"),
            ("{\"a\": 1 // note\n}", "/"), ("# note\n1", "#"),
        ])
    func comments(text: String, character: Character) {
        #expect(rejection(text) == .unexpectedCharacter(character))
    }

    @Test("a comment after the value is data after the value")
    func trailingComment() {
        #expect(rejection("[1] // note") == .trailingData)
    }

    @Test(
        "literals must be spelled exactly in lower case",
        arguments: [("True", Character("T")), ("NULL", "N"), ("tRUE", "R"), ("nul1", "1"), ("undefined", "u")])
    func misspelledLiterals(text: String, character: Character) {
        #expect(rejection(text) == .unexpectedCharacter(character))
    }

    @Test(
        "invalid UTF-8 input is rejected",
        arguments: [
            [0xFF] as [UInt8],
            [0x22, 0xC3, 0x22],  // truncated two-byte sequence
            [0x22, 0xC0, 0xAF, 0x22],  // overlong "/"
            [0x22, 0xED, 0xA0, 0x80, 0x22],  // UTF-8 encoded surrogate U+D800
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // beyond U+10FFFF
            [0x22, 0x80, 0x22],  // lone continuation byte
            [0x5B, 0x31, 0x5D, 0x20, 0xFE],  // after an otherwise valid document
        ])
    func invalidUTF8(bytes: [UInt8]) {
        let error = #expect(throws: JSONError.self) { try JSONValue(parsing: bytes) }
        #expect(error?.reason == .invalidUTF8)
    }

    @Test(
        "duplicate keys are rejected and the error names the key",
        arguments: [
            (#"{"a": 1, "b": 2, "a": 3}"#, "a"),
            (#"{"a": 1, "a": 1}"#, "a"),
            (#"{"outer": {"k": null, "k": [] }}"#, "k"),
            (#"{"a": 1, "\u0061": 2}"#, "a"),
            (#"{"": 1, "": 2}"#, ""),
        ])
    func duplicateKeys(text: String, key: String) {
        #expect(rejection(text) == .duplicateKey(key))
    }

    @Test("the same key in sibling objects is not a duplicate")
    func sameKeyInSiblings() throws {
        let value = try JSONValue(parsing: #"[{"a": 1}, {"a": 2}, {"b": {"a": 3}}]"#)
        #expect(
            value
                == .array([
                    .object(JSONObject(["a": .number("1")])),
                    .object(JSONObject(["a": .number("2")])),
                    .object(JSONObject(["b": .object(JSONObject(["a": .number("3")]))])),
                ]))
    }

    @Test(
        "a document is one value: data after it is rejected",
        arguments: ["1 2", "{} {}", "null x", "[1]]", "\"a\"\"b\"", "0 0"])
    func trailingData(text: String) {
        #expect(rejection(text) == .trailingData)
    }

    @Test("empty or blank input is rejected", arguments: ["", " ", "\n\t\r "])
    func emptyInput(text: String) {
        #expect(rejection(text) == .unexpectedEnd)
    }

    @Test(
        "a document that stops inside a value ends too early",
        arguments: ["[", "[1,", "{", #"{"a""#, #"{"a":"#, "tru", "fals", "[null"])
    func truncatedContainer(text: String) {
        #expect(rejection(text) == .unexpectedEnd)
    }

    @Test("object keys must be strings", arguments: [("{a: 1}", Character("a")), ("{1: 1}", "1"), ("{null: 1}", "n")])
    func unquotedKeys(text: String, character: Character) {
        #expect(rejection(text) == .unexpectedCharacter(character))
    }
}

@Suite("JSON parsing: nesting limit")
struct JSONNestingTests {
    @Test("100 000 opening brackets are rejected at the limit, without exhausting the stack")
    func deepArrayBomb() throws {
        let error = #expect(throws: JSONError.self) {
            try JSONValue(parsing: String(repeating: "[", count: 100_000))
        }
        #expect(error?.reason == .nestingTooDeep(limit: JSONValue.defaultMaximumDepth))
        #expect(error?.line == 1)
        #expect(error?.column == JSONValue.defaultMaximumDepth + 1)
    }

    @Test("nesting exactly at the default limit of 64 is accepted")
    func atDefaultLimit() throws {
        let depth = JSONValue.defaultMaximumDepth
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var expected = JSONValue.array([])
        for _ in 1..<depth { expected = .array([expected]) }
        #expect(try JSONValue(parsing: text) == expected)
    }

    @Test("one level beyond the limit is rejected, counting objects and arrays alike")
    func beyondLimitMixed() {
        let pairs = JSONValue.defaultMaximumDepth / 2
        let text =
            String(repeating: #"{"a":["#, count: pairs) + "[]" + String(repeating: "]}", count: pairs)
        #expect(rejection(text) == .nestingTooDeep(limit: JSONValue.defaultMaximumDepth))
    }

    @Test("a caller can set a lower limit")
    func customLimit() throws {
        #expect(try JSONValue(parsing: "[[1]]", maximumDepth: 2) == .array([.array([.number("1")])]))
        #expect(rejection("[[[1]]]", maximumDepth: 2) == .nestingTooDeep(limit: 2))
        #expect(rejection(#"{"a": {"b": {}}}"#, maximumDepth: 2) == .nestingTooDeep(limit: 2))
    }

    @Test("scalars do not count as nesting")
    func scalarsAtZeroDepth() throws {
        #expect(try JSONValue(parsing: "7", maximumDepth: 0) == .number("7"))
        #expect(rejection("[]", maximumDepth: 0) == .nestingTooDeep(limit: 0))
    }
}

@Suite("JSON parsing: error positions")
struct JSONErrorPositionTests {
    @Test("line and column (from 1) point at the offending character of a multi-line document")
    func multiLineDocument() {
        let text = """
            {
              "a": 1,
              "b": [1, 2,, 3]
            }
            """
        let error = #expect(throws: JSONError.self) { try JSONValue(parsing: text) }
        #expect(error?.reason == .unexpectedCharacter(","))
        #expect(error?.line == 3)
        #expect(error?.column == 14)
        #expect(error?.description == "line 3, column 14: unexpected character ','")
    }

    @Test("a duplicate key is reported where the second key starts")
    func duplicateKeyPosition() {
        let error = #expect(throws: JSONError.self) { try JSONValue(parsing: "{\"id\": 1,\n   \"id\": 2}") }
        #expect(error?.reason == .duplicateKey("id"))
        #expect(error?.line == 2)
        #expect(error?.column == 4)
    }

    @Test("a duplicate key is reported where the second key starts, however many members come before it")
    func duplicateKeyPositionInLargeObject() {
        let members = (0..<100).map { "\"k\($0)\": \($0)" }.joined(separator: ", ")
        let error = #expect(throws: JSONError.self) { try JSONValue(parsing: "{" + members + ",\n  \"k20\": 0}") }
        #expect(error?.reason == .duplicateKey("k20"))
        #expect(error?.line == 2)
        #expect(error?.column == 3)
    }

    @Test("CR LF line endings count as one line break")
    func crlfLines() {
        let error = #expect(throws: JSONError.self) { try JSONValue(parsing: "{\r\n  \"a\": 1\r\n  \"b\": 2\r\n}") }
        #expect(error?.reason == .unexpectedCharacter("\""))
        #expect(error?.line == 3)
        #expect(error?.column == 3)
    }

    @Test("columns count characters, not UTF-8 bytes")
    func columnsCountCharacters() {
        let error = #expect(throws: JSONError.self) { try JSONValue(parsing: "[\"é😀\", x]") }
        #expect(error?.reason == .unexpectedCharacter("x"))
        #expect(error?.line == 1)
        #expect(error?.column == 8)
    }

    @Test("the end of a truncated document is reported after its last character")
    func endPosition() {
        let error = #expect(throws: JSONError.self) { try JSONValue(parsing: "[\n  1,\n") }
        #expect(error?.reason == .unexpectedEnd)
        #expect(error?.line == 3)
        #expect(error?.column == 1)
    }

    @Test("an unexpected non-ASCII character is named whole")
    func nonASCIICharacterNamed() {
        #expect(rejection("[1, é]") == .unexpectedCharacter("é"))
        #expect(rejection("\u{FEFF}{}") == .unexpectedCharacter("\u{FEFF}"))
    }
}
