import Foundation
import StrictJSON
import Testing

@Suite("JSONValue.decimal: a double with a fixed number of places")
struct JSONDecimalTests {
    private func text(_ value: Double, _ places: Int) -> String {
        JSONValue.decimal(value, places: places).serialized()
    }

    @Test(
        "the figures receipt bench and the request log write",
        arguments: [
            (12.345678, 2, "12.35"), (0.83, 2, "0.83"), (1.2, 3, "1.200"), (1234.5678, 3, "1234.568"),
            (41_234.6, 0, "41235"), (3.0, 3, "3.000"), (0.0, 3, "0.000"), (0.0004, 3, "0.000"), (0.0015, 3, "0.002"),
            (1234567.891, 2, "1234567.89"), (99.5, 0, "100"), (0.4, 0, "0"), (0.5, 0, "1"),
        ])
    func figures(value: Double, places: Int, expected: String) {
        #expect(text(value, places) == expected)
    }

    @Test("halves round away from zero on the shortest decimal of the value, carrying through nines")
    func halves() {
        #expect(text(0.005, 2) == "0.01")
        #expect(text(0.125, 2) == "0.13")
        #expect(text(2.675, 2) == "2.68")
        #expect(text(9.995, 2) == "10.00")
        #expect(text(999.9996, 3) == "1000.000")
        #expect(text(-1.005, 2) == "-1.01")
    }

    @Test("tiny and huge values are written without an exponent; what rounds to zero has no sign")
    func extremes() {
        #expect(text(1e-5, 4) == "0.0000")
        #expect(text(6e-5, 4) == "0.0001")
        #expect(text(.leastNonzeroMagnitude, 2) == "0.00")
        #expect(text(1.5e20, 0) == "150000000000000000000")
        #expect(text(1.5e20, 1) == "150000000000000000000.0")
        #expect(text(-0.004, 2) == "0.00")
        #expect(text(-0.0, 1) == "0.0")
        #expect(text(-12.5, 0) == "-13")
        #expect(text(7, -1) == "7")
    }

    @Test("infinity and NaN, which JSON cannot write, are null")
    func notFinite() {
        #expect(JSONValue.decimal(.infinity, places: 2) == .null)
        #expect(JSONValue.decimal(-.infinity, places: 2) == .null)
        #expect(JSONValue.decimal(.nan, places: 2) == .null)
    }

    @Test("away from halves the text is printf's, and it parses as the same JSON number")
    func matchesPrintf() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5000 {
            let places = Int.random(in: 0...4, using: &generator)
            let value =
                Double.random(in: -1...1, using: &generator) * pow(10, Double.random(in: -6...8, using: &generator))
            // Below 1e8 with at most 4 places, what the multiplication and the shortest decimal leave out is far
            // below a thousandth of the last place.
            let scaled = (value * pow(10, Double(places))).magnitude
            guard abs(scaled - scaled.rounded(.down) - 0.5) > 1e-3 else { continue }
            var expected = String(format: "%.\(places)f", value)
            if expected.hasPrefix("-") && expected.allSatisfy({ "-0.".contains($0) }) { expected.removeFirst() }
            #expect(text(value, places) == expected, "\(value) to \(places) places")
            #expect(try JSONValue(parsing: Array(text(value, places).utf8)) == JSONValue.decimal(value, places: places))
        }
    }

    @Test(
        "fixedPoint writes an integer count of small units with exactly that many places, every digit of the count",
        arguments: [
            (1234 as Int64, 3, "1.234"), (5, 3, "0.005"), (-5, 3, "-0.005"), (0, 3, "0.000"), (1000, 3, "1.000"),
            (-1234, 3, "-1.234"), (7, 0, "7"), (-7, 0, "-7"), (42, -1, "42"), (123_456_789, 9, "0.123456789"),
            (Int64.max, 18, "9.223372036854775807"), (Int64.min, 18, "-9.223372036854775808"),
            (Int64.min, 0, "-9223372036854775808"), (1, 25, "0.000000000000000001"),
        ])
    func fixedPoint(units: Int64, places: Int, expected: String) throws {
        let value = JSONValue.fixedPoint(units, places: places)
        #expect(value.serialized() == expected)
        #expect(try JSONValue(parsing: Array(expected.utf8)) == value)
    }

    @Test("fixedPoint of a count of thousandths reads as decimal of the same value to three places")
    func fixedPointMatchesDecimal() {
        for units in Int64(-2_000)...2_000 {
            let value = Double(units) / 1000
            #expect(JSONValue.fixedPoint(units, places: 3) == JSONValue.decimal(value, places: 3), "\(units)")
        }
    }
}
