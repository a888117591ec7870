import Testing
import ZoneInfo

let pst = local(-28_800, false, "PST")
let pdt = local(-25_200, true, "PDT")
let losAngelesMeanTime = local(-28_378, false, "LMT")

/// Seconds after local midnight at `instant` in `type`.
func wallClock(_ instant: Int64, _ type: LocalTimeType) -> Int64 {
    let local = instant + Int64(type.utcOffset)
    return (local % 86_400 + 86_400) % 86_400
}

@Suite("America/Los_Angeles: what the database says")
struct LosAngelesTests {
    let zone: TimeZoneRules

    init() throws {
        zone = try Vectors.losAngeles()
    }

    @Test("the verifyReceipt example: 2020-07-22T17:39:08Z is 10:39:08 PDT, seven hours behind UTC")
    func receiptExample() {
        let instant = utc(2020, 7, 22, 17, 39, 8)
        let time = zone.localTime(at: instant)
        #expect(time == pdt)
        #expect(wallClock(instant, time) == 10 * 3600 + 39 * 60 + 8)
    }

    @Test("2013-08-01T07:00:00Z is midnight PDT")
    func midnight() {
        let instant = utc(2013, 8, 1, 7)
        #expect(zone.localTime(at: instant) == pdt)
        #expect(wallClock(instant, pdt) == 0)
    }

    @Test("January is standard time, eight hours behind UTC")
    func january() {
        #expect(zone.localTime(at: utc(2020, 1, 15, 12)) == pst)
        #expect(zone.localTime(at: utc(1999, 1, 1)) == pst)
    }

    @Test("before 2007 DST started the first Sunday of April: 2006-04-01 is still PST, 2007-03-12 already PDT")
    func ruleChangeOf2007() {
        #expect(zone.localTime(at: utc(2006, 4, 1, 12)) == pst)
        #expect(zone.localTime(at: utc(2007, 3, 12, 12)) == pdt)
        // The old rule ended DST on the last Sunday of October, the new one on the first Sunday of November.
        #expect(zone.localTime(at: utc(2006, 10, 30, 12)) == pst)
        #expect(zone.localTime(at: utc(2007, 10, 30, 12)) == pdt)
    }

    @Test(
        "each change happens at 02:00 local time, to the second: 01:59:59 is followed by 03:00 or by 01:00 again",
        arguments: [
            // 2006-04-02 02:00 PST, 2006-10-29 02:00 PDT, 2007-03-11 02:00 PST, 2007-11-04 02:00 PDT
            (utc(2006, 4, 2, 10), pdt), (utc(2006, 10, 29, 9), pst),
            (utc(2007, 3, 11, 10), pdt), (utc(2007, 11, 4, 9), pst),
        ])
    func exactTransitions(_ instant: Int64, _ after: LocalTimeType) {
        let before = after == pdt ? pst : pdt
        #expect(zone.localTime(at: instant - 1) == before)
        #expect(zone.localTime(at: instant) == after)
        #expect(wallClock(instant - 1, before) == 2 * 3600 - 1)
        #expect(wallClock(instant, after) == (after == pdt ? 3 : 1) * 3600)
    }

    @Test("after the last transition (2037) the footer's rule PST8PDT,M3.2.0,M11.1.0 applies")
    func footer() throws {
        #expect(zone.footer == (try POSIXTimeZone(parsing: "PST8PDT,M3.2.0,M11.1.0")))
        #expect(zone.localTime(at: utc(2100, 7, 1, 12)) == pdt)
        #expect(zone.localTime(at: utc(2100, 1, 15, 12)) == pst)
        // 2100: second Sunday of March is the 14th, first Sunday of November the 7th.
        #expect(zone.localTime(at: utc(2100, 3, 14, 10) - 1) == pst)
        #expect(zone.localTime(at: utc(2100, 3, 14, 10)) == pdt)
        #expect(zone.localTime(at: utc(2100, 11, 7, 9) - 1) == pdt)
        #expect(zone.localTime(at: utc(2100, 11, 7, 9)) == pst)
    }

    @Test("9999, the latest year a receipt date carries, follows the same rule")
    func year9999() {
        #expect(zone.localTime(at: utc(9999, 7, 1)) == pdt)
        #expect(zone.localTime(at: utc(9999, 3, 14, 10) - 1) == pst)
        #expect(zone.localTime(at: utc(9999, 3, 14, 10)) == pdt)
        #expect(zone.localTime(at: utc(9999, 11, 7, 9) - 1) == pdt)
        #expect(zone.localTime(at: utc(9999, 11, 7, 9)) == pst)
        #expect(zone.localTime(at: utc(9999, 12, 31, 23, 59, 59)) == pst)
    }

    @Test("before standard time began (1883-11-18 12:00 local) the zone kept local mean time, UTC-7:52:58")
    func localMeanTime() {
        #expect(zone.localTime(at: utc(1850, 6, 1)) == losAngelesMeanTime)
        #expect(zone.localTime(at: utc(0, 1, 1)) == losAngelesMeanTime)
        #expect(zone.localTime(at: utc(1883, 11, 18, 20) - 1) == losAngelesMeanTime)
        #expect(zone.localTime(at: utc(1883, 11, 18, 20)) == pst)
    }

    @Test("the extremes of Int64 are answered without overflow")
    func extremes() {
        #expect(zone.localTime(at: .min) == losAngelesMeanTime)
        #expect([pst, pdt].contains(zone.localTime(at: .max)))
    }

    @Test("the system's own America/Los_Angeles agrees on the past")
    func systemCopy() throws {
        let system = try TimeZoneRules.system("America/Los_Angeles")
        #expect(system.name == "America/Los_Angeles")
        for instant in [utc(1850, 6, 1), utc(2006, 4, 2, 10), utc(2013, 8, 1, 7), utc(2020, 7, 22, 17, 39, 8)] {
            #expect(system.localTime(at: instant) == zone.localTime(at: instant))
        }
    }
}
