extension JSONValue {
    /// A number from a double, written with exactly `places` digits after the point (and no point when `places` is
    /// 0), never with an exponent: `decimal(1234.5678, places: 2)` is `1234.57`.
    ///
    /// The digits rounded are those of the shortest decimal that reads back as `value` (Swift's `description`),
    /// half away from zero: 0.005 is `0.01` and 2.675 is `2.68`, where printf's `%.2f`, which rounds the binary
    /// value, writes 0.005 as `0.01` but 2.675 (2.67499999…) as `2.67`. A value that rounds to zero is written
    /// without a sign. Infinity and NaN, which JSON has no number for, are null.
    public static func decimal(_ value: Double, places: Int) -> JSONValue {
        guard value.isFinite else { return .null }
        let places = max(places, 0)
        var digits = DecimalDigits(value.magnitude)
        digits.round(keeping: digits.pointPosition + places)
        var text: [UInt8] = []
        text.reserveCapacity(digits.values.count + places + 3)
        if value < 0 && digits.values.contains(where: { $0 != 0 }) { text.append(UInt8(ascii: "-")) }
        let whole = digits.pointPosition
        if whole <= 0 {
            text.append(UInt8(ascii: "0"))
        } else {
            for index in 0..<whole { text.append(UInt8(ascii: "0") + digits[index]) }
        }
        if places > 0 {
            text.append(UInt8(ascii: "."))
            for index in whole..<whole + places { text.append(UInt8(ascii: "0") + digits[index]) }
        }
        return .number(String(decoding: text, as: UTF8.self))
    }

    /// The number `units` × 10^-`places`, written with exactly `places` digits after the point (and no point when
    /// `places` is 0): `fixedPoint(1234, places: 3)` is `1.234`, `fixedPoint(-5, places: 3)` is `-0.005`. A
    /// measurement already counted in whole small units (microseconds for a duration in milliseconds) is written
    /// this way without the shortest-decimal search of ``decimal(_:places:)``. `places` is taken as 0 to 18.
    public static func fixedPoint(_ units: Int64, places: Int) -> JSONValue {
        let places = min(max(places, 0), 18)
        guard places > 0 else { return .number(String(units)) }
        var scale: UInt64 = 1
        for _ in 0..<places { scale *= 10 }
        let whole = Int64(units.magnitude / scale)
        let fraction = units.magnitude % scale
        // At least one place: the whole part is at most |Int64.min| / 10, an Int64.
        let count = (units < 0 ? 1 : 0) + whole.decimalCount + 1 + places
        let text = [UInt8](capacity: count) { output in
            if units < 0 { output.append(UInt8(ascii: "-")) }
            whole.appendDecimal(to: &output)
            output.append(UInt8(ascii: "."))
            var divisor = scale / 10
            while divisor > 0 {
                output.append(UInt8(ascii: "0") + UInt8(fraction / divisor % 10))
                divisor /= 10
            }
        }
        return .number(String(decoding: text, as: UTF8.self))
    }
}

/// A non-negative decimal as its digits and where its point is: `values` 1, 2, 3 with `pointPosition` 1 is 1.23,
/// with `pointPosition` -1 is 0.0123, with `pointPosition` 5 is 12300.
private struct DecimalDigits {
    /// The digits, most significant first, each 0 to 9; no leading zero except in zero itself.
    var values: [UInt8] = []
    /// How many digits come before the point; negative when zeros come between the point and the first digit.
    var pointPosition = 0

    /// The digits of `value`'s `description` (`123.45`, `1e-05`, `1.5e+20`), which is finite and not negative.
    init(_ value: Double) {
        var exponent = 0
        var exponentSign = 1
        var inExponent = false
        var sawPoint = false
        for byte in value.description.utf8 {
            switch byte {
            case UInt8(ascii: "e"): inExponent = true
            case UInt8(ascii: "-") where inExponent: exponentSign = -1
            case UInt8(ascii: "+"), UInt8(ascii: "-"): continue
            case UInt8(ascii: "."): sawPoint = true
            case _ where inExponent: exponent = exponent * 10 + Int(byte - UInt8(ascii: "0"))
            default:
                if values.isEmpty && byte == UInt8(ascii: "0") {
                    if sawPoint { pointPosition -= 1 }
                    continue
                }
                values.append(byte - UInt8(ascii: "0"))
                if !sawPoint { pointPosition += 1 }
            }
        }
        pointPosition += exponentSign * exponent
    }

    /// The digit at `index` (0 is the first digit), zero past the last one.
    subscript(index: Int) -> UInt8 {
        index >= 0 && index < values.count ? values[index] : 0
    }

    /// Rounds to the first `count` digits, half away from zero; zero when `count` is negative, and when `count` is 0
    /// and the first digit is below 5.
    mutating func round(keeping count: Int) {
        guard count < values.count else { return }
        let roundsUp = count >= 0 && values[count] >= 5
        values.removeSubrange(max(count, 0)...)
        guard roundsUp else { return }
        var index = values.count - 1
        while index >= 0 && values[index] == 9 {
            values[index] = 0
            index -= 1
        }
        if index >= 0 {
            values[index] += 1
        } else {
            values.insert(1, at: 0)
            pointPosition += 1
        }
    }
}
