import PropertyList
import Testing

/// Parses `text` with a generous size limit.
func parse(_ text: String, maximumDepth: Int = PropertyListValue.defaultMaximumDepth) throws(PropertyListError)
    -> PropertyListValue
{
    try PropertyListValue(parsing: Array(text.utf8), maximumSize: 1 << 20, maximumDepth: maximumDepth)
}

/// The error parsing `bytes` gives, or nil when it parses.
func failure(_ bytes: [UInt8], maximumSize: Int = 1 << 20, maximumDepth: Int = 32) -> PropertyListError? {
    do {
        _ = try PropertyListValue(parsing: bytes, maximumSize: maximumSize, maximumDepth: maximumDepth)
        return nil
    } catch {
        return error
    }
}

func failure(_ text: String, maximumDepth: Int = 32) -> PropertyListError? {
    failure(Array(text.utf8), maximumDepth: maximumDepth)
}

func dictionary(_ pairs: KeyValuePairs<String, PropertyListValue>) -> PropertyListValue {
    var dictionary = PropertyListDictionary()
    for (key, value) in pairs { dictionary.insert(key: key, value: value) }
    return .dictionary(dictionary)
}

/// One hand-written text and the rule and offset it must fail with.
struct Refusal: CustomTestStringConvertible, Sendable {
    let text: String
    let rule: PropertyListError.Rule
    let offset: Int
    var testDescription: String { "\(text.debugDescription) -> \(rule) at \(offset)" }
}

@Suite("Old-style property list: what is read")
struct PropertyListReadingTests {
    @Test("a dictionary of quoted strings keeps its keys in the written order")
    func dictionaryOrder() throws {
        let value = try parse("{ \"b\" = \"1\"; \"a\" = \"2\"; \"c\" = \"3\"; }")
        #expect(value.dictionaryValue?.keys == ["b", "a", "c"])
        #expect(value.dictionaryValue?["a"] == .string("2"))
    }

    @Test("unquoted strings take letters, digits and _ $ / : . -")
    func unquotedStrings() throws {
        let value = try parse("{ key_1 = com.example-app/$x:y; }")
        #expect(value == dictionary(["key_1": .string("com.example-app/$x:y")]))
    }

    @Test("single-quoted strings read like double-quoted ones")
    func singleQuotes() throws {
        #expect(try parse("'it\\'s \"here\"'") == .string("it's \"here\""))
    }

    @Test(
        "each backslash escape decodes as Apple's parser decodes it",
        arguments: [
            ("\\\"", "\""), ("\\\\", "\\"), ("\\n", "\n"), ("\\t", "\t"), ("\\r", "\r"), ("\\a", "\u{07}"),
            ("\\b", "\u{08}"), ("\\f", "\u{0C}"), ("\\v", "\u{0B}"), ("\\'", "'"), ("\\\n", "\n"),
            ("\\101", "A"), ("\\0", "\u{00}"), ("\\0005", "\u{00}5"), ("\\12", "\n"), ("\\177", "\u{7F}"),
            ("\\U00e9", "é"), ("\\U20AC", "€"), ("\\Ud83d\\Ude00", "😀"), ("raw\nline", "raw\nline"),
        ])
    func escapes(_ escaped: String, _ expected: String) throws {
        #expect(try parse("\"" + escaped + "\"") == .string(expected))
    }

    @Test("UTF-8 inside quoted strings is kept")
    func utf8() throws {
        #expect(try parse("\"Zoë – 東京\"") == .string("Zoë – 東京"))
    }

    @Test("// and /* */ comments are skipped, and a lone slash starts an unquoted string")
    func comments() throws {
        let text = """
            // leading comment
            { /* before key */ a /* between */ = // after equals
              /x/y ; b = "/* not a comment */"; }  /* trailing */
            """
        #expect(try parse(text) == dictionary(["a": .string("/x/y"), "b": .string("/* not a comment */")]))
    }

    @Test("tab, LF, VT, FF, CR, space, U+2028 and U+2029 separate tokens")
    func whitespace() throws {
        #expect(try parse("\t\n\u{0B}\u{0C}\r (\u{2028}a,\u{2029}b) ") == .array([.string("a"), .string("b")]))
    }

    @Test("dictionaries and arrays nest, empty ones included, and an array may end with a comma")
    func nesting() throws {
        let value = try parse("{ a = { b = ( c, ( ), { }, ); }; d = (); }")
        let inner = dictionary(["b": .array([.string("c"), .array([]), .dictionary(PropertyListDictionary())])])
        #expect(value == dictionary(["a": inner, "d": .array([])]))
    }

    @Test("the receipts' style without a newline after the brace reads the same")
    func compactReceiptStyle() throws {
        let compact = try parse("{\"signature\" = \"AA==\";\"pod\" = \"100\";}")
        let spaced = try parse("{\n\t\"signature\" = \"AA==\";\n\t\"pod\" = \"100\";\n}")
        #expect(compact == spaced)
    }

    @Test("containers exactly at the depth limit are read")
    func depthLimitIsInclusive() throws {
        let text = String(repeating: "(", count: 5) + String(repeating: ")", count: 5)
        #expect(throws: Never.self) { try parse(text, maximumDepth: 5) }
    }
}

@Suite("Old-style property list: what is refused")
struct PropertyListRefusalTests {
    static let refusals: [Refusal] = [
        Refusal(text: "", rule: .expectedValue, offset: 0),
        Refusal(text: "  /* only a comment */ ", rule: .expectedValue, offset: 23),
        Refusal(text: "{ a = b; a = c; }", rule: .duplicateKey("a"), offset: 9),
        Refusal(text: "{ \"k\" = \"v\"; k = w; }", rule: .duplicateKey("k"), offset: 13),
        Refusal(text: "{ a = \"unterminated; }", rule: .unterminatedString, offset: 6),
        Refusal(text: "\"ends in a backslash\\", rule: .unterminatedString, offset: 0),
        Refusal(text: "{ a = b /* never closed", rule: .unterminatedComment, offset: 8),
        Refusal(text: "{ a = b }", rule: .expectedSemicolon, offset: 8),
        Refusal(text: "{ a = b; ; }", rule: .expectedKey, offset: 9),
        Refusal(text: "{ a; }", rule: .expectedEquals, offset: 3),
        Refusal(text: "{ a = ; }", rule: .expectedValue, offset: 6),
        Refusal(text: "{ (a) = b; }", rule: .expectedKey, offset: 2),
        Refusal(text: "( a b )", rule: .expectedCommaOrClosingParenthesis, offset: 4),
        Refusal(text: "( a, , )", rule: .expectedValue, offset: 5),
        Refusal(text: "{ a = b; } x", rule: .trailingData, offset: 11),
        Refusal(text: "\"a\" \"b\"", rule: .trailingData, offset: 4),
        Refusal(text: "{ a = b; }}", rule: .trailingData, offset: 10),
        Refusal(text: "{ a = <0fbd77>; }", rule: .dataNotSupported, offset: 6),
        Refusal(text: "\"\\q\"", rule: .unknownEscape, offset: 2),
        Refusal(text: "\"\\x41\"", rule: .unknownEscape, offset: 2),
        Refusal(text: "\"\\200\"", rule: .octalEscapeOutOfRange, offset: 2),
        Refusal(text: "\"\\777\"", rule: .octalEscapeOutOfRange, offset: 2),
        Refusal(text: "\"\\U12\"", rule: .invalidUnicodeEscape, offset: 2),
        Refusal(text: "\"\\U12G4\"", rule: .invalidUnicodeEscape, offset: 2),
        Refusal(text: "\"\\Ud83d\"", rule: .invalidUnicodeEscape, offset: 2),
        Refusal(text: "\"\\Ud83d\\U0041\"", rule: .invalidUnicodeEscape, offset: 8),
        Refusal(text: "\"\\Ude00\"", rule: .invalidUnicodeEscape, offset: 2),
        Refusal(text: "{ a = b; ", rule: .expectedKey, offset: 9),
        Refusal(text: "( a, b", rule: .expectedCommaOrClosingParenthesis, offset: 6),
        Refusal(text: "{ a = b; } // fine\n ;", rule: .trailingData, offset: 20),
        Refusal(text: "{ a = #; }", rule: .expectedValue, offset: 6),
        Refusal(text: "\u{FEFF}{ a = b; }", rule: .expectedValue, offset: 0),
    ]

    @Test("a broken text is refused with the rule and the offset of the offending byte", arguments: refusals)
    func refused(_ refusal: Refusal) {
        let error = failure(refusal.text)
        #expect(error?.rule == refusal.rule)
        #expect(error?.offset == refusal.offset)
    }

    @Test("a quoted string that is not valid UTF-8 is refused at its opening quote")
    func invalidUTF8() {
        let bytes: [UInt8] = Array("{ a = \"ok".utf8) + [0xC3, 0x28] + Array("\"; }".utf8)
        let error = failure(bytes)
        #expect(error?.rule == .invalidUTF8)
        #expect(error?.offset == 6)
    }

    @Test("bytes that are not ASCII outside a quoted string are refused")
    func nonASCIIOutsideStrings() {
        #expect(failure([0xC3, 0xA9])?.rule == .expectedValue)
    }

    @Test("nesting one deeper than the limit is refused at the opening bracket")
    func depthLimit() {
        let text = String(repeating: "(", count: 6) + String(repeating: ")", count: 6)
        let error = failure(text, maximumDepth: 5)
        #expect(error?.rule == .nestingTooDeep(limit: 5))
        #expect(error?.offset == 5)
    }

    @Test("10 000 nested dictionaries and arrays are refused without exhausting the stack")
    func hostileNesting() {
        let dictionaries = String(repeating: "{a=", count: 10_000)
        #expect(failure(dictionaries)?.rule == .nestingTooDeep(limit: 32))
        let arrays = String(repeating: "(", count: 10_000)
        #expect(failure(arrays)?.rule == .nestingTooDeep(limit: 32))
    }

    @Test("an input over the size limit is refused before it is read")
    func sizeLimit() {
        let error = failure(Array(repeating: UInt8(ascii: "a"), count: 2_000_001), maximumSize: 2_000_000)
        #expect(error?.rule == .inputTooLarge(limit: 2_000_000))
        #expect(error?.offset == 2_000_000)
    }

    @Test("an input exactly at the size limit is read")
    func sizeLimitIsInclusive() {
        #expect(failure(Array("\"abc\"".utf8), maximumSize: 5) == nil)
    }

    @Test("the error message names the byte offset, the byte found and the rule")
    func message() {
        let error = failure("{ a = b }")
        #expect(error?.description == "property list, byte 8 ('}'): expected ';' after the dictionary value")
    }
}

@Suite("Old-style property list: writing")
struct PropertyListWriterTests {
    static let texts = [
        "{ a = b; c = ( d, \"e f\", { } ); \"\" = \"\"; }",
        "\"quote \\\" backslash \\\\ newline \\n tab \\t cr \\r nul \\000 bell \\a del \\177\"",
        "( \"Zoë\", \"\\U20AC\", \"\\Ud83d\\Ude00\", '\\'' )",
        "{\"signature\" = \"AA==\";\"purchase-info\" = \"ewp9\";\"pod\" = \"100\";}",
    ]

    @Test("written text reads back as the same value", arguments: texts)
    func roundTrip(_ text: String) throws {
        let value = try parse(text)
        let written = value.openStepText
        #expect(try PropertyListValue(parsing: written, maximumSize: written.count) == value)
    }

    @Test("control characters are written as three-digit octal escapes")
    func controlCharacters() {
        let written = PropertyListValue.string("\u{01}7\n\u{7F}").openStepText
        #expect(String(decoding: written, as: UTF8.self) == "\"\\0017\\n\\177\"")
    }

    @Test("dictionaries and arrays are written compactly in order")
    func compactForm() {
        let value = dictionary(["b": .string("1"), "a": .array([.string("x"), .string("y")])])
        #expect(String(decoding: value.openStepText, as: UTF8.self) == "{\"b\"=\"1\";\"a\"=(\"x\",\"y\");}")
    }

    @Test("a dictionary refuses a second entry with the same key")
    func dictionaryRefusesDuplicates() {
        var dictionary = PropertyListDictionary()
        let first = dictionary.insert(key: "k", value: .string("1"))
        let second = dictionary.insert(key: "k", value: .string("2"))
        #expect(first)
        #expect(!second)
        #expect(dictionary["k"] == .string("1"))
        #expect(
            PropertyListDictionary([.init(key: "a", value: .string("")), .init(key: "a", value: .string(""))]) == nil)
    }
}
