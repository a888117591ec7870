import Foundation
import ReceiptModel
import StrictJSON
import ZoneInfo
import Testing

// Expected instants below were computed independently of the code under test (Python's calendar.timegm).
/// 2024-06-05T12:00:00Z.
private let june5Noon: Int64 = 1_717_588_800_000
/// 0000-01-01T00:00:00Z: 0001-01-01 is -62 135 596 800 s, and year 0 is a leap year of 366 days.
private let yearZero: Int64 = -62_135_596_800_000 - 366 * 86_400_000
/// 9999-12-31T23:59:59Z.
private let lastSecond: Int64 = 253_402_300_799_000

@Suite("ReceiptDate: parsing RFC 3339")
struct ReceiptDateParsingTests {
    @Test(
        "UTC designators and separators in either case",
        arguments: ["2024-06-05T12:00:00Z", "2024-06-05T12:00:00z", "2024-06-05t12:00:00Z", "2024-06-05t12:00:00z"])
    func utcForms(text: String) {
        #expect(ReceiptDate(rfc3339: text)?.millisecondsSince1970 == june5Noon)
    }

    @Test(
        "fractional seconds of any length, truncated to milliseconds",
        arguments: [
            ("2024-06-05T12:00:00.5Z", 500 as Int64),
            ("2024-06-05T12:00:00.25Z", 250),
            ("2024-06-05T12:00:00.123Z", 123),
            ("2024-06-05T12:00:00.007Z", 7),
            ("2024-06-05T12:00:00.123456789Z", 123),
            ("2024-06-05T12:00:00.9999Z", 999),
            ("2024-06-05T12:00:00.000Z", 0),
        ])
    func fractionalSeconds(text: String, milliseconds: Int64) {
        #expect(ReceiptDate(rfc3339: text)?.millisecondsSince1970 == june5Noon + milliseconds)
    }

    @Test(
        "offsets with and without a colon are converted to UTC",
        arguments: [
            "2024-06-05T14:00:00+02:00", "2024-06-05T15:00:00+0300", "2024-06-05T06:30:00-0530",
            "2024-06-05T06:30:00-05:30", "2024-06-05T12:00:00+00:00", "2024-06-05T12:00:00-0000",
        ])
    func offsets(text: String) {
        #expect(ReceiptDate(rfc3339: text)?.millisecondsSince1970 == june5Noon)
    }

    @Test("an offset can move the instant into another day, month and year")
    func offsetsAcrossBoundaries() {
        // 2023-12-31T23:00:00Z and 2024-03-01T05:29:00Z.
        #expect(ReceiptDate(rfc3339: "2024-01-01T01:00:00+02:00")?.millisecondsSince1970 == 1_704_063_600_000)
        #expect(ReceiptDate(rfc3339: "2024-02-29T23:59:00-05:30")?.millisecondsSince1970 == 1_709_270_940_000)
    }

    @Test("milliseconds and an offset together")
    func fractionWithOffset() {
        #expect(ReceiptDate(rfc3339: "2024-06-05T14:00:00.250+02:00")?.millisecondsSince1970 == june5Noon + 250)
    }

    @Test("years 0000 and 9999 are the bounds")
    func yearBounds() {
        #expect(ReceiptDate(rfc3339: "0000-01-01T00:00:00Z")?.millisecondsSince1970 == yearZero)
        #expect(ReceiptDate(rfc3339: "9999-12-31T23:59:59Z")?.millisecondsSince1970 == lastSecond)
        #expect(ReceiptDate(rfc3339: "9999-12-31T23:59:59.999Z")?.millisecondsSince1970 == lastSecond + 999)
        #expect(ReceiptDate.earliest.millisecondsSince1970 == yearZero)
        #expect(ReceiptDate.latest.millisecondsSince1970 == lastSecond + 999)
    }

    @Test(
        "an offset that moves the instant outside years 0000-9999 is rejected",
        arguments: ["0000-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01"])
    func outsideBounds(text: String) {
        #expect(ReceiptDate(rfc3339: text) == nil)
    }

    @Test("dates before 1970 are negative")
    func beforeEpoch() {
        // Apollo 11 landing, 1969-07-20T20:17:40Z = -14 182 940 s.
        #expect(ReceiptDate(rfc3339: "1969-07-20T20:17:40Z")?.millisecondsSince1970 == -14_182_940_000)
        #expect(ReceiptDate(rfc3339: "1969-12-31T23:59:59.999Z")?.millisecondsSince1970 == -1)
        #expect(ReceiptDate(rfc3339: "1970-01-01T00:00:00Z")?.millisecondsSince1970 == 0)
    }

    @Test(
        "February 29th exists only in leap years",
        arguments: [
            ("2024-02-29T00:00:00Z", 1_709_164_800_000 as Int64?),
            ("2000-02-29T00:00:00Z", 951_782_400_000),
            ("2023-02-29T00:00:00Z", nil),
            ("1900-02-29T00:00:00Z", nil),
            ("2100-02-29T00:00:00Z", nil),
        ])
    func leapDays(text: String, expected: Int64?) {
        #expect(ReceiptDate(rfc3339: text)?.millisecondsSince1970 == expected)
    }

    @Test(
        "fields out of range are rejected",
        arguments: [
            "2024-13-01T00:00:00Z", "2024-00-01T00:00:00Z", "2024-01-32T00:00:00Z", "2024-01-00T00:00:00Z",
            "2024-04-31T00:00:00Z", "2024-02-30T00:00:00Z", "2024-06-05T24:00:00Z", "2024-06-05T12:60:00Z",
            "2024-06-05T12:00:60Z", "2024-06-05T12:00:00+24:00", "2024-06-05T12:00:00+02:60",
        ])
    func outOfRange(text: String) {
        #expect(ReceiptDate(rfc3339: text) == nil)
    }

    @Test(
        "text that is not exactly RFC 3339 is rejected",
        arguments: [
            "2024-06-05T12:00:00",  // no offset
            "2024-06-05T12:00:00Zjunk", "2024-06-05T12:00:00Z ", " 2024-06-05T12:00:00Z",
            "2024-06-05T12:00:00+02:00:00", "2024-06-05T12:00:00+02", "2024-06-05T12:00:00+2:00",
            "2024-06-05T12:00:00.Z", "2024-06-05T12:00Z", "2024-6-05T12:00:00Z", "24-06-05T12:00:00Z",
            "2024-06-05 12:00:00Z", "2024-06-05X12:00:00Z", "2024/06/05T12:00:00Z", "2024-06-05T12:00:00UTC",
            "2024-06-05", "2024-06-05 12:00:00 Etc/GMT", "",
        ])
    func malformed(text: String) {
        #expect(ReceiptDate(rfc3339: text) == nil)
    }

    @Test(
        "only ASCII digits are digits",
        arguments: [
            "２０２４-06-05T12:00:00Z",  // fullwidth
            "٢٠٢٤-06-05T12:00:00Z",  // Arabic-Indic
            "2024-06-05T12:00:00.５Z", "2024-06-05T12:00:00+０２:00", "2024-06-05T1２:00:00Z",
        ])
    func nonASCIIDigits(text: String) {
        #expect(ReceiptDate(rfc3339: text) == nil)
    }
}

@Suite("ReceiptDate: printing")
struct ReceiptDateFormattingTests {
    @Test(
        "RFC 3339 output is UTC with milliseconds only when there are some",
        arguments: [
            (june5Noon, "2024-06-05T12:00:00Z"),
            (june5Noon + 250, "2024-06-05T12:00:00.250Z"),
            (june5Noon + 7, "2024-06-05T12:00:00.007Z"),
            (june5Noon + 999, "2024-06-05T12:00:00.999Z"),
            (0, "1970-01-01T00:00:00Z"),
            (yearZero, "0000-01-01T00:00:00Z"),
            (lastSecond + 999, "9999-12-31T23:59:59.999Z"),
        ])
    func rfc3339Output(milliseconds: Int64, expected: String) {
        let date = ReceiptDate(millisecondsSince1970: milliseconds)
        #expect(date.rfc3339 == expected)
        #expect(date.description == expected)
    }

    @Test("RFC 3339 output is Foundation's Gregorian calendar date and time in UTC, from year 1600 to 9999")
    func rfc3339MatchesFoundationCalendar() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        let first: Int64 = -11_676_096_000  // 1600-01-01T00:00:00Z
        let last: Int64 = 253_402_300_799  // 9999-12-31T23:59:59Z
        var seconds = Array(stride(from: first, through: last, by: 7_919_777))
        seconds += [first, last, -1, 0, 951_782_400, 951_868_800]
        for (index, second) in seconds.enumerated() {
            let milliseconds = Int64(index % 4 == 0 ? 0 : index % 1000)
            let parts = calendar.dateComponents(
                [.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: Double(second)))
            let digits = { (value: Int?, width: Int) in
                let text = String(value ?? -1)
                return String(repeating: "0", count: max(0, width - text.count)) + text
            }
            let fraction = milliseconds == 0 ? "" : "." + digits(Int(milliseconds), 3)
            let expected =
                "\(digits(parts.year, 4))-\(digits(parts.month, 2))-\(digits(parts.day, 2))T"
                + "\(digits(parts.hour, 2)):\(digits(parts.minute, 2)):\(digits(parts.second, 2))\(fraction)Z"
            let date = ReceiptDate(millisecondsSince1970: second * 1000 + milliseconds)
            #expect(date.rfc3339 == expected, "\(second)")
            #expect(date.rfc3339Bytes == Array(expected.utf8), "\(second)")
        }
    }

    @Test(
        "dates before 1970 print the right calendar date and time",
        arguments: [
            (-1 as Int64, "1969-12-31T23:59:59.999Z", "1969-12-31 23:59:59 Etc/GMT"),
            (-1000, "1969-12-31T23:59:59Z", "1969-12-31 23:59:59 Etc/GMT"),
            (-86_400_000, "1969-12-31T00:00:00Z", "1969-12-31 00:00:00 Etc/GMT"),
            (-14_182_939_999, "1969-07-20T20:17:40.001Z", "1969-07-20 20:17:40 Etc/GMT"),
            (-2_208_988_800_000, "1900-01-01T00:00:00Z", "1900-01-01 00:00:00 Etc/GMT"),
        ])
    func beforeEpoch(milliseconds: Int64, rfc3339: String, apple: String) {
        let date = ReceiptDate(millisecondsSince1970: milliseconds)
        #expect(date.rfc3339 == rfc3339)
        #expect(date.appleFormat == apple)
    }

    @Test("Apple's format drops milliseconds and names Etc/GMT")
    func appleFormatOutput() {
        #expect(ReceiptDate(millisecondsSince1970: june5Noon + 999).appleFormat == "2024-06-05 12:00:00 Etc/GMT")
        #expect(ReceiptDate(millisecondsSince1970: 1_709_164_800_000).appleFormat == "2024-02-29 00:00:00 Etc/GMT")
    }

    @Test("Apple's format is RFC 3339's date and time with a space between, from year 0000 to 9999 and beyond")
    func appleFormatMatchesRFC3339() {
        let first: Int64 = -62_167_219_200_000  // 0000-01-01T00:00:00Z
        let last: Int64 = 253_402_300_799_999  // 9999-12-31T23:59:59.999Z
        var instants = Array(stride(from: first, through: last, by: 7_919_777_777))
        instants += [first, last, first - 1, last + 1, -1, 0, 951_782_400_000]
        for milliseconds in instants {
            let date = ReceiptDate(millisecondsSince1970: milliseconds)
            let rfc3339 = ReceiptDate(secondsSince1970: date.secondsSince1970).rfc3339
            let expected = rfc3339.dropLast().replacingOccurrences(of: "T", with: " ") + " Etc/GMT"
            #expect(date.appleFormat == expected, "\(milliseconds)")
        }
    }

    @Test("whole seconds round down, also before 1970")
    func secondsRoundDown() {
        #expect(ReceiptDate(millisecondsSince1970: 1_999).secondsSince1970 == 1)
        #expect(ReceiptDate(millisecondsSince1970: -1).secondsSince1970 == -1)
        #expect(ReceiptDate(millisecondsSince1970: -1_000).secondsSince1970 == -1)
        #expect(ReceiptDate(millisecondsSince1970: -1_001).secondsSince1970 == -2)
        #expect(ReceiptDate(secondsSince1970: 1_717_588_800).millisecondsSince1970 == june5Noon)
    }

    @Test(
        "printing then parsing RFC 3339 gives back the same instant",
        arguments: [yearZero, -14_182_939_999, -1, 0, 1, june5Noon + 123, lastSecond + 999])
    func rfc3339RoundTrip(milliseconds: Int64) {
        let date = ReceiptDate(millisecondsSince1970: milliseconds)
        #expect(ReceiptDate(rfc3339: date.rfc3339) == date)
    }

    @Test("dates order by instant")
    func ordering() {
        #expect(ReceiptDate(millisecondsSince1970: -1) < ReceiptDate(millisecondsSince1970: 0))
        #expect(ReceiptDate(rfc3339: "2024-06-05T14:00:00+02:00") == ReceiptDate(rfc3339: "2024-06-05T12:00:00Z"))
    }
}

@Suite("ReceiptDate: Apple's verifyReceipt format")
struct ReceiptDateAppleFormatTests {
    @Test("parses 2024-06-05 12:00:00 Etc/GMT")
    func parses() {
        #expect(ReceiptDate(appleFormat: "2024-06-05 12:00:00 Etc/GMT")?.millisecondsSince1970 == june5Noon)
        #expect(ReceiptDate(appleFormat: "1969-12-31 23:59:59 Etc/GMT")?.millisecondsSince1970 == -1000)
        #expect(ReceiptDate(appleFormat: "2000-02-29 00:00:00 Etc/GMT")?.millisecondsSince1970 == 951_782_400_000)
    }

    @Test(
        "rejects every other form",
        arguments: [
            "2024-06-05 12:00:00", "2024-06-05 12:00:00 GMT", "2024-06-05 12:00:00 etc/gmt",
            "2024-06-05T12:00:00 Etc/GMT", "2024-06-05 12:00:00.000 Etc/GMT", "2024-06-05 12:00:00 Etc/GMT ",
            "2024-06-05 12:00:00 America/Los_Angeles", "2024-06-05T12:00:00Z", "2023-02-29 00:00:00 Etc/GMT",
            "2024-06-05 24:00:00 Etc/GMT", "2024-06-05  12:00:00 Etc/GMT", "",
        ])
    func rejects(text: String) {
        #expect(ReceiptDate(appleFormat: text) == nil)
    }

    @Test("printing then parsing Apple's format keeps the whole second")
    func roundTrip() {
        let date = ReceiptDate(millisecondsSince1970: june5Noon + 750)
        #expect(ReceiptDate(appleFormat: date.appleFormat)?.millisecondsSince1970 == june5Noon)
    }
}

@Suite("ReceiptDate: extreme values")
struct ReceiptDateExtremeTests {
    @Test("formatting the extremes of Int64 does not trap", arguments: [Int64.min, Int64.max, -1, 999])
    func extremes(_ milliseconds: Int64) {
        let date = ReceiptDate(millisecondsSince1970: milliseconds)
        #expect(!date.rfc3339.isEmpty)
        #expect(!date.appleFormat.isEmpty)
    }

    @Test(
        "a builder's rfc3339 member is the date's rfc3339 text, in the written bytes and in the tree alike",
        arguments: [Int64.min, yearZero - 1, yearZero, -1, 0, june5Noon, june5Noon + 7, Int64.max])
    func rfc3339Member(_ milliseconds: Int64) throws {
        let date = ReceiptDate(millisecondsSince1970: milliseconds)
        let key = JSONKey("time")
        var written: [UInt8] = []
        JSONObjectWriter.write(to: &written) { $0.add(key, rfc3339: date) }
        var tree = JSONObject()
        tree.add(key, rfc3339: date)
        let expected = JSONValue.object(JSONObject(["time": .string(date.rfc3339)]))
        #expect(try JSONValue(parsing: written) == expected)
        #expect(JSONValue.object(tree) == expected)
    }

    @Test("seconds beyond what milliseconds can hold saturate")
    func saturatingSeconds() {
        #expect(ReceiptDate(secondsSince1970: .max).millisecondsSince1970 == .max)
        #expect(ReceiptDate(secondsSince1970: .min).millisecondsSince1970 == .min)
    }
}

@Suite("Receipt dates in Apple's Pacific-time form (the *_pst twins)")
struct PacificTimeTests {
    static let pacific: TimeZoneRules? = try? TimeZoneRules.system("America/Los_Angeles")

    @Test(
        "an instant is shown in Los Angeles' local time with that year's daylight-saving rule",
        arguments: [
            (1_595_439_548_000, "2020-07-22 10:39:08 America/Los_Angeles"),
            (1_375_340_400_000, "2013-08-01 00:00:00 America/Los_Angeles"),
            (1_704_067_200_000, "2023-12-31 16:00:00 America/Los_Angeles"),
            (1_143_885_600_000, "2006-04-01 02:00:00 America/Los_Angeles"),
            (1_173_693_600_000, "2007-03-12 03:00:00 America/Los_Angeles"),
            (4_118_054_400_000, "2100-06-30 09:00:00 America/Los_Angeles"),
            (-500, "1969-12-31 15:59:59 America/Los_Angeles"),
        ] as [(Int64, String)])
    func pacificForm(milliseconds: Int64, expected: String) throws {
        let zone = try #require(Self.pacific, "the system's time-zone data lacks America/Los_Angeles")
        #expect(ReceiptDate(millisecondsSince1970: milliseconds).appleFormat(in: zone) == expected)
    }

    @Test("with a zone and a request date, the JSON has Apple's *_pst twins and the request_date trio in its place")
    func receiptJSON() throws {
        let zone = try #require(Self.pacific)
        let receipt = Receipt(
            bundleID: "b", creationDate: ReceiptDate(millisecondsSince1970: 1_595_439_548_000), appItemID: 0,
            inAppPurchases: [
                InAppPurchase(
                    productID: "p", transactionID: "1",
                    purchaseDate: ReceiptDate(millisecondsSince1970: 1_594_755_400_000))
            ])
        let json = receipt.verifyReceiptJSON(
            pacificTime: zone, requestDate: ReceiptDate(millisecondsSince1970: 1_595_440_486_402))
        #expect(
            json.keys == [
                "adam_id", "app_item_id", "bundle_id", "receipt_creation_date", "receipt_creation_date_ms",
                "receipt_creation_date_pst", "request_date", "request_date_ms", "request_date_pst", "in_app",
            ])
        #expect(json["request_date"] == .string("2020-07-22 17:54:46 Etc/GMT"))
        #expect(json["request_date_ms"] == .string("1595440486402"))
        #expect(json["request_date_pst"] == .string("2020-07-22 10:54:46 America/Los_Angeles"))
        guard case .array(let purchases)? = json["in_app"], let first = purchases.first else {
            Issue.record("no purchase in \(json)")
            return
        }
        #expect(first["purchase_date_pst"] == .string("2020-07-14 12:36:40 America/Los_Angeles"))
        #expect(receipt.verifyReceiptJSON.keys.contains("receipt_creation_date_pst") == false)
    }
}
