// The pieces of RFC 9110's grammar that the request writer, the URL parser and the response reader check against.

/// `DIGIT`.
func isDigit(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
}

/// `HEXDIG`, either case.
func isHexDigit(_ byte: UInt8) -> Bool {
    isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
}

/// A field value's bytes: visible characters, obs-text, space and horizontal tab; no other control characters.
func isFieldValueByte(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: "\t") || (byte >= 0x20 && byte != 0x7F)
}

/// RFC 9110 `tchar`: the bytes of a token such as a header name.
func isTokenByte(_ byte: UInt8) -> Bool {
    isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
        || "!#$%&'*+-.^_`|~".utf8.contains(byte)
}

extension ArraySlice<UInt8> {
    /// Without `OWS` (spaces and horizontal tabs) at either end.
    func trimmingWhiteSpace() -> ArraySlice<UInt8> {
        let isWhiteSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = firstIndex(where: { !isWhiteSpace($0) }), let last = lastIndex(where: { !isWhiteSpace($0) })
        else {
            return []
        }
        return self[first...last]
    }
}
