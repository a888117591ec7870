import ReceiptDER
import Testing

/// Decodes `text` and returns the error it must throw.
private func decodingError(_ text: [UInt8]) -> Base64.DecodingError? {
    #expect(throws: Base64.DecodingError.self, "\(text)") { try Base64.decode(text) }
}

private func decodingError(_ text: String) -> Base64.DecodingError? {
    decodingError(Array(text.utf8))
}

/// A small seeded generator (SplitMix64), so a failing round trip can be replayed.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("Base64 (RFC 4648 §4)")
struct Base64Tests {
    /// RFC 4648 §10.
    static let rfc4648Vectors: [(bytes: String, text: String)] = [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ]

    @Test("RFC 4648 test vectors encode", arguments: rfc4648Vectors)
    func encodesRFCVectors(bytes: String, text: String) {
        #expect(Base64.encode(Array(bytes.utf8)) == text)
    }

    @Test("RFC 4648 test vectors decode", arguments: rfc4648Vectors)
    func decodesRFCVectors(bytes: String, text: String) throws {
        #expect(try Base64.decode(Array(text.utf8)) == Array(bytes.utf8))
    }

    @Test("the whole alphabet, '+' and '/' included, decodes")
    func wholeAlphabet() throws {
        let text = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        let bytes = try Base64.decode(Array(text.utf8))
        #expect(bytes.count == 48)
        #expect(Base64.encode(bytes) == text)
        #expect(try Base64.decode(Array("+/+/".utf8)) == [0xFB, 0xFF, 0xBF])
    }

    @Test(
        "spaces, line feeds and CRLF are ignored anywhere",
        arguments: [
            "Zm9v YmFy", "Zm9v\nYmFy", "Zm9v\r\nYmFy", " Zm9vYmFy ", "\r\nZm9vYmFy\r\n", "Z m 9 v Y m F y",
            "Zm9vYmFy\n\n\n", "Zm\r\n9v\nYm Fy",
        ])
    func whitespaceIsIgnored(text: String) throws {
        #expect(try Base64.decode(Array(text.utf8)) == Array("foobar".utf8))
    }

    @Test("whitespace may sit between padding characters", arguments: ["Zg= =", "Zg=\n=", "Zg=\r\n=", "Z g = = "])
    func whitespaceInsidePadding(text: String) throws {
        #expect(try Base64.decode(Array(text.utf8)) == Array("f".utf8))
    }

    /// Texts with one byte that is neither base64 nor ignored whitespace, and that byte's offset.
    static let textsWithInvalidCharacters: [(text: [UInt8], offset: Int)] = [
        (Array("Zm9v\tYmFy".utf8), 4),  // tab
        (Array("Zm9v\rYmFy".utf8), 4),  // CR without LF
        (Array("Zm9vYmFy\r".utf8), 8),  // CR at the very end
        (Array("Zm9v\r\rYmFy".utf8), 4),  // CR followed by CR
        (Array("Zm9v-mFy".utf8), 4),  // base64url alphabet
        (Array("Zm9v_mFy".utf8), 4),
        (Array("Zm9v.mFy".utf8), 4),
        (Array("Zm9vYm\u{E9}".utf8), 6),  // non-ASCII (0xC3 0xA9)
        (hex("5A 6D 39 76 00"), 4),  // NUL
        (hex("5A 6D 39 FF"), 3),
        (Array("Zm9v\u{B}YmFy".utf8), 4),  // vertical tab
        (Array("Zm9v\u{C}YmFy".utf8), 4),  // form feed
    ]

    @Test("bytes outside the alphabet are rejected at their offset", arguments: textsWithInvalidCharacters)
    func invalidCharacters(text: [UInt8], offset: Int) {
        let error = decodingError(text)
        #expect(error?.reason == .invalidCharacter(text[offset]))
        #expect(error?.offset == offset)
    }

    @Test("a byte outside the alphabet at any position of a long text is rejected at that offset, whatever follows")
    func invalidCharacterAnywhere() {
        let valid = Array(Base64.encode((0..<48).map { UInt8($0) }).utf8)
        for offset in valid.indices {
            for bad in [UInt8(ascii: "-"), UInt8(ascii: "\t"), 0x00, 0xFF] {
                var text = valid
                text[offset] = bad
                let error = decodingError(text)
                #expect(error?.reason == .invalidCharacter(bad), "at \(offset)")
                #expect(error?.offset == offset)
            }
        }
    }

    @Test("a text holds layout exactly when a space or line break is in it, at any position of three 32-byte blocks")
    func layoutAnywhere() {
        let valid = Array(Base64.encode((0..<72).map { UInt8(truncatingIfNeeded: $0 &* 37) }).utf8)
        for length in 0...valid.count {
            let prefix = Array(valid[..<length])
            let holds = Base64.holdsLayout(prefix.span)
            #expect(!holds, "\(length) bytes without layout")
        }
        for offset in 0...valid.count {
            for gap in [" ", "\n", "\r\n"] {
                var text = valid
                text.insert(contentsOf: Array(gap.utf8), at: offset)
                let holds = Base64.holdsLayout(text.span)
                #expect(holds, "\(gap.debugDescription) at \(offset)")
            }
        }
    }

    @Test("whitespace at any position of a long text is skipped, whatever the alignment of what follows it")
    func whitespaceAnywhere() throws {
        let bytes = (0..<48).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        let valid = Array(Base64.encode(bytes).utf8)
        for offset in 0...valid.count {
            for gap in [" ", "\n", "\r\n", " \n "] {
                var text = valid
                text.insert(contentsOf: Array(gap.utf8), at: offset)
                #expect(try Base64.decode(text) == bytes, "\(gap.debugDescription) at \(offset)")
            }
        }
    }

    @Test(
        "text whose base64 characters are not a multiple of four is rejected",
        arguments: ["Z", "Zg", "Zg=", "Zm9", "Zm9vY", "Zm9vYg", "Zm9vYg=", "=", "==", "Zm9vYmFy=", "Zm9vYmFy=="])
    func invalidLength(text: String) {
        let error = decodingError(text)
        #expect(error?.reason == .invalidLength)
        #expect(error?.offset == text.utf8.count)
    }

    @Test(
        "'=' is rejected anywhere but the last one or two positions",
        arguments: [
            ("Zg==Zg==", 2),  // padding in the middle
            ("Zm9=Zm9v", 3),
            ("=Zm9", 0),
            ("Zg=a", 2),
            ("Z===", 3),  // three '='
            ("====", 2),
            ("Zm9vY===", 7),
        ])
    func misplacedPadding(text: String, offset: Int) {
        let error = decodingError(text)
        #expect(error?.reason == .misplacedPadding)
        #expect(error?.offset == offset)
    }

    @Test(
        "padding bits that are not zero are rejected, so every text decodes from one canonical form",
        arguments: [
            ("Zh==", 2, "Zg=="), ("Zm9=", 3, "Zm8="), ("Zm9vYh==", 6, "Zm9vYg=="), ("Zm9vYmF=", 7, "Zm9vYmE="),
            ("//==", 2, "/w=="),
        ])
    func nonCanonicalPaddingBits(text: String, offset: Int, canonical: String) throws {
        let error = decodingError(text)
        #expect(error?.reason == .nonCanonical)
        #expect(error?.offset == offset)
        // The same text with the padding bits cleared is the canonical encoding of the same bytes.
        #expect(Base64.encode(try Base64.decode(Array(canonical.utf8))) == canonical)
    }

    @Test("random bytes of every length from 0 to 64 survive encode then decode", arguments: 0...64)
    func randomRoundTrip(length: Int) throws {
        var generator = SplitMix64(state: UInt64(length))
        let bytes = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let text = Base64.encode(bytes)
        #expect(text.utf8.count == (length + 2) / 3 * 4)
        #expect(text.utf8.allSatisfy { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") })
        #expect(try Base64.decode(Array(text.utf8)) == bytes)
    }

    @Test("errors describe the offending byte and its offset")
    func errorDescriptions() {
        #expect(decodingError("Zm9v\tYmFy")?.description == "byte 0x9 at offset 4 is not in the base64 alphabet")
        #expect(decodingError("Zm9v-mFy")?.description == "'-' at offset 4 is not in the base64 alphabet")
    }
}
