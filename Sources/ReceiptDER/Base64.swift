/// Standard base64 (RFC 4648 §4, with padding), the text form DER travels in.
public enum Base64 {
    /// Why a text is not strict base64.
    public struct DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        public enum Reason: Hashable, Sendable {
            /// A byte outside the alphabet, `=` and the ignored whitespace.
            case invalidCharacter(UInt8)
            /// The number of base64 characters is not a multiple of four.
            case invalidLength
            /// `=` somewhere other than the last one or two positions.
            case misplacedPadding
            /// Padding bits that are not zero, so the text is not the canonical encoding of any bytes.
            case nonCanonical
        }

        public let reason: Reason
        /// Offset of the offending byte in the text.
        public let offset: Int

        public var description: String {
            switch reason {
            case .invalidCharacter(let byte):
                let shown =
                    (0x21...0x7E).contains(byte)
                    ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
                return "\(shown) at offset \(offset) is not in the base64 alphabet"
            case .invalidLength: return "base64 text length (without whitespace) is not a multiple of 4"
            case .misplacedPadding: return "'=' padding at offset \(offset) is not at the end"
            case .nonCanonical: return "base64 text has non-zero padding bits at offset \(offset)"
            }
        }
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// Encodes `bytes` with padding and no line breaks.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: encode(bytes, alphabet: alphabet, padded: true), as: UTF8.self)
    }

    /// Encodes `bytes` with a 64-character `alphabet`, with or without `=` padding (shared with ``Base64URL``).
    static func encode(_ bytes: some Collection<UInt8>, alphabet: [UInt8], padded: Bool) -> [UInt8] {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index < input.count {
            let remaining = input.count - index
            let chunk =
                UInt32(input[index]) << 16 | (remaining > 1 ? UInt32(input[index + 1]) << 8 : 0)
                | (remaining > 2 ? UInt32(input[index + 2]) : 0)
            output.append(alphabet[Int(chunk >> 18 & 0x3F)])
            output.append(alphabet[Int(chunk >> 12 & 0x3F)])
            if remaining > 1 {
                output.append(alphabet[Int(chunk >> 6 & 0x3F)])
            } else if padded {
                output.append(UInt8(ascii: "="))
            }
            if remaining > 2 {
                output.append(alphabet[Int(chunk & 0x3F)])
            } else if padded {
                output.append(UInt8(ascii: "="))
            }
            index += 3
        }
        return output
    }

    /// Decodes strict base64: the RFC 4648 alphabet with `=` padding, canonical padding bits. Spaces, LF and CRLF
    /// anywhere are ignored; any other byte (tabs, a lone CR, `-`, `_`) is an error.
    public static func decode(_ text: some Collection<UInt8>) throws(DecodingError) -> [UInt8] {
        let input = Array(text)
        let table = values
        // At most three bytes for every four characters, and two for the three or fewer after them.
        return try [UInt8](capacity: input.count / 4 * 3 + 2) { output throws(DecodingError) in
            try decode(input.span, table: table.span, into: &output)
        }
    }

    /// Decodes groups of four alphabet characters from `start` on, stopping at the first group that holds any
    /// other byte or is cut short by the end; returns where it stopped.
    private static func decodeQuads(
        _ input: Span<UInt8>, from start: Int, table: Span<UInt8>, into output: inout OutputSpan<UInt8>
    ) -> Int {
        var offset = start
        while input.count - offset >= 4 {
            let first = table[Int(input[offset])]
            let second = table[Int(input[offset + 1])]
            let third = table[Int(input[offset + 2])]
            let fourth = table[Int(input[offset + 3])]
            // Alphabet values are below 64; 0xFF marks every other byte.
            guard (first | second | third | fourth) & 0xC0 == 0 else { break }
            let quad = UInt32(first) << 18 | UInt32(second) << 12 | UInt32(third) << 6 | UInt32(fourth)
            output.append(UInt8(truncatingIfNeeded: quad >> 16))
            output.append(UInt8(truncatingIfNeeded: quad >> 8))
            output.append(UInt8(truncatingIfNeeded: quad))
            offset += 4
        }
        return offset
    }

    /// What ``decode(_:)`` does, into `output`, which has room for three bytes per four bytes of `input` and two
    /// more. Four alphabet characters at a group boundary, before any padding (almost all of a base64 text), are
    /// decoded together; everything else one character at a time.
    private static func decode(
        _ input: Span<UInt8>, table: Span<UInt8>, into output: inout OutputSpan<UInt8>
    ) throws(DecodingError) {
        // The sextets of the group being read, oldest in the high bits, and how many there are.
        var group: UInt32 = 0
        var inGroup = 0
        var padding = 0
        var paddingStart = 0
        var offset = 0
        while offset < input.count {
            if inGroup == 0 && padding == 0 {
                offset = decodeQuads(input, from: offset, table: table, into: &output)
                guard offset < input.count else { break }
            }
            let byte = input[offset]
            let value = table[Int(byte)]
            offset += 1
            if value != 0xFF {
                guard padding == 0 else { throw DecodingError(reason: .misplacedPadding, offset: paddingStart) }
                group = group << 6 | UInt32(value)
                inGroup += 1
                if inGroup == 4 {
                    output.append(UInt8(truncatingIfNeeded: group >> 16))
                    output.append(UInt8(truncatingIfNeeded: group >> 8))
                    output.append(UInt8(truncatingIfNeeded: group))
                    group = 0
                    inGroup = 0
                }
                continue
            }
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\n"):
                continue
            case UInt8(ascii: "\r"):
                guard offset < input.count, input[offset] == UInt8(ascii: "\n") else {
                    throw DecodingError(reason: .invalidCharacter(byte), offset: offset - 1)
                }
            case UInt8(ascii: "="):
                if padding == 0 { paddingStart = offset - 1 }
                padding += 1
                guard padding <= 2 else { throw DecodingError(reason: .misplacedPadding, offset: offset - 1) }
            default:
                throw DecodingError(reason: .invalidCharacter(byte), offset: offset - 1)
            }
        }
        guard (inGroup + padding) % 4 == 0 else {
            throw DecodingError(reason: .invalidLength, offset: input.count)
        }
        if inGroup == 2 {
            guard group & 0x0F == 0 else { throw DecodingError(reason: .nonCanonical, offset: paddingStart) }
            output.append(UInt8(truncatingIfNeeded: group >> 4))
        } else if inGroup == 3 {
            guard group & 0x03 == 0 else { throw DecodingError(reason: .nonCanonical, offset: paddingStart) }
            output.append(UInt8(truncatingIfNeeded: group >> 10))
            output.append(UInt8(truncatingIfNeeded: group >> 2))
        }
    }
}
