import Testing
import ZoneInfo

func tz(_ text: String) throws -> POSIXTimeZone { try POSIXTimeZone(parsing: text) }

/// One malformed TZ string and the words its message must contain.
struct MalformedTZ: CustomTestStringConvertible, Sendable {
    let text: String
    let rule: String
    var testDescription: String { "\(text.debugDescription) -> \(rule)" }
    init(_ text: String, _ rule: String) {
        self.text = text
        self.rule = rule
    }
}

@Suite("POSIX TZ strings: what is read")
struct POSIXTimeZoneReadingTests {
    @Test("std offset dst ,start,end: names, offsets counted west of Greenwich, Mm.w.d days at the default 02:00")
    func fullForm() throws {
        let zone = try tz("PST8PDT,M3.2.0,M11.1.0")
        #expect(zone.standard == pst)
        let daylightSaving = try #require(zone.daylightSaving)
        #expect(daylightSaving.time == pdt)
        #expect(daylightSaving.start.day == .monthWeekday(month: 3, week: 2, weekday: 0))
        #expect(daylightSaving.start.time == 7200)
        #expect(daylightSaving.end.day == .monthWeekday(month: 11, week: 1, weekday: 0))
        #expect(daylightSaving.end.time == 7200)
    }

    @Test(
        "standard time only: no daylight saving, whatever the instant",
        arguments: [
            ("UTC0", local(0, false, "UTC")), ("IST-5:30", local(19_800, false, "IST")),
            ("<+03>-3", local(10_800, false, "+03")), ("<-03>3", local(-10_800, false, "-03")),
            ("<+0545>-5:45", local(20_700, false, "+0545")), ("XXX+1:02:03", local(-3723, false, "XXX")),
            ("<+14>-14", local(50_400, false, "+14")), ("ABCDEFGHIJ-24", local(86_400, false, "ABCDEFGHIJ")),
        ])
    func standardOnly(_ text: String, _ expected: LocalTimeType) throws {
        let zone = try tz(text)
        #expect(zone.standard == expected)
        #expect(zone.daylightSaving == nil)
        for instant in [Int64.min, utc(1, 1, 1), 0, utc(2024, 7, 1), utc(9999, 12, 31), .max] {
            #expect(zone.localTime(at: instant) == expected)
        }
    }

    @Test("the daylight-saving offset defaults to one hour ahead of standard time, and may be given")
    func daylightOffsets() throws {
        #expect(try tz("EST5EDT,M3.2.0,M11.1.0").daylightSaving?.time == local(-14_400, true, "EDT"))
        #expect(try tz("EST5EDT4,M3.2.0,M11.1.0").daylightSaving?.time == local(-14_400, true, "EDT"))
        #expect(try tz("<+00>0<+02>-2,M3.5.0/1,M10.5.0/3").daylightSaving?.time == local(7200, true, "+02"))
        #expect(try tz("NST3:30NDT,M3.2.0,M11.1.0").daylightSaving?.time == local(-9000, true, "NDT"))
    }

    @Test("M3.5.0 is the last Sunday of March; /1 moves the change to 01:00 (Europe/London in 2024)")
    func lastWeekday() throws {
        let london = try tz("GMT0BST,M3.5.0/1,M10.5.0")
        let gmt = local(0, false, "GMT")
        let bst = local(3600, true, "BST")
        #expect(london.localTime(at: utc(2024, 3, 31, 1) - 1) == gmt)
        #expect(london.localTime(at: utc(2024, 3, 31, 1)) == bst)
        #expect(london.localTime(at: utc(2024, 10, 27, 1) - 1) == bst)
        #expect(london.localTime(at: utc(2024, 10, 27, 1)) == gmt)
        // In 2026 the last Sunday of March is the 29th.
        #expect(london.localTime(at: utc(2026, 3, 29, 1) - 1) == gmt)
        #expect(london.localTime(at: utc(2026, 3, 29, 1)) == bst)
    }

    @Test("Jn never counts February 29: J60 is March 1 in leap and common years alike")
    func julianDays() throws {
        let zone = try tz("AAA3BBB,J60/0,J300/0")
        #expect(zone.daylightSaving?.start.day == .julian(60))
        let standard = local(-10_800, false, "AAA")
        let daylight = local(-7200, true, "BBB")
        for year in [2023, 2024, 2100, 2400] {
            #expect(zone.localTime(at: utc(year, 3, 1, 3) - 1) == standard, "year \(year)")
            #expect(zone.localTime(at: utc(year, 3, 1, 3)) == daylight, "year \(year)")
        }
    }

    @Test("n counts from 0 and counts February 29: day 59 is February 29 in a leap year, March 1 otherwise")
    func zeroBasedDays() throws {
        let zone = try tz("AAA3BBB,59/0,300/0")
        #expect(zone.daylightSaving?.start.day == .zeroBased(59))
        let daylight = local(-7200, true, "BBB")
        #expect(zone.localTime(at: utc(2024, 2, 29, 3)) == daylight)
        #expect(zone.localTime(at: utc(2024, 2, 29, 3) - 1).isDaylightSaving == false)
        #expect(zone.localTime(at: utc(2023, 3, 1, 3)) == daylight)
        #expect(zone.localTime(at: utc(2023, 3, 1, 3) - 1).isDaylightSaving == false)
    }

    @Test("a negative time is before midnight of the named day (America/Nuuk: M3.5.0/-1 is Saturday 23:00)")
    func negativeTime() throws {
        let nuuk = try tz("<-02>2<-01>,M3.5.0/-1,M10.5.0/0")
        #expect(nuuk.daylightSaving?.start.time == -3600)
        // 2024-03-31 is the last Sunday; -1:00 that day is 2024-03-30 23:00 at UTC-2, 01:00 UTC.
        #expect(nuuk.localTime(at: utc(2024, 3, 31, 1) - 1) == local(-7200, false, "-02"))
        #expect(nuuk.localTime(at: utc(2024, 3, 31, 1)) == local(-3600, true, "-01"))
        #expect(nuuk.localTime(at: utc(2024, 10, 27, 1) - 1) == local(-3600, true, "-01"))
        #expect(nuuk.localTime(at: utc(2024, 10, 27, 1)) == local(-7200, false, "-02"))
    }

    @Test("a time past 24:00 runs into the next day (Asia/Jerusalem: M3.4.4/26 is Friday 02:00 after the 4th Thursday)")
    func timePastMidnight() throws {
        let jerusalem = try tz("IST-2IDT,M3.4.4/26,M10.5.0")
        let twentySixHours: Int32 = 26 * 3600
        #expect(jerusalem.daylightSaving?.start.time == twentySixHours)
        // The 4th Thursday of March 2024 is the 28th: 26:00 is March 29 02:00 at UTC+2, midnight UTC.
        #expect(jerusalem.localTime(at: utc(2024, 3, 29) - 1) == local(7200, false, "IST"))
        #expect(jerusalem.localTime(at: utc(2024, 3, 29)) == local(10_800, true, "IDT"))
    }

    @Test("times reach -167 and 167 hours, with minutes and seconds")
    func extremeTimes() throws {
        let zone = try tz("AAA0BBB,M6.1.0/167,M9.1.0/-167:59:59")
        let latest: Int32 = 167 * 3600
        let earliest: Int32 = -(167 * 3600 + 59 * 60 + 59)
        let fiveHours: Int32 = 5 * 3600
        #expect(zone.daylightSaving?.start.time == latest)
        #expect(zone.daylightSaving?.end.time == earliest)
        #expect(try tz("AAA0BBB,M6.1.0/+5,M9.1.0").daylightSaving?.start.time == fiveHours)
    }

    @Test("southern hemisphere: DST from October to April spans the new year (Australia/Lord_Howe, 30 minutes)")
    func southernHemisphere() throws {
        let lordHowe = try tz("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0")
        let standard = local(37_800, false, "+1030")
        let daylight = local(39_600, true, "+11")
        #expect(lordHowe.localTime(at: utc(2024, 1, 1)) == daylight)
        #expect(lordHowe.localTime(at: utc(2024, 7, 1)) == standard)
        // 2024-04-07 02:00 at UTC+11 is 2024-04-06 15:00 UTC; 2024-10-06 02:00 at UTC+10:30 is 10-05 15:30 UTC.
        #expect(lordHowe.localTime(at: utc(2024, 4, 6, 15) - 1) == daylight)
        #expect(lordHowe.localTime(at: utc(2024, 4, 6, 15)) == standard)
        #expect(lordHowe.localTime(at: utc(2024, 10, 5, 15, 30) - 1) == standard)
        #expect(lordHowe.localTime(at: utc(2024, 10, 5, 15, 30)) == daylight)
    }

    @Test("daylight saving may be behind standard time (Europe/Dublin: IST in summer, GMT as DST in winter)")
    func negativeDaylightSaving() throws {
        let dublin = try tz("IST-1GMT0,M10.5.0,M3.5.0/1")
        #expect(dublin.localTime(at: utc(2024, 1, 15)) == local(0, true, "GMT"))
        #expect(dublin.localTime(at: utc(2024, 7, 15)) == local(3600, false, "IST"))
    }

    @Test("DST from January 1 00:00 to December 31 24:00 plus the shift is in effect all year (RFC 8536 3.3.1)")
    func allYearDaylightSaving() throws {
        let zone = try tz("EST5EDT,0/0,J365/25")
        let edt = local(-14_400, true, "EDT")
        for year in [1999, 2000, 2023, 2024, 2100] {
            for instant in [utc(year, 1, 1), utc(year, 1, 1, 5) - 1, utc(year, 1, 1, 5), utc(year, 7, 1)] {
                #expect(zone.localTime(at: instant) == edt, "year \(year), instant \(instant)")
            }
        }
    }

    @Test("the rule repeats every 400 years, and every Int64 instant has an answer")
    func farInstants() throws {
        let zone = try tz("PST8PDT,M3.2.0,M11.1.0")
        let cycle: Int64 = 146_097 * 86_400
        for instant in [utc(2024, 3, 10, 10) - 1, utc(2024, 3, 10, 10), utc(2024, 11, 3, 9)] {
            #expect(zone.localTime(at: instant + cycle) == zone.localTime(at: instant))
            #expect(zone.localTime(at: instant - 5 * cycle) == zone.localTime(at: instant))
        }
        #expect([pst, pdt].contains(zone.localTime(at: .max)))
        #expect([pst, pdt].contains(zone.localTime(at: .min)))
    }
}

@Suite("POSIX TZ strings: what is refused")
struct POSIXTimeZoneRefusalTests {
    @Test(
        "each malformed string is refused with a message naming the rule it breaks",
        arguments: [
            MalformedTZ("", "the standard time name needs at least 3 letters"),
            MalformedTZ("PS8", "the standard time name needs at least 3 letters"),
            MalformedTZ("PST", "the standard time \"PST\" needs an offset"),
            MalformedTZ("PST8PDT", "the daylight-saving time \"PDT\" needs a rule"),
            MalformedTZ("PST8PD,M3.2.0,M11.1.0", "the daylight-saving time name needs at least 3 letters"),
            MalformedTZ("PST8PDT,M3.2.0", "expected ',' and the end of daylight-saving time"),
            MalformedTZ("PST25", "the standard time offset has 25 hours, more than 24"),
            MalformedTZ("PST123", "the standard time offset hours has more than 2 digits"),
            MalformedTZ("PST8:5", "the standard time offset minutes must be two digits"),
            MalformedTZ("PST8:60", "00 to 59"),
            MalformedTZ("PST8:00:7", "the standard time offset seconds must be two digits"),
            MalformedTZ("PST+", "expected the standard time offset hours (a number)"),
            MalformedTZ("PST8PDT-,M3.2.0,M11.1.0", "expected the daylight-saving time offset hours"),
            MalformedTZ("PST8PDT,M13.2.0,M11.1.0", "the start month M13 is not 1 to 12"),
            MalformedTZ("PST8PDT,M0.2.0,M11.1.0", "the start month M0 is not 1 to 12"),
            MalformedTZ("PST8PDT,M3.6.0,M11.1.0", "the start week 6 is not 1 to 5"),
            MalformedTZ("PST8PDT,M3.2.7,M11.1.0", "the start weekday 7 is not 0 to 6"),
            MalformedTZ("PST8PDT,M3.2,M11.1.0", "expected a '.' and the weekday after the start week"),
            MalformedTZ("PST8PDT,M3,M11.1.0", "expected a '.' and the week after the start month"),
            MalformedTZ("PST8PDT,J0,J365", "the start day J0 is not J1 to J365"),
            MalformedTZ("PST8PDT,J1,J366", "the end day J366 is not J1 to J365"),
            MalformedTZ("PST8PDT,0,366", "the end day 366 is not 0 to 365"),
            MalformedTZ("PST8PDT,X3,M11.1.0", "the start of daylight-saving time must be Jn, n or Mm.w.d"),
            MalformedTZ("PST8PDT,M3.2.0/168,M11.1.0", "the start time has 168 hours, more than 167"),
            MalformedTZ("PST8PDT,M3.2.0,M11.1.0/", "expected the end time hours (a number)"),
            MalformedTZ("PST8PDT,M3.2.0,M11.1.0x", "nothing may follow the end of daylight-saving time"),
            MalformedTZ("PST8PDT,M3.2.0,M11.1.0,", "nothing may follow the end of daylight-saving time"),
            MalformedTZ("<+03", "must end in '>'"),
            MalformedTZ("<+0 3>-3", "may hold only letters, digits, '+' and '-'"),
            MalformedTZ("<+3>-3", "the standard time name in <...> needs at least 3 characters"),
            MalformedTZ("UTC0 ", "the daylight-saving time name needs at least 3 letters"),
            MalformedTZ("UTC\u{0}0", "expected the standard time offset hours (a number) (found a control byte"),
            MalformedTZ("ÉST5", "the standard time name needs at least 3 letters"),
        ])
    func refused(_ malformed: MalformedTZ) {
        let error = zoneInfoError { () throws(ZoneInfoError) in try POSIXTimeZone(parsing: malformed.text) }
        #expect(error?.code == .malformed)
        #expect(error?.message.contains(malformed.rule) == true, "\(error?.message ?? "accepted")")
        #expect(error?.message.hasPrefix("TZ string \"") == true)
    }

    @Test("the message quotes the string, with control and non-ASCII bytes as \\xNN")
    func quoting() {
        let error = zoneInfoError { () throws(ZoneInfoError) in try POSIXTimeZone(parsing: "É\u{1}\"") }
        #expect(error?.message.hasPrefix(#"TZ string "\xC3\x89\x01\"": "#) == true, "\(error?.message ?? "")")
    }

    @Test("the description is the code and the message, with no type names")
    func description() {
        let error = zoneInfoError { () throws(ZoneInfoError) in try POSIXTimeZone(parsing: "PST8PDT") }
        #expect(
            error?.description
                == "malformed: TZ string \"PST8PDT\": the daylight-saving time \"PDT\" needs a rule "
                + "\",start[/time],end[/time]\" (found the end at offset 7)")
    }
}
