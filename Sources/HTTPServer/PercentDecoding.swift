/// Strict percent-decoding (RFC 3986 §2.1) of a path segment or a query name or value: `%XY` is the byte 0xXY,
/// and the result must be UTF-8. Anything else is refused rather than guessed at: a `%` not followed by two hex
/// digits, or bytes that are not UTF-8 once decoded (never replaced by U+FFFD).
public enum PercentDecoding {
    /// `encoded` with its escapes decoded, or nil when an escape is malformed or the result is not UTF-8.
    ///
    /// - Parameter plusIsSpace: whether `+` stands for a space, as in `application/x-www-form-urlencoded` query
    ///   strings (`%2B` is then the way to write a plus).
    public static func decode(_ encoded: some StringProtocol, plusIsSpace: Bool = false) -> String? {
        decode(bytes: Array(encoded.utf8), plusIsSpace: plusIsSpace)
    }

    /// The bytes form of ``decode(_:plusIsSpace:)``.
    public static func decode(bytes encoded: some Collection<UInt8>, plusIsSpace: Bool = false) -> String? {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(encoded.count)
        var iterator = encoded.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                decoded.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace:
                decoded.append(UInt8(ascii: " "))
            default:
                decoded.append(byte)
            }
        }
        return String(validating: decoded, as: UTF8.self)
    }

    /// The arguments of a query string (the part of a request target after `?`) in the order sent, names and values
    /// decoded as a form does; nil when any of them does not decode. Empty pieces (`a&&b`, a trailing `&`) are
    /// skipped; an argument without `=` has the empty value.
    static func queryArguments(_ query: some Collection<UInt8>) -> [(name: String, value: String)]? {
        var arguments: [(name: String, value: String)] = []
        for piece in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = piece.firstIndex(of: UInt8(ascii: "="))
            let name = piece[..<(equals ?? piece.endIndex)]
            let value = equals.map { piece[piece.index(after: $0)...] } ?? piece[piece.endIndex...]
            guard let decodedName = decode(bytes: name, plusIsSpace: true),
                let decodedValue = decode(bytes: value, plusIsSpace: true)
            else {
                return nil
            }
            arguments.append((name: decodedName, value: decodedValue))
        }
        return arguments
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
