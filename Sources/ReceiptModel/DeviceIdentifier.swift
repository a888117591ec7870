/// The device a receipt is bound to: an iOS `identifierForVendor` UUID (16 bytes) or a Mac's primary MAC address
/// (6 bytes). Field 5 is SHA-1 of these bytes ‖ field 4 ‖ the value octets of field 2.
public struct DeviceIdentifier: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// Parses `956328D9-CC6A-47F4-BE40-6953FB0AB6C7` (UUID) or `6c:40:08:b5:94:5e` / `6C-40-08-B5-94-5E` (MAC),
    /// hex digits in either case. Returns nil for anything else.
    public init?(_ text: String) {
        let separator: Character = text.contains(":") ? ":" : "-"
        let groups = text.split(separator: separator, omittingEmptySubsequences: false)
        let lengths = groups.map(\.count)
        guard (lengths == [8, 4, 4, 4, 12] && separator == "-") || lengths == [2, 2, 2, 2, 2, 2] else { return nil }
        var bytes: [UInt8] = []
        for group in groups {
            let digits = Array(group.utf8)
            for pair in stride(from: 0, to: digits.count, by: 2) {
                guard let high = Self.hexValue(digits[pair]), let low = Self.hexValue(digits[pair + 1]) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            }
        }
        self.bytes = bytes
    }

    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Upper-case UUID form for 16 bytes, lower-case colon-separated MAC form for 6, plain hex otherwise.
    public var description: String {
        let hex = bytes.map { byte in String(byte, radix: 16, uppercase: bytes.count == 16).leftPadded(2) }
        switch bytes.count {
        case 16:
            let text = hex.joined()
            let cuts = [8, 12, 16, 20]
            var parts: [Substring] = []
            var start = text.startIndex
            for cut in cuts {
                let end = text.index(text.startIndex, offsetBy: cut)
                parts.append(text[start..<end])
                start = end
            }
            parts.append(text[start...])
            return parts.joined(separator: "-")
        case 6: return hex.joined(separator: ":")
        default: return hex.joined()
        }
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

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
