import ReceiptDER
import Testing

/// `levels` SEQUENCEs, each the only element of the one around it, with definite lengths.
///
/// Built from the inside out in one pass: the encoding is just every header, outermost first.
func nestedDefiniteSequences(levels: Int) -> [UInt8] {
    var headers: [[UInt8]] = []
    var contentLength = 0
    for _ in 0..<levels {
        var header: [UInt8] = [0x30]
        if contentLength < 0x80 {
            header.append(UInt8(contentLength))
        } else {
            let octets = withUnsafeBytes(of: UInt64(contentLength).bigEndian) { Array($0.drop { $0 == 0 }) }
            header.append(0x80 | UInt8(octets.count))
            header += octets
        }
        headers.append(header)
        contentLength += header.count
    }
    return Array(headers.reversed().joined())
}

/// `levels` SEQUENCEs nested with BER indefinite lengths: `30 80` repeated, then `00 00` repeated.
func nestedIndefiniteSequences(levels: Int) -> [UInt8] {
    Array(repeatElement([0x30, 0x80], count: levels).joined()) + [UInt8](repeating: 0x00, count: 2 * levels)
}

@Suite("Nesting depth limit")
struct NestingDepthTests {
    static let limit = ASN1Reader.defaultMaximumDepth
    static let hundredThousandDefinite = nestedDefiniteSequences(levels: 100_000)
    static let hundredThousandIndefinite = nestedIndefiniteSequences(levels: 100_000)

    @Test("the vector builders produce the encodings they describe")
    func buildersAreRight() throws {
        #expect(nestedDefiniteSequences(levels: 3) == hex("30 04 30 02 30 00"))
        #expect(nestedIndefiniteSequences(levels: 2) == hex("30 80 30 80 00 00 00 00"))
        #expect(try walk(nestedDefiniteSequences(levels: 200), rules: .der, maximumDepth: 200) == 200)
        #expect(Self.hundredThousandDefinite.prefix(2) == [0x30, 0x83])
    }

    @Test("100 000 nested definite-length SEQUENCEs are rejected as too deep", arguments: [EncodingRules.der, .ber])
    func deepDefiniteNesting(rules: EncodingRules) {
        let error = #expect(throws: DERError.self) { try walk(Self.hundredThousandDefinite, rules: rules) }
        #expect(error?.reason == .nestingTooDeep(limit: Self.limit))
    }

    @Test("100 000 nested indefinite-length SEQUENCEs are rejected as too deep")
    func deepIndefiniteNesting() {
        let error = #expect(throws: DERError.self) { try walk(Self.hundredThousandIndefinite, rules: .ber) }
        #expect(error?.reason == .nestingTooDeep(limit: Self.limit))
    }

    @Test("the default limit allows a structure exactly as deep as the limit")
    func nestingAtTheLimit() throws {
        #expect(Self.limit == 32)
        #expect(try walk(nestedDefiniteSequences(levels: Self.limit), rules: .der) == Self.limit)
        #expect(try walk(nestedDefiniteSequences(levels: Self.limit), rules: .ber) == Self.limit)
        #expect(try walk(nestedIndefiniteSequences(levels: Self.limit), rules: .ber) == Self.limit)
    }

    @Test("one level more than the limit is rejected, at the element that is too deep")
    func nestingOneBeyondTheLimit() {
        let levels = Self.limit + 1
        // Definite: every header is two bytes, so the innermost SEQUENCE starts at 2 * limit.
        #expect(throws: DERError(.nestingTooDeep(limit: Self.limit), at: 2 * Self.limit)) {
            try walk(nestedDefiniteSequences(levels: levels), rules: .der)
        }
        #expect(throws: DERError(.nestingTooDeep(limit: Self.limit), at: 2 * Self.limit)) {
            try walk(nestedIndefiniteSequences(levels: levels), rules: .ber)
        }
    }

    @Test("a smaller maximum depth is honoured", arguments: [1, 3, 10])
    func customMaximumDepth(maximumDepth: Int) {
        #expect(throws: Never.self) {
            try walk(nestedDefiniteSequences(levels: maximumDepth), rules: .der, maximumDepth: maximumDepth)
        }
        #expect(throws: DERError(.nestingTooDeep(limit: maximumDepth), at: 2 * maximumDepth)) {
            try walk(nestedDefiniteSequences(levels: maximumDepth + 1), rules: .der, maximumDepth: maximumDepth)
        }
        #expect(throws: DERError(.nestingTooDeep(limit: maximumDepth), at: 2 * maximumDepth)) {
            try walk(nestedIndefiniteSequences(levels: maximumDepth + 1), rules: .ber, maximumDepth: maximumDepth)
        }
    }

    @Test("depth counts nesting, not siblings: many elements side by side are fine")
    func siblingsDoNotCountAsDepth() throws {
        let siblings = [UInt8]((0..<1000).flatMap { _ in [0x05, 0x00] })
        let encoding = hex("30 82 07 D0") + siblings
        #expect(try walk(encoding, rules: .der) == 1001)
    }
}
