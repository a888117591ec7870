import ReceiptModel
import Testing

private let uuidBytes: [UInt8] = [
    0x95, 0x63, 0x28, 0xD9, 0xCC, 0x6A, 0x47, 0xF4, 0xBE, 0x40, 0x69, 0x53, 0xFB, 0x0A, 0xB6, 0xC7,
]
private let macBytes: [UInt8] = [0x6C, 0x40, 0x08, 0xB5, 0x94, 0x5E]

@Suite("DeviceIdentifier")
struct DeviceIdentifierTests {
    @Test(
        "a UUID (identifierForVendor) parses to its 16 bytes in either case",
        arguments: [
            "956328D9-CC6A-47F4-BE40-6953FB0AB6C7", "956328d9-cc6a-47f4-be40-6953fb0ab6c7",
            "956328d9-CC6A-47f4-BE40-6953fb0AB6C7",
        ])
    func uuid(text: String) {
        #expect(DeviceIdentifier(text)?.bytes == uuidBytes)
    }

    @Test(
        "a MAC address parses to its 6 bytes with colons or hyphens, in either case",
        arguments: ["6c:40:08:b5:94:5e", "6C:40:08:B5:94:5E", "6C-40-08-B5-94-5E", "6c-40-08-b5-94-5e"])
    func mac(text: String) {
        #expect(DeviceIdentifier(text)?.bytes == macBytes)
    }

    @Test(
        "wrong group lengths are rejected",
        arguments: [
            "956328D9CC6A47F4BE406953FB0AB6C7", "956328D9-CC6A-47F4-BE40-6953FB0AB6C",
            "956328D-9CC6A-47F4-BE40-6953FB0AB6C7",
            "956328D9-CC6A-47F4-BE40-6953FB0AB6C7-", "956328D9-CC6A-47F4-BE406953FB0AB6C7", "6c:40:08:b5:94",
            "6c:40:08:b5:94:5e:00", "6c:40:08:b5:94:5", "6c:4:008:b5:94:5e", "6c4008b5945e", "6c:40:08:b5:94:5e:",
            ":6c:40:08:b5:94:5e", "", "-",
        ])
    func wrongLengths(text: String) {
        #expect(DeviceIdentifier(text) == nil)
    }

    @Test(
        "non-hex digits are rejected",
        arguments: [
            "956328G9-CC6A-47F4-BE40-6953FB0AB6C7", "6c:40:08:b5:94:5g", "6c:40:08:b5:94: e", "6c:40:08:b5:94:+e",
            "{56328D9-CC6A-47F4-BE40-6953FB0AB6C7", "6c:40:08:b5:94:５e", "6c:40:08:b5:94:é",
        ])
    func nonHex(text: String) {
        #expect(DeviceIdentifier(text) == nil)
    }

    @Test("a MAC address may not mix separators")
    func mixedSeparators() {
        #expect(DeviceIdentifier("6c:40-08:b5:94:5e") == nil)
        #expect(DeviceIdentifier("6c-40-08-b5-94:5e") == nil)
    }

    @Test("the groups of a UUID are separated by hyphens only")
    func uuidNeedsHyphens() {
        #expect(DeviceIdentifier("956328D9:CC6A:47F4:BE40:6953FB0AB6C7") == nil)
    }

    @Test("16 bytes print as an upper-case UUID")
    func uuidDescription() {
        #expect(DeviceIdentifier(bytes: uuidBytes).description == "956328D9-CC6A-47F4-BE40-6953FB0AB6C7")
        #expect(
            DeviceIdentifier("956328d9-cc6a-47f4-be40-6953fb0ab6c7")?.description
                == "956328D9-CC6A-47F4-BE40-6953FB0AB6C7")
    }

    @Test("6 bytes print as a lower-case MAC address with colons")
    func macDescription() {
        #expect(DeviceIdentifier(bytes: macBytes).description == "6c:40:08:b5:94:5e")
        #expect(DeviceIdentifier("6C-40-08-B5-94-5E")?.description == "6c:40:08:b5:94:5e")
    }

    @Test("other lengths print as plain lower-case hex, zero-padded")
    func otherDescription() {
        #expect(DeviceIdentifier(bytes: [0x0A, 0xFF, 0x00]).description == "0aff00")
        #expect(DeviceIdentifier(bytes: []).description == "")
    }
}
