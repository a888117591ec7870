import Foundation
import ReceiptDER
import Testing

/// Hex text: two digits a byte, as printf's `%02x` and `%02X` write them.
@Suite("Hex")
struct HexTests {
    static let bytes: [UInt8] = [0x00, 0x0a, 0x7f, 0x80, 0xab, 0xff]

    @Test("two lower-case digits a byte, as %02x wrote them; nothing for no bytes")
    func lowerCase() {
        #expect(Hex.encode(Self.bytes) == Self.bytes.map { String(format: "%02x", $0) }.joined())
        #expect(Hex.encode([]) == "")
    }

    @Test("upper-case with a separator between bytes, as fingerprints are written")
    func upperCaseSeparated() {
        let expected = Self.bytes.map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(Hex.encode(Self.bytes, uppercase: true, separator: UInt8(ascii: ":")) == expected)
        #expect(Hex.encode([0x5e], uppercase: true, separator: UInt8(ascii: ":")) == "5E")
    }
}
