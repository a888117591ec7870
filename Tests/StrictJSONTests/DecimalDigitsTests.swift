import StrictJSON
import Testing

@Suite("Int64.appendDecimal: a number's decimal text without a String")
struct DecimalDigitsTests {
    /// Every power of ten that fits, one less, both signs, and both ends of 64 bits.
    static let values: [Int64] = {
        var values: [Int64] = [0, .max, .min, .min + 1]
        var power: Int64 = 1
        for _ in 0...18 {
            values += [power, power - 1, -power, -(power - 1)]
            if power <= Int64.max / 10 { power *= 10 }
        }
        return values
    }()

    @Test("the bytes and their count are String's, at every length and at both ends of 64 bits")
    func sameAsString() {
        for value in Self.values {
            let written = [UInt8](capacity: value.decimalCount) { value.appendDecimal(to: &$0) }
            #expect(written == Array(String(value).utf8), "\(value)")
            #expect(value.decimalCount == String(value).utf8.count, "\(value)")
        }
    }

    @Test("digits appended after other bytes go after them")
    func appendsAfterWhatIsThere() {
        let written = [UInt8](capacity: 8) { span in
            span.append(UInt8(ascii: "["))
            Int64(-42).appendDecimal(to: &span)
            span.append(UInt8(ascii: "]"))
        }
        #expect(written == Array("[-42]".utf8))
    }
}
