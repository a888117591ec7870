/// Bytes as hex text, two digits a byte: digests, fingerprints and undecoded values shown to people.
public enum Hex {
    /// `bytes` as hex digits, lower-case unless `uppercase`, with `separator` between bytes when given:
    /// `[0x0a, 0xff]` is `0aff`, or `0A:FF` upper-case with `:`. Written digit by digit, without the standard
    /// library's generic formatting (`String(_:radix:)`, `joined(separator:)`), whose first use in a process went
    /// through the Swift runtime's scan of every protocol conformance in the program.
    public static func encode(_ bytes: [UInt8], uppercase: Bool = false, separator: UInt8? = nil) -> String {
        let digits = Array((uppercase ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
        var text: [UInt8] = []
        text.reserveCapacity(3 * bytes.count)
        for (index, byte) in bytes.enumerated() {
            if index > 0, let separator { text.append(separator) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
