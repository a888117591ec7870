import Foundation
import Testing
import ZoneInfo

/// The error reading `bytes` as TZif gives, or nil when they are accepted.
func tzifError(_ bytes: [UInt8]) -> ZoneInfoError? {
    zoneInfoError { () throws(ZoneInfoError) in try TimeZoneRules(tzif: bytes, name: "Test/Zone") }
}

/// One hand-made file, the code it must be refused with and words its message must contain.
struct HostileFile: CustomTestStringConvertible, Sendable {
    let name: String
    let bytes: [UInt8]
    let code: ZoneInfoError.Code
    let rule: String
    var testDescription: String { name }

    /// `TZifBuilder.pacific()` changed by `edit`.
    static func edited(
        _ name: String, code: ZoneInfoError.Code = .malformed, _ rule: String, _ edit: (inout TZifBuilder) -> Void
    ) -> HostileFile {
        var builder = TZifBuilder.pacific()
        edit(&builder)
        return HostileFile(name: name, bytes: builder.bytes, code: code, rule: rule)
    }

    /// `TZifBuilder.pacific()` with bytes replaced from `offset` on.
    static func patched(
        _ name: String, at offset: Int, _ replacement: [UInt8], code: ZoneInfoError.Code = .malformed,
        _ rule: String
    ) -> HostileFile {
        var bytes = TZifBuilder.pacific().bytes
        bytes.replaceSubrange(offset..<offset + replacement.count, with: replacement)
        return HostileFile(name: name, bytes: bytes, code: code, rule: rule)
    }

    static let pacific = TZifBuilder.pacific().bytes

    static var versionOne: [UInt8] {
        var builder = TZifBuilder.pacific()
        builder.version = 0
        return builder.bytes
    }

    static let headers: [HostileFile] = [
        patched("bad magic", at: 0, Array("TZiF".utf8), "the version 1 header does not start with the magic \"TZif\""),
        patched(
            "bad magic in the second header", at: TZifBuilder.secondHeaderOffset, Array("TZ1f".utf8),
            "the version 2+ header does not start with the magic"),
        patched("version byte 0x01", at: 4, [1], "version byte 0x01 is not NUL, '2', '3' or '4'"),
        patched("version byte '1'", at: 4, [0x31], "version byte 0x31 is not NUL, '2', '3' or '4'"),
        patched("a future version '5'", at: 4, [0x35], code: .unsupported, "TZif version '5' is newer than 4"),
        patched(
            "the two headers disagree on the version", at: TZifBuilder.secondHeaderOffset + 4, [0x33],
            "the version 2+ header says version 3, the first header 2"),
        edited("typecnt of zero", "typecnt is 0") {
            $0.types = []
            $0.transitions = []
            $0.transitionTypes = []
        },
        edited("charcnt of zero", "charcnt is 0") { $0.designations = [] },
        edited("isstdcnt neither 0 nor typecnt", "isstdcnt 2 is neither 0 nor typecnt 3") {
            $0.standardIndicators = [0, 0]
        },
        edited("isutcnt neither 0 nor typecnt", "isutcnt 1 is neither 0 nor typecnt 3") { $0.utIndicators = [0] },
        edited("leap-second records", code: .unsupported, "1 leap-second records") {
            $0.leapSeconds = [(78_796_800, 1)]
        },
    ]

    static let transitions: [HostileFile] = [
        edited("a transition type index past typecnt", "transition 1 has type index 3, past typecnt 3") {
            $0.transitionTypes[1] = 3
        },
        edited("transitions out of order", "transition 2 (1583661599) is not after transition 1 (1583661600)") {
            $0.transitions[2] = $0.transitions[1] - 1
        },
        edited("two transitions at the same instant", "is not after transition 1") {
            $0.transitions[2] = $0.transitions[1]
        },
    ]

    static let types: [HostileFile] = [
        edited("isdst of 2", "type 1 has isdst 2, not 0 or 1") { $0.types[1].isdst = 2 },
        edited("utoff of -2^31", "type 0 has utoff -2147483648, outside [-89999, 93599]") { $0.types[0].utoff = .min },
        edited("utoff of 26 hours", "type 0 has utoff 93600") { $0.types[0].utoff = 93_600 },
        edited("a designation index past charcnt", "type 2 has designation index 12") { $0.types[2].desigidx = 12 },
        edited("a designation without its NUL", "does not start a NUL-terminated name") {
            $0.designations.removeLast()
        },
        edited("a designation of 2 characters", "type 1 has designation \"DT\", not 3 to 6") {
            $0.types[1].desigidx = 5
        },
        edited("a designation with a space", "type 0 has designation \"L T\"") { $0.designations[1] = 0x20 },
        edited("a standard/wall indicator of 2", "standard/wall indicator 1 is 2") {
            $0.standardIndicators = [0, 2, 0]
        },
        edited("a UT indicator without the standard one", "UT/local indicator 2 is 1 with standard/wall indicator 0") {
            $0.standardIndicators = [0, 0, 0]
            $0.utIndicators = [0, 0, 1]
        },
        edited("a UT indicator with no standard indicators", "UT/local indicator 0 is 1") {
            $0.utIndicators = [1, 1, 1]
        },
    ]

    static let footers: [HostileFile] = [
        edited("a footer that is not a TZ string", "footer: TZ string \"PST8PDT\": the daylight-saving time") {
            $0.footer = Array("PST8PDT".utf8)
        },
        edited("a footer with a NUL", "footer: TZ string \"PST8\\x00\"") { $0.footer = Array("PST8\0".utf8) },
        edited("a footer that disagrees with the last transition", "the TZ string gives EST") {
            $0.footer = Array("EST5".utf8)
        },
        edited("a footer rule that ends DST a week after the last transition did", "gives PDT") {
            $0.footer = Array("PST8PDT,M3.2.0,M11.2.0".utf8)
        },
        HostileFile(
            name: "a byte after the footer", bytes: pacific + [0x0A], code: .malformed,
            rule: "1 unexpected bytes after the footer"),
        HostileFile(
            name: "a footer without its leading newline", bytes: pacific.dropLast(24) + [0x41] + pacific.suffix(23),
            code: .malformed, rule: "the footer does not start with a newline"),
        HostileFile(
            name: "a footer without its closing newline", bytes: Array(pacific.dropLast()), code: .malformed,
            rule: "no closing newline"),
    ]

    static let sizes: [HostileFile] = [
        HostileFile(
            name: "a version 1 file with a byte after its data", bytes: versionOne + [0], code: .malformed,
            rule: "1 unexpected bytes after the version 1 data"),
        HostileFile(
            name: "more than 1 MiB", bytes: pacific + [UInt8](repeating: 0, count: 1 << 20), code: .tooLarge,
            rule: "more than 1048576"),
        HostileFile(
            name: "empty", bytes: [], code: .malformed, rule: "truncated in the version 1 header (0 bytes in all)"),
    ]

    static let all = headers + transitions + types + footers + sizes
}

@Suite("TZif: hostile input is refused, never a crash")
struct HostileInputTests {
    @Test(
        "each hand-made defect is refused with its code and a message naming the field and the rule",
        arguments: HostileFile.all)
    func refused(_ file: HostileFile) {
        let error = tzifError(file.bytes)
        #expect(error?.code == file.code, "\(error?.description ?? "accepted")")
        #expect(error?.message.contains(file.rule) == true, "\(error?.message ?? "accepted")")
        #expect(error?.message.hasPrefix("time zone Test/Zone: ") == true)
    }

    @Test("the builder's own file is valid, so each defect above is the only one in its file")
    func builderIsValid() {
        #expect(tzifError(TZifBuilder.pacific().bytes) == nil)
    }

    @Test("every truncation of a real file (America/Los_Angeles, all 2852 prefixes) is refused as malformed")
    func truncations() throws {
        let bytes = try Vectors.bytes("America/Los_Angeles")
        #expect(bytes.count == 2852)
        var accepted: [Int] = []
        var wrongCode: [Int] = []
        for length in 0..<bytes.count {
            switch tzifError(Array(bytes.prefix(length)))?.code {
            case nil: accepted.append(length)
            case .malformed: break
            default: wrongCode.append(length)
            }
        }
        #expect(accepted.isEmpty, "prefixes accepted: \(accepted.prefix(10))")
        #expect(wrongCode.isEmpty, "prefixes refused with another code: \(wrongCode.prefix(10))")
        #expect(tzifError(bytes) == nil)
    }

    @Test(
        "a header claiming up to 2^32-1 of each count, with only 64 bytes after it, is refused at once",
        arguments: [
            // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
            [0, 0, 0, UInt32.max, 1, 1], [0, 0, UInt32.max, 0, 1, 1], [0, 0, 0, 0, 1, UInt32.max],
            [UInt32.max, UInt32.max, UInt32.max, UInt32.max, UInt32.max, UInt32.max],
        ])
    func hugeCounts(_ counts: [UInt32]) {
        var header = Array("TZif2".utf8) + [UInt8](repeating: 0, count: 15)
        for count in counts { header += TZifBuilder.bigEndian(UInt64(count), size: 4) }
        let clock = ContinuousClock()
        var error: ZoneInfoError?
        let elapsed = clock.measure { error = tzifError(header + [UInt8](repeating: 0, count: 64)) }
        #expect(error?.code == .malformed)
        #expect(error?.message.contains("truncated in the version 1 data") == true, "\(error?.message ?? "")")
        #expect(elapsed < .seconds(1))
    }

    @Test("a huge claim in the version 2+ header is refused the same way")
    func hugeSecondHeader() {
        var bytes = TZifBuilder.pacific().bytes
        let timecnt = TZifBuilder.secondHeaderOffset + 32
        bytes.replaceSubrange(timecnt..<timecnt + 4, with: [0xFF, 0xFF, 0xFF, 0xFF])
        let error = tzifError(bytes)
        #expect(error?.code == .malformed)
        #expect(error?.message.contains("truncated in the version 2+ data") == true, "\(error?.message ?? "")")
    }

    @Test("10 000 deterministic byte mutations of the real file: each is read or refused, never a crash")
    func mutations() throws {
        let original = try Vectors.bytes("America/Los_Angeles")
        var random = SplitMix64(state: 8536)
        var refused = 0
        for _ in 0..<10_000 {
            var bytes = original
            for _ in 0..<(1 + random.next() % 4) {
                let index = Int(random.next() % UInt64(bytes.count))
                bytes[index] = UInt8(truncatingIfNeeded: random.next())
            }
            guard let error = tzifError(bytes) else { continue }
            refused += 1
            #expect([.malformed, .unsupported].contains(error.code), "\(error)")
        }
        #expect(refused > 0)
    }
}
