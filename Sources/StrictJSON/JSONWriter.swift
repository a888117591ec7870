extension JSONValue {
    /// The JSON text of this value: compact on one line, or indented by two spaces per level. Object members keep
    /// their order; strings escape only what RFC 8259 requires. The text of ``serializedBytes(pretty:)``.
    public func serialized(pretty: Bool = false) -> String {
        String(decoding: serializedBytes(pretty: pretty), as: UTF8.self)
    }

    /// The UTF-8 bytes of the JSON text of this value, as ``write(to:pretty:)`` writes them.
    public func serializedBytes(pretty: Bool = false) -> [UInt8] {
        var output: [UInt8] = []
        write(to: &output, pretty: pretty)
        return output
    }

    /// Appends the UTF-8 bytes of the JSON text of this value to `output`, leaving what it holds untouched: compact
    /// on one line, or indented by two spaces per level. Object members keep their order; numbers are written as
    /// their text; in strings and keys, `"` and `\` and the control characters U+0000 to U+001F are escaped (`\"`,
    /// `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, the others as `\u00xx` in lower-case hex) and every other character is
    /// copied as its UTF-8. A buffer emptied with `removeAll(keepingCapacity: true)` and written again grows only
    /// for a document larger than any before it.
    public func write(to output: inout [UInt8], pretty: Bool = false) {
        write(to: &output, pretty: pretty, indent: 0)
    }

    private func write(to output: inout [UInt8], pretty: Bool, indent: Int) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: value ? "true".utf8 : "false".utf8)
        case .number(let text): output.append(contentsOf: text.utf8)
        case .string(let text): JSONStringWriter.write(text, to: &output)
        case .array(let elements):
            Self.writeContainer(
                elements, open: UInt8(ascii: "["), close: UInt8(ascii: "]"), to: &output, pretty: pretty,
                indent: indent
            ) { element, output in
                element.write(to: &output, pretty: pretty, indent: indent + 1)
            }
        case .object(let object):
            Self.writeContainer(
                object.members, open: UInt8(ascii: "{"), close: UInt8(ascii: "}"), to: &output, pretty: pretty,
                indent: indent
            ) { member, output in
                JSONStringWriter.write(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                if pretty { output.append(UInt8(ascii: " ")) }
                member.value.write(to: &output, pretty: pretty, indent: indent + 1)
            }
        }
    }

    /// `open`, the elements separated by commas, `close`; when `pretty` and there are elements, each on a line of
    /// its own indented one level deeper than `indent`, and `close` on a line indented by `indent`.
    private static func writeContainer<Element>(
        _ elements: [Element],
        open: UInt8,
        close: UInt8,
        to output: inout [UInt8],
        pretty: Bool,
        indent: Int,
        writeElement: (Element, inout [UInt8]) -> Void
    ) {
        output.append(open)
        guard !elements.isEmpty else {
            output.append(close)
            return
        }
        for position in elements.indices {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            if pretty { writeLineBreak(indent: indent + 1, to: &output) }
            writeElement(elements[position], &output)
        }
        if pretty { writeLineBreak(indent: indent, to: &output) }
        output.append(close)
    }

    /// A newline and two spaces per level of `indent`.
    private static func writeLineBreak(indent: Int, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
    }
}

/// Writes JSON strings from their UTF-8: the runs between bytes that need an escape are copied whole.
enum JSONStringWriter {
    /// Appends `text` to `output` as a quoted JSON string.
    static func write(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        if text.utf8.withContiguousStorageIfAvailable({ writeEscaped($0, to: &output) }) == nil {
            // Not stored as contiguous UTF-8 (native strings always are): read through a contiguous copy.
            var contiguous = text
            contiguous.withUTF8 { writeEscaped($0, to: &output) }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Appends `bytes`, valid UTF-8, with `"`, `\` and the control characters escaped; the bytes between escapes
    /// are copied in one piece.
    static func writeEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        var runStart = 0
        while let index = nextEscape(in: bytes, from: runStart) {
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            writeEscape(bytes[index], to: &output)
            runStart = index + 1
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
    }

    /// Where the first byte at or after `start` that needs an escape is, or nil when none does. Thirty-two bytes
    /// are tested at once as two vectors while that many remain (a long text, such as base64, mostly needs no
    /// escape), then eight at once, the word that holds one telling which it is; the last bytes of a text of eight
    /// or more are tested as its last eight; only a text shorter than eight is read byte by byte.
    static func nextEscape(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = UnsafeRawPointer(bytes.baseAddress), start < bytes.count else { return nil }
        var index = start
        while index + 32 <= bytes.count {
            let first = base.loadUnaligned(fromByteOffset: index, as: SIMD16<UInt8>.self)
            let second = base.loadUnaligned(fromByteOffset: index + 16, as: SIMD16<UInt8>.self)
            if holdsLane(escapeLanes(first) .| escapeLanes(second)) { break }
            index += 32
        }
        while index + 8 <= bytes.count {
            let flags = escapeFlags(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
            if flags != 0 { return index + flags.trailingZeroBitCount / 8 }
            index += 8
        }
        guard index < bytes.count else { return nil }
        guard bytes.count >= 8 else { return bytes[index...].firstIndex(where: needsEscape) }
        // The last eight bytes, the 1 to 7 of them before `index` replaced by letters: they may need an escape
        // themselves (the one just written, say), which must neither be found nor borrow from the bytes after them.
        let last = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self))
        let before = UInt64.max >> (64 - 8 * (8 - (bytes.count - index)))
        let flags = escapeFlags((last & ~before) | (0x4141_4141_4141_4141 & before))
        return flags == 0 ? nil : bytes.count - 8 + flags.trailingZeroBitCount / 8
    }

    /// The high bit of each byte of `word` (the first byte in the lowest bits) that needs an escape, and maybe of
    /// bytes after the first such byte, but never before it: so the lowest bit set is exact, and the word is all
    /// zeros when no byte needs an escape. Subtracting `n` from every byte at once sets the high bit of each byte
    /// below `n` (and, through the borrow, maybe of the bytes after it): 0x20 from `word` finds the control
    /// characters, 1 from `word ^ "` and from `word ^ \` the quotes and backslashes, the bytes that became 0.
    /// Bytes whose own high bit was set, 0x80 and above (UTF-8 beyond ASCII), never need an escape and are masked
    /// out; a byte that needs none borrows from no other.
    static func escapeFlags(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quotes = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslashes = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let flagged = (word &- ones &* 0x20) | (quotes &- ones) | (backslashes &- ones)
        return flagged & ~word & (ones &* 0x80)
    }

    /// The lanes of `bytes` that need an escape: below U+0020, `"` and `\`. (Compared with vectors, not scalars:
    /// the comparisons with a scalar compile to a loop over the lanes.)
    @inline(__always)
    static func escapeLanes(_ bytes: SIMD16<UInt8>) -> SIMDMask<SIMD16<Int8>> {
        bytes .< SIMD16(repeating: 0x20) .| bytes .== SIMD16(repeating: UInt8(ascii: "\""))
            .| bytes .== SIMD16(repeating: UInt8(ascii: "\\"))
    }

    /// Whether any lane of `lanes` is set, read as two words: the standard library's `any` reduces the lanes one
    /// by one where the compiler does not inline it, which made the scan slower than eight bytes at a time.
    @inline(__always)
    static func holdsLane(_ lanes: SIMDMask<SIMD16<Int8>>) -> Bool {
        let words = unsafeBitCast(lanes, to: SIMD2<UInt64>.self)
        return words[0] | words[1] != 0
    }

    /// Whether RFC 8259 §7 requires `byte` to be escaped in a string: `"`, `\` and U+0000 to U+001F. Bytes of
    /// multi-byte UTF-8 sequences are 0x80 and above, so they never are.
    static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// The escape of `byte`, one that ``needsEscape(_:)`` accepts: the short form where JSON has one, else
    /// `\u00xx` in lower-case hex.
    static func writeEscape(_ byte: UInt8, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(byte)
        case UInt8(ascii: "\n"): output.append(UInt8(ascii: "n"))
        case UInt8(ascii: "\r"): output.append(UInt8(ascii: "r"))
        case UInt8(ascii: "\t"): output.append(UInt8(ascii: "t"))
        case 0x08: output.append(UInt8(ascii: "b"))
        case 0x0C: output.append(UInt8(ascii: "f"))
        default:
            output.append(UInt8(ascii: "u"))
            output.append(UInt8(ascii: "0"))
            output.append(UInt8(ascii: "0"))
            output.append(hexDigit(byte >> 4))
            output.append(hexDigit(byte & 0x0F))
        }
    }

    /// The lower-case hex digit of `value`, 0 to 15.
    static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}
