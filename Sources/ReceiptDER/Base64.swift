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
        // At most three bytes for every four characters and two for the three or fewer after them, and two more:
        // the six bytes of eight characters are written as one eight-byte word.
        var output = [UInt8](repeating: 0, count: input.count / 4 * 3 + 4)
        var written = 0
        do {
            var span = output.mutableSpan
            var bytes = span.mutableBytes
            try decode(input.span, table: values.span, into: &bytes, at: &written)
        }
        output.removeLast(output.count - written)
        return output
    }

    /// Whether base64 text that ``decode(_:)`` accepted holds the spaces or line breaks it skips: whether any of
    /// its bytes is below `!`, tested thirty-two at a time as two vectors while that many remain.
    public static func holdsLayout(_ text: Span<UInt8>) -> Bool {
        let bytes = text.bytes
        let exclamation = SIMD16<UInt8>(repeating: UInt8(ascii: "!"))
        var offset = 0
        while bytes.byteCount - offset >= 32 {
            let first = bytes.unsafeLoadUnaligned(fromByteOffset: offset, as: SIMD16<UInt8>.self)
            let second = bytes.unsafeLoadUnaligned(fromByteOffset: offset + 16, as: SIMD16<UInt8>.self)
            // The lanes read as two words: the standard library's `any` reduces them one by one where the
            // compiler does not inline it.
            let words = unsafeBitCast(first .< exclamation .| second .< exclamation, to: SIMD2<UInt64>.self)
            if words[0] | words[1] != 0 { return true }
            offset += 32
        }
        for index in offset..<text.count where text[index] < UInt8(ascii: "!") { return true }
        return false
    }

    /// The sextet of each byte for each of the four positions of a group, shifted into place in the group's 24
    /// bits (`placed[position * 256 + byte]`); a byte outside the alphabet has bits above the 24th set, so one OR of
    /// a group's four values both assembles it and flags any such byte.
    private static let placed: [UInt32] = (0..<4).flatMap { position in
        values.map { value in value == 0xFF ? 0xFF00_0000 : UInt32(value) << (18 - 6 * position) }
    }

    /// The three bytes of the group of four characters in the low 32 bits of `word` (the first in the lowest
    /// byte) in its low 24 bits, with bits above them set when one of the characters is not in the alphabet.
    /// `placed` holds 1024 values, so each index, a byte plus a multiple of 256 below 1024, is in it.
    @inline(__always)
    private static func group(_ word: UInt64, _ placed: Span<UInt32>) -> UInt32 {
        placed[unchecked: Int(word & 0xFF)] | placed[unchecked: 256 + Int(word >> 8 & 0xFF)]
            | placed[unchecked: 512 + Int(word >> 16 & 0xFF)] | placed[unchecked: 768 + Int(word >> 24 & 0xFF)]
    }

    /// Decodes groups of four alphabet characters from `start` on, stopping at the first group that holds any
    /// other byte or is cut short by the end; returns where it stopped. Eight characters are read at once while
    /// eight remain, and their six bytes written as one eight-byte word (whose last two are written again by what
    /// follows, or are past the end): `output` has room for two bytes more than it is given.
    private static func decodeQuads(
        _ input: Span<UInt8>, from start: Int, into output: inout MutableRawSpan, at written: inout Int
    ) -> Int {
        let placed = Self.placed.span
        precondition(placed.count == 1024)
        let bytes = input.bytes
        var offset = start
        while input.count - offset >= 8 {
            let word = UInt64(littleEndian: bytes.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let first = group(word, placed)
            let second = group(word >> 32, placed)
            guard (first | second) & 0xFF00_0000 == 0 else { break }
            let six = (UInt64(first) << 40 | UInt64(second) << 16).bigEndian
            output.storeBytes(of: six, toByteOffset: written, as: UInt64.self)
            written += 6
            offset += 8
        }
        if input.count - offset >= 4 {
            let word = UInt32(littleEndian: bytes.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt32.self))
            let last = group(UInt64(word), placed)
            if last & 0xFF00_0000 == 0 {
                append(last, to: &output, at: &written)
                offset += 4
            }
        }
        return offset
    }

    /// Writes the three bytes of a group, the highest first.
    @inline(__always)
    private static func append(_ group: UInt32, to output: inout MutableRawSpan, at written: inout Int) {
        output.storeBytes(of: UInt8(truncatingIfNeeded: group >> 16), toByteOffset: written, as: UInt8.self)
        output.storeBytes(of: UInt8(truncatingIfNeeded: group >> 8), toByteOffset: written + 1, as: UInt8.self)
        output.storeBytes(of: UInt8(truncatingIfNeeded: group), toByteOffset: written + 2, as: UInt8.self)
        written += 3
    }

    /// What ``decode(_:)`` does, into `output` from `written` on, which it moves past what it writes; `output` has
    /// room for three bytes per four bytes of `input` and four more. Four alphabet characters at a group boundary, before any padding (almost all of a base64 text), are
    /// decoded together; everything else one character at a time.
    private static func decode(
        _ input: Span<UInt8>, table: Span<UInt8>, into output: inout MutableRawSpan, at written: inout Int
    ) throws(DecodingError) {
        // The sextets of the group being read, oldest in the high bits, and how many there are.
        var group: UInt32 = 0
        var inGroup = 0
        var padding = 0
        var paddingStart = 0
        var offset = 0
        while offset < input.count {
            if inGroup == 0 && padding == 0 {
                offset = decodeQuads(input, from: offset, into: &output, at: &written)
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
                    append(group, to: &output, at: &written)
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
            output.storeBytes(of: UInt8(truncatingIfNeeded: group >> 4), toByteOffset: written, as: UInt8.self)
            written += 1
        } else if inGroup == 3 {
            guard group & 0x03 == 0 else { throw DecodingError(reason: .nonCanonical, offset: paddingStart) }
            output.storeBytes(of: UInt8(truncatingIfNeeded: group >> 10), toByteOffset: written, as: UInt8.self)
            output.storeBytes(of: UInt8(truncatingIfNeeded: group >> 2), toByteOffset: written + 1, as: UInt8.self)
            written += 2
        }
    }
}
