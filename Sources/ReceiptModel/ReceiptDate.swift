import StrictJSON
import ZoneInfo

/// An instant with millisecond precision, as receipts carry them.
///
/// Receipts store dates as RFC 3339 text in an IA5String; verifyReceipt prints them as
/// `2024-06-05 12:00:00 Etc/GMT` plus a `_ms` twin. This type reads both and writes both, always in UTC.
public struct ReceiptDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public let millisecondsSince1970: Int64

    /// The earliest and latest instants representable as four-digit years.
    public static let earliest = ReceiptDate(millisecondsSince1970: -62_167_219_200_000)
    public static let latest = ReceiptDate(millisecondsSince1970: 253_402_300_799_999)

    public init(millisecondsSince1970: Int64) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    /// Whole seconds; values beyond what milliseconds can hold saturate.
    public init(secondsSince1970: Int64) {
        self.init(secondsSince1970: secondsSince1970, milliseconds: 0)
    }

    /// Seconds plus milliseconds past them; values beyond what milliseconds can hold saturate.
    init(secondsSince1970 seconds: Int64, milliseconds: Int64) {
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        let (sum, sumOverflow) = product.addingReportingOverflow(milliseconds)
        self.millisecondsSince1970 = overflow || sumOverflow ? (seconds < 0 ? .min : .max) : sum
    }

    public static func < (lhs: ReceiptDate, rhs: ReceiptDate) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    /// Whole seconds since 1970, rounded down.
    public var secondsSince1970: Int64 { splitSeconds.seconds }

    /// Whole seconds rounded down, and the milliseconds (0-999) past them.
    var splitSeconds: (seconds: Int64, milliseconds: Int64) {
        let (quotient, remainder) = millisecondsSince1970.quotientAndRemainder(dividingBy: 1000)
        return remainder < 0 ? (quotient - 1, remainder + 1000) : (quotient, remainder)
    }

    /// ``rfc3339`` as ASCII bytes, written digit by digit (this is what signing writes into every date field).
    public var rfc3339Bytes: [UInt8] {
        [UInt8](capacity: rfc3339ByteCount) { appendRFC3339(to: &$0) }
    }

    /// How many bytes ``rfc3339Bytes`` holds.
    var rfc3339ByteCount: Int {
        guard self >= .earliest && self <= .latest else { return rfc3339BeyondFourDigitYears.utf8.count }
        return splitSeconds.milliseconds == 0 ? 20 : 24
    }

    /// Appends ``rfc3339Bytes`` (``rfc3339ByteCount`` bytes) to `output`.
    func appendRFC3339(to output: inout OutputSpan<UInt8>) {
        guard self >= .earliest && self <= .latest else {
            for byte in rfc3339BeyondFourDigitYears.utf8 { output.append(byte) }
            return
        }
        let (seconds, milliseconds) = splitSeconds
        CivilTime(secondsSince1970: seconds).appendDateAndTime(separator: UInt8(ascii: "T"), to: &output)
        if milliseconds != 0 {
            output.append(UInt8(ascii: "."))
            output.append(UInt8(ascii: "0") + UInt8(milliseconds / 100))
            output.append(UInt8(ascii: "0") + UInt8(milliseconds / 10 % 10))
            output.append(UInt8(ascii: "0") + UInt8(milliseconds % 10))
        }
        output.append(UInt8(ascii: "Z"))
    }

    /// RFC 3339 in UTC: `2024-06-05T12:00:00Z`, with `.SSS` only when there are milliseconds.
    public var rfc3339: String {
        guard self >= .earliest && self <= .latest else { return rfc3339BeyondFourDigitYears }
        return String(decoding: rfc3339Bytes, as: UTF8.self)
    }

    /// ``rfc3339`` for the years that four digits do not hold, which the digit-by-digit writing leaves to this.
    private var rfc3339BeyondFourDigitYears: String {
        let civil = CivilTime(secondsSince1970: secondsSince1970)
        let milliseconds = splitSeconds.milliseconds
        let fraction = milliseconds == 0 ? "" : "." + Self.pad(milliseconds, 3)
        return "\(civil.dateText)T\(civil.timeText)\(fraction)Z"
    }

    /// verifyReceipt's form: `2024-06-05 12:00:00 Etc/GMT` (whole seconds).
    public var appleFormat: String {
        civilTime().appleText(zone: "Etc/GMT")
    }

    /// verifyReceipt's form in a zone's local time, as its `*_pst` twins are in America/Los_Angeles:
    /// `2020-07-22 10:39:08 America/Los_Angeles` (whole seconds, the zone's offset at that instant).
    public func appleFormat(in zone: TimeZoneRules) -> String {
        civilTime(in: zone).appleText(zone: zone.name)
    }

    /// This instant's date and time of day (whole seconds) in `zone`'s local time, or in UTC without one.
    func civilTime(in zone: TimeZoneRules? = nil) -> CivilTime {
        let seconds = secondsSince1970
        return CivilTime(secondsSince1970: seconds + (zone.map { Int64($0.localTime(at: seconds).utcOffset) } ?? 0))
    }

    public var description: String { rfc3339 }

    /// Parses RFC 3339 (`2024-06-05T12:00:00Z`, `…T12:00:00.250+02:00`, and the `+0200` offsets real receipts
    /// carry). Fractional seconds beyond milliseconds are truncated. Returns nil for anything else, including
    /// impossible dates such as February 30th.
    public init?(rfc3339 text: String) {
        self.init(rfc3339Bytes: Array(text.utf8)[...])
    }

    /// Parses RFC 3339 from ASCII bytes, as ``init(rfc3339:)`` does from text.
    public init?(rfc3339Bytes bytes: ArraySlice<UInt8>) {
        if let instant = ReceiptDate(canonicalUTC: bytes.span, 0..<bytes.count) {
            self = instant
            return
        }
        var scanner = DateScanner(bytes)
        guard let year = scanner.digits(4), scanner.take("-"), let month = scanner.digits(2), scanner.take("-"),
            let day = scanner.digits(2), scanner.take(anyOf: "Tt"), let hour = scanner.digits(2), scanner.take(":"),
            let minute = scanner.digits(2), scanner.take(":"), let second = scanner.digits(2)
        else { return nil }
        var milliseconds: Int64 = 0
        if scanner.take(".") {
            guard let fraction = scanner.fractionMilliseconds() else { return nil }
            milliseconds = fraction
        }
        let offsetSeconds: Int64
        if scanner.take(anyOf: "Zz") {
            offsetSeconds = 0
        } else if let sign = scanner.sign(), let offsetHours = scanner.digits(2) {
            _ = scanner.take(":")  // both `+02:00` and `+0200` occur in real receipts
            guard let offsetMinutes = scanner.digits(2), offsetHours <= 23, offsetMinutes <= 59 else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        } else {
            return nil
        }
        guard scanner.isAtEnd,
            let civil = CivilTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        else { return nil }
        let instant = ReceiptDate(millisecondsSince1970: (civil.secondsSince1970 - offsetSeconds) * 1000 + milliseconds)
        guard instant >= .earliest && instant <= .latest else { return nil }
        self = instant
    }

    /// The form signers write, `YYYY-MM-DDTHH:MM:SSZ`, read directly from `range` of `bytes`; nil for anything
    /// else (which the general parser then reads).
    init?(canonicalUTC bytes: Span<UInt8>, _ range: Range<Int>) {
        guard range.count == 20 else { return nil }
        let text = bytes.extracting(range)
        guard text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"), text[10] == UInt8(ascii: "T"),
            text[13] == UInt8(ascii: ":"), text[16] == UInt8(ascii: ":"), text[19] == UInt8(ascii: "Z"),
            let century = Self.twoDigits(text, 0), let yearOfCentury = Self.twoDigits(text, 2),
            let month = Self.twoDigits(text, 5), let day = Self.twoDigits(text, 8), let hour = Self.twoDigits(text, 11),
            let minute = Self.twoDigits(text, 14), let second = Self.twoDigits(text, 17),
            let civil = CivilTime(
                year: century * 100 + yearOfCentury, month: month, day: day, hour: hour, minute: minute, second: second)
        else { return nil }
        self.init(secondsSince1970: civil.secondsSince1970)
    }

    /// The number written by the two ASCII digits at `index`; nil unless both are digits.
    @inline(__always)
    private static func twoDigits(_ text: Span<UInt8>, _ index: Int) -> Int64? {
        let (tens, ones) = (text[index] &- UInt8(ascii: "0"), text[index + 1] &- UInt8(ascii: "0"))
        guard tens < 10, ones < 10 else { return nil }
        return Int64(tens) * 10 + Int64(ones)
    }

    /// Parses verifyReceipt's `2024-06-05 12:00:00 Etc/GMT`.
    public init?(appleFormat text: String) {
        var scanner = DateScanner(Array(text.utf8)[...])
        guard let year = scanner.digits(4), scanner.take("-"), let month = scanner.digits(2), scanner.take("-"),
            let day = scanner.digits(2), scanner.take(" "), let hour = scanner.digits(2), scanner.take(":"),
            let minute = scanner.digits(2), scanner.take(":"), let second = scanner.digits(2),
            scanner.take(" Etc/GMT"), scanner.isAtEnd,
            let civil = CivilTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        else { return nil }
        self.init(secondsSince1970: civil.secondsSince1970)
    }

    static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}

/// A proleptic Gregorian date and time of day in UTC, converted with the days-from-civil algorithm.
struct CivilTime {
    let year: Int64
    let month: Int64
    let day: Int64
    let hour: Int64
    let minute: Int64
    let second: Int64

    init?(year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64) {
        guard (1...12).contains(month), day >= 1, day <= Self.daysInMonth(year: year, month: month),
            (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second)
        else { return nil }
        (self.year, self.month, self.day) = (year, month, day)
        (self.hour, self.minute, self.second) = (hour, minute, second)
    }

    init(secondsSince1970: Int64) {
        var days = secondsSince1970 / 86_400
        var secondOfDay = secondsSince1970 % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        hour = secondOfDay / 3600
        minute = secondOfDay % 3600 / 60
        second = secondOfDay % 60
    }

    var secondsSince1970: Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return days * 86_400 + hour * 3600 + minute * 60 + second
    }

    /// `YYYY-MM-DD hh:mm:ss ZONE`, the form of verifyReceipt's dates.
    func appleText(zone: String) -> String {
        guard let count = appleTextCount(zone: zone) else { return "\(dateText) \(timeText) \(zone)" }
        return String(decoding: [UInt8](capacity: count) { appendAppleText(zone: zone, to: &$0) }, as: UTF8.self)
    }

    /// How many bytes ``appendAppleText(zone:to:)`` writes, for years 0000 to 9999 (the years of receipts); nil
    /// for the others, which only ``appleText(zone:)`` writes.
    func appleTextCount(zone: String) -> Int? {
        (0...9999).contains(year) ? 20 + zone.utf8.count : nil
    }

    /// Appends ``appleText(zone:)``, ``appleTextCount(zone:)`` bytes of printable ASCII.
    func appendAppleText(zone: String, to output: inout OutputSpan<UInt8>) {
        appendDateAndTime(separator: UInt8(ascii: " "), to: &output)
        output.append(UInt8(ascii: " "))
        output.append(copying: zone.utf8.span)
    }

    /// Appends `YYYY-MM-DD`, `separator` and `hh:mm:ss`, 19 bytes, for years 0 to 9999: all of them added at once
    /// as `:` (the time's two separators stay so), then the date's dashes, `separator` and each pair of digits
    /// written where they go.
    func appendDateAndTime(separator: UInt8, to output: inout OutputSpan<UInt8>) {
        let start = output.count
        output.append(repeating: UInt8(ascii: ":"), count: 19)
        var text = output.mutableSpan
        Self.writeTwoDigits(year / 100, at: start, in: &text)
        Self.writeTwoDigits(year % 100, at: start + 2, in: &text)
        text[start + 4] = UInt8(ascii: "-")
        Self.writeTwoDigits(month, at: start + 5, in: &text)
        text[start + 7] = UInt8(ascii: "-")
        Self.writeTwoDigits(day, at: start + 8, in: &text)
        text[start + 10] = separator
        Self.writeTwoDigits(hour, at: start + 11, in: &text)
        Self.writeTwoDigits(minute, at: start + 14, in: &text)
        Self.writeTwoDigits(second, at: start + 17, in: &text)
    }

    /// Writes the two decimal digits of `value` (0 to 99) at `index` and the index after it.
    @inline(__always)
    private static func writeTwoDigits(_ value: Int64, at index: Int, in text: inout MutableSpan<UInt8>) {
        let pair = UInt8(truncatingIfNeeded: value)
        let tens = pair / 10
        text[index] = UInt8(ascii: "0") &+ tens
        text[index + 1] = UInt8(ascii: "0") &+ (pair &- tens &* 10)
    }

    var dateText: String {
        "\(ReceiptDate.pad(year, 4))-\(ReceiptDate.pad(month, 2))-\(ReceiptDate.pad(day, 2))"
    }

    var timeText: String {
        "\(ReceiptDate.pad(hour, 2)):\(ReceiptDate.pad(minute, 2)):\(ReceiptDate.pad(second, 2))"
    }

    static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// Reads the fixed-width pieces of a date text, ASCII only.
private struct DateScanner {
    private let bytes: ArraySlice<UInt8>
    private var index: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    var isAtEnd: Bool { index == bytes.endIndex }

    mutating func digits(_ count: Int) -> Int64? {
        guard bytes.endIndex - index >= count else { return nil }
        var value: Int64 = 0
        for byte in bytes[index..<(index + count)] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        index += count
        return value
    }

    mutating func take(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.endIndex - index >= count else { return false }
        let matches = literal.withUTF8Buffer { expected in
            expected.indices.allSatisfy { bytes[index + $0] == expected[$0] }
        }
        guard matches else { return false }
        index += count
        return true
    }

    mutating func take(anyOf characters: StaticString) -> Bool {
        guard index < bytes.endIndex else { return false }
        let byte = bytes[index]
        guard characters.withUTF8Buffer({ $0.contains(byte) }) else { return false }
        index += 1
        return true
    }

    mutating func sign() -> Int64? {
        if take("+") { return 1 }
        if take("-") { return -1 }
        return nil
    }

    /// One or more digits after the decimal point, as whole milliseconds (extra digits truncated).
    mutating func fractionMilliseconds() -> Int64? {
        var milliseconds: Int64 = 0
        var count = 0
        while index < bytes.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            if count < 3 { milliseconds = milliseconds * 10 + Int64(bytes[index] - UInt8(ascii: "0")) }
            count += 1
            index += 1
        }
        guard count > 0 else { return nil }
        for _ in count..<max(count, 3) { milliseconds *= 10 }
        return milliseconds
    }
}
