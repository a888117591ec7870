import Testing
import ZoneInfo

@Suite("The system's zones agree with the C library (zdump) from 1900 to 2199")
struct CLibraryComparisonTests {
    static let zones = [
        "America/Los_Angeles", "Europe/London", "Australia/Lord_Howe", "Asia/Kolkata", "America/Sao_Paulo",
        "Pacific/Apia", "UTC",
        // Negative DST (Dublin), many explicit changes to 2087 (Casablanca), a -1:00 rule time (Nuuk), a 26:00 one
        // (Jerusalem), a two-hour DST (Troll), a -3:30 offset (St Johns), a date-line jump to +14 (Kiritimati).
        "Europe/Dublin", "Africa/Casablanca", "America/Nuuk", "Asia/Jerusalem", "Antarctica/Troll",
        "America/St_Johns", "Pacific/Kiritimati",
    ]
    static let samples = 3000

    @Test(
        "offset, DST flag and abbreviation equal zdump's at each change (to the second), between, and at 3000 instants",
        arguments: zones)
    func agreesWithZdump(_ zone: String) throws {
        let rules = try TimeZoneRules.system(zone)
        let timeline = try ZdumpTimeline(zone: zone, fromYear: 1900, toYear: 2200)
        var mismatches: [String] = []
        func check(_ instant: Int64, _ expected: LocalTimeType, _ what: String) {
            let given = rules.localTime(at: instant)
            if given != expected, mismatches.count < 10 {
                mismatches.append("\(what) \(instant): \(given), zdump \(expected)")
            }
        }
        var previous = (instant: utc(1900, 1, 1), type: timeline.initial)
        for change in timeline.changes {
            check(change.instant - 1, previous.type, "just before the change at")
            check(change.instant, change.type, "at the change")
            check(previous.instant + (change.instant - previous.instant) / 2, previous.type, "between changes, at")
            previous = change
        }
        let first = utc(1900, 1, 2)
        let step = (utc(2199, 12, 30) - first) / Int64(Self.samples)
        var random = SplitMix64(state: 0x5A0E_1F0)
        for index in 0..<Int64(Self.samples) {
            let instant = first + index * step + Int64(random.next() % UInt64(step))
            check(instant, timeline.localTime(at: instant), "sample")
        }
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
    }

    @Test("zdump itself sees the changes this suite relies on (so an empty timeline cannot pass unnoticed)")
    func zdumpSeesChanges() throws {
        let timeline = try ZdumpTimeline(zone: "America/Los_Angeles", fromYear: 1900, toYear: 2200)
        #expect(timeline.initial == pst)
        #expect(timeline.changes.count > 400)
        #expect(timeline.changes.contains { $0.instant == utc(2007, 3, 11, 10) && $0.type == pdt })
        #expect(try ZdumpTimeline(zone: "UTC", fromYear: 1900, toYear: 2200).changes.isEmpty)
    }
}
