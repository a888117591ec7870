import Testing
import ZoneInfo

func rules(_ builder: TZifBuilder) throws -> TimeZoneRules {
    try TimeZoneRules(tzif: builder.bytes, name: "Test/Zone")
}

@Suite("TZif: which local time type answers each instant")
struct TZifReadingTests {
    @Test("type 0 before the first transition, each transition's type from its instant on (to the second)")
    func betweenTransitions() throws {
        let zone = try rules(.pacific())
        #expect(zone.localTime(at: .min) == losAngelesMeanTime)
        #expect(zone.localTime(at: utc(1883, 11, 18, 20) - 1) == losAngelesMeanTime)
        #expect(zone.localTime(at: utc(1883, 11, 18, 20)) == pst)
        #expect(zone.localTime(at: utc(2020, 3, 8, 10) - 1) == pst)
        #expect(zone.localTime(at: utc(2020, 3, 8, 10)) == pdt)
        #expect(zone.localTime(at: utc(2020, 11, 1, 9) - 1) == pdt)
        #expect(zone.localTime(at: utc(2020, 11, 1, 9)) == pst)
    }

    @Test("type 0 applies before the first transition even when another type is listed first for a transition")
    func typeZeroFirst() throws {
        var builder = TZifBuilder.pacific()
        builder.transitionTypes = [1, 1, 2]
        builder.transitions[0] = utc(2020, 3, 1)
        builder.transitions[1] = utc(2020, 3, 8, 10)
        // Two consecutive transitions to PDT: allowed, the second changes nothing.
        let zone = try rules(builder)
        #expect(zone.localTime(at: utc(2020, 3, 1) - 1) == losAngelesMeanTime)
        #expect(zone.localTime(at: utc(2020, 3, 5)) == pdt)
    }

    @Test("after the last transition the footer's rule decides")
    func footerAfterLastTransition() throws {
        let zone = try rules(.pacific())
        #expect(zone.localTime(at: utc(2021, 7, 1)) == pdt)
        #expect(zone.localTime(at: utc(2021, 12, 1)) == pst)
    }

    @Test("an empty footer (no POSIX rule) keeps the last transition's type for ever")
    func emptyFooter() throws {
        var builder = TZifBuilder.pacific()
        builder.footer = []
        let zone = try rules(builder)
        #expect(zone.footer == nil)
        #expect(zone.localTime(at: utc(2021, 7, 1)) == pst)
        #expect(zone.localTime(at: .max) == pst)
    }

    @Test("a file without transitions follows its footer at every instant")
    func footerOnly() throws {
        var builder = TZifBuilder()
        builder.types = [(-18_000, 0, 0)]
        builder.designations = Array("EST\0".utf8)
        builder.footer = Array("EST5EDT,M3.2.0,M11.1.0".utf8)
        let zone = try rules(builder)
        #expect(zone.localTime(at: utc(1800, 7, 1)) == local(-14_400, true, "EDT"))
        #expect(zone.localTime(at: utc(2024, 1, 1)) == local(-18_000, false, "EST"))
    }

    @Test("a version 1 file (32-bit times, no footer) keeps its last type after the last transition")
    func versionOne() throws {
        var builder = TZifBuilder.pacific()
        builder.version = 0
        let zone = try rules(builder)
        #expect(zone.footer == nil)
        #expect(zone.localTime(at: utc(1883, 11, 18, 20) - 1) == losAngelesMeanTime)
        #expect(zone.localTime(at: utc(2020, 7, 1)) == pdt)
        #expect(zone.localTime(at: utc(2021, 7, 1)) == pst)
    }

    @Test("versions 2, 3 and 4 are read alike", arguments: ["2", "3", "4"])
    func laterVersions(_ version: String) throws {
        var builder = TZifBuilder.pacific()
        builder.version = UInt8(ascii: Unicode.Scalar(version) ?? "2")
        #expect(try rules(builder) == (try rules(.pacific())))
    }

    @Test("standard/wall and UT/local indicators are accepted when 0 or 1 (and UT only with standard)")
    func indicators() throws {
        var builder = TZifBuilder.pacific()
        builder.standardIndicators = [0, 1, 1]
        builder.utIndicators = [0, 0, 1]
        #expect(try rules(builder).localTime(at: utc(2020, 7, 1)) == pdt)
    }

    @Test("a transition at the extremes of Int64 is read, and lookups either side of it still answer")
    func extremeTransitions() throws {
        var builder = TZifBuilder.pacific()
        builder.transitions = [.min, utc(2020, 3, 8, 10), .max]
        builder.footer = []
        let zone = try rules(builder)
        #expect(zone.localTime(at: .min) == pst)
        #expect(zone.localTime(at: .max - 1) == pdt)
        #expect(zone.localTime(at: .max) == pst)
    }

    @Test("every TZif file of the system's database is read; only the leap-second zones (right/) are refused")
    func wholeDatabase() throws {
        let database = try SystemZones.all()
        #expect(database.count > 500)
        for zone in database {
            let error = zoneInfoError { () throws(ZoneInfoError) in try TimeZoneRules.system(zone) }
            if zone.hasPrefix("right/") {
                #expect(error?.code == .unsupported, "\(zone)")
            } else {
                #expect(error == nil, "\(zone): \(error?.description ?? "")")
            }
        }
    }
}
