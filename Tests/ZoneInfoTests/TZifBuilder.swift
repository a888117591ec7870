import ZoneInfo

/// Writes TZif files field by field (RFC 8536) so that a test can make exactly the file it needs, valid or not.
/// Version 1 files get one block with 4-byte times; later versions a minimal version 1 block (one type, as
/// `zic -b slim` writes), then the 64-bit block and the footer.
struct TZifBuilder {
    var version: UInt8 = UInt8(ascii: "2")
    var transitions: [Int64] = []
    var transitionTypes: [UInt8] = []
    var types: [(utoff: Int32, isdst: UInt8, desigidx: UInt8)] = [(0, 0, 0)]
    var designations: [UInt8] = Array("UTC\0".utf8)
    var leapSeconds: [(occurrence: Int64, correction: Int32)] = []
    var standardIndicators: [UInt8] = []
    var utIndicators: [UInt8] = []
    /// The bytes between the footer's newlines.
    var footer: [UInt8] = Array("UTC0".utf8)

    /// A zone with local mean time (type 0), then PST from 1883 with PDT summers until the given changes, then
    /// the US rule in the footer.
    static func pacific(footer: String = "PST8PDT,M3.2.0,M11.1.0") -> TZifBuilder {
        var builder = TZifBuilder()
        builder.types = [(-28_378, 0, 0), (-25_200, 1, 4), (-28_800, 0, 8)]
        builder.designations = Array("LMT\0PDT\0PST\0".utf8)
        builder.transitions = [utc(1883, 11, 18, 20), utc(2020, 3, 8, 10), utc(2020, 11, 1, 9)]
        builder.transitionTypes = [2, 1, 2]
        builder.footer = Array(footer.utf8)
        return builder
    }

    var bytes: [UInt8] {
        if version == 0 { return block(timeSize: 4) }
        var slim = TZifBuilder()
        slim.version = version
        slim.designations = [0]
        return slim.block(timeSize: 4) + block(timeSize: 8) + [0x0A] + footer + [0x0A]
    }

    private func block(timeSize: Int) -> [UInt8] {
        let counts = [
            utIndicators.count, standardIndicators.count, leapSeconds.count, transitions.count, types.count,
            designations.count,
        ]
        var bytes = Array("TZif".utf8) + [version] + [UInt8](repeating: 0, count: 15)
        for count in counts { bytes += Self.bigEndian(UInt64(count), size: 4) }
        for time in transitions { bytes += Self.bigEndian(UInt64(bitPattern: time), size: timeSize) }
        bytes += transitionTypes
        for type in types {
            bytes += Self.bigEndian(UInt64(UInt32(bitPattern: type.utoff)), size: 4) + [type.isdst, type.desigidx]
        }
        bytes += designations
        for leap in leapSeconds {
            bytes += Self.bigEndian(UInt64(bitPattern: leap.occurrence), size: timeSize)
            bytes += Self.bigEndian(UInt64(UInt32(bitPattern: leap.correction)), size: 4)
        }
        return bytes + standardIndicators + utIndicators
    }

    /// The low `size` bytes of `value`, most significant first.
    static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// Offset of the version 2+ header in `bytes` (after the slim version 1 block this builder writes).
    static let secondHeaderOffset = 44 + 6 + 1
}
