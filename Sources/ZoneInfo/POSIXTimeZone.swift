/// A POSIX TZ string (POSIX.1-2017, 8.3 "TZ"), as found in the footer of a TZif file: a standard time, and
/// optionally a daylight-saving time with the yearly rule for when it starts and ends.
///
/// ```
/// tz       = std offset [ dst [ offset ] "," rule ]
/// std, dst = 3 or more letters | "<" 3 or more of [A-Za-z0-9+-] ">"
/// offset   = [ "+" | "-" ] hh [ ":" mm [ ":" ss ] ]            hours 0-24, positive WEST of Greenwich
/// rule     = date [ "/" time ] "," date [ "/" time ]
/// date     = "J" n  (1-365, February 29 never counted)
///          | n      (0-365, February 29 counted)
///          | "M" m "." w "." d                               month 1-12, week 1-5 (5 = last), weekday 0-6 (Sunday)
/// time     = [ "+" | "-" ] hhh [ ":" mm [ ":" ss ] ]           hours -167 to 167 (RFC 8536 3.3.1), default 02:00
/// ```
///
/// A daylight-saving name must come with a rule (POSIX leaves the default rule to the implementation, so a TZif
/// footer always writes it out); its offset defaults to one hour ahead of standard time. As RFC 8536 allows, a
/// daylight-saving time that starts January 1 at 00:00 and ends December 31 at 24:00 plus the daylight-saving shift
/// is in effect all year.
public struct POSIXTimeZone: Sendable, Hashable {
    /// The standard time: its offset east of UTC and its abbreviation (`isDaylightSaving` is false).
    public let standard: LocalTimeType
    /// The daylight-saving time and its yearly rule, or nil when standard time is kept all year.
    public let daylightSaving: DaylightSaving?

    /// A daylight-saving time and when it is in effect each year.
    public struct DaylightSaving: Sendable, Hashable {
        /// Its offset east of UTC and its abbreviation (`isDaylightSaving` is true).
        public let time: LocalTimeType
        /// When it starts, in local standard time.
        public let start: Change
        /// When it ends, in local daylight-saving time.
        public let end: Change
    }

    /// A yearly change: a day of the year and a time on that day.
    public struct Change: Sendable, Hashable {
        public let day: Day
        /// Seconds after local midnight of `day`; may be negative or past 24 hours (-167 h to 167 h).
        public let time: Int32
    }

    /// How a rule names a day of the year.
    public enum Day: Sendable, Hashable {
        /// `Jn`: the n-th day, 1 to 365, never counting February 29 (J59 is February 28, J60 March 1).
        case julian(Int)
        /// `n`: the day n days after January 1, 0 to 365, counting February 29 in leap years.
        case zeroBased(Int)
        /// `Mm.w.d`: the w-th weekday d (0 is Sunday) of month m; week 5 is the last such weekday of the month.
        case monthWeekday(month: Int, week: Int, weekday: Int)
    }

    /// Parses `text` with the grammar above; anything else (a missing part, a number out of range, characters
    /// after the rule) is refused as `malformed` with a message that names the part and the rule.
    public init(parsing text: String) throws(ZoneInfoError) {
        try self.init(bytes: Array(text.utf8))
    }

    init(bytes: [UInt8]) throws(ZoneInfoError) {
        var parser = POSIXTimeZoneParser(bytes: bytes)
        do {
            self = try parser.parse()
        } catch {
            throw error.within("TZ string \(ZoneInfoError.quoted(bytes))")
        }
    }

    init(standard: LocalTimeType, daylightSaving: DaylightSaving?) {
        self.standard = standard
        self.daylightSaving = daylightSaving
    }

    /// The local time this TZ string gives at `secondsSince1970` (UTC): standard time, or daylight-saving time from
    /// each year's start (inclusive) to its end (exclusive). Defined for every Int64 instant: the rule repeats
    /// every 400 Gregorian years, so the instant is first folded into one cycle.
    public func localTime(at secondsSince1970: Int64) -> LocalTimeType {
        guard let daylightSaving else { return standard }
        let instant = CivilCalendar.floorModulo(secondsSince1970, CivilCalendar.secondsPer400Years)
        let year = CivilCalendar.year(ofDaysSince1970: instant / CivilCalendar.secondsPerDay)
        // A year's changes lie within about 8 days of it (times up to 167 h, offsets up to 25 h), so the last
        // change at or before `instant` is among those of the two years before, this year and the next. Ties go to
        // the change written later: an end and the next year's start at the same instant leave DST in effect.
        var latest = Int64.min
        var inDaylightSaving = false
        for ruleYear in (year - 2)...(year + 1) {
            let start = daylightSaving.start.instant(in: ruleYear, utcOffset: standard.utcOffset)
            let end = daylightSaving.end.instant(in: ruleYear, utcOffset: daylightSaving.time.utcOffset)
            if start <= instant && start >= latest {
                latest = start
                inDaylightSaving = true
            }
            if end <= instant && end >= latest {
                latest = end
                inDaylightSaving = false
            }
        }
        return inDaylightSaving ? daylightSaving.time : standard
    }
}

extension POSIXTimeZone.Change {
    /// The UTC instant of this change in `year`, for a local time `utcOffset` seconds east of UTC.
    func instant(in year: Int64, utcOffset: Int32) -> Int64 {
        let day: Int64
        switch self.day {
        case .julian(let number):
            // Jn never counts February 29, so from J60 (March 1) on it falls a day later in a leap year.
            let leapDay: Int64 = number >= 60 && CivilCalendar.isLeapYear(year) ? 1 : 0
            day = CivilCalendar.daysSince1970(year: year, month: 1, day: 1) + Int64(number) - 1 + leapDay
        case .zeroBased(let number):
            day = CivilCalendar.daysSince1970(year: year, month: 1, day: 1) + Int64(number)
        case .monthWeekday(let month, let week, let weekday):
            let first = CivilCalendar.daysSince1970(year: year, month: Int64(month), day: 1)
            let daysToWeekday = Int64(weekday) - CivilCalendar.weekday(ofDaysSince1970: first)
            let firstMatch = first + CivilCalendar.floorModulo(daysToWeekday, 7)
            let candidate = firstMatch + 7 * Int64(week - 1)
            let pastMonth = candidate >= first + CivilCalendar.daysInMonth(Int64(month), year: year)
            day = pastMonth ? candidate - 7 : candidate
        }
        return day * CivilCalendar.secondsPerDay + Int64(time) - Int64(utcOffset)
    }
}

/// Reads a TZ string byte by byte; each `read…` consumes what it matched and throws at the first byte that breaks
/// the grammar.
private struct POSIXTimeZoneParser {
    let bytes: [UInt8]
    var position = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private func failure(_ rule: String) -> ZoneInfoError {
        let found: String
        if let current {
            found = (0x21...0x7E).contains(current) ? "'\(Character(Unicode.Scalar(current)))'" : "a control byte"
        } else {
            found = "the end"
        }
        return ZoneInfoError(.malformed, "\(rule) (found \(found) at offset \(position))")
    }

    mutating func parse() throws(ZoneInfoError) -> POSIXTimeZone {
        let standardName = try readName("standard time")
        guard current != nil else { throw failure("the standard time \"\(standardName)\" needs an offset") }
        let standardOffset = try readOffset("standard time")
        let standard = LocalTimeType(utcOffset: standardOffset, isDaylightSaving: false, abbreviation: standardName)
        guard current != nil else { return POSIXTimeZone(standard: standard, daylightSaving: nil) }
        let daylightName = try readName("daylight-saving time")
        var daylightOffset = standardOffset + 3600
        if let current, current != UInt8(ascii: ",") {
            daylightOffset = try readOffset("daylight-saving time")
        }
        guard current == UInt8(ascii: ",") else {
            throw failure("the daylight-saving time \"\(daylightName)\" needs a rule \",start[/time],end[/time]\"")
        }
        position += 1
        let start = try readChange("start")
        guard current == UInt8(ascii: ",") else { throw failure("expected ',' and the end of daylight-saving time") }
        position += 1
        let end = try readChange("end")
        guard current == nil else { throw failure("nothing may follow the end of daylight-saving time") }
        let daylight = LocalTimeType(utcOffset: daylightOffset, isDaylightSaving: true, abbreviation: daylightName)
        return POSIXTimeZone(
            standard: standard, daylightSaving: POSIXTimeZone.DaylightSaving(time: daylight, start: start, end: end))
    }

    /// `std` or `dst`: three or more letters, or `<` three or more of letters, digits, `+`, `-` then `>`.
    private mutating func readName(_ what: String) throws(ZoneInfoError) -> String {
        let quoted = current == UInt8(ascii: "<")
        if quoted { position += 1 }
        let start = position
        while let byte = current, Self.isLetter(byte) || (quoted && Self.isQuotedNameByte(byte)) { position += 1 }
        let name = String(decoding: bytes[start..<position], as: UTF8.self)
        if quoted {
            guard current == UInt8(ascii: ">") else {
                throw failure(
                    "the \(what) name in <...> may hold only letters, digits, '+' and '-' and must end in '>'")
            }
        }
        guard name.utf8.count >= 3 else {
            throw failure(
                quoted
                    ? "the \(what) name in <...> needs at least 3 characters"
                    : "the \(what) name needs at least 3 letters (or <...> for other characters)")
        }
        if quoted { position += 1 }
        return name
    }

    /// `[+|-]hh[:mm[:ss]]`, hours 0-24, counted west of Greenwich: returns seconds EAST of UTC.
    private mutating func readOffset(_ what: String) throws(ZoneInfoError) -> Int32 {
        let west = try readSignedTime(maximumHourDigits: 2, maximumHours: 24, "the \(what) offset")
        return -west
    }

    /// `date[/time]`: one end of the daylight-saving rule.
    private mutating func readChange(_ which: String) throws(ZoneInfoError) -> POSIXTimeZone.Change {
        let day: POSIXTimeZone.Day
        switch current {
        case UInt8(ascii: "J"):
            position += 1
            let number = try readNumber(maximumDigits: 3, "the \(which) day after 'J'")
            guard (1...365).contains(number) else { throw failure("the \(which) day J\(number) is not J1 to J365") }
            day = .julian(number)
        case UInt8(ascii: "M"):
            position += 1
            let month = try readNumber(maximumDigits: 2, "the \(which) month after 'M'")
            guard (1...12).contains(month) else { throw failure("the \(which) month M\(month) is not 1 to 12") }
            try expect(UInt8(ascii: "."), "a '.' and the week after the \(which) month")
            let week = try readNumber(maximumDigits: 1, "the \(which) week")
            guard (1...5).contains(week) else { throw failure("the \(which) week \(week) is not 1 to 5") }
            try expect(UInt8(ascii: "."), "a '.' and the weekday after the \(which) week")
            let weekday = try readNumber(maximumDigits: 1, "the \(which) weekday")
            guard (0...6).contains(weekday) else { throw failure("the \(which) weekday \(weekday) is not 0 to 6") }
            day = .monthWeekday(month: month, week: week, weekday: weekday)
        case let byte? where Self.isDigit(byte):
            let number = try readNumber(maximumDigits: 3, "the \(which) day")
            guard (0...365).contains(number) else { throw failure("the \(which) day \(number) is not 0 to 365") }
            day = .zeroBased(number)
        default:
            throw failure("the \(which) of daylight-saving time must be Jn, n or Mm.w.d")
        }
        var time: Int32 = 7200
        if current == UInt8(ascii: "/") {
            position += 1
            time = try readSignedTime(maximumHourDigits: 3, maximumHours: 167, "the \(which) time")
        }
        return POSIXTimeZone.Change(day: day, time: time)
    }

    /// `[+|-]h[h…][:mm[:ss]]` in seconds, minutes and seconds two digits each, 0-59.
    private mutating func readSignedTime(maximumHourDigits: Int, maximumHours: Int, _ what: String)
        throws(ZoneInfoError) -> Int32
    {
        var sign = 1
        if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") {
            if current == UInt8(ascii: "-") { sign = -1 }
            position += 1
        }
        let hours = try readNumber(maximumDigits: maximumHourDigits, "\(what) hours")
        guard hours <= maximumHours else { throw failure("\(what) has \(hours) hours, more than \(maximumHours)") }
        var minutes = 0
        var seconds = 0
        if current == UInt8(ascii: ":") {
            position += 1
            minutes = try readTwoDigits("\(what) minutes")
            if current == UInt8(ascii: ":") {
                position += 1
                seconds = try readTwoDigits("\(what) seconds")
            }
        }
        return Int32(sign * (hours * 3600 + minutes * 60 + seconds))
    }

    private mutating func readTwoDigits(_ what: String) throws(ZoneInfoError) -> Int {
        let start = position
        let value = try readNumber(maximumDigits: 2, what)
        guard position - start == 2, value <= 59 else { throw failure("\(what) must be two digits, 00 to 59") }
        return value
    }

    /// One to `maximumDigits` decimal digits; a longer run is refused rather than read (so nothing overflows).
    private mutating func readNumber(maximumDigits: Int, _ what: String) throws(ZoneInfoError) -> Int {
        var value = 0
        var digits = 0
        while let byte = current, Self.isDigit(byte) {
            guard digits < maximumDigits else { throw failure("\(what) has more than \(maximumDigits) digits") }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
            position += 1
        }
        guard digits > 0 else { throw failure("expected \(what) (a number)") }
        return value
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(ZoneInfoError) {
        guard current == byte else { throw failure("expected \(what)") }
        position += 1
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
    private static func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
    private static func isQuotedNameByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
    }
}
