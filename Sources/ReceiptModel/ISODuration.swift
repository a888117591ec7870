/// An ISO 8601 duration such as `P30D`, `P1M`, `P1Y2M`, `PT36H` or `P2W`, added on the UTC calendar.
///
/// Years and months are calendar units: one month after January 31st is the last day of February. Weeks, days,
/// hours, minutes and seconds are fixed lengths. Components are whole numbers in the order
/// `PnYnMnWnDTnHnMnS`, at least one of them.
public struct ISODuration: Hashable, Sendable, CustomStringConvertible {
    public let years: Int64
    public let months: Int64
    public let weeks: Int64
    public let days: Int64
    public let hours: Int64
    public let minutes: Int64
    public let seconds: Int64

    /// The largest value accepted for any one component, far beyond any real period and safe from overflow.
    static let componentLimit: Int64 = 1_000_000

    /// Parses `text`; nil for anything that is not a duration in this form (including an empty `P` or `PT`,
    /// fractions, signs, lower case, and components over a million).
    public init?(_ text: String) {
        var bytes = Array(text.utf8)[...]
        guard bytes.popFirst() == UInt8(ascii: "P"), !bytes.isEmpty else { return nil }
        var values: [UInt8: Int64] = [:]
        var inTime = false
        var order = Array("YMWD".utf8)[...]
        var sawComponent = false
        while !bytes.isEmpty {
            if bytes.first == UInt8(ascii: "T") {
                guard !inTime else { return nil }
                inTime = true
                order = Array("HMS".utf8)[...]
                bytes = bytes.dropFirst()
                guard !bytes.isEmpty else { return nil }
                continue
            }
            let digits = bytes.prefix(while: { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            guard !digits.isEmpty, digits.count <= 7, let value = Int64(String(decoding: digits, as: UTF8.self)),
                value <= Self.componentLimit
            else { return nil }
            bytes = bytes.dropFirst(digits.count)
            guard let designator = bytes.popFirst(), let position = order.firstIndex(of: designator) else { return nil }
            order = order[(position + 1)...]
            values[inTime ? designator | 0x80 : designator] = value
            sawComponent = true
        }
        guard sawComponent else { return nil }
        years = values[UInt8(ascii: "Y")] ?? 0
        months = values[UInt8(ascii: "M")] ?? 0
        weeks = values[UInt8(ascii: "W")] ?? 0
        days = values[UInt8(ascii: "D")] ?? 0
        hours = values[UInt8(ascii: "H") | 0x80] ?? 0
        minutes = values[UInt8(ascii: "M") | 0x80] ?? 0
        seconds = values[UInt8(ascii: "S") | 0x80] ?? 0
    }

    /// Whether every component is zero (`P0D`).
    public var isZero: Bool { [years, months, weeks, days, hours, minutes, seconds].allSatisfy { $0 == 0 } }

    /// The canonical text, e.g. `P1Y2M`, `PT36H`, `P0D`.
    public var description: String {
        var text = "P"
        for (value, unit) in [(years, "Y"), (months, "M"), (weeks, "W"), (days, "D")] where value != 0 {
            text += "\(value)\(unit)"
        }
        let time = [(hours, "H"), (minutes, "M"), (seconds, "S")].filter { $0.0 != 0 }
        if !time.isEmpty { text += "T" + time.map { "\($0.0)\($0.1)" }.joined() }
        return text == "P" ? "P0D" : text
    }
}

extension ReceiptDate {
    /// This instant moved forward by `duration`: calendar years and months first (clamping the day to the end of
    /// a shorter month), then weeks, days and time as fixed lengths.
    public func adding(_ duration: ISODuration) -> ReceiptDate {
        let civil = CivilTime(secondsSince1970: secondsSince1970)
        let monthIndex = civil.month - 1 + duration.months + duration.years * 12
        let year = civil.year + monthIndex / 12
        let month = monthIndex % 12 + 1
        let day = min(civil.day, CivilTime.daysInMonth(year: year, month: month))
        let shifted =
            CivilTime(year: year, month: month, day: day, hour: civil.hour, minute: civil.minute, second: civil.second)?
            .secondsSince1970 ?? secondsSince1970
        let fixedSeconds =
            (duration.weeks * 7 + duration.days) * 86_400 + duration.hours * 3600 + duration.minutes * 60
            + duration.seconds
        return ReceiptDate(secondsSince1970: shifted + fixedSeconds, milliseconds: splitSeconds.milliseconds)
    }
}
