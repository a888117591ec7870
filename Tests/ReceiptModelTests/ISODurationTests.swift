import ReceiptModel
import Testing

/// The components of a duration, in order: years, months, weeks, days, hours, minutes, seconds.
private func components(_ duration: ISODuration) -> [Int64] {
    [
        duration.years, duration.months, duration.weeks, duration.days, duration.hours, duration.minutes,
        duration.seconds,
    ]
}

@Suite("ISODuration: parsing PnYnMnWnDTnHnMnS")
struct ISODurationParsingTests {
    @Test(
        "valid forms and their components (Y, M, W, D, H, M, S)",
        arguments: [
            ("P30D", [0, 0, 0, 30, 0, 0, 0] as [Int64]),
            ("P1M", [0, 1, 0, 0, 0, 0, 0]),
            ("PT1M", [0, 0, 0, 0, 0, 1, 0]),
            ("P1Y2M", [1, 2, 0, 0, 0, 0, 0]),
            ("P2W", [0, 0, 2, 0, 0, 0, 0]),
            ("PT36H", [0, 0, 0, 0, 36, 0, 0]),
            ("PT90S", [0, 0, 0, 0, 0, 0, 90]),
            ("P1DT12H", [0, 0, 0, 1, 12, 0, 0]),
            ("P1MT1M", [0, 1, 0, 0, 0, 1, 0]),
            ("P1Y2M3W4DT5H6M7S", [1, 2, 3, 4, 5, 6, 7]),
            ("P0D", [0, 0, 0, 0, 0, 0, 0]),
            ("P016D", [0, 0, 0, 16, 0, 0, 0]),
            ("P1000000D", [0, 0, 0, 1_000_000, 0, 0, 0]),
            ("PT1000000S", [0, 0, 0, 0, 0, 0, 1_000_000]),
        ])
    func valid(text: String, expected: [Int64]) throws {
        let duration = try #require(ISODuration(text))
        #expect(components(duration) == expected)
    }

    @Test(
        "invalid forms are refused",
        arguments: [
            "", "P", "PT", "P1DT", "T1H", "1D", "PD", "P1", "PT1", "P1.5D", "P1,5D", "PT0.5S", "p1d", "P1d", "pT1H",
            "P1D2M", "P1M1Y", "P1D1W", "PT1S1H", "P1D1D", "PT1H1H", "PTT1H", "P1DT1HT1M", "PT1D", "PT1W", "P1H",
            "P1S", "-P1D", "P-1D", "+P1D", "P+1D", " P1D", "P1D ", "P 1D", "P1000001D", "PT1000001S", "P99999999Y",
            "P١D", "P30D\n",
        ])
    func invalid(text: String) {
        #expect(ISODuration(text) == nil)
    }

    @Test(
        "the description is the canonical text",
        arguments: [
            ("P30D", "P30D"), ("P1Y2M", "P1Y2M"), ("PT36H", "PT36H"), ("P016D", "P16D"), ("P0D", "P0D"),
            ("PT0S", "P0D"), ("P0Y1M", "P1M"), ("P1Y2M3W4DT5H6M7S", "P1Y2M3W4DT5H6M7S"), ("P1DT0H30M", "P1DT30M"),
        ])
    func description(text: String, canonical: String) throws {
        #expect(try #require(ISODuration(text)).description == canonical)
    }

    @Test(
        "isZero only when every component is zero",
        arguments: [("P0D", true), ("PT0S", true), ("P0Y0M", true), ("PT1S", false), ("P1W", false)])
    func isZero(text: String, zero: Bool) throws {
        #expect(try #require(ISODuration(text)).isZero == zero)
    }
}

@Suite("ReceiptDate.adding: calendar years and months, then fixed weeks, days and time")
struct ReceiptDateAddingTests {
    // Expected instants were computed independently of the code under test (Python's datetime and calendar).
    @Test(
        "calendar arithmetic",
        arguments: [
            ("2024-01-31T10:00:00Z", "P1M", "2024-02-29T10:00:00Z"),
            ("2023-01-31T10:00:00Z", "P1M", "2023-02-28T10:00:00Z"),
            ("2024-03-31T00:00:00Z", "P1M", "2024-04-30T00:00:00Z"),
            ("2024-02-29T00:00:00Z", "P1Y", "2025-02-28T00:00:00Z"),
            ("2024-02-29T00:00:00Z", "P4Y", "2028-02-29T00:00:00Z"),
            ("2024-02-29T00:00:00Z", "P12M", "2025-02-28T00:00:00Z"),
            ("1900-01-31T00:00:00Z", "P1M", "1900-02-28T00:00:00Z"),
            ("2000-01-31T00:00:00Z", "P1M", "2000-02-29T00:00:00Z"),
            ("2024-12-15T08:00:00Z", "P1M", "2025-01-15T08:00:00Z"),
            ("2024-12-31T00:00:00Z", "P2M", "2025-02-28T00:00:00Z"),
            ("2024-12-31T00:00:00Z", "P13M", "2026-01-31T00:00:00Z"),
            ("2024-01-31T00:00:00Z", "P1M1D", "2024-03-01T00:00:00Z"),
            ("2024-02-28T00:00:00Z", "P1D", "2024-02-29T00:00:00Z"),
            ("2024-02-26T12:00:00Z", "P1W", "2024-03-04T12:00:00Z"),
            ("2024-06-01T00:00:00Z", "P30D", "2024-07-01T00:00:00Z"),
            ("2024-06-05T12:00:00Z", "PT36H", "2024-06-07T00:00:00Z"),
            ("2024-12-31T23:30:00Z", "PT1H30M15S", "2025-01-01T01:00:15Z"),
            ("2023-01-28T01:02:03Z", "P1Y2M3W4DT5H6M7S", "2024-04-22T06:08:10Z"),
            ("2024-06-05T12:00:00Z", "P1000000D", "4762-05-03T12:00:00Z"),
            ("2024-06-05T12:00:00Z", "P0D", "2024-06-05T12:00:00Z"),
        ])
    func adding(start: String, duration: String, expected: String) throws {
        let date = try #require(ReceiptDate(rfc3339: start))
        let result = date.adding(try #require(ISODuration(duration)))
        #expect(result.rfc3339 == expected)
    }

    @Test(
        "milliseconds are kept, before 1970 too",
        arguments: [
            ("2024-01-31T10:00:00.123Z", "P1M", "2024-02-29T10:00:00.123Z"),
            ("2024-06-01T00:00:00.250Z", "P30D", "2024-07-01T00:00:00.250Z"),
            ("1969-12-31T23:59:59.500Z", "PT1S", "1970-01-01T00:00:00.500Z"),
            ("1969-01-31T12:00:00.750Z", "P1M", "1969-02-28T12:00:00.750Z"),
        ])
    func milliseconds(start: String, duration: String, expected: String) throws {
        let date = try #require(ReceiptDate(rfc3339: start))
        #expect(date.adding(try #require(ISODuration(duration))).rfc3339 == expected)
    }

    @Test("the largest duration added to the latest date moves forward without trapping")
    func largest() throws {
        let duration = try #require(ISODuration("P1000000Y1000000M1000000W1000000DT1000000H1000000M1000000S"))
        #expect(ReceiptDate.latest.adding(duration) > ReceiptDate.latest)
    }
}
