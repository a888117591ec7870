/// Decodes a query name or value as `application/x-www-form-urlencoded` does: `+` is a space and `%XY` is the byte
/// 0xXY. A `%` not followed by two hex digits is kept as it is; bytes that are not UTF-8 become U+FFFD.
func formDecoded(_ encoded: [UInt8]) -> String {
    var decoded: [UInt8] = []
    decoded.reserveCapacity(encoded.count)
    var index = encoded.startIndex
    while index < encoded.endIndex {
        let byte = encoded[index]
        if byte == UInt8(ascii: "%"), index + 2 < encoded.endIndex,
            let high = hexValue(encoded[index + 1]), let low = hexValue(encoded[index + 2])
        {
            decoded.append(high << 4 | low)
            index += 3
        } else {
            decoded.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index += 1
        }
    }
    return String(decoding: decoded, as: UTF8.self)
}

private func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
}
