/// A member's key made once, for objects written often. A key written in code that needs no escape is kept as its
/// `StaticString`, which ``JSONObjectWriter`` copies between quotes as it is, counting no references, where a
/// `String` key is scanned for escapes at each member (about a third of the instructions it took to write a
/// receipt's object). Keep one in a `static let` and pass it where a `String` key would go.
public struct JSONKey: Hashable, Sendable {
    /// The key's bytes when it is a literal that needs no escape.
    private let literal: StaticString?
    /// Otherwise the key, escaped as it is written.
    private let madeName: String

    /// A key written in code.
    public init(_ name: StaticString) {
        if name.withUTF8Buffer({ JSONStringWriter.nextEscape(in: $0, from: 0) == nil }) {
            literal = name
            madeName = ""
        } else {
            literal = nil
            madeName = name.description
        }
    }

    /// A key made at run time.
    public init(string name: String) {
        literal = nil
        madeName = name
    }

    /// The key itself.
    public var name: String { literal?.description ?? madeName }

    /// Appends `"name":`, after a `,` unless `first`, and then the `extra` bytes at most that `then` appends.
    func write(
        to output: inout [UInt8], first: Bool, then extra: Int = 0, _ then: (inout OutputSpan<UInt8>) -> Void = { _ in }
    ) {
        guard let literal else {
            if !first { output.append(UInt8(ascii: ",")) }
            JSONStringWriter.write(madeName, to: &output)
            output.append(UInt8(ascii: ":"))
            output.append(addingCapacity: extra, initializingWith: then)
            return
        }
        literal.withUTF8Buffer { name in
            output.append(addingCapacity: name.count + 4 + extra) { span in
                if !first { span.append(UInt8(ascii: ",")) }
                span.append(UInt8(ascii: "\""))
                span.append(copying: name)
                span.append(UInt8(ascii: "\""))
                span.append(UInt8(ascii: ":"))
                then(&span)
            }
        }
    }

    public static func == (lhs: JSONKey, rhs: JSONKey) -> Bool {
        lhs.name == rhs.name
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
    }
}

extension OutputSpan where Element == UInt8 {
    /// Appends `bytes` in one copy; there must be room for them, as for `append(_:)`, which stops the program
    /// rather than write past the end.
    public mutating func append(copying bytes: Span<UInt8>) {
        bytes.withUnsafeBufferPointer { append(copying: $0) }
    }

    /// Appends `bytes`, for which there must be room, in one copy.
    mutating func append(copying bytes: UnsafeBufferPointer<UInt8>) {
        withUnsafeMutableBufferPointer { buffer, initialized in
            // Every caller reserves the room first; like OutputSpan.append, stop rather than write outside the buffer.
            precondition(buffer.count - initialized >= bytes.count, "no room for the bytes")
            _ = UnsafeMutableBufferPointer(rebasing: buffer[initialized...]).initialize(fromContentsOf: bytes)
            initialized += bytes.count
        }
    }
}
